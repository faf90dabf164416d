//! The game-tree search behind `medium`, `hard` and `perfect`'s fallback: negamax
//! alpha-beta on the future gain (as in [`crate::solver`]: a position's score is its store
//! margin plus what the mover can still gain, which depends on the pits alone), with an
//! evaluation at the horizon, iterative deepening, a transposition table keyed on the pits,
//! and a time or node budget.

use crate::rules::{Position, Rules, Sweep};
use crate::solver::{ordered_moves, pack_bits, pits_key, seeds_in_pits};
use std::time::{Duration, Instant};

/// Scores are in quarter seeds so that positional terms can weigh less than a seed.
pub const SCALE: i32 = 4;

/// The horizon evaluation: the future gain the mover can expect from the pits alone, in
/// quarter seeds. With sweep `owner` seeds on one's own side tend to end in one's store
/// (weighted `side_weight` quarter seeds each); a move that ends in the store now is worth
/// about a seed (`extra_turn_weight` each, as the mover is to move).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Evaluation {
    pub side_weight: i32,
    pub extra_turn_weight: i32,
}

impl Evaluation {
    /// The default weights for a rule variant.
    pub fn for_rules(rules: &Rules) -> Evaluation {
        Evaluation {
            side_weight: match rules.sweep() {
                Sweep::Owner => 1,
                Sweep::EmptySide | Sweep::None => 0,
            },
            extra_turn_weight: 2,
        }
    }

    /// Only the store margin counts (the future gain at the horizon is taken as 0).
    pub fn stores_only() -> Evaluation {
        Evaluation {
            side_weight: 0,
            extra_turn_weight: 0,
        }
    }

    #[inline]
    fn horizon(&self, pos: &Position) -> i32 {
        if self.side_weight == 0 && self.extra_turn_weight == 0 {
            return 0;
        }
        let me = pos.to_move();
        let mine = pos.pits(me);
        let theirs = pos.pits(me.opponent());
        let p = mine.len();
        let own: i32 = mine.iter().map(|&s| s as i32).sum();
        let opp: i32 = theirs.iter().map(|&s| s as i32).sum();
        let lap = 2 * p + 1;
        let extra = mine
            .iter()
            .enumerate()
            .filter(|&(i, &s)| s > 0 && s as usize % lap == p - i)
            .count() as i32;
        self.side_weight * (own - opp) + self.extra_turn_weight * extra
    }
}

#[derive(Clone, Copy, Default)]
struct Entry {
    key: u64,
    /// Bounds on the future gain (quarter seeds).
    lo: i32,
    hi: i32,
    move_: u8,
    /// Plies searched below; `EXACT_DEPTH` when no horizon evaluation was involved.
    depth: u8,
}

const EXACT_DEPTH: u8 = u8::MAX;

/// Extra turns in a row along one line that do not use up depth.
const MAX_EXTENSIONS: u32 = 6;

/// How often (in nodes) the search looks at the clock: a few microseconds apart, so that
/// it stops soon after its deadline even when it shares a busy machine.
pub const CHECK_EVERY: u64 = 256;

/// A two-way bucketed table: one slot kept by depth, one always replaced.
struct Table {
    entries: Vec<Entry>,
    mask: usize,
}

impl Table {
    fn new(mb: usize) -> Table {
        let bytes = mb.max(1) * 1024 * 1024;
        let mut buckets = (bytes / (2 * std::mem::size_of::<Entry>())).next_power_of_two();
        if buckets * 2 * std::mem::size_of::<Entry>() > bytes {
            buckets /= 2;
        }
        let buckets = buckets.max(1);
        Table {
            entries: vec![Entry::default(); 2 * buckets],
            mask: buckets - 1,
        }
    }

