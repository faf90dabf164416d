//! Tests of `medium`, `hard` and `perfect` as players.

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

/// A bound on the time of a move that only a search ignoring its deadline exceeds, even
/// on a loaded machine (the tests run in parallel). That the searches look at the clock
/// often enough to keep to their time is checked by counting, in `search.rs` and
/// `solver/worker.rs`.
fn generous(move_ms: u64) -> Duration {
    Duration::from_millis(move_ms + 2000)
}

#[test]
fn hard_keeps_to_its_time() {
    let mut hard = HardPlayer::default();
    let pos = Position::start(Rules::new(6, 6, false, Sweep::Owner).unwrap());
    hard.new_game("g", *pos.rules(), Side::South);
    let t = Instant::now();
    hard.choose_move(&pos, &[], limits_ms(100), &mut |_| {});
    assert!(
        cfg!(debug_assertions) || t.elapsed() < generous(100),
        "{:?}",
        t.elapsed()
    );
    // With no time left at all it still answers, after a single node.
    let mut infos = Vec::new();
    let pit = hard.choose_move(&pos, &[], limits_ms(0), &mut |i| infos.push(i));
    assert!(pos.play(pit as i64).is_ok());
    assert!(infos.is_empty(), "no depth finished: {infos:?}");
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
                cfg!(debug_assertions) || t.elapsed() < generous(50),
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
fn perfect_falls_back_to_search_on_big_boards_and_says_so_once() {
    let mut perfect = PerfectPlayer::new(4);
    perfect
        .set_option("table_mb", &serde_json::json!(0))
        .unwrap();
    let mut pos = Position::start(Rules::new(6, 6, false, Sweep::Owner).unwrap());
    perfect.new_game("g", *pos.rules(), Side::South);
    perfect.take_log();
    let mut said = 0;
    for _ in 0..2 {
        let t = Instant::now();
        let mut infos = Vec::new();
        // Time enough for the search to finish a depth after the proofs even when a loaded
        // machine shortens the thinking time to a third (`load_share`) and gives the
        // thread a small share of a CPU (at 300 ms, under a load of 13 on 2 CPUs, it once
        // did not).
        let pit = perfect.choose_move(&pos, &[], limits_ms(1000), &mut |i| infos.push(i));
        assert!(cfg!(debug_assertions) || t.elapsed() < generous(1000));
        assert!(!infos.is_empty());
        said += perfect
            .take_log()
            .iter()
            .filter(|(_, m)| m.contains("cannot finish"))
            .count();
        pos = pos.play(pit as i64).unwrap();
        while pos.to_move() == Side::North {
            let first = pos.legal_moves().next().unwrap();
            pos = pos.play(first as i64).unwrap();
        }
    }
    assert_eq!(said, 1);
}

#[test]
fn perfect_plays_the_book_on_the_standard_board() {
    let pos = Position::start(Rules::default());
    let book = Book::builtin(pos.rules()).expect("a book for the standard board");
    let (pit, value) = book.lookup(&pos).expect("the start is in the book");
    let mut perfect = PerfectPlayer::new(4);
    perfect
        .set_option("table_mb", &serde_json::json!(0))
        .unwrap();
    perfect.new_game("g", *pos.rules(), Side::South);
    let mut infos = Vec::new();
    assert_eq!(
        perfect.choose_move(&pos, &[], limits_ms(100), &mut |i| infos.push(i)),
        pit
    );
    assert_eq!(infos[0].score, Some(value as i64));
    // Without its book it has to think (and cannot solve the start in that time).
    perfect
        .set_option("book", &serde_json::json!("none"))
        .unwrap();
    perfect.new_game("g", *pos.rules(), Side::South);
    let mut infos = Vec::new();
    perfect.choose_move(&pos, &[], limits_ms(50), &mut |i| infos.push(i));
    assert!(
        infos
            .iter()
            .all(|i| i.score != Some(value as i64) || i.depth.is_some())
    );
}

#[test]
fn perfect_plays_a_game_alike_whatever_it_played_before() {
    // On a board the solver finishes at once, every move is exact and the game does
    // not depend on earlier games.
    let rules = Rules::new(4, 4, false, Sweep::Owner).unwrap();
    // Each player's moves straight on the rules, the stores at the end.
    let game = |p: &mut PerfectPlayer, id: &str, south: bool| {
        let mut other = crate::engines::GreedyPlayer;
        let mut pos = Position::start(rules);
        let (perfect_side, other_side) = if south {
            (Side::South, Side::North)
        } else {
            (Side::North, Side::South)
        };
        p.new_game(id, rules, perfect_side);
        other.new_game(id, rules, other_side);
        let mut moves = Vec::new();
        while !pos.is_over() {
            let side = pos.to_move();
            let pit = if side == perfect_side {
                p.choose_move(&pos, &moves, limits_ms(5000), &mut |_| {})
            } else {
                other.choose_move(&pos, &moves, limits_ms(5000), &mut |_| {})
            };
            pos = pos.play(pit as i64).unwrap();
            moves.push(Move { side, pit });
        }
        (moves, pos.outcome().unwrap())
    };
    let mut fresh = PerfectPlayer::new(4);
    let x_fresh = game(&mut fresh, "x", true);
    let mut used = PerfectPlayer::new(4);
    game(&mut used, "y", false);
    let x_used = game(&mut used, "x", true);
    assert_eq!(x_used, x_fresh);
    // And it gets the solved value against a greedy opponent at least.
    let value = Solver::new(4).solve(&Position::start(rules)).value;
    assert!(x_fresh.1.south as i32 - x_fresh.1.north as i32 >= value);
}

#[test]
fn perfect_is_sure_again_after_a_move_it_could_not_prove() {
    let rules = Rules::new(4, 4, false, Sweep::Owner).unwrap();
    let mut perfect = PerfectPlayer::new(4);
    perfect.new_game("g", rules, Side::South);
    // South is `perfect`; north plays its lowest pit.
    let after = |pos: Position, pit: u8| {
        let mut pos = pos.play(pit as i64).unwrap();
        while !pos.is_over() && pos.to_move() == Side::North {
            let first = pos.legal_moves().next().unwrap();
            pos = pos.play(first as i64).unwrap();
        }
        pos
    };
    let start = Position::start(rules);
    let pit = perfect.choose_move(&start, &[], limits_ms(5000), &mut |_| {});
    assert!(perfect.sure.is_some());
    let pos = after(start, pit);
    // No time at all: nothing is proved and `hard` answers.
    let pit = perfect.choose_move(&pos, &[], limits_ms(0), &mut |_| {});
    assert_eq!((perfect.sure, perfect.hint.is_some()), (None, true));
    let pos = after(pos, pit);
    assert!(!pos.is_over());
    // With time again it solves from what it was sure of: the value is exact.
    let mut infos = Vec::new();
    perfect.choose_move(&pos, &[], limits_ms(5000), &mut |i| infos.push(i));
    let value = Solver::new(4).solve(&pos).value;
    assert_eq!(perfect.sure, Some(value));
    assert_eq!(infos[0].score, Some(value as i64));
}

#[test]
fn perfect_loads_a_large_endgame_table_in_the_background() {
    let rules = Rules::default();
    let tr = TableRules::of(&rules);
    // The largest table within 2 MiB is larger than the 1 MiB one built in memory, so it
    // is looked for in the folder.
    let k = max_seeds_within(tr, 2 << 20).unwrap();
    assert!(max_seeds_within(tr, QUICK_TABLE_BYTES).unwrap() < k);
    let dir = tempfile::tempdir().unwrap();
    let store = TableStore::new(dir.path());
    let stop = AtomicBool::new(false);
    store.open_or_build(tr, k, 2, &|_| {}, &stop).unwrap();

    let mut perfect = PerfectPlayer::new(4);
    perfect
        .set_option("table_mb", &serde_json::json!(2))
        .unwrap();
    let folder = dir.path().to_str().unwrap();
    perfect
        .set_option("tables", &serde_json::json!(folder))
        .unwrap();
    perfect.new_game("g", rules, Side::South);
    // `new_game` does not wait for it; it is taken once ready.
    let waited = Instant::now();
    while perfect.loading.is_some() && waited.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(10));
        perfect.poll_endgame();
    }
    let table = perfect.endgame.as_ref().and_then(|(_, t)| t.clone());
    assert_eq!(table.map(|t| t.max_seeds()), Some(k));
    let log = perfect.take_log();
    assert!(log.iter().any(|(_, m)| m.contains("loaded")), "{log:?}");
    // The next game of the same rules keeps it.
    perfect.new_game("h", rules, Side::North);
    assert!(perfect.loading.is_none());
}

