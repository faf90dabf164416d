//! The exact analysis of one game: the value of every position it passed through, and what
//! each sowing lost of it.

use crate::record::{GameRecord, Termination, clean_text};
use crate::rules::{Position, Rules, Side};
use crate::solver::{Book, Budget, EndgameTable, Solver, seeds_in_pits};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One sowing of a game and what it cost: a row of `analysis.csv`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PlyAnalysis {
    pub game: String,
    /// 1 for the first sowing from the start position (openings included).
    pub ply: u32,
    pub side: Side,
    /// The engine that chose the sowing; empty for a sowing of the opening.
    pub engine: String,
    pub pit: u8,
    /// The exact value of the position before the sowing for the side that sows (final
    /// store minus the other's under perfect play), `None` when the budget ran out.
    pub value_before: Option<i32>,
    /// The exact value after the sowing for the same side.
    pub value_after: Option<i32>,
    /// `None` when both values are exact; else the depth of the engines' search whose
    /// estimates they are (see [`ESTIMATE_DEPTH`]): the solver did not finish the position
    /// before or after the sowing.
    pub estimate_depth: Option<u32>,
}

impl PlyAnalysis {
    /// Seeds the sowing gave away: `value_before - value_after` (0 for a perfect sowing),
    /// when both are known.
    pub(crate) fn loss(&self) -> Option<i32> {
        Some(self.value_before? - self.value_after?)
    }

    /// Whether the values are estimates rather than exact.
    pub(crate) fn estimated(&self) -> bool {
        self.estimate_depth.is_some()
    }

    /// Whether an engine chose this sowing (not the opening).
    pub(crate) fn by_engine(&self) -> bool {
        !self.engine.is_empty()
    }
}

/// Whether a game's sowings are analysed: games played to their end or adjudicated (every
/// sowing in them was an engine's legal choice or the opening's); games lost by a fault are
/// not.
pub(crate) fn analysable(record: &GameRecord) -> bool {
    matches!(
        record.termination,
        Termination::Normal | Termination::Adjudicated
    )
}

/// The positions of a game from the start ([`GameRecord::replay`]), or an error naming the
/// game and what does not replay.
pub(crate) fn positions(record: &GameRecord) -> Result<Vec<Position>, String> {
    record
        .replay()
        .map_err(|e| format!("game {}: {e}", clean_text(&record.game)))
}

/// The exact value of `pos` for its side to move, or `None` when `budget` (per position)
/// runs out. `guess` (a value close to it) makes the search faster.
pub(crate) fn value_within(
    solver: &mut Solver,
    pos: &Position,
    budget: Option<Duration>,
    guess: Option<i32>,
) -> Option<i32> {
    if pos.is_over() {
        return Some(pos.store_margin(pos.to_move()));
    }
    let budget = Budget {
        deadline: budget.map(|d| Instant::now() + d),
        max_nodes: None,
    };
    solver
        .solve_observed(pos, budget, guess, &mut |_| {})
        .map(|s| s.value)
}

/// The order in which the positions of a game are solved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Order {
    /// From the start of the game to its end.
    Forward,
    /// From the end of the game back to its start.
    Backward,
}

/// The pits of a position, the side to move's row first: what its future gain (its value
/// minus the current store margin) depends on, whatever the stores and whoever is south.
/// With the rules, as the values of other rules differ.
type PitsKey = (Rules, Vec<u16>, Vec<u16>);

fn pits_key(pos: &Position) -> PitsKey {
    let me = pos.to_move();
    (
        *pos.rules(),
        pos.pits(me).to_vec(),
        pos.pits(me.opponent()).to_vec(),
    )
}

