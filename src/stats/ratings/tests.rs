use super::*;
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};

fn pairing(a: usize, b: usize, w: u32, d: u32, l: u32) -> PairingScore {
    PairingScore {
        a,
        b,
        games: f64::from(w + d + l),
        points: f64::from(w) + f64::from(d) / 2.0,
    }
}

fn reference() -> Vec<PairingScore> {
    vec![
        pairing(0, 1, 30, 40, 30),
        pairing(0, 2, 50, 30, 20),
        pairing(1, 2, 40, 40, 20),
        pairing(2, 3, 45, 35, 20),
        pairing(0, 3, 20, 5, 5),
    ]
}

fn r2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// A pool of `n` engines with true strengths spread over `spread` Elo: `rounds` rounds,
/// each a random perfect matching (so every engine plays `rounds` games against random
/// opponents), with results drawn from the model (draws most likely between close
/// engines).
pub(crate) fn random_pool(n: usize, rounds: usize, spread: f64, seed: u64) -> Vec<PairingScore> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let strength: Vec<f64> = (0..n).map(|_| rng.random_range(0.0..spread)).collect();
    let mut order: Vec<usize> = (0..n).collect();
    let mut out = Vec::new();
    for _ in 0..rounds {
        for i in (1..n).rev() {
            order.swap(i, rng.random_range(0..=i));
        }
        for pair in order.chunks_exact(2) {
            let (a, b) = (pair[0], pair[1]);
            let p = crate::stats::elo::elo_to_score(strength[a] - strength[b]);
            let draw = 0.3 * (1.0 - (2.0 * p - 1.0).abs());
            let u: f64 = rng.random_range(0.0..1.0);
            let points = if u < draw {
                0.5
            } else if u < draw + (p - draw / 2.0) {
                1.0
            } else {
                0.0
            };
            out.push(PairingScore {
                a,
                b,
                games: 1.0,
                points,
            });
        }
    }
    out
}

/// Maximum relative difference of the errors, and maximum difference of the ratings,
/// between the sparse fit (one group expected) and the dense reference.
fn compare_with_dense(
    n: usize,
    games: &[PairingScore],
    anchor: Option<usize>,
    method: IntervalMethod,
) -> (f64, f64) {
    let sparse = fit_with(n, games, anchor.map(|a| (a, 0.0)), method);
    assert_eq!(sparse.groups.len(), 1, "the test pool must be connected");
    let dense = if sparse.groups[0].regularized {
        // One virtual draw per pair of engines that met.
        let with_draws: Vec<PairingScore> = merge(n, games)
            .iter()
            .map(|e| PairingScore {
                a: e.a as usize,
                b: e.b as usize,
                games: e.games + 1.0,
                points: e.points + 0.5,
            })
            .collect();
        dense::fit(n, &with_draws, anchor)
    } else {
        dense::fit(n, games, anchor)
    };
    let (mut elo, mut err) = (0.0f64, 0.0f64);
    for (s, &(d_elo, d_err)) in sparse.ratings.iter().zip(&dense) {
        elo = elo.max((s.elo - d_elo).abs());
        if d_err > 0.0 {
            err = err.max((s.error / d_err - 1.0).abs());
        } else {
            assert_eq!(s.error, 0.0);
        }
    }
    (elo, err)
}

#[test]
fn reference_ratings() {
    let r = fit(4, &reference(), None);
    let elos: Vec<f64> = r.ratings.iter().map(|r| r2(r.elo)).collect();
    assert_eq!(elos, vec![73.33, 61.09, -22.20, -112.22]);
    assert_eq!(r.groups.len(), 1);
    assert!(!r.groups[0].regularized);
    for rating in &r.ratings {
        assert!(rating.error > 10.0 && rating.error < 100.0, "{rating:?}");
    }
}

#[test]
fn anchored_shifts_only() {
    let r = fit(4, &reference(), Some((3, 1000.0)));
    assert!((r.ratings[3].elo - 1000.0).abs() < 1e-9);
    assert_eq!(r.ratings[3].error, 0.0);
    assert!((r.ratings[0].elo - (1000.0 + 73.33 + 112.22)).abs() < 0.02);
    assert!(r.ratings[0].error > 0.0 && r.ratings[0].error.is_finite());
}

#[test]
fn order_of_input_does_not_matter() {
    let mut rev: Vec<PairingScore> = reference()
        .into_iter()
        .map(|p| PairingScore {
            a: p.b,
            b: p.a,
            games: p.games,
            points: p.games - p.points,
        })
        .collect();
    rev.reverse();
    let a = fit(4, &reference(), None);
    let b = fit(4, &rev, None);
    for (x, y) in a.ratings.iter().zip(&b.ratings) {
        assert!((x.elo - y.elo).abs() < 1e-6);
        assert!((x.error - y.error).abs() < 1e-6);
    }
}