/// Without a table in the folder it was given, `perfect` says how to build one there: the
/// command names that folder, or the table would go to the cache folder it does not read.
#[test]
fn perfect_without_a_table_names_its_folder_in_the_build_command() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("my tables");
    let mut log = Vec::new();
    let rules = Rules::default();
    let table = find_endgame(&rules, 2 << 20, Some(&folder), &mut log);
    assert!(table.is_some_and(
        |t| t.max_seeds() < max_seeds_within(TableRules::of(&rules), 2 << 20).unwrap()
    ));
    let expected = format!(
        "`kalaha tables build --pits 6 --seeds 4 --tables {}`",
        crate::record::shell::shell_path(&folder)
    );
    assert!(log.iter().any(|(_, m)| m.contains(&expected)), "{log:?}");
    let mut log = Vec::new();
    find_endgame(&rules, 2 << 20, None, &mut log);
    assert!(log.iter().all(|(_, m)| !m.contains("--tables")), "{log:?}");
}

/// Under load the built-ins think for less of the move time, never less than a third.
#[test]
fn the_thinking_time_shrinks_with_the_load() {
    use super::load_share;
    assert_eq!(load_share(0.3, 2), 1.0);
    assert_eq!(load_share(2.0, 2), 1.0);
    assert_eq!(load_share(4.0, 2), 0.5);
    assert_eq!(load_share(30.0, 2), 1.0 / 3.0);
    assert_eq!(load_share(f64::NAN, 2), 1.0);
    assert_eq!(load_share(1.0, 0), 1.0);
    // 60% of a fixed move time on an idle machine, 30% at twice the CPUs.
    let fixed = crate::record::TimeLimit::MoveTime(std::time::Duration::from_millis(100));
    let idle = fixed.budget().mul_f64(super::BUDGET_SHARE);
    assert_eq!(idle, std::time::Duration::from_millis(60));
    assert_eq!(
        idle.mul_f64(load_share(4.0, 2)),
        std::time::Duration::from_millis(30)
    );
}