/// Analyses games one after the other with one solver, so that what it learns on one
/// position serves the next ones:
/// - one transposition table for all of them (its threads share it), kept between the
///   positions of a game and between games;
/// - the exact future gain of every position solved so far, kept for the whole run (the
///   games of a tournament share their start and the sowings of their openings, and often
///   more): a position seen before, in this game or another, is not solved again;
/// - the endgame table first (the solver looks positions with few seeds up in it);
/// - each position's search starts from the value of its neighbour on the line of play,
///   which is the same up to sign unless the sowing between them lost seeds; the first one
///   from the shipped opening book's bound, when it has the position.
pub(crate) struct Analyser {
    solver: Solver,
    known: HashMap<PitsKey, i32>,
    /// The rules whose shipped book values are in `known`.
    read_books: Vec<Rules>,
    /// Positions whose search ran out of a budget, with that budget: not tried again
    /// within as little (the pair of a game shares its opening).
    failed: HashMap<PitsKey, Option<Duration>>,
    estimates: Estimates,
    budget: Option<Duration>,
    budget_rule: Option<BudgetRule>,
    order: Order,
    estimate: bool,
}

/// What budget a position gets, given the analyser's own.
pub(crate) type BudgetRule = Box<dyn Fn(Option<Duration>) -> Option<Duration> + Send>;

impl Analyser {
    /// An analyser whose transposition table takes `hash_mb` MiB, searched by `threads`
    /// threads, giving each position at most `budget` (`None`: no limit).
    pub(crate) fn new(hash_mb: usize, threads: usize, budget: Option<Duration>) -> Analyser {
        let mut solver = Solver::new(hash_mb.max(1));
        solver.set_threads(threads);
        Analyser {
            solver,
            known: HashMap::new(),
            read_books: Vec::new(),
            failed: HashMap::new(),
            estimates: HashMap::new(),
            budget,
            budget_rule: None,
            // Measured with `kalaha analyze benches/data/hard-medium-6x4 --bench`: see
            // `DEFAULT_ORDER`.
            order: DEFAULT_ORDER,
            estimate: true,
        }
    }

    /// Whether sowings around a position the solver does not finish get estimated values
    /// (the default) or none.
    #[cfg(test)]
    pub(crate) fn set_estimates(&mut self, on: bool) {
        self.estimate = on;
    }

    /// Gives each position the budget `budget` says when its search starts, from the
    /// analyser's own budget (for an analysis that hurries when it falls behind).
    pub(crate) fn set_budget_rule(&mut self, budget: BudgetRule) {
        self.budget_rule = Some(budget);
    }

    /// Solves the positions of each game in `order`.
    pub(crate) fn set_order(&mut self, order: Order) {
        self.order = order;
    }

    /// The endgame table for the next games' rules (`None`: none).
    pub(crate) fn set_endgame(&mut self, table: Option<Arc<EndgameTable>>) {
        self.solver.set_endgame(table);
    }

    /// Takes `value` as the exact value of `pos` for its side to move (from an earlier
    /// analysis of the same rules).
    pub(crate) fn remember(&mut self, pos: &Position, value: i32) {
        if !pos.is_over() {
            self.known
                .insert(pits_key(pos), value - pos.store_margin(pos.to_move()));
        }
    }

    /// The exact value of `pos` for its side to move if known without a search.
    fn known_value(&self, pos: &Position) -> Option<i32> {
        if pos.is_over() {
            return Some(pos.store_margin(pos.to_move()));
        }
        self.known
            .get(&pits_key(pos))
            .map(|g| g + pos.store_margin(pos.to_move()))
    }

