//! Speed of the ratings fit on generated pools, and a generator of results folders for
//! timing `kalaha ratings` end to end.
//!
//! ```sh
//! cargo bench --bench ratings                      # the fit alone, on pools in memory
//! cargo bench --bench ratings -- games-csv DIR ENGINES GAMES_PER_ENGINE [SEED]
//! /usr/bin/time -v target/release/kalaha ratings DIR --out DIR/out
//! ```
//!
//! A pool: engines with strengths spread uniformly over 1,000 Elo play rounds of random
//! game pairs (each round a random perfect matching; the two games of a pair swap the
//! first player), results drawn from the logistic model with draws most likely between
//! engines of equal strength.

use kalaha::stats::ratings::{self, IntervalMethod, PairingScore};
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};
use std::collections::HashMap;
use std::io::Write;
use std::time::Instant;

/// One game: south, north and south's points (1, ½ or 0).
type Game = (u32, u32, f64);

/// Calls `each` for every game of a pool of `engines` engines, each playing about
/// `games_per_engine` games (rounded up to whole pairs). `games-csv` with seed 1 writes the
/// same pools that `main` times.
fn pool(engines: usize, games_per_engine: usize, seed: u64, mut each: impl FnMut(usize, Game)) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let strength: Vec<f64> = (0..engines)
        .map(|_| rng.random_range(0.0..1000.0))
        .collect();
    let mut order: Vec<u32> = (0..engines as u32).collect();
    let mut pair = 0;
    for _ in 0..games_per_engine.div_ceil(2) {
        for i in (1..engines).rev() {
            order.swap(i, rng.random_range(0..=i));
        }
        for m in order.chunks_exact(2) {
            let p = 1.0
                / (1.0 + 10f64.powf((strength[m[1] as usize] - strength[m[0] as usize]) / 400.0));
            let draw = 0.3 * (1.0 - (2.0 * p - 1.0).abs());
            for (south, north, p) in [(m[0], m[1], p), (m[1], m[0], 1.0 - p)] {
                let u: f64 = rng.random_range(0.0..1.0);
                let points = if u < draw {
                    0.5
                } else if u < draw + (p - draw / 2.0) {
                    1.0
                } else {
                    0.0
                };
                each(pair, (south, north, points));
            }
            pair += 1;
        }
    }
}

/// Pairings of a pool, aggregated per ordered pair as the tally does.
fn pairings(engines: usize, games_per_engine: usize, seed: u64) -> (Vec<PairingScore>, usize) {
    let mut by_pair: HashMap<(u32, u32), (f64, f64)> = HashMap::new();
    let mut games = 0;
    pool(engines, games_per_engine, seed, |_, (s, n, pts)| {
        games += 1;
        let (key, pts) = if s < n {
            ((s, n), pts)
        } else {
            ((n, s), 1.0 - pts)
        };
        let e = by_pair.entry(key).or_default();
        e.0 += 1.0;
        e.1 += pts;
    });
    let scores = by_pair
        .into_iter()
        .map(|((a, b), (g, p))| PairingScore {
            a: a as usize,
            b: b as usize,
            games: g,
            points: p,
        })
        .collect();
    (scores, games)
}

fn write_games_csv(dir: &str, engines: usize, games_per_engine: usize, seed: u64) {
    std::fs::create_dir_all(dir).expect("create the output folder");
    let file = std::fs::File::create(format!("{dir}/games.csv")).expect("create games.csv");
    let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
    writeln!(w, "game,round,pair,south,north,opening,result,south_score,north_score,plies,termination,loser,detail,duration_ms").unwrap();
    let mut game = 0u64;
    pool(engines, games_per_engine, seed, |pair, (s, n, pts)| {
        game += 1;
        let (result, ss, ns) = match pts {
            1.0 => ("1-0", 27, 21),
            0.0 => ("0-1", 21, 27),
            _ => ("1/2-1/2", 24, 24),
        };
        writeln!(
            w,
            "B-{game},1,{},e{s},e{n},1 2,{result},{ss},{ns},40,normal,,,5",
            pair + 1
        )
        .unwrap();
    });
    w.flush().unwrap();
    std::fs::write(
        format!("{dir}/tournament.toml"),
        format!("id = \"B\"\nseed = {seed}\n[rules]\npits = 6\nseeds = 4\n"),
    )
    .unwrap();
    println!("wrote {game} games among {engines} engines to {dir}/games.csv");
}

