//! The interface every built-in engine implements.

use crate::protocol::EngineOption;
use crate::record::{SearchInfo, TimeLimit};
use crate::rules::{Move, Position, Rules, Side};

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
    /// the whole game so far; `time` is the time of the `go` (`None`: none was given, think
    /// for the engine's default time); `info` may be called any number of times with
    /// search reports.
    fn choose_move(
        &mut self,
        pos: &Position,
        history: &[Move],
        time: Option<TimeLimit>,
        info: &mut dyn FnMut(SearchInfo),
    ) -> u8;
}
