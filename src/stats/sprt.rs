//! The generalized sequential probability ratio test (GSPRT) on game results, as used for
//! engine regression testing: H0 "the new engine is `elo0` stronger" against H1 "it is
//! `elo1` stronger".
//!
//! The log-likelihood ratio is the generalized one of M. Van den Bergh: the results are
//! modelled as a multinomial distribution over the possible outcomes (3 for single games, 5
//! for game pairs); under each hypothesis the distribution closest to the observed one (its
//! maximum-likelihood estimate under the hypothesis' constraint) is found, and the LLR is
//! `N · Σ p̂ᵢ · ln(p₁ᵢ / p₀ᵢ)`.
//! - logistic model: the constraint is the expected score, `s = 1/(1 + 10^(-elo/400))`;
//! - normalized model: the constraint is the t-value `(s - ½)/σ`, with `σ` the standard
//!   deviation of one outcome and `elo = t · 800/ln 10` (times `1/√2` for pairs, so that
//!   the normalized Elo is per game).
//!
//! Empty outcome classes get a count of 0.001 so that every distribution has full support.
//! The stopping bounds are Wald's `ln(β/(1-α))` and `ln((1-β)/α)`.

use super::elo::{Estimate, NELO_PER_T, Pentanomial, elo_to_score};

/// How `elo0` and `elo1` are read: `--model` and `model` in `sprt.toml`. Normalized Elo is a
/// t-value scaled by `800/ln 10`.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Default,
    serde::Serialize,
    serde::Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum SprtModel {
    /// Normalized Elo: independent of the draw ratio (fishtest's default).
    #[default]
    Normalized,
    /// Logistic Elo: an expected score.
    Logistic,
}

impl SprtModel {
    pub fn as_str(self) -> &'static str {
        match self {
            SprtModel::Normalized => "normalized",
            SprtModel::Logistic => "logistic",
        }
    }
}

/// The outcome of a test so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SprtDecision {
    /// The LLR is still between the bounds.
    Continue,
    /// The LLR fell to the lower bound: H0 accepted.
    H0,
    /// The LLR reached the upper bound: H1 accepted.
    H1,
}

/// An SPRT's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sprt {
    pub elo0: f64,
    pub elo1: f64,
    pub alpha: f64,
    pub beta: f64,
    pub model: SprtModel,
}

impl Sprt {
    /// The lower and upper LLR bounds.
    pub fn bounds(&self) -> (f64, f64) {
        (
            (self.beta / (1.0 - self.alpha)).ln(),
            ((1.0 - self.beta) / self.alpha).ln(),
        )
    }

    /// The LLR of `counts`: trinomial `[L, D, W]` or pentanomial `[LL, LD, WL+DD, WD, WW]`
    /// from the new engine's point of view.
    pub fn llr(&self, counts: &[u64]) -> f64 {
        match self.model {
            SprtModel::Logistic => llr_logistic(self.elo0, self.elo1, counts),
            SprtModel::Normalized => llr_normalized(self.elo0, self.elo1, counts),
        }
    }

    /// Where `llr` stands against the bounds.
    pub fn decide(&self, llr: f64) -> SprtDecision {
        let (lo, hi) = self.bounds();
        if llr >= hi {
            SprtDecision::H1
        } else if llr <= lo {
            SprtDecision::H0
        } else {
            SprtDecision::Continue
        }
    }
}

/// Where a test stands after a pair.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SprtStatus {
    /// The completed game pairs the LLR counts.
    pub pairs: u64,
    /// The games of those pairs: two a pair. A game whose partner has not finished, or
    /// whose partner repeats an earlier game, is not among them.
    pub games: u64,
    pub llr: f64,
    pub lower: f64,
    pub upper: f64,
    pub decision: SprtDecision,
    /// The new engine's Elo from the pairs.
    pub elo: Estimate,
    /// The new engine's normalized Elo from the pairs.
    pub nelo: Estimate,
}

