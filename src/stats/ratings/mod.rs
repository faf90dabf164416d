//! Joint ratings of many engines: a Bradley-Terry maximum-likelihood fit on the logistic Elo
//! scale, for pools of a few engines with millions of games up to tens of thousands of
//! engines with a few games each.
//!
//! Model: engine `i` scores against engine `j` with expectation
//! `p = 1/(1 + 10^((rⱼ - rᵢ)/400))`; every game is a Bernoulli trial in which a draw counts as
//! half a win and half a loss. The ratings maximise the log-likelihood
//! `Σ sᵢⱼ·ln p + (nᵢⱼ - sᵢⱼ)·ln(1 - p)` over all pairings (the likelihood is concave).
//!
//! - **Fit.** Newton's method with step halving, each Newton step solved by conjugate
//!   gradients (Jacobi-preconditioned) on the sparse Hessian, a weighted graph Laplacian with
//!   one entry per pair of engines that met. A step costs a few sweeps over the pairings:
//!   time and memory grow with the number of pairings, not with the square or cube of the
//!   number of engines.
//! - **Scale.** Only differences are determined. Each group of engines that are connected
//!   by games is mean-centred (its ratings sum to zero), unless it contains the anchor engine,
//!   which is then fixed at the anchor's value.
//! - **Intervals.** 95% intervals from the observed Fisher information `I = L` (the negative
//!   Hessian at the maximum, a Laplacian): for a mean-centred group the variances are the
//!   diagonal of the pseudo-inverse `L⁺` (the inverse under the sum-zero constraint), for an
//!   anchored group the diagonal of the inverse of `L` without the anchor's row and column
//!   (the anchor's error is 0). The error is `1.96·√var` in Elo.
//!   Three ways, tried in this order (the first that applies is used):
//!   - *Elimination* (exact): `L`, grounded at one engine, is factored eliminating at each
//!     step an engine with the fewest neighbours left, and the diagonal of the inverse
//!     follows from the factor by Takahashi's recurrence; the mean-centred variances add an
//!     exact correction from one solve with the factor. Cheap when elimination creates little
//!     fill: small pools, ladders (engines meet their neighbours in strength), gauntlets
//!     (many engines against a few references), trees. Abandoned as soon as it would exceed
//!     [`ELIMINATION_WORK`] updates, as on pools of random pairings, where every engine's
//!     opponents soon become neighbours of each other.
//!   - *Solves* (exact): one conjugate-gradient solve per engine, on the cores available,
//!     when that takes at most [`EXACT_INTERVAL_WORK`] edge visits (estimated from the
//!     iterations of the last Newton step).
//!   - *Approximation* (larger groups): with `D` the diagonal of `L`, `P = D⁻¹W` the random
//!     walk on the pairings (`W` the off-diagonal weights) and `π = D/ΣD` its stationary
//!     law, `L⁺ = Q·X·Q` where `Q` removes the mean and `X = Σₖ (Pᵏ - 1πᵀ)·D⁻¹`. The
//!     centring (and, for an anchored group, the anchor's column of `L⁺`) is computed
//!     exactly by one or two solves; only the diagonal of `X` is approximated, by its first
//!     [`WALK_TERMS`] terms, which are the return probabilities of the walk after `k` steps,
//!     computed exactly from each engine's opponents and their opponents, plus a geometric
//!     tail. Then [`CALIBRATION_SAMPLE`] engines spread over the group are solved exactly,
//!     the part of the diagonal beyond `1/Dᵢ` is rescaled by the ratio that makes the
//!     sample right on average, and the largest remaining error on the sample is checked.
//!     On pools of random pairings with 10 or more games per engine the intervals agree
//!     with the exact ones within 1% (the tests check this against the dense reference;
//!     the bench measures 0.02% on 5,000 engines with 40 games each). Pools with
//!     long-range structure are far off (a ladder or a gauntlet, which elimination
//!     normally handles); when the sample shows an error above [`APPROXIMATION_TOLERANCE`]
//!     the intervals are solved exactly if that costs at most [`FALLBACK_WORK_FACTOR`]
//!     times [`EXACT_INTERVAL_WORK`], and are otherwise kept with a warning on the log.
//! - **Perfect scores.** The maximum likelihood is infinite when some part of a group never
//!   scored a point against the rest (for example an engine that won or lost all its games).
//!   Then, in that group only, every pairing that was played receives one virtual draw
//!   (the prior of BayesElo-style ratings), which makes every rating finite; the group is
//!   marked `regularized`. Groups where the maximum exists are fitted on the games alone.
//! - **Disconnected pools.** Engines that are not linked by any chain of games form
//!   separate groups; ratings of different groups are not comparable, and the result lists
//!   the groups.

