//! The process's event stream: opened once by the command line ([`open`]), written from
//! any thread ([`emit`]), ended with the exit code ([`finish`]).
//!
//! A thread of its own writes the lines, each whole and unbuffered as soon as it comes (a
//! program that tails the file sees every line whole, as it happens), so that a slow
//! reader never holds up the thread that plays the games (the lines it has not yet taken
//! wait in memory, [`MAX_WAITING_LINES`] at most). The first failure to write (a full
//! disk, a reader that closed its end of the pipe, or one that stopped reading) is kept,
//! said in so many words, and handed to the run by [`check`]: the run stops as it does
//! when its display's output is closed, and the command fails. A failure after Ctrl-C or
//! SIGTERM is not handed to the run: it is stopping already, and ends as interrupted.
//!
//! [`finish`] waits [`END_WAIT`] at most for the reader to take the last lines, and
//! [`INTERRUPTED_END_WAIT`] at most once Ctrl-C or SIGTERM came (during the run, or while
//! it waits): a reader that stopped reading does not hold up a person who stops the run.
//!
//! Warnings that come before `run_started` (the machine's load, games at once), and the
//! start of games the game loop began meanwhile, wait and follow it, so that the stream of
//! a run begins with `run_started`.

use super::{Event, Reason, RunFinished};
use crate::results::RunKind;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The most lines written and not yet taken by the reader: beyond, the reader has stopped
/// reading (a pager not scrolled, a program stuck), which fails the stream rather than
/// filling memory.
pub const MAX_WAITING_LINES: usize = 10_000;

/// How long the end of a run waits for the reader to take the last lines.
pub const END_WAIT: Duration = Duration::from_secs(5);

/// How long the end of a run waits for them once Ctrl-C or SIGTERM came.
pub const INTERRUPTED_END_WAIT: Duration = Duration::from_millis(500);

/// The first failure to write the stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// Said for the user.
    pub message: String,
    /// A write failed after Ctrl-C or SIGTERM came (a reader that the same Ctrl-C ended).
    pub after_interrupt: bool,
}

/// Keeps `message` as the stream's failure, unless one is kept already.
fn fail(failure: &Mutex<Option<Failure>>, message: impl FnOnce() -> String) {
    failure
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(|| Failure {
            message: message(),
            after_interrupt: crate::sys::interrupted(),
        });
}

struct Stream {
    lines: mpsc::Sender<String>,
    /// Lines sent and not yet written.
    waiting_lines: Arc<AtomicUsize>,
    /// Disconnected once the writing thread has ended.
    writer_ended: mpsc::Receiver<()>,
    failure: Arc<Mutex<Option<Failure>>>,
    kind: RunKind,
    started: bool,
    /// Warnings before `run_started`.
    waiting: Vec<String>,
    /// Games recorded and stopped, once the run has ended.
    summary: Option<(u64, u64)>,
}

static STREAM: Mutex<Option<Stream>> = Mutex::new(None);

fn stream() -> MutexGuard<'static, Option<Stream>> {
    STREAM.lock().unwrap_or_else(|e| e.into_inner())
}

/// Where the lines go.
enum Out {
    File(File),
    /// A file in the results folder of a new run, created with the first line: the folder
    /// must be new or empty when the run claims it.
    Later(PathBuf),
}

/// Opens the stream of a run of `kind` into `target`, created or emptied; `-` is standard
/// output, and from then on what the program prints there for people goes to standard
/// error instead, so that standard output holds the events alone. A `target` in `fresh`,
/// the results folder a new run is about to claim, is created with the first line. `given`
/// names the setting as the user gave it (`--events x.jsonl`), for the error.
pub fn open(target: &Path, kind: RunKind, given: &str, fresh: Option<&Path>) -> Result<(), String> {
    let shown = crate::record::shown_path(target);
    let absolute = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let in_fresh = fresh.is_some_and(|f| absolute(target).parent() == Some(&absolute(f)));
    let (out, shown) = if target == Path::new("-") {
        let events = io::stdout()
            .lock()
            .flush()
            .and_then(|()| crate::sys::stdout_to_stderr())
            .map_err(|e| format!("{given}: failed to move standard output aside: {e}"))?;
        (Out::File(File::from(events)), "standard output".to_string())
    } else if in_fresh {
        (Out::Later(target.to_path_buf()), shown)
    } else {
        let file =
            File::create(target).map_err(|e| format!("{given}: failed to create {shown}: {e}"))?;
        (Out::File(file), shown)
    };
    let failure = Arc::new(Mutex::new(None));
    let (lines, from) = mpsc::channel();
    let failed = failure.clone();
    let waiting_lines = Arc::new(AtomicUsize::new(0));
    let taken = waiting_lines.clone();
    let (ended, writer_ended) = mpsc::channel::<()>();
    std::thread::Builder::new()
        .name("events".into())
        .spawn(move || {
            let _ended = ended;
            write_lines(out, &shown, from, &failed, &taken)
        })
        .map_err(|e| format!("{given}: failed to start the thread that writes events: {e}"))?;
    *stream() = Some(Stream {
        lines,
        waiting_lines,
        writer_ended,
        failure,
        kind,
        started: false,
        waiting: Vec::new(),
        summary: None,
    });
    Ok(())
}