impl Sprt {
    /// Where the test stands with the new engine's results `penta` (the game pairs the
    /// LLR counts).
    pub fn status(&self, penta: Pentanomial) -> SprtStatus {
        let llr = self.llr(&penta.0);
        let (lower, upper) = self.bounds();
        SprtStatus {
            pairs: penta.pairs(),
            games: 2 * penta.pairs(),
            llr,
            lower,
            upper,
            decision: self.decide(llr),
            elo: penta.elo(),
            nelo: penta.nelo(),
        }
    }
}

impl SprtStatus {
    /// One line for a terminal: pairs, LLR with its bounds, Elo.
    pub fn line(&self) -> String {
        format!(
            "pairs {} games {}  LLR {} [{}, {}]  Elo {}  nElo {}",
            self.pairs,
            self.games,
            fmt_llr(self.llr),
            fmt_llr(self.lower),
            fmt_llr(self.upper),
            fmt_estimate(self.elo),
            fmt_estimate(self.nelo),
        )
    }
}

/// An estimate as the progress lines and the verdict show it: `+12.3 ± 4.5`, only the value
/// when the interval is unknown, `+∞` or `-∞` when one side won every pair, `?` without a
/// value. Never `-0.0`.
pub fn fmt_estimate(e: Estimate) -> String {
    if e.is_finite() {
        format!("{} ± {:.1}", fmt_signed(e.value), e.error.abs())
    } else if e.value.is_finite() {
        fmt_signed(e.value)
    } else if e.value.is_infinite() {
        if e.value > 0.0 { "+∞" } else { "-∞" }.to_string()
    } else {
        "?".to_string()
    }
}

/// A log-likelihood ratio or bound with two decimals; values that round to zero print as
/// `0.00`, never `-0.00`.
pub fn fmt_llr(x: f64) -> String {
    let x = if (x * 100.0).round() == 0.0 { 0.0 } else { x };
    format!("{x:.2}")
}

/// `x` with a sign and one decimal; values that round to zero print as `+0.0`.
pub fn fmt_signed(x: f64) -> String {
    let x = if (x * 10.0).round() == 0.0 { 0.0 } else { x };
    format!("{x:+.1}")
}

/// The Elo of a stopped test estimated so that stopping does not bias it: the Elo at which
/// the test's outcome is as likely to have been worse as better (its median-unbiased
/// estimate), with the Elos at which a worse outcome has probability 97.5% and 2.5% (a 95%
/// interval), in the units of the test's model. fishtest reports the same for its stopped
/// tests; the naive estimate of a stopped test is biased away from the middle of the
/// bounds, since a test stops early on a lucky or an unlucky run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StoppedEstimate {
    /// The units of the three values: the test's model.
    pub model: SprtModel,
    pub elo: f64,
    pub lower: f64,
    pub upper: f64,
}

/// The farthest Elo from 0 a median-unbiased estimate or an end of its interval takes
/// (in either model): as far as any bound a test accepts. An estimate there is given as
/// "at least" or "at most" that Elo.
pub const FARTHEST_ESTIMATE: f64 = 2000.0;

impl StoppedEstimate {
    /// The estimate as words: `+12.3`, or `at least +2000.0` when it is the farthest Elo
    /// searched ([`FARTHEST_ESTIMATE`]) or the farthest the model fits the results to
    /// (the engines are further apart than it can tell), `at most` the other way.
    pub fn value_words(&self) -> String {
        estimate_words(self.elo, self.lower, self.upper)
    }
}

/// A median-unbiased estimate `elo` with its interval `[lower, upper]` in words (see
/// [`StoppedEstimate::value_words`]); an estimate on an end of its interval is that edge.
pub fn estimate_words(elo: f64, lower: f64, upper: f64) -> String {
    if elo >= upper && upper > lower {
        format!("at least {}", fmt_signed(elo))
    } else if elo <= lower && upper > lower {
        format!("at most {}", fmt_signed(elo))
    } else {
        fmt_signed(elo)
    }
}