    #[inline]
    fn index(&self, key: u64) -> usize {
        let h = (key ^ (key >> 31)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        ((h >> 17) as usize & self.mask) * 2
    }

    #[inline]
    fn probe(&self, key: u64) -> Option<Entry> {
        let i = self.index(key);
        self.entries[i..i + 2]
            .iter()
            .find(|e| e.key == key)
            .copied()
    }

    #[inline]
    fn store(&mut self, e: Entry) {
        let i = self.index(e.key);
        let slot = if self.entries[i].key == e.key || e.depth >= self.entries[i].depth {
            i
        } else {
            i + 1
        };
        self.entries[slot] = e;
    }

    fn clear(&mut self) {
        self.entries.fill(Entry::default());
    }
}

/// The result of one completed iteration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Iteration {
    pub depth: u32,
    /// The mover's expected final margin, in quarter seeds.
    pub score: i32,
    pub best: u8,
    pub pv: Vec<u8>,
    pub nodes: u64,
    pub elapsed: Duration,
    /// No horizon evaluation was involved: the score is the exact game value.
    pub exact: bool,
}

/// The search state, kept between moves (the table survives within one rule variant).
pub struct Searcher {
    table: Table,
    rules: Option<Rules>,
    pack_bits: u32,
    pub eval: Evaluation,
    /// Whether `eval` follows the rules (reset by each new rule variant).
    auto_eval: bool,
    nodes: u64,
    deadline: Option<Instant>,
    aborted: bool,
    horizon_used: bool,
    /// The best root move of the iteration in progress once its first move is searched.
    root_best: Option<u8>,
    /// Extra turns searched without using up depth on the current line.
    extensions: u32,
    /// Nothing was stored in the table since it was last cleared (or built).
    table_empty: bool,
    /// Times the clock was looked at in the last search.
    clock_checks: u64,
}

impl Searcher {
    pub fn new(hash_mb: usize) -> Searcher {
        Searcher {
            table: Table::new(hash_mb),
            rules: None,
            pack_bits: 0,
            eval: Evaluation::stores_only(),
            auto_eval: true,
            nodes: 0,
            deadline: None,
            aborted: false,
            horizon_used: false,
            root_best: None,
            extensions: 0,
            table_empty: true,
            clock_checks: 0,
        }
    }

    /// Fixes the evaluation instead of the rules' default one.
    pub fn with_eval(mut self, eval: Evaluation) -> Searcher {
        self.eval = eval;
        self.auto_eval = false;
        self
    }

    /// Forgets everything learned in earlier searches (the table): the next search is
    /// that of a fresh searcher.
    pub fn clear(&mut self) {
        if !self.table_empty {
            self.table.clear();
            self.table_empty = true;
        }
        self.rules = None;
        self.pack_bits = 0;
    }

    /// Clears the table when the rules change, or when `pos` holds more seeds than the
    /// current keys can pack.
    fn prepare(&mut self, pos: &Position) {
        let rules = pos.rules();
        let bits = pack_bits(rules, seeds_in_pits(pos) as u32);
        if self.rules.as_ref() == Some(rules) && self.pack_bits >= bits {
            return;
        }
        self.rules = Some(*rules);
        self.pack_bits = bits;
        if !self.table_empty {
            self.table.clear();
            self.table_empty = true;
        }
        if self.auto_eval {
            self.eval = Evaluation::for_rules(rules);
        }
    }

