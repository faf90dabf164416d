//! The built-in engines, each run as a separate process by `kalaha engine NAME`.
//!
//! An engine is a [`Player`]: it chooses moves; the protocol loop around it (reading the
//! referee's lines, answering them) is shared by all of them. [`builtin`] builds one by
//! name; [`InProcess`] lets the referee play one without a process (for tests and strength
//! measurements).

mod in_process;
mod options;
mod player;
mod searching;
mod serve;
mod simple;

pub use in_process::{InProcess, Misbehaviour};
pub use kalaha_core::search::{Evaluation, Iteration, Searcher, first_guess};
pub use player::Player;
pub use searching::{DEFAULT_MOVE_TIME, HardPlayer, MediumPlayer, PerfectPlayer};
pub use serve::serve;
pub use simple::{EasyPlayer, FirstPlayer, GreedyPlayer, RandomPlayer, turn_gain};

/// The names of the built-in engines, weakest first (roughly).
pub const BUILTIN_NAMES: &[&str] = &[
    "random", "first", "easy", "greedy", "medium", "hard", "perfect",
];

/// A built-in engine with its default options, `None` for an unknown name.
pub fn builtin(name: &str) -> Option<Box<dyn Player>> {
    Some(match name {
        "random" => Box::new(RandomPlayer::default()),
        "first" => Box::new(FirstPlayer),
        "easy" => Box::new(EasyPlayer::default()),
        "greedy" => Box::new(GreedyPlayer),
        "medium" => Box::new(MediumPlayer::default()),
        "hard" => Box::new(HardPlayer::default()),
        "perfect" => Box::new(PerfectPlayer::default()),
        _ => return None,
    })
}

#[cfg(test)]
mod tests;