/// Writes each line as it comes, until the stream ends or a write fails.
fn write_lines(
    mut out: Out,
    shown: &str,
    from: mpsc::Receiver<String>,
    failure: &Mutex<Option<Failure>>,
    waiting: &AtomicUsize,
) {
    let mut failed = false;
    let write = |out: &mut Out, line: &str| {
        if let Out::Later(path) = out {
            *out = Out::File(File::create(&*path)?);
        }
        match out {
            Out::File(f) => f.write_all(line.as_bytes()),
            Out::Later(_) => unreachable!("created above"),
        }
    };
    for line in from {
        waiting.fetch_sub(1, Ordering::Relaxed);
        if failed {
            continue;
        }
        if let Err(e) = write(&mut out, &line) {
            failed = true;
            let why = match (crate::results::full_disk(&e), e.kind()) {
                (Some(full), _) => full,
                (None, io::ErrorKind::BrokenPipe) => {
                    format!("{e} (the program reading them closed its end of the pipe)")
                }
                (None, _) => e.to_string(),
            };
            fail(failure, || {
                format!("failed to write the events to {shown}: {why}")
            });
        }
    }
}

/// Whether a stream is open.
pub fn is_open() -> bool {
    stream().is_some()
}

/// Writes `event` into the stream, if one is open.
pub fn emit(event: &Event<'_>) {
    let mut guard = stream();
    let Some(s) = guard.as_mut() else {
        return;
    };
    let line = event.line();
    match event {
        // Warnings (the machine's load), and the first games, which the game loop may start
        // before the recorder has said `run_started`, wait for it.
        Event::Warning(_) | Event::GameStarted(_) if !s.started => s.waiting.push(line),
        Event::RunStarted(_) => {
            s.started = true;
            s.send(line);
            for w in std::mem::take(&mut s.waiting) {
                s.send(w);
            }
        }
        _ => s.send(line),
    }
}

impl Stream {
    /// Hands `line` to the writing thread, unless the reader has left
    /// [`MAX_WAITING_LINES`] untaken: then the stream fails, and the line is dropped.
    fn send(&self, line: String) {
        if self.waiting_lines.load(Ordering::Relaxed) >= MAX_WAITING_LINES {
            fail(&self.failure, || {
                format!(
                    "the program reading the events has not taken the last {MAX_WAITING_LINES} \
                     lines: it stopped reading, and the events stopped (write them to a file, \
                     or read them as they come)"
                )
            });
            return;
        }
        self.waiting_lines.fetch_add(1, Ordering::Relaxed);
        if self.lines.send(line).is_err() {
            self.waiting_lines.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// The failure to write the stream, if any, as an error for the run; not one that came
/// after Ctrl-C or SIGTERM, which the end of the command says ([`finish`]).
pub fn check() -> io::Result<()> {
    let failure = match stream().as_ref() {
        Some(s) => s
            .failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .filter(|f| !f.after_interrupt)
            .map(|f| f.message.clone()),
        None => None,
    };
    match failure {
        Some(f) => Err(io::Error::other(f)),
        None => Ok(()),
    }
}

/// Keeps the games the run recorded and stopped, for `run_finished`.
pub fn ran(played: u64, interrupted: u64) {
    if let Some(s) = stream().as_mut() {
        s.summary = Some((played, interrupted));
    }
}

/// Ends the stream, if one is open: the warnings still waiting, then `run_finished` with
/// the exit code `code`, `reason(kind of run)` and the error `message`; waits for the
/// reader to take them, [`END_WAIT`] at most, [`INTERRUPTED_END_WAIT`] once Ctrl-C or
/// SIGTERM came. Returns the failure to write the stream, if any: a reader that took none
/// of the last lines by then has stopped reading.
pub fn finish(
    code: u8,
    reason: impl FnOnce(RunKind) -> Reason,
    message: Option<String>,
) -> Option<Failure> {
    let mut s = stream().take()?;
    for w in std::mem::take(&mut s.waiting) {
        s.send(w);
    }
    let end = Event::RunFinished(RunFinished {
        exit_code: code,
        reason: reason(s.kind),
        message,
        games_played: s.summary.map(|(played, _)| played),
        games_interrupted: s.summary.map(|(_, stopped)| stopped),
    });
    // The last line is sent even past the bound: the reader may take it yet.
    s.waiting_lines.fetch_add(1, Ordering::Relaxed);
    let _ = s.lines.send(end.line());
    drop(s.lines);
    // A reader that stopped reading holds the writing thread in its write: the command
    // ends all the same, after a while.
    let given_up = wait_for_writer(&s.writer_ended);
    let failure = s.failure.lock().unwrap_or_else(|e| e.into_inner()).take();
    match given_up {
        Some(wait) => Some(failure.unwrap_or_else(|| Failure {
            message: format!(
                "the program reading the events took none of the last ones within {}: it \
                 stopped reading",
                crate::record::format_duration(wait)
            ),
            // It stopped reading before.
            after_interrupt: false,
        })),
        None => failure,
    }
}

/// Waits for the writing thread to end ([`END_WAIT`] at most, [`INTERRUPTED_END_WAIT`]
/// once Ctrl-C or SIGTERM came); how long it waited, if it gave up.
fn wait_for_writer(writer_ended: &mpsc::Receiver<()>) -> Option<Duration> {
    /// How often the wait looks whether Ctrl-C or SIGTERM came.
    const LOOK: Duration = Duration::from_millis(10);
    let started = Instant::now();
    let mut deadline = started + END_WAIT;
    let mut interrupted = false;
    loop {
        let now = Instant::now();
        if !interrupted && crate::sys::interrupted() {
            interrupted = true;
            deadline = deadline.min(now + INTERRUPTED_END_WAIT);
        }
        let left = deadline.saturating_duration_since(now);
        if left.is_zero() {
            let waited = deadline.duration_since(started);
            return Some(Duration::from_millis(waited.as_millis() as u64));
        }
        match writer_ended.recv_timeout(left.min(LOOK)) {
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            // Disconnected: the thread has ended (it never sends).
            _ => return None,
        }
    }
}
