//! The searching engines: `medium` (a fixed shallow lookahead on the stores), `hard`
//! (iterative deepening within the time given, with a positional evaluation) and
//! `perfect` (the exact solver when it finishes in time, `hard` otherwise).

use super::options::{int_option, parse_int, unknown_option};
use super::search::{Evaluation, Iteration, SCALE, Searcher};
use super::{EngineOption, Limits, Player, SearchInfo};
use crate::rules::{Move, Position};
use crate::solver::{Budget, Solver};
use std::time::{Duration, Instant};

/// The time `hard` and `perfect` spend on a move when the referee gives no time at all.
pub const DEFAULT_MOVE_TIME: Duration = Duration::from_secs(1);

fn report(it: &Iteration) -> SearchInfo {
    SearchInfo {
        depth: Some(it.depth),
        score: Some(((it.score as f64) / SCALE as f64).round() as i64),
        nodes: Some(it.nodes),
        time_ms: Some(it.elapsed.as_millis() as u64),
        pv: it.pv.clone(),
    }
}

/// Looks `depth` sowings ahead (default 3) and counts only the stores: it sees extra
/// turns and direct captures, and nothing of the position beyond them.
pub struct MediumPlayer {
    depth: u32,
    searcher: Searcher,
}

impl Default for MediumPlayer {
    fn default() -> Self {
        MediumPlayer {
            depth: 3,
            searcher: Searcher::new(1).with_eval(Evaluation::stores_only()),
        }
    }
}

impl Player for MediumPlayer {
    fn name(&self) -> &str {
        "medium"
    }

    fn options(&self) -> Vec<EngineOption> {
        vec![int_option("depth", 3, 1, 8)]
    }

    fn set_option(&mut self, name: &str, value: &serde_json::Value) -> Result<(), String> {
        match name {
            "depth" => {
                self.depth = parse_int(name, value, 1, 8)? as u32;
                Ok(())
            }
            _ => Err(unknown_option(self.name(), name, &self.options())),
        }
    }

    fn choose_move(
        &mut self,
        pos: &Position,
        _history: &[Move],
        _limits: &Limits,
        info: &mut dyn FnMut(SearchInfo),
    ) -> u8 {
        let it = self.searcher.iterate(pos, self.depth, None, &mut |_| {});
        info(report(&it));
        it.best
    }
}

/// Iterative-deepening alpha-beta with a transposition table, within the time given
/// (`Limits::budget`, or [`DEFAULT_MOVE_TIME`]). Options: `depth` (a maximum depth, 0 for
/// none) and `hash_mb` (table size).
pub struct HardPlayer {
    max_depth: u32,
    hash_mb: usize,
    searcher: Searcher,
}

impl Default for HardPlayer {
    fn default() -> Self {
        HardPlayer::new(0, 16)
    }
}

impl HardPlayer {
    pub fn new(max_depth: u32, hash_mb: usize) -> HardPlayer {
        HardPlayer {
            max_depth,
            hash_mb,
            searcher: Searcher::new(hash_mb),
        }
    }

    /// A `hard` player with a fixed horizon evaluation instead of the rules' default.
    pub fn with_evaluation(max_depth: u32, hash_mb: usize, eval: Evaluation) -> HardPlayer {
        HardPlayer {
            max_depth,
            hash_mb,
            searcher: Searcher::new(hash_mb).with_eval(eval),
        }
    }

    fn think(&mut self, pos: &Position, deadline: Instant, info: &mut dyn FnMut(SearchInfo)) -> u8 {
        let it = self
            .searcher
            .iterate(pos, self.max_depth, Some(deadline), &mut |it| {
                info(report(it))
            });
        it.best
    }
}

fn hard_options() -> Vec<EngineOption> {
    vec![
        int_option("depth", 0, 0, 250),
        int_option("hash_mb", 16, 1, 65536),
    ]
}

impl Player for HardPlayer {
    fn name(&self) -> &str {
        "hard"
    }

    fn options(&self) -> Vec<EngineOption> {
        hard_options()
    }

    fn set_option(&mut self, name: &str, value: &serde_json::Value) -> Result<(), String> {
        match name {
            "depth" => {
                self.max_depth = parse_int(name, value, 0, 250)? as u32;
                Ok(())
            }
            "hash_mb" => {
                let mb = parse_int(name, value, 1, 65536)? as usize;
                if mb != self.hash_mb {
                    *self = HardPlayer::new(self.max_depth, mb);
                }
                Ok(())
            }
            _ => Err(unknown_option(self.name(), name, &self.options())),
        }
    }

    fn choose_move(
        &mut self,
        pos: &Position,
        _history: &[Move],
        limits: &Limits,
        info: &mut dyn FnMut(SearchInfo),
    ) -> u8 {
        let started = Instant::now();
        let budget = limits.budget().unwrap_or(DEFAULT_MOVE_TIME);
        self.think(pos, started + budget, info)
    }
}

/// Plays the exact solver's move when the solver finishes within half the time given;
/// otherwise (or for the rest of the time) searches like `hard`. Options: `hash_mb` (the
/// solver's table; `hard`'s gets a quarter of it) and `depth` (for the fallback).
pub struct PerfectPlayer {
    hash_mb: usize,
    solver: Solver,
    hard: HardPlayer,
}

