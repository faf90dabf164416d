//! The solver's interface: MTD(f) over null-window searches of the future gain, each by
//! one or more threads sharing the transposition table (see [`super::worker`] for the
//! search itself).

use super::endgame::{EndgameTable, TableRules};
use super::index::Indexer;
use super::moves::{pack_bits, seeds_in_pits};
use super::tt::Table;
use super::worker::{Keys, Worker, first_move};
use crate::rules::{Move, Position, Rules};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// An exact result: the value of the position for the side to move (its final store minus
/// the other's, under best play by both) and a principal variation that achieves it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Solution {
    pub value: i32,
    /// Best play from the position to the end of the game (extra turns show as two moves
    /// of the same side in a row). May be shorter than the whole game if a budget ran out
    /// while it was being read from the table.
    pub pv: Vec<Move>,
    /// Positions searched for this solution (by all threads).
    pub nodes: u64,
}

impl Solution {
    /// The best move (a pit of the side to move), `None` when the game is over.
    pub fn best_move(&self) -> Option<u8> {
        self.pv.first().map(|m| m.pit)
    }
}

/// Limits on one search: a wall-clock deadline and/or a number of positions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Budget {
    pub deadline: Option<Instant>,
    pub max_nodes: Option<u64>,
}

impl Budget {
    /// No limit at all.
    pub fn unlimited() -> Budget {
        Budget::default()
    }
}

/// The state of an MTD(f) solve after one null-window search: the value of the position
/// (for the side to move, stores included) is known to lie in `lower..=upper`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    pub lower: i32,
    pub upper: i32,
    /// Positions searched so far in this solve, by all threads.
    pub nodes: u64,
    pub elapsed: Duration,
    /// How full the transposition table is, per mille.
    pub fill_permille: u32,
}

/// The answer to "is the value of this position at least `value`?"
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Test {
    /// Yes, and `pit` achieves it; the value is at least `bound` (`>= value`).
    AtLeast { bound: i32, pit: u8 },
    /// No: the value is at most `bound` (`< value`).
    Below { bound: i32 },
}

/// An exact solver with its transposition table and, optionally, an endgame table. Reuse
/// one solver for many positions of the same rules: what it learned stays in the table
/// (it is cleared when the rules change).
pub struct Solver {
    table: Arc<Table>,
    /// Positions searched since the solver was made, by every thread, counted in steps
    /// of [`CHECK_EVERY`] as the search goes (for progress displays).
    live_nodes: Arc<AtomicU64>,
    endgame: Option<Arc<EndgameTable>>,
    rules: Option<Rules>,
    keys: Keys,
    threads: usize,
    /// The most the table may use, in mebibytes; a board with fewer positions gets less.
    hash_mb: usize,
    /// Whether a large board's table may use huge pages (see [`Solver::allow_huge_pages`]).
    huge_pages: bool,
}

/// The bytes of a table for positions keyed by `keys`: `hash_mb` mebibytes, or less when the
/// board has so few positions that a smaller table holds each of them twice over (a large
/// table costs time to set up and clear, and scatters a small board's entries over
/// memory).
pub(super) fn table_bytes(hash_mb: usize, keys: &Keys) -> usize {
    let most = hash_mb.max(1) * 1024 * 1024;
    let Keys::Rank(ix) = keys else {
        return most;
    };
    let parts = ix.parts() as u64;
    let positions = super::index::binomial(ix.max_seeds() as u64 + parts, parts);
    let wanted = positions
        .saturating_mul(32)
        .max(1 << 20)
        .checked_next_power_of_two()
        .unwrap_or(u64::MAX);
    usize::try_from(wanted).map_or(most, |w| w.min(most))
}

/// Whether a board has so many positions that its searches are long enough to pay for
/// huge pages (the standard board has about 10^12; 5 pits and 3 seeds, 10^9).
pub(super) fn long_search(keys: &Keys) -> bool {
    match keys {
        Keys::Rank(ix) => {
            let parts = ix.parts() as u64;
            super::index::binomial(ix.max_seeds() as u64 + parts, parts) > 10_000_000_000
        }
        Keys::Packed(_) => true,
    }
}

impl Solver {
    /// A solver whose table uses at most `hash_mb` mebibytes, with one thread and no
    /// endgame table.
    pub fn new(hash_mb: usize) -> Solver {
        Solver {
            // The table is made for the first position's board (see `prepare`), no
            // larger than the board needs.
            table: Arc::new(Table::with_bytes(0)),
            live_nodes: Arc::new(AtomicU64::new(0)),
            endgame: None,
            rules: None,
            keys: Keys::Packed(0),
            threads: 1,
            hash_mb,
            huge_pages: false,
        }
    }

