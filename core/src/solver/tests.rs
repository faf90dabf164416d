//! The solver against a deliberately simple second implementation: plain minimax over
//! whole positions, no table, no pruning, using only the checked `play`.

use super::index::Indexer;
use super::*;
use crate::rules::{Position, Row, Rules, Side, Sweep};
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};

/// Final store of south minus north under best play, by exhaustive minimax; `None` when
/// the game tree has more than `budget` positions left.
fn minimax_south(pos: &Position, budget: &mut u64) -> Option<i32> {
    if *budget == 0 {
        return None;
    }
    *budget -= 1;
    if pos.is_over() {
        return Some(pos.store_margin(Side::South));
    }
    let mut values = Vec::new();
    for pit in pos.legal_moves() {
        values.push(minimax_south(&pos.play(pit as i64).unwrap(), budget)?);
    }
    match pos.to_move() {
        Side::South => values.into_iter().max(),
        Side::North => values.into_iter().min(),
    }
}

/// The value for the side to move by plain minimax, if the tree is small enough.
fn try_reference_value(pos: &Position) -> Option<i32> {
    let mut budget = 3_000_000;
    let south = minimax_south(pos, &mut budget)?;
    Some(match pos.to_move() {
        Side::South => south,
        Side::North => -south,
    })
}

fn reference_value(pos: &Position) -> i32 {
    try_reference_value(pos).expect("a tree small enough for plain minimax")
}

fn all_variants(pits: u32, seeds: u32) -> Vec<Rules> {
    let mut v = Vec::new();
    for empty_capture in [false, true] {
        for sweep in Sweep::ALL {
            v.push(Rules::new(pits, seeds, empty_capture, sweep).unwrap());
        }
    }
    v
}

/// Replays the principal variation and checks that it ends with the solved value.
fn check_pv(pos: &Position, sol: &Solution) {
    let me = pos.to_move();
    let mut cur = *pos;
    for m in &sol.pv {
        assert_eq!(m.side, cur.to_move(), "pv {:?} from {pos:?}", sol.pv);
        cur = cur.play(m.pit as i64).unwrap();
    }
    assert!(
        cur.is_over(),
        "pv {:?} from {pos:?} does not end the game",
        sol.pv
    );
    assert_eq!(
        cur.store_margin(me),
        sol.value,
        "pv {:?} from {pos:?}",
        sol.pv
    );
}

/// A random position of the given size: random seeds in pits and stores, or a random walk
/// from the start.
fn random_position(rng: &mut ChaCha8Rng, rules: Rules) -> Position {
    if rules.total_seeds() <= 12 && rng.random_bool(0.5) {
        let mut pos = Position::start(rules);
        let plies = rng.random_range(0..12);
        for _ in 0..plies {
            if pos.is_over() {
                break;
            }
            let moves: Vec<u8> = pos.legal_moves().collect();
            let pit = moves[rng.random_range(0..moves.len())];
            pos = pos.play(pit as i64).unwrap();
        }
        pos
    } else {
        let p = rules.pits();
        let total = rules.total_seeds();
        // Scatter a few seeds over the 2p pits (so that plain minimax stays quick) and the
        // rest over the two stores.
        let in_pits = rng.random_range(2..=total.min(10));
        let mut cells = vec![0u16; 2 * p + 2];
        for k in 0..total {
            let i = if k < in_pits {
                rng.random_range(0..2 * p)
            } else {
                2 * p + rng.random_range(0..2)
            };
            cells[i] += 1;
        }
        let south = Row {
            pits: cells[..p].to_vec(),
            store: cells[2 * p],
        };
        let north = Row {
            pits: cells[p..2 * p].to_vec(),
            store: cells[2 * p + 1],
        };
        let side = if rng.random_bool(0.5) {
            Side::South
        } else {
            Side::North
        };
        Position::from_parts(rules, &south, &north, side).unwrap()
    }
}

