//! The searching engines: `medium` (a fixed shallow lookahead on the stores), `hard`
//! (iterative deepening within the time given, with a positional evaluation) and
//! `perfect` (the exact solver when it finishes in time, `hard` otherwise).

use super::Player;
use super::options::{int_option, parse_int, unknown_option};
use super::search::{Evaluation, Iteration, SCALE, Searcher};
use crate::protocol::EngineOption;
use crate::record::{SearchInfo, TimeLimit};
use crate::rules::{Move, Position, Rules, Side};
use crate::solver::{Budget, Solver, seeds_in_pits};
use std::time::{Duration, Instant};

/// The largest table `hard` and `perfect` accept, in MiB.
pub const MAX_HASH_MB: i64 = 1024;

/// `perfect` always tries the solver with at most this many seeds in the pits.
const SOLVER_SEEDS: u32 = 24;
/// Otherwise it tries it on every this many moves (and on every move once it succeeds).
const SOLVER_RETRY_EVERY: u32 = 3;

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

    fn new_game(&mut self, _game: &str, _rules: Rules, _side: Side) {
        self.searcher.clear();
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
        time: Option<TimeLimit>,
        info: &mut dyn FnMut(SearchInfo),
    ) -> u8 {
        // The depth is the limit; the time is only a safety net for huge boards.
        let deadline = Instant::now() + time.map_or(DEFAULT_MOVE_TIME, |t| t.budget());
        let it = self
            .searcher
            .iterate(pos, self.depth, Some(deadline), &mut |_| {});
        info(report(&it));
        it.best
    }
}

/// Iterative-deepening alpha-beta with a transposition table, within the time given
/// (`TimeLimit::budget`, or [`DEFAULT_MOVE_TIME`]). Options: `depth` (a maximum depth, 0 for
/// none) and `hash_mb` (table size).
pub struct HardPlayer {
    max_depth: u32,
    hash_mb: usize,
    eval: Option<Evaluation>,
    /// Built at the first search, so that setting options costs nothing.
    searcher: Option<Searcher>,
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
            eval: None,
            searcher: None,
        }
    }

    /// A `hard` player with a fixed horizon evaluation instead of the rules' default.
    pub fn with_evaluation(max_depth: u32, hash_mb: usize, eval: Evaluation) -> HardPlayer {
        HardPlayer {
            max_depth,
            hash_mb,
            eval: Some(eval),
            searcher: None,
        }
    }

    /// Builds the table now (it is otherwise built at the first move, on the clock).
    fn ensure_table(&mut self) -> &mut Searcher {
        let (hash_mb, eval) = (self.hash_mb, self.eval);
        self.searcher.get_or_insert_with(|| match eval {
            Some(e) => Searcher::new(hash_mb).with_eval(e),
            None => Searcher::new(hash_mb),
        })
    }

    fn think(&mut self, pos: &Position, deadline: Instant, info: &mut dyn FnMut(SearchInfo)) -> u8 {
        let max_depth = self.max_depth;
        let it = self
            .ensure_table()
            .iterate(pos, max_depth, Some(deadline), &mut |it| info(report(it)));
        it.best
    }
}

fn hard_options() -> Vec<EngineOption> {
    vec![
        int_option("depth", 0, 0, 250),
        int_option("hash_mb", 16, 1, MAX_HASH_MB),
    ]
}

impl Player for HardPlayer {
    fn name(&self) -> &str {
        "hard"
    }

    fn options(&self) -> Vec<EngineOption> {
        hard_options()
    }

    /// Builds the table if needed and empties it: each game starts afresh.
    fn new_game(&mut self, _game: &str, _rules: Rules, _side: Side) {
        self.ensure_table().clear();
    }

    fn set_option(&mut self, name: &str, value: &serde_json::Value) -> Result<(), String> {
        match name {
            "depth" => {
                self.max_depth = parse_int(name, value, 0, 250)? as u32;
                Ok(())
            }
            "hash_mb" => {
                let mb = parse_int(name, value, 1, MAX_HASH_MB)? as usize;
                if mb != self.hash_mb {
                    self.hash_mb = mb;
                    self.searcher = None;
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
        time: Option<TimeLimit>,
        info: &mut dyn FnMut(SearchInfo),
    ) -> u8 {
        let started = Instant::now();
        let budget = time.map_or(DEFAULT_MOVE_TIME, |t| t.budget());
        self.think(pos, started + budget, info)
    }
}

/// Plays the exact solver's move when the solver finishes within its share of the time
/// given (a fifth, or half once it has succeeded on the previous move); otherwise searches
/// like `hard` for the rest of the time. With many seeds in play the solver is tried only
/// every few moves. Options: `hash_mb` (the
/// solver's table; `hard`'s gets a quarter of it) and `depth` (for the fallback).
pub struct PerfectPlayer {
    hash_mb: usize,
    /// Built at the first move, so that setting options costs nothing.
    solver: Option<Solver>,
    hard: HardPlayer,
    /// Whether the solver finished in time on the previous move.
    solved_last: bool,
    /// Moves since the solver was last tried.
    skipped: u32,
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
            solver: None,
            hard: HardPlayer::new(0, (hash_mb / 4).max(1)),
            solved_last: false,
            skipped: 0,
        }
    }
}

impl Player for PerfectPlayer {
    fn name(&self) -> &str {
        "perfect"
    }

