//! Speed of the rules: perft from the start position (bulk-counted last ply) and single
//! moves, each the best of several runs. `cargo bench --bench rules`; `kalaha perft`
//! prints nodes per second as well.

use kalaha::rules::{Position, Rules, perft};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// The shortest of `runs` timings of `f`.
fn best_of(runs: usize, mut f: impl FnMut()) -> Duration {
    (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .expect("at least one run")
}

fn main() {
    let start = Position::start(Rules::default());
    for depth in [8, 10] {
        let nodes = perft(&start, depth);
        let t = best_of(5, || {
            black_box(perft(black_box(&start), depth));
        });
        println!(
            "perft 6x4 depth {depth}: {nodes} nodes in {:.1} ms, {:.1} M nodes/s",
            t.as_secs_f64() * 1e3,
            nodes as f64 / t.as_secs_f64() / 1e6
        );
    }
    const ROUNDS: u32 = 1_000_000;
    let t = best_of(5, || {
        let mut n = 0u32;
        for _ in 0..ROUNDS {
            for pit in 1..=6 {
                let next = black_box(&start).play(pit).unwrap();
                n = n.wrapping_add(next.store(next.to_move()) as u32);
            }
        }
        black_box(n);
    });
    println!(
        "play: {:.1} ns per move ({} moves)",
        t.as_secs_f64() * 1e9 / (6.0 * ROUNDS as f64),
        6 * ROUNDS
    );
}
