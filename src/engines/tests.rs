//! The built-in engines played through the referee, in-process.

use super::*;
use crate::record::{GameRecord, TimeControl};
use crate::referee::{Adjudication, GameSetup, play_game};
use crate::rules::{Position, Rules, Side, Sweep};
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};
use std::time::Duration;

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

/// Plays game `id` from `opening`, each move given `move_time` (with a generous margin: a
/// loaded machine must not turn these tests into timeouts).
fn game(
    id: &str,
    south: &mut InProcess,
    north: &mut InProcess,
    rules: Rules,
    opening: &[u8],
    move_time: Duration,
) -> GameRecord {
    let setup = GameSetup {
        id: id.to_string(),
        number: 1,
        round: 1,
        pair: 1,
        names: ["south".into(), "north".into()],
        rules,
        opening: crate::record::Opening::line(opening.to_vec()),
        time: [TimeControl::MoveTime(move_time); 2],
        margin: Duration::from_secs(60),
        adjudication: Adjudication::Off,
    };
    let played = block_on(play_game(&setup, south, north));
    assert!(
        !played.record.termination.is_fault(),
        "{id}: {} {}",
        played.record.termination,
        played.record.detail
    );
    played.record
}

/// The sowings of a game, without their times.
fn sowings(g: &GameRecord) -> Vec<(Side, u8)> {
    g.moves.iter().map(|m| (m.side, m.pit)).collect()
}

/// `plies` random legal sowings from the start that do not end the game.
fn opening(rules: Rules, plies: usize, seed: u64) -> Vec<u8> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut pos = Position::start(rules);
    let mut pits = Vec::new();
    for _ in 0..plies {
        let moves: Vec<u8> = pos.legal_moves().collect();
        let pit = moves[rng.random_range(0..moves.len())];
        let next = pos.play(pit as i64).unwrap();
        if next.is_over() {
            break;
        }
        pits.push(pit);
        pos = next;
    }
    pits
}

fn engine(name: &str, set: &dyn Fn(&mut dyn Player)) -> InProcess {
    let mut p = builtin(name).unwrap();
    set(p.as_mut());
    InProcess::new(p)
}

#[test]
fn every_name_builds_an_engine_of_that_name_with_valid_option_defaults() {
    for &name in BUILTIN_NAMES {
        let mut p = builtin(name).unwrap();
        assert_eq!(p.name(), name);
        for opt in p.options() {
            opt.validate(&opt.default_value())
                .unwrap_or_else(|e| panic!("{name} {}: {e}", opt.name));
            p.set_option(&opt.name, &opt.default_value()).unwrap();
        }
    }
    assert!(builtin("stockfish").is_none());
}

#[test]
fn a_process_plays_a_game_alike_whatever_it_played_before() {
    let set = |p: &mut dyn Player| {
        if p.name() == "hard" {
            p.set_option("depth", &serde_json::json!(5)).unwrap();
        }
        if p.name() != "medium" && p.name() != "hard" {
            p.set_option("seed", &serde_json::json!(3)).unwrap();
        }
    };
    let rules = Rules::default();
    let t = Duration::from_secs(20);
    // The opponent is a fresh `greedy` in every game: it has no memory of its own.
    let play = |e: &mut InProcess, id: &str, n: u64, south: bool| {
        let mut other = engine("greedy", &|_| {});
        let open = opening(rules, 3, n);
        if south {
            game(id, e, &mut other, rules, &open, t)
        } else {
            game(id, &mut other, e, rules, &open, t)
        }
    };
    for name in ["random", "easy", "medium", "hard"] {
        let mut fresh = engine(name, &set);
        let x_fresh = play(&mut fresh, "x", 1, true);
        let mut used = engine(name, &set);
        play(&mut used, "y", 2, false);
        play(&mut used, "z", 5, true);
        let x_used = play(&mut used, "x", 1, true);
        assert_eq!(sowings(&x_used), sowings(&x_fresh), "{name}");
    }
}

#[test]
fn every_engine_finishes_games_with_legal_moves_in_every_variant() {
    for sweep in Sweep::ALL {
        let rules = Rules::new(4, 3, sweep == Sweep::None, sweep).unwrap();
        for &a in BUILTIN_NAMES {
            let mut pa = engine(a, &|_| {});
            let mut pb = engine("random", &|_| {});
            let g = game("g", &mut pa, &mut pb, rules, &[], Duration::from_millis(5));
            assert!(g.final_position.is_over(), "{a} {rules}");
        }
    }
}

/// Points of `a` (1 a win, 0.5 a draw) over a pair of games per opening, seats swapped.
fn score(
    a: &str,
    b: &str,
    rules: Rules,
    openings: u64,
    move_time: Duration,
    set: &dyn Fn(&mut dyn Player),
) -> (f64, u32, i64) {
    let (mut points, mut games, mut margin) = (0.0, 0, 0i64);
    for seed in 0..openings {
        let open = opening(rules, 2, seed);
        for a_side in [Side::South, Side::North] {
            let (mut pa, mut pb) = (engine(a, set), engine(b, set));
            let g = match a_side {
                Side::South => game("g", &mut pa, &mut pb, rules, &open, move_time),
                Side::North => game("g", &mut pb, &mut pa, rules, &open, move_time),
            };
            points += f64::from(g.result.half_points(a_side)) / 2.0;
            let m = i64::from(g.south_score) - i64::from(g.north_score);
            margin += if a_side == Side::South { m } else { -m };
            games += 1;
        }
    }
    (points, games, margin)
}