    fn new_game(&mut self, game: &str, rules: Rules, side: Side) {
        let hash_mb = self.hash_mb;
        // The solver's table keeps only exact values, true in every game: it is kept.
        self.solver.get_or_insert_with(|| Solver::new(hash_mb));
        self.hard.new_game(game, rules, side);
        self.solved_last = false;
        self.skipped = 0;
    }

    fn options(&self) -> Vec<EngineOption> {
        vec![
            int_option("depth", 0, 0, 250),
            int_option("hash_mb", 64, 1, MAX_HASH_MB),
        ]
    }

    fn set_option(&mut self, name: &str, value: &serde_json::Value) -> Result<(), String> {
        match name {
            "depth" => self.hard.set_option(name, value),
            "hash_mb" => {
                let mb = parse_int(name, value, 1, MAX_HASH_MB)? as usize;
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
        time: Option<TimeLimit>,
        info: &mut dyn FnMut(SearchInfo),
    ) -> u8 {
        let started = Instant::now();
        let budget = time.map_or(DEFAULT_MOVE_TIME, |t| t.budget());
        // Half the time once the solver is getting through (the rest of the game is then
        // mostly in its table), a fifth while it is not.
        let share = if self.solved_last { 0.5 } else { 0.2 };
        let solve_budget = Budget {
            deadline: Some(started + budget.mul_f64(share)),
            max_nodes: None,
        };
        // While the solver is out of its depth (many seeds still in play), try it only
        // every few moves: what it learns stays in its table.
        let seeds = seeds_in_pits(pos) as u32;
        let worth_trying =
            self.solved_last || seeds <= SOLVER_SEEDS || self.skipped >= SOLVER_RETRY_EVERY;
        if !worth_trying {
            self.skipped += 1;
            return self.hard.think(pos, started + budget, info);
        }
        self.skipped = 0;
        let hash_mb = self.hash_mb;
        let solver = self.solver.get_or_insert_with(|| Solver::new(hash_mb));
        let solution = solver.solve_within(pos, solve_budget);
        self.solved_last = solution.is_some();
        if let Some(sol) = solution
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
    use crate::rules::Sweep;

    fn limits_ms(ms: u64) -> Option<TimeLimit> {
        Some(TimeLimit::MoveTime(std::time::Duration::from_millis(ms)))
    }

    #[test]
    fn hard_reports_iterations_and_respects_the_depth_option() {
        let mut hard = HardPlayer::default();
        hard.set_option("depth", &serde_json::json!(4)).unwrap();
        let pos = Position::start(Rules::default());
        let mut infos = Vec::new();
        let pit = hard.choose_move(&pos, &[], limits_ms(2000), &mut |i| infos.push(i));
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
        hard.new_game("g", *pos.rules(), Side::South);
        let t = Instant::now();
        hard.choose_move(&pos, &[], limits_ms(100), &mut |_| {});
        assert!(
            cfg!(debug_assertions) || t.elapsed() < Duration::from_millis(150),
            "{:?}",
            t.elapsed()
        );
    }

    #[test]
    fn every_engine_answers_in_time_on_extreme_boards() {
        for (pits, seeds) in [(1, 1), (1, 100), (16, 1), (16, 100)] {
            let rules = Rules::new(pits, seeds, true, Sweep::EmptySide).unwrap();
            let pos = Position::start(rules);
            for &name in crate::engines::BUILTIN_NAMES {
                let mut p = crate::engines::builtin(name).unwrap();
                p.new_game("g", rules, Side::South);
                let t = Instant::now();
                let pit = p.choose_move(&pos, &[], limits_ms(50), &mut |_| {});
                assert!(pos.play(pit as i64).is_ok(), "{name} {rules}");
                assert!(
                    cfg!(debug_assertions) || t.elapsed() < Duration::from_millis(300),
                    "{name} {rules}: {:?}",
                    t.elapsed()
                );
            }
        }
    }

    #[test]
    fn perfect_plays_the_solved_move_on_small_boards() {
        let rules = Rules::new(3, 3, false, Sweep::Owner).unwrap();
        let pos = Position::start(rules);
        let sol = Solver::new(4).solve(&pos);
        let mut perfect = PerfectPlayer::new(4);
        let mut infos = Vec::new();
        let pit = perfect.choose_move(&pos, &[], limits_ms(5000), &mut |i| infos.push(i));
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
        perfect.new_game("g", *pos.rules(), Side::South);
        let t = Instant::now();
        let mut infos = Vec::new();
        let pit = perfect.choose_move(&pos, &[], limits_ms(100), &mut |i| infos.push(i));
        assert!(pos.play(pit as i64).is_ok());
        assert!(cfg!(debug_assertions) || t.elapsed() < Duration::from_millis(200));
        assert!(!infos.is_empty());
    }
}
