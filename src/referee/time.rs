//! Time controls: a fixed time per move, or a game clock with an increment.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// How much time an engine gets: `100ms` (per move) or `10s+100ms` (a game clock of 10 s,
/// plus 100 ms after each move).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeControl {
    MoveTime(Duration),
    Clock { base: Duration, increment: Duration },
}

impl TimeControl {
    /// The clock at the start of a game (the move time for a fixed move time).
    pub fn base(&self) -> Duration {
        match *self {
            TimeControl::MoveTime(t) => t,
            TimeControl::Clock { base, .. } => base,
        }
    }

    /// Parses a fixed move time (`100ms`) only.
    pub fn parse_move_time(s: &str) -> Result<TimeControl, ParseTimeError> {
        let t = parse_duration(s)?;
        if t.is_zero() {
            return Err(ParseTimeError(format!(
                "{s:?}: the move time must be above zero"
            )));
        }
        Ok(TimeControl::MoveTime(t))
    }

    /// Parses a game clock, `BASE+INCREMENT` or `BASE` alone.
    pub fn parse_clock(s: &str) -> Result<TimeControl, ParseTimeError> {
        let (base, increment) = match s.split_once('+') {
            Some((b, i)) => (parse_duration(b)?, parse_duration(i)?),
            None => (parse_duration(s)?, Duration::ZERO),
        };
        if base.is_zero() {
            return Err(ParseTimeError(format!(
                "{s:?}: the clock must start above zero"
            )));
        }
        Ok(TimeControl::Clock { base, increment })
    }
}

/// Why a time could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid time {0}")]
pub struct ParseTimeError(String);

/// A duration with its unit, such as `100ms`, `2s`, `1m 30s`, or a bare `0`. A bare
/// number is refused: `100` could mean milliseconds or seconds.
pub fn parse_duration(s: &str) -> Result<Duration, ParseTimeError> {
    let s = s.trim();
    if s == "0" {
        return Ok(Duration::ZERO);
    }
    const HINT: &str = "write a number with its unit, e.g. 100ms or 2s (a clock: 10s+100ms)";
    if s.parse::<f64>().is_ok() {
        return Err(ParseTimeError(format!("{s:?}: no unit: {HINT}")));
    }
    humantime::parse_duration(s).map_err(|e| ParseTimeError(format!("{s:?}: {e}: {HINT}")))
}

/// Formats a duration the way [`parse_duration`] reads it back (`100ms`, `10s`, `1m 5s`).
pub fn format_duration(d: Duration) -> String {
    if d.is_zero() {
        return "0ms".into();
    }
    humantime::format_duration(d).to_string()
}

impl fmt::Display for TimeControl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            TimeControl::MoveTime(t) => write!(f, "{}", format_duration(t)),
            TimeControl::Clock { base, increment } => write!(
                f,
                "{}+{}",
                format_duration(base),
                format_duration(increment)
            ),
        }
    }
}

/// `100ms` is a move time, `10s+100ms` a clock.
impl FromStr for TimeControl {
    type Err = ParseTimeError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.contains('+') {
            TimeControl::parse_clock(s)
        } else {
            TimeControl::parse_move_time(s)
        }
    }
}

impl Serialize for TimeControl {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for TimeControl {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// The time sent with one `go`: the protocol's `time` object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeLimit {
    /// `{"move_ms":..}`
    MoveTime(Duration),
    /// `{"remaining_ms":..,"increment_ms":..,"opponent_remaining_ms":..}`
    Clock {
        remaining: Duration,
        increment: Duration,
        opponent_remaining: Duration,
    },
}

impl TimeLimit {
    /// The protocol's `time` object.
    pub fn to_json(&self) -> serde_json::Value {
        match *self {
            TimeLimit::MoveTime(t) => serde_json::json!({ "move_ms": t.as_millis() as u64 }),
            TimeLimit::Clock {
                remaining,
                increment,
                opponent_remaining,
            } => serde_json::json!({
                "remaining_ms": remaining.as_millis() as u64,
                "increment_ms": increment.as_millis() as u64,
                "opponent_remaining_ms": opponent_remaining.as_millis() as u64,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints_time_controls() {
        let ms = Duration::from_millis;
        assert_eq!(
            "100ms".parse::<TimeControl>(),
            Ok(TimeControl::MoveTime(ms(100)))
        );
        // A bare number is ambiguous (cutechess reads seconds): a unit is required.
        let e = "250".parse::<TimeControl>().unwrap_err().to_string();
        assert!(e.contains("no unit") && e.contains("100ms"), "{e}");
        let e = "2s+".parse::<TimeControl>().unwrap_err().to_string();
        assert!(e.contains("10s+100ms"), "{e}");
        assert!("0ms".parse::<TimeControl>().is_err(), "a move time of zero");
        assert_eq!(
            "10s+0".parse::<TimeControl>(),
            Ok(TimeControl::Clock {
                base: ms(10_000),
                increment: ms(0)
            })
        );
        let clock: TimeControl = "10s+100ms".parse().unwrap();
        assert_eq!(
            clock,
            TimeControl::Clock {
                base: ms(10_000),
                increment: ms(100)
            }
        );
        assert_eq!(clock.to_string(), "10s+100ms");
        assert_eq!(clock.to_string().parse::<TimeControl>(), Ok(clock));
        assert!("fast".parse::<TimeControl>().is_err());
        assert!("0s+1s".parse::<TimeControl>().is_err());
    }
}
