//! One engine process per [`Engine`] handle: spawn, handshake, options, games, deadlines and
//! a clean shutdown, speaking the protocol of `protocol.md`.
//!
//! The handle owns the child process; two tasks own its output pipes. The stdout task cuts
//! the output into lines with a hard length limit (never an unbounded buffer: past the limit
//! it keeps reading but discards) and hands them over a small bounded channel; the stderr
//! task drains stderr all the time into a log file capped in size. Every request races the
//! reply against its deadline and the child's exit with `select!`.
//!
//! Each engine runs in its own process group. [`Engine::shutdown`] sends `quit`, waits a
//! grace period, sends SIGTERM to the group, waits again, sends SIGKILL to the group and
//! reaps the child; dropping an [`Engine`] SIGKILLs the group at once. So an engine that
//! ignores SIGTERM, or leaves children of its own behind, leaves nothing running.
//!
//! Differences from the sketch in the team plan: the handle itself owns the process (its
//! methods take `&mut self`; there is no separate actor task); `Hello` is [`HelloReply`]
//! (from `crate::protocol`); `go` also fails with [`EngineError::IllegalMove`] when the pit
//! is not legal in the given position, and [`MoveReply`] has `infos_dropped` (only the
//! latest `Settings::info_cap` reports are kept); `shutdown` returns how the process ended
//! ([`Stopped`]). Additions: [`Engine::ping`], [`Engine::take_notes`] (the `log` lines and
//! unknown messages received), [`Engine::pid`] (= the process group), and for the compliance
//! checker [`Engine::spawn`] (no handshake), [`Engine::handshake`], [`Engine::hello_line`],
//! [`Engine::send`], [`Engine::send_raw`], [`Engine::recv_line`] and
//! [`Engine::recv_message`].

use crate::engines::{EngineOption, OptionKind, SearchInfo};
use crate::protocol::{
    FromEngine, GameResult, HelloReply, PROTOCOL_VERSION, ParseError, TimeLimit, ToEngine,
};
use crate::rules::{Move, Position, Rules, Side};
use std::collections::VecDeque;
use std::fmt;
use std::io::{self, Write as _};
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::{Instant, sleep_until, timeout};

/// How to start an engine.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EngineCommand {
    pub program: PathBuf,
    pub args: Vec<String>,
    /// Working directory (default: the current one).
    pub dir: Option<PathBuf>,
    /// Extra environment variables.
    pub env: Vec<(String, String)>,
}

impl EngineCommand {
    /// A program with arguments, in the current directory.
    pub fn new(
        program: impl Into<PathBuf>,
        args: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        EngineCommand {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
            dir: None,
            env: Vec::new(),
        }
    }

    /// A built-in engine: this executable with `engine NAME` (so only meaningful when
    /// called from the `kalaha` binary; tests use `env!("CARGO_BIN_EXE_kalaha")`).
    pub fn builtin(name: &str) -> io::Result<Self> {
        Ok(EngineCommand::new(
            std::env::current_exe()?,
            ["engine", name],
        ))
    }

    /// The command line, for messages.
    pub fn display(&self) -> String {
        let mut s = self.program.display().to_string();
        for a in &self.args {
            s.push(' ');
            s.push_str(a);
        }
        s
    }
}

/// Timeouts and limits of one engine.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Time to answer the first `hello` (slow-loading engines are common).
    pub startup_timeout: Duration,
    /// Time to answer a `ping` (also bounds writing one line to the engine).
    pub ping_timeout: Duration,
    /// Time to exit after `quit` before SIGTERM.
    pub quit_grace: Duration,
    /// Time to exit after SIGTERM before SIGKILL.
    pub term_grace: Duration,
    /// Longest accepted line from the engine, in bytes.
    pub line_limit: usize,
    /// Where the engine's stderr goes (`None`: discarded).
    pub stderr_log: Option<PathBuf>,
    /// Bytes of stderr kept in the log; the rest is read and discarded.
    pub stderr_cap: u64,
    /// A file that receives every line sent and received (for `--debug`).
    pub transcript: Option<PathBuf>,
    /// `info` lines kept per move (the latest ones); the rest are counted.
    pub info_cap: usize,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            startup_timeout: Duration::from_secs(10),
            ping_timeout: Duration::from_secs(5),
            quit_grace: Duration::from_secs(1),
            term_grace: Duration::from_secs(1),
            line_limit: crate::protocol::DEFAULT_LINE_LIMIT,
            stderr_log: None,
            stderr_cap: 10 << 20,
            transcript: None,
            info_cap: 1000,
        }
    }
}

