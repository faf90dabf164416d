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

    /// A position a few sowings into a game of the default rules, different per `n`.
    fn start_after(n: u64) -> crate::rules::Position {
        let mut pos = crate::rules::Position::start(crate::rules::Rules::default());
        for i in 0..3 {
            let moves: Vec<u8> = pos.legal_moves().collect();
            pos = pos
                .play(moves[((n + i) as usize * 7) % moves.len()] as i64)
                .unwrap();
        }
        pos
    }

    #[test]
    fn a_process_plays_a_game_alike_whatever_it_played_before() {
        let limits = Limits {
            move_time: Some(std::time::Duration::from_secs(20)),
            ..Limits::default()
        };
        let engine = |name: &str| {
            let mut p = builtin(name).unwrap();
            if name == "hard" {
                p.set_option("depth", &serde_json::json!(5)).unwrap();
            }
            if name != "medium" && name != "hard" {
                p.set_option("seed", &serde_json::json!(3)).unwrap();
            }
            p
        };
        // The opponent is a fresh `greedy` in every game: it has no memory of its own.
        let game = |p: &mut dyn Player, id: &str, n: u64, south: bool| {
            let mut other = GreedyPlayer;
            let start = start_after(n);
            if south {
                play_game(id, p, &mut other, &start, &limits)
            } else {
                play_game(id, &mut other, p, &start, &limits)
            }
        };
        for name in ["random", "easy", "medium", "hard"] {
            let mut fresh = engine(name);
            let x_fresh = game(fresh.as_mut(), "x", 1, true);
            let mut used = engine(name);
            game(used.as_mut(), "y", 2, false);
            game(used.as_mut(), "z", 5, true);
            let x_used = game(used.as_mut(), "x", 1, true);
            assert_eq!(x_used, x_fresh, "{name}");
        }
    }
}
