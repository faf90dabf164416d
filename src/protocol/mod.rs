//! The protocol messages of `protocol.md`, version 1: one JSON object per line, each with a
//! `"type"`. [`ToEngine`] holds what the referee sends, [`FromEngine`] what an engine
//! answers. Unknown fields are ignored in both directions; an unknown `type` from an engine
//! is told apart from a malformed line by [`FromEngine::parse`], so that it can be logged
//! and ignored.

mod options;
mod shallow;
mod surrogates;

pub use options::{EngineOption, OptionKind, find_option};

use crate::record::{SearchInfo, SideResult, Termination, TimeLimit};
use crate::rules::{BoardView, Move, Rules, Side};
use serde::{Deserialize, Serialize};

/// The protocol version this crate speaks.
pub const PROTOCOL_VERSION: u32 = 1;

/// The default line limit: a longer line is a protocol error.
pub const DEFAULT_LINE_LIMIT: usize = 1 << 20;

/// A message from the referee to an engine.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToEngine {
    /// The first message; the engine answers with [`FromEngine::Hello`].
    Hello { protocol: u32 },
    /// Sets an option the engine declared; no answer (a bad one is reported with `log`).
    Option {
        name: String,
        value: serde_json::Value,
    },
    /// Readiness barrier and liveness check; the engine answers `pong` with the same id.
    Ping { id: u64 },
    /// A new game begins with these rules, the engine playing `side`; no answer. `start`
    /// is the position the game starts from (south to move) when it is not the rules'
    /// start position; `go`'s `moves` are sown from it.
    NewGame {
        game: String,
        rules: Rules,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        start: Option<BoardView>,
        side: Side,
    },
    /// The engine is to move; it answers zero or more `info` lines, then `move`.
    Go {
        position: BoardView,
        /// The legal pits of the side to move, in increasing order.
        legal: Vec<u8>,
        /// The whole game from the initial position.
        moves: Vec<Move>,
        time: TimeLimit,
    },
    /// The game has ended; no answer.
    GameOver {
        game: String,
        result: SideResult,
        south: u16,
        north: u16,
        termination: Termination,
    },
    /// The engine is to exit.
    Quit,
}

/// A message from an engine to the referee.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FromEngine {
    /// The answer to `hello`.
    Hello(HelloReply),
    /// The answer to `ping`.
    Pong { id: u64 },
    /// A search report while thinking; every field is optional.
    Info(SearchInfo),
    /// The chosen pit. Kept as a number of any size: range checks are the referee's.
    Move { pit: i64 },
    /// Free text for the referee's log, at any time.
    Log {
        #[serde(default = "default_level")]
        level: String,
        message: String,
    },
}

fn default_level() -> String {
    "info".to_string()
}

/// An engine's `hello`: who it is and what options it takes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HelloReply {
    pub protocol: u32,
    pub name: String,
    #[serde(default)]
    pub version: String,
    #[serde(default)]
    pub author: String,
    #[serde(default)]
    pub options: Vec<EngineOption>,
}

/// Why a line could not be read as a message.
#[derive(Debug, thiserror::Error)]
pub enum ParseError {
    /// Not JSON at all, or JSON but not an object.
    #[error("not a JSON object: {0}")]
    NotJson(String),
    /// A JSON object without a string `type`.
    #[error("the object has no string \"type\" field")]
    MissingType,
    /// A `type` this protocol version does not know: log it and ignore it.
    #[error("unknown message type {0:?}")]
    UnknownType(String),
    /// A known `type` whose fields are wrong (missing, or of the wrong JSON type); `kind`
    /// is empty when the type itself is given twice.
    #[error("bad {} {error}", message_kind(kind))]
    Malformed { kind: String, error: String },
}

/// A message named by its type for an error, `"move" message:`; `message:` without one.
pub fn message_kind(kind: &str) -> String {
    if kind.is_empty() {
        "message:".to_string()
    } else {
        format!("{kind:?} message:")
    }
}

impl ParseError {
    /// Whether the line should be logged and ignored rather than treated as a fault.
    pub fn is_unknown_type(&self) -> bool {
        matches!(self, ParseError::UnknownType(_))
    }
}

/// Only the `type` of a message; every other field is skipped.
#[derive(Deserialize)]
struct TypeProbe<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<std::borrow::Cow<'a, str>>,
}