/// An engine's answer to `go`.
#[derive(Clone, Debug, PartialEq)]
pub struct MoveReply {
    pub pit: i64,
    /// The `move` line as received.
    pub line: String,
    /// The latest `info` reports (at most `Settings::info_cap`).
    pub infos: Vec<SearchInfo>,
    /// `info` reports received but not kept.
    pub infos_dropped: u64,
    /// From writing the `go` line to reading the `move` line.
    pub elapsed: Duration,
}

/// A line an engine sent that was recorded rather than answered: a `log` message, a
/// message of a type this protocol version does not know, or a malformed `log` or `info`
/// (these are never faults).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EngineNote {
    /// The `log` level, `"unknown"` for an unknown message type, or [`MALFORMED`] for a
    /// `log` or `info` with missing or wrongly typed fields.
    pub level: String,
    pub line: String,
}

/// The [`EngineNote::level`] of a malformed `log` or `info` line.
pub const MALFORMED: &str = "malformed";

/// How an engine process ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stopped {
    /// It exited by itself (after `quit`, or earlier).
    Exited(ExitKind),
    /// It needed SIGTERM.
    Terminated,
    /// It needed SIGKILL.
    Killed,
}

/// An exit status: a code or a signal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExitKind {
    pub code: Option<i32>,
    pub signal: Option<i32>,
}

impl From<ExitStatus> for ExitKind {
    fn from(s: ExitStatus) -> Self {
        ExitKind {
            code: s.code(),
            signal: s.signal(),
        }
    }
}

impl fmt::Display for ExitKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.code, self.signal) {
            (Some(c), _) => write!(f, "exited with status {c}"),
            (None, Some(s)) => write!(f, "was killed by signal {s}{}", signal_name(s)),
            (None, None) => f.write_str("exited"),
        }
    }
}

fn signal_name(s: i32) -> &'static str {
    match s {
        libc::SIGKILL => " (SIGKILL)",
        libc::SIGTERM => " (SIGTERM)",
        libc::SIGSEGV => " (SIGSEGV)",
        libc::SIGABRT => " (SIGABRT)",
        libc::SIGPIPE => " (SIGPIPE)",
        libc::SIGINT => " (SIGINT)",
        _ => "",
    }
}

/// The longest piece of a received line kept in an error, in bytes.
pub const DISPLAY_LIMIT: usize = 200;

/// A line cut to [`DISPLAY_LIMIT`] bytes (on a character boundary) for messages.
pub fn truncate_line(line: &str) -> String {
    if line.len() <= DISPLAY_LIMIT {
        return line.to_string();
    }
    let mut end = DISPLAY_LIMIT;
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}... ({} bytes)", &line[..end], line.len())
}

/// Why talking to an engine failed. Every variant is a fault a referee can turn into a
/// forfeit.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("could not start {program}: {source}")]
    Spawn {
        program: String,
        #[source]
        source: io::Error,
    },
    #[error("no hello within the startup timeout of {timeout:?}")]
    HandshakeTimeout { timeout: Duration },
    #[error("the engine speaks protocol {got}, not {PROTOCOL_VERSION}: {line}")]
    Protocol { got: u32, line: String },
    #[error("no pong within {timeout:?}: the engine stalled")]
    Stall { timeout: Duration },
    #[error("the engine {exit}")]
    Exited { exit: ExitKind },
    #[error("the engine closed its output but did not exit")]
    StdoutClosed,
    #[error("no move within the deadline of {deadline:?}")]
    Timeout { deadline: Duration },
    #[error("a line longer than the limit of {limit} bytes, beginning {prefix:?}")]
    LineTooLong { limit: usize, prefix: String },
    #[error("a line that is not a JSON object ({error}): {line}")]
    NotJson { line: String, error: String },
    #[error("a bad {kind:?} message ({error}): {line}")]
    Malformed {
        kind: String,
        line: String,
        error: String,
    },
    #[error("expected {expected}, received: {line}")]
    WrongMessage {
        expected: &'static str,
        line: String,
    },
    #[error("{reason}; received: {line}")]
    IllegalMove {
        pit: i64,
        reason: String,
        line: String,
    },
    #[error("option {name:?}: {reason}")]
    BadOption { name: String, reason: String },
    #[error("i/o with the engine failed: {0}")]
    Io(#[from] io::Error),
}

