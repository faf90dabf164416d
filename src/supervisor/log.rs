//! An engine instance's log file in the results folder: everything it wrote to stderr and
//! every `log` message it sent, within a byte budget shared by all instances of one engine
//! (so restarts do not multiply the disk used). The first lines of stderr, the lines that
//! name an error and the last lines are also kept in memory, to show in the error when the
//! engine dies.
//!
//! stderr is written as text that cannot act on a terminal that shows the file: invalid
//! bytes replaced, control characters (but tabs and line ends) written as escapes
//! (`\u{1b}`), and a line that begins as the referee's own lines do (`[kalaha]`) marked
//! `[stderr] `, so that an engine cannot write a line that reads as the referee's.

use std::collections::VecDeque;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Where an engine's log goes and how much of it may be written.
#[derive(Clone, Debug)]
pub struct LogPlace {
    /// The folder of the log files.
    pub dir: PathBuf,
    /// The file name's start (the engine's name made file-safe); `.N.log` is added with
    /// the first free N.
    pub stem: String,
    /// Bytes all instances of this engine may still write.
    pub budget: Arc<AtomicU64>,
}

/// The last lines of stderr kept in memory for error messages.
const TAIL_LINES: usize = 5;
/// The first lines of stderr kept (a script's interpreter names the error at the top and
/// fills the end with its stack, as Node.js does).
const HEAD_LINES: usize = 3;
/// Lines between the first and the last that name an error, kept as well.
const NAMED_LINES: usize = 2;
/// The longest tail line kept, in bytes.
const TAIL_LINE_BYTES: usize = 300;

/// Opens a new file `dir/stem.N.suffix` for the first N not taken. The file is created,
/// never opened if it exists and never through a symbolic link.
pub fn create_numbered(dir: &Path, stem: &str, suffix: &str) -> io::Result<(File, PathBuf)> {
    for n in 1u32.. {
        let path = dir.join(format!("{stem}.{n}.{suffix}"));
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path)
        {
            Ok(f) => return Ok((f, path)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && n < 100_000 => {}
            Err(e) => return Err(e),
        }
    }
    unreachable!("the loop returns")
}

/// Takes up to `want` bytes from `budget`; returns how many were granted.
pub(crate) fn take_budget(budget: &AtomicU64, want: u64) -> u64 {
    budget
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
            Some(left.saturating_sub(want))
        })
        .map_or(0, |left| left.min(want))
}

