//! The interface every built-in engine implements, and the option and search-info types
//! that the protocol carries (their wire form is specified in `protocol.md`).

use crate::rules::{Move, Position, Rules, Side};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// An option an engine declares in its `hello`: `{"name":..,"type":..,"default":..,...}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EngineOption {
    pub name: String,
    #[serde(flatten)]
    pub kind: OptionKind,
}

/// The type of an option, with its default and allowed values.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum OptionKind {
    Int {
        default: i64,
        min: i64,
        max: i64,
    },
    Bool {
        default: bool,
    },
    String {
        default: String,
    },
    Choice {
        default: String,
        values: Vec<String>,
    },
}

/// What an engine reports about its search; every field is optional on the wire.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SearchInfo {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth: Option<u32>,
    /// Seeds, from the mover's point of view.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_ms: Option<u64>,
    /// Principal variation, as pit numbers of the successive movers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pv: Vec<u8>,
}

/// The time an engine is given for one move, from the `go` message.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    /// A fixed time for this move.
    pub move_time: Option<Duration>,
    /// The mover's remaining game clock.
    pub remaining: Option<Duration>,
    /// Added to the mover's clock after each move.
    pub increment: Option<Duration>,
    pub opponent_remaining: Option<Duration>,
}

impl Limits {
    /// A conservative time to spend on this move: most of a fixed move time, or a slice of
    /// the remaining clock plus most of the increment; `None` when no time was given.
    pub fn budget(&self) -> Option<Duration> {
        if let Some(t) = self.move_time {
            return Some(t.mul_f64(0.8));
        }
        let remaining = self.remaining?;
        let inc = self.increment.unwrap_or_default();
        let budget = remaining / 25 + inc.mul_f64(0.8);
        Some(budget.min(remaining.mul_f64(0.5)))
    }
}

/// A move chooser. The protocol loop calls these in the order of the referee's messages.
pub trait Player: Send {
    /// The engine's name, as sent in `hello`.
    fn name(&self) -> &str;
    /// The options this engine declares.
    fn options(&self) -> Vec<EngineOption>;
    /// Sets an option; the error message is reported to the referee with a `log` line.
    fn set_option(&mut self, name: &str, value: &serde_json::Value) -> Result<(), String>;
    /// A new game begins: `game` is its id (unique within a tournament), played with
    /// `rules`, this engine playing `side`. Engines drop whatever they learned in earlier
    /// games here, so that their play depends only on their options, the game id and the
    /// game itself, not on which process plays which game.
    fn new_game(&mut self, _game: &str, _rules: Rules, _side: Side) {}
    /// Lines the engine has to say to the referee since it was last asked, as `(level,
    /// message)`: the protocol loop sends them as `log` messages after each `new_game` and
    /// each move.
    fn take_log(&mut self) -> Vec<(&'static str, String)> {
        Vec::new()
    }
    /// Chooses a legal pit for the side to move in `pos` (which is not over). `history` is
    /// the whole game so far; `info` may be called any number of times with search reports.
    fn choose_move(
        &mut self,
        pos: &Position,
        history: &[Move],
        limits: &Limits,
        info: &mut dyn FnMut(SearchInfo),
    ) -> u8;
}