    /// Iterative deepening from depth 1 up to `max_depth` (0: no limit) until `deadline`,
    /// calling `report` after each completed iteration; returns the last one. Stops early
    /// once the result is exact, or when the next iteration is unlikely to finish in time.
    /// Returns a move even when not even depth 1 finishes in time (then `depth` is 0).
    pub fn iterate(
        &mut self,
        pos: &Position,
        max_depth: u32,
        deadline: Option<Instant>,
        report: &mut dyn FnMut(&Iteration),
    ) -> Iteration {
        assert!(!pos.is_over(), "search of a finished game");
        self.prepare(pos);
        let started = Instant::now();
        self.nodes = 0;
        self.clock_checks = 0;
        let max_depth = if max_depth == 0 {
            250
        } else {
            max_depth.min(250)
        };
        let mut last: Option<Iteration> = None;
        for depth in 1..=max_depth {
            self.deadline = deadline;
            self.aborted = false;
            self.extensions = 0;
            self.horizon_used = false;
            self.root_best = None;
            let s = seeds_in_pits(pos) * SCALE;
            let gain = self.search_node(pos, depth, -s - 1, s + 1, true);
            if self.aborted {
                // A root move that beat the previous best move at this depth is better
                // than it.
                match (self.root_best, last.as_mut()) {
                    (Some(m), Some(prev)) if m != prev.best => {
                        prev.best = m;
                        prev.pv = vec![m];
                    }
                    (_, Some(_)) => {}
                    (root_best, None) => {
                        // Not even depth 1 finished in time.
                        let m = root_best.unwrap_or(ordered_moves(pos, 0).as_slice()[0]);
                        last = Some(Iteration {
                            depth: 0,
                            score: pos.store_margin(pos.to_move()) * SCALE,
                            best: m,
                            pv: vec![m],
                            nodes: self.nodes,
                            elapsed: started.elapsed(),
                            exact: false,
                        });
                    }
                }
                break;
            }
            let exact = !self.horizon_used;
            let pv = self.pv(pos, depth);
            let it = Iteration {
                depth,
                score: pos.store_margin(pos.to_move()) * SCALE + gain,
                best: pv[0],
                pv,
                nodes: self.nodes,
                elapsed: started.elapsed(),
                exact,
            };
            report(&it);
            last = Some(it);
            if exact {
                break;
            }
            if let Some(d) = deadline {
                // The next iteration costs several times this one: do not start it when
                // it cannot finish.
                let now = Instant::now();
                if now >= d || (now - started).as_secs_f64() > 0.6 * (d - started).as_secs_f64() {
                    break;
                }
            }
        }
        last.expect("an iteration or a fallback move")
    }

    /// The best line from the table, at most `depth` moves.
    fn pv(&self, pos: &Position, depth: u32) -> Vec<u8> {
        let mut line = Vec::new();
        let mut cur = *pos;
        while line.len() < depth as usize && !cur.is_over() {
            let Some(e) = self.table.probe(pits_key(&cur, self.pack_bits)) else {
                break;
            };
            let legal = e.move_ as usize >= 1
                && e.move_ as usize <= cur.rules().pits()
                && cur.pit(cur.to_move(), e.move_ as usize) > 0;
            if !legal {
                break;
            }
            line.push(e.move_);
            cur.sow(e.move_ as usize);
        }
        if line.is_empty() {
            // The root entry was replaced: fall back to the first ordered move.
            line.push(ordered_moves(pos, 0).as_slice()[0]);
        }
        line
    }

    /// Whether the time is up, looking at the clock on the first node of a search and then
    /// every [`CHECK_EVERY`] nodes (a deadline already passed stops the search at once).
    #[inline]
    fn out_of_time(&mut self) -> bool {
        if self.nodes % CHECK_EVERY == 1
            && let Some(d) = self.deadline
        {
            self.clock_checks += 1;
            if Instant::now() >= d {
                self.aborted = true;
            }
        }
        self.aborted
    }

    /// The future gain of `pos` (not over) for its mover, fail-soft within `alpha..beta`,
    /// in quarter seeds, looking `depth` sowings ahead.
    fn search(&mut self, pos: &Position, depth: u32, alpha: i32, beta: i32) -> i32 {
        self.search_node(pos, depth, alpha, beta, false)
    }