#[test]
fn split_pairings_are_merged() {
    // The same games as reference(), the first pairing in three pieces.
    let mut split = reference();
    split[0] = pairing(0, 1, 10, 20, 0);
    split.push(pairing(1, 0, 30, 10, 10));
    split.push(pairing(0, 1, 10, 10, 0));
    let a = fit(4, &reference(), None);
    let b = fit(4, &split, None);
    for (x, y) in a.ratings.iter().zip(&b.ratings) {
        assert!((x.elo - y.elo).abs() < 1e-6, "{x:?} {y:?}");
        assert!((x.error - y.error).abs() < 1e-6, "{x:?} {y:?}");
    }
}

#[test]
fn perfect_scores_stay_finite() {
    // 0 beat everyone; 3 lost everything.
    let games = vec![
        pairing(0, 1, 10, 0, 0),
        pairing(0, 2, 10, 0, 0),
        pairing(1, 2, 5, 2, 3),
        pairing(1, 3, 10, 0, 0),
        pairing(2, 3, 10, 0, 0),
    ];
    let r = fit(4, &games, None);
    assert!(r.groups[0].regularized);
    for x in &r.ratings {
        assert!(x.elo.is_finite() && x.error.is_finite(), "{x:?}");
    }
    assert!(r.ratings[0].elo > r.ratings[1].elo);
    assert!(r.ratings[1].elo > r.ratings[2].elo);
    assert!(r.ratings[2].elo > r.ratings[3].elo);
    // The same as the dense fit of the games with one virtual draw per pairing.
    let with_draws: Vec<PairingScore> = games
        .iter()
        .map(|p| PairingScore {
            games: p.games + 1.0,
            points: p.points + 0.5,
            ..*p
        })
        .collect();
    for (s, d) in r.ratings.iter().zip(dense::fit(4, &with_draws, None)) {
        assert!((s.elo - d.0).abs() < 1e-6 && (s.error - d.1).abs() < 1e-6);
    }
    // Two engines, one won everything: one virtual draw gives 10.5 / 11.
    let r = fit(2, &[pairing(0, 1, 10, 0, 0)], None);
    let diff = r.ratings[0].elo - r.ratings[1].elo;
    assert!((diff - 400.0 * 21f64.log10()).abs() < 1e-6, "{diff}");
}

#[test]
fn many_engines_recover_strengths() {
    // 60 engines 20 Elo apart, each pairing scored at its expected value.
    let n = 60;
    let mut games = Vec::new();
    for a in 0..n {
        for b in a + 1..n {
            let p = crate::stats::elo::elo_to_score(20.0 * (a as f64 - b as f64));
            games.push(PairingScore {
                a,
                b,
                games: 100.0,
                points: 100.0 * p,
            });
        }
    }
    let r = fit(n, &games, None);
    for a in 0..n {
        let expected = 20.0 * (a as f64 - (n - 1) as f64 / 2.0);
        assert!(
            (r.ratings[a].elo - expected).abs() < 1e-6,
            "{a}: {:?}",
            r.ratings[a]
        );
    }
}

#[test]
fn disconnected_groups_are_reported() {
    let games = vec![pairing(0, 1, 6, 2, 2), pairing(2, 3, 2, 2, 6)];
    let r = fit(5, &games, Some((1, 100.0)));
    assert_eq!(r.groups.len(), 3);
    assert_eq!(r.groups[0].members, vec![0, 1]);
    assert!(r.groups[0].anchored);
    assert_eq!(r.groups[1].members, vec![2, 3]);
    assert_eq!(r.groups[2].members, vec![4]);
    assert!((r.ratings[1].elo - 100.0).abs() < 1e-9);
    assert!((r.ratings[2].elo + r.ratings[3].elo).abs() < 1e-9);
    assert_eq!(r.ratings[4].elo, 0.0);
    assert!(r.ratings[4].error.is_nan());
    // Two engines: the difference is the pairing's Elo.
    let diff = r.ratings[0].elo - r.ratings[1].elo;
    let expected = crate::stats::elo::score_to_elo(0.7);
    assert!((diff - expected).abs() < 1e-6);
}

#[test]
fn exact_intervals_equal_the_dense_fit() {
    let n = 40;
    let round_robin: Vec<PairingScore> = (0..n)
        .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
        .map(|(a, b)| {
            let p = crate::stats::elo::elo_to_score(15.0 * (b as f64 - a as f64));
            PairingScore {
                a,
                b,
                games: 20.0 + (a * b % 7) as f64,
                points: ((20.0 + (a * b % 7) as f64) * p * 2.0).round() / 2.0,
            }
        })
        .collect();
    for games in [
        reference(),
        round_robin,
        random_pool(150, 20, 600.0, 3),
        ladder(200),
        gauntlet(204),
    ] {
        let n = games.iter().map(|p| p.a.max(p.b)).max().unwrap() + 1;
        for anchor in [None, Some(n / 2)] {
            let (elo, err) = compare_with_dense(n, &games, anchor, IntervalMethod::Exact);
            assert!(
                elo < 1e-6,
                "{n} engines, anchor {anchor:?}: Elo off by {elo}"
            );
            assert!(
                err < 1e-5,
                "{n} engines, anchor {anchor:?}: error off by {err}"
            );
        }
    }
}

