//! The protocol transcript of an engine instance (`--debug`): every line sent and received,
//! whole, with the milliseconds since the engine started. The transcripts of one engine
//! share a budget of [`TRANSCRIPT_BUDGET`] bytes per results folder (its own, beside the
//! logs' budget, so that an engine flooding its stderr still leaves a transcript), so an
//! engine flooding its output cannot fill the disk; when the budget is used up a last line
//! says so, and nothing more is written.

use super::log::{LogPlace, create_numbered, rename_numbered, take_budget};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

/// Bytes of transcripts per engine and results folder (earlier runs included).
pub const TRANSCRIPT_BUDGET: u64 = 10 << 20;

/// The line that ends a transcript cut short.
pub const TRANSCRIPT_CUT: &str = "[transcript cut: this engine's transcripts reached their \
                                  cap of 10 MiB; the rest is not written]";

/// The transcript of one engine instance.
pub struct Transcript {
    /// `None` once the budget is used up or a write failed.
    file: Option<io::BufWriter<File>>,
    path: PathBuf,
    budget: Arc<AtomicU64>,
    started: std::time::Instant,
}

impl Transcript {
    /// A new transcript, `STEM.N.transcript` beside the logs of `place`; `None` (with a
    /// warning) when it cannot be created.
    pub fn create(place: &LogPlace) -> Option<Transcript> {
        Transcript::create_within(place, budget_of(&place.dir, &place.stem))
    }

    /// A new transcript taking its bytes from `budget`.
    fn create_within(place: &LogPlace, budget: Arc<AtomicU64>) -> Option<Transcript> {
        let (file, path) = create_numbered(&place.dir, &place.stem, "transcript")
            .inspect_err(|e| tracing::warn!("cannot create a transcript: {e}"))
            .ok()?;
        Some(Transcript {
            file: Some(io::BufWriter::new(file)),
            path,
            budget,
            started: std::time::Instant::now(),
        })
    }

    /// Records one line: `dir` is `>` for a line sent, `<` for one received.
    pub fn record(&mut self, dir: &str, line: &str) {
        let Some(file) = &mut self.file else { return };
        let ms = self.started.elapsed().as_millis();
        let text = format!("{ms:>8} {dir} {line}\n");
        let want = text.len() as u64;
        let written = if take_budget(&self.budget, want) == want {
            file.write_all(text.as_bytes()).and_then(|_| file.flush())
        } else {
            let cut = writeln!(file, "{TRANSCRIPT_CUT}").and_then(|_| file.flush());
            self.file = None;
            cut
        };
        if written.is_err() {
            self.file = None;
        }
    }

    /// Moves the transcript to `STEM.N.transcript` in its folder (when the engine's name is
    /// settled after its `hello`); it stays open.
    pub fn rename(&mut self, stem: &str) -> io::Result<()> {
        let dir = self.path.parent().unwrap_or(Path::new(".")).to_path_buf();
        self.path = rename_numbered(&self.path, &dir, stem, "transcript")?;
        // From now on its bytes count against its engine's budget under that name, which
        // every instance shares, however each was named when it started.
        self.budget = budget_of(&dir, stem);
        Ok(())
    }

    /// Flushes the file.
    pub fn flush(&mut self) {
        if let Some(f) = &mut self.file {
            let _ = f.flush();
        }
    }
}

/// The budget of the transcripts `stem.N.transcript` in `dir`, one for the whole process:
/// [`TRANSCRIPT_BUDGET`] less what earlier runs wrote there.
fn budget_of(dir: &Path, stem: &str) -> Arc<AtomicU64> {
    static BUDGETS: Mutex<BTreeMap<PathBuf, Arc<AtomicU64>>> = Mutex::new(BTreeMap::new());
    let mut budgets = BUDGETS.lock().unwrap_or_else(|e| e.into_inner());
    budgets
        .entry(dir.join(stem))
        .or_insert_with(|| {
            let written: u64 = std::fs::read_dir(dir)
                .into_iter()
                .flatten()
                .flatten()
                .filter(|e| {
                    let name = e.file_name();
                    let name = name.to_string_lossy();
                    name.starts_with(&format!("{stem}.")) && name.ends_with(".transcript")
                })
                .filter_map(|e| e.metadata().ok())
                .map(|m| m.len())
                .sum();
            Arc::new(AtomicU64::new(TRANSCRIPT_BUDGET.saturating_sub(written)))
        })
        .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_transcript_stops_at_the_budget_with_a_note() {
        let dir = tempfile::tempdir().unwrap();
        let place = LogPlace {
            dir: dir.path().to_path_buf(),
            stem: "e".into(),
            budget: Arc::new(AtomicU64::new(0)),
        };
        let mut t = Transcript::create_within(&place, Arc::new(AtomicU64::new(100))).unwrap();
        t.record(">", "short");
        t.record("<", &"x".repeat(200));
        t.record("<", "after the cut");
        t.flush();
        let text = std::fs::read_to_string(dir.path().join("e.1.transcript")).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(lines[0].ends_with("> short"), "{text}");
        assert_eq!(lines[1], TRANSCRIPT_CUT);
        // The budget of a folder counts what earlier runs wrote.
        let budget = budget_of(dir.path(), "e");
        let left = budget.load(std::sync::atomic::Ordering::Relaxed);
        assert_eq!(left, TRANSCRIPT_BUDGET - text.len() as u64);
        assert!(Arc::ptr_eq(&budget, &budget_of(dir.path(), "e")));
    }

    /// The format protocol.md gives: milliseconds since the engine started, right-aligned
    /// in 8 columns, the direction, the line.
    #[test]
    fn each_line_starts_with_the_milliseconds_since_the_start() {
        let dir = tempfile::tempdir().unwrap();
        let place = LogPlace {
            dir: dir.path().to_path_buf(),
            stem: "e".into(),
            budget: Arc::new(AtomicU64::new(0)),
        };
        let mut t = Transcript::create_within(&place, Arc::new(AtomicU64::new(1 << 20))).unwrap();
        t.record(">", r#"{"type":"ping","id":1}"#);
        std::thread::sleep(std::time::Duration::from_millis(150));
        t.record("<", r#"{"type":"pong","id":1}"#);
        t.flush();
        let text = std::fs::read_to_string(dir.path().join("e.1.transcript")).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(&lines[0][8..], r#" > {"type":"ping","id":1}"#, "{text}");
        assert_eq!(&lines[1][8..], r#" < {"type":"pong","id":1}"#, "{text}");
        let ms: Vec<u64> = lines
            .iter()
            .map(|l| l[..8].trim_start().parse().unwrap())
            .collect();
        // 150 ms apart: in seconds they would be equal, in microseconds 150 000 apart.
        assert!(ms[1] - ms[0] >= 150 && ms[1] < 60_000, "{text}");
    }
}