    fn search_node(
        &mut self,
        pos: &Position,
        depth: u32,
        alpha: i32,
        beta: i32,
        root: bool,
    ) -> i32 {
        self.nodes += 1;
        if self.out_of_time() {
            return 0;
        }
        let s = seeds_in_pits(pos) * SCALE;
        if alpha >= s {
            return s;
        }
        if beta <= -s {
            return -s;
        }
        if depth == 0 {
            self.horizon_used = true;
            return self.eval.horizon(pos).clamp(-s, s);
        }
        let key = pits_key(pos, self.pack_bits);
        let (tt_move, mut alpha, beta) = match self.probe(key, depth, alpha, beta) {
            Probe::Settled(v) => return v,
            Probe::Search {
                tt_move,
                alpha,
                beta,
            } => (tt_move, alpha, beta),
        };
        let outer_horizon = self.horizon_used;
        self.horizon_used = false;
        let alpha0 = alpha;
        let margin = pos.store_margin(pos.to_move());
        let mut best = i32::MIN;
        let mut best_move = 0;
        for (i, &pit) in ordered_moves(pos, tt_move).as_slice().iter().enumerate() {
            let value = self.move_value(pos, margin, pit, i == 0, depth, alpha, beta);
            if self.aborted {
                return 0;
            }
            if value > best {
                best = value;
                best_move = pit;
                if root {
                    self.root_best = Some(pit);
                }
                if value > alpha {
                    alpha = value;
                    if alpha >= beta {
                        break;
                    }
                }
            }
        }
        let (lo, hi) = if best <= alpha0 {
            (-s, best)
        } else if best >= beta {
            (best, s)
        } else {
            (best, best)
        };
        self.store(key, lo, hi, best_move, depth);
        self.horizon_used |= outer_horizon;
        best
    }

    /// What the table knows of the position with `key` searched `depth` deep: a value
    /// that settles the window, or the move to try first and the window narrowed by its
    /// bounds.
    #[inline(always)]
    fn probe(&mut self, key: u64, depth: u32, mut alpha: i32, mut beta: i32) -> Probe {
        let Some(e) = self.table.probe(key) else {
            return Probe::Search {
                tt_move: 0,
                alpha,
                beta,
            };
        };
        if e.depth as u32 >= depth {
            if e.depth != EXACT_DEPTH {
                self.horizon_used = true;
            }
            if e.lo >= beta {
                return Probe::Settled(e.lo);
            }
            if e.hi <= alpha {
                return Probe::Settled(e.hi);
            }
            if e.lo == e.hi {
                return Probe::Settled(e.lo);
            }
            alpha = alpha.max(e.lo);
            beta = beta.min(e.hi);
        }
        Probe::Search {
            tt_move: e.move_,
            alpha,
            beta,
        }
    }

    /// The value for the mover of sowing `pit` in `pos` (whose store margin is `margin`),
    /// fail-soft within `alpha..beta`: the first move with the full window, the others
    /// with a null window first (principal-variation search).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn move_value(
        &mut self,
        pos: &Position,
        margin: i32,
        pit: u8,
        first: bool,
        depth: u32,
        alpha: i32,
        beta: i32,
    ) -> i32 {
        let mut child = *pos;
        let effect = child.sow(pit as usize);
        let delta = (child.store_margin(pos.to_move()) - margin) * SCALE;
        if effect.game_over {
            delta
        } else if effect.extra_turn {
            let (a, b) = (alpha - delta, beta - delta);
            // An extra turn is part of the same turn: it does not use up depth, up to a
            // few in a row.
            let d = if self.extensions < MAX_EXTENSIONS {
                depth
            } else {
                depth - 1
            };
            self.extensions += 1;
            let mut v = if first {
                self.search(&child, d, a, b)
            } else {
                self.search(&child, d, a, a + 1)
            };
            if !first && v > a && v < b && !self.aborted {
                v = self.search(&child, d, v - 1, b);
            }
            self.extensions -= 1;
            delta + v
        } else {
            let (a, b) = (delta - beta, delta - alpha);
            let mut v = if first {
                self.search(&child, depth - 1, a, b)
            } else {
                self.search(&child, depth - 1, b - 1, b)
            };
            if !first && v < b && v > a && !self.aborted {
                v = self.search(&child, depth - 1, a, v + 1);
            }
            delta - v
        }
    }

    /// Keeps the bounds `lo..=hi` found by a search `depth` deep, exact if no horizon
    /// evaluation was involved.
    #[inline(always)]
    fn store(&mut self, key: u64, lo: i32, hi: i32, move_: u8, depth: u32) {
        let exact = !self.horizon_used;
        self.table_empty = false;
        self.table.store(Entry {
            key,
            lo,
            hi,
            move_,
            depth: if exact {
                EXACT_DEPTH
            } else {
                depth.min(250) as u8
            },
        });
    }
}

