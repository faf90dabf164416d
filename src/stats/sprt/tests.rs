use super::*;

fn r2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

#[test]
fn normalized_pentanomial_reference() {
    let llr = llr_normalized(0.0, 2.0, &[365, 16618, 36229, 16974, 390]);
    assert_eq!(r2(llr), 2.25, "llr {llr}");
}

#[test]
fn logistic_trinomial_reference() {
    let llr = llr_logistic(0.5, 2.5, &[21184, 40708, 21404]);
    assert_eq!(r2(llr), -1.57, "llr {llr}");
}

#[test]
fn status_counts_pairs_until_a_decision() {
    let sprt = Sprt {
        elo0: 0.0,
        elo1: 5.0,
        alpha: 0.05,
        beta: 0.05,
        model: SprtModel::Normalized,
    };
    let mut penta = Pentanomial([0, 0, 0, 1, 0]);
    let mut status = sprt.status(penta);
    assert_eq!((status.pairs, status.games), (1, 2));
    for _ in 0..2000 {
        penta.add_pair(4);
        status = sprt.status(penta);
        if status.decision != SprtDecision::Continue {
            break;
        }
    }
    assert_eq!(status.decision, SprtDecision::H1);
    assert!(status.line().starts_with("pairs "));
}

#[test]
fn estimates_never_print_negative_zero() {
    let e = |value, error| Estimate { value, error };
    assert_eq!(fmt_estimate(e(-0.0, 1.0)), "+0.0 ± 1.0");
    assert_eq!(fmt_estimate(e(f64::INFINITY, f64::NAN)), "+∞");
    assert_eq!(fmt_estimate(e(f64::NEG_INFINITY, f64::NAN)), "-∞");
    assert_eq!(fmt_estimate(e(f64::NAN, f64::NAN)), "?");
    assert_eq!(fmt_llr(-0.001), "0.00");
    assert_eq!(fmt_llr(-1.234), "-1.23");
    assert_eq!(fmt_estimate(e(-0.04, 0.0)), "+0.0 ± 0.0");
    assert_eq!(fmt_estimate(e(-0.06, f64::NAN)), "-0.1");
    assert_eq!(fmt_estimate(e(511.46, f64::NAN)), "+511.5");
    assert_eq!(fmt_estimate(e(f64::NAN, f64::NAN)), "?");
}

/// A pentanomial distribution of pair results whose expected score is that of logistic
/// Elo `elo`: an even one, tilted.
fn pairs_at(elo: f64) -> [f64; 5] {
    let base = [0.05, 0.2, 0.5, 0.2, 0.05];
    let at = |l: f64| {
        let w: Vec<f64> = (0..5)
            .map(|i| base[i] * (l * i as f64 / 4.0).exp())
            .collect();
        let sum: f64 = w.iter().sum();
        let p: Vec<f64> = w.iter().map(|x| x / sum).collect();
        let mean = (0..5).map(|i| p[i] * i as f64 / 4.0).sum::<f64>();
        (p, mean)
    };
    let target = elo_to_score(elo);
    let (mut lo, mut hi) = (-20.0, 20.0);
    for _ in 0..100 {
        let m = 0.5 * (lo + hi);
        if at(m).1 < target {
            lo = m;
        } else {
            hi = m;
        }
    }
    let p = at(lo).0;
    [p[0], p[1], p[2], p[3], p[4]]
}

/// The pentanomial counts of one simulated test of `sprt`, pairs drawn from `dist`,
/// when it stops.
fn until_stopped(sprt: &Sprt, dist: &[f64; 5], rng: &mut rand::rngs::ChaCha8Rng) -> [u64; 5] {
    use rand::RngExt;
    let mut counts = [0u64; 5];
    loop {
        let u: f64 = rng.random();
        let mut acc = 0.0;
        let i = (0..5)
            .find(|&i| {
                acc += dist[i];
                u < acc
            })
            .unwrap_or(4);
        counts[i] += 1;
        if sprt.decide(sprt.llr(&counts)) != SprtDecision::Continue {
            return counts;
        }
    }
}