impl EngineError {
    /// The received line that caused the error, if any (truncated for display).
    pub fn line(&self) -> Option<&str> {
        match self {
            EngineError::NotJson { line, .. }
            | EngineError::Malformed { line, .. }
            | EngineError::WrongMessage { line, .. }
            | EngineError::IllegalMove { line, .. }
            | EngineError::Protocol { line, .. } => Some(line),
            EngineError::LineTooLong { prefix, .. } => Some(prefix),
            _ => None,
        }
    }
}

/// What the stdout task hands over.
enum Event {
    Line(String),
    TooLong { prefix: String },
    NotUtf8 { prefix: String },
    Error(io::Error),
    Eof,
}

/// A running engine process.
pub struct Engine {
    child: Child,
    pgid: i32,
    name: String,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Vec<Event>>,
    /// Events received but not yet handled.
    pending: VecDeque<Event>,
    stdout_closed: bool,
    tasks: Vec<JoinHandle<()>>,
    exit: Option<ExitStatus>,
    hello: HelloReply,
    hello_line: String,
    settings: Settings,
    transcript: Option<io::BufWriter<std::fs::File>>,
    started: std::time::Instant,
    notes: VecDeque<EngineNote>,
    next_ping: u64,
    stopped: bool,
}

const NOTES_KEPT: usize = 100;

impl Engine {
    /// Spawns the engine and performs the `hello` handshake.
    pub async fn start(cmd: &EngineCommand, settings: &Settings) -> Result<Engine, EngineError> {
        let mut engine = Engine::spawn(cmd, settings)?;
        match engine.handshake().await {
            Ok(_) => Ok(engine),
            Err(e) => {
                engine.shutdown().await;
                Err(e)
            }
        }
    }