/// A first guess of the exact value of `pos` (not over) for the solver's MTD(f), which
/// needs fewer null-window searches the closer it starts: this search's score, deepened
/// up to `max_depth` plies or until `deadline`, rounded to the nearest value the game can
/// end with (when every seed ends in a store, the final margin has the parity of the seeds
/// on the board). Also returns the depth reached (0 when not even depth 1 finished).
pub fn first_guess(pos: &Position, max_depth: u32, deadline: Instant) -> (i32, u32) {
    let mut searcher = Searcher::new(16);
    let it = searcher.iterate(pos, max_depth, Some(deadline), &mut |_| {});
    let seeds = if it.depth == 0 {
        pos.store_margin(pos.to_move()) as f64
    } else {
        it.score as f64 / SCALE as f64
    };
    let guess = if pos.rules().sweep() == Sweep::None {
        seeds.round() as i32
    } else {
        // The nearest integer of the board's parity: odd or even steps of two.
        let odd = (pos.total_seeds() % 2) as f64;
        (((seeds - odd) / 2.0).round() * 2.0 + odd) as i32
    };
    (guess, it.depth)
}

/// What the table says about a position before its moves are searched.
enum Probe {
    /// Its value, within or outside the window: no search needed.
    Settled(i32),
    /// Search it, `tt_move` first (0: none), within `alpha..beta`.
    Search { tt_move: u8, alpha: i32, beta: i32 },
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Sweep;
    use crate::solver::Solver;

    #[test]
    fn a_first_guess_has_the_parity_of_the_seeds_and_is_near_the_value() {
        let far = Instant::now() + Duration::from_secs(3600);
        // Kalah(6,4) is worth 8: the guess at depth 12 is a value the game can end with,
        // within a few seeds of it.
        let pos = Position::start(Rules::default());
        let (guess, depth) = first_guess(&pos, 12, far);
        assert_eq!(depth, 12);
        assert_eq!(guess % 2, 0);
        assert!((4..=12).contains(&guess), "{guess}");
        // An odd number of seeds on the board: an odd guess.
        let odd = Position::from_compact(
            "1,0,0:0/0,0,2:0/s",
            Rules::new(3, 1, false, Sweep::Owner).unwrap(),
        )
        .unwrap();
        let (guess, _) = first_guess(&odd, 20, far);
        assert_eq!(guess.rem_euclid(2), 1);
        // Small boards are searched to the end: the guess is the value.
        let small = Position::start(Rules::new(3, 2, false, Sweep::Owner).unwrap());
        let value = Solver::new(1).solve(&small).value;
        assert_eq!(first_guess(&small, 60, far).0, value);
        // A deadline already passed: the store margin.
        let (guess, depth) = first_guess(&pos, 12, Instant::now());
        assert_eq!((guess, depth), (0, 0));
    }