impl Sprt {
    /// The median-unbiased estimate of a test with the counts `counts` (trinomial or
    /// pentanomial, as [`Sprt::llr`] takes them), stopped or not: `None` when the counts
    /// cannot support one (no results, or every result alike).
    ///
    /// The LLR is approximated by a Brownian motion with drift, one step per observation
    /// (game or pair): at a true Elo `e` the outcomes are distributed as the observed ones
    /// constrained to `e` (the maximum-likelihood distribution), each adding
    /// `ln(p1ᵢ/p0ᵢ)` to the LLR, which gives the motion's drift and variance. The observed
    /// outcome is the time and value at which the LLR stopped (an LLR that overshot a
    /// bound is moved back onto it, at the time the average step would have reached it);
    /// a worse outcome is an earlier rejection, a later acceptance, or, for a test not
    /// stopped, a rejection or a lower LLR at the same time. Its probability at `e` comes
    /// from the density of the motion between the two bounds (a sum of images) and the
    /// chance of leaving through either bound from each point, and it falls as `e` grows;
    /// the estimate and the interval are where it is 1/2, 0.975 and 0.025.
    pub fn median_unbiased(&self, counts: &[u64]) -> Option<StoppedEstimate> {
        if counts.iter().sum::<u64>() == 0 || counts.iter().filter(|&&c| c > 0).count() < 2 {
            return None;
        }
        let (n, pdf) = empirical(counts);
        let (p0, p1) = (
            self.constrained(&pdf, self.elo0)?,
            self.constrained(&pdf, self.elo1)?,
        );
        let jumps: Vec<f64> = p0.iter().zip(&p1).map(|(a, b)| b.ln() - a.ln()).collect();
        let llr: f64 = n * pdf.iter().zip(&jumps).map(|((_, p), j)| p * j).sum::<f64>();
        let (a, b) = self.bounds();
        let slope = llr / n;
        let (time, y) = if llr >= b {
            (b / slope, b)
        } else if llr <= a {
            (a / slope, a)
        } else {
            (n, llr)
        };
        let worse = |elo: f64| -> Option<f64> {
            let q = self.tilted(&pdf, elo)?;
            let mu: f64 = q.iter().zip(&jumps).map(|(q, j)| q * j).sum();
            let var: f64 = q
                .iter()
                .zip(&jumps)
                .map(|(q, j)| q * (j - mu) * (j - mu))
                .sum();
            (var > 0.0).then(|| worse_outcome(a, b, mu, var.sqrt(), time, y))
        };
        let mid = 0.5 * (self.elo0 + self.elo1);
        let width = (self.elo1 - self.elo0).abs().max(1.0);
        let limit = FARTHEST_ESTIMATE;
        // The farthest point from `from` (where the model fits) towards `to` where it
        // still fits: constrained to an extreme Elo, the outcomes have no distribution.
        let edge = |from: f64, to: f64| -> f64 {
            if worse(to).is_some() {
                return to;
            }
            let (mut fits, mut not) = (from, to);
            for _ in 0..40 {
                let m = 0.5 * (fits + not);
                if worse(m).is_some() {
                    fits = m;
                } else {
                    not = m;
                }
            }
            fits
        };
        let root = |target: f64| -> Option<f64> {
            worse(mid)?;
            // The probability falls as the Elo grows: widen until the target is inside,
            // or the model no longer fits (the estimate is then that edge).
            let mut span = 30.0 * width;
            let (mut lo, mut hi);
            loop {
                let (want_lo, want_hi) = ((mid - span).max(-limit), (mid + span).min(limit));
                lo = edge(mid, want_lo);
                hi = edge(mid, want_hi);
                // An end that cannot move further out: the model's edge or the limit.
                let lo_stuck = lo > want_lo || want_lo <= -limit;
                let hi_stuck = hi < want_hi || want_hi >= limit;
                let (flo, fhi) = (worse(lo)?, worse(hi)?);
                if flo < target && lo_stuck {
                    return Some(lo);
                }
                if fhi > target && hi_stuck {
                    return Some(hi);
                }
                if flo >= target && fhi <= target {
                    break;
                }
                span *= 2.0;
            }
            for _ in 0..60 {
                let m = 0.5 * (lo + hi);
                match worse(m) {
                    Some(f) if f > target => lo = m,
                    Some(_) => hi = m,
                    None => return None,
                }
                if hi - lo < 1e-3 {
                    break;
                }
            }
            Some(0.5 * (lo + hi))
        };
        Some(StoppedEstimate {
            model: self.model,
            elo: root(0.5)?,
            lower: root(0.975)?,
            upper: root(0.025)?,
        })
    }

