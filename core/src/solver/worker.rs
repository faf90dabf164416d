//! One thread's search: null-window alpha-beta on the future gain with a shared
//! transposition table keyed exactly, enhanced transposition cutoffs, endgame-table
//! look-ups, move ordering and a node or time budget.

use super::endgame::EndgameTable;
use super::index::Indexer;
use super::moves::{ordered_moves, pits_key, seeds_in_pits};
use super::search::Budget;
use super::tt::Table;
use crate::rules::{MAX_PITS, Move, Position};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

/// How often (in nodes) the budget is looked at: a few microseconds apart, so that a
/// search stops soon after its deadline even on a busy machine.
pub(crate) const CHECK_EVERY: u64 = 256;

/// Enhanced transposition cutoffs are tried in positions with more than this many seeds
/// in the pits beyond what the endgame table holds, where a search below costs enough to
/// pay for fetching every child's entry from memory at once. Nearer the table the search
/// waits on memory more than it computes: on the standard Kalah(6,5) (k=28, 2 GiB, two
/// threads), after the moves 2 3 1 3 1, trying them everywhere with every child fetched
/// took 96.5 s against 64.0 to 78.1 s with this margin, though it searched 123 M
/// positions against 138 M to 140 M.
const ETC_MARGIN: i32 = 6;

/// How the transposition table names a position.
#[derive(Clone, Debug)]
pub(super) enum Keys {
    /// The [`Indexer`] rank of the pits: exact.
    Rank(Indexer),
    /// Both rows packed in 64 bits (exact), or hashed when they do not fit (see
    /// [`pits_key`]).
    Packed(u32),
}

/// The lowest legal pit (for a result that needs no search).
pub(super) fn first_move(pos: &Position) -> u8 {
    pos.legal_moves().next().unwrap_or(0)
}

/// One thread's search.
pub(super) struct Worker<'a> {
    table: &'a Table,
    live_nodes: &'a AtomicU64,
    endgame: Option<&'a EndgameTable>,
    /// The endgame table's `k`, -1 without one.
    endgame_seeds: i32,
    keys: &'a Keys,
    pub(super) nodes: u64,
    budget: Budget,
    /// Set by whichever thread finishes first: the others stop.
    stop: Option<&'a AtomicBool>,
    pub(super) aborted: bool,
    /// 0 for the main thread; helpers vary their move order by it.
    id: usize,
    /// The best move at the root of the last search.
    pub(super) root_move: u8,
    /// Times the budget was looked at.
    pub(super) checks: u64,
}

impl<'a> Worker<'a> {
    /// Thread `id`'s search (0 for the main one) with these tables and keys, within
    /// `budget`, stopping early when `stop` is set.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        table: &'a Table,
        live_nodes: &'a AtomicU64,
        endgame: Option<&'a EndgameTable>,
        keys: &'a Keys,
        budget: Budget,
        stop: Option<&'a AtomicBool>,
        id: usize,
    ) -> Worker<'a> {
        Worker {
            table,
            live_nodes,
            endgame,
            endgame_seeds: endgame.map_or(-1, |t| t.max_seeds() as i32),
            keys,
            nodes: 0,
            budget,
            stop,
            aborted: false,
            id,
            root_move: 0,
            checks: 0,
        }
    }
}

