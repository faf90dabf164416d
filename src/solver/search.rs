//! The search: null-window alpha-beta on the future gain driven by MTD(f), with a shared
//! transposition table keyed exactly, enhanced transposition cutoffs, endgame-table
//! look-ups, move ordering, an optional node or time budget and optional helper threads.

use super::endgame::{EndgameTable, TableRules};
use super::index::Indexer;
use super::tt::Table;
use crate::rules::{MAX_PITS, Move, Position, Rules, Side};
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

/// How often (in nodes) the deadline is looked at.
const CHECK_EVERY: u64 = 1024;

/// Enhanced transposition cutoffs are tried in positions with more than this many seeds
/// in the pits beyond what the endgame table holds (every position not in the table: the
/// children's entries are fetched anyway, so looking at them first costs little).
const ETC_MARGIN: i32 = 0;

/// How the transposition table names a position.
#[derive(Clone, Debug)]
enum Keys {
    /// The [`Indexer`] rank of the pits: exact.
    Rank(Indexer),
    /// Both rows packed in 64 bits (exact), or hashed when they do not fit (see
    /// [`pits_key`]).
    Packed(u32),
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
}

impl Solver {
    /// A solver whose table uses at most `hash_mb` mebibytes, with one thread and no
    /// endgame table.
    pub fn new(hash_mb: usize) -> Solver {
        Solver {
            table: Arc::new(Table::new(hash_mb)),
            live_nodes: Arc::new(AtomicU64::new(0)),
            endgame: None,
            rules: None,
            keys: Keys::Packed(0),
            threads: 1,
        }
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
        let started = Instant::now();
        let s = seeds_in_pits(pos);
        let (mut lower, mut upper) = (-s, s);
        let mut g = guess.map_or(0, |v| v - margin).clamp(lower, upper);
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

    fn worker<'a>(&'a self, id: usize, budget: Budget, stop: Option<&'a AtomicBool>) -> Worker<'a> {
        let endgame = self
            .endgame
            .as_deref()
            .filter(|t| self.rules.is_some_and(|r| TableRules::of(&r) == t.rules()));
        Worker {
            table: &self.table,
            live_nodes: &self.live_nodes,
            endgame,
            endgame_seeds: endgame.map_or(-1, |t| t.max_seeds() as i32),
            keys: &self.keys,
            nodes: 0,
            budget,
            stop,
            aborted: false,
            id,
            root_move: 0,
        }
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
        if self.rules.is_some() {
            self.table.clear();
        }
        self.rules = Some(*rules);
        self.keys = keys;
    }
}

/// The lowest legal pit (for a result that needs no search).
fn first_move(pos: &Position) -> u8 {
    pos.legal_moves().next().unwrap_or(0)
}

/// One thread's search.
struct Worker<'a> {
    table: &'a Table,
    live_nodes: &'a AtomicU64,
    endgame: Option<&'a EndgameTable>,
    /// The endgame table's `k`, -1 without one.
    endgame_seeds: i32,
    keys: &'a Keys,
    nodes: u64,
    budget: Budget,
    /// Set by whichever thread finishes first: the others stop.
    stop: Option<&'a AtomicBool>,
    aborted: bool,
    /// 0 for the main thread; helpers vary their move order by it.
    id: usize,
    /// The best move at the root of the last search.
    root_move: u8,
}

/// A position with the seeds in its pits and its key, worked out once.
#[derive(Clone, Copy)]
struct Node {
    pos: Position,
    seeds: i32,
    key: u64,
}

/// A move and what it leads to.
#[derive(Clone, Copy)]
struct Child {
    pit: u8,
    /// The position after the move (meaningful unless `over`).
    node: Node,
    /// What the move adds to the mover's store margin.
    delta: i32,
    over: bool,
    extra_turn: bool,
}

impl Child {
    /// The value of the move for its mover, given the child's future gain `v`.
    #[inline]
    fn value(&self, v: i32) -> i32 {
        if self.extra_turn {
            self.delta + v
        } else {
            self.delta - v
        }
    }
}

