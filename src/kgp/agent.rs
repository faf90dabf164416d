//! A KGP agent as one side of kalaha's games: kalaha is the KGP server. It listens on a
//! free port of the loopback interface, starts the agent's program (isolated, with its
//! limits, like every engine: [`crate::supervisor`]) with `KGP_HOST` and `KGP_PORT` set,
//! accepts its one connection and plays `freeplay`:
//!
//! ```text
//! kalaha                                   agent
//!   kgp 1 0 0                 ->
//!                             <-           1 set "info:name" "my agent"   (any hints)
//!                             <-           3 mode freeplay
//!   2@3 ok                    ->
//!   4 ping                    ->
//!                             <-           5@4 pong
//!   ---- for each game: ----
//!   6 set game:id "t-1"       ->
//!   8 ping                    ->           (pong)
//!   ---- for each move: ----
//!   10 state <6,0,0,4,...>    ->
//!                             <-           11@10 move 3
//!                             <-           13@10 move 4      (each improving the last)
//!                             <-           15@10 yield        (or kalaha's time runs out)
//!   12@10 stop                ->
//!   ---- at the end: ----
//!   goodbye                   ->
//! ```
//!
//! The move is the last `move` received when the agent yields or when the time for the
//! move runs out (then kalaha sends `stop`); with no move by the deadline the agent loses
//! on time. Moves that come after `stop` are ignored, as KGP says. The agent's stdout and
//! stderr go to its log; with `--debug` every KGP line is kept in a transcript.

use super::command::{Arg, Command, VERSION, board_of};
use super::error::KgpError;
use crate::record::{Fault, SearchInfo, SideResult, Termination, TimeLimit, clean_text};
use crate::referee::Reply;
use crate::rules::{Move, Position, Rules, Side};
use crate::supervisor::lines::LineBuffer;
use crate::supervisor::{EngineCommand, Process, Settings, Stopped, Transcript};
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::time::{Instant, timeout};

mod launch;
mod wire;

pub use launch::Launch;

/// Bytes read from the connection at a time.
const READ_CHUNK: usize = 64 * 1024;

/// Bytes of unrequested output judged before a request.
const UNREQUESTED_READ: usize = 1 << 20;

/// The shortest time a `state` is given before `stop`, even on an exhausted clock.
const MIN_STATE_TIME: Duration = Duration::from_millis(10);

/// What the agent said about itself with `set info:...`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AgentInfo {
    /// `info:name` (empty when not given).
    pub name: String,
    /// `info:authors` (or `info:author`).
    pub authors: String,
    /// `info:description`.
    pub description: String,
}

/// The agent's connection: lines in, lines out.
struct Connection {
    reader: OwnedReadHalf,
    writer: OwnedWriteHalf,
    lines: LineBuffer,
    buf: Box<[u8]>,
    eof: bool,
}

/// What a line from the agent amounts to, once judged.
enum Heard {
    /// A `move` for the state in progress, with its pit as sent.
    Move(i64),
    /// A `yield` for the state in progress.
    Yield,
    /// A `pong`, with its reference.
    Pong(Option<u64>),
    /// A `mode`, with the activity asked for.
    Mode(String),
    /// Nothing that changes anything (hints, notes, late moves, unknown commands).
    Other,
}

/// A running KGP agent.
pub struct KgpEngine {
    process: Process,
    conn: Connection,
    address: SocketAddr,
    settings: Settings,
    transcript: Option<Transcript>,
    info: AgentInfo,
    /// The next id kalaha gives a command (even numbers, as the reference server does).
    next_id: u64,
    /// The `state` in progress, if any.
    current: Option<u64>,
    /// `move`s and `yield`s that came after their state was stopped.
    late: u64,
    /// The last `time:mode` sent.
    time_mode: Option<&'static str>,
    program: String,
}

