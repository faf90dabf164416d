//! How a game ended, and the faults an engine can commit.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// An engine's failure that loses it the game (`protocol.md`, section 5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FaultKind {
    /// No move within the time of the `go` (plus the margin), or a clock run out.
    Timeout,
    /// A pit the rules do not allow.
    IllegalMove,
    /// A line that is not JSON, too long, malformed, unrequested or the wrong message.
    ProtocolError,
    /// The engine exited, closed its pipes, could not be started, or went over a resource
    /// limit.
    Crash,
    /// No answer to the handshake or to a `ping`.
    Stall,
}

impl FaultKind {
    pub const ALL: [FaultKind; 5] = [
        FaultKind::Timeout,
        FaultKind::IllegalMove,
        FaultKind::ProtocolError,
        FaultKind::Crash,
        FaultKind::Stall,
    ];

    /// The stable name written in the results and sent in `game_over`.
    pub fn as_str(self) -> &'static str {
        match self {
            FaultKind::Timeout => "timeout",
            FaultKind::IllegalMove => "illegal_move",
            FaultKind::ProtocolError => "protocol_error",
            FaultKind::Crash => "crash",
            FaultKind::Stall => "stall",
        }
    }

    /// Position in [`FaultKind::ALL`], for counting by kind.
    pub fn index(self) -> usize {
        match self {
            FaultKind::Timeout => 0,
            FaultKind::IllegalMove => 1,
            FaultKind::ProtocolError => 2,
            FaultKind::Crash => 3,
            FaultKind::Stall => 4,
        }
    }
}

/// How a game ended. The results files and the protocol's `game_over` carry
/// [`Termination::as_str`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Termination {
    /// The game was played to its end under the rules.
    Normal,
    /// An engine committed a fault and lost.
    Fault(FaultKind),
    /// The referee ended the game early because its result was settled.
    Adjudicated,
    /// The run was stopped while the game was in progress. Such games are never written
    /// to the results (a resumed run plays them again); readers skip rows that say so.
    Interrupted,
    /// A side gave the game up (a person on the page of `kalaha play`): a loss of that
    /// side, named as the loser, and no fault.
    Resigned,
}

impl Termination {
    pub const ALL: [Termination; 9] = [
        Termination::Normal,
        Termination::Fault(FaultKind::Timeout),
        Termination::Fault(FaultKind::IllegalMove),
        Termination::Fault(FaultKind::ProtocolError),
        Termination::Fault(FaultKind::Crash),
        Termination::Fault(FaultKind::Stall),
        Termination::Adjudicated,
        Termination::Interrupted,
        Termination::Resigned,
    ];

    /// The stable name: `normal`, `adjudicated`, `interrupted`, `resigned` or a fault's
    /// name.
    pub fn as_str(self) -> &'static str {
        match self {
            Termination::Normal => "normal",
            Termination::Fault(kind) => kind.as_str(),
            Termination::Adjudicated => "adjudicated",
            Termination::Interrupted => "interrupted",
            Termination::Resigned => "resigned",
        }
    }

    /// The fault, when an engine's fault ended the game.
    pub fn fault(self) -> Option<FaultKind> {
        match self {
            Termination::Fault(kind) => Some(kind),
            Termination::Normal
            | Termination::Adjudicated
            | Termination::Interrupted
            | Termination::Resigned => None,
        }
    }

    pub fn is_fault(self) -> bool {
        self.fault().is_some()
    }

    /// Whether the record names the side that lost this way (a fault, a resignation).
    pub fn names_loser(self) -> bool {
        self.is_fault() || self == Termination::Resigned
    }
}

impl fmt::Display for Termination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for FaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Termination {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        Termination::ALL
            .into_iter()
            .find(|t| t.as_str() == s)
            .ok_or_else(|| format!("unknown termination {s:?}"))
    }
}

impl Serialize for Termination {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Termination {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// The longest offending line kept in a record, in bytes.
pub const MAX_RECORDED_LINE: usize = 1000;

/// An engine's fault as the referee records it: its kind, what happened, and the line
/// the engine sent when a line was to blame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    pub kind: FaultKind,
    pub detail: String,
    pub line: Option<String>,
}

impl Fault {
    pub fn new(kind: FaultKind, detail: impl Into<String>) -> Fault {
        Fault {
            kind,
            detail: detail.into(),
            line: None,
        }
    }

    /// The same fault with the offending line, cut to what a record keeps of it.
    pub fn with_line(mut self, line: &str) -> Fault {
        self.line = Some(super::name::truncate(line, MAX_RECORDED_LINE));
        self
    }

    /// The same fault with the offending line, if there is one.
    pub fn with_line_if(self, line: Option<&str>) -> Fault {
        match line {
            Some(line) => self.with_line(line),
            None => self,
        }
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind, self.detail)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_stable_and_read_back() {
        let names: Vec<&str> = Termination::ALL.iter().map(|t| t.as_str()).collect();
        assert_eq!(
            names,
            [
                "normal",
                "timeout",
                "illegal_move",
                "protocol_error",
                "crash",
                "stall",
                "adjudicated",
                "interrupted",
                "resigned"
            ]
        );
        for t in Termination::ALL {
            assert_eq!(t.as_str().parse::<Termination>(), Ok(t));
            let json = serde_json::to_string(&t).unwrap();
            assert_eq!(serde_json::from_str::<Termination>(&json).unwrap(), t);
        }
        for (i, k) in FaultKind::ALL.into_iter().enumerate() {
            assert_eq!(k.index(), i);
            assert!(Termination::Fault(k).is_fault());
        }
        assert!(!Termination::Adjudicated.is_fault());
        assert!(!Termination::Resigned.is_fault());
        assert!(Termination::Resigned.names_loser());
        assert!(!Termination::Adjudicated.names_loser());
        assert!("resign".parse::<Termination>().is_err());
    }
}