impl Worker<'_> {
    #[inline]
    fn node(&self, pos: Position) -> Node {
        let seeds = seeds_in_pits(&pos);
        let key = match self.keys {
            Keys::Rank(ix) => {
                let me = pos.to_move();
                ix.rank2(pos.pits(me), pos.pits(me.opponent()))
            }
            Keys::Packed(bits) => pits_key(&pos, *bits),
        };
        Node { pos, seeds, key }
    }

    #[inline]
    fn out_of_budget(&mut self) -> bool {
        if self.nodes.is_multiple_of(CHECK_EVERY) {
            self.live_nodes.fetch_add(CHECK_EVERY, Ordering::Relaxed);
            if let Some(max) = self.budget.max_nodes
                && self.nodes >= max
            {
                self.aborted = true;
            }
            if let Some(deadline) = self.budget.deadline
                && Instant::now() >= deadline
            {
                self.aborted = true;
            }
            if let Some(stop) = self.stop
                && stop.load(Ordering::Relaxed)
            {
                self.aborted = true;
            }
        }
        self.aborted
    }

    /// Where `node` is in the endgame table, if it is there.
    #[inline]
    fn endgame_rank(&self, node: &Node) -> Option<(&EndgameTable, u64)> {
        if node.seeds > self.endgame_seeds {
            return None;
        }
        let t = self.endgame?;
        let rank = match self.keys {
            // The key is the rank in the same numbering.
            Keys::Rank(_) => node.key,
            Keys::Packed(_) => {
                let me = node.pos.to_move();
                t.rank(node.pos.pits(me), node.pos.pits(me.opponent()))
            }
        };
        Some((t, rank))
    }

    /// The exact future gain of `node` (not over) from the endgame table, if it is there.
    #[inline]
    fn endgame_value(&self, node: &Node) -> Option<i32> {
        self.endgame_rank(node).map(|(t, r)| t.value_at(r))
    }

    /// Asks for what `node`'s search will read first to be fetched from memory.
    #[inline]
    fn prefetch(&self, node: &Node) {
        match self.endgame_rank(node) {
            Some((t, r)) => t.prefetch(r),
            None => self.table.prefetch(node.key),
        }
    }

    /// Bounds on the value of a move for its mover, from what is already known about the
    /// child without searching it: exact if the game is over or the child is in the
    /// endgame table, the transposition table's bounds otherwise.
    #[inline]
    fn known(&self, c: &Child) -> Option<(i32, i32)> {
        if c.over {
            return Some((c.delta, c.delta));
        }
        let (lo, hi) = match self.endgame_value(&c.node) {
            Some(v) => (v, v),
            None => {
                let e = self.table.probe(c.node.key)?;
                (e.lo as i32, e.hi as i32)
            }
        };
        Some(if c.extra_turn {
            (c.delta + lo, c.delta + hi)
        } else {
            (c.delta - hi, c.delta - lo)
        })
    }

    /// The moves of `pos` (not over) in the order to search them, with their children,
    /// whose table entries are fetched from memory meanwhile.
    #[inline]
    fn children(&self, pos: &Position, tt_move: u8, out: &mut [Child; MAX_PITS as usize]) -> usize {
        let me = pos.to_move();
        let margin = pos.store_margin(me);
        let moves = ordered_moves(pos, tt_move);
        let moves = moves.as_slice();
        for (slot, &pit) in out.iter_mut().zip(moves) {
            let mut child = *pos;
            let effect = child.sow(pit as usize);
            let node = if effect.game_over {
                Node {
                    pos: child,
                    seeds: 0,
                    key: 0,
                }
            } else {
                let n = self.node(child);
                self.prefetch(&n);
                n
            };
            *slot = Child {
                pit,
                node,
                delta: child.store_margin(me) - margin,
                over: effect.game_over,
                extra_turn: effect.extra_turn,
            };
        }
        let n = moves.len();
        // Best first by what the move does at once, which the sowing tells exactly: extra
        // turns (nearest the store first), then by what it adds to the store margin
        // (captures included; then nearest the store first). The table's move stays first.
        // On Kalah(6,4) this searches 30% fewer positions than the order of
        // `ordered_moves` alone.
        let first = usize::from(tt_move != 0 && out[0].pit == tt_move);
        out[first..n].sort_by_key(|c| {
            std::cmp::Reverse(if c.extra_turn {
                1000 + c.pit as i32
            } else {
                10 * c.delta + c.pit as i32
            })
        });
        n
    }

    /// The future gain for the side to move of `node`, not over and not in the endgame
    /// table, fail-soft within `alpha..beta`: a result `<= alpha` is an upper bound,
    /// `>= beta` a lower bound. At `ply` 0 the best move is left in `root_move`.
    fn search(&mut self, node: &Node, mut alpha: i32, mut beta: i32, ply: u32) -> i32 {
        self.nodes += 1;
        if self.out_of_budget() {
            return 0;
        }
        let s = node.seeds;
        let pos = &node.pos;
        if alpha >= s || beta <= -s {
            if ply == 0 {
                self.root_move = first_move(pos);
            }
            return if alpha >= s { s } else { -s };
        }
        let mut tt_move = 0u8;
        if let Some(e) = self.table.probe(node.key) {
            let (lo, hi) = (e.lo as i32, e.hi as i32);
            tt_move = e.mv;
            if ply > 0 {
                if lo >= beta {
                    return lo;
                }
                if hi <= alpha {
                    return hi;
                }
                if lo == hi {
                    return lo;
                }
                alpha = alpha.max(lo);
                beta = beta.min(hi);
            }
        }
        let start_nodes = self.nodes;
        let alpha0 = alpha;

        let mut buf = [Child {
            pit: 0,
            node: *node,
            delta: 0,
            over: true,
            extra_turn: false,
        }; MAX_PITS as usize];
        let n = self.children(pos, tt_move, &mut buf);
        let children = &mut buf[..n];
        if self.id > 0 && ply < 4 && children.len() > 2 {
            // Helpers look at the moves after the first in another order, so that the
            // threads do not all search the same positions at once.
            let k = 1 + (self.id + ply as usize) % (children.len() - 1);
            children[1..].rotate_left(k - 1);
        }

        // Enhanced transposition cutoffs: a child already known to refute the window
        // (the game ends, the endgame table or the transposition table says so).
        if s > self.endgame_seeds + ETC_MARGIN {
            for c in children.iter() {
                if let Some((lo, _)) = self.known(c)
                    && lo >= beta
                {
                    self.table.store(node.key, lo as i16, s as i16, c.pit, 0);
                    if ply == 0 {
                        self.root_move = c.pit;
                    }
                    return lo;
                }
            }
        }

        let mut best = i32::MIN;
        let mut best_move = 0u8;
        for (i, c) in children.iter().enumerate() {
            let value = if c.over {
                c.delta
            } else if let Some(v) = self.endgame_value(&c.node) {
                c.value(v)
            } else if c.extra_turn {
                let (a, b) = (alpha - c.delta, beta - c.delta);
                let mut v = if i == 0 {
                    self.search(&c.node, a, b, ply + 1)
                } else {
                    self.search(&c.node, a, a + 1, ply + 1)
                };
                if i > 0 && v > a && v < b && !self.aborted {
                    // The null window proved v a lower bound: find the exact value.
                    v = self.search(&c.node, v - 1, b, ply + 1);
                }
                c.delta + v
            } else {
                let (a, b) = (c.delta - beta, c.delta - alpha);
                let mut v = if i == 0 {
                    self.search(&c.node, a, b, ply + 1)
                } else {
                    self.search(&c.node, b - 1, b, ply + 1)
                };
                if i > 0 && v < b && v > a && !self.aborted {
                    // The null window proved v an upper bound: find the exact value.
                    v = self.search(&c.node, a, v + 1, ply + 1);
                }
                c.delta - v
            };
            if self.aborted {
                return 0;
            }
            if value > best {
                best = value;
                best_move = c.pit;
                if value > alpha {
                    alpha = value;
                    if alpha >= beta {
                        break;
                    }
                }
            }
        }

        let work = (64 - (self.nodes - start_nodes).leading_zeros()) as u8;
        let (lo, hi) = if best <= alpha0 {
            (-s, best)
        } else if best >= beta {
            (best, s)
        } else {
            (best, best)
        };
        self.table
            .store(node.key, lo as i16, hi as i16, best_move, work);
        if ply == 0 {
            self.root_move = best_move;
        }
        best
    }

    /// The future gain of `node` (not over) within `alpha..beta` as [`Worker::search`]
    /// gives it, looking it up if it is in the endgame table.
    fn value(&mut self, node: &Node, alpha: i32, beta: i32, ply: u32) -> i32 {
        match self.endgame_value(node) {
            Some(v) => {
                if ply == 0 {
                    self.root_move = self.best_by_table(&node.pos, v);
                }
                v
            }
            None => self.search(node, alpha, beta, ply),
        }
    }

    /// A move of `pos` (in the endgame table, future gain `value`) that achieves `value`.
    fn best_by_table(&self, pos: &Position, value: i32) -> u8 {
        let mut buf = [Child {
            pit: 0,
            node: self.node(*pos),
            delta: 0,
            over: true,
            extra_turn: false,
        }; MAX_PITS as usize];
        let n = self.children(pos, 0, &mut buf);
        buf[..n]
            .iter()
            .find(|c| self.known(c).is_some_and(|(lo, _)| lo == value))
            .map_or_else(|| first_move(pos), |c| c.pit)
    }

    /// Reads a line of best play achieving `gain` from the table, re-searching where the
    /// table has forgotten something. Stops early if the budget runs out.
    fn principal_variation(&mut self, pos: &Position, gain: i32) -> Vec<Move> {
        let mut pv = Vec::new();
        let mut node = self.node(*pos);
        let mut gain = gain;
        while !node.pos.is_over() {
            let tt_move = if self.endgame_value(&node).is_some() {
                0
            } else {
                self.table.probe(node.key).map_or(0, |e| e.mv)
            };
            let mut buf = [Child {
                pit: 0,
                node,
                delta: 0,
                over: true,
                extra_turn: false,
            }; MAX_PITS as usize];
            let n = self.children(&node.pos, tt_move, &mut buf);
            let mut found = None;
            for c in &buf[..n] {
                let (ok, child_gain) = if c.over {
                    (c.delta == gain, 0)
                } else {
                    let target = if c.extra_turn {
                        gain - c.delta
                    } else {
                        c.delta - gain
                    };
                    let v = self.value(&c.node, target - 1, target + 1, 1);
                    (v == target, target)
                };
                if self.aborted {
                    return pv;
                }
                if ok {
                    found = Some((c.pit, c.node, child_gain));
                    break;
                }
            }
            let Some((pit, child, child_gain)) = found else {
                debug_assert!(false, "no move achieves the solved value");
                return pv;
            };
            pv.push(Move {
                side: node.pos.to_move(),
                pit,
            });
            node = child;
            gain = child_gain;
        }
        pv
    }
}