#[test]
fn start_positions_of_tiny_boards_match_minimax() {
    for (pits, seeds) in [(1, 1), (1, 3), (2, 1), (2, 2), (2, 3), (3, 1), (3, 2)] {
        for rules in all_variants(pits, seeds) {
            let pos = Position::start(rules);
            let mut solver = Solver::new(1);
            let sol = solver.solve(&pos);
            assert_eq!(sol.value, reference_value(&pos), "{rules}");
            check_pv(&pos, &sol);
        }
    }
}

#[test]
fn random_small_positions_match_minimax() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let sizes: &[(u32, u32)] = &[
        (2, 2),
        (3, 1),
        (3, 2),
        (2, 3),
        (3, 3),
        (4, 2),
        (4, 4),
        (5, 3),
    ];
    let per_variant = if cfg!(debug_assertions) { 10 } else { 40 };
    let mut compared = 0;
    for &(pits, seeds) in sizes {
        for rules in all_variants(pits, seeds) {
            // One solver per variant, reused, so that the table carries over between
            // positions as it does in an engine.
            let mut solver = Solver::new(1);
            for _ in 0..per_variant {
                let pos = random_position(&mut rng, rules);
                let sol = solver.solve(&pos);
                check_pv(&pos, &sol);
                if let Some(expected) = try_reference_value(&pos) {
                    assert_eq!(sol.value, expected, "{pos:?}");
                    compared += 1;
                }
            }
        }
    }
    // Nearly every position is small enough for the reference.
    assert!(
        compared > sizes.len() * 6 * per_variant * 9 / 10,
        "{compared}"
    );
}

#[test]
fn a_tiny_table_still_gives_exact_values() {
    // Constant replacement in a table far too small for the tree.
    let rules = Rules::new(3, 3, false, Sweep::Owner).unwrap();
    let pos = Position::start(rules);
    let expected = Solver::new(16).solve(&pos).value;
    let mut table = Solver::new(0);
    let sol = table.solve(&pos);
    assert_eq!(sol.value, expected);
    check_pv(&pos, &sol);
}

#[test]
fn finished_positions_and_budgets() {
    let rules = Rules::new(3, 2, false, Sweep::Owner).unwrap();
    let over = Position::from_compact("0,0,0:7/1,2,0:2/s", rules).unwrap();
    assert!(over.is_over());
    let sol = Solver::new(1).solve(&over);
    assert_eq!(sol.value, 7 - 5);
    assert!(sol.pv.is_empty());
    assert_eq!(sol.best_move(), None);

    // A budget far too small for a real board gives up; a generous one does not.
    let big = Position::start(Rules::default());
    let mut solver = Solver::new(1);
    let budget = Budget {
        max_nodes: Some(5000),
        ..Budget::default()
    };
    assert!(solver.solve_within(&big, budget).is_none());
    let small = Position::start(rules);
    let sol = solver.solve_within(&small, budget).unwrap();
    assert_eq!(sol.value, reference_value(&small));
}

#[test]
fn table_keys_ignore_stores_and_mirror_the_sides() {
    // The same pits seen from the mover give the same future gain, whoever moves and
    // whatever the stores hold.
    let rules = Rules::new(3, 3, false, Sweep::Owner).unwrap();
    let a = Position::from_compact("1,2,3:4/3,0,2:3/s", rules).unwrap();
    let b = Position::from_compact("3,0,2:1/1,2,3:6/n", rules).unwrap();
    let mut solver = Solver::new(1);
    let va = solver.solve(&a).value - a.store_margin(Side::South);
    let vb = solver.solve(&b).value - b.store_margin(Side::North);
    assert_eq!(va, vb);
    assert_eq!(solver.solve(&b).value, reference_value(&b));
}

#[test]
fn positions_with_more_seeds_than_the_start_are_solved_exactly() {
    // Keys pack the pits in as many bits as the position needs, not the start total.
    let rules = Rules::new(2, 1, false, Sweep::Owner).unwrap();
    let mut solver = Solver::new(1);
    solver.solve(&Position::start(rules));
    for text in ["7,0:0/0,1:0/s", "9,3:0/2,6:1/n", "0,13:2/5,0:0/s"] {
        let pos = Position::from_compact(text, rules).unwrap();
        let sol = solver.solve(&pos);
        assert_eq!(sol.value, reference_value(&pos), "{text}");
        check_pv(&pos, &sol);
    }
}

