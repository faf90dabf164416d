//! Why talking to an engine failed, and how an engine process ended.

use crate::protocol::PROTOCOL_VERSION;
use crate::record::{Fault, FaultKind, shown_line};
use std::fmt;
use std::io;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::time::Duration;

/// Why talking to an engine failed. Every variant is a fault a referee can turn into a
/// forfeit ([`EngineError::fault`]).
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("could not start {program}: {source}")]
    Spawn {
        program: String,
        #[source]
        source: io::Error,
    },
    #[error("no hello within the start-up timeout of {}{hint}", crate::record::format_duration(*timeout))]
    HandshakeTimeout { timeout: Duration, hint: String },
    #[error(
        "the engine speaks protocol {got}, not {PROTOCOL_VERSION}: {}",
        shown_line(line)
    )]
    Protocol { got: u32, line: String },
    #[error("no pong within {}: the engine stalled", crate::record::format_duration(*timeout))]
    Stall { timeout: Duration },
    #[error("the engine {exit}{stderr}")]
    Exited { exit: ExitKind, stderr: String },
    #[error("the engine closed its output but did not exit")]
    StdoutClosed,
    #[error("no move within the deadline of {} ms", deadline.as_millis())]
    Timeout { deadline: Duration },
    #[error("a line longer than the limit of {limit} bytes, beginning {prefix:?}")]
    LineTooLong { limit: usize, prefix: String },
    #[error("a line that is not a JSON object ({error}): {}", shown_line(line))]
    NotJson { line: String, error: String },
    #[error("a bad {} ({error}): {}", crate::protocol::message_kind(kind).trim_end_matches(':'), shown_line(line))]
    Malformed {
        kind: String,
        line: String,
        error: String,
    },
    #[error("expected {expected}, received: {}", shown_line(line))]
    WrongMessage {
        expected: &'static str,
        line: String,
    },
    #[error("sent {kind} when no answer was asked for: {}", shown_line(line))]
    Unrequested { kind: &'static str, line: String },
    #[error("option {name:?}: {reason}")]
    BadOption { name: String, reason: String },
    #[error("went over its {limit} limit{detail}")]
    Limit { limit: &'static str, detail: String },
    #[error("i/o with the engine failed: {0}")]
    Io(#[from] io::Error),
}

impl EngineError {
    /// The received line that caused the error, if any.
    pub fn line(&self) -> Option<&str> {
        match self {
            EngineError::NotJson { line, .. }
            | EngineError::Malformed { line, .. }
            | EngineError::WrongMessage { line, .. }
            | EngineError::Unrequested { line, .. }
            | EngineError::Protocol { line, .. } => Some(line),
            EngineError::LineTooLong { prefix, .. } => Some(prefix),
            _ => None,
        }
    }

    /// The fault this error is for the engine that caused it.
    pub fn fault(&self) -> Fault {
        let kind = match self {
            EngineError::Spawn { .. }
            | EngineError::Exited { .. }
            | EngineError::StdoutClosed
            | EngineError::Limit { .. }
            | EngineError::Io(_) => FaultKind::Crash,
            EngineError::HandshakeTimeout { .. } | EngineError::Stall { .. } => FaultKind::Stall,
            EngineError::Timeout { .. } => FaultKind::Timeout,
            EngineError::Protocol { .. }
            | EngineError::LineTooLong { .. }
            | EngineError::NotJson { .. }
            | EngineError::Malformed { .. }
            | EngineError::WrongMessage { .. }
            | EngineError::Unrequested { .. }
            | EngineError::BadOption { .. } => FaultKind::ProtocolError,
        };
        Fault::new(kind, self.to_string()).with_line_if(self.line())
    }

    /// Whether the engine is gone or unusable (dead, silent, flooding), as opposed to
    /// having sent one bad message.
    pub fn is_fatal(&self) -> bool {
        match self {
            EngineError::NotJson { .. }
            | EngineError::Malformed { .. }
            | EngineError::WrongMessage { .. }
            | EngineError::Unrequested { .. }
            | EngineError::Protocol { .. }
            | EngineError::BadOption { .. } => false,
            EngineError::Spawn { .. }
            | EngineError::HandshakeTimeout { .. }
            | EngineError::Stall { .. }
            | EngineError::Exited { .. }
            | EngineError::StdoutClosed
            | EngineError::Timeout { .. }
            | EngineError::LineTooLong { .. }
            | EngineError::Limit { .. }
            | EngineError::Io(_) => true,
        }
    }
}

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
        libc::SIGXCPU => " (SIGXCPU: over its CPU time limit)",
        _ => "",
    }
}