const ELO_PER_NAT: f64 = 400.0 / std::f64::consts::LN_10;

/// Groups that elimination cannot factor, and where one conjugate-gradient solve per engine
/// visits at most this many edges (`engines × iterations × (pairings + engines)`, with the
/// iterations of the last Newton step), get exact intervals by those solves; larger groups
/// get the approximation described in the module documentation.
pub const EXACT_INTERVAL_WORK: f64 = 1.0e9;

/// Terms of the random-walk series computed exactly for approximate intervals (return
/// probabilities after 0 to 4 steps).
pub const WALK_TERMS: usize = 5;

/// The most work (`Σ (opponents of an engine)²`) spent on the walk's terms after 3 and 4
/// steps; beyond it only the terms up to 2 steps are computed.
const WALK_TWO_STEP_WORK: f64 = 2.0e8;

/// The most updates spent on trying to factor the Fisher information exactly (see the
/// module documentation).
pub const ELIMINATION_WORK: f64 = 4.0e7;

/// Engines whose variance is solved exactly to calibrate approximate intervals.
pub const CALIBRATION_SAMPLE: usize = 24;

/// The largest relative error of an interval on the calibration sample for which the
/// approximation is kept; beyond it, the intervals are solved exactly when that takes at
/// most [`FALLBACK_WORK_FACTOR`] times [`EXACT_INTERVAL_WORK`].
pub const APPROXIMATION_TOLERANCE: f64 = 0.005;

/// See [`APPROXIMATION_TOLERANCE`].
pub const FALLBACK_WORK_FACTOR: f64 = 5.0;

/// Games between two engines: `points` is what engine `a` scored against `b`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PairingScore {
    pub a: usize,
    pub b: usize,
    pub games: f64,
    pub points: f64,
}

/// One engine's fitted rating.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rating {
    pub elo: f64,
    /// Half the width of the 95% interval (NaN for an engine without games).
    pub error: f64,
    /// Index into [`Ratings::groups`].
    pub group: usize,
}

/// A set of engines linked by games.
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    pub members: Vec<usize>,
    /// Whether virtual draws were added to make the ratings finite.
    pub regularized: bool,
    /// Whether the group contains the anchor.
    pub anchored: bool,
}

/// The fit's result, indexed like the input engines.
#[derive(Clone, Debug, PartialEq)]
pub struct Ratings {
    pub ratings: Vec<Rating>,
    pub groups: Vec<Group>,
}

/// How the variances behind the intervals are computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntervalMethod {
    /// Elimination, solves or the approximation, as the module documentation describes.
    Auto,
    /// Elimination when it fits its budget, otherwise one solve per engine, whatever the
    /// size.
    Exact,
    /// The calibrated random-walk approximation, whatever the size.
    Approximate,
}

/// Fits ratings for `engines` engines from their pairings' scores. `anchor` fixes one
/// engine's rating; otherwise (and in groups without the anchor) ratings are mean-centred.
///
/// Pairings may repeat and come in either orientation; pairings of an engine with itself
/// and without games are ignored.
///
/// # Panics
///
/// If a pairing or the anchor names an engine index `>= engines`.
pub fn fit(engines: usize, pairings: &[PairingScore], anchor: Option<(usize, f64)>) -> Ratings {
    fit_with(engines, pairings, anchor, IntervalMethod::Auto)
}