    /// The exact value of `pos` for its side to move, known to lie in `bounds` (proved),
    /// searched from `guess` if it is not known; `None` when the budget runs out. A
    /// position `inside_opening` gets [`OPENING_SHARE`] of the budget.
    fn exact(
        &mut self,
        pos: &Position,
        mut bounds: (i32, i32),
        guess: Option<i32>,
        inside_opening: bool,
    ) -> Option<i32> {
        if let Some(v) = self.known_value(pos) {
            return Some(v);
        }
        // The shipped opening book's value for the side to move, a proved lower bound
        // (exact along best play).
        if let Some((_, v)) = Book::builtin(pos.rules()).and_then(|b| b.lookup(pos)) {
            bounds.0 = bounds.0.max(v);
        }
        let guess = guess.map_or(bounds.0, |g| g.max(bounds.0));
        let budget = match &self.budget_rule {
            Some(rule) => rule(self.budget),
            None => self.budget,
        };
        let budget = position_budget(budget, inside_opening);
        let key = pits_key(pos);
        if let Some(&spent) = self.failed.get(&key)
            && budget.is_some_and(|b| spent.is_some_and(|s| b <= s))
        {
            return None;
        }
        let deadline = Budget {
            deadline: budget.map(|d| Instant::now() + d),
            max_nodes: None,
        };
        let Some(v) = self
            .solver
            .value_between(pos, bounds.0, bounds.1, Some(guess), deadline)
        else {
            self.failed.insert(key, budget);
            return None;
        };
        self.remember(pos, v);
        Some(v)
    }

    /// Reads the values of the shipped book of openings of `rules` into what is known,
    /// once.
    fn read_book(&mut self, rules: Rules) {
        if self.read_books.contains(&rules) {
            return;
        }
        self.read_books.push(rules);
        for (pos, v) in super::known::book_values(rules) {
            self.remember(&pos, v);
        }
    }

    /// Analyses every sowing of `record` (the endgame table set, if any, must be of its
    /// rules).
    pub(crate) fn analyse(&mut self, record: &GameRecord) -> Result<Vec<PlyAnalysis>, String> {
        let positions = positions(record)?;
        self.read_book(record.rules);
        let n = positions.len();
        // Positions 0..opening are those before a sowing of the opening: no engine chose
        // their sowings (drawn at random, or read from a book).
        let opening = record.moves.iter().take_while(|m| m.opening).count();
        // values[i]: the exact value of positions[i] for its side to move.
        let mut values: Vec<Option<i32>> = vec![None; n];
        let order: Vec<usize> = match self.order {
            Order::Forward => (0..n).collect(),
            Order::Backward => (0..n).rev().collect(),
        };
        // The value of the last position solved, and its index.
        let mut last: Option<(i32, usize)> = None;
        // Seeds in the pits of a position whose budget ran out: positions with as many
        // seeds or more are not tried (seeds only leave the pits, so in backward order
        // these are all the earlier positions; they are at least as hard).
        let mut too_hard: Option<i32> = None;
        for i in order {
            let pos = &positions[i];
            let seeds = seeds_in_pits(pos);
            if too_hard.is_some_and(|s| seeds >= s) {
                values[i] = self.known_value(pos);
                continue;
            }
            // The neighbour on the line of play, solved just before, bounds the value: the
            // sowing between them lost nothing or some seeds for its side. That bound is
            // also the best guess (a sowing loses nothing more often than not): then one
            // null-window search proves the value.
            let (mut bounds, mut guess) = ((i32::MIN / 2, i32::MAX / 2), None);
            if let Some((v, j)) = last.filter(|&(_, j)| j.abs_diff(i) == 1) {
                let (before, after) = if j > i { (i, j) } else { (j, i) };
                let flip = positions[before].to_move() != positions[after].to_move();
                // The value of `before` for its mover is at least that of `after`, seen
                // from the same side.
                let same = if flip { -v } else { v };
                // Solving `before`, that is a lower bound; solving `after`, a lower bound
                // when the other side moves there (it negates), else an upper bound.
                if i == before || flip {
                    bounds.0 = same;
                } else {
                    bounds.1 = same;
                }
                guess = Some(same);
            }
            values[i] = self.exact(pos, bounds, guess, i < opening);
            match values[i] {
                Some(v) => last = Some((v, i)),
                None => too_hard = Some(too_hard.map_or(seeds, |s| s.min(seeds))),
            }
        }
        let mut rows = rows(record, &positions, &values);
        for (i, r) in rows.iter_mut().enumerate() {
            if r.loss().is_none() && self.estimate {
                estimate(r, &positions[i], &positions[i + 1], &mut self.estimates);
            }
        }
        Ok(rows)
    }
}

