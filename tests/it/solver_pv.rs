//! The solver's principal variation of the standard game, Kalah(6,4), replayed and checked
//! position by position against a second implementation that shares nothing with the
//! library: its own sowing, written from the rules, and plain memoized minimax over whole
//! positions (stores included), no endgame table, no pruning.
//!
//! Slow (a minute or two on two cores: the endgame table of k=20 is built in memory, then
//! the game is solved), so ignored by default:
//!
//! ```text
//! cargo test --release --test it -- --ignored --nocapture solver_pv::
//! ```
//!
//! `KALAHA_PV_K` sets the table's k (default 20), `KALAHA_PV_TABLES` a folder to load it
//! from instead of building it (see `kalaha tables build`), and `KALAHA_PV_SEEDS` the most
//! seeds in pits of a position given to minimax (default 15).

use kalaha::rules::{Position, Rules, Side, Sweep};
use kalaha::solver::{EndgameTable, Solver, TableRules};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// A position of the second implementation: cells in south's sowing order (south's pits,
/// south's store, north's pits, north's store) and whether south is to move.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Board {
    cells: Vec<u16>,
    south: bool,
}

/// The rules the second implementation needs.
#[derive(Clone, Copy)]
struct Variant {
    pits: usize,
    empty_capture: bool,
    sweep: Sweep,
}

impl Board {
    fn start(v: Variant, seeds: u16) -> Board {
        let p = v.pits;
        let mut cells = vec![seeds; 2 * p + 2];
        cells[p] = 0;
        cells[2 * p + 1] = 0;
        Board { cells, south: true }
    }

    fn row(&self, v: Variant, south: bool) -> &[u16] {
        let p = v.pits;
        if south {
            &self.cells[..p]
        } else {
            &self.cells[p + 1..2 * p + 1]
        }
    }

    fn over(&self, v: Variant) -> bool {
        self.row(v, true).iter().all(|&c| c == 0) || self.row(v, false).iter().all(|&c| c == 0)
    }

    /// Sows pit `pit` (1-based) of the side to move, seed by seed.
    fn play(&self, v: Variant, pit: usize) -> Board {
        let p = v.pits;
        let n = 2 * p + 2;
        let (base, store, other_store) = if self.south {
            (0, p, 2 * p + 1)
        } else {
            (p + 1, 2 * p + 1, p)
        };
        let mut c = self.cells.clone();
        let mut i = base + pit - 1;
        let mut seeds = c[i];
        assert!(seeds > 0, "pit {pit} is empty");
        c[i] = 0;
        while seeds > 0 {
            i = (i + 1) % n;
            if i == other_store {
                continue;
            }
            c[i] += 1;
            seeds -= 1;
        }
        let mut again = i == store;
        if !again && (base..base + p).contains(&i) && c[i] == 1 {
            let opposite = 2 * p - i;
            if c[opposite] > 0 || v.empty_capture {
                c[store] += c[opposite] + 1;
                c[opposite] = 0;
                c[i] = 0;
            }
        }
        let mut b = Board {
            cells: c,
            south: self.south,
        };
        if b.over(v) {
            let south: u16 = b.row(v, true).iter().sum();
            let north: u16 = b.row(v, false).iter().sum();
            match v.sweep {
                Sweep::Owner => {
                    b.cells[p] += south;
                    b.cells[2 * p + 1] += north;
                }
                Sweep::EmptySide => {
                    if south == 0 {
                        b.cells[p] += north;
                    } else {
                        b.cells[2 * p + 1] += south;
                    }
                }
                Sweep::None => {}
            }
            for k in 0..p {
                b.cells[k] = 0;
                b.cells[p + 1 + k] = 0;
            }
            again = false;
        }
        if !again {
            b.south = !b.south;
        }
        b
    }

    /// The mover's store minus the other's.
    fn margin(&self, v: Variant) -> i32 {
        let (s, n) = (self.cells[v.pits] as i32, self.cells[2 * v.pits + 1] as i32);
        if self.south { s - n } else { n - s }
    }
}

/// What the side to move adds to its store margin from `b` to the end under best play, by
/// plain minimax; remembered by pits and side to move (the stores do not change it).
fn gain(v: Variant, b: &Board, memo: &mut HashMap<u128, i32>) -> i32 {
    let p = v.pits;
    // Both rows, 8 bits a pit (positions this test gives to minimax hold few seeds), and
    // the side to move.
    let key =
        b.cells[..p]
            .iter()
            .chain(&b.cells[p + 1..2 * p + 1])
            .fold(b.south as u128, |k, &c| {
                assert!(c < 256);
                k << 8 | c as u128
            });
    if let Some(&x) = memo.get(&key) {
        return x;
    }
    let mut best = i32::MIN;
    for pit in 1..=p {
        if b.row(v, b.south)[pit - 1] == 0 {
            continue;
        }
        let child = b.play(v, pit);
        // The move's own gain for the mover, then what follows: the child's gain is for
        // its mover, the same side after an extra turn.
        let now = if child.south == b.south {
            child.margin(v)
        } else {
            -child.margin(v)
        } - b.margin(v);
        let then = if child.over(v) {
            0
        } else if child.south == b.south {
            gain(v, &child, memo)
        } else {
            -gain(v, &child, memo)
        };
        best = best.max(now + then);
    }
    memo.insert(key, best);
    best
}

/// The final margin for the side to move under best play (`b` not over).
fn minimax(v: Variant, b: &Board, memo: &mut HashMap<u128, i32>) -> i32 {
    b.margin(v) + gain(v, b, memo)
}