    /// Lets the table of a board with very many positions use huge pages: faster for a
    /// long solve, but a page fault may then wait for the kernel to gather memory, for a
    /// second or more, which a move played under a clock cannot afford.
    pub fn allow_huge_pages(&mut self) {
        self.huge_pages = true;
    }

    /// Looks up positions with few enough seeds in `table` instead of searching them
    /// (used for positions of the rules it was built for; `None` for no table).
    pub fn set_endgame(&mut self, table: Option<Arc<EndgameTable>>) {
        self.endgame = table;
    }

    /// The endgame table in use, if any.
    pub fn endgame(&self) -> Option<&Arc<EndgameTable>> {
        self.endgame.as_ref()
    }

    /// Searches with `threads` threads (at least one) sharing the table.
    pub fn set_threads(&mut self, threads: usize) {
        self.threads = threads.max(1);
    }

    /// A counter of the positions searched so far, by every thread, updated as the search
    /// goes (in steps of about a thousand): for a progress display on another thread.
    pub fn live_nodes(&self) -> Arc<AtomicU64> {
        self.live_nodes.clone()
    }

    /// Forgets everything learned so far.
    pub fn clear(&mut self) {
        self.table.clear();
    }

    /// How full the table is, per mille.
    pub fn table_fill_permille(&self) -> u32 {
        self.table.fill_permille()
    }

    /// Solves `pos` exactly, however long it takes.
    pub fn solve(&mut self, pos: &Position) -> Solution {
        self.solve_within(pos, Budget::unlimited())
            .expect("an unlimited search always finishes")
    }

    /// Solves `pos` exactly unless the budget runs out first (then `None`). Work done
    /// before the budget ran out stays in the table and speeds up the next call.
    pub fn solve_within(&mut self, pos: &Position, budget: Budget) -> Option<Solution> {
        self.solve_observed(pos, budget, None, &mut |_| {})
    }

    /// Like [`Solver::solve_within`], starting the MTD(f) sequence of null-window searches
    /// from `guess` (a value of the position, stores included; the closer, the faster) and
    /// telling `observer` after each one.
    pub fn solve_observed(
        &mut self,
        pos: &Position,
        budget: Budget,
        guess: Option<i32>,
        observer: &mut dyn FnMut(&Step),
    ) -> Option<Solution> {
        self.prepare(pos);
        let me = pos.to_move();
        let margin = pos.store_margin(me);
        if pos.is_over() {
            return Some(Solution {
                value: margin,
                pv: Vec::new(),
                nodes: 0,
            });
        }
        let s = seeds_in_pits(pos);
        let g = guess.map_or(0, |v| v - margin);
        let (lower, mut nodes) = self.mtd(pos, (-s, s), g, budget, observer)?;
        let mut worker = self.worker(0, budget, None);
        let pv = worker.principal_variation(pos, lower);
        nodes += worker.nodes;
        if worker.aborted {
            return None;
        }
        Some(Solution {
            value: lower + margin,
            pv,
            nodes,
        })
    }

    /// The exact value of `pos` for the side to move (stores included), known to lie in
    /// `lower..=upper`, by MTD(f) from `guess` (clamped to the bounds), without a line of
    /// best play; `None` if the budget ran out first. A bound that is already proved saves
    /// a null-window search: with `lower` the value of the move played and `guess` equal
    /// to it, a position whose move was best is solved by one search.
    pub fn value_between(
        &mut self,
        pos: &Position,
        lower: i32,
        upper: i32,
        guess: Option<i32>,
        budget: Budget,
    ) -> Option<i32> {
        self.prepare(pos);
        let margin = pos.store_margin(pos.to_move());
        if pos.is_over() {
            return Some(margin);
        }
        let s = seeds_in_pits(pos);
        let bounds = ((lower - margin).max(-s), (upper - margin).min(s));
        if bounds.0 > bounds.1 {
            debug_assert!(
                false,
                "{lower}..={upper} is not a range of values of {pos:?}"
            );
            // Not bounds of this position: search without them.
            return self.value_between(pos, i32::MIN / 2, i32::MAX / 2, guess, budget);
        }
        let g = guess.map_or(bounds.0, |v| v - margin);
        let (gain, _) = self.mtd(pos, bounds, g, budget, &mut |_| {})?;
        Some(gain + margin)
    }