/// A ladder: each engine meets its two nearest neighbours on each side.
fn ladder(n: usize) -> Vec<PairingScore> {
    let mut games = Vec::new();
    for i in 0..n {
        for d in 1..=2 {
            if i + d < n {
                games.push(pairing(i, i + d, 4, 2, 4 - (i % 3) as u32));
            }
        }
    }
    games
}

/// A gauntlet: engines 4.. each meet the four references 0..4.
fn gauntlet(n: usize) -> Vec<PairingScore> {
    let mut games: Vec<PairingScore> = (0..3).map(|r| pairing(r, r + 1, 20, 10, 20)).collect();
    for i in 4..n {
        for r in 0..4 {
            games.push(pairing(i, r, 3 + ((i + r) % 4) as u32, 2, 3));
        }
    }
    games
}

#[test]
fn elimination_and_conjugate_gradients_agree() {
    for (name, n, games) in [
        ("random", 150, random_pool(150, 20, 600.0, 5)),
        ("ladder", 300, ladder(300)),
        ("gauntlet", 404, gauntlet(404)),
        ("reference", 4, reference()),
    ] {
        let edges = merge(n, &games);
        for anchor in [None, Some(2)] {
            let (theta, _) = fit_group(n, &edges, anchor, IntervalMethod::Approximate);
            let info = Laplacian::at(&theta, &edges, anchor);
            let eliminated = eliminated_variances(&info, anchor, f64::INFINITY).unwrap();
            let solved = solved_variances(&info, anchor);
            for (i, (e, s)) in eliminated.iter().zip(&solved).enumerate() {
                assert!(
                    (e - s).abs() <= 1e-7 * s.abs().max(1e-12),
                    "{name}, anchor {anchor:?}, engine {i}: {e} by elimination, {s} by solves"
                );
            }
        }
    }
    // Elimination gives up on a pool of random pairings when its budget is small.
    let games = random_pool(400, 20, 600.0, 6);
    let edges = merge(400, &games);
    let (theta, _) = fit_group(400, &edges, None, IntervalMethod::Approximate);
    let info = Laplacian::at(&theta, &edges, None);
    assert!(eliminated_variances(&info, None, 1e5).is_none());
}

#[test]
fn approximate_intervals_agree_with_the_dense_fit_within_one_percent() {
    for (n, per_engine, seed) in [(300, 10, 1), (300, 20, 2), (400, 40, 3), (250, 60, 4)] {
        let games = random_pool(n, per_engine, 800.0, seed);
        for anchor in [None, Some(7)] {
            let (elo, err) = compare_with_dense(n, &games, anchor, IntervalMethod::Approximate);
            assert!(
                elo < 1e-6,
                "{n}x{per_engine}, anchor {anchor:?}: Elo off by {elo}"
            );
            eprintln!(
                "{n}x{per_engine}, anchor {anchor:?}: errors off by {:.4}%",
                err * 100.0
            );
            assert!(
                err < 0.01,
                "{n}x{per_engine}, anchor {anchor:?}: errors off by {:.3}%",
                err * 100.0
            );
        }
    }
}

#[test]
fn the_sample_flags_structures_the_approximation_misses() {
    for (name, n, games) in [
        ("ladder", 300, ladder(300)),
        ("gauntlet", 404, gauntlet(404)),
    ] {
        let edges = merge(n, &games);
        let (theta, _) = fit_group(n, &edges, None, IntervalMethod::Exact);
        let info = Laplacian::at(&theta, &edges, None);
        let (_, sample_error) = approximate_variances(&info, None);
        assert!(
            sample_error > APPROXIMATION_TOLERANCE,
            "{name}: the sample sees an error of only {sample_error}"
        );
        // The automatic choice still gives the exact intervals.
        let (elo, err) = compare_with_dense(n, &games, None, IntervalMethod::Auto);
        assert!(elo < 1e-6 && err < 1e-5, "{name}: {elo} {err}");
    }
    // On a random pool the sample sees the approximation is good.
    let games = random_pool(300, 20, 800.0, 2);
    let edges = merge(300, &games);
    let (theta, _) = fit_group(300, &edges, None, IntervalMethod::Exact);
    let (_, sample_error) = approximate_variances(&Laplacian::at(&theta, &edges, None), None);
    assert!(sample_error <= APPROXIMATION_TOLERANCE, "{sample_error}");
}
