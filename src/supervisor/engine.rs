//! The requests of `protocol.md` on top of a [`Process`]: the handshake, options, pings,
//! games and moves, each with its deadline, and the staged shutdown.
//!
//! Before every request, lines the engine sent when nothing was asked are read and judged:
//! `log` and `info` lines, unknown message types and malformed `log`/`info` are noted; a
//! `move`, `pong` or `hello` nobody asked for is a protocol fault of the engine at once, so
//! it can never be taken as the answer to a later request. While an answer to `hello` or
//! `ping` is awaited, `info` lines are noted the same way; during a `go` they are the
//! search's and go into the move's record.

use super::error::{EngineError, Stopped};
use super::lines::{BadLine, LineEvent};
use super::log::EngineLog;
use super::process::Process;
use super::transcript::Transcript;
use super::{EngineCommand, Settings};
use crate::protocol::{FromEngine, HelloReply, PROTOCOL_VERSION, ParseError, ToEngine};
use crate::record::{SearchInfo, SideResult, Termination, TimeLimit};
use crate::referee::Reply;
use crate::rules::{Move, Position, Rules, Side};
use std::collections::VecDeque;

use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

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

/// Notes kept in memory (the log file has them all).
const NOTES_KEPT: usize = 100;

/// Bytes of unrequested output read before a request.
const UNREQUESTED_READ: usize = 1 << 20;

