//! Speed of the rules: perft from the start position (bulk-counted last ply) and single
//! moves. `cargo bench --bench rules`; `kalaha perft` prints nodes per second as well.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use kalaha::rules::{Position, Rules, perft};
use std::hint::black_box;

fn bench_perft(c: &mut Criterion) {
    let start = Position::start(Rules::default());
    let mut group = c.benchmark_group("perft");
    for depth in [8, 10] {
        let nodes = perft(&start, depth);
        group.throughput(Throughput::Elements(nodes));
        group.bench_function(format!("6x4 depth {depth}"), |b| {
            b.iter(|| perft(black_box(&start), depth))
        });
    }
    group.finish();
}

fn bench_play(c: &mut Criterion) {
    let start = Position::start(Rules::default());
    c.bench_function("play 6x4 every opening move", |b| {
        b.iter(|| {
            let mut n = 0u32;
            for pit in 1..=6 {
                let next = black_box(&start).play(pit).unwrap();
                n += next.store(next.to_move()) as u32;
            }
            n
        })
    });
}

criterion_group!(benches, bench_perft, bench_play);
criterion_main!(benches);