    #[test]
    fn a_cleared_searcher_searches_like_a_fresh_one() {
        let start = Position::start(Rules::default());
        let later = start.play(3).unwrap().play(1).unwrap();
        let search = |s: &mut Searcher, pos: &Position| {
            let mut it = s.iterate(pos, 6, None, &mut |_| {});
            it.elapsed = Duration::ZERO;
            it
        };
        let fresh = search(&mut Searcher::new(1), &later);
        let mut used = Searcher::new(1);
        search(&mut used, &start);
        let warm = search(&mut used, &later);
        used.clear();
        search(&mut used, &start);
        used.clear();
        assert_eq!(search(&mut used, &later), fresh);
        // Without the clear the table changes the search (at least its node count).
        assert_ne!(warm.nodes, fresh.nodes);
    }

    #[test]
    fn deep_enough_search_is_exact_and_agrees_with_the_solver() {
        for sweep in Sweep::ALL {
            let rules = Rules::new(3, 3, false, sweep).unwrap();
            let pos = Position::start(rules);
            let mut searcher = Searcher::new(4);
            let it = searcher.iterate(&pos, 0, None, &mut |_| {});
            assert!(it.exact, "{sweep}");
            let sol = Solver::new(4).solve(&pos);
            assert_eq!(it.score, sol.value * SCALE, "{sweep}");
        }
    }

    #[test]
    fn iterations_are_reported_and_depth_is_limited() {
        let pos = Position::start(Rules::default());
        let mut searcher = Searcher::new(4);
        let mut depths = Vec::new();
        let it = searcher.iterate(&pos, 5, None, &mut |it| depths.push(it.depth));
        assert_eq!(depths, vec![1, 2, 3, 4, 5]);
        assert_eq!(it.depth, 5);
        assert!(!it.exact);
        assert!(pos.play(it.best as i64).is_ok());
        assert_eq!(it.pv[0], it.best);
    }

    /// Nodes per second of a fixed-depth search of the standard start (the least time of
    /// five runs), and its node count and score, which a change that only restructures
    /// the code must keep: `cargo test --release --lib -- --ignored --nocapture
    /// search_speed`.
    #[test]
    #[ignore]
    fn search_speed() {
        let pos = Position::start(Rules::default());
        let mut best = f64::MAX;
        let mut result = None;
        for _ in 0..5 {
            let mut searcher = Searcher::new(16);
            let t = Instant::now();
            let it = searcher.iterate(&pos, 13, None, &mut |_| {});
            best = best.min(t.elapsed().as_secs_f64());
            result = Some((it.nodes, it.score, it.best));
        }
        let (nodes, score, pit) = result.unwrap();
        println!(
            "depth 13: {nodes} nodes, score {score}, move {pit}, {best:.3} s, {:.2} M nodes/s",
            nodes as f64 / best / 1e6
        );
    }

    #[test]
    fn a_deadline_in_the_past_still_gives_a_move() {
        let pos = Position::start(Rules::default());
        let mut searcher = Searcher::new(1);
        let it = searcher.iterate(&pos, 0, Some(Instant::now()), &mut |_| {});
        assert!(it.depth <= 1);
        assert!(pos.play(it.best as i64).is_ok());
        // The clock is looked at on the very first node: nothing more is searched.
        assert_eq!(it.nodes, 1);
    }

    #[test]
    fn the_clock_is_looked_at_every_few_nodes() {
        // Whatever the machine's load, a search that looks at the clock this often stops
        // within a few microseconds of computing after its deadline.
        let pos = Position::start(Rules::default());
        let mut searcher = Searcher::new(1);
        let far = Instant::now() + Duration::from_secs(3600);
        let it = searcher.iterate(&pos, 8, Some(far), &mut |_| {});
        assert!(it.nodes > 10 * CHECK_EVERY, "{} nodes", it.nodes);
        assert!(
            searcher.clock_checks >= it.nodes / CHECK_EVERY,
            "{} checks in {} nodes",
            searcher.clock_checks,
            it.nodes
        );
        // Without a deadline there is nothing to look at.
        searcher.iterate(&pos, 8, None, &mut |_| {});
        assert_eq!(searcher.clock_checks, 0);
    }
}