/// Moves the file `from` to `dir/stem.N.suffix` for the first N not taken (never replacing
/// a file, nor following a link), and returns the new path. An open file stays open: a
/// running engine's log keeps growing under its new name.
pub fn rename_numbered(from: &Path, dir: &Path, stem: &str, suffix: &str) -> io::Result<PathBuf> {
    for n in 1u32.. {
        let path = dir.join(format!("{stem}.{n}.{suffix}"));
        if path == from {
            return Ok(path);
        }
        match std::fs::hard_link(from, &path) {
            Ok(()) => {
                std::fs::remove_file(from)?;
                return Ok(path);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && n < 100_000 => {}
            Err(e) => return Err(e),
        }
    }
    unreachable!("the loop returns")
}

/// The log of one engine instance.
pub struct EngineLog {
    inner: Mutex<Inner>,
    path: Option<PathBuf>,
    /// The path after [`EngineLog::rename`] (once the engine's name is settled).
    renamed: std::sync::OnceLock<PathBuf>,
}

struct Inner {
    file: Option<File>,
    budget: Option<Arc<AtomicU64>>,
    capped: bool,
    /// The last lines, each with its number (from 0).
    tail: VecDeque<(u64, String)>,
    /// The first lines, and later lines that name an error, with their numbers.
    head: Vec<(u64, String)>,
    named: Vec<(u64, String)>,
    /// Complete lines seen (blank ones not counted).
    lines: u64,
    /// The unfinished last line of stderr.
    partial: Vec<u8>,
    /// stderr as it is written to the file.
    text: StderrText,
}

impl EngineLog {
    /// A log in `place` (`None`: nothing is written, the tail is still kept).
    pub fn open(place: Option<&LogPlace>) -> EngineLog {
        let opened = place.map(|p| (create_numbered(&p.dir, &p.stem, "log"), p));
        let (file, path, budget) = match opened {
            Some((Ok((f, path)), p)) => (Some(f), Some(path), Some(p.budget.clone())),
            Some((Err(e), p)) => {
                tracing::warn!(
                    "cannot create a log for {} in {}: {e}",
                    p.stem,
                    p.dir.display()
                );
                (None, None, None)
            }
            None => (None, None, None),
        };
        EngineLog {
            inner: Mutex::new(Inner {
                file,
                budget,
                capped: false,
                tail: VecDeque::new(),
                head: Vec::new(),
                named: Vec::new(),
                lines: 0,
                partial: Vec::new(),
                text: StderrText::default(),
            }),
            path,
            renamed: std::sync::OnceLock::new(),
        }
    }

    /// The log file, if there is one.
    pub fn path(&self) -> Option<&Path> {
        self.renamed
            .get()
            .or(self.path.as_ref())
            .map(|p| p.as_path())
    }

    /// Moves the log file to `stem.N.log` in its folder (once: the name of an engine is
    /// settled once, after its `hello`), so that it is found under the engine's name.
    pub fn rename(&self, stem: &str) -> io::Result<()> {
        let (Some(path), None) = (&self.path, self.renamed.get()) else {
            return Ok(());
        };
        let dir = path.parent().unwrap_or(Path::new("."));
        let new = rename_numbered(path, dir, stem, "log")?;
        let _ = self.renamed.set(new);
        Ok(())
    }

    /// Bytes the engine wrote to stderr.
    pub fn stderr(&self, bytes: &[u8]) {
        let mut inner = self.inner.lock().expect("log lock");
        let text = inner.text.push(bytes);
        inner.write(text.as_bytes());
        inner.keep_tail(bytes);
    }

    /// A `log` message (or another note) the engine sent, as one line.
    pub fn note(&self, text: &str) {
        let mut line = String::with_capacity(text.len() + 1);
        line.push_str(text);
        line.push('\n');
        self.inner.lock().expect("log lock").write(line.as_bytes());
    }

    /// What stderr said, for an error message (empty if it said nothing): its first lines,
    /// the lines between that name an error (`error`, `exception`, `panicked`, ...) and its
    /// last lines, with `...` where lines are left out.
    pub fn tail(&self) -> Vec<String> {
        let inner = self.inner.lock().expect("log lock");
        let mut kept: Vec<(u64, String)> = inner.head.clone();
        kept.extend(inner.named.iter().cloned());
        kept.extend(inner.tail.iter().cloned());
        if !inner.partial.is_empty() {
            kept.push((inner.lines, shown(&inner.partial)));
            // The partial line is the last: the tail keeps TAIL_LINES with it.
            let first_of_tail = (inner.lines + 1).saturating_sub(TAIL_LINES as u64);
            kept.retain(|(n, _)| {
                *n >= first_of_tail || inner.head.iter().chain(&inner.named).any(|(h, _)| h == n)
            });
        }
        kept.sort_by_key(|(n, _)| *n);
        kept.dedup_by_key(|(n, _)| *n);
        let mut shown_lines = Vec::with_capacity(kept.len() + 2);
        let mut next = 0;
        for (n, line) in kept {
            if n > next {
                shown_lines.push("...".to_string());
            }
            shown_lines.push(line);
            next = n + 1;
        }
        shown_lines
    }

    /// Flushes the file.
    pub fn flush(&self) {
        if let Some(f) = &mut self.inner.lock().expect("log lock").file {
            let _ = f.flush();
        }
    }
}

/// How the referee's own lines in a log begin.
const REFEREE_MARK: &str = "[kalaha]";

/// stderr made into safe text as it comes, in pieces that may split a character or a line.
#[derive(Debug)]
struct StderrText {
    /// Bytes not written yet: the start of a line that may still become [`REFEREE_MARK`],
    /// then an unfinished character.
    pending: Vec<u8>,
    at_line_start: bool,
}

impl Default for StderrText {
    fn default() -> StderrText {
        StderrText {
            pending: Vec::new(),
            at_line_start: true,
        }
    }
}

impl StderrText {
    /// The text to write for `bytes` (and what was pending before them).
    fn push(&mut self, bytes: &[u8]) -> String {
        self.pending.extend_from_slice(bytes);
        let mut text = String::with_capacity(self.pending.len());
        let mut rest: &[u8] = &self.pending;
        loop {
            match std::str::from_utf8(rest) {
                Ok(s) => {
                    text.push_str(s);
                    rest = &[];
                    break;
                }
                Err(e) => {
                    let (good, bad) = rest.split_at(e.valid_up_to());
                    text.push_str(std::str::from_utf8(good).unwrap_or_default());
                    match e.error_len() {
                        Some(n) => {
                            text.push('\u{fffd}');
                            rest = &bad[n..];
                        }
                        // A character cut at the end: kept for the next piece.
                        None => {
                            rest = bad;
                            break;
                        }
                    }
                }
            }
        }
        let unfinished = rest.to_vec();
        let mut out = String::with_capacity(text.len());
        let mut held = String::new();
        let mut s = text.as_str();
        while !s.is_empty() {
            let (line, next) = match s.find('\n') {
                Some(i) => (&s[..=i], &s[i + 1..]),
                None => (s, ""),
            };
            if self.at_line_start {
                if next.is_empty()
                    && line.len() < REFEREE_MARK.len()
                    && REFEREE_MARK.starts_with(line)
                {
                    held = line.to_string();
                    break;
                }
                if line.starts_with(REFEREE_MARK) {
                    out.push_str("[stderr] ");
                }
            }
            // A `\r` that may begin a `\r\n` waits for what follows it.
            let (line, cr) = match line.strip_suffix('\r') {
                Some(l) if next.is_empty() => (l, true),
                _ => (line, false),
            };
            if cr {
                held = "\r".to_string();
            }
            let body = line.strip_suffix("\r\n").map_or(line, |l| &line[..l.len()]);
            out.push_str(&crate::record::clean_message(body));
            if body.len() < line.len() {
                out.push('\n');
            }
            self.at_line_start = line.ends_with('\n');
            if cr {
                break;
            }
            s = next;
        }
        self.pending = held.into_bytes();
        self.pending.extend_from_slice(&unfinished);
        out
    }
}

fn shown(bytes: &[u8]) -> String {
    let end = bytes.len().min(TAIL_LINE_BYTES);
    crate::record::clean_text(String::from_utf8_lossy(&bytes[..end]).trim_end()).into_owned()
}

/// Whether a line of stderr names an error: `SyntaxError: ...`, `error[E0425]`, `thread
/// 'main' panicked`, `Exception in thread`, `Traceback`, `fatal: ...`.
fn names_an_error(line: &str) -> bool {
    let lower = line.to_lowercase();
    ["error", "exception", "panicked", "traceback", "fatal"]
        .iter()
        .any(|w| lower.contains(w))
}

impl Inner {
    fn write(&mut self, bytes: &[u8]) {
        let Some(file) = &mut self.file else { return };
        let Some(budget) = &self.budget else { return };
        let want = bytes.len() as u64;
        let granted = take_budget(budget, want);
        let mut ok = file.write_all(&bytes[..granted as usize]).is_ok();
        if granted < want && !self.capped {
            self.capped = true;
            ok &= file
                .write_all(b"\n[log cap reached for this engine: the rest is discarded]\n")
                .is_ok();
        }
        if !ok {
            self.file = None;
        }
    }

    fn keep_tail(&mut self, bytes: &[u8]) {
        for piece in bytes.split_inclusive(|&b| b == b'\n') {
            if self.partial.len() < TAIL_LINE_BYTES {
                let room = TAIL_LINE_BYTES - self.partial.len();
                self.partial
                    .extend_from_slice(&piece[..piece.len().min(room)]);
            }
            if piece.ends_with(b"\n") {
                let line = shown(&self.partial);
                self.partial.clear();
                if line.trim().is_empty() {
                    continue;
                }
                let n = self.lines;
                self.lines += 1;
                if self.head.len() < HEAD_LINES {
                    self.head.push((n, line.clone()));
                } else if self.named.len() < NAMED_LINES && names_an_error(&line) {
                    self.named.push((n, line.clone()));
                }
                if self.tail.len() == TAIL_LINES {
                    self.tail.pop_front();
                }
                self.tail.push_back((n, line));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(dir: &Path, budget: u64) -> LogPlace {
        LogPlace {
            dir: dir.to_path_buf(),
            stem: "e".into(),
            budget: Arc::new(AtomicU64::new(budget)),
        }
    }

    /// stderr cannot act on a terminal that shows the log, nor forge the referee's lines,
    /// however its writes are cut.
    #[test]
    fn stderr_is_written_as_safe_text_in_any_pieces() {
        let whole: &[u8] =
            b"\x1b]0;PWN\x07\x1b[2Jok\tcaf\xc3\xa9\r\n[kalaha] forged\nbad \xe9 byte\n[kal";
        let expected = "\\u{1b}]0;PWN\\u{7}\\u{1b}[2Jok\tcaf\u{e9}\n[stderr] [kalaha] forged\nbad \u{fffd} byte\n";
        for cut in 1..whole.len() {
            let mut t = StderrText::default();
            let mut out = String::new();
            for piece in whole.chunks(cut) {
                out.push_str(&t.push(piece));
            }
            assert_eq!(out, expected, "pieces of {cut}");
            // The held start of a line is decided by what follows it.
            assert_eq!(t.push(b"aha] x\n"), "[stderr] [kalaha] x\n");
        }
    }

    #[test]
    fn instances_share_one_budget_and_never_overwrite() {
        let dir = tempfile::tempdir().unwrap();
        let p = place(dir.path(), 10);
        let a = EngineLog::open(Some(&p));
        let b = EngineLog::open(Some(&p));
        assert_ne!(a.path(), b.path());
        a.stderr(b"123456");
        b.stderr(b"abcdef");
        a.flush();
        b.flush();
        let ta = std::fs::read_to_string(a.path().unwrap()).unwrap();
        let tb = std::fs::read_to_string(b.path().unwrap()).unwrap();
        assert_eq!(ta, "123456");
        assert!(tb.starts_with("abcd\n[log cap reached"), "{tb}");
    }

    #[test]
    fn a_planted_symlink_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("victim");
        std::fs::write(&target, "keep").unwrap();
        std::os::unix::fs::symlink(&target, dir.path().join("e.1.log")).unwrap();
        let log = EngineLog::open(Some(&place(dir.path(), 100)));
        log.stderr(b"x");
        log.flush();
        assert_eq!(log.path().unwrap(), dir.path().join("e.2.log"));
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
    }

    #[test]
    fn a_log_renamed_keeps_growing_under_its_new_name() {
        let dir = tempfile::tempdir().unwrap();
        let log = EngineLog::open(Some(&place(dir.path(), 100)));
        log.stderr(b"one\n");
        std::fs::write(dir.path().join("named.1.log"), "an earlier run").unwrap();
        log.rename("named").unwrap();
        log.stderr(b"two\n");
        log.flush();
        let new = dir.path().join("named.2.log");
        assert_eq!(log.path().unwrap(), new);
        assert_eq!(std::fs::read_to_string(&new).unwrap(), "one\ntwo\n");
        assert!(!dir.path().join("e.1.log").exists());
        let kept = std::fs::read_to_string(dir.path().join("named.1.log")).unwrap();
        assert_eq!(kept, "an earlier run");
    }

    #[test]
    fn the_tail_keeps_the_last_lines() {
        let log = EngineLog::open(None);
        log.stderr(
            b"one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nTraceback: cannot load weights.bin",
        );
        let tail = log.tail();
        assert_eq!(
            tail,
            [
                "one",
                "two",
                "three",
                "...",
                "five",
                "six",
                "seven",
                "eight",
                "Traceback: cannot load weights.bin"
            ]
        );
        let log = EngineLog::open(None);
        log.stderr(b"a\nb\n");
        assert_eq!(log.tail(), ["a", "b"]);
    }

    /// Node.js names a syntax error at the top and ends with its stack: both are shown.
    #[test]
    fn the_first_lines_and_those_naming_an_error_are_kept_with_the_last() {
        let log = EngineLog::open(None);
        let mut node = String::from(
            "/tmp/myengine/engine.js:1\nconsole.log(\n\nSyntaxError: Unexpected end of input\n",
        );
        for i in 0..12 {
            node.push_str(&format!("    at frame{i} (node:internal/modules:{i})\n"));
        }
        node.push_str("    at inner (x.js:3)\nTypeError: cannot read x\n");
        for i in 0..6 {
            node.push_str(&format!("    at late{i}\n"));
        }
        node.push_str("\nNode.js v20.20.2\n");
        log.stderr(node.as_bytes());
        let tail = log.tail();
        assert_eq!(
            tail,
            [
                "/tmp/myengine/engine.js:1",
                "console.log(",
                "SyntaxError: Unexpected end of input",
                "...",
                "TypeError: cannot read x",
                "...",
                "at late2",
                "at late3",
                "at late4",
                "at late5",
                "Node.js v20.20.2",
            ]
            .map(|l| if l.starts_with("at ") {
                format!("    {l}")
            } else {
                l.to_string()
            })
        );
    }
}
