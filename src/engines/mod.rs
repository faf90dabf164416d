//! The built-in engines, each run as a separate process by `kalaha engine NAME`.
//!
//! An engine is a [`Player`]: it chooses moves; the protocol loop around it (reading the
//! referee's lines, answering them) is shared by all of them. [`builtin`] builds one by
//! name; [`play_game`] plays two players against each other in-process (for tests and
//! strength measurements, no processes involved).

mod arena;
mod options;
mod player;
mod search;
mod searching;
mod serve;
mod simple;

pub use arena::{GameRecord, play_game};
pub use player::{EngineOption, Limits, OptionKind, Player, SearchInfo};
pub use search::{Evaluation, Iteration, Searcher};
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
mod tests {
    use super::*;

    #[test]
    fn every_name_builds_an_engine_of_that_name_with_valid_option_defaults() {
        for &name in BUILTIN_NAMES {
            let mut p = builtin(name).unwrap();
            assert_eq!(p.name(), name);
            for opt in p.options() {
                let default = match &opt.kind {
                    OptionKind::Int { default, min, max } => {
                        assert!(min <= default && default <= max, "{name} {}", opt.name);
                        serde_json::json!(default)
                    }
                    OptionKind::Bool { default } => serde_json::json!(default),
                    OptionKind::String { default } | OptionKind::Choice { default, .. } => {
                        serde_json::json!(default)
                    }
                };
                p.set_option(&opt.name, &default).unwrap();
            }
        }
        assert!(builtin("stockfish").is_none());
    }
}
