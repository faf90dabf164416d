//! The protocol messages of `protocol.md`, version 1: one JSON object per line, each with a
//! `"type"`. [`ToEngine`] holds what the referee sends, [`FromEngine`] what an engine
//! answers. Unknown fields are ignored in both directions; an unknown `type` from an engine
//! is told apart from a malformed line by [`FromEngine::parse`], so that it can be logged
//! and ignored.

use crate::engines::{EngineOption, Limits, SearchInfo};
use crate::rules::{BoardView, Move, Rules, Side};
use serde::{Deserialize, Serialize};
use std::time::Duration;

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
    /// A new game begins with these rules, the engine playing `side`; no answer.
    NewGame {
        game: String,
        rules: Rules,
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
        result: GameResult,
        south: u16,
        north: u16,
        termination: String,
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

/// The result of a game from the engine's point of view.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GameResult {
    Win,
    Loss,
    Draw,
}

impl GameResult {
    /// The result for `side` from the winner (`None`: a draw).
    pub fn for_side(winner: Option<Side>, side: Side) -> GameResult {
        match winner {
            None => GameResult::Draw,
            Some(w) if w == side => GameResult::Win,
            Some(_) => GameResult::Loss,
        }
    }
}

/// The `time` of a `go` message: a fixed time for this move, or a game clock.
///
/// On the wire `{"move_ms":N}` or `{"remaining_ms":R,"increment_ms":I,"opponent_remaining_ms":O}`
/// (`increment_ms` and `opponent_remaining_ms` may be left out and then count as 0 and
/// unknown).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "TimeRepr", into = "TimeRepr")]
pub enum TimeLimit {
    /// A fixed time for this move.
    MoveTime { move_ms: u64 },
    /// The mover's game clock.
    Clock {
        remaining_ms: u64,
        increment_ms: u64,
        opponent_remaining_ms: Option<u64>,
    },
}

impl TimeLimit {
    /// The time an engine may plan with, as the player interface's [`Limits`].
    pub fn limits(&self) -> Limits {
        match *self {
            TimeLimit::MoveTime { move_ms } => Limits {
                move_time: Some(Duration::from_millis(move_ms)),
                ..Limits::default()
            },
            TimeLimit::Clock {
                remaining_ms,
                increment_ms,
                opponent_remaining_ms,
            } => Limits {
                move_time: None,
                remaining: Some(Duration::from_millis(remaining_ms)),
                increment: Some(Duration::from_millis(increment_ms)),
                opponent_remaining: opponent_remaining_ms.map(Duration::from_millis),
            },
        }
    }
}

#[derive(Serialize, Deserialize)]
struct TimeRepr {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    move_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    remaining_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    increment_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    opponent_remaining_ms: Option<u64>,
}

impl TryFrom<TimeRepr> for TimeLimit {
    type Error = String;
    fn try_from(t: TimeRepr) -> Result<Self, String> {
        match (t.move_ms, t.remaining_ms) {
            (Some(move_ms), None) => Ok(TimeLimit::MoveTime { move_ms }),
            (None, Some(remaining_ms)) => Ok(TimeLimit::Clock {
                remaining_ms,
                increment_ms: t.increment_ms.unwrap_or(0),
                opponent_remaining_ms: t.opponent_remaining_ms,
            }),
            (Some(_), Some(_)) => {
                Err("time has both move_ms and remaining_ms: give exactly one".to_string())
            }
            (None, None) => Err(
                "time needs either move_ms (a fixed time for this move) or remaining_ms (a game clock)"
                    .to_string(),
            ),
        }
    }
}