/// `cmd` with `{host}` and `{port}` replaced in its arguments and `KGP_HOST`/`KGP_PORT`
/// added to its environment.
pub fn agent_command(cmd: &EngineCommand, address: SocketAddr) -> EngineCommand {
    let (host, port) = (address.ip().to_string(), address.port().to_string());
    let mut out = cmd.clone();
    out.args = cmd
        .args
        .iter()
        .map(|a| a.replace("{host}", &host).replace("{port}", &port))
        .collect();
    out.env.push(("KGP_HOST".to_string(), host));
    out.env.push(("KGP_PORT".to_string(), port));
    out
}

/// How long a `state` runs before kalaha sends `stop`: the whole move time, or on a game
/// clock a slice of the remaining time plus most of the increment
/// ([`TimeLimit::budget`]); never past `deadline`.
pub fn state_time(time: TimeLimit, deadline: Duration) -> Duration {
    let want = match time {
        TimeLimit::MoveTime(t) => t,
        TimeLimit::Clock { .. } => time.budget(),
    };
    want.max(MIN_STATE_TIME).min(deadline)
}

impl KgpEngine {
    /// Listens, starts the agent, accepts its connection and plays the handshake
    /// (`kgp`, `mode freeplay`, a `ping`), all within the start-up timeout.
    pub async fn start(cmd: &EngineCommand, settings: &Settings) -> Result<KgpEngine, KgpError> {
        let end = Instant::now() + settings.startup_timeout;
        let mut agent = Launch::spawn(cmd, settings).await?.accept(end).await?;
        let ready = match agent.handshake(end).await {
            Ok(()) => agent.ping().await.map(|_| ()),
            Err(e) => Err(e),
        };
        match ready {
            Ok(()) => Ok(agent),
            Err(e) => {
                agent.shutdown().await;
                Err(e)
            }
        }
    }

    /// Moves this instance's log and transcript to `stem.N.log` and `stem.N.transcript`
    /// (when the agent's name is settled after its `set info:name`).
    pub fn rename_logs(&mut self, stem: &str) -> std::io::Result<()> {
        crate::supervisor::rename_logs(&self.process, self.transcript.as_mut(), stem)
    }

    /// What the agent said about itself.
    pub fn info(&self) -> &AgentInfo {
        &self.info
    }

    /// The process id, which is also the agent's process group.
    pub fn pid(&self) -> i32 {
        self.process.pid()
    }

    /// The address the agent connected to.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// How many `move`s and `yield`s came after their state was stopped (they are
    /// ignored).
    pub fn late_commands(&self) -> u64 {
        self.late
    }

    /// The agent's log file, if it has one.
    pub fn log_path(&self) -> Option<&std::path::Path> {
        self.process.log().path()
    }

    /// `kgp 1 0 0`, then the agent's `mode` by `end` (the hints before it are kept), and
    /// `ok`.
    pub async fn handshake(&mut self, end: Instant) -> Result<(), KgpError> {
        let [major, minor, patch] = VERSION.map(|v| Arg::Int(v as i64));
        // The version command carries no id.
        self.send_command(Command::new("kgp").arg(major).arg(minor).arg(patch))
            .await?;
        // An `error` from the agent (e.g. about the version) is shown if no `mode` comes.
        let mut said = String::new();
        let mode_id = loop {
            let Some(line) = self.read_line(end, "kalaha waited for `mode`").await? else {
                return Err(KgpError::NoMode {
                    timeout: self.settings.startup_timeout,
                    said,
                });
            };
            if said.is_empty() && Command::parse(&line).is_ok_and(|c| c.name == "error") {
                said = format!("; the agent said: {}", crate::record::truncate(&line, 200));
            }
            if let Heard::Mode(mode) = self.hear(&line).await? {
                let id = Command::parse(&line).ok().and_then(|c| c.id);
                if mode != "freeplay" {
                    let why = format!("unsupported mode {mode:?}: kalaha plays only freeplay");
                    let mut error = Command::new("error").arg(Arg::string(why));
                    error.reference = id;
                    let _ = self.send(error).await;
                    let _ = self.send_command(Command::new("goodbye")).await;
                    return Err(KgpError::UnsupportedMode { mode, line });
                }
                break id;
            }
        };
        let mut ok = Command::new("ok");
        ok.reference = mode_id;
        self.send(ok).await.map(|_| ())
    }

