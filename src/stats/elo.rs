//! Statistics of one pairing: win/draw/loss (trinomial) and game-pair (pentanomial) counts,
//! Elo and normalized Elo with 95% intervals, likelihood of superiority and the mean seed
//! margin.
//!
//! The formulas are those of the chess engine testing tools (cutechess-cli, fastchess,
//! fishtest):
//! - the score `s` is the mean result per game (win 1, draw ½, loss 0);
//! - Elo is the logistic inverse `-400·log10(1/s - 1)`; its interval maps the normal
//!   interval of the score, `s ± z·σ/√n` with `σ²` the per-game (or per-pair) variance of the
//!   results, through the same function, and the reported error is half its width;
//! - normalized Elo is `(s - ½)/σ_game · 800/ln 10`, where `σ_game` is the standard deviation
//!   of one game's result (for pairs, `√2` times that of one pair's mean result); its error is
//!   `z/√games · 800/ln 10`;
//! - LOS (likelihood of superiority) is `Φ((s - ½)/(σ/√n))`, the probability that the true
//!   score is above ½ under the same normal approximation. Results without spread (every
//!   game won, or every pair won twice) take the formula's limit: 1 above ½, 0 below, ½ at ½
//!   (fastchess prints the same 100% and 0%).
//!
//! `z` is the 97.5% quantile of the standard normal distribution (a two-sided 95% interval).

use statrs::distribution::{ContinuousCDF, Normal};

/// `800 / ln 10`: one unit of normalized t-value in normalized Elo.
pub const NELO_PER_T: f64 = 800.0 / std::f64::consts::LN_10;

/// The 97.5% quantile of the standard normal distribution (≈ 1.96).
pub fn z95() -> f64 {
    normal_quantile(0.975)
}

/// The `p` quantile of the standard normal distribution.
pub fn normal_quantile(p: f64) -> f64 {
    Normal::standard().inverse_cdf(p)
}

/// Converts an expected score in (0, 1) to a logistic Elo difference. 0 and 1 give
/// infinities.
pub fn score_to_elo(score: f64) -> f64 {
    -400.0 * (1.0 / score - 1.0).log10()
}

/// Converts a logistic Elo difference to an expected score.
pub fn elo_to_score(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// A point estimate with the half-width of its 95% interval.
///
/// Either part may be infinite or NaN when the data cannot support an estimate (for example
/// a 100% score); writers show those as empty cells.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Estimate {
    pub value: f64,
    /// Half the width of the 95% interval.
    pub error: f64,
}

impl Estimate {
    /// Whether both the value and the error are finite numbers.
    pub fn is_finite(&self) -> bool {
        self.value.is_finite() && self.error.is_finite()
    }

    /// The estimate when both parts are finite, otherwise NaN for both (so that no report
    /// shows an error next to a missing value).
    pub fn or_undefined(self) -> Estimate {
        if self.is_finite() {
            self
        } else {
            Estimate {
                value: f64::NAN,
                error: f64::NAN,
            }
        }
    }
}

/// Mean and variance of a discrete distribution given as (value, count) pairs.
fn mean_var(points: &[(f64, f64)]) -> Option<(f64, f64)> {
    let n: f64 = points.iter().map(|p| p.1).sum();
    if n <= 0.0 {
        return None;
    }
    let mean = points.iter().map(|(v, c)| v * c).sum::<f64>() / n;
    let var = points
        .iter()
        .map(|(v, c)| c * (v - mean) * (v - mean))
        .sum::<f64>()
        / n;
    Some((mean, var))
}

/// Elo with interval from samples whose mean is the per-game score.
fn elo_of(points: &[(f64, f64)]) -> Estimate {
    let n: f64 = points.iter().map(|p| p.1).sum();
    let Some((mean, var)) = mean_var(points) else {
        return Estimate {
            value: f64::NAN,
            error: f64::NAN,
        };
    };
    if var <= 0.0 {
        // Every result alike: the data say nothing of the spread, so there is no interval
        // (an error of 0 would claim certainty).
        return Estimate {
            value: score_to_elo(mean),
            error: f64::NAN,
        };
    }
    let half = z95() * (var / n).sqrt();
    let error = if mean - half > 0.0 && mean + half < 1.0 {
        (score_to_elo(mean + half) - score_to_elo(mean - half)) / 2.0
    } else {
        // The score's interval reaches 0 or 1, where Elo is infinite (say 17 wins, a draw
        // and 2 losses in 20 games): the half-width through the slope of the Elo curve at
        // the score instead (the delta method), finite for any score strictly inside.
        half * 400.0 / std::f64::consts::LN_10 / (mean * (1.0 - mean))
    };
    Estimate {
        value: score_to_elo(mean),
        error,
    }
}