/// Runs `runs` simulated tests of `sprt` on pairs of logistic Elo `elo` until they stop;
/// returns each one's naive and median-unbiased Elo.
fn stopped_tests(sprt: &Sprt, elo: f64, runs: usize, seed: u64) -> (Vec<f64>, Vec<f64>) {
    use rand::SeedableRng;
    let dist = pairs_at(elo);
    let mut rng = rand::rngs::ChaCha8Rng::seed_from_u64(seed);
    let (mut naive, mut unbiased) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        let counts = until_stopped(sprt, &dist, &mut rng);
        let n: u64 = counts.iter().sum();
        let score = (0..5)
            .map(|i| counts[i] as f64 * i as f64 / 4.0)
            .sum::<f64>()
            / n as f64;
        naive.push(crate::stats::elo::score_to_elo(score));
        unbiased.push(sprt.median_unbiased(&counts).unwrap().elo);
    }
    (naive, unbiased)
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Simulated tests of an engine 10 Elo stronger (H1 true) stop early on lucky runs:
/// the median of their naive estimates is well above 10 (about +2 for this seed),
/// that of the median-unbiased estimates close to it, and the 95% intervals hold 10 in
/// about 95% of the tests.
#[test]
fn the_median_unbiased_estimate_of_stopped_tests_is_not_biased() {
    let sprt = Sprt {
        elo0: 0.0,
        elo1: 10.0,
        alpha: 0.05,
        beta: 0.05,
        model: SprtModel::Logistic,
    };
    let (naive, unbiased) = stopped_tests(&sprt, 10.0, 200, 1);
    let (naive_bias, bias) = (median(&naive) - 10.0, median(&unbiased) - 10.0);
    assert!(naive_bias > 1.2, "naive median bias {naive_bias:.2}");
    assert!(
        bias.abs() < 0.8,
        "median bias {bias:.2} (naive {naive_bias:.2})"
    );
    // The interval of a test that stopped.
    let counts = [40, 210, 520, 250, 60];
    let e = sprt.median_unbiased(&counts).unwrap();
    assert!(e.lower < e.elo && e.elo < e.upper, "{e:?}");
    let normalized = Sprt {
        model: SprtModel::Normalized,
        elo1: 5.0,
        ..sprt
    };
    let e = normalized.median_unbiased(&counts).unwrap();
    assert!(e.lower < e.elo && e.elo < e.upper, "{e:?}");
    assert_eq!(sprt.median_unbiased(&[0, 0, 0, 0, 0]), None);
    assert_eq!(sprt.median_unbiased(&[0, 0, 7, 0, 0]), None);
}

/// The 95% intervals of stopped tests hold the true Elo about 95% of the time.
#[test]
fn the_interval_of_stopped_tests_holds_the_elo_about_as_often_as_it_says() {
    let sprt = Sprt {
        elo0: 0.0,
        elo1: 10.0,
        alpha: 0.05,
        beta: 0.05,
        model: SprtModel::Logistic,
    };
    use rand::SeedableRng;
    let dist = pairs_at(5.0);
    let mut rng = rand::rngs::ChaCha8Rng::seed_from_u64(2);
    let runs = 100;
    let mut held = 0;
    for _ in 0..runs {
        let counts = until_stopped(&sprt, &dist, &mut rng);
        let e = sprt.median_unbiased(&counts).unwrap();
        if e.lower <= 5.0 && 5.0 <= e.upper {
            held += 1;
        }
    }
    assert!((88..=100).contains(&held), "{held} of {runs}");
}

#[test]
fn bounds_and_decisions() {
    let sprt = Sprt {
        elo0: 0.0,
        elo1: 5.0,
        alpha: 0.05,
        beta: 0.05,
        model: SprtModel::Normalized,
    };
    let (lo, hi) = sprt.bounds();
    assert!((lo + 2.944438979).abs() < 1e-8 && (hi - 2.944438979).abs() < 1e-8);
    assert_eq!(sprt.decide(3.0), SprtDecision::H1);
    assert_eq!(sprt.decide(-3.0), SprtDecision::H0);
    assert_eq!(sprt.decide(0.0), SprtDecision::Continue);
}

#[test]
fn clear_results_cross_the_bounds() {
    let sprt = Sprt {
        elo0: 0.0,
        elo1: 5.0,
        alpha: 0.05,
        beta: 0.05,
        model: SprtModel::Normalized,
    };
    // A much stronger engine: H1.
    assert_eq!(
        sprt.decide(sprt.llr(&[20, 100, 400, 600, 800])),
        SprtDecision::H1
    );
    // Equal engines over many pairs: H0 eventually.
    assert_eq!(
        sprt.decide(sprt.llr(&[5000, 20000, 50000, 20000, 5000])),
        SprtDecision::H0
    );
    let logistic = Sprt {
        model: SprtModel::Logistic,
        ..sprt
    };
    assert_eq!(
        logistic.decide(logistic.llr(&[5000, 20000, 50000, 20000, 5000])),
        SprtDecision::H0
    );
    // No games yet: close to zero.
    assert!(sprt.llr(&[0, 0, 0, 0, 0]).abs() < 0.1);
}