    /// Spawns the engine without any handshake (must be called inside a tokio runtime).
    pub fn spawn(cmd: &EngineCommand, settings: &Settings) -> Result<Engine, EngineError> {
        let mut command = Command::new(&cmd.program);
        command
            .args(&cmd.args)
            .envs(cmd.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        if let Some(dir) = &cmd.dir {
            command.current_dir(dir);
        }
        // If the referee itself is killed (kill -9, a crash), nothing can stop its engines
        // the polite way: have the kernel kill the engine when its parent goes.
        #[cfg(target_os = "linux")]
        // SAFETY: the closure only calls prctl, which is async-signal-safe.
        unsafe {
            command.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) == -1 {
                    return Err(io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let mut child = command.spawn().map_err(|source| EngineError::Spawn {
            program: cmd.program.display().to_string(),
            source,
        })?;
        let pgid = child.id().map_or(0, |p| p as i32);
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr = child.stderr.take().expect("stderr is piped");
        let (tx, rx) = mpsc::channel(4);
        let mut tasks = vec![tokio::spawn(read_lines(stdout, settings.line_limit, tx))];
        let log = settings.stderr_log.as_ref().and_then(|p| {
            std::fs::File::create(p)
                .inspect_err(|e| tracing::warn!("cannot create {}: {e}", p.display()))
                .ok()
        });
        tasks.push(tokio::spawn(drain_stderr(stderr, log, settings.stderr_cap)));
        let transcript = settings.transcript.as_ref().and_then(|p| {
            std::fs::File::create(p)
                .inspect_err(|e| tracing::warn!("cannot create {}: {e}", p.display()))
                .ok()
                .map(io::BufWriter::new)
        });
        let name = cmd
            .program
            .file_name()
            .map_or_else(|| cmd.display(), |n| n.to_string_lossy().into_owned());
        tracing::debug!(engine = %name, pid = pgid, "spawned {}", cmd.display());
        Ok(Engine {
            stdin: child.stdin.take(),
            child,
            pgid,
            name,
            lines: rx,
            pending: VecDeque::new(),
            stdout_closed: false,
            tasks,
            exit: None,
            hello: HelloReply {
                protocol: 0,
                name: String::new(),
                version: String::new(),
                author: String::new(),
                options: Vec::new(),
            },
            hello_line: String::new(),
            settings: settings.clone(),
            transcript,
            started: std::time::Instant::now(),
            notes: VecDeque::new(),
            next_ping: 1,
            stopped: false,
        })
    }

    /// The engine's `hello` (empty before the handshake).
    pub fn hello(&self) -> &HelloReply {
        &self.hello
    }

    /// The engine's `hello` line as received (empty before the handshake).
    pub fn hello_line(&self) -> &str {
        &self.hello_line
    }

    /// The process id, which is also the process group id.
    pub fn pid(&self) -> i32 {
        self.pgid
    }

    /// The `log` messages, unknown messages and malformed `log`/`info` messages received
    /// so far (the latest ones).
    pub fn take_notes(&mut self) -> Vec<EngineNote> {
        self.notes.drain(..).collect()
    }

    /// Sends `hello` and waits for the engine's `hello` within the startup timeout.
    pub async fn handshake(&mut self) -> Result<&HelloReply, EngineError> {
        self.send(&ToEngine::Hello {
            protocol: PROTOCOL_VERSION,
        })
        .await?;
        let limit = self.settings.startup_timeout;
        let (msg, line) = self.recv_message(limit).await.map_err(|e| match e {
            EngineError::Timeout { .. } => EngineError::HandshakeTimeout { timeout: limit },
            e => e,
        })?;
        match msg {
            FromEngine::Hello(h) if h.protocol == PROTOCOL_VERSION => {
                self.hello = h;
                self.hello_line = line;
                Ok(&self.hello)
            }
            FromEngine::Hello(h) => Err(EngineError::Protocol {
                got: h.protocol,
                line: truncate_line(&line),
            }),
            _ => Err(EngineError::WrongMessage {
                expected: "hello",
                line: truncate_line(&line),
            }),
        }
    }

    /// Sets an option the engine declared, after checking the value against the
    /// declaration. The engine does not answer; the next `ping` is the barrier.
    pub async fn set_option(
        &mut self,
        name: &str,
        value: serde_json::Value,
    ) -> Result<(), EngineError> {
        let opt = self
            .hello
            .options
            .iter()
            .find(|o| o.name == name)
            .ok_or_else(|| EngineError::BadOption {
                name: name.to_string(),
                reason: format!(
                    "the engine declares no such option (it has: {})",
                    self.hello
                        .options
                        .iter()
                        .map(|o| o.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            })?;
        validate_option(opt, &value).map_err(|reason| EngineError::BadOption {
            name: name.to_string(),
            reason,
        })?;
        self.send(&ToEngine::Option {
            name: name.to_string(),
            value,
        })
        .await
    }

    /// Sends `ping` and waits for the matching `pong` within the ping timeout.
    pub async fn ping(&mut self) -> Result<Duration, EngineError> {
        let id = self.next_ping;
        self.next_ping += 1;
        self.send(&ToEngine::Ping { id }).await?;
        let t = Instant::now();
        let limit = self.settings.ping_timeout;
        let (msg, line) = self.recv_message(limit).await.map_err(|e| match e {
            EngineError::Timeout { .. } => EngineError::Stall { timeout: limit },
            e => e,
        })?;
        match msg {
            FromEngine::Pong { id: got } if got == id => Ok(t.elapsed()),
            _ => Err(EngineError::WrongMessage {
                expected: "the pong for ping",
                line: truncate_line(&line),
            }),
        }
    }

    /// Starts a game: sends `new_game`, then waits for the engine with a ping.
    pub async fn new_game(
        &mut self,
        game: &str,
        rules: Rules,
        side: Side,
    ) -> Result<(), EngineError> {
        self.send(&ToEngine::NewGame {
            game: game.to_string(),
            rules,
            side,
        })
        .await?;
        self.ping().await.map(|_| ())
    }

    /// Asks for a move in `pos` (after `moves`, the whole game so far) and waits for it at
    /// most `deadline` from the moment the `go` line is written. `info` lines are collected.
    pub async fn go(
        &mut self,
        pos: &Position,
        moves: &[Move],
        time: TimeLimit,
        deadline: Duration,
    ) -> Result<MoveReply, EngineError> {
        self.send(&ToEngine::Go {
            position: pos.view(),
            legal: pos.legal_moves().collect(),
            moves: moves.to_vec(),
            time,
        })
        .await?;
        let start = Instant::now();
        let end = start + deadline;
        let mut infos = VecDeque::new();
        let mut dropped = 0u64;
        loop {
            let line = self.recv_line_until(end).await.map_err(|e| match e {
                EngineError::Timeout { .. } => EngineError::Timeout { deadline },
                e => e,
            })?;
            match self.parse(&line)? {
                None => {}
                Some(FromEngine::Info(info)) => {
                    if infos.len() >= self.settings.info_cap {
                        infos.pop_front();
                        dropped += 1;
                    }
                    if self.settings.info_cap > 0 {
                        infos.push_back(info);
                    } else {
                        dropped += 1;
                    }
                }
                Some(FromEngine::Move { pit }) => {
                    let elapsed = start.elapsed();
                    if let Err(e) = pos.check(pit) {
                        return Err(EngineError::IllegalMove {
                            pit,
                            reason: e.to_string(),
                            line: truncate_line(&line),
                        });
                    }
                    return Ok(MoveReply {
                        pit,
                        line,
                        infos: infos.into(),
                        infos_dropped: dropped,
                        elapsed,
                    });
                }
                Some(_) => {
                    return Err(EngineError::WrongMessage {
                        expected: "info or move",
                        line: truncate_line(&line),
                    });
                }
            }
        }
    }

    /// Tells the engine the game is over (no answer expected).
    pub async fn game_over(
        &mut self,
        game: &str,
        result: GameResult,
        south: u16,
        north: u16,
        termination: &str,
    ) -> Result<(), EngineError> {
        self.send(&ToEngine::GameOver {
            game: game.to_string(),
            result,
            south,
            north,
            termination: termination.to_string(),
        })
        .await
    }

    /// Ends the engine: `quit`, the quit grace, SIGTERM to the process group, the term
    /// grace, SIGKILL to the group; reaps the child, and SIGKILLs whatever else is left in
    /// the group. Never fails.
    pub async fn shutdown(mut self) -> Stopped {
        if self.exit.is_none() && self.stdin.is_some() {
            let quit = ToEngine::Quit.to_line();
            let _ = timeout(self.settings.quit_grace, self.send_raw(&quit)).await;
        }
        // Closing stdin is a second, universal way of saying quit.
        self.stdin = None;
        let stopped = if let Some(st) = self.wait_exit(self.settings.quit_grace).await {
            Stopped::Exited(st.into())
        } else {
            self.signal_group(libc::SIGTERM);
            if self.wait_exit(self.settings.term_grace).await.is_some() {
                Stopped::Terminated
            } else {
                self.signal_group(libc::SIGKILL);
                // SIGKILL cannot be ignored; only an uninterruptible sleep delays it.
                let _ = self.wait_exit(Duration::from_secs(10)).await;
                Stopped::Killed
            }
        };
        self.signal_group(libc::SIGKILL);
        self.stopped = true;
        // Let the pipe tasks finish so the stderr log is complete; unread output is
        // dropped (closing the channel ends a stdout task blocked on a full channel).
        self.lines.close();
        for task in std::mem::take(&mut self.tasks) {
            let _ = timeout(Duration::from_secs(1), task).await;
        }
        tracing::debug!(engine = %self.name, "stopped: {stopped:?}");
        stopped
    }

    async fn wait_exit(&mut self, limit: Duration) -> Option<ExitStatus> {
        if let Some(st) = self.exit {
            return Some(st);
        }
        if let Ok(Ok(st)) = timeout(limit, self.child.wait()).await {
            self.exit = Some(st);
        }
        self.exit
    }

    fn signal_group(&self, signal: i32) {
        if self.pgid > 1 {
            // SAFETY: killpg has no memory-safety preconditions; the group is the engine's
            // own (spawned with process_group(0)), so no other process is hit.
            unsafe {
                libc::killpg(self.pgid, signal);
            }
        }
    }

    fn record(&mut self, dir: &str, line: &str) {
        if let Some(t) = &mut self.transcript {
            let ms = self.started.elapsed().as_millis();
            let _ = writeln!(t, "{ms:>8} {dir} {}", truncate_line(line)).and_then(|_| t.flush());
        }
    }

    /// Sends one message.
    pub async fn send(&mut self, msg: &ToEngine) -> Result<(), EngineError> {
        self.send_raw(&msg.to_line()).await
    }

    /// Writes one line (a newline is added) to the engine's stdin.
    pub async fn send_raw(&mut self, line: &str) -> Result<(), EngineError> {
        self.record(">", line);
        let Some(stdin) = self.stdin.as_mut() else {
            return Err(self.gone().await);
        };
        let mut bytes = Vec::with_capacity(line.len() + 1);
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
        let write = async {
            stdin.write_all(&bytes).await?;
            stdin.flush().await
        };
        match timeout(self.settings.ping_timeout, write).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) if e.kind() == io::ErrorKind::BrokenPipe => {
                self.stdin = None;
                Err(self.gone().await)
            }
            Ok(Err(e)) => Err(EngineError::Io(e)),
            Err(_) => Err(EngineError::Stall {
                timeout: self.settings.ping_timeout,
            }),
        }
    }

    /// The error for an engine that stopped reading: its exit if it exits soon.
    async fn gone(&mut self) -> EngineError {
        match self.wait_exit(Duration::from_millis(500)).await {
            Some(st) => EngineError::Exited { exit: st.into() },
            None => EngineError::Io(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "the engine closed its input",
            )),
        }
    }

    /// Receives the next message, skipping (and recording) `log` lines, unknown message
    /// types and malformed `log`/`info` lines. Returns the message and its line.
    pub async fn recv_message(
        &mut self,
        limit: Duration,
    ) -> Result<(FromEngine, String), EngineError> {
        let end = Instant::now() + limit;
        loop {
            let line = self.recv_line_until(end).await.map_err(|e| match e {
                EngineError::Timeout { .. } => EngineError::Timeout { deadline: limit },
                e => e,
            })?;
            if let Some(msg) = self.parse(&line)? {
                return Ok((msg, line));
            }
        }
    }

    /// Receives the next raw line (blank lines skipped) within `limit`.
    pub async fn recv_line(&mut self, limit: Duration) -> Result<String, EngineError> {
        let end = Instant::now() + limit;
        self.recv_line_until(end).await.map_err(|e| match e {
            EngineError::Timeout { .. } => EngineError::Timeout { deadline: limit },
            e => e,
        })
    }

    /// Reads a line as a message; `Ok(None)` for lines that are recorded and ignored.
    fn parse(&mut self, line: &str) -> Result<Option<FromEngine>, EngineError> {
        match FromEngine::parse(line) {
            Ok(FromEngine::Log { level, message }) => {
                tracing::info!(engine = %self.name, level = %level, "{}", truncate_line(&message));
                self.note(level, line);
                Ok(None)
            }
            Ok(msg) => Ok(Some(msg)),
            Err(ParseError::UnknownType(kind)) => {
                tracing::info!(engine = %self.name, "ignored a message of unknown type {kind:?}");
                self.note("unknown".to_string(), line);
                Ok(None)
            }
            Err(ParseError::NotJson(error)) => Err(EngineError::NotJson {
                line: truncate_line(line),
                error,
            }),
            Err(ParseError::MissingType) => Err(EngineError::Malformed {
                kind: String::new(),
                line: truncate_line(line),
                error: "no string \"type\" field".to_string(),
            }),
            // `log` and `info` are never answered and change nothing: a bad one is
            // recorded and ignored, like an unknown message.
            Err(ParseError::Malformed { kind, error }) if kind == "log" || kind == "info" => {
                tracing::info!(engine = %self.name, "ignored a bad {kind:?} message: {error}");
                self.note(MALFORMED.to_string(), line);
                Ok(None)
            }
            Err(ParseError::Malformed { kind, error }) => Err(EngineError::Malformed {
                kind,
                line: truncate_line(line),
                error,
            }),
        }
    }

    fn note(&mut self, level: String, line: &str) {
        if self.notes.len() >= NOTES_KEPT {
            self.notes.pop_front();
        }
        self.notes.push_back(EngineNote {
            level,
            line: truncate_line(line),
        });
    }

    async fn recv_line_until(&mut self, end: Instant) -> Result<String, EngineError> {
        loop {
            if self.stdout_closed {
                return Err(match self.wait_exit(Duration::from_millis(500)).await {
                    Some(st) => EngineError::Exited { exit: st.into() },
                    None => EngineError::StdoutClosed,
                });
            }
            // Checked first, so that an engine flooding its output still times out.
            if Instant::now() >= end {
                return Err(EngineError::Timeout {
                    deadline: Duration::ZERO,
                });
            }
            let event = if let Some(ev) = self.pending.pop_front() {
                ev
            } else if let Some(st) = self.exit {
                // The child is gone: take what it wrote before exiting, briefly (its
                // children may hold the pipe open).
                match timeout(Duration::from_millis(100), self.lines.recv()).await {
                    Ok(Some(batch)) => {
                        self.pending.extend(batch);
                        continue;
                    }
                    Ok(None) | Err(_) => return Err(EngineError::Exited { exit: st.into() }),
                }
            } else {
                tokio::select! {
                    biased;
                    batch = self.lines.recv() => match batch {
                        Some(batch) => {
                            self.pending.extend(batch);
                            continue;
                        }
                        None => Event::Eof,
                    },
                    st = self.child.wait() => {
                        self.exit = Some(st?);
                        continue;
                    }
                    _ = sleep_until(end) => {
                        return Err(EngineError::Timeout { deadline: Duration::ZERO });
                    }
                }
            };
            match event {
                Event::Line(line) => {
                    self.record("<", &line);
                    if line.trim().is_empty() {
                        continue;
                    }
                    return Ok(line);
                }
                Event::TooLong { prefix } => {
                    self.record("<", &format!("{prefix}... (line too long)"));
                    return Err(EngineError::LineTooLong {
                        limit: self.settings.line_limit,
                        prefix,
                    });
                }
                Event::NotUtf8 { prefix } => {
                    self.record("<", &prefix);
                    return Err(EngineError::NotJson {
                        line: prefix,
                        error: "the line is not valid UTF-8".to_string(),
                    });
                }
                Event::Error(e) => return Err(EngineError::Io(e)),
                Event::Eof => self.stdout_closed = true,
            }
        }
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        if !self.stopped {
            self.signal_group(libc::SIGKILL);
            let _ = self.child.start_kill();
        }
        for task in &self.tasks {
            task.abort();
        }
    }
}

/// Checks an option value against its declaration.
pub fn validate_option(opt: &EngineOption, value: &serde_json::Value) -> Result<(), String> {
    match &opt.kind {
        OptionKind::Int { min, max, .. } => match value.as_i64() {
            Some(v) if (*min..=*max).contains(&v) => Ok(()),
            _ => Err(format!("expected an integer in {min}..={max}, got {value}")),
        },
        OptionKind::Bool { .. } => match value {
            serde_json::Value::Bool(_) => Ok(()),
            _ => Err(format!("expected true or false, got {value}")),
        },
        OptionKind::String { .. } => match value {
            serde_json::Value::String(_) => Ok(()),
            _ => Err(format!("expected a string, got {value}")),
        },
        OptionKind::Choice { values, .. } => match value.as_str() {
            Some(v) if values.iter().any(|c| c == v) => Ok(()),
            _ => Err(format!(
                "expected one of {}, got {value}",
                values.join(", ")
            )),
        },
    }
}

fn prefix_of(bytes: &[u8]) -> String {
    let end = bytes.len().min(DISPLAY_LIMIT);
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

/// Cuts stdout into lines of at most `limit` bytes. A longer line is reported once, as soon
/// as it passes the limit, and the rest of it is read and discarded. The lines of one read
/// are handed over together (a batch holds at most one read's worth plus one line).
async fn read_lines(mut out: ChildStdout, limit: usize, tx: mpsc::Sender<Vec<Event>>) {
    let mut buf = vec![0u8; 64 * 1024];
    let mut line: Vec<u8> = Vec::new();
    let mut discarding = false;
    loop {
        let n = match out.read(&mut buf).await {
            Ok(0) => {
                let mut batch = Vec::new();
                if !line.is_empty() && !discarding {
                    batch.push(finish_line(&mut line));
                }
                batch.push(Event::Eof);
                let _ = tx.send(batch).await;
                return;
            }
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                let _ = tx.send(vec![Event::Error(e)]).await;
                return;
            }
        };
        let mut batch = Vec::new();
        let mut chunk = &buf[..n];
        while !chunk.is_empty() {
            let newline = chunk.iter().position(|&b| b == b'\n');
            let piece = &chunk[..newline.unwrap_or(chunk.len())];
            if !discarding {
                if line.len() + piece.len() > limit {
                    line.extend_from_slice(&piece[..piece.len().min(DISPLAY_LIMIT)]);
                    let prefix = prefix_of(&line);
                    line = Vec::new();
                    discarding = true;
                    batch.push(Event::TooLong { prefix });
                } else {
                    line.extend_from_slice(piece);
                }
            }
            match newline {
                Some(i) => {
                    if !discarding {
                        batch.push(finish_line(&mut line));
                    }
                    line.clear();
                    discarding = false;
                    chunk = &chunk[i + 1..];
                }
                None => chunk = &[],
            }
        }
        if !batch.is_empty() && tx.send(batch).await.is_err() {
            return;
        }
    }
}

fn finish_line(line: &mut Vec<u8>) -> Event {
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    match String::from_utf8(std::mem::take(line)) {
        Ok(s) => Event::Line(s),
        Err(e) => Event::NotUtf8 {
            prefix: prefix_of(e.as_bytes()),
        },
    }
}

/// Reads stderr until it closes, keeping the first `cap` bytes in `log`.
async fn drain_stderr(mut err: ChildStderr, log: Option<std::fs::File>, cap: u64) {
    let mut log = log.map(tokio::fs::File::from_std);
    let mut buf = vec![0u8; 64 * 1024];
    let mut written = 0u64;
    loop {
        let n = match err.read(&mut buf).await {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        if let Some(file) = &mut log
            && written < cap
        {
            let take = (cap - written).min(n as u64) as usize;
            let mut ok = file.write_all(&buf[..take]).await.is_ok();
            written += take as u64;
            if ok && written >= cap {
                let note =
                    format!("\n[stderr log capped at {cap} bytes; the rest was discarded]\n");
                ok = file.write_all(note.as_bytes()).await.is_ok();
            }
            if !ok {
                log = None;
            }
        }
    }
    if let Some(file) = &mut log {
        let _ = file.flush().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_validated() {
        let int = EngineOption {
            name: "depth".into(),
            kind: OptionKind::Int {
                default: 3,
                min: 1,
                max: 9,
            },
        };
        assert!(validate_option(&int, &serde_json::json!(9)).is_ok());
        assert!(validate_option(&int, &serde_json::json!(10)).is_err());
        assert!(validate_option(&int, &serde_json::json!("3")).is_err());
        let choice = EngineOption {
            name: "style".into(),
            kind: OptionKind::Choice {
                default: "a".into(),
                values: vec!["a".into(), "b".into()],
            },
        };
        assert!(validate_option(&choice, &serde_json::json!("b")).is_ok());
        assert!(validate_option(&choice, &serde_json::json!("c")).is_err());
    }

    #[test]
    fn long_lines_are_truncated_for_display() {
        let s = "é".repeat(300);
        let t = truncate_line(&s);
        assert!(t.len() < 250 && t.ends_with("(600 bytes)"), "{t}");
    }
}