#[test]
fn stronger_levels_beat_weaker_ones() {
    if cfg!(debug_assertions) {
        return;
    }
    let rules = Rules::default();
    let t = Duration::from_secs(10);
    let depth8 = |p: &mut dyn Player| {
        if p.name() == "hard" {
            p.set_option("depth", &serde_json::json!(8)).unwrap();
        }
    };
    let (pts, games, _) = score("greedy", "random", rules, 10, t, &|_| {});
    assert!(pts >= 0.8 * games as f64, "greedy vs random {pts}/{games}");
    let (pts, games, _) = score("hard", "random", rules, 10, t, &depth8);
    assert!(pts >= 0.9 * games as f64, "hard vs random {pts}/{games}");
    let (pts, games, _) = score("hard", "greedy", rules, 10, t, &depth8);
    assert!(pts >= 0.6 * games as f64, "hard vs greedy {pts}/{games}");
}

/// The strength table for the engines' README: `cargo test --release -- --ignored
/// --nocapture strength_table` (`KALAHA_MOVE_MS`, `KALAHA_OPENINGS`, `KALAHA_PAIRS`).
#[test]
#[ignore]
fn strength_table() {
    let env = |k: &str, d: u64| {
        std::env::var(k)
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(d)
    };
    let ms = env("KALAHA_MOVE_MS", 50);
    let openings = env("KALAHA_OPENINGS", 20);
    let pairs = std::env::var("KALAHA_PAIRS").unwrap_or_else(|_| {
        "hard:random,hard:greedy,hard:medium,hard:easy,medium:greedy,greedy:random,easy:random,perfect:hard".into()
    });
    let rules = Rules::default();
    for p in pairs.split(',') {
        let (a, b) = p.split_once(':').unwrap();
        let t = Duration::from_millis(ms);
        let (pts, games, margin) = score(a, b, rules, openings, t, &|_| {});
        println!("{a} vs {b}: {pts}/{games}, margin {margin:+} at {ms} ms per move, {rules}");
    }
}

/// docs/play.md's table of the levels, in positions: `easy` overlooks about half of the
/// captures (`option.miss`, 50% by default) and takes them otherwise; `medium` sees the
/// direct capture and the extra turns; over games, each level beats the one below it.
#[test]
fn the_levels_do_what_play_md_says() {
    let rules = |pits, seeds| Rules::new(pits, seeds, false, Sweep::Owner).unwrap();
    let choose = |p: &mut dyn Player, pos: &Position| p.choose_move(pos, &[], None, &mut |_| {});
    // Pit 1's one seed lands in the empty pit 2, opposite north's 5 seeds; pit 3 gains
    // less than the capture and more than pit 1 without it.
    let capture = Position::from_compact("1,0,4:0/1,5,1:0/s", rules(3, 2)).unwrap();
    let taken = |miss: Option<u32>| {
        (0..400u64)
            .filter(|&seed| {
                let mut easy = builtin("easy").unwrap();
                easy.set_option("seed", &serde_json::json!(seed)).unwrap();
                if let Some(m) = miss {
                    easy.set_option("miss", &serde_json::json!(m)).unwrap();
                }
                easy.new_game(&format!("g{seed}"), *capture.rules(), Side::South);
                choose(&mut *easy, &capture) == 1
            })
            .count()
    };
    assert_eq!(taken(Some(0)), 400, "a sharp easy takes every capture");
    assert_eq!(taken(Some(100)), 0, "a blind easy takes none");
    let by_default = taken(None);
    assert!(
        (140..=260).contains(&by_default),
        "easy took {by_default} of 400 captures"
    );
    // Pit 1's one seed lands in the empty pit 2, opposite north's pit 3 and its 6 seeds;
    // pit 4 only reaches north's side.
    let direct = Position::from_compact("1,0,0,2:3/0,0,6,1:3/s", rules(4, 2)).unwrap();
    let mut medium = builtin("medium").unwrap();
    assert_eq!(choose(&mut *medium, &direct), 1, "medium sees the capture");
    // Pits 4 (one seed) and 3 (two seeds) reach the store and chain on.
    let chain = Position::from_compact("3,0,2,1:0/3,3,3,3:6/s", rules(4, 3)).unwrap();
    assert!([3, 4].contains(&choose(&mut *medium, &chain)));
    if cfg!(debug_assertions) {
        return;
    }
    let t = Duration::from_secs(10);
    let depth8 = |p: &mut dyn Player| {
        if p.name() == "hard" {
            p.set_option("depth", &serde_json::json!(8)).unwrap();
        }
    };
    for (strong, weak) in [("medium", "easy"), ("hard", "medium")] {
        let (pts, games, _) = score(strong, weak, Rules::default(), 10, t, &depth8);
        assert!(
            pts >= 0.6 * games as f64,
            "{strong} vs {weak}: {pts}/{games}"
        );
    }
}