/// A running engine.
pub struct Engine {
    process: Process,
    name: String,
    hello: HelloReply,
    hello_line: String,
    settings: Settings,
    transcript: Option<Transcript>,
    notes: VecDeque<EngineNote>,
    next_ping: u64,
}

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

    /// Spawns the engine without any handshake (inside a tokio runtime).
    pub fn spawn(cmd: &EngineCommand, settings: &Settings) -> Result<Engine, EngineError> {
        let log = Arc::new(EngineLog::open(settings.logs.as_ref()));
        let transcript = match (&settings.logs, settings.transcript) {
            (Some(place), true) => Transcript::create(place),
            _ => None,
        };
        let process = Process::spawn(cmd, settings, log)?;
        let name = cmd
            .program
            .file_name()
            .map_or_else(|| cmd.display(), |n| n.to_string_lossy().into_owned());
        tracing::debug!(engine = %name, pid = process.pid(), "spawned {}", cmd.display());
        Ok(Engine {
            process,
            name,
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
            notes: VecDeque::new(),
            next_ping: 1,
        })
    }

    /// Moves this instance's log and transcript to `stem.N.log` and `stem.N.transcript`
    /// (when the engine's name is settled after its `hello`, so they are found under it).
    pub fn rename_logs(&mut self, stem: &str) -> std::io::Result<()> {
        rename_logs(&self.process, self.transcript.as_mut(), stem)
    }

    /// The engine's `hello` (empty before the handshake).
    pub fn hello(&self) -> &HelloReply {
        &self.hello
    }

    /// The engine's `hello` line as received (empty before the handshake).
    pub fn hello_line(&self) -> &str {
        &self.hello_line
    }

    /// The process id, which is also the engine's process group.
    pub fn pid(&self) -> i32 {
        self.process.pid()
    }

    /// The engine's log file, if it has one.
    pub fn log_path(&self) -> Option<&std::path::Path> {
        self.process.log().path()
    }

    /// The `log` messages, unknown messages and malformed `log`/`info` messages received
    /// so far (the latest ones).
    pub fn take_notes(&mut self) -> Vec<EngineNote> {
        self.notes.drain(..).collect()
    }

    /// Sends `hello` and waits for the engine's `hello` within the start-up timeout.
    pub async fn handshake(&mut self) -> Result<&HelloReply, EngineError> {
        self.send(&ToEngine::Hello {
            protocol: PROTOCOL_VERSION,
        })
        .await?;
        let limit = self.settings.startup_timeout;
        let (msg, line) = match self.recv_message(limit).await {
            Ok(m) => m,
            Err(EngineError::Timeout { .. }) => {
                return Err(EngineError::HandshakeTimeout {
                    timeout: limit,
                    hint: self.silence_hint(),
                });
            }
            Err(e) => return Err(e),
        };
        match msg {
            FromEngine::Hello(h) if h.protocol == PROTOCOL_VERSION => {
                self.hello = h;
                self.hello_line = line;
                Ok(&self.hello)
            }
            FromEngine::Hello(h) => Err(EngineError::Protocol {
                got: h.protocol,
                line,
            }),
            _ => Err(EngineError::WrongMessage {
                expected: "hello",
                line,
            }),
        }
    }

    /// What to tell the author of an engine that never answered `hello`.
    fn silence_hint(&self) -> String {
        let mut hint = String::from(
            ": an engine must answer {\"type\":\"hello\",...} on one line and flush its \
             output after every line (Python: print(..., flush=True))",
        );
        let tail = self.process.log().tail();
        if !tail.is_empty() {
            hint.push_str("; its stderr: ");
            hint.push_str(&tail.join(" | "));
        }
        hint
    }

    /// Sets an option the engine declared, after checking the value against the
    /// declaration. The engine does not answer; the next `ping` is the barrier.
    pub async fn set_option(
        &mut self,
        name: &str,
        value: serde_json::Value,
    ) -> Result<(), EngineError> {
        let bad = |reason: String| EngineError::BadOption {
            name: name.to_string(),
            reason,
        };
        let opt = crate::protocol::find_option(&self.hello.options, name).map_err(bad)?;
        opt.validate(&value).map_err(bad)?;
        self.request(&ToEngine::Option {
            name: name.to_string(),
            value,
        })
        .await
    }

    /// Sends `ping` and waits for the matching `pong` within the ping timeout.
    pub async fn ping(&mut self) -> Result<Duration, EngineError> {
        let id = self.next_ping;
        self.next_ping += 1;
        self.request(&ToEngine::Ping { id }).await?;
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
                line,
            }),
        }
    }

    /// Starts a game: sends `new_game` (with `start` when the game does not start from
    /// the rules' start position), then waits for the engine with a ping.
    pub async fn new_game(
        &mut self,
        game: &str,
        rules: Rules,
        start: Option<&Position>,
        side: Side,
    ) -> Result<(), EngineError> {
        self.request(&ToEngine::NewGame {
            game: game.to_string(),
            rules,
            start: start.map(Position::view),
            side,
        })
        .await?;
        self.ping().await.map(|_| ())
    }

    /// Asks for a move in `pos` (after `moves`, the whole game so far) and waits for it at
    /// most `deadline` from the moment the `go` line is written. `info` lines are
    /// collected. The pit is not checked: that is the referee's part.
    pub async fn go(
        &mut self,
        pos: &Position,
        moves: &[Move],
        time: TimeLimit,
        deadline: Duration,
    ) -> Result<Reply, EngineError> {
        self.request(&ToEngine::Go {
            position: pos.view(),
            legal: pos.legal_moves().collect(),
            moves: moves.to_vec(),
            time,
        })
        .await?;
        let start = Instant::now();
        let end = start + deadline;
        let cap = self.settings.info_cap;
        let mut infos: VecDeque<SearchInfo> = VecDeque::new();
        let mut dropped = 0u64;
        loop {
            let line = self.recv_line_until(end).await.map_err(|e| match e {
                EngineError::Timeout { .. } => EngineError::Timeout { deadline },
                e => e,
            })?;
            match self.parse(&line)? {
                None => {}
                Some(FromEngine::Info(info)) => {
                    if cap == 0 {
                        dropped += 1;
                    } else {
                        if infos.len() >= cap {
                            infos.pop_front();
                            dropped += 1;
                        }
                        infos.push_back(info);
                    }
                }
                Some(FromEngine::Move { pit }) => {
                    return Ok(Reply {
                        pit,
                        line,
                        infos: infos.into(),
                        infos_dropped: dropped,
                        elapsed: start.elapsed(),
                    });
                }
                Some(_) => {
                    return Err(EngineError::WrongMessage {
                        expected: "info or move",
                        line,
                    });
                }
            }
        }
    }

    /// Between two games: the engine has not exited, sent nothing unasked since its last
    /// answer, and answers a ping. Notes (`log`, `info`) are kept as always.
    pub async fn between_games(&mut self) -> Result<(), EngineError> {
        if self.process.has_exited() {
            let st = self
                .process
                .wait_exit(Duration::ZERO)
                .await
                .expect("it has exited");
            return Err(self.process.exited(st).await);
        }
        self.ping().await?;
        // What came unasked with the pong (a second pong, a stray move) is the engine's
        // fault between games, not one of the next game.
        self.check_unrequested()
    }

    /// Writes `text` in the engine's log, cleaned (it may quote the engine's own lines).
    pub fn log_note(&self, text: &str) {
        self.process.log().note(&crate::record::clean_text(text));
    }

    /// Tells the engine the game is over (no answer expected).
    pub async fn game_over(
        &mut self,
        game: &str,
        result: SideResult,
        south: u16,
        north: u16,
        termination: Termination,
    ) -> Result<(), EngineError> {
        self.request(&ToEngine::GameOver {
            game: game.to_string(),
            result,
            south,
            north,
            termination,
        })
        .await
    }

    /// Ends the engine: `quit`, the quit grace, SIGTERM to the process group, the term
    /// grace, SIGKILL to the group; reaps the process, and kills whatever else is left in
    /// the group. Never fails.
    pub async fn shutdown(mut self) -> Stopped {
        if !self.process.has_exited() {
            let quit = ToEngine::Quit.to_line();
            self.record(">", &quit);
            let _ = self
                .process
                .write_line(&quit, self.settings.quit_grace)
                .await;
        }
        // Closing stdin is a second, universal way of saying quit.
        self.process.close_stdin();
        let stopped = if let Some(st) = self.process.wait_exit(self.settings.quit_grace).await {
            Stopped::Exited(st.into())
        } else {
            self.process.signal_group(libc::SIGTERM);
            if self
                .process
                .wait_exit(self.settings.term_grace)
                .await
                .is_some()
            {
                Stopped::Terminated
            } else {
                self.process.kill_and_reap().await;
                Stopped::Killed
            }
        };
        self.process.finish().await;
        if let Some(t) = &mut self.transcript {
            t.flush();
        }
        tracing::debug!(engine = %self.name, "stopped: {stopped:?}");
        stopped
    }

    fn record(&mut self, dir: &str, line: &str) {
        if let Some(t) = &mut self.transcript {
            t.record(dir, line);
        }
    }

    /// Sends a request after judging what the engine sent unasked.
    async fn request(&mut self, msg: &ToEngine) -> Result<(), EngineError> {
        self.check_unrequested()?;
        self.send(msg).await
    }

    /// Reads what the engine sent since its last answer: notes are kept, an unrequested
    /// answer is a fault.
    fn check_unrequested(&mut self) -> Result<(), EngineError> {
        self.process.read_now(UNREQUESTED_READ)?;
        while let Some(event) = self.process.take_ready() {
            let line = self.event_line(event)?;
            if line.trim().is_empty() {
                continue;
            }
            match self.parse(&line)? {
                None => {}
                Some(FromEngine::Info(_)) => self.note("info".to_string(), &line),
                Some(m) => {
                    return Err(EngineError::Unrequested {
                        kind: m.kind(),
                        line,
                    });
                }
            }
        }
        Ok(())
    }

    /// Sends one message (without judging unrequested lines: for the checker).
    pub async fn send(&mut self, msg: &ToEngine) -> Result<(), EngineError> {
        self.send_raw(&msg.to_line()).await
    }

    /// Writes one line (a newline is added) to the engine's stdin.
    pub async fn send_raw(&mut self, line: &str) -> Result<(), EngineError> {
        self.record(">", line);
        self.process
            .write_line(line, self.settings.ping_timeout)
            .await
    }

    /// Receives the next message but `info`, skipping (and recording) `log` and `info`
    /// lines, unknown message types and malformed `log`/`info` lines: the answer to a
    /// `hello` or a `ping`, before which an `info` is a note as it is outside a search.
    /// Returns the message and its line.
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
            match self.parse(&line)? {
                None => {}
                Some(FromEngine::Info(_)) => self.note("info".to_string(), &line),
                Some(msg) => return Ok((msg, line)),
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

    async fn recv_line_until(&mut self, end: Instant) -> Result<String, EngineError> {
        loop {
            let event = self.process.next_line(end).await?;
            let line = self.event_line(event)?;
            if !line.trim().is_empty() {
                return Ok(line);
            }
        }
    }

    /// A framed line as text, or the fault of a line that cannot be one.
    fn event_line(&mut self, event: LineEvent) -> Result<String, EngineError> {
        let limit = self.settings.line_limit;
        match event.into_text(|text| self.record("<", text)) {
            Ok(line) => Ok(line),
            Err(BadLine::TooLong { prefix }) => Err(EngineError::LineTooLong { limit, prefix }),
            // The lines that are never a fault (protocol.md: `log`, `info` and unknown
            // types, malformed or not) have their invalid bytes replaced. Every other
            // line must be UTF-8.
            Err(BadLine::NotUtf8 { lossy, .. }) if never_a_fault(&lossy) => Ok(lossy),
            Err(BadLine::NotUtf8 { prefix, .. }) => Err(EngineError::NotJson {
                line: prefix,
                error: "the line is not valid UTF-8".to_string(),
            }),
        }
    }

    /// Reads a line as a message; `Ok(None)` for lines that are recorded and ignored.
    fn parse(&mut self, line: &str) -> Result<Option<FromEngine>, EngineError> {
        match FromEngine::parse(line) {
            Ok(FromEngine::Log { level, message }) => {
                self.note(level, &message);
                Ok(None)
            }
            Ok(msg) => Ok(Some(msg)),
            Err(ParseError::UnknownType(_)) => {
                self.note("unknown".to_string(), line);
                Ok(None)
            }
            Err(ParseError::NotJson(error)) => Err(EngineError::NotJson {
                line: line.to_string(),
                error,
            }),
            Err(ParseError::MissingType) => Err(EngineError::Malformed {
                kind: String::new(),
                line: line.to_string(),
                error: "no string \"type\" field".to_string(),
            }),
            // `log` and `info` are never answered and change nothing: a bad one is
            // recorded and ignored, like an unknown message.
            Err(ParseError::Malformed { kind, .. }) if kind == "log" || kind == "info" => {
                self.note(MALFORMED.to_string(), line);
                Ok(None)
            }
            Err(ParseError::Malformed { kind, error }) => Err(EngineError::Malformed {
                kind,
                line: line.to_string(),
                error,
            }),
        }
    }

    /// Keeps a note in memory and in the engine's log, cut to
    /// [`crate::record::MAX_SHOWN_LINE`] bytes.
    fn note(&mut self, level: String, text: &str) {
        // The level is the engine's text too: cleaned before it reaches a log or a terminal.
        let level = crate::record::clean_text(&crate::record::truncate(&level, 40)).into_owned();
        let text = &crate::record::truncate(text, crate::record::MAX_SHOWN_LINE);
        let shown = crate::record::clean_text(text);
        self.process.log().note(&format!("[{level}] {shown}"));
        tracing::debug!(engine = %self.name, "{level}: {shown}");
        if self.notes.len() >= NOTES_KEPT {
            self.notes.pop_front();
        }
        self.notes.push_back(EngineNote {
            level,
            line: text.to_string(),
        });
    }
}