/// A position with the seeds in its pits and its key, worked out once.
#[derive(Clone, Copy)]
pub(super) struct Node {
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
    pub(super) fn node(&self, pos: Position) -> Node {
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

    /// Whether the search is to stop, looking at the budget on the first node of a
    /// search and then every [`CHECK_EVERY`] nodes (a deadline already passed stops it at
    /// once).
    #[inline]
    fn out_of_budget(&mut self) -> bool {
        if self.nodes % CHECK_EVERY == 1 {
            self.checks += 1;
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

    /// The moves of `pos` (not over) in the order to search them, with their children.
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
                self.node(child)
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

        if s > self.endgame_seeds + ETC_MARGIN
            && let Some(lo) = self.transposition_cutoff(node, children, beta, ply)
        {
            return lo;
        }

        let mut best = i32::MIN;
        let mut best_move = 0u8;
        for (i, c) in children.iter().enumerate() {
            let value = self.move_value(c, i == 0, alpha, beta, ply);
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

    /// Enhanced transposition cutoffs: the value of a move of `node` already known to
    /// refute the window (the game ends, or the endgame table or the transposition table
    /// says so), kept in the table.
    #[inline(always)]
    fn transposition_cutoff(
        &mut self,
        node: &Node,
        children: &[Child],
        beta: i32,
        ply: u32,
    ) -> Option<i32> {
        // Ask for every child's entry at once, so that the waits for memory overlap.
        for c in children.iter().filter(|c| !c.over) {
            self.prefetch(&c.node);
        }
        for c in children {
            if let Some((lo, _)) = self.known(c)
                && lo >= beta
            {
                self.table
                    .store(node.key, lo as i16, node.seeds as i16, c.pit, 0);
                if ply == 0 {
                    self.root_move = c.pit;
                }
                return Some(lo);
            }
        }
        None
    }

    /// The value of move `c` for its mover, fail-soft within `alpha..beta`: exact when
    /// the game ends or the endgame table has it, else searched, the first move with the
    /// full window and the others with a null window first (principal-variation search).
    #[inline(always)]
    fn move_value(&mut self, c: &Child, first: bool, alpha: i32, beta: i32, ply: u32) -> i32 {
        if c.over {
            c.delta
        } else if let Some(v) = self.endgame_value(&c.node) {
            c.value(v)
        } else if c.extra_turn {
            let (a, b) = (alpha - c.delta, beta - c.delta);
            let mut v = if first {
                self.search(&c.node, a, b, ply + 1)
            } else {
                self.search(&c.node, a, a + 1, ply + 1)
            };
            if !first && v > a && v < b && !self.aborted {
                // The null window proved v a lower bound: find the exact value.
                v = self.search(&c.node, v - 1, b, ply + 1);
            }
            c.delta + v
        } else {
            let (a, b) = (c.delta - beta, c.delta - alpha);
            let mut v = if first {
                self.search(&c.node, a, b, ply + 1)
            } else {
                self.search(&c.node, b - 1, b, ply + 1)
            };
            if !first && v < b && v > a && !self.aborted {
                // The null window proved v an upper bound: find the exact value.
                v = self.search(&c.node, a, v + 1, ply + 1);
            }
            c.delta - v
        }
    }

    /// The future gain of `node` (not over) within `alpha..beta` as [`Worker::search`]
    /// gives it, looking it up if it is in the endgame table.
    pub(super) fn value(&mut self, node: &Node, alpha: i32, beta: i32, ply: u32) -> i32 {
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
    pub(super) fn principal_variation(&mut self, pos: &Position, gain: i32) -> Vec<Move> {
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
#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Rules;
    use crate::solver::Solver;

    /// A null-window search of the standard start by one worker of `solver`.
    fn search_start(solver: &mut Solver, budget: Budget) -> (u64, u64, bool) {
        let pos = Position::start(Rules::default());
        let mut w = solver.test_worker(&pos, budget);
        let node = w.node(pos);
        w.value(&node, -1, 0, 0);
        (w.nodes, w.checks, w.aborted)
    }

    #[test]
    fn a_deadline_already_passed_stops_the_search_at_its_first_node() {
        let mut solver = Solver::new(1);
        let past = Budget {
            deadline: Some(Instant::now()),
            max_nodes: None,
        };
        assert_eq!(search_start(&mut solver, past), (1, 1, true));
    }

    #[test]
    fn the_budget_is_looked_at_every_few_nodes() {
        // Whatever the machine's load, a search that looks at the clock this often stops
        // within a few microseconds of computing after its deadline.
        let mut solver = Solver::new(1);
        let nodes = 40 * CHECK_EVERY;
        let budget = Budget {
            deadline: Some(Instant::now() + std::time::Duration::from_secs(3600)),
            max_nodes: Some(nodes),
        };
        let (searched, checks, aborted) = search_start(&mut solver, budget);
        assert!(aborted);
        assert_eq!(searched, nodes + 1);
        assert_eq!(checks, nodes / CHECK_EVERY + 1);
    }
}