impl From<TimeLimit> for TimeRepr {
    fn from(t: TimeLimit) -> Self {
        match t {
            TimeLimit::MoveTime { move_ms } => TimeRepr {
                move_ms: Some(move_ms),
                remaining_ms: None,
                increment_ms: None,
                opponent_remaining_ms: None,
            },
            TimeLimit::Clock {
                remaining_ms,
                increment_ms,
                opponent_remaining_ms,
            } => TimeRepr {
                move_ms: None,
                remaining_ms: Some(remaining_ms),
                increment_ms: Some(increment_ms),
                opponent_remaining_ms,
            },
        }
    }
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
    /// A known `type` whose fields are wrong (missing, or of the wrong JSON type).
    #[error("bad {kind:?} message: {error}")]
    Malformed { kind: String, error: String },
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
    // A first pass reads only the type (no tree is built), so that an unknown type, a
    // missing type and a line that is not a JSON object are told apart.
    let probe: TypeProbe = serde_json::from_str(line).map_err(|e| match e.classify() {
        serde_json::error::Category::Data if !line.trim_start().starts_with('{') => {
            ParseError::NotJson("the line is JSON but not an object".to_string())
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
        error: e.to_string(),
    })
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
mod tests {
    use super::*;
    use crate::engines::OptionKind;
    use crate::rules::Position;

    fn round_trip_to(msg: ToEngine) {
        let line = msg.to_line();
        assert_eq!(ToEngine::parse(&line).unwrap(), msg, "{line}");
    }

    fn round_trip_from(msg: FromEngine) {
        let line = msg.to_line();
        assert_eq!(FromEngine::parse(&line).unwrap(), msg, "{line}");
    }

    #[test]
    fn every_referee_message_round_trips() {
        let pos = Position::start(Rules::default());
        round_trip_to(ToEngine::Hello { protocol: 1 });
        round_trip_to(ToEngine::Option {
            name: "depth".into(),
            value: serde_json::json!(8),
        });
        round_trip_to(ToEngine::Ping { id: 7 });
        round_trip_to(ToEngine::NewGame {
            game: "g1".into(),
            rules: Rules::default(),
            side: Side::North,
        });
        for time in [
            TimeLimit::MoveTime { move_ms: 1000 },
            TimeLimit::Clock {
                remaining_ms: 60000,
                increment_ms: 100,
                opponent_remaining_ms: Some(59000),
            },
            TimeLimit::Clock {
                remaining_ms: 5,
                increment_ms: 0,
                opponent_remaining_ms: None,
            },
        ] {
            round_trip_to(ToEngine::Go {
                position: pos.view(),
                legal: pos.legal_moves().collect(),
                moves: vec![Move {
                    side: Side::South,
                    pit: 3,
                }],
                time,
            });
        }
        round_trip_to(ToEngine::GameOver {
            game: "g1".into(),
            result: GameResult::Draw,
            south: 24,
            north: 24,
            termination: "normal".into(),
        });
        round_trip_to(ToEngine::Quit);
    }

    #[test]
    fn every_engine_message_round_trips() {
        round_trip_from(FromEngine::Hello(HelloReply {
            protocol: 1,
            name: "x".into(),
            version: "1.0".into(),
            author: "a".into(),
            options: vec![
                EngineOption {
                    name: "depth".into(),
                    kind: OptionKind::Int {
                        default: 4,
                        min: 1,
                        max: 20,
                    },
                },
                EngineOption {
                    name: "style".into(),
                    kind: OptionKind::Choice {
                        default: "a".into(),
                        values: vec!["a".into(), "b".into()],
                    },
                },
            ],
        }));
        round_trip_from(FromEngine::Pong { id: 3 });
        round_trip_from(FromEngine::Info(SearchInfo::default()));
        round_trip_from(FromEngine::Info(SearchInfo {
            depth: Some(3),
            score: Some(-2),
            nodes: Some(100),
            time_ms: Some(5),
            pv: vec![3, 6],
        }));
        round_trip_from(FromEngine::Move { pit: 3 });
        round_trip_from(FromEngine::Log {
            level: "warn".into(),
            message: "hi".into(),
        });
    }

    #[test]
    fn unknown_fields_are_ignored() {
        let m = FromEngine::parse(r#"{"type":"move","pit":4,"ponder":2,"x":{"y":[1]}}"#).unwrap();
        assert_eq!(m, FromEngine::Move { pit: 4 });
        let m = ToEngine::parse(r#"{"type":"ping","id":1,"extra":true}"#).unwrap();
        assert_eq!(m, ToEngine::Ping { id: 1 });
        let m = FromEngine::parse(r#"{"type":"hello","protocol":1,"name":"n"}"#).unwrap();
        assert!(matches!(m, FromEngine::Hello(h) if h.options.is_empty()));
    }

    #[test]
    fn unknown_type_is_distinct_from_malformed() {
        let e = FromEngine::parse(r#"{"type":"ready"}"#).unwrap_err();
        assert!(e.is_unknown_type());
        assert!(matches!(
            FromEngine::parse("move 3").unwrap_err(),
            ParseError::NotJson(_)
        ));
        assert!(matches!(
            FromEngine::parse("[1,2]").unwrap_err(),
            ParseError::NotJson(_)
        ));
        assert!(matches!(
            FromEngine::parse(r#"{"pit":3}"#).unwrap_err(),
            ParseError::MissingType
        ));
        let e = FromEngine::parse(r#"{"type":"move","pit":"3"}"#).unwrap_err();
        assert!(matches!(e, ParseError::Malformed { ref kind, .. } if kind == "move"));
        assert!(!e.is_unknown_type());
        assert!(matches!(
            FromEngine::parse(r#"{"type":7}"#).unwrap_err(),
            ParseError::MissingType
        ));
        assert!(matches!(
            FromEngine::parse(r#"{"type":"mo\u0076e","pit":2}"#).unwrap(),
            FromEngine::Move { pit: 2 }
        ));
        assert!(matches!(
            FromEngine::parse(r#"{"type":"move","pit":2"#).unwrap_err(),
            ParseError::NotJson(_)
        ));
        assert!(matches!(
            FromEngine::parse("\"move\"").unwrap_err(),
            ParseError::NotJson(_)
        ));
    }

    #[test]
    fn time_limit_errors_are_clear() {
        let e = ToEngine::parse(r#"{"type":"go","position":{"to_move":"south","south":{"pits":[1],"store":0},"north":{"pits":[1],"store":0}},"legal":[1],"moves":[],"time":{}}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("move_ms"), "{e}");
        let t: TimeLimit = serde_json::from_str(r#"{"remaining_ms":10}"#).unwrap();
        assert_eq!(
            t,
            TimeLimit::Clock {
                remaining_ms: 10,
                increment_ms: 0,
                opponent_remaining_ms: None
            }
        );
        assert!(serde_json::from_str::<TimeLimit>(r#"{"move_ms":1,"remaining_ms":2}"#).is_err());
        assert_eq!(
            TimeLimit::MoveTime { move_ms: 250 }.limits().move_time,
            Some(Duration::from_millis(250))
        );
    }

    #[test]
    fn wire_shapes_match_the_spec() {
        assert_eq!(ToEngine::Quit.to_line(), r#"{"type":"quit"}"#);
        assert_eq!(
            ToEngine::NewGame {
                game: "g".into(),
                rules: Rules::default(),
                side: Side::South
            }
            .to_line(),
            r#"{"type":"new_game","game":"g","rules":{"pits":6,"seeds":4,"empty_capture":false,"sweep":"owner"},"side":"south"}"#
        );
        assert_eq!(
            serde_json::to_string(&TimeLimit::MoveTime { move_ms: 5 }).unwrap(),
            r#"{"move_ms":5}"#
        );
    }
}