/// The share of the budget a position inside a game's opening gets (before a sowing no
/// engine chose). Such positions are the earliest of a game and cost the most: measured on
/// `benches/data/hard-medium-6x4-book` (the default book openings of 10 sowings), the
/// positions inside the openings took 150 s of 159 s with the whole budget, the 392
/// positions from the end of the openings on 10 s. No engine's accuracy depends on them:
/// their sowings are not the engines', and the first value an engine's sowing needs, that
/// of the position the opening reaches, is in the book. `--budget none` solves them all.
pub(crate) const OPENING_SHARE: u32 = 20;

/// The budget of a position, from the analysis's: [`OPENING_SHARE`] of it `inside_opening`
/// (at least [`MIN_BUDGET`]); no limit stays no limit.
pub(crate) fn position_budget(budget: Option<Duration>, inside_opening: bool) -> Option<Duration> {
    match budget {
        Some(b) if inside_opening => Some((b / OPENING_SHARE).max(MIN_BUDGET).min(b)),
        b => b,
    }
}

/// The least budget a position gets, however the analysis hurries.
pub(crate) const MIN_BUDGET: Duration = Duration::from_millis(10);

/// The depth of the engines' search that estimates the values of positions the solver
/// does not finish: the position before a sowing is searched this deep, the one after it
/// a sowing less deep, so that a sowing the search would choose loses nothing. Each
/// estimated sowing costs two such searches, and each ply more multiplies their cost.
pub(crate) const ESTIMATE_DEPTH: u32 = 10;

/// The estimate at `depth` of the value of `pos` for its side to move: the engines'
/// search (a fresh one, so that the estimate depends on the position alone), its score
/// rounded to a value the game can end with.
fn estimate_value(pos: &Position, depth: u32, seen: &mut Estimates) -> i32 {
    if pos.is_over() {
        return pos.store_margin(pos.to_move());
    }
    if let Some(&v) = seen.get(&(*pos, depth)) {
        return v;
    }
    // No deadline: a fixed depth.
    let far = Instant::now() + Duration::from_secs(365 * 24 * 3600);
    let v = crate::engines::first_guess(pos, depth, far).0;
    seen.insert((*pos, depth), v);
    v
}

/// Estimates already made, by position and depth (the games of a pair share their
/// opening).
type Estimates = HashMap<(Position, u32), i32>;

/// Fills `row` (the sowing from `before` to `after`) with estimated values.
fn estimate(row: &mut PlyAnalysis, before: &Position, after: &Position, seen: &mut Estimates) {
    let mover = before.to_move();
    row.value_before = Some(estimate_value(before, ESTIMATE_DEPTH, seen));
    row.value_after = Some(if after.is_over() {
        after.store_margin(mover)
    } else if after.to_move() == mover {
        estimate_value(after, ESTIMATE_DEPTH - 1, seen)
    } else {
        -estimate_value(after, ESTIMATE_DEPTH - 1, seen)
    });
    row.estimate_depth = Some(ESTIMATE_DEPTH);
}

/// The order [`Analyser`] uses by default: backward, from the end of each game to its
/// start. Measured with `kalaha analyze DIR --bench --threads 2` on a 2-core machine
/// shared with other work (so the ratios to one solve of the start position in the same
/// run count, not the times): on `benches/data/hard-medium-6x4-book` (the default book
/// openings), backward took 35.6 s (1.3 solves) and forward 93.0 s (1.8 solves), at a load
/// of 13 to 16; earlier, on `benches/data/hard-medium-6x4` (4 random sowings) with a 512
/// MiB table, backward 124 s (20.3 solves) and forward 181 s (23.1). Backward, the late
/// positions are quick and leave in the transposition table what the earlier ones search
/// again, and a position whose budget runs out ends the search of the game (every earlier
/// position holds more seeds); forward, each position out of budget costs the whole budget
/// again until one is solved.
pub(crate) const DEFAULT_ORDER: Order = Order::Backward;