impl Default for PerfectPlayer {
    fn default() -> Self {
        PerfectPlayer::new(64)
    }
}

impl PerfectPlayer {
    pub fn new(hash_mb: usize) -> PerfectPlayer {
        PerfectPlayer {
            hash_mb,
            solver: Solver::new(hash_mb),
            hard: HardPlayer::new(0, (hash_mb / 4).max(1)),
        }
    }
}

impl Player for PerfectPlayer {
    fn name(&self) -> &str {
        "perfect"
    }

    fn options(&self) -> Vec<EngineOption> {
        vec![
            int_option("depth", 0, 0, 250),
            int_option("hash_mb", 64, 1, 65536),
        ]
    }

    fn set_option(&mut self, name: &str, value: &serde_json::Value) -> Result<(), String> {
        match name {
            "depth" => self.hard.set_option(name, value),
            "hash_mb" => {
                let mb = parse_int(name, value, 1, 65536)? as usize;
                if mb != self.hash_mb {
                    let depth = self.hard.max_depth;
                    *self = PerfectPlayer::new(mb);
                    self.hard.max_depth = depth;
                }
                Ok(())
            }
            _ => Err(unknown_option(self.name(), name, &self.options())),
        }
    }

    fn choose_move(
        &mut self,
        pos: &Position,
        _history: &[Move],
        limits: &Limits,
        info: &mut dyn FnMut(SearchInfo),
    ) -> u8 {
        let started = Instant::now();
        let budget = limits.budget().unwrap_or(DEFAULT_MOVE_TIME);
        let solve_budget = Budget {
            deadline: Some(started + budget / 2),
            max_nodes: None,
        };
        if let Some(sol) = self.solver.solve_within(pos, solve_budget)
            && let Some(best) = sol.best_move()
        {
            info(SearchInfo {
                depth: Some(sol.pv.len() as u32),
                score: Some(sol.value as i64),
                nodes: Some(sol.nodes),
                time_ms: Some(started.elapsed().as_millis() as u64),
                pv: sol.pv.iter().map(|m| m.pit).collect(),
            });
            return best;
        }
        self.hard.think(pos, started + budget, info)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{Rules, Sweep};

    fn limits_ms(ms: u64) -> Limits {
        Limits {
            move_time: Some(Duration::from_millis(ms)),
            ..Limits::default()
        }
    }

    #[test]
    fn hard_reports_iterations_and_respects_the_depth_option() {
        let mut hard = HardPlayer::default();
        hard.set_option("depth", &serde_json::json!(4)).unwrap();
        let pos = Position::start(Rules::default());
        let mut infos = Vec::new();
        let pit = hard.choose_move(&pos, &[], &limits_ms(2000), &mut |i| infos.push(i));
        assert!(pos.play(pit as i64).is_ok());
        let depths: Vec<u32> = infos.iter().filter_map(|i| i.depth).collect();
        assert_eq!(depths, vec![1, 2, 3, 4]);
        let last = infos.last().unwrap();
        assert_eq!(last.pv[0], pit);
        assert!(last.nodes.unwrap() > 0);
        assert!(hard.set_option("depth", &serde_json::json!(-1)).is_err());
        assert!(hard.set_option("speed", &serde_json::json!(1)).is_err());
    }

    #[test]
    fn hard_keeps_to_its_time() {
        let mut hard = HardPlayer::default();
        let pos = Position::start(Rules::new(6, 6, false, Sweep::Owner).unwrap());
        let t = Instant::now();
        hard.choose_move(&pos, &[], &limits_ms(100), &mut |_| {});
        assert!(
            t.elapsed() < Duration::from_millis(150),
            "{:?}",
            t.elapsed()
        );
    }

    #[test]
    fn perfect_plays_the_solved_move_on_small_boards() {
        let rules = Rules::new(3, 3, false, Sweep::Owner).unwrap();
        let pos = Position::start(rules);
        let sol = Solver::new(4).solve(&pos);
        let mut perfect = PerfectPlayer::new(4);
        let mut infos = Vec::new();
        let pit = perfect.choose_move(&pos, &[], &limits_ms(5000), &mut |i| infos.push(i));
        // Any move achieving the value is perfect; check by solving the child.
        let child = pos.play(pit as i64).unwrap();
        let child_value = Solver::new(4).solve(&child).value;
        let value = if child.to_move() == pos.to_move() {
            child_value
        } else {
            -child_value
        };
        assert_eq!(value, sol.value);
        assert_eq!(infos[0].score, Some(sol.value as i64));
    }

    #[test]
    fn perfect_falls_back_to_search_on_big_boards() {
        let mut perfect = PerfectPlayer::new(4);
        let pos = Position::start(Rules::default());
        let t = Instant::now();
        let mut infos = Vec::new();
        let pit = perfect.choose_move(&pos, &[], &limits_ms(100), &mut |i| infos.push(i));
        assert!(pos.play(pit as i64).is_ok());
        assert!(t.elapsed() < Duration::from_millis(150));
        assert!(!infos.is_empty());
    }
}