    /// The observed `pdf` tilted to the Elo `elo` (in the test's model): the distribution
    /// closest to it of that Elo, on the path of such distributions through the observed
    /// one (see [`tilted_to_t_value`]); the same as [`Sprt::constrained`] wherever that
    /// finds the closest.
    fn tilted(&self, pdf: &[(f64, f64)], elo: f64) -> Option<Vec<f64>> {
        match self.model {
            SprtModel::Logistic => mle_expected(pdf, elo_to_score(elo)),
            SprtModel::Normalized => tilted_to_t_value(pdf, 0.5, elo / NELO_PER_T * t_scale(pdf)),
        }
    }

    /// The distribution closest to the observed `pdf` whose Elo (in the test's model) is
    /// `elo`, as the LLR finds it.
    fn constrained(&self, pdf: &[(f64, f64)], elo: f64) -> Option<Vec<f64>> {
        match self.model {
            SprtModel::Logistic => mle_expected(pdf, elo_to_score(elo)),
            SprtModel::Normalized => mle_t_value(pdf, 0.5, elo / NELO_PER_T * t_scale(pdf)),
        }
    }
}

/// The t-value of one outcome per t-value of one game: `√2` for game pairs, so that the
/// normalized Elo is per game.
fn t_scale(pdf: &[(f64, f64)]) -> f64 {
    if pdf.len() == 5 {
        std::f64::consts::SQRT_2
    } else {
        1.0
    }
}

/// For a Brownian motion from 0 with drift `mu` and standard deviation `sigma` per unit of
/// time, stopped when it leaves `(a, b)`: the probability of an outcome worse than being at
/// `y` at `time` (`y = b`: leaving through `b` then; `y = a`: leaving through `a` then;
/// between: still inside), where leaving through `a` is worse than staying inside, which is
/// worse than leaving through `b`, an earlier exit through `a` is worse and an earlier exit
/// through `b` better, and inside a lower value is worse.
fn worse_outcome(a: f64, b: f64, mu: f64, sigma: f64, time: f64, y: f64) -> f64 {
    // Shifted so that the lower bound is 0, the upper `w`, the start `s`.
    let w = b - a;
    let s = -a;
    let var_t = sigma * sigma * time;
    let images =
        (((10.0 * var_t.sqrt() + mu.abs() * time) / (2.0 * w)).ceil() as i64 + 2).min(2000);
    // The density at time `time` of the motion that has not left, at `x` in (0, w).
    let density = |x: f64| -> f64 {
        let d = x - s;
        let drift = mu * d / (sigma * sigma) - mu * mu * time / (2.0 * sigma * sigma);
        let norm = 1.0 / (2.0 * std::f64::consts::PI * var_t).sqrt();
        let mut sum = 0.0;
        for k in -images..=images {
            let shift = 2.0 * k as f64 * w;
            let z1 = x - s + shift;
            let z2 = x + s + shift;
            sum += (-z1 * z1 / (2.0 * var_t) + drift).min(700.0).exp()
                - (-z2 * z2 / (2.0 * var_t) + drift).min(700.0).exp();
        }
        (norm * sum).max(0.0)
    };
    // The chance of leaving through the upper bound from `x`, whatever the time.
    let gamma = 2.0 * mu / (sigma * sigma);
    let up = |x: f64| -> f64 {
        if gamma.abs() < 1e-12 {
            x / w
        } else if gamma > 0.0 {
            (-gamma * x).exp_m1() / (-gamma * w).exp_m1()
        } else {
            let g = -gamma;
            (g * (x - w)).exp() * (-g * x).exp_m1() / (-g * w).exp_m1()
        }
    };
    // Simpson's rule over (0, upto) of f times the density.
    let integral = |upto: f64, f: &dyn Fn(f64) -> f64| -> f64 {
        let m = 400;
        let h = upto / m as f64;
        (0..=m)
            .map(|i| {
                let x = i as f64 * h;
                let weight = if i == 0 || i == m {
                    1.0
                } else if i % 2 == 1 {
                    4.0
                } else {
                    2.0
                };
                weight * f(x) * density(x)
            })
            .sum::<f64>()
            * h
            / 3.0
    };
    let up_by_then = up(s) - integral(w, &|x| up(x));
    let down_by_then = (1.0 - up(s)) - integral(w, &|x| 1.0 - up(x));
    let p = if y >= b {
        1.0 - up_by_then
    } else if y <= a {
        down_by_then
    } else {
        down_by_then + integral(y - a, &|_| 1.0)
    };
    p.clamp(0.0, 1.0)
}