/// Every board the solver is required to handle (up to 4 pits x 4 seeds and 3 pits x 6
/// seeds, every variant), with the value and time of each:
/// `cargo test --release --lib -- --ignored --nocapture required_boards`.
#[test]
#[ignore]
fn required_boards_solve_quickly() {
    let mut sizes = Vec::new();
    for pits in 1..=4 {
        for seeds in 1..=4 {
            sizes.push((pits, seeds));
        }
    }
    for pits in 1..=3 {
        for seeds in 5..=6 {
            sizes.push((pits, seeds));
        }
    }
    for (pits, seeds) in sizes {
        for rules in all_variants(pits, seeds) {
            let t = std::time::Instant::now();
            let sol = Solver::new(64).solve(&Position::start(rules));
            let secs = t.elapsed().as_secs_f64();
            println!(
                "{rules}: value {} in {secs:.3} s, {} nodes",
                sol.value, sol.nodes
            );
            assert!(secs < 60.0, "{rules} took {secs:.1} s");
        }
    }
}

/// Plain minimax with a memo of whole positions (stores included, no pruning): a second
/// opinion on the start values of larger boards. Slow; run with
/// `cargo test --release --lib -- --ignored --nocapture memoized_minimax`.
fn memo_south(pos: &Position, memo: &mut std::collections::HashMap<Position, i32>) -> i32 {
    if pos.is_over() {
        return pos.store_margin(Side::South);
    }
    if let Some(&v) = memo.get(pos) {
        return v;
    }
    let values: Vec<i32> = pos
        .legal_moves()
        .map(|pit| memo_south(&pos.play(pit as i64).unwrap(), memo))
        .collect();
    let v = match pos.to_move() {
        Side::South => *values.iter().max().unwrap(),
        Side::North => *values.iter().min().unwrap(),
    };
    memo.insert(*pos, v);
    v
}

#[test]
#[ignore]
fn memoized_minimax_agrees_on_larger_boards() {
    let sizes: Vec<(u32, u32)> = std::env::var("KALAHA_SIZES")
        .unwrap_or_else(|_| "3x4,4x3,3x6".into())
        .split(',')
        .map(|s| {
            let (p, k) = s.split_once('x').unwrap();
            (p.parse().unwrap(), k.parse().unwrap())
        })
        .collect();
    for (pits, seeds) in sizes {
        for rules in all_variants(pits, seeds) {
            let start = Position::start(rules);
            let t = std::time::Instant::now();
            let mut memo = std::collections::HashMap::new();
            let expected = memo_south(&start, &mut memo);
            let secs = t.elapsed().as_secs_f64();
            let value = Solver::new(64).solve(&start).value;
            println!(
                "{rules}: solver {value}, memoized minimax {expected} ({} positions, {secs:.1} s)",
                memo.len()
            );
            assert_eq!(value, expected, "{rules}");
        }
    }
}

/// Every variant of a board size, as table rules.
fn all_table_rules(pits: u8) -> Vec<TableRules> {
    let mut v = Vec::new();
    for empty_capture in [false, true] {
        for sweep in Sweep::ALL {
            v.push(TableRules {
                pits,
                empty_capture,
                sweep,
            });
        }
    }
    v
}

fn build_table(rules: TableRules, k: u32, threads: usize) -> EndgameTable {
    EndgameTable::build(
        rules,
        k,
        threads,
        &|_| {},
        &std::sync::atomic::AtomicBool::new(false),
    )
    .expect("not stopped")
}

/// The position with configuration `x` (mover's pits first), south to move, empty stores.
fn position_of(rules: TableRules, x: &[u8]) -> Position {
    let p = rules.pits as usize;
    let total: u32 = x.iter().map(|&c| c as u32).sum();
    let rules = Rules::new(p as u32, 1, rules.empty_capture, rules.sweep).unwrap();
    let row = |r: &[u8]| Row {
        pits: r.iter().map(|&c| c as u16).collect(),
        store: 0,
    };
    let pos = Position::from_parts(rules, &row(&x[..p]), &row(&x[p..]), Side::South).unwrap();
    assert!(pos.is_over() || seeds_in_pits(&pos) as u32 == total);
    pos
}