fn env(name: &str, default: u32) -> u32 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// Seeds left in both rows.
fn seeds_in_pits(v: Variant, b: &Board) -> u16 {
    b.row(v, true).iter().sum::<u16>() + b.row(v, false).iter().sum::<u16>()
}

fn check_principal_variation(rules: Rules, published: i32) {
    let k = env("KALAHA_PV_K", 20);
    let few = env("KALAHA_PV_SEEDS", 15) as u16;
    let t = std::time::Instant::now();
    let tr = TableRules::of(&rules);
    let table = match std::env::var_os("KALAHA_PV_TABLES") {
        Some(dir) => kalaha::solver::TableStore::new(dir).load(tr, k).unwrap(),
        None => EndgameTable::build(tr, k, 2, &|_| {}, &AtomicBool::new(false)).unwrap(),
    };
    println!(
        "{rules}: table k={k} ready in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let t = std::time::Instant::now();
    let mut solver = Solver::new(256);
    solver.set_threads(2);
    solver.set_endgame(Some(Arc::new(table)));
    let start = Position::start(rules);
    let sol = solver.solve(&start);
    println!(
        "{rules}: value {} in {:.1} s, principal variation of {} moves",
        sol.value,
        t.elapsed().as_secs_f64(),
        sol.pv.len()
    );
    // A check against the published value, not where the value comes from.
    assert_eq!(sol.value, published, "{rules}");

    let v = Variant {
        pits: rules.pits(),
        empty_capture: rules.empty_capture(),
        sweep: rules.sweep(),
    };
    let mut memo = HashMap::new();
    let mut pos = start;
    let mut board = Board::start(v, rules.seeds() as u16);
    let mut checked = 0;
    for (i, m) in sol.pv.iter().enumerate() {
        // Both implementations see the same board.
        assert_eq!(pos.cells(), &board.cells[..], "move {i}");
        assert_eq!(pos.to_move() == Side::South, board.south, "move {i}");
        // Along best play every position is worth the final margin to its mover.
        let claimed = if board.south { sol.value } else { -sol.value };
        let seeds = seeds_in_pits(v, &board);
        if seeds <= few {
            let x = minimax(v, &board, &mut memo);
            println!("move {i}: {seeds} seeds in pits, minimax {x}, solver {claimed}");
            assert_eq!(x, claimed, "move {i}: {pos:?}");
            checked += 1;
        }
        // Every other move with few seeds left: the solver agrees with minimax, and the
        // line's move is at least as good.
        for pit in pos.legal_moves() {
            let child_board = board.play(v, pit as usize);
            if child_board.over(v) || seeds_in_pits(v, &child_board) > few {
                continue;
            }
            let child = pos.play(pit as i64).unwrap();
            let x = minimax(v, &child_board, &mut memo);
            let solved = solver.solve(&child).value;
            assert_eq!(solved, x, "move {i}, pit {pit}: {child:?}");
            let for_mover = if child_board.south == board.south {
                x
            } else {
                -x
            };
            assert!(
                for_mover <= claimed,
                "move {i}: pit {pit} gives {for_mover}"
            );
            checked += 1;
        }
        pos = pos.play(m.pit as i64).unwrap();
        board = board.play(v, m.pit as usize);
    }
    assert!(pos.is_over() && board.over(v));
    assert_eq!(pos.cells(), &board.cells[..]);
    let final_margin = board.cells[v.pits] as i32 - board.cells[2 * v.pits + 1] as i32;
    assert_eq!(final_margin, sol.value);
    println!(
        "{checked} positions checked with minimax ({} in its memo)",
        memo.len()
    );
    assert!(
        checked >= 3,
        "only {checked} positions had at most {few} seeds"
    );
}

#[test]
#[ignore]
fn the_principal_variation_of_kalah_6_4_holds_under_minimax() {
    // Irving, Donkers and Uiterwijk (2000), Rawlings (2015): Kalah(6,4) = +8.
    check_principal_variation(Rules::default(), 8);
}

#[test]
fn the_second_implementation_agrees_with_the_rules_on_random_games() {
    // The check above is only as good as its second implementation: it must play the
    // same games as the library, in every variant.
    use rand::{RngExt, SeedableRng};
    let mut rng = rand::rngs::ChaCha8Rng::seed_from_u64(3);
    for empty_capture in [false, true] {
        for sweep in Sweep::ALL {
            let rules = Rules::new(4, 3, empty_capture, sweep).unwrap();
            let v = Variant {
                pits: 4,
                empty_capture,
                sweep,
            };
            for _ in 0..200 {
                let mut pos = Position::start(rules);
                let mut board = Board::start(v, 3);
                while !pos.is_over() {
                    let moves: Vec<u8> = pos.legal_moves().collect();
                    let pit = moves[rng.random_range(0..moves.len())];
                    pos = pos.play(pit as i64).unwrap();
                    board = board.play(v, pit as usize);
                    assert_eq!(pos.cells(), &board.cells[..], "{rules}");
                    assert_eq!(pos.to_move() == Side::South, board.south, "{rules}");
                }
                assert!(board.over(v));
            }
            // And minimax on a whole (smaller) game agrees with the solver.
            let small = Rules::new(3, 3, empty_capture, sweep).unwrap();
            let sv = Variant { pits: 3, ..v };
            let mut memo = HashMap::new();
            let x = minimax(sv, &Board::start(sv, 3), &mut memo);
            assert_eq!(
                x,
                Solver::new(4).solve(&Position::start(small)).value,
                "{small}"
            );
        }
    }
}