    /// Sends `ping` and waits for a `pong` (with no reference, or referring to the ping)
    /// within the ping timeout.
    pub async fn ping(&mut self) -> Result<Duration, KgpError> {
        self.check_unrequested().await?;
        let id = self.send(Command::new("ping")).await?;
        let t = Instant::now();
        let limit = self.settings.ping_timeout;
        let end = t + limit;
        loop {
            let Some(line) = self.read_line(end, "kalaha waited for `pong`").await? else {
                return Err(KgpError::Stall { timeout: limit });
            };
            if let Heard::Pong(r) = self.hear(&line).await?
                && r.is_none_or(|r| r == id)
            {
                return Ok(t.elapsed());
            }
        }
    }

    /// Starts a game: `set game:id`, then a `ping` as the readiness barrier.
    pub async fn new_game(&mut self, game: &str) -> Result<(), KgpError> {
        self.check_unrequested().await?;
        let set = Command::new("set")
            .arg(Arg::Word("game:id".into()))
            .arg(Arg::string(game));
        self.send(set).await?;
        self.ping().await.map(|_| ())
    }

    /// Sends `pos` as a `state` (the mover as south) and collects `move`s until the agent
    /// yields or the time for the move runs out, then sends `stop`. The pit is not
    /// checked: that is the referee's part.
    pub async fn go(
        &mut self,
        pos: &Position,
        time: TimeLimit,
        deadline: Duration,
    ) -> Result<Reply, KgpError> {
        self.check_unrequested().await?;
        self.time_hints(time).await?;
        let state = Command::new("state").arg(board_of(pos));
        let id = self.send(state).await?;
        let start = Instant::now();
        self.current = Some(id);
        let result = self
            .collect_moves(start, state_time(time, deadline), deadline)
            .await;
        self.current = None;
        // As the reference server does, `stop` follows every state, also after `yield`.
        if !self.conn.eof {
            let sent = self.send(Command::new("stop").with_ref(id)).await;
            if result.is_ok() {
                sent?;
            }
        }
        result
    }

    async fn collect_moves(
        &mut self,
        start: Instant,
        stop_after: Duration,
        deadline: Duration,
    ) -> Result<Reply, KgpError> {
        let cap = self.settings.info_cap;
        let mut infos: VecDeque<SearchInfo> = VecDeque::new();
        let mut dropped = 0u64;
        let mut last: Option<(i64, String)> = None;
        let mut in_margin = false;
        // The time the move took: the time given when kalaha stops the search; the time of
        // the `yield`, or of a first move in the margin, when the agent ends it.
        let ((pit, line), elapsed) = loop {
            let end = start + if in_margin { deadline } else { stop_after };
            let line = match self.read_line(end, "it had a state to move in").await? {
                Some(line) => line,
                None => match last.take() {
                    Some(m) => break (m, stop_after),
                    None if in_margin || stop_after >= deadline => {
                        return Err(KgpError::Timeout { deadline });
                    }
                    // No move when the time ran out: the margin is the last chance.
                    None => {
                        in_margin = true;
                        continue;
                    }
                },
            };
            match self.hear(&line).await? {
                Heard::Move(pit) => {
                    let at = start.elapsed();
                    // Each move is kept as a report of the search: the move so far.
                    if let Ok(p) = u8::try_from(pit) {
                        if cap == 0 {
                            dropped += 1;
                        } else {
                            if infos.len() >= cap {
                                infos.pop_front();
                                dropped += 1;
                            }
                            infos.push_back(SearchInfo {
                                time_ms: Some(at.as_millis() as u64),
                                pv: vec![p],
                                ..SearchInfo::default()
                            });
                        }
                    }
                    if in_margin {
                        break ((pit, line), at);
                    }
                    last = Some((pit, line));
                }
                Heard::Yield => match last.take() {
                    Some(m) => break (m, start.elapsed()),
                    None => return Err(KgpError::YieldWithoutMove { line }),
                },
                Heard::Pong(_) | Heard::Mode(_) | Heard::Other => {}
            }
        };
        Ok(Reply {
            pit,
            line,
            infos: infos.into(),
            infos_dropped: dropped,
            elapsed,
        })
    }