/// Normalized Elo; `sigma_game` is the standard deviation of one game's result and `games`
/// the number of games behind the mean.
fn nelo_of(mean: f64, sigma_game: f64, games: f64) -> Estimate {
    Estimate {
        value: (mean - 0.5) / sigma_game * NELO_PER_T,
        error: z95() / games.sqrt() * NELO_PER_T,
    }
}

/// Win, draw and loss counts from one engine's point of view.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Wdl {
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
}

impl Wdl {
    pub fn new(wins: u64, draws: u64, losses: u64) -> Wdl {
        Wdl {
            wins,
            draws,
            losses,
        }
    }

    /// The same counts from the opponent's point of view.
    pub fn flipped(self) -> Wdl {
        Wdl::new(self.losses, self.draws, self.wins)
    }

    /// Adds one game worth `half_points` (0 loss, 1 draw, 2 win).
    pub fn add_half_points(&mut self, half_points: u8) {
        match half_points {
            0 => self.losses += 1,
            1 => self.draws += 1,
            _ => self.wins += 1,
        }
    }

    /// Adds another tally.
    pub fn add(&mut self, other: Wdl) {
        self.wins += other.wins;
        self.draws += other.draws;
        self.losses += other.losses;
    }

    pub fn games(&self) -> u64 {
        self.wins + self.draws + self.losses
    }

    /// Points: a win is 1, a draw ½.
    pub fn points(&self) -> f64 {
        self.wins as f64 + self.draws as f64 / 2.0
    }

    /// Points per game in [0, 1]; NaN without games.
    pub fn score(&self) -> f64 {
        self.points() / self.games() as f64
    }

    /// Draws per game; NaN without games.
    pub fn draw_ratio(&self) -> f64 {
        self.draws as f64 / self.games() as f64
    }

    fn points_dist(&self) -> [(f64, f64); 3] {
        [
            (0.0, self.losses as f64),
            (0.5, self.draws as f64),
            (1.0, self.wins as f64),
        ]
    }

    /// Logistic Elo difference with its 95% interval (trinomial model).
    pub fn elo(&self) -> Estimate {
        elo_of(&self.points_dist())
    }

    /// Normalized Elo with its 95% interval (trinomial model).
    pub fn nelo(&self) -> Estimate {
        match mean_var(&self.points_dist()) {
            Some((mean, var)) => nelo_of(mean, var.sqrt(), self.games() as f64),
            None => Estimate {
                value: f64::NAN,
                error: f64::NAN,
            },
        }
    }

    /// Likelihood of superiority in [0, 1]: the probability that the true score exceeds ½
    /// under the normal approximation, `Φ((s - ½)/(σ/√n))`. Without spread in the results
    /// it is 1 when the score is above ½ (every game won), 0 below and ½ at ½ (every game
    /// drawn, or no game).
    pub fn los(&self) -> f64 {
        los_of(&self.points_dist())
    }
}

/// `Φ((mean - ½)/(σ/√n))` of a distribution of results; without spread, the limit of that
/// formula as `σ` goes to 0: 1 above ½, 0 below, ½ at ½ (and ½ without results).
fn los_of(points: &[(f64, f64)]) -> f64 {
    let n: f64 = points.iter().map(|p| p.1).sum();
    match mean_var(points) {
        Some((mean, var)) if var > 0.0 => {
            let z = (mean - 0.5) / (var / n).sqrt();
            0.5 * (1.0 + statrs::function::erf::erf(z / std::f64::consts::SQRT_2))
        }
        Some((mean, _)) if mean > 0.5 => 1.0,
        Some((mean, _)) if mean < 0.5 => 0.0,
        _ => 0.5,
    }
}

/// Pentanomial counts over game pairs (the two games of one opening with the seats
/// swapped), from one engine's point of view: `[LL, LD, WL + DD, WD, WW]`, indexed by the
/// pair's half points (0 to 4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Pentanomial(pub [u64; 5]);