/// [`fit`] with a chosen way of computing the intervals.
pub fn fit_with(
    engines: usize,
    pairings: &[PairingScore],
    anchor: Option<(usize, f64)>,
    method: IntervalMethod,
) -> Ratings {
    if let Some((a, _)) = anchor {
        assert!(
            a < engines,
            "the anchor {a} is not an engine of 0..{engines}"
        );
    }
    let edges = merge(engines, pairings);
    let groups = components(engines, &edges);

    // Edges bucketed by group, with local indices.
    let mut group_of = vec![0usize; engines];
    let mut local = vec![0u32; engines];
    for (gi, members) in groups.iter().enumerate() {
        for (k, &e) in members.iter().enumerate() {
            group_of[e] = gi;
            local[e] = k as u32;
        }
    }
    let mut group_edges: Vec<Vec<Edge>> = groups.iter().map(|_| Vec::new()).collect();
    for e in &edges {
        group_edges[group_of[e.a as usize]].push(Edge {
            a: local[e.a as usize],
            b: local[e.b as usize],
            ..*e
        });
    }

    let z = super::elo::z95();
    let mut ratings = vec![
        Rating {
            elo: 0.0,
            error: f64::NAN,
            group: 0,
        };
        engines
    ];
    let mut out_groups = Vec::with_capacity(groups.len());
    for (gi, (members, mut edges)) in groups.into_iter().zip(group_edges).enumerate() {
        let regularized = !strongly_connected(members.len(), &edges);
        if regularized {
            for e in &mut edges {
                e.games += 1.0;
                e.points += 0.5;
            }
        }
        let anchor_local = anchor
            .filter(|&(e, _)| group_of[e] == gi)
            .map(|(e, v)| (local[e] as usize, v));
        let (theta, var) = fit_group(members.len(), &edges, anchor_local.map(|a| a.0), method);
        let shift = match anchor_local {
            Some((k, v)) => v - theta[k] * ELO_PER_NAT,
            None => -theta.iter().sum::<f64>() / theta.len() as f64 * ELO_PER_NAT,
        };
        for (k, &e) in members.iter().enumerate() {
            let error = if members.len() == 1 {
                f64::NAN
            } else {
                z * var[k].max(0.0).sqrt() * ELO_PER_NAT
            };
            ratings[e] = Rating {
                elo: theta[k] * ELO_PER_NAT + shift,
                error,
                group: gi,
            };
        }
        out_groups.push(Group {
            members,
            regularized,
            anchored: anchor_local.is_some(),
        });
    }
    Ratings {
        ratings,
        groups: out_groups,
    }
}

/// All games between two engines `a < b`: `points` is what `a` scored.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Edge {
    a: u32,
    b: u32,
    games: f64,
    points: f64,
}

/// One edge per unordered pair that played (`a < b`), sorted.
fn merge(engines: usize, pairings: &[PairingScore]) -> Vec<Edge> {
    let mut edges: Vec<Edge> = pairings
        .iter()
        .filter(|p| p.a != p.b && p.games > 0.0)
        .map(|p| {
            assert!(
                p.a < engines && p.b < engines,
                "the pairing {p:?} names an engine outside 0..{engines}"
            );
            if p.a < p.b {
                Edge {
                    a: p.a as u32,
                    b: p.b as u32,
                    games: p.games,
                    points: p.points,
                }
            } else {
                Edge {
                    a: p.b as u32,
                    b: p.a as u32,
                    games: p.games,
                    points: p.games - p.points,
                }
            }
        })
        .collect();
    edges.sort_unstable_by_key(|e| (e.a, e.b));
    edges.dedup_by(|next, kept| {
        let same = (next.a, next.b) == (kept.a, kept.b);
        if same {
            kept.games += next.games;
            kept.points += next.points;
        }
        same
    });
    edges
}

/// Connected components (sorted members; components in order of their smallest member).
fn components(n: usize, edges: &[Edge]) -> Vec<Vec<usize>> {
    let mut parent: Vec<usize> = (0..n).collect();
    fn find(p: &mut [usize], mut x: usize) -> usize {
        while p[x] != x {
            p[x] = p[p[x]];
            x = p[x];
        }
        x
    }
    for e in edges {
        let (ra, rb) = (
            find(&mut parent, e.a as usize),
            find(&mut parent, e.b as usize),
        );
        if ra != rb {
            parent[ra.max(rb)] = ra.min(rb);
        }
    }
    let mut by_root: Vec<Vec<usize>> = vec![Vec::new(); n];
    for x in 0..n {
        let r = find(&mut parent, x);
        by_root[r].push(x);
    }
    by_root.into_iter().filter(|g| !g.is_empty()).collect()
}