fn parse_tagged<T: serde::de::DeserializeOwned>(
    line: &str,
    known: &[&str],
) -> Result<T, ParseError> {
    match parse_tagged_once(line, known) {
        // Unknown fields are ignored however deep they nest.
        Err(ParseError::NotJson(e)) if e.contains("recursion limit") => {
            match shallow::without_deep_fields(line) {
                Some(shallow) => parse_tagged_once(&shallow, known),
                None => Err(ParseError::NotJson(e)),
            }
        }
        Err(ParseError::Malformed { kind, error }) if error.contains("recursion limit") => {
            match shallow::without_deep_fields(line) {
                Some(shallow) => parse_tagged_once(&shallow, known),
                None => Err(ParseError::Malformed { kind, error }),
            }
        }
        // Half of a surrogate pair, escaped: replaced, as an invalid byte of a log line is.
        Err(e) if is_surrogate_error(&e) => match surrogates::without_lone_surrogates(line) {
            Some(fixed) => parse_tagged(&fixed, known),
            None => Err(e),
        },
        r => r,
    }
}

/// Whether serde_json refused an escaped half of a surrogate pair.
fn is_surrogate_error(e: &ParseError) -> bool {
    let text = match e {
        ParseError::NotJson(t) => t,
        ParseError::Malformed { error, .. } => error,
        _ => return false,
    };
    text.contains("hex escape") || text.contains("surrogate")
}

fn parse_tagged_once<T: serde::de::DeserializeOwned>(
    line: &str,
    known: &[&str],
) -> Result<T, ParseError> {
    // A first pass reads only the type (no tree is built), so that an unknown type, a
    // missing type and a line that is not a JSON object are told apart.
    let probe: TypeProbe = serde_json::from_str(line).map_err(|e| match e.classify() {
        serde_json::error::Category::Data if !line.trim_start().starts_with('{') => {
            ParseError::NotJson("the line is JSON but not an object".to_string())
        }
        serde_json::error::Category::Data if e.to_string().starts_with("duplicate field") => {
            ParseError::Malformed {
                kind: String::new(),
                error: "more than one \"type\" field".to_string(),
            }
        }
        serde_json::error::Category::Data => ParseError::MissingType,
        _ => ParseError::NotJson(e.to_string()),
    })?;
    let Some(kind) = probe.kind else {
        return Err(ParseError::MissingType);
    };
    if !known.contains(&kind.as_ref()) {
        return Err(ParseError::UnknownType(kind.into_owned()));
    }
    serde_json::from_str(line).map_err(|e| ParseError::Malformed {
        kind: kind.into_owned(),
        error: in_json_words(&e.to_string()),
    })
}

/// A deserialisation error as an engine's author reads it: the JSON names of what was
/// expected, not Rust's (`expected i64` is "expected an integer").
fn in_json_words(error: &str) -> String {
    const WORDS: [(&str, &str); 10] = [
        ("expected i64", "expected an integer"),
        ("expected i32", "expected an integer"),
        ("expected u64", "expected an integer of at least 0"),
        ("expected u32", "expected an integer of at least 0"),
        ("expected u16", "expected an integer of at least 0"),
        ("expected u8", "expected an integer of at least 0"),
        ("expected f64", "expected a number"),
        ("expected a sequence", "expected an array"),
        ("invalid type: map", "invalid type: object"),
        ("invalid type: sequence", "invalid type: array"),
    ];
    let mut out = error.to_string();
    for (rust, json) in WORDS {
        out = out.replace(rust, json);
    }
    out
}

impl FromEngine {
    /// The message types an engine may send.
    pub const TYPES: [&'static str; 5] = ["hello", "pong", "info", "move", "log"];

    /// Reads one line from an engine (without its newline).
    pub fn parse(line: &str) -> Result<FromEngine, ParseError> {
        parse_tagged(line, &Self::TYPES)
    }

    /// The message's `type`.
    pub fn kind(&self) -> &'static str {
        match self {
            FromEngine::Hello(_) => "hello",
            FromEngine::Pong { .. } => "pong",
            FromEngine::Info(_) => "info",
            FromEngine::Move { .. } => "move",
            FromEngine::Log { .. } => "log",
        }
    }

    /// The message as one line of JSON (without the newline).
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).expect("protocol messages always serialize")
    }
}

impl ToEngine {
    /// The message types the referee may send.
    pub const TYPES: [&'static str; 7] = [
        "hello",
        "option",
        "ping",
        "new_game",
        "go",
        "game_over",
        "quit",
    ];

    /// Reads one line from the referee (without its newline).
    pub fn parse(line: &str) -> Result<ToEngine, ParseError> {
        parse_tagged(line, &Self::TYPES)
    }

    /// The message's `type`.
    pub fn kind(&self) -> &'static str {
        match self {
            ToEngine::Hello { .. } => "hello",
            ToEngine::Option { .. } => "option",
            ToEngine::Ping { .. } => "ping",
            ToEngine::NewGame { .. } => "new_game",
            ToEngine::Go { .. } => "go",
            ToEngine::GameOver { .. } => "game_over",
            ToEngine::Quit => "quit",
        }
    }

    /// The message as one line of JSON (without the newline).
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).expect("protocol messages always serialize")
    }
}

#[cfg(test)]
mod tests;