/// Bits per pit when both rows of a position under `rules` with `seeds` seeds in its pits
/// (or fewer; never fewer than the rules' start total) pack exactly into 64 bits, else 0
/// (keys are then hashed). Seeds in pits never increase in play, so what suffices for a
/// position suffices for all that follow it.
pub(crate) fn pack_bits(rules: &Rules, seeds: u32) -> u32 {
    let bits = 32 - rules.total_seeds().max(seeds).leading_zeros();
    if 2 * rules.pits() as u32 * bits <= 64 {
        bits
    } else {
        0
    }
}

/// A table key for the pits of `pos`: both rows, the mover's first, stores left out.
/// Exact when `pack_bits > 0` (see [`pack_bits`]), otherwise a 64-bit hash. Never 0 for a
/// position still being played.
#[inline]
pub(crate) fn pits_key(pos: &Position, pack_bits: u32) -> u64 {
    let cells = pos.cells();
    let p = pos.rules().pits();
    let (mine, theirs) = match pos.to_move() {
        Side::South => (&cells[..p], &cells[p + 1..2 * p + 1]),
        Side::North => (&cells[p + 1..2 * p + 1], &cells[..p]),
    };
    if pack_bits > 0 {
        let mut k = 0u64;
        for &c in mine.iter().chain(theirs) {
            k = (k << pack_bits) | c as u64;
        }
        k
    } else {
        let mut h = 0x9e37_79b9_7f4a_7c15u64;
        for &c in mine.iter().chain(theirs) {
            h = (h ^ c as u64).wrapping_mul(0x0100_0000_01b3);
            h = h.rotate_left(23);
        }
        h ^= h >> 29;
        h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
        h ^= h >> 32;
        h.max(1)
    }
}