/// The engine as one side of a game: every error becomes the engine's fault.
impl crate::referee::Contestant for Engine {
    async fn new_game(
        &mut self,
        game: &str,
        rules: Rules,
        start: Option<&Position>,
        side: Side,
    ) -> Result<(), crate::record::Fault> {
        Engine::new_game(self, game, rules, start, side)
            .await
            .map_err(|e| e.fault())
    }

    async fn go(
        &mut self,
        pos: &Position,
        moves: &[Move],
        time: TimeLimit,
        deadline: Duration,
    ) -> Result<Reply, crate::record::Fault> {
        Engine::go(self, pos, moves, time, deadline)
            .await
            .map_err(|e| e.fault())
    }

    async fn game_over(
        &mut self,
        game: &str,
        result: SideResult,
        south: u16,
        north: u16,
        termination: Termination,
    ) -> Result<(), crate::record::Fault> {
        Engine::game_over(self, game, result, south, north, termination)
            .await
            .map_err(|e| e.fault())
    }

    async fn between_games(&mut self) -> Result<(), String> {
        match Engine::between_games(self).await {
            Ok(()) => Ok(()),
            Err(e) => {
                let why = e.fault().detail;
                self.log_note(&format!(
                    "[kalaha] between two games: {why}; this instance is stopped and another \
                     plays the next game (no game is charged)"
                ));
                Err(why)
            }
        }
    }
}

/// Moves an engine instance's log, and its transcript if any, to `stem.N.log` and
/// `stem.N.transcript` (for either protocol, once the engine's name is settled).
pub fn rename_logs(
    process: &Process,
    transcript: Option<&mut Transcript>,
    stem: &str,
) -> std::io::Result<()> {
    process.log().rename(stem)?;
    if let Some(t) = transcript {
        t.rename(stem)?;
    }
    Ok(())
}

/// Whether `line` is of a kind that is never a fault: a `log` or `info` line (even a
/// malformed one) or a line of a type the protocol does not know.
fn never_a_fault(line: &str) -> bool {
    match FromEngine::parse(line) {
        Ok(FromEngine::Log { .. } | FromEngine::Info(_)) => true,
        Err(ParseError::UnknownType(_)) => true,
        Err(ParseError::Malformed { kind, .. }) => kind == "log" || kind == "info",
        _ => false,
    }
}