/// The outcomes tilted to an Elo are those the LLR uses wherever the LLR's iteration finds
/// them, and are found beyond (a normalized Elo of 231.6 and more from the even start).
#[test]
fn outcomes_are_tilted_to_any_elo_the_same_as_for_the_llr() {
    let sprt = Sprt {
        elo0: 0.0,
        elo1: 5.0,
        alpha: 0.05,
        beta: 0.05,
        model: SprtModel::Normalized,
    };
    for counts in [
        &[7u64, 4, 478, 124, 1151][..],
        &[40, 210, 520, 250, 60],
        &[3, 0, 10],
        &[12, 30, 9],
    ] {
        let (_, pdf) = empirical(counts);
        for elo in [-150.0, -40.0, 0.0, 5.0, 60.0, 150.0] {
            let llr = sprt.constrained(&pdf, elo).unwrap();
            let path = sprt.tilted(&pdf, elo).unwrap();
            let apart = llr
                .iter()
                .zip(&path)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max);
            assert!(apart < 1e-9, "{counts:?} at {elo}: {llr:?} {path:?}");
        }
        for elo in [-1500.0, -400.0, 240.0, 400.0, 1500.0] {
            let q = sprt.tilted(&pdf, elo).unwrap();
            let (mu, var) = mean_var(
                &pdf.iter()
                    .zip(&q)
                    .map(|(&(a, _), &q)| (a, q))
                    .collect::<Vec<_>>(),
            );
            let t = (mu - 0.5) / var.sqrt();
            let want = elo / NELO_PER_T * t_scale(&pdf);
            assert!(
                (t - want).abs() < 1e-6,
                "{counts:?} at {elo}: t {t} for {want}"
            );
        }
    }
}

/// Engines far beyond the test's bounds (a normalized Elo of 367 from 1,764 pairs, for
/// bounds 0 and 0.5) get a median-unbiased estimate beside the naive one, inside its
/// interval, not the end of the range where an earlier search gave up (+231.6).
#[test]
fn a_test_far_beyond_its_bounds_gets_an_estimate_beside_its_naive_one() {
    let sprt = Sprt {
        elo0: 0.0,
        elo1: 0.5,
        alpha: 0.05,
        beta: 0.05,
        model: SprtModel::Normalized,
    };
    let counts = [7, 4, 478, 124, 1151];
    assert_eq!(sprt.decide(sprt.llr(&counts)), SprtDecision::H1);
    let naive = Pentanomial(counts).nelo().value;
    let e = sprt.median_unbiased(&counts).unwrap();
    assert!((e.elo - naive).abs() < 10.0, "{e:?} against {naive}");
    assert!(e.lower < e.elo && e.elo < e.upper, "{e:?}");
    assert!(e.lower > 300.0 && e.upper < 450.0, "{e:?}");
    assert_eq!(e.value_words(), fmt_signed(e.elo));
    // The same far the other way, and with a handful of pairs.
    let mirrored = [1151, 124, 478, 4, 7];
    let m = sprt.median_unbiased(&mirrored).unwrap();
    assert!((m.elo + e.elo).abs() < 1.0, "{m:?} {e:?}");
    let few = sprt.median_unbiased(&[0, 0, 1, 0, 1]).unwrap();
    assert!(few.lower < few.elo && few.elo < few.upper, "{few:?}");
    assert!(few.upper < FARTHEST_ESTIMATE, "{few:?}");
}

/// An estimate at the farthest Elo searched is said as "at least" or "at most" it.
#[test]
fn an_estimate_at_the_end_of_the_range_searched_says_at_least_or_at_most() {
    let f = FARTHEST_ESTIMATE;
    assert_eq!(estimate_words(f, 100.0, f), format!("at least +{f:.1}"));
    assert_eq!(estimate_words(-f, -f, -100.0), format!("at most -{f:.1}"));
    assert_eq!(estimate_words(12.34, 1.0, 20.0), "+12.3");
}