impl Pentanomial {
    /// The same counts from the opponent's point of view.
    pub fn flipped(self) -> Pentanomial {
        let c = self.0;
        Pentanomial([c[4], c[3], c[2], c[1], c[0]])
    }

    /// Adds one pair whose two games gave `half_points` in total (0 to 4).
    pub fn add_pair(&mut self, half_points: u8) {
        self.0[usize::from(half_points.min(4))] += 1;
    }

    pub fn add(&mut self, other: Pentanomial) {
        for (a, b) in self.0.iter_mut().zip(other.0) {
            *a += b;
        }
    }

    pub fn pairs(&self) -> u64 {
        self.0.iter().sum()
    }

    fn points_dist(&self) -> [(f64, f64); 5] {
        let c = self.0;
        [
            (0.0, c[0] as f64),
            (0.25, c[1] as f64),
            (0.5, c[2] as f64),
            (0.75, c[3] as f64),
            (1.0, c[4] as f64),
        ]
    }

    /// Points per game in [0, 1]; NaN without pairs.
    pub fn score(&self) -> f64 {
        mean_var(&self.points_dist()).map_or(f64::NAN, |(m, _)| m)
    }

    /// Likelihood of superiority in [0, 1] from the pair results.
    pub fn los(&self) -> f64 {
        los_of(&self.points_dist())
    }

    /// Logistic Elo difference with its 95% interval from the pair results.
    pub fn elo(&self) -> Estimate {
        elo_of(&self.points_dist())
    }

    /// Normalized Elo with its 95% interval from the pair results (a game's standard
    /// deviation is taken as `√2` times that of a pair's mean result).
    pub fn nelo(&self) -> Estimate {
        match mean_var(&self.points_dist()) {
            Some((mean, var)) => nelo_of(mean, (2.0 * var).sqrt(), 2.0 * self.pairs() as f64),
            None => Estimate {
                value: f64::NAN,
                error: f64::NAN,
            },
        }
    }
}

/// Running mean of a per-game quantity (here the seed margin: own store minus the
/// opponent's) with a normal 95% interval `mean ± z·sd/√n`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MeanAcc {
    pub n: u64,
    pub sum: f64,
    pub sum_sq: f64,
}

impl MeanAcc {
    pub fn push(&mut self, x: f64) {
        self.n += 1;
        self.sum += x;
        self.sum_sq += x * x;
    }

    /// The opposite quantity (the opponent's margin).
    pub fn negated(self) -> MeanAcc {
        MeanAcc {
            n: self.n,
            sum: -self.sum,
            sum_sq: self.sum_sq,
        }
    }

    pub fn add(&mut self, other: MeanAcc) {
        self.n += other.n;
        self.sum += other.sum;
        self.sum_sq += other.sum_sq;
    }