/// Analyses every sowing of `record` with a fresh [`Analyser`] (for tests and one-off
/// uses; an analysis of many games keeps one analyser).
#[cfg(test)]
pub(crate) fn analyse_game(
    record: &GameRecord,
    hash_mb: usize,
    budget: Option<Duration>,
) -> Result<Vec<PlyAnalysis>, String> {
    Analyser::new(hash_mb, 1, budget).analyse(record)
}

/// The rows of a game whose positions have `values` for their side to move.
fn rows(record: &GameRecord, positions: &[Position], values: &[Option<i32>]) -> Vec<PlyAnalysis> {
    record
        .moves
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let after = &positions[i + 1];
            let value_after = if after.is_over() {
                Some(after.store_margin(m.side))
            } else if after.to_move() == m.side {
                values[i + 1]
            } else {
                values[i + 1].map(|v| -v)
            };
            PlyAnalysis {
                game: record.game.clone(),
                ply: i as u32 + 1,
                side: m.side,
                engine: if m.opening {
                    String::new()
                } else {
                    record.name(m.side).to_string()
                },
                pit: m.pit,
                value_before: values[i],
                value_after,
                estimate_depth: None,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_position_a_book_opening_reaches_is_known_without_a_search() {
        let rules = Rules::default();
        let (pos, v) = super::super::known::book_values(rules)[0];
        // No time at all: only what is known is solved.
        let mut a = Analyser::new(16, 1, Some(Duration::ZERO));
        let wide = (i32::MIN / 2, i32::MAX / 2);
        assert_eq!(a.exact(&pos, wide, None, false), None, "not read yet");
        a.read_book(rules);
        assert_eq!(a.exact(&pos, wide, None, false), Some(v));
        // Whoever is south and whatever the stores: the same pits, the same future gain.
        let me = pos.to_move();
        let row = |side: Side, store: u16| crate::rules::Row {
            pits: pos.pits(side).to_vec(),
            store,
        };
        let stores = (pos.store(me), pos.store(me.opponent()));
        let swapped = Position::from_parts(
            rules,
            &row(me, stores.1),
            &row(me.opponent(), stores.0),
            Side::South,
        )
        .unwrap();
        let shift = stores.1 as i32 - stores.0 as i32 - pos.store_margin(me);
        assert_eq!(a.exact(&swapped, wide, None, false), Some(v + shift));
    }

    #[test]
    fn positions_inside_an_opening_get_a_twentieth_of_the_budget_and_failures_are_kept() {
        let s = Duration::from_secs;
        assert_eq!(position_budget(Some(s(10)), false), Some(s(10)));
        assert_eq!(position_budget(Some(s(10)), true), Some(s(10) / 20));
        assert_eq!(position_budget(None, true), None);
        let ms = Duration::from_millis;
        assert_eq!(position_budget(Some(ms(100)), true), Some(MIN_BUDGET));
        assert_eq!(position_budget(Some(ms(4)), true), Some(ms(4)));
        // A position out of its budget is remembered with it, and not searched again
        // within as little; with more time it is.
        let small = Position::start(Rules::new(4, 3, false, crate::rules::Sweep::Owner).unwrap());
        let mut a = Analyser::new(16, 1, Some(Duration::ZERO));
        let wide = (i32::MIN / 2, i32::MAX / 2);
        assert_eq!(a.exact(&small, wide, None, false), None);
        assert_eq!(a.failed.get(&pits_key(&small)), Some(&Some(Duration::ZERO)));
        a.failed.insert(pits_key(&small), Some(s(3600)));
        a.budget = Some(s(60));
        assert_eq!(a.exact(&small, wide, None, false), None, "not tried again");
        a.budget = None;
        assert!(a.exact(&small, wide, None, false).is_some());
    }
}