    /// `set time:mode` when it changes, and on a game clock both clocks in whole seconds.
    async fn time_hints(&mut self, time: TimeLimit) -> Result<(), KgpError> {
        let mode = match time {
            TimeLimit::MoveTime(_) => "relative",
            TimeLimit::Clock { .. } => "absolute",
        };
        if self.time_mode != Some(mode) {
            // Quoted: jkgp reads the mode as a string (a word parser takes it too).
            let set = Command::new("set")
                .arg(Arg::Word("time:mode".into()))
                .arg(Arg::string(mode));
            self.send(set).await?;
            self.time_mode = Some(mode);
        }
        if let TimeLimit::Clock {
            remaining,
            opponent_remaining,
            ..
        } = time
        {
            let secs = |d: Duration| Arg::Int(d.as_secs().min(i64::MAX as u64) as i64);
            let set = Command::new("set")
                .arg(Arg::Word("time:clock".into()))
                .arg(secs(remaining));
            self.send(set).await?;
            if let Some(o) = opponent_remaining {
                let set = Command::new("set")
                    .arg(Arg::Word("time:opclock".into()))
                    .arg(secs(o));
                self.send(set).await?;
            }
        }
        Ok(())
    }

    /// The end of a game: KGP has no message for it; what the agent sent since its last
    /// move is judged.
    pub async fn game_over(&mut self) -> Result<(), KgpError> {
        self.check_unrequested().await
    }

    /// Sends `goodbye` and waits at most `grace` for the agent to close its connection
    /// (reading and judging what it still sends). Returns whether it closed it.
    pub async fn goodbye(&mut self, grace: Duration) -> Result<bool, KgpError> {
        self.send_command(Command::new("goodbye")).await?;
        let end = Instant::now() + grace;
        loop {
            match self.read_line(end, "kalaha said goodbye").await {
                Ok(Some(line)) => {
                    self.hear(&line).await?;
                }
                Ok(None) => return Ok(false),
                Err(KgpError::Disconnected { .. } | KgpError::Process(_)) => return Ok(true),
                Err(e) => return Err(e),
            }
        }
    }

    /// Ends the agent: `goodbye` and the end of the connection, the quit grace, SIGTERM to
    /// the process group, the term grace, SIGKILL; reaps the process and kills whatever
    /// else is left in its group. Never fails.
    pub async fn shutdown(mut self) -> Stopped {
        if !self.conn.eof && !self.process.has_exited() {
            let line = Command::new("goodbye").to_line();
            self.record(">", &line);
            let _ = timeout(
                self.settings.quit_grace,
                self.conn.writer.write_all(format!("{line}\r\n").as_bytes()),
            )
            .await;
            let _ = timeout(self.settings.quit_grace, self.conn.writer.shutdown()).await;
        }
        let stopped = stop_process(&mut self.process, &self.settings).await;
        if let Some(t) = &mut self.transcript {
            t.flush();
        }
        tracing::debug!(agent = %self.program, "stopped: {stopped:?}");
        stopped
    }

