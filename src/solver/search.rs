//! The search: principal-variation alpha-beta on the future gain, with a bounded
//! transposition table, move ordering and an optional node or time budget.

use super::table::Table;
use crate::rules::{MAX_PITS, Move, Position, Rules, Side};
use std::time::Instant;

/// An exact result: the value of the position for the side to move (its final store minus
/// the other's, under best play by both) and a principal variation that achieves it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Solution {
    pub value: i32,
    /// Best play from the position to the end of the game (extra turns show as two moves
    /// of the same side in a row). May be shorter than the whole game if a budget ran out
    /// while it was being read from the table.
    pub pv: Vec<Move>,
    /// Positions searched for this solution.
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

/// How often (in nodes) the deadline is looked at.
const CHECK_EVERY: u64 = 1024;

/// An exact solver with its transposition table. Reuse one solver for many positions of
/// the same rules: what it learned stays in the table (it is cleared when the rules change).
pub struct Solver {
    table: Table,
    rules: Option<Rules>,
    /// Bits per pit when both rows pack exactly into a 64-bit key, else 0 (hashed key).
    pack_bits: u32,
    nodes: u64,
    budget: Budget,
    aborted: bool,
}

impl Solver {
    /// A solver whose table uses at most `hash_mb` mebibytes.
    pub fn new(hash_mb: usize) -> Solver {
        Solver {
            table: Table::new(hash_mb),
            rules: None,
            pack_bits: 0,
            nodes: 0,
            budget: Budget::default(),
            aborted: false,
        }
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
        self.prepare(pos);
        self.nodes = 0;
        self.budget = budget;
        self.aborted = false;
        let me = pos.to_move();
        if pos.is_over() {
            return Some(Solution {
                value: pos.store_margin(me),
                pv: Vec::new(),
                nodes: 0,
            });
        }
        let s = seeds_in_pits(pos);
        let gain = self.search(pos, -s - 1, s + 1);
        if self.aborted {
            return None;
        }
        let pv = self.principal_variation(pos, gain);
        Some(Solution {
            value: pos.store_margin(me) + gain,
            pv,
            nodes: self.nodes,
        })
    }

    /// Clears the table when the rules change, or when `pos` holds more seeds than the
    /// current keys can pack.
    fn prepare(&mut self, pos: &Position) {
        let rules = pos.rules();
        let bits = pack_bits(rules, seeds_in_pits(pos) as u32);
        if self.rules.as_ref() == Some(rules) && self.pack_bits >= bits {
            return;
        }
        if self.rules.is_some() {
            self.table.clear();
        }
        self.rules = Some(*rules);
        self.pack_bits = bits;
    }

    #[inline]
    fn key(&self, pos: &Position) -> u64 {
        pits_key(pos, self.pack_bits)
    }

    #[inline]
    fn out_of_budget(&mut self) -> bool {
        if self.nodes.is_multiple_of(CHECK_EVERY) {
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
        }
        self.aborted
    }

    /// The future gain of `pos` (not over) for its side to move, fail-soft within
    /// `alpha..beta`: a result `<= alpha` is an upper bound, `>= beta` a lower bound.
    fn search(&mut self, pos: &Position, mut alpha: i32, mut beta: i32) -> i32 {
        self.nodes += 1;
        if self.out_of_budget() {
            return 0;
        }
        let s = seeds_in_pits(pos);
        if alpha >= s {
            return s;
        }
        if beta <= -s {
            return -s;
        }
        let key = self.key(pos);
        let mut tt_move = 0u8;
        if let Some(e) = self.table.probe(key) {
            let (lo, hi) = (e.lo as i32, e.hi as i32);
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
            tt_move = e.mv;
        }
        let start_nodes = self.nodes;
        let alpha0 = alpha;

        let moves = ordered_moves(pos, tt_move);
        let me = pos.to_move();
        let margin = pos.store_margin(me);
        let mut best = i32::MIN;
        let mut best_move = 0u8;
        for (i, &pit) in moves.as_slice().iter().enumerate() {
            let mut child = *pos;
            let effect = child.sow(pit as usize);
            let delta = child.store_margin(me) - margin;
            let value = if effect.game_over {
                delta
            } else if effect.extra_turn {
                let (a, b) = (alpha - delta, beta - delta);
                let mut v = if i == 0 {
                    self.search(&child, a, b)
                } else {
                    self.search(&child, a, a + 1)
                };
                if i > 0 && v > a && v < b && !self.aborted {
                    // The null window proved v a lower bound: find the exact value.
                    v = self.search(&child, v - 1, b);
                }
                delta + v
            } else {
                let (a, b) = (delta - beta, delta - alpha);
                let mut v = if i == 0 {
                    self.search(&child, a, b)
                } else {
                    self.search(&child, b - 1, b)
                };
                if i > 0 && v < b && v > a && !self.aborted {
                    // The null window proved v an upper bound: find the exact value.
                    v = self.search(&child, a, v + 1);
                }
                delta - v
            };
            if self.aborted {
                return 0;
            }
            if value > best {
                best = value;
                best_move = pit;
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
        self.table.store(key, lo as i16, hi as i16, best_move, work);
        best
    }

    /// Reads a line of best play achieving `gain` from the table, re-searching where the
    /// table has forgotten something. Stops early if the budget runs out.
    fn principal_variation(&mut self, pos: &Position, gain: i32) -> Vec<Move> {
        let mut pv = Vec::new();
        let mut pos = *pos;
        let mut gain = gain;
        while !pos.is_over() {
            let tt_move = self.table.probe(self.key(&pos)).map_or(0, |e| e.mv);
            let me = pos.to_move();
            let margin = pos.store_margin(me);
            let mut found = None;
            for &pit in ordered_moves(&pos, tt_move).as_slice() {
                let mut child = pos;
                let effect = child.sow(pit as usize);
                let delta = child.store_margin(me) - margin;
                let (ok, child_gain) = if effect.game_over {
                    (delta == gain, 0)
                } else if effect.extra_turn {
                    let target = gain - delta;
                    (
                        self.search(&child, target - 1, target + 1) == target,
                        target,
                    )
                } else {
                    let target = delta - gain;
                    (
                        self.search(&child, target - 1, target + 1) == target,
                        target,
                    )
                };
                if self.aborted {
                    return pv;
                }
                if ok {
                    found = Some((pit, child, child_gain));
                    break;
                }
            }
            let Some((pit, child, child_gain)) = found else {
                debug_assert!(false, "no move achieves the solved value");
                return pv;
            };
            pv.push(Move { side: me, pit });
            pos = child;
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