#[test]
fn endgame_tables_agree_with_the_plain_solver_on_every_position() {
    // Small boards, every variant, every configuration: the table (built with its own
    // sowing) against the solver without tables (which sows with the rules' `sow`).
    for (pits, k) in [(1, 12), (2, 9), (3, 7), (4, 5)] {
        for rules in all_table_rules(pits) {
            let table = build_table(rules, k, 2);
            let ix = Indexer::new(rules.parts(), k).unwrap();
            let mut solver = Solver::new(1);
            let mut x = vec![0u8; rules.parts()];
            let mut checked = 0;
            for r in 0..table.len() {
                ix.unrank(r, &mut x);
                let pos = position_of(rules, &x);
                if pos.is_over() {
                    continue;
                }
                let expected = solver.solve(&pos).value;
                assert_eq!(table.value_at(r), expected, "{rules} {x:?}");
                checked += 1;
            }
            assert!(checked > 50, "{rules}: {checked}");
        }
    }
}

#[test]
fn endgame_tables_agree_with_minimax_and_do_not_depend_on_threads() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    for rules in all_table_rules(5) {
        let one = build_table(rules, 6, 1);
        let two = build_table(rules, 6, 2);
        assert_eq!(one.bytes(), two.bytes(), "{rules}");
        let ix = Indexer::new(rules.parts(), 6).unwrap();
        let mut x = vec![0u8; rules.parts()];
        for _ in 0..200 {
            let r = rng.random_range(0..one.len());
            ix.unrank(r, &mut x);
            let pos = position_of(rules, &x);
            if !pos.is_over() {
                assert_eq!(one.value_at(r), reference_value(&pos), "{rules} {x:?}");
            }
        }
    }
}

#[test]
fn a_solver_with_an_endgame_table_gives_the_same_values() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for (pits, seeds, k) in [(3, 3, 8), (4, 3, 8), (4, 4, 10), (5, 3, 7)] {
        for rules in all_variants(pits, seeds) {
            let table = std::sync::Arc::new(build_table(TableRules::of(&rules), k, 2));
            let mut with = Solver::new(2);
            with.set_endgame(Some(table));
            let mut without = Solver::new(2);
            for i in 0..12 {
                let pos = if i == 0 {
                    Position::start(rules)
                } else {
                    random_position(&mut rng, rules)
                };
                let a = with.solve(&pos);
                check_pv(&pos, &a);
                assert_eq!(a.value, without.solve(&pos).value, "{pos:?}");
                // The null-window test agrees with the value and names a move achieving it.
                if !pos.is_over() {
                    match with.test(&pos, a.value, Budget::unlimited()).unwrap() {
                        Test::AtLeast { bound, pit } => {
                            assert!(bound >= a.value);
                            let child = pos.play(pit as i64).unwrap();
                            let v = without.solve(&child).value;
                            let v = if child.to_move() == pos.to_move() || child.is_over() {
                                if child.is_over() {
                                    child.store_margin(pos.to_move())
                                } else {
                                    v
                                }
                            } else {
                                -v
                            };
                            assert_eq!(v, a.value, "{pos:?} pit {pit}");
                        }
                        other => panic!("{pos:?}: {other:?}"),
                    }
                    assert!(matches!(
                        with.test(&pos, a.value + 1, Budget::unlimited()),
                        Some(Test::Below { bound }) if bound <= a.value
                    ));
                }
            }
        }
    }
}

#[test]
fn two_threads_give_the_same_values() {
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    for rules in all_variants(4, 3) {
        let mut two = Solver::new(2);
        two.set_threads(2);
        let mut one = Solver::new(2);
        for _ in 0..10 {
            let pos = random_position(&mut rng, rules);
            let a = two.solve(&pos);
            check_pv(&pos, &a);
            assert_eq!(a.value, one.solve(&pos).value, "{pos:?}");
        }
    }
}

