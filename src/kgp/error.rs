//! Why talking to a KGP agent failed. Every variant is a fault of the agent
//! ([`KgpError::fault`]), with the line that showed it where there is one.

use crate::record::{Fault, FaultKind, clean_text, format_duration, shown_line};
use crate::supervisor::EngineError;
use std::io;
use std::net::SocketAddr;
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum KgpError {
    /// Starting the program, or the program's exit (with what it wrote to stderr).
    #[error("{0}")]
    Process(#[from] EngineError),
    #[error("could not listen on the loopback interface for the agent: {0}")]
    Listen(io::Error),
    #[error(
        "the agent did not connect to {address} within the start-up timeout of {}: a KGP \
         agent connects to KGP_HOST:KGP_PORT from its environment (or to {{host}} {{port}} in \
         its arguments){}",
        format_duration(*timeout), clean_text(hint)
    )]
    NeverConnected {
        address: SocketAddr,
        timeout: Duration,
        hint: String,
    },
    #[error(
        "no connection of the agent's came to {address} within the start-up timeout of {}, \
         while {refused} connection{} from other processes did and {} refused: a local \
         program flooding the port can keep the agent's connection out, and an agent that \
         detaches with setsid or a double fork connects from outside its process tree unless \
         engines run in namespaces{}",
        format_duration(*timeout),
        if *refused == 1 { "" } else { "s" },
        if *refused == 1 { "was" } else { "were" },
        clean_text(hint)
    )]
    Crowded {
        address: SocketAddr,
        timeout: Duration,
        refused: u64,
        hint: String,
    },
    #[error(
        "no `mode` command within the start-up timeout of {}: a KGP agent answers \
         `kgp 1 0 0` with `mode freeplay`{}",
        format_duration(*timeout), clean_text(said)
    )]
    NoMode { timeout: Duration, said: String },
    #[error(
        "the agent asked for mode {mode:?}; kalaha plays only `freeplay`: {}",
        shown_line(line)
    )]
    UnsupportedMode { mode: String, line: String },
    #[error("no pong within {}: the agent stalled", format_duration(*timeout))]
    Stall { timeout: Duration },
    #[error("the agent closed its connection while {during}{}", clean_text(stderr))]
    Disconnected {
        during: &'static str,
        stderr: String,
    },
    #[error(
        "no move within the deadline of {} ms: an agent sends a `move` as soon as it has one, \
         and improves it until `stop`",
        deadline.as_millis()
    )]
    Timeout { deadline: Duration },
    #[error("the agent yielded without sending a move: `yield` ends the search, after a `move`")]
    YieldWithoutMove { line: String },
    #[error(
        "a line that is not a KGP command ({}): {}",
        clean_text(error),
        shown_line(line)
    )]
    NotKgp { line: String, error: String },
    #[error(
        "a bad `{}` command ({}): {}",
        clean_text(command),
        clean_text(error),
        shown_line(line)
    )]
    Malformed {
        command: String,
        line: String,
        error: String,
    },
    #[error(
        "a `{}` for id {reference}, which kalaha never sent: {}",
        clean_text(command),
        shown_line(line)
    )]
    UnknownReference {
        command: String,
        reference: u64,
        line: String,
    },
    #[error("a line longer than the limit of {limit} bytes, beginning {prefix:?}")]
    LineTooLong { limit: usize, prefix: String },
    #[error("a line that is not valid UTF-8: {}", clean_text(prefix))]
    NotUtf8 { prefix: String },
    #[error("could not write to the agent within {}: it does not read its connection", format_duration(*timeout))]
    WriteStall { timeout: Duration },
    #[error("i/o with the agent failed: {0}")]
    Io(io::Error),
}

impl KgpError {
    /// The received line that caused the error, if any.
    pub fn line(&self) -> Option<&str> {
        match self {
            KgpError::UnsupportedMode { line, .. }
            | KgpError::YieldWithoutMove { line }
            | KgpError::NotKgp { line, .. }
            | KgpError::Malformed { line, .. }
            | KgpError::UnknownReference { line, .. } => Some(line),
            KgpError::LineTooLong { prefix, .. } | KgpError::NotUtf8 { prefix } => Some(prefix),
            KgpError::Process(e) => e.line(),
            _ => None,
        }
    }

    /// The error without the received line (for reports that show the line apart).
    pub fn reason(&self) -> String {
        match self {
            KgpError::UnsupportedMode { mode, .. } => {
                format!("the agent asked for mode {mode:?}; kalaha plays only `freeplay`")
            }
            KgpError::NotKgp { error, .. } => {
                format!("a line that is not a KGP command: {}", clean_text(error))
            }
            KgpError::Malformed { command, error, .. } => format!(
                "a bad `{}` command: {}",
                clean_text(command),
                clean_text(error)
            ),
            KgpError::UnknownReference {
                command, reference, ..
            } => format!(
                "a `{}` for id {reference}, which kalaha never sent",
                clean_text(command)
            ),
            KgpError::LineTooLong { limit, .. } => {
                format!("a line longer than the limit of {limit} bytes")
            }
            KgpError::NotUtf8 { .. } => "a line that is not valid UTF-8".to_string(),
            other => other.to_string(),
        }
    }

    /// The fault this error is for the agent that caused it.
    pub fn fault(&self) -> Fault {
        let kind = match self {
            KgpError::Process(e) => e.fault().kind,
            KgpError::Listen(_) | KgpError::Disconnected { .. } | KgpError::Io(_) => {
                FaultKind::Crash
            }
            KgpError::NeverConnected { .. }
            | KgpError::Crowded { .. }
            | KgpError::NoMode { .. }
            | KgpError::Stall { .. }
            | KgpError::WriteStall { .. } => FaultKind::Stall,
            KgpError::Timeout { .. } | KgpError::YieldWithoutMove { .. } => FaultKind::Timeout,
            KgpError::UnsupportedMode { .. }
            | KgpError::NotKgp { .. }
            | KgpError::Malformed { .. }
            | KgpError::UnknownReference { .. }
            | KgpError::LineTooLong { .. }
            | KgpError::NotUtf8 { .. } => FaultKind::ProtocolError,
        };
        Fault::new(kind, self.to_string()).with_line_if(self.line())
    }

    /// Whether the agent is gone or unusable (dead, silent, disconnected), as opposed to
    /// having sent one bad command.
    pub fn is_fatal(&self) -> bool {
        match self {
            KgpError::Process(e) => e.is_fatal(),
            KgpError::Listen(_)
            | KgpError::NeverConnected { .. }
            | KgpError::Crowded { .. }
            | KgpError::NoMode { .. }
            | KgpError::UnsupportedMode { .. }
            | KgpError::Stall { .. }
            | KgpError::Disconnected { .. }
            | KgpError::Timeout { .. }
            | KgpError::LineTooLong { .. }
            | KgpError::WriteStall { .. }
            | KgpError::Io(_) => true,
            KgpError::YieldWithoutMove { .. }
            | KgpError::NotKgp { .. }
            | KgpError::Malformed { .. }
            | KgpError::UnknownReference { .. }
            | KgpError::NotUtf8 { .. } => false,
        }
    }
}