    /// Judges one line from the agent: a fault, or what it amounts to. Hints are kept,
    /// notes go to the log, a `ping` from the agent is answered.
    async fn hear(&mut self, line: &str) -> Result<Heard, KgpError> {
        let cmd = Command::parse(line).map_err(|e| KgpError::NotKgp {
            line: line.to_string(),
            error: e.to_string(),
        })?;
        let malformed = |error: &str| KgpError::Malformed {
            command: cmd.name.clone(),
            line: line.to_string(),
            error: error.to_string(),
        };
        Ok(match cmd.name.as_str() {
            "move" | "yield" => {
                if !self.for_current_state(&cmd, line)? {
                    self.late += 1;
                    self.note("late", line);
                    return Ok(Heard::Other);
                }
                if cmd.name == "yield" {
                    Heard::Yield
                } else {
                    match cmd.args.as_slice() {
                        [Arg::Int(pit)] => Heard::Move(*pit),
                        _ => return Err(malformed("expected one integer: the pit, from 1")),
                    }
                }
            }
            "pong" => Heard::Pong(cmd.reference),
            "mode" => match cmd.args.as_slice() {
                [a] if a.text().is_some() => Heard::Mode(a.text().unwrap_or_default().into()),
                _ => return Err(malformed("expected one word: the activity, e.g. freeplay")),
            },
            "set" => {
                self.hint(&cmd, line);
                Heard::Other
            }
            "ping" => {
                let mut pong = Command::new("pong");
                pong.reference = cmd.id;
                self.send(pong).await?;
                Heard::Other
            }
            "error" => {
                self.note("error", line);
                Heard::Other
            }
            _ => {
                self.note(&cmd.name, line);
                Heard::Other
            }
        })
    }

    /// Whether a `move` or `yield` is for the state in progress: with its reference, or
    /// without one while a state is in progress. A reference to an earlier command (a
    /// stopped state) makes it late; to an id kalaha never sent, a fault.
    fn for_current_state(&self, cmd: &Command, line: &str) -> Result<bool, KgpError> {
        match (cmd.reference, self.current) {
            (Some(r), Some(c)) if r == c => Ok(true),
            (Some(r), _) if r < self.next_id => Ok(false),
            (Some(r), _) => Err(KgpError::UnknownReference {
                command: cmd.name.clone(),
                reference: r,
                line: line.to_string(),
            }),
            (None, current) => Ok(current.is_some()),
        }
    }

    /// Keeps what a `set` says about the agent; other options are noted.
    fn hint(&mut self, cmd: &Command, line: &str) {
        let key = cmd.args.first().and_then(Arg::text).unwrap_or_default();
        let value = match cmd.args.get(1) {
            Some(a) => a.text().map_or_else(|| a.to_string(), str::to_string),
            None => String::new(),
        };
        match key {
            "info:name" => self.info.name = value,
            "info:authors" | "info:author" => self.info.authors = value,
            "info:description" => self.info.description = value,
            _ => self.note("set", line),
        }
    }

    /// Writes a note in the agent's log.
    fn note(&self, level: &str, text: &str) {
        let shown = clean_text(text);
        self.process.log().note(&format!("[{level}] {shown}"));
        tracing::debug!(agent = %self.program, "{level}: {shown}");
    }
}

/// The staged end of the agent's process: the quit grace, SIGTERM to its group, the term
/// grace, SIGKILL; then whatever is left in the group is killed.
async fn stop_process(process: &mut Process, settings: &Settings) -> Stopped {
    let stopped = if let Some(st) = process.wait_exit(settings.quit_grace).await {
        Stopped::Exited(st.into())
    } else {
        process.signal_group(libc::SIGTERM);
        if process.wait_exit(settings.term_grace).await.is_some() {
            Stopped::Terminated
        } else {
            process.kill_and_reap().await;
            Stopped::Killed
        }
    };
    process.finish().await;
    stopped
}

/// The agent as one side of a game: every error becomes the agent's fault.
impl crate::referee::Contestant for KgpEngine {
    async fn new_game(
        &mut self,
        game: &str,
        _rules: Rules,
        _start: Option<&Position>,
        _side: Side,
    ) -> Result<(), Fault> {
        KgpEngine::new_game(self, game).await.map_err(|e| e.fault())
    }

    async fn go(
        &mut self,
        pos: &Position,
        _moves: &[Move],
        time: TimeLimit,
        deadline: Duration,
    ) -> Result<Reply, Fault> {
        KgpEngine::go(self, pos, time, deadline)
            .await
            .map_err(|e| e.fault())
    }

    async fn game_over(
        &mut self,
        _game: &str,
        _result: SideResult,
        _south: u16,
        _north: u16,
        _termination: Termination,
    ) -> Result<(), Fault> {
        KgpEngine::game_over(self).await.map_err(|e| e.fault())
    }
}