fn time_fit(engines: usize, games_per_engine: usize, method: IntervalMethod) {
    let (scores, games) = pairings(engines, games_per_engine, 1);
    let runs = if engines <= 1000 { 3 } else { 1 };
    let mut best = f64::INFINITY;
    let mut fit = None;
    for _ in 0..runs {
        let start = Instant::now();
        fit = Some(ratings::fit_with(engines, &scores, None, method));
        best = best.min(start.elapsed().as_secs_f64());
    }
    let fit = fit.unwrap();
    println!(
        "{engines:>6} engines {games:>9} games {:>7} pairings  {method:?}: {:>10.3} ms  ({} groups{})",
        scores.len(),
        best * 1e3,
        fit.groups.len(),
        if fit.groups.iter().any(|g| g.regularized) {
            ", regularized"
        } else {
            ""
        }
    );
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    if args.first().map(String::as_str) == Some("games-csv") {
        let num = |k: usize, name: &str| -> u64 {
            args.get(k)
                .and_then(|s| s.parse().ok())
                .unwrap_or_else(|| panic!("games-csv DIR ENGINES GAMES_PER_ENGINE [SEED]: {name} is missing or not a number"))
        };
        let dir = args
            .get(1)
            .expect("games-csv DIR ENGINES GAMES_PER_ENGINE [SEED]");
        let seed = if args.len() > 4 { num(4, "SEED") } else { 1 };
        write_games_csv(
            dir,
            num(2, "ENGINES") as usize,
            num(3, "GAMES_PER_ENGINE") as usize,
            seed,
        );
        return;
    }
    for (engines, games) in [(100, 40), (1000, 40), (5000, 40), (20000, 40)] {
        time_fit(engines, games, IntervalMethod::Auto);
    }
    // 10 million games among 12 engines reach the fit as 66 pairings.
    time_fit(12, 10_000_000 / 6, IntervalMethod::Auto);
    // Pools with long-range structure, where the approximation is off and the intervals
    // are solved exactly.
    let gauntlet: Vec<PairingScore> = (4..5004)
        .flat_map(|i| {
            (0..4).map(move |r| PairingScore {
                a: i,
                b: r,
                games: 10.0,
                points: (3 + (i * 7 + r) % 5) as f64,
            })
        })
        .chain((0..3).map(|r| PairingScore {
            a: r,
            b: r + 1,
            games: 50.0,
            points: 25.0,
        }))
        .collect();
    let ladder: Vec<PairingScore> = (0..2000)
        .flat_map(|i| (1..=3).map(move |d| (i, i + d)))
        .filter(|&(_, j)| j < 2000)
        .map(|(a, b)| PairingScore {
            a,
            b,
            games: 10.0,
            points: (4 + a % 3) as f64,
        })
        .collect();
    for (name, n, pool) in [
        ("gauntlet of 5000 against 4", 5004, gauntlet),
        ("ladder of 2000, 3 neighbours", 2000, ladder),
    ] {
        let start = Instant::now();
        ratings::fit(n, &pool, None);
        println!("  {name}: {:.3} s", start.elapsed().as_secs_f64());
    }
    // The approximate intervals against the exact ones on the same pool.
    let (scores, _) = pairings(5000, 40, 1);
    let mut fits = Vec::new();
    for method in [IntervalMethod::Approximate, IntervalMethod::Exact] {
        let start = Instant::now();
        fits.push(ratings::fit_with(5000, &scores, None, method));
        println!(
            "  5000 engines, intervals {method:?}: {:.3} s",
            start.elapsed().as_secs_f64()
        );
    }
    let worst = fits[0]
        .ratings
        .iter()
        .zip(&fits[1].ratings)
        .map(|(a, e)| (a.error / e.error - 1.0).abs())
        .fold(0.0f64, f64::max);
    println!(
        "  5000 engines: approximate intervals within {:.3}% of the exact ones",
        worst * 100.0
    );
}
