//! The time of both engines in one game.
//!
//! With a fixed time per move, every `go` gets the move time, and the deadline is the move
//! time plus the margin. With a game clock, each move is charged the time it really took;
//! a clock may run below zero by at most the margin over the whole game: the margin is a
//! tolerance on the clock reaching zero, granted once, not a gift per move, so every time
//! a move overdraws the clock the overdraft is taken from the margin for good (an
//! increment refills the clock, never the margin).

use crate::record::{TimeControl, TimeLimit};
use crate::rules::Side;
use std::time::Duration;

/// Both engines' clocks.
#[derive(Clone, Debug)]
pub(crate) struct Clocks {
    control: [TimeControl; 2],
    margin: Duration,
    /// Nanoseconds left on each clock (negative: overdrawn, by at most the margin).
    left: [i128; 2],
    /// Nanoseconds of margin each side has not used yet (on a clock).
    margin_left: [i128; 2],
}

fn nanos(d: Duration) -> i128 {
    d.as_nanos() as i128
}

fn duration(n: i128) -> Duration {
    Duration::from_nanos(n.clamp(0, u64::MAX as i128) as u64)
}

impl Clocks {
    pub(crate) fn new(control: [TimeControl; 2], margin: Duration) -> Clocks {
        Clocks {
            control,
            margin,
            left: control.map(|c| nanos(c.first_limit())),
            margin_left: [nanos(margin); 2],
        }
    }

    /// The time `side` is told it has, and the deadline of its move (time plus the
    /// margin still unused).
    pub(crate) fn limit(&self, side: Side) -> (TimeLimit, Duration) {
        let i = side.index();
        match self.control[i] {
            TimeControl::MoveTime(t) => (TimeLimit::MoveTime(t), t + self.margin),
            TimeControl::Clock { increment, .. } => {
                let limit = TimeLimit::Clock {
                    remaining: duration(self.left[i]),
                    increment,
                    opponent_remaining: Some(duration(self.left[1 - i])),
                };
                // An overdrawn clock has already taken what it is below zero from the margin.
                (limit, duration(self.left[i].max(0) + self.margin_left[i]))
            }
        }
    }

    /// Charges `side` for a move that took `elapsed`; the error says how the time ran out.
    pub(crate) fn charge(&mut self, side: Side, elapsed: Duration) -> Result<(), String> {
        let i = side.index();
        match self.control[i] {
            TimeControl::MoveTime(t) => {
                if elapsed > t + self.margin {
                    return Err(format!(
                        "moved after {} ms, {} ms allowed with the margin",
                        elapsed.as_millis(),
                        (t + self.margin).as_millis()
                    ));
                }
            }
            TimeControl::Clock { increment, .. } => {
                let before = self.left[i];
                let after = before - nanos(elapsed);
                // Below zero, by what the clock was not already below it.
                let overdrawn = (-after).max(0) - (-before).max(0);
                if overdrawn > self.margin_left[i] {
                    return Err(format!(
                        "the clock ran out: moved after {} ms with {} ms left ({} ms of margin \
                         for the whole game, {} ms of it unused)",
                        elapsed.as_millis(),
                        before / 1_000_000,
                        self.margin.as_millis(),
                        self.margin_left[i].max(0) / 1_000_000
                    ));
                }
                self.margin_left[i] -= overdrawn.max(0);
                self.left[i] = after + nanos(increment);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: fn(u64) -> Duration = Duration::from_millis;

    #[test]
    fn a_move_time_is_the_same_for_every_move() {
        let mut c = Clocks::new([TimeControl::MoveTime(MS(100)); 2], MS(50));
        assert_eq!(
            c.limit(Side::South),
            (TimeLimit::MoveTime(MS(100)), MS(150))
        );
        assert!(c.charge(Side::South, MS(149)).is_ok());
        assert!(c.charge(Side::South, MS(149)).is_ok());
        assert!(c.charge(Side::South, MS(151)).is_err());
    }

    #[test]
    fn the_margin_is_granted_once_per_game_on_a_clock() {
        let clock = TimeControl::Clock {
            base: MS(500),
            increment: MS(0),
        };
        let mut c = Clocks::new([clock; 2], MS(80));
        // 715 ms in all over a 500 ms clock with 80 ms of margin: out of time.
        assert!(c.charge(Side::South, MS(300)).is_ok());
        assert!(c.charge(Side::South, MS(250)).is_ok()); // 50 ms overdrawn
        let (limit, deadline) = c.limit(Side::South);
        assert_eq!(limit.available(), MS(0));
        assert_eq!(deadline, MS(30));
        let e = c.charge(Side::South, MS(165)).unwrap_err();
        assert!(e.contains("clock ran out"), "{e}");
        // The other clock is untouched, and reported to the mover.
        let (limit, _) = c.limit(Side::North);
        assert_eq!(limit.available(), MS(500));
    }

    /// An engine that overdraws its clock a little on every move uses up the margin: the
    /// increments refill its clock, not its margin.
    #[test]
    fn overdrawing_on_every_move_uses_the_margin_up() {
        let clock = TimeControl::Clock {
            base: MS(300),
            increment: MS(100),
        };
        let mut c = Clocks::new([clock; 2], MS(50));
        // 25 ms over on the first move, then 25 ms over what is left: 50 ms in all.
        assert!(c.charge(Side::South, MS(325)).is_ok());
        let (limit, deadline) = c.limit(Side::South);
        assert_eq!(limit.available(), MS(75));
        assert_eq!(deadline, MS(100));
        assert!(c.charge(Side::South, MS(100)).is_ok());
        let (limit, deadline) = c.limit(Side::South);
        assert_eq!(limit.available(), MS(75));
        assert_eq!(deadline, MS(75));
        // Nothing of the margin is left: 1 ms over is out of time.
        let e = c.charge(Side::South, MS(76)).unwrap_err();
        assert!(e.contains("0 ms of it unused"), "{e}");
    }

    #[test]
    fn increments_are_added_after_each_move() {
        let clock = TimeControl::Clock {
            base: MS(100),
            increment: MS(10),
        };
        let mut c = Clocks::new([clock; 2], MS(0));
        c.charge(Side::North, MS(40)).unwrap();
        let (limit, deadline) = c.limit(Side::North);
        assert_eq!(
            limit,
            TimeLimit::Clock {
                remaining: MS(70),
                increment: MS(10),
                opponent_remaining: Some(MS(100)),
            }
        );
        assert_eq!(deadline, MS(70));
        assert!(c.charge(Side::North, MS(71)).is_err());
    }
}
