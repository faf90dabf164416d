//! The protocol transcript of an engine instance (`--debug`): every line sent and received,
//! whole, with the milliseconds since the engine started. Its bytes come out of the budget
//! of the engine's logs ([`LogPlace::budget`], per engine and tournament), so an engine
//! flooding its output cannot fill the disk; when the budget is used up a last line says
//! so, and nothing more is written.

use super::log::{LogPlace, create_numbered, take_budget};
use std::fs::File;
use std::io::{self, Write};
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

/// The line that ends a transcript cut short.
pub const TRANSCRIPT_CUT: &str =
    "[transcript cut: the log budget of this engine is used up; the rest is not written]";

/// The transcript of one engine instance.
pub struct Transcript {
    /// `None` once the budget is used up or a write failed.
    file: Option<io::BufWriter<File>>,
    budget: Arc<AtomicU64>,
    started: std::time::Instant,
}

impl Transcript {
    /// A new transcript, `STEM.N.transcript` beside the logs of `place`; `None` (with a
    /// warning) when it cannot be created.
    pub fn create(place: &LogPlace) -> Option<Transcript> {
        let (file, _) = create_numbered(&place.dir, &place.stem, "transcript")
            .inspect_err(|e| tracing::warn!("cannot create a transcript: {e}"))
            .ok()?;
        Some(Transcript {
            file: Some(io::BufWriter::new(file)),
            budget: place.budget.clone(),
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

    /// Flushes the file.
    pub fn flush(&mut self) {
        if let Some(f) = &mut self.file {
            let _ = f.flush();
        }
    }
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
            budget: Arc::new(AtomicU64::new(100)),
        };
        let mut t = Transcript::create(&place).unwrap();
        t.record(">", "short");
        t.record("<", &"x".repeat(200));
        t.record("<", "after the cut");
        t.flush();
        let text = std::fs::read_to_string(dir.path().join("e.1.transcript")).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(lines[0].ends_with("> short"), "{text}");
        assert_eq!(lines[1], TRANSCRIPT_CUT);
    }
}