    /// MTD(f) on the future gain of `pos` (not over, prepared) within `bounds` (proved),
    /// from `g`: the future gain and the nodes searched, `None` if the budget ran out.
    fn mtd(
        &mut self,
        pos: &Position,
        bounds: (i32, i32),
        g: i32,
        budget: Budget,
        observer: &mut dyn FnMut(&Step),
    ) -> Option<(i32, u64)> {
        let margin = pos.store_margin(pos.to_move());
        let started = Instant::now();
        let (mut lower, mut upper) = bounds;
        let mut g = g.clamp(lower, upper);
        let mut nodes = 0;
        while lower < upper {
            let beta = if g == lower { g + 1 } else { g };
            let (r, _, n) = self.null_window(pos, beta, budget);
            nodes += n;
            g = r?;
            if g >= beta {
                lower = g;
            } else {
                upper = g;
            }
            observer(&Step {
                lower: lower + margin,
                upper: upper + margin,
                nodes,
                elapsed: started.elapsed(),
                fill_permille: self.table.fill_permille(),
            });
        }
        Some((lower, nodes))
    }

    /// Whether the value of `pos` (not over; stores included) is at least `value`, by one
    /// null-window search; `None` if the budget ran out first.
    pub fn test(&mut self, pos: &Position, value: i32, budget: Budget) -> Option<Test> {
        self.prepare(pos);
        let margin = pos.store_margin(pos.to_move());
        let (r, pit, _) = self.null_window(pos, value - margin, budget);
        let r = r?;
        Some(if r >= value - margin {
            Test::AtLeast {
                bound: r + margin,
                pit,
            }
        } else {
            Test::Below { bound: r + margin }
        })
    }

    /// One null-window search of the future gain of `pos` around `beta` by every thread:
    /// the fail-soft result (`>= beta`: a lower bound, else an upper bound; `None` if the
    /// budget ran out), the best root move found and the nodes searched.
    fn null_window(&self, pos: &Position, beta: i32, budget: Budget) -> (Option<i32>, u8, u64) {
        let s = seeds_in_pits(pos);
        if beta > s {
            return (Some(s), 0, 0);
        }
        if beta <= -s {
            return (Some(-s), first_move(pos), 0);
        }
        let stop = AtomicBool::new(false);
        let run = |id: usize| {
            let mut w = self.worker(id, budget, Some(&stop));
            let node = w.node(*pos);
            let r = w.value(&node, beta - 1, beta, 0);
            let done = !w.aborted;
            if done {
                stop.store(true, Ordering::Relaxed);
            }
            (done.then_some(r), w.root_move, w.nodes)
        };
        if self.threads == 1 {
            return run(0);
        }
        std::thread::scope(|scope| {
            let helpers: Vec<_> = (1..self.threads)
                .map(|id| scope.spawn(move || run(id)))
                .collect();
            let mut best = run(0);
            for h in helpers {
                let r = h.join().expect("a search thread panicked");
                best.2 += r.2;
                if best.0.is_none() && r.0.is_some() {
                    best = (r.0, r.1, best.2);
                }
            }
            best
        })
    }

    /// Whether a table for `keys` gets huge pages.
    pub(super) fn wants_huge_pages(&self, keys: &Keys) -> bool {
        self.huge_pages && long_search(keys)
    }

    fn worker<'a>(&'a self, id: usize, budget: Budget, stop: Option<&'a AtomicBool>) -> Worker<'a> {
        let endgame = self
            .endgame
            .as_deref()
            .filter(|t| self.rules.is_some_and(|r| TableRules::of(&r) == t.rules()));
        Worker::new(
            &self.table,
            &self.live_nodes,
            endgame,
            &self.keys,
            budget,
            stop,
            id,
        )
    }

    /// The main thread's worker for searches of `pos` within `budget`, for tests of the
    /// search itself.
    #[cfg(test)]
    pub(super) fn test_worker(&mut self, pos: &Position, budget: Budget) -> Worker<'_> {
        self.prepare(pos);
        self.worker(0, budget, None)
    }

    /// Clears the table when the rules change, or when `pos` holds more seeds than the
    /// current keys can name exactly.
    fn prepare(&mut self, pos: &Position) {
        let rules = pos.rules();
        let seeds = rules.total_seeds().max(seeds_in_pits(pos) as u32);
        let keys = match Indexer::new(2 * rules.pits(), seeds) {
            Some(ix) => Keys::Rank(ix),
            None => Keys::Packed(pack_bits(rules, seeds)),
        };
        let same = match (&self.keys, &keys) {
            (Keys::Rank(a), Keys::Rank(b)) => a.max_seeds() >= b.max_seeds(),
            (Keys::Packed(a), Keys::Packed(b)) => a >= b,
            _ => false,
        };
        if self.rules.as_ref() == Some(rules) && same {
            return;
        }
        let bytes = table_bytes(self.hash_mb, &keys);
        if bytes != self.table.bytes() {
            self.table = Arc::new(Table::with_bytes(bytes));
        } else if self.rules.is_some() {
            self.table.clear();
        }
        if self.wants_huge_pages(&keys) {
            self.table.use_huge_pages();
        }
        self.rules = Some(*rules);
        self.keys = keys;
    }
}