/// Nodes per second of the solver without an endgame table on Kalah(6,3) (the least time
/// of three runs), with the node count, which a change that only restructures the code
/// must keep: `cargo test --release --lib -- --ignored --nocapture solver_speed`.
#[test]
#[ignore]
fn solver_speed() {
    let pos = Position::start(Rules::new(6, 3, false, Sweep::Owner).unwrap());
    let mut best = f64::MAX;
    let mut result = None;
    for _ in 0..3 {
        let mut solver = Solver::new(256);
        let t = std::time::Instant::now();
        let sol = solver.solve(&pos);
        best = best.min(t.elapsed().as_secs_f64());
        result = Some((sol.nodes, sol.value));
    }
    let (nodes, value) = result.unwrap();
    println!(
        "Kalah(6,3): value {value}, {nodes} nodes, {best:.3} s, {:.2} M nodes/s",
        nodes as f64 / best / 1e6
    );
}

/// A board with few positions gets a table of about their number, never more than asked;
/// the standard board gets all it is given.
#[test]
fn the_table_is_sized_to_the_board() {
    use super::worker::Keys;
    let mib = 1024 * 1024;
    let keys = |pits: usize, seeds: u32| {
        Keys::Rank(Indexer::new(2 * pits, 2 * pits as u32 * seeds).unwrap())
    };
    // 3 pits, 2 seeds: 12 seeds in 6 pits, C(18, 6) = 18,564 configurations.
    assert_eq!(search::table_bytes(256, &keys(3, 2)), mib);
    assert_eq!(search::table_bytes(256, &keys(4, 3)), 256 * mib);
    assert_eq!(search::table_bytes(64, &keys(4, 3)), 64 * mib);
    assert_eq!(search::table_bytes(256, &keys(6, 4)), 256 * mib);
    assert_eq!(search::table_bytes(256, &Keys::Packed(64)), 256 * mib);
    // Huge pages only where searches are long enough to pay for them.
    assert!(search::long_search(&keys(6, 4)));
    assert!(!search::long_search(&keys(5, 3)));
    assert!(!search::long_search(&keys(3, 2)));
    // And only when the solver's user allows them: an engine under a clock does not.
    let mut engines = Solver::new(256);
    assert!(!engines.wants_huge_pages(&keys(6, 4)));
    engines.allow_huge_pages();
    assert!(engines.wants_huge_pages(&keys(6, 4)));
    assert!(!engines.wants_huge_pages(&keys(3, 2)));
    // And a solver of a small board answers as it did.
    let mut solver = Solver::new(256);
    let pos = Position::start(Rules::new(3, 2, false, Sweep::Owner).unwrap());
    let mut budget = u64::MAX;
    let solved = solver.solve(&pos);
    assert_eq!(Some(solved.value), minimax_south(&pos, &mut budget));
}

/// A value searched within proved bounds, from any guess in them (or none), is the exact
/// value: the bound of the move played, as an analysis gives it, and the tight bounds
/// that need no search at all.
#[test]
fn values_between_proved_bounds_match_minimax() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let mut compared = 0;
    for rules in all_variants(4, 3).into_iter().chain(all_variants(3, 3)) {
        let mut solver = Solver::new(1);
        for _ in 0..30 {
            let pos = random_position(&mut rng, rules);
            let Some(v) = try_reference_value(&pos) else {
                continue;
            };
            let s = seeds_in_pits(&pos);
            let m = pos.store_margin(pos.to_move());
            let lo = rng.random_range(m - s..=v);
            let hi = rng.random_range(v..=m + s);
            let guess = [None, Some(lo), Some(hi), Some(rng.random_range(lo..=hi))];
            for g in guess {
                let got = solver.value_between(&pos, lo, hi, g, Budget::unlimited());
                assert_eq!(got, Some(v), "{pos:?} in {lo}..={hi} from {g:?}");
            }
            assert_eq!(
                solver.value_between(&pos, v, v, None, Budget::unlimited()),
                Some(v)
            );
            compared += 1;
        }
    }
    assert!(compared > 200, "{compared}");
}