/// Outcome values (evenly spaced in [0, 1]) and regularized relative frequencies.
fn empirical(counts: &[u64]) -> (f64, Vec<(f64, f64)>) {
    let k = counts.len();
    assert!(k >= 2, "at least two outcome classes");
    let c: Vec<f64> = counts
        .iter()
        .map(|&c| if c == 0 { 1e-3 } else { c as f64 })
        .collect();
    let n: f64 = c.iter().sum();
    let pdf = c
        .iter()
        .enumerate()
        .map(|(i, &ci)| (i as f64 / (k - 1) as f64, ci / n))
        .collect();
    (n, pdf)
}

fn mean_var(pdf: &[(f64, f64)]) -> (f64, f64) {
    let mean: f64 = pdf.iter().map(|(a, p)| a * p).sum();
    let var = pdf.iter().map(|(a, p)| p * (a - mean) * (a - mean)).sum();
    (mean, var)
}

/// Solves `Σ pᵢ aᵢ / (1 + x aᵢ) = 0` for `x` in the interval where every `1 + x aᵢ > 0`
/// (the function decreases strictly there). Needs values of both signs.
fn secular(pdf: &[(f64, f64)]) -> Option<f64> {
    let lo_v = pdf.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let hi_v = pdf.iter().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max);
    if !(lo_v < 0.0 && hi_v > 0.0) {
        return None;
    }
    let f = |x: f64| pdf.iter().map(|(a, p)| p * a / (1.0 + x * a)).sum::<f64>();
    let eps = 1e-9;
    let (mut lo, mut hi) = (-1.0 / hi_v + eps, -1.0 / lo_v - eps);
    // f(lo) > 0 > f(hi): bisect to machine precision.
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if f(mid) > 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(0.5 * (lo + hi))
}

/// The maximum-likelihood distribution on the same outcomes with expected value `s`.
fn mle_expected(pdf: &[(f64, f64)], s: f64) -> Option<Vec<f64>> {
    let shifted: Vec<(f64, f64)> = pdf.iter().map(|&(a, p)| (a - s, p)).collect();
    let x = secular(&shifted)?;
    Some(pdf.iter().map(|&(a, p)| p / (1.0 + x * (a - s))).collect())
}

/// The maximum-likelihood distribution on the same outcomes with t-value
/// `(mean - reference)/σ = t`, by fixed-point iteration from the even distribution (as
/// fishtest finds it for its LLR). The iteration finds none for large t-values (from
/// the even distribution of pair results, none above a normalized Elo of about 231.6).
fn mle_t_value(pdf: &[(f64, f64)], reference: f64, t: f64) -> Option<Vec<f64>> {
    let start = vec![1.0 / pdf.len() as f64; pdf.len()];
    t_value_iteration(pdf, reference, t, start, 100).map(|(probs, _)| probs)
}