    /// The mean with the half-width of its 95% interval (sample standard deviation; the
    /// error is NaN with fewer than two values).
    pub fn estimate(&self) -> Estimate {
        let n = self.n as f64;
        if self.n == 0 {
            return Estimate {
                value: f64::NAN,
                error: f64::NAN,
            };
        }
        let mean = self.sum / n;
        if self.n < 2 {
            return Estimate {
                value: mean,
                error: f64::NAN,
            };
        }
        let var = ((self.sum_sq - n * mean * mean) / (n - 1.0)).max(0.0);
        Estimate {
            value: mean,
            error: z95() * (var / n).sqrt(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r2(x: f64) -> f64 {
        (x * 100.0).round() / 100.0
    }

    #[test]
    fn trinomial_reference() {
        let w = Wdl::new(136, 111, 96);
        let elo = w.elo();
        assert_eq!((r2(elo.value), r2(elo.error)), (40.70, 30.43));
        let nelo = w.nelo();
        assert_eq!((r2(nelo.value), r2(nelo.error)), (49.77, 36.77));
        assert_eq!(r2(w.los() * 100.0), 99.60);
    }

    #[test]
    fn pentanomial_reference() {
        let p = Pentanomial([34, 54, 63, 64, 75]);
        let elo = p.elo();
        assert_eq!((r2(elo.value), r2(elo.error)), (55.58, 27.65));
        let nelo = p.nelo();
        assert_eq!((r2(nelo.value), r2(nelo.error)), (57.94, 28.28));
        // As fastchess computes it: (1 - erf(-(s - ½)/√(2σ²/pairs)))/2.
        assert_eq!(r2(p.los() * 100.0), 100.0);
        assert!((p.los() - 0.999_970_39).abs() < 1e-8, "{}", p.los());
    }

    /// A lopsided result whose score interval reaches 1 (17-1-2) still has a finite error,
    /// wider than a closer one's (14-2-4); one near the middle keeps the exact form.
    #[test]
    fn an_interval_reaching_a_clean_sweep_still_has_an_error() {
        let lopsided = Wdl::new(17, 1, 2).elo();
        let closer = Wdl::new(14, 2, 4).elo();
        assert!(
            lopsided.error.is_finite() && lopsided.error > closer.error,
            "{lopsided:?}"
        );
        assert!((lopsided.value - 338.0).abs() < 1.0, "{lopsided:?}");
        let pair = Pentanomial([1, 0, 0, 0, 1]).elo();
        assert!(
            pair.value.abs() < 1e-9 && pair.error.is_finite(),
            "{pair:?}"
        );
        // Flipped, the same width.
        let flipped = Wdl::new(2, 1, 17).elo();
        assert!((flipped.error - lopsided.error).abs() < 1e-9);
    }

    #[test]
    fn flipping_negates() {
        let w = Wdl::new(136, 111, 96);
        assert!((w.elo().value + w.flipped().elo().value).abs() < 1e-9);
        assert!((w.los() + w.flipped().los() - 1.0).abs() < 1e-12);
        let p = Pentanomial([34, 54, 63, 64, 75]);
        assert!((p.nelo().value + p.flipped().nelo().value).abs() < 1e-9);
    }

    #[test]
    fn degenerate_counts() {
        assert!(Wdl::default().elo().value.is_nan());
        assert_eq!(Wdl::new(5, 0, 0).elo().value, f64::INFINITY);
        assert_eq!(Wdl::default().los(), 0.5);
        assert_eq!(Wdl::new(0, 4, 0).elo().value, 0.0);
    }

    #[test]
    fn los_without_spread_is_the_limit_not_a_coin_flip() {
        // One engine won every game (the README demo's h2h.csv once said 0.5 here).
        let all_won = Wdl::new(20, 0, 0);
        assert_eq!(all_won.los(), 1.0);
        assert_eq!(all_won.flipped().los(), 0.0);
        let all_pairs_won = Pentanomial([0, 0, 0, 0, 10]);
        assert_eq!(all_pairs_won.los(), 1.0);
        assert_eq!(all_pairs_won.flipped().los(), 0.0);
        // Every pair a win and a draw: no spread either, still superior.
        assert_eq!(Pentanomial([0, 0, 0, 7, 0]).los(), 1.0);
        assert_eq!(Pentanomial([0, 7, 0, 0, 0]).los(), 0.0);
        // Nothing to tell the engines apart.
        assert_eq!(Wdl::new(0, 9, 0).los(), 0.5);
        assert_eq!(Pentanomial([0, 0, 5, 0, 0]).los(), 0.5);
        assert_eq!(Pentanomial::default().los(), 0.5);
        // Some losses among the wins: a finite z, close to 1.
        let nearly = Wdl::new(15, 0, 5).los();
        assert!(nearly > 0.99 && nearly < 1.0, "{nearly}");
    }

    #[test]
    fn elo_score_round_trip() {
        for elo in [-600.0, -35.5, 0.0, 12.0, 400.0] {
            assert!((score_to_elo(elo_to_score(elo)) - elo).abs() < 1e-9);
        }
    }

    #[test]
    fn margin_mean_and_interval() {
        let mut m = MeanAcc::default();
        for x in [2.0, 4.0, 6.0, 8.0] {
            m.push(x);
        }
        let e = m.estimate();
        assert_eq!(e.value, 5.0);
        // sd = sqrt(20/3), n = 4
        let expected = z95() * (20.0f64 / 3.0 / 4.0).sqrt();
        assert!((e.error - expected).abs() < 1e-12);
        assert_eq!(m.negated().estimate().value, -5.0);
    }

    #[test]
    fn results_all_alike_have_no_interval() {
        let even = Pentanomial([0, 0, 5, 0, 0]).elo();
        assert_eq!(even.value, 0.0);
        assert!(even.error.is_nan(), "{even:?}");
        let draws = Wdl::new(0, 10, 0).elo();
        assert!(draws.error.is_nan(), "{draws:?}");
        assert!(Wdl::new(3, 4, 3).elo().error > 0.0);
    }
}
