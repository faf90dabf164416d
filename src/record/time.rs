//! Time: the time control of a tournament or an engine ([`TimeControl`]), the time one
//! `go` grants ([`TimeLimit`], serialised as the protocol's milliseconds), and durations as
//! people write them.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// The longest time any setting accepts (a move time, a clock, a margin, a timeout): one
/// day. Longer times are refused when they are read, so no deadline can overflow.
pub const MAX_TIME: Duration = Duration::from_secs(24 * 60 * 60);

/// How much later than its time limit a move may come, where `--time-margin` is not
/// given: the time the referee and the pipes take on a busy machine.
pub const DEFAULT_TIME_MARGIN: Duration = Duration::from_millis(50);

/// How much time an engine gets: `100ms` (per move) or `10s+100ms` (a game clock of 10 s,
/// plus 100 ms after each move).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeControl {
    MoveTime(Duration),
    Clock { base: Duration, increment: Duration },
}

impl TimeControl {
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

    /// The time of the first `go` of a game.
    pub fn first_limit(&self) -> Duration {
        match *self {
            TimeControl::MoveTime(t) => t,
            TimeControl::Clock { base, .. } => base,
        }
    }
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

/// Why a time could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid time {0}")]
pub struct ParseTimeError(String);

/// A duration with its unit, such as `100ms`, `2s`, `1m 30s`, or a bare `0`, at most
/// [`MAX_TIME`]. A bare number is refused: `100` could mean milliseconds or seconds.
pub fn parse_duration(s: &str) -> Result<Duration, ParseTimeError> {
    let s = s.trim();
    if s == "0" {
        return Ok(Duration::ZERO);
    }
    const HINT: &str = "write a number with its unit, e.g. 100ms or 2s (a clock: 10s+100ms)";
    if s.parse::<f64>().is_ok() {
        return Err(ParseTimeError(format!("{s:?}: no unit: {HINT}")));
    }
    let d =
        humantime::parse_duration(s).map_err(|e| ParseTimeError(format!("{s:?}: {e}: {HINT}")))?;
    if d > MAX_TIME {
        return Err(ParseTimeError(format!(
            "{s:?}: longer than the maximum of {}",
            format_duration(MAX_TIME)
        )));
    }
    Ok(d)
}

/// Formats a duration the way [`parse_duration`] reads it back (`100ms`, `10s`, `1m 5s`).
pub fn format_duration(d: Duration) -> String {
    if d.is_zero() {
        return "0ms".into();
    }
    humantime::format_duration(d).to_string()
}

/// The time of one `go`: a fixed time for this move, or the mover's game clock.
///
/// On the wire (`protocol.md`) `{"move_ms":N}` or
/// `{"remaining_ms":R,"increment_ms":I,"opponent_remaining_ms":O}`, in whole milliseconds;
/// `increment_ms` may be left out (0) and `opponent_remaining_ms` too (unknown).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "TimeRepr", into = "TimeRepr")]
pub enum TimeLimit {
    MoveTime(Duration),
    Clock {
        remaining: Duration,
        increment: Duration,
        opponent_remaining: Option<Duration>,
    },
}

impl TimeLimit {
    /// The time until the mover loses on time (before any margin).
    pub fn available(&self) -> Duration {
        match *self {
            TimeLimit::MoveTime(t) => t,
            TimeLimit::Clock { remaining, .. } => remaining,
        }
    }

    /// A conservative time to think about this move: most of a fixed move time, or a
    /// slice of the remaining clock plus most of the increment.
    pub fn budget(&self) -> Duration {
        match *self {
            TimeLimit::MoveTime(t) => t.mul_f64(0.8),
            TimeLimit::Clock {
                remaining,
                increment,
                ..
            } => (remaining / 25 + increment.mul_f64(0.8)).min(remaining.mul_f64(0.5)),
        }
    }
}

/// The machine's load: the 1-minute load average (runnable and waiting processes, from
/// `/proc/loadavg`) and the CPUs this process may use. `None` where there is no
/// `/proc/loadavg`.
pub fn machine_load() -> Option<(f64, usize)> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    let load = text.split_whitespace().next()?.parse::<f64>().ok()?;
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    Some((load, cpus))
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
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
        let ms = Duration::from_millis;
        match (t.move_ms, t.remaining_ms) {
            (Some(m), None) => Ok(TimeLimit::MoveTime(ms(m))),
            (None, Some(r)) => Ok(TimeLimit::Clock {
                remaining: ms(r),
                increment: ms(t.increment_ms.unwrap_or(0)),
                opponent_remaining: t.opponent_remaining_ms.map(ms),
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
            TimeLimit::MoveTime(m) => TimeRepr {
                move_ms: Some(millis(m)),
                remaining_ms: None,
                increment_ms: None,
                opponent_remaining_ms: None,
            },
            TimeLimit::Clock {
                remaining,
                increment,
                opponent_remaining,
            } => TimeRepr {
                move_ms: None,
                remaining_ms: Some(millis(remaining)),
                increment_ms: Some(millis(increment)),
                opponent_remaining_ms: opponent_remaining.map(millis),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: fn(u64) -> Duration = Duration::from_millis;

    #[test]
    fn parses_and_prints_time_controls() {
        assert_eq!(
            "100ms".parse::<TimeControl>(),
            Ok(TimeControl::MoveTime(MS(100)))
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
                base: MS(10_000),
                increment: MS(0)
            })
        );
        let clock: TimeControl = "10s+100ms".parse().unwrap();
        assert_eq!(clock.to_string(), "10s+100ms");
        assert_eq!(clock.to_string().parse::<TimeControl>(), Ok(clock));
        assert!("fast".parse::<TimeControl>().is_err());
        assert!("0s+1s".parse::<TimeControl>().is_err());
    }

    #[test]
    fn absurd_times_are_refused_when_read() {
        for s in ["500000000000years", "25h", "1day 1s"] {
            let e = parse_duration(s).unwrap_err().to_string();
            assert!(e.contains("maximum of 1day"), "{s}: {e}");
        }
        assert_eq!(parse_duration("24h"), Ok(MAX_TIME));
        assert!("1s+500000000000years".parse::<TimeControl>().is_err());
        assert!("500000000000years+1s".parse::<TimeControl>().is_err());
    }

    #[test]
    fn limits_travel_as_milliseconds() {
        let t = TimeLimit::MoveTime(MS(5));
        assert_eq!(serde_json::to_string(&t).unwrap(), r#"{"move_ms":5}"#);
        let c: TimeLimit = serde_json::from_str(r#"{"remaining_ms":10}"#).unwrap();
        assert_eq!(
            c,
            TimeLimit::Clock {
                remaining: MS(10),
                increment: MS(0),
                opponent_remaining: None
            }
        );
        let full = TimeLimit::Clock {
            remaining: MS(60_000),
            increment: MS(100),
            opponent_remaining: Some(MS(59_000)),
        };
        let line = serde_json::to_string(&full).unwrap();
        assert_eq!(
            line,
            r#"{"remaining_ms":60000,"increment_ms":100,"opponent_remaining_ms":59000}"#
        );
        assert_eq!(serde_json::from_str::<TimeLimit>(&line).unwrap(), full);
        assert!(serde_json::from_str::<TimeLimit>(r#"{"move_ms":1,"remaining_ms":2}"#).is_err());
        let e = serde_json::from_str::<TimeLimit>("{}")
            .unwrap_err()
            .to_string();
        assert!(e.contains("move_ms"), "{e}");
        assert_eq!(TimeLimit::MoveTime(MS(250)).budget(), MS(200));
    }
}