/// The fixed-point iteration of [`mle_t_value`] from `probs`, at most `rounds` times:
/// the distribution it reached, and whether it settled.
fn t_value_iteration(
    pdf: &[(f64, f64)],
    reference: f64,
    t: f64,
    mut probs: Vec<f64>,
    rounds: usize,
) -> Option<(Vec<f64>, bool)> {
    for _ in 0..rounds {
        let cur: Vec<(f64, f64)> = pdf.iter().zip(&probs).map(|(&(a, _), &q)| (a, q)).collect();
        let (mu, var) = mean_var(&cur);
        let sigma = var.sqrt();
        if sigma.is_nan() || sigma <= 0.0 {
            return None;
        }
        let shifted: Vec<(f64, f64)> = pdf
            .iter()
            .map(|&(a, p)| {
                let d = (mu - a) / sigma;
                (a - reference - t * sigma * (1.0 + d * d) / 2.0, p)
            })
            .collect();
        let x = secular(&shifted)?;
        let next: Vec<f64> = shifted.iter().map(|&(b, p)| p / (1.0 + x * b)).collect();
        let change = next
            .iter()
            .zip(&probs)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        probs = next;
        if change < 1e-12 {
            return Some((probs, true));
        }
    }
    Some((probs, false))
}

/// The maximum-likelihood distribution on the same outcomes with t-value `t`, followed
/// from the observed distribution (which has its own t-value) in small steps of the
/// t-value, each iteration starting from the last step's distribution: the outcomes
/// tilted to `t` for any `t` they can reach, where [`mle_t_value`] finds none past a
/// t-value near 1. `None` when a step does not settle even when made very small.
fn tilted_to_t_value(pdf: &[(f64, f64)], reference: f64, t: f64) -> Option<Vec<f64>> {
    const MAX_STEP: f64 = 0.05;
    let (mu, var) = mean_var(pdf);
    let mut at = (mu - reference) / var.sqrt();
    let mut probs: Vec<f64> = pdf.iter().map(|&(_, p)| p).collect();
    let mut step = MAX_STEP;
    while at != t {
        let next = if (t - at).abs() <= step {
            t
        } else {
            at + step.copysign(t - at)
        };
        match t_value_iteration(pdf, reference, next, probs.clone(), 200) {
            Some((found, true)) => {
                probs = found;
                at = next;
                step = (2.0 * step).min(MAX_STEP);
            }
            _ => {
                step /= 2.0;
                if step < 1e-6 {
                    return None;
                }
            }
        }
    }
    Some(probs)
}

fn llr_between(n: f64, pdf: &[(f64, f64)], p0: Option<Vec<f64>>, p1: Option<Vec<f64>>) -> f64 {
    let (Some(p0), Some(p1)) = (p0, p1) else {
        return f64::NAN;
    };
    n * pdf
        .iter()
        .zip(p0.iter().zip(&p1))
        .map(|(&(_, p), (q0, q1))| p * (q1.ln() - q0.ln()))
        .sum::<f64>()
}

/// The generalized LLR for logistic Elo `elo1` against `elo0`.
pub fn llr_logistic(elo0: f64, elo1: f64, counts: &[u64]) -> f64 {
    let (n, pdf) = empirical(counts);
    let p0 = mle_expected(&pdf, elo_to_score(elo0));
    let p1 = mle_expected(&pdf, elo_to_score(elo1));
    llr_between(n, &pdf, p0, p1)
}

/// The generalized LLR for normalized Elo `nelo1` against `nelo0`.
pub fn llr_normalized(nelo0: f64, nelo1: f64, counts: &[u64]) -> f64 {
    let (n, pdf) = empirical(counts);
    // A pair's mean result has 1/√2 of a game's standard deviation.
    let scale = if counts.len() == 5 {
        std::f64::consts::SQRT_2
    } else {
        1.0
    };
    let t0 = nelo0 / NELO_PER_T * scale;
    let t1 = nelo1 / NELO_PER_T * scale;
    let p0 = mle_t_value(&pdf, 0.5, t0);
    let p1 = mle_t_value(&pdf, 0.5, t1);
    llr_between(n, &pdf, p0, p1)
}

#[cfg(test)]
mod tests;
