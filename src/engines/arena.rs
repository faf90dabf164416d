//! Games between two in-process players, straight on the rules library: for tests and
//! quick strength measurements of the built-in engines (the referee plays real games
//! between processes).

use super::{Limits, Player};
use crate::rules::{Move, Outcome, Position, Side};

/// A finished game: every move and the outcome.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameRecord {
    pub moves: Vec<Move>,
    pub outcome: Outcome,
}

/// Plays game `game` (its id, as in `new_game`) of `south` against `north` from `start`
/// (which may be after an opening) to the end, giving each move `limits`. Panics if a
/// player chooses an illegal move.
pub fn play_game(
    game: &str,
    south: &mut dyn Player,
    north: &mut dyn Player,
    start: &Position,
    limits: &Limits,
) -> GameRecord {
    let rules = *start.rules();
    south.new_game(game, rules, Side::South);
    north.new_game(game, rules, Side::North);
    let mut pos = *start;
    let mut moves = Vec::new();
    while !pos.is_over() {
        let side = pos.to_move();
        let player: &mut dyn Player = match side {
            Side::South => &mut *south,
            Side::North => &mut *north,
        };
        let pit = player.choose_move(&pos, &moves, limits, &mut |_| {});
        pos = pos
            .play(pit as i64)
            .unwrap_or_else(|e| panic!("{} chose an illegal move in {pos:?}: {e}", player.name()));
        moves.push(Move { side, pit });
    }
    GameRecord {
        moves,
        outcome: pos.outcome().expect("the game is over"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engines::{BUILTIN_NAMES, builtin};
    use crate::rules::{Rules, Sweep};
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use std::time::Duration;

    /// A start position after `plies` random sowings, so that deterministic players play
    /// different games.
    pub(crate) fn opening(rules: Rules, plies: usize, seed: u64) -> Position {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut pos = Position::start(rules);
        for _ in 0..plies {
            let moves: Vec<u8> = pos.legal_moves().collect();
            pos = pos
                .play(moves[rng.random_range(0..moves.len())] as i64)
                .unwrap();
            if pos.is_over() {
                return Position::start(rules);
            }
        }
        pos
    }

    /// Points of `a` (1 a win, 0.5 a draw) over a pair of games per opening, seats swapped.
    fn score(
        a: &str,
        b: &str,
        rules: Rules,
        openings: u64,
        limits: &Limits,
        set: &dyn Fn(&mut dyn Player),
    ) -> (f64, u32) {
        let mut points = 0.0;
        let mut games = 0;
        for seed in 0..openings {
            let start = opening(rules, 2, seed);
            for a_south in [true, false] {
                let mut pa = builtin(a).unwrap();
                let mut pb = builtin(b).unwrap();
                set(pa.as_mut());
                set(pb.as_mut());
                let rec = if a_south {
                    play_game("g", pa.as_mut(), pb.as_mut(), &start, limits)
                } else {
                    play_game("g", pb.as_mut(), pa.as_mut(), &start, limits)
                };
                let a_side = if a_south { Side::South } else { Side::North };
                points += match rec.outcome.winner {
                    Some(w) if w == a_side => 1.0,
                    Some(_) => 0.0,
                    None => 0.5,
                };
                games += 1;
            }
        }
        (points, games)
    }

    #[test]
    fn every_engine_finishes_games_with_legal_moves_in_every_variant() {
        let limits = Limits {
            move_time: Some(Duration::from_millis(5)),
            ..Limits::default()
        };
        for sweep in Sweep::ALL {
            let rules = Rules::new(4, 3, sweep == Sweep::None, sweep).unwrap();
            for &a in BUILTIN_NAMES {
                let mut pa = builtin(a).unwrap();
                let mut pb = builtin("random").unwrap();
                let rec = play_game(
                    "g",
                    pa.as_mut(),
                    pb.as_mut(),
                    &Position::start(rules),
                    &limits,
                );
                assert!(!rec.moves.is_empty());
            }
        }
    }

    #[test]
    fn stronger_levels_beat_weaker_ones() {
        if cfg!(debug_assertions) {
            return;
        }
        let rules = Rules::default();
        let limits = Limits {
            move_time: Some(Duration::from_secs(10)),
            ..Limits::default()
        };
        let none = |_: &mut dyn Player| {};
        let depth8 = |p: &mut dyn Player| {
            if p.name() == "hard" {
                p.set_option("depth", &serde_json::json!(8)).unwrap();
            }
        };
        let (pts, games) = score("greedy", "random", rules, 10, &limits, &none);
        assert!(pts >= 0.8 * games as f64, "greedy vs random {pts}/{games}");
        let (pts, games) = score("hard", "random", rules, 10, &limits, &depth8);
        assert!(pts >= 0.9 * games as f64, "hard vs random {pts}/{games}");
        let (pts, games) = score("hard", "greedy", rules, 10, &limits, &depth8);
        assert!(pts >= 0.6 * games as f64, "hard vs greedy {pts}/{games}");
    }

    /// Compares horizon evaluations of `hard`: `KALAHA_EVAL_A=side,extra` against
    /// `KALAHA_EVAL_B` (or greedy when unset).
    #[test]
    #[ignore]
    fn eval_experiment() {
        use crate::engines::{Evaluation, GreedyPlayer, HardPlayer};
        let parse = |v: &str| {
            let (a, b) = v.split_once(',').unwrap();
            Evaluation {
                side_weight: a.parse().unwrap(),
                extra_turn_weight: b.parse().unwrap(),
            }
        };
        let ea = parse(&std::env::var("KALAHA_EVAL_A").unwrap());
        let eb = std::env::var("KALAHA_EVAL_B").ok().map(|v| parse(&v));
        let ms: u64 = std::env::var("KALAHA_MOVE_MS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(20);
        let limits = Limits {
            move_time: Some(Duration::from_millis(ms)),
            ..Limits::default()
        };
        let rules = Rules::default();
        let mut probe = HardPlayer::with_evaluation(0, 16, ea);
        let mut last = None;
        probe.choose_move(&Position::start(rules), &[], &limits, &mut |i| {
            last = Some(i)
        });
        println!("from the start: {last:?}");
        let mut points = 0.0;
        let mut games = 0;
        let mut margin = 0i64;
        for seed in 0..20 {
            let start = opening(rules, 2, seed);
            for a_south in [true, false] {
                let mut pa = HardPlayer::with_evaluation(0, 16, ea);
                let mut pb: Box<dyn Player> = match eb {
                    Some(e) => Box::new(HardPlayer::with_evaluation(0, 16, e)),
                    None => Box::new(GreedyPlayer),
                };
                let rec = if a_south {
                    play_game("g", &mut pa, pb.as_mut(), &start, &limits)
                } else {
                    play_game("g", pb.as_mut(), &mut pa, &start, &limits)
                };
                let a_side = if a_south { Side::South } else { Side::North };
                let m = rec.outcome.south as i64 - rec.outcome.north as i64;
                margin += if a_south { m } else { -m };
                points += match rec.outcome.winner {
                    Some(w) if w == a_side => 1.0,
                    Some(_) => 0.0,
                    None => 0.5,
                };
                games += 1;
            }
        }
        println!("eval {ea:?} vs {eb:?}: {points}/{games}, margin {margin}");
    }

    /// The strength table for the engines' README: `cargo test --release -- --ignored
    /// --nocapture strength_table`.
    #[test]
    #[ignore]
    fn strength_table() {
        let rules = Rules::default();
        let ms: u64 = std::env::var("KALAHA_MOVE_MS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(50);
        let openings: u64 = std::env::var("KALAHA_OPENINGS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(20);
        let pairs: Vec<(String, String)> = std::env::var("KALAHA_PAIRS")
            .unwrap_or_else(|_| {
                "hard:random,hard:greedy,hard:medium,hard:easy,medium:greedy,greedy:random,easy:random,perfect:hard".into()
            })
            .split(',')
            .map(|p| {
                let (a, b) = p.split_once(':').unwrap();
                (a.to_string(), b.to_string())
            })
            .collect();
        let limits = Limits {
            move_time: Some(Duration::from_millis(ms)),
            ..Limits::default()
        };
        for (a, b) in pairs {
            let (pts, games) = score(&a, &b, rules, openings, &limits, &|_| {});
            println!("{a} vs {b}: {pts}/{games} at {ms} ms per move, {rules}");
        }
    }
}