/// Whether every engine can reach every other along "scored points against" links: the
/// condition for a finite maximum-likelihood estimate in a connected group.
fn strongly_connected(n: usize, edges: &[Edge]) -> bool {
    if n <= 1 {
        return true;
    }
    let mut fwd = vec![Vec::new(); n];
    let mut rev = vec![Vec::new(); n];
    for e in edges {
        let (a, b) = (e.a as usize, e.b as usize);
        if e.points > 0.0 {
            // a scored against b
            fwd[a].push(b);
            rev[b].push(a);
        }
        if e.games - e.points > 0.0 {
            fwd[b].push(a);
            rev[a].push(b);
        }
    }
    let reach_all = |adj: &Vec<Vec<usize>>| {
        let mut seen = vec![false; n];
        let mut stack = vec![0];
        seen[0] = true;
        while let Some(x) = stack.pop() {
            for &y in &adj[x] {
                if !seen[y] {
                    seen[y] = true;
                    stack.push(y);
                }
            }
        }
        seen.iter().all(|&s| s)
    };
    reach_all(&fwd) && reach_all(&rev)
}

mod laplacian;
mod variance;

#[cfg(test)]
pub(crate) mod dense;
#[cfg(test)]
mod tests;

use laplacian::*;
use variance::*;

/// Relative residual of the Newton steps' solves.
const NEWTON_RTOL: f64 = 1e-10;
/// Relative residual of the solves behind the intervals.
const VARIANCE_RTOL: f64 = 1e-8;

/// Fits one connected group (local indices) and returns natural-unit ratings (arbitrary
/// offset) and each rating's variance under the group's constraint.
fn fit_group(
    n: usize,
    edges: &[Edge],
    anchor: Option<usize>,
    method: IntervalMethod,
) -> (Vec<f64>, Vec<f64>) {
    let mut theta = vec![0.0; n];
    if n == 1 {
        return (theta, vec![0.0]);
    }
    let mut ll = log_likelihood(&theta, edges);
    let mut gradient = vec![0.0; n];
    let mut step = vec![0.0; n];
    let mut cand = vec![0.0; n];
    let mut scratch = CgScratch::new(n);
    // Conjugate-gradient iterations of the last Newton step: the cost of one solve.
    let mut iterations = 1;
    for _ in 0..200 {
        let info = Laplacian::at(&theta, edges, None);
        gradient.fill(0.0);
        for e in edges {
            let p = sigmoid(theta[e.a as usize] - theta[e.b as usize]);
            let r = e.points - e.games * p;
            gradient[e.a as usize] += r;
            gradient[e.b as usize] -= r;
        }
        iterations = info.solve(&gradient, &mut step, NEWTON_RTOL, &mut scratch);
        let mut t = 1.0;
        let mut improved = false;
        for _ in 0..60 {
            for i in 0..n {
                cand[i] = theta[i] + t * step[i];
            }
            let cll = log_likelihood(&cand, edges);
            if cll >= ll - 1e-12 * ll.abs().max(1.0) {
                std::mem::swap(&mut theta, &mut cand);
                ll = cll;
                improved = true;
                break;
            }
            t *= 0.5;
        }
        let size = step.iter().fold(0.0f64, |m, x| m.max(x.abs())) * t;
        if !improved || size < 1e-10 {
            break;
        }
    }
    let info = Laplacian::at(&theta, edges, anchor);
    if method != IntervalMethod::Approximate
        && let Some(var) = eliminated_variances(&info, anchor, ELIMINATION_WORK)
    {
        return (theta, var);
    }
    // Work of one solve per engine, in edge visits.
    let work = n as f64 * iterations.max(1) as f64 * (edges.len() + n) as f64;
    if method == IntervalMethod::Exact
        || (method == IntervalMethod::Auto && work <= EXACT_INTERVAL_WORK)
    {
        return (theta, solved_variances(&info, anchor));
    }
    let (var, sample_error) = approximate_variances(&info, anchor);
    if method == IntervalMethod::Approximate || sample_error <= APPROXIMATION_TOLERANCE {
        return (theta, var);
    }
    if work <= FALLBACK_WORK_FACTOR * EXACT_INTERVAL_WORK {
        tracing::debug!(
            engines = n,
            pairings = edges.len(),
            "approximate intervals off by {:.2}% on a sample: solving them exactly",
            sample_error * 100.0
        );
        return (theta, solved_variances(&info, anchor));
    }
    tracing::warn!(
        engines = n,
        pairings = edges.len(),
        "rating intervals are approximate: on a sample of engines they are off by up to {:.1}%, \
         and solving them exactly would take too long",
        sample_error * 100.0
    );
    (theta, var)
}