/// Seeds still in both rows: the most the side to move can gain or lose from here.
#[inline]
pub(crate) fn seeds_in_pits(pos: &Position) -> i32 {
    (pos.row_sum(Side::South) + pos.row_sum(Side::North)) as i32
}

/// The legal moves of the side to move, best first by a cheap guess: the table's move,
/// then extra turns (nearest the store first, so the others stay in place), then captures
/// (largest first), then the rest (nearest the store first).
pub(crate) struct MoveList {
    moves: [u8; MAX_PITS as usize],
    len: usize,
}

impl MoveList {
    pub(crate) fn as_slice(&self) -> &[u8] {
        &self.moves[..self.len]
    }
}

#[inline]
pub(crate) fn ordered_moves(pos: &Position, first: u8) -> MoveList {
    let p = pos.rules().pits();
    let me = pos.to_move();
    let row = pos.pits(me);
    let opp = pos.pits(me.opponent());
    let lap = 2 * p + 1;
    let mut scored = [(0i32, 0u8); MAX_PITS as usize];
    let mut len = 0;
    for (i, &seeds) in row.iter().enumerate() {
        if seeds == 0 {
            continue;
        }
        let pit = i as u8 + 1;
        let n = seeds as usize;
        let to_store = p - i;
        let score = if pit == first {
            1_000_000
        } else if n % lap == to_store {
            100_000 + i as i32
        } else if n < to_store && row[i + n] == 0 {
            // Lands in an empty own pit without going round.
            let across = opp[p - 1 - (i + n)] as i32;
            if across > 0 || pos.rules().empty_capture() {
                10_000 + 10 * across
            } else {
                i as i32
            }
        } else {
            i as i32
        };
        scored[len] = (score, pit);
        len += 1;
    }
    scored[..len].sort_unstable_by_key(|s| std::cmp::Reverse(s.0));
    let mut moves = [0u8; MAX_PITS as usize];
    for (m, s) in moves.iter_mut().zip(&scored[..len]) {
        *m = s.1;
    }
    MoveList { moves, len }
}
