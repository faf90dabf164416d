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

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

fn softplus(x: f64) -> f64 {
    if x > 30.0 {
        x + (-x).exp().ln_1p()
    } else {
        x.exp().ln_1p()
    }
}

fn log_likelihood(theta: &[f64], edges: &[Edge]) -> f64 {
    edges
        .iter()
        .map(|e| {
            let d = theta[e.a as usize] - theta[e.b as usize];
            // ln σ(d) = -ln(1 + e^{-d}), computed stably.
            e.points * -softplus(-d) + (e.games - e.points) * -softplus(d)
        })
        .sum()
}

/// The weighted Laplacian `L` of one group (the Fisher information at some ratings), with
/// one engine, the *ground*, held at 0: on the other engines `L` is positive definite when
/// the group is connected.
struct Laplacian<'a> {
    edges: &'a [Edge],
    /// The weight `nᵢⱼ·p·(1-p)` of each edge.
    weight: Vec<f64>,
    /// `Dᵢ = Σⱼ wᵢⱼ`.
    degree: Vec<f64>,
    /// `1/Dᵢ`, 0 at the ground (the Jacobi preconditioner).
    inv_degree: Vec<f64>,
    ground: usize,
}

/// Scratch vectors of one conjugate-gradient solver.
struct CgScratch {
    r: Vec<f64>,
    z: Vec<f64>,
    p: Vec<f64>,
    ap: Vec<f64>,
}

impl CgScratch {
    fn new(n: usize) -> Self {
        CgScratch {
            r: vec![0.0; n],
            z: vec![0.0; n],
            p: vec![0.0; n],
            ap: vec![0.0; n],
        }
    }
}

impl<'a> Laplacian<'a> {
    /// The Fisher information at `theta`, grounded at `ground` (or at the engine with the
    /// most weight when `None`).
    fn at(theta: &[f64], edges: &'a [Edge], ground: Option<usize>) -> Self {
        let n = theta.len();
        let mut degree = vec![0.0; n];
        let weight: Vec<f64> = edges
            .iter()
            .map(|e| {
                let p = sigmoid(theta[e.a as usize] - theta[e.b as usize]);
                let w = e.games * p * (1.0 - p);
                degree[e.a as usize] += w;
                degree[e.b as usize] += w;
                w
            })
            .collect();
        let ground = ground.unwrap_or_else(|| {
            (0..n)
                .max_by(|&i, &j| degree[i].total_cmp(&degree[j]))
                .unwrap_or(0)
        });
        let mut inv_degree: Vec<f64> = degree.iter().map(|&d| 1.0 / d).collect();
        inv_degree[ground] = 0.0;
        Laplacian {
            edges,
            weight,
            degree,
            inv_degree,
            ground,
        }
    }

    fn len(&self) -> usize {
        self.degree.len()
    }

    /// `y = L·x` on the engines other than the ground (`x` is 0 at the ground, and so is
    /// `y`).
    fn apply(&self, x: &[f64], y: &mut [f64]) {
        y.fill(0.0);
        for (e, &w) in self.edges.iter().zip(&self.weight) {
            let (a, b) = (e.a as usize, e.b as usize);
            let t = w * (x[a] - x[b]);
            y[a] += t;
            y[b] -= t;
        }
        y[self.ground] = 0.0;
    }

    /// Solves `L·x = b` with `x` at the ground fixed to 0 (`b` at the ground is ignored) to
    /// a relative residual of `rtol`; `x` is overwritten. Returns the iterations used.
    fn solve(&self, b: &[f64], x: &mut [f64], rtol: f64, s: &mut CgScratch) -> usize {
        let n = self.len();
        x.fill(0.0);
        s.r.copy_from_slice(b);
        s.r[self.ground] = 0.0;
        let b_norm = dot(&s.r, &s.r).sqrt();
        if b_norm == 0.0 {
            return 0;
        }
        precondition(&s.r, &self.inv_degree, &mut s.z);
        s.p.copy_from_slice(&s.z);
        let mut rz = dot(&s.r, &s.z);
        // Exact arithmetic needs at most n - 1 steps; rounding may need more on hard graphs.
        let limit = 10 * n + 100;
        for it in 1..=limit {
            self.apply(&s.p, &mut s.ap);
            let pap = dot(&s.p, &s.ap);
            if pap <= 0.0 || !pap.is_finite() {
                return it;
            }
            let alpha = rz / pap;
            for ((x, r), (p, ap)) in x.iter_mut().zip(&mut s.r).zip(s.p.iter().zip(&s.ap)) {
                *x += alpha * p;
                *r -= alpha * ap;
            }
            if dot(&s.r, &s.r).sqrt() <= rtol * b_norm {
                return it;
            }
            precondition(&s.r, &self.inv_degree, &mut s.z);
            let rz_next = dot(&s.r, &s.z);
            let beta = rz_next / rz;
            rz = rz_next;
            for (p, z) in s.p.iter_mut().zip(&s.z) {
                *p = z + beta * *p;
            }
        }
        limit
    }

    /// `L⁺·b` for `b` summing to zero: the solution with mean zero.
    fn solve_centred(&self, b: &[f64], x: &mut [f64], rtol: f64, s: &mut CgScratch) {
        self.solve(b, x, rtol, s);
        let mean = x.iter().sum::<f64>() / x.len() as f64;
        for v in x.iter_mut() {
            *v -= mean;
        }
    }
}

/// `z = M⁻¹·r` for the Jacobi preconditioner `M⁻¹ = diag(inv_degree)`.
fn precondition(r: &[f64], inv_degree: &[f64], z: &mut [f64]) {
    for ((z, r), d) in z.iter_mut().zip(r).zip(inv_degree) {
        *z = r * d;
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

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

/// A hasher for engine indices (a multiplicative hash: fast, and the high bits that the
/// hash table uses are well mixed).
#[derive(Clone, Copy, Default)]
struct IndexHasher(u64);

impl std::hash::Hasher for IndexHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u32(&mut self, i: u32) {
        self.0 = (u64::from(i) ^ self.0).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

type IndexMap = std::collections::HashMap<u32, f64, std::hash::BuildHasherDefault<IndexHasher>>;

/// Exact variances by sparse elimination: `L` grounded (at the anchor, or at the engine with
/// the most weight) is factored as `L = U·D·Uᵀ` eliminating at each step an engine with the
/// fewest remaining neighbours, and the diagonal of its inverse follows from the factor
/// alone by Takahashi's recurrence (`Σᵥᵤ = -Σₖ lₖᵥ·Σₖᵤ` and `Σᵥᵥ = 1/dᵥ - Σₖ lₖᵥ·Σₖᵥ` over the
/// neighbours `k` of `v` at its elimination, in reverse order of elimination). Fast when
/// elimination creates little fill (ladders, gauntlets, trees, small pools); `None` when it
/// would take more than `budget` updates (pools of random pairings, where the approximation
/// is good).
fn eliminated_variances(info: &Laplacian, anchor: Option<usize>, budget: f64) -> Option<Vec<f64>> {
    use std::cmp::Reverse;
    let n = info.len();
    let ground = info.ground;
    let mut adj: Vec<IndexMap> = vec![IndexMap::default(); n];
    for (e, &w) in info.edges.iter().zip(&info.weight) {
        let (a, b) = (e.a as usize, e.b as usize);
        if a != ground && b != ground {
            adj[a].insert(e.b, -w);
            adj[b].insert(e.a, -w);
        }
    }
    let mut pivot = info.degree.clone();
    let mut heap: std::collections::BinaryHeap<(Reverse<usize>, u32)> = (0..n)
        .filter(|&v| v != ground)
        .map(|v| (Reverse(adj[v].len()), v as u32))
        .collect();
    let mut eliminated = vec![false; n];
    eliminated[ground] = true;
    // The order of elimination, and each engine's column of the factor: (k, lₖᵥ), sorted.
    let mut order: Vec<u32> = Vec::with_capacity(n);
    let mut column: Vec<Vec<(u32, f64)>> = vec![Vec::new(); n];
    // The pivot dᵥ of each engine when it was eliminated.
    let mut d_of = vec![0.0; n];
    let mut work = 0.0;
    while let Some((Reverse(len), v)) = heap.pop() {
        let v = v as usize;
        if eliminated[v] || len != adj[v].len() {
            continue;
        }
        // The fewest neighbours left rarely shrinks: give up as soon as the engines left,
        // each with at least that many, would overrun the budget.
        let left = (n - 1 - order.len()) as f64;
        if work + left * (len * len) as f64 > budget {
            return None;
        }
        work += (len * len) as f64;
        eliminated[v] = true;
        let neighbours: Vec<(u32, f64)> = adj[v].drain().collect();
        let d = pivot[v];
        for (i, &(u, a_uv)) in neighbours.iter().enumerate() {
            let u = u as usize;
            adj[u].remove(&(v as u32));
            pivot[u] -= a_uv * a_uv / d;
            for &(w, a_wv) in &neighbours[i + 1..] {
                let fill = -a_uv * a_wv / d;
                *adj[u].entry(w).or_insert(0.0) += fill;
                *adj[w as usize].entry(u as u32).or_insert(0.0) += fill;
            }
        }
        for &(u, _) in &neighbours {
            heap.push((Reverse(adj[u as usize].len()), u));
        }
        let mut col: Vec<(u32, f64)> = neighbours.iter().map(|&(u, a)| (u, a / d)).collect();
        col.sort_unstable_by_key(|x| x.0);
        column[v] = col;
        d_of[v] = d;
        order.push(v as u32);
    }
    // Takahashi: Σ for the diagonal and for the pattern of the factor.
    let mut position = vec![usize::MAX; n];
    for (k, &v) in order.iter().enumerate() {
        position[v as usize] = k;
    }
    let mut sigma_diag = vec![0.0; n];
    let mut sigma_col: Vec<Vec<f64>> = vec![Vec::new(); n];
    for &v in order.iter().rev() {
        let v = v as usize;
        let col = &column[v];
        let sigma = |k: u32, u: u32| -> f64 {
            if k == u {
                return sigma_diag[k as usize];
            }
            let (first, other) = if position[k as usize] < position[u as usize] {
                (k as usize, u)
            } else {
                (u as usize, k)
            };
            let at = column[first]
                .binary_search_by_key(&other, |x| x.0)
                .expect("the neighbours of an eliminated engine form a clique");
            sigma_col[first][at]
        };
        let s_v: Vec<f64> = col
            .iter()
            .map(|&(u, _)| -col.iter().map(|&(k, l)| l * sigma(k, u)).sum::<f64>())
            .collect();
        sigma_diag[v] = 1.0 / d_of[v] - col.iter().zip(&s_v).map(|(&(_, l), s)| l * s).sum::<f64>();
        sigma_col[v] = s_v;
    }
    if anchor.is_some() {
        // Grounded at the anchor: the diagonal is the answer (0 for the anchor).
        return Some(sigma_diag);
    }
    // Mean-centred: with G the inverse grounded at g (zero row and column g) and x = G·1,
    // L⁺ᵢᵢ = Gᵢᵢ - 2xᵢ/n + Σx/n².
    let mut x = vec![1.0; n];
    x[ground] = 0.0;
    for &v in &order {
        let v = v as usize;
        for &(u, l) in &column[v] {
            x[u as usize] -= l * x[v];
        }
    }
    for &v in &order {
        x[v as usize] /= d_of[v as usize];
    }
    for &v in order.iter().rev() {
        let v = v as usize;
        let s: f64 = column[v].iter().map(|&(u, l)| l * x[u as usize]).sum();
        x[v] -= s;
    }
    let nf = n as f64;
    let mean = x.iter().sum::<f64>() / nf;
    Some(
        sigma_diag
            .iter()
            .zip(&x)
            .map(|(g, xi)| g - 2.0 * xi / nf + mean / nf)
            .collect(),
    )
}
/// The variance of engine `i`'s rating, solved exactly: `L⁺ᵢᵢ` (mean-centred) or `(L
/// grounded at the anchor)⁻¹ᵢᵢ`.
fn exact_variance(
    info: &Laplacian,
    anchor: Option<usize>,
    i: usize,
    rhs: &mut [f64],
    x: &mut [f64],
    s: &mut CgScratch,
) -> f64 {
    let n = info.len();
    match anchor {
        Some(a) if a == i => 0.0,
        Some(_) => {
            rhs.fill(0.0);
            rhs[i] = 1.0;
            info.solve(rhs, x, VARIANCE_RTOL, s);
            x[i]
        }
        None => {
            rhs.fill(-1.0 / n as f64);
            rhs[i] += 1.0;
            info.solve_centred(rhs, x, VARIANCE_RTOL, s);
            x[i]
        }
    }
}

/// Runs `f(i, scratch)` for the engines `items` on the available cores, each thread with its
/// own scratch vectors; returns the results in order.
fn parallel_map(n: usize, items: &[usize], f: impl Fn(usize, &mut Work) -> f64 + Sync) -> Vec<f64> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |t| t.get())
        .min(8)
        .min(items.len().div_ceil(16))
        .max(1);
    if threads == 1 {
        let mut work = Work::new(n);
        return items.iter().map(|&i| f(i, &mut work)).collect();
    }
    let mut out = vec![0.0; items.len()];
    let chunk = items.len().div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        for (part, results) in items.chunks(chunk).zip(out.chunks_mut(chunk)) {
            let f = &f;
            scope.spawn(move || {
                let mut work = Work::new(n);
                for (&i, r) in part.iter().zip(results.iter_mut()) {
                    *r = f(i, &mut work);
                }
            });
        }
    });
    out
}

/// Per-thread vectors of the variance solves.
struct Work {
    rhs: Vec<f64>,
    x: Vec<f64>,
    cg: CgScratch,
}

impl Work {
    fn new(n: usize) -> Self {
        Work {
            rhs: vec![0.0; n],
            x: vec![0.0; n],
            cg: CgScratch::new(n),
        }
    }
}

/// Exact variances by one conjugate-gradient solve per engine.
fn solved_variances(info: &Laplacian, anchor: Option<usize>) -> Vec<f64> {
    let n = info.len();
    let all: Vec<usize> = (0..n).collect();
    parallel_map(n, &all, |i, w| {
        exact_variance(info, anchor, i, &mut w.rhs, &mut w.x, &mut w.cg)
    })
}

/// The approximation of the module documentation: exact centring, the walk series for the
/// diagonal, calibrated on a sample of exact solves. Also returns the largest relative error
/// of an interval (the square root of a variance) on the sample after calibration.
fn approximate_variances(info: &Laplacian, anchor: Option<usize>) -> (Vec<f64>, f64) {
    let n = info.len();
    let mut s = CgScratch::new(n);
    let vol: f64 = info.degree.iter().sum();
    let nf = n as f64;
    // u = X·1, from L·u = 1 - n·D/vol with Σ Dᵢ·uᵢ = 0.
    let rhs: Vec<f64> = info.degree.iter().map(|&d| 1.0 - nf * d / vol).collect();
    let mut u = vec![0.0; n];
    info.solve(&rhs, &mut u, VARIANCE_RTOL, &mut s);
    let shift = dot(&info.degree, &u) / vol;
    for v in &mut u {
        *v -= shift;
    }
    let u_sum: f64 = u.iter().sum();
    let x_diag = walk_diagonal(info);
    // L⁺ᵢᵢ = Xᵢᵢ - 2uᵢ/n + Σu/n².
    let centred = |i: usize, xii: f64| xii - 2.0 * u[i] / nf + u_sum / (nf * nf);

    // Calibrate the diagonal of X on a sample of exact solves of L⁺ᵢᵢ.
    let sample: Vec<usize> = {
        let k = CALIBRATION_SAMPLE.min(n);
        let mut v: Vec<usize> = (0..k).map(|j| j * n / k).collect();
        v.dedup();
        v
    };
    let exact = parallel_map(n, &sample, |i, w| {
        exact_variance(info, None, i, &mut w.rhs, &mut w.x, &mut w.cg)
    });
    // Only the part of Xᵢᵢ beyond the first two terms (1/Dᵢ) is rescaled.
    let (mut num, mut den) = (0.0, 0.0);
    for (&i, &ex) in sample.iter().zip(&exact) {
        let base = 1.0 / info.degree[i] - 1.0 / vol;
        num += ex - centred(i, base);
        den += x_diag[i] - base;
    }
    let scale = if den > 0.0 && num > 0.0 {
        num / den
    } else {
        1.0
    };
    let mut var: Vec<f64> = (0..n)
        .map(|i| {
            let base = 1.0 / info.degree[i] - 1.0 / vol;
            centred(i, base + scale * (x_diag[i] - base))
        })
        .collect();
    let sample_error = sample
        .iter()
        .zip(&exact)
        .map(|(&i, &ex)| ((var[i] / ex).sqrt() - 1.0).abs())
        .fold(
            0.0f64,
            |m, e| if e.is_nan() { f64::INFINITY } else { m.max(e) },
        );
    if let Some(a) = anchor {
        // Grounded at the anchor: L⁺ᵢᵢ - 2L⁺ᵢₐ + L⁺ₐₐ, with the anchor's column exact.
        let mut b = vec![-1.0 / nf; n];
        b[a] += 1.0;
        let mut col = vec![0.0; n];
        info.solve_centred(&b, &mut col, VARIANCE_RTOL, &mut s);
        let aa = col[a];
        for (i, v) in var.iter_mut().enumerate() {
            *v = if i == a { 0.0 } else { *v - 2.0 * col[i] + aa };
        }
    }
    (var, sample_error)
}

/// `Xᵢᵢ = Σₖ (Pᵏᵢᵢ - πᵢ)/Dᵢ` for every engine, from the exact return probabilities of the
/// walk after 0 to 4 steps and a geometric tail.
fn walk_diagonal(info: &Laplacian) -> Vec<f64> {
    let n = info.len();
    let vol: f64 = info.degree.iter().sum();
    // Adjacency with transition probabilities.
    let mut start = vec![0usize; n + 1];
    for e in info.edges {
        start[e.a as usize + 1] += 1;
        start[e.b as usize + 1] += 1;
    }
    for i in 0..n {
        start[i + 1] += start[i];
    }
    let mut fill = start.clone();
    let mut adj = vec![(0u32, 0.0f64); start[n]];
    for (e, &w) in info.edges.iter().zip(&info.weight) {
        let (a, b) = (e.a as usize, e.b as usize);
        adj[fill[a]] = (e.b, w);
        fill[a] += 1;
        adj[fill[b]] = (e.a, w);
        fill[b] += 1;
    }
    let deg = &info.degree;
    // The two-step terms cost Σⱼ (opponents of j)² in all: skip them when a few engines
    // met very many others (a gauntlet), and leave the rest to the calibration sample.
    let cost: f64 = (0..n)
        .map(|j| ((start[j + 1] - start[j]) as f64).powi(2))
        .sum();
    let two_steps = cost <= WALK_TWO_STEP_WORK;
    // Two-step distribution from i, in a dense scratch row with a list of touched entries.
    let mut two = vec![0.0f64; n];
    let mut touched: Vec<u32> = Vec::new();
    (0..n)
        .map(|i| {
            let pi = deg[i] / vol;
            for &(j, w) in &adj[start[i]..start[i + 1]] {
                if !two_steps {
                    break;
                }
                let pij = w / deg[i];
                let j = j as usize;
                for &(k, w2) in &adj[start[j]..start[j + 1]] {
                    let k = k as usize;
                    if two[k] == 0.0 {
                        touched.push(k as u32);
                    }
                    two[k] += pij * w2 / deg[j];
                }
            }
            // r₂ = Σⱼ Pᵢⱼ²·Dᵢ/Dⱼ, r₃ = Σⱼ Pᵢⱼ·P²ᵢⱼ·Dᵢ/Dⱼ, r₄ = Σⱼ (P²ᵢⱼ)²·Dᵢ/Dⱼ.
            let (mut r2, mut r3) = (0.0, 0.0);
            for &(j, w) in &adj[start[i]..start[i + 1]] {
                let j = j as usize;
                let pij = w / deg[i];
                r2 += pij * pij * deg[i] / deg[j];
                r3 += pij * two[j] * deg[i] / deg[j];
            }
            let mut r4 = 0.0;
            for &k in &touched {
                let k = k as usize;
                r4 += two[k] * two[k] * deg[i] / deg[k];
                two[k] = 0.0;
            }
            touched.clear();
            if !two_steps {
                return (1.0 - 2.0 * pi + r2 - pi) / deg[i];
            }
            let terms = [1.0 - pi, -pi, r2 - pi, r3 - pi, r4 - pi];
            let head: f64 = terms.iter().sum();
            // The even terms decay roughly geometrically (two steps at a time): extend them,
            // and the odd ones likewise when they do.
            let tail = geometric_tail(terms[2], terms[4]) + geometric_tail(terms[1], terms[3]);
            (head + tail) / deg[i]
        })
        .collect()
}

/// The sum of the geometric continuation `t₂·q + t₂·q² + …` of two terms `t₁, t₂ = t₁·q` two
/// steps apart (0 unless both are positive and decaying).
fn geometric_tail(t1: f64, t2: f64) -> f64 {
    if t1 > 0.0 && t2 > 0.0 && t2 < t1 {
        let q = t2 / t1;
        t2 * q / (1.0 - q)
    } else {
        0.0
    }
}

/// The dense fit this module replaced: Newton with Gaussian elimination and explicit
/// inverses, cubic in the number of engines. The tests compare the sparse fit with it.
#[cfg(test)]
pub(crate) mod dense {
    use super::{ELO_PER_NAT, Edge, log_likelihood, merge, sigmoid};

    /// Ratings (Elo, mean-centred or anchored) and errors of one connected pool.
    pub fn fit(
        n: usize,
        pairings: &[super::PairingScore],
        anchor: Option<usize>,
    ) -> Vec<(f64, f64)> {
        let edges = merge(n, pairings);
        let (theta, var) = fit_group(n, &edges, anchor);
        let shift = match anchor {
            Some(k) => -theta[k],
            None => -theta.iter().sum::<f64>() / n as f64,
        };
        let z = crate::stats::elo::z95();
        theta
            .iter()
            .zip(&var)
            .map(|(t, v)| {
                (
                    (t + shift) * ELO_PER_NAT,
                    z * v.max(0.0).sqrt() * ELO_PER_NAT,
                )
            })
            .collect()
    }

    fn grad_info(theta: &[f64], edges: &[Edge]) -> (Vec<f64>, Vec<Vec<f64>>) {
        let n = theta.len();
        let mut g = vec![0.0; n];
        let mut info = vec![vec![0.0; n]; n];
        for e in edges {
            let (a, b) = (e.a as usize, e.b as usize);
            let p = sigmoid(theta[a] - theta[b]);
            let r = e.points - e.games * p;
            g[a] += r;
            g[b] -= r;
            let w = e.games * p * (1.0 - p);
            info[a][a] += w;
            info[b][b] += w;
            info[a][b] -= w;
            info[b][a] -= w;
        }
        (g, info)
    }

    fn fit_group(n: usize, edges: &[Edge], anchor: Option<usize>) -> (Vec<f64>, Vec<f64>) {
        let mut theta = vec![0.0; n];
        let free = n - 1;
        let mut ll = log_likelihood(&theta, edges);
        for _ in 0..200 {
            let (g, info) = grad_info(&theta, edges);
            let a: Vec<Vec<f64>> = info[..free].iter().map(|r| r[..free].to_vec()).collect();
            let Some(step) = solve(a, g[..free].to_vec()) else {
                break;
            };
            let mut t = 1.0;
            let mut improved = false;
            for _ in 0..60 {
                let cand: Vec<f64> = (0..n)
                    .map(|i| {
                        if i < free {
                            theta[i] + t * step[i]
                        } else {
                            0.0
                        }
                    })
                    .collect();
                let cll = log_likelihood(&cand, edges);
                if cll >= ll - 1e-12 * ll.abs().max(1.0) {
                    theta = cand;
                    ll = cll;
                    improved = true;
                    break;
                }
                t *= 0.5;
            }
            let size = step.iter().fold(0.0f64, |m, x| m.max(x.abs())) * t;
            if !improved || size < 1e-12 {
                break;
            }
        }
        let (_, info) = grad_info(&theta, edges);
        let var = match anchor {
            Some(k) => {
                let keep: Vec<usize> = (0..n).filter(|&i| i != k).collect();
                let reduced: Vec<Vec<f64>> = keep
                    .iter()
                    .map(|&i| keep.iter().map(|&j| info[i][j]).collect())
                    .collect();
                let inv = invert(reduced).expect("a connected pool");
                let mut var = vec![0.0; n];
                for (r, &i) in keep.iter().enumerate() {
                    var[i] = inv[r][r];
                }
                var
            }
            None => {
                // Pseudo-inverse of a connected Laplacian: (L + J/n)⁻¹ - J/n.
                let j = 1.0 / n as f64;
                let shifted: Vec<Vec<f64>> = info
                    .iter()
                    .map(|r| r.iter().map(|x| x + j).collect())
                    .collect();
                let m = invert(shifted).expect("a connected pool");
                (0..n).map(|i| m[i][i] - j).collect()
            }
        };
        (theta, var)
    }

    fn solve(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Option<Vec<f64>> {
        let n = b.len();
        for col in 0..n {
            let piv = (col..n).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
            if a[piv][col].abs() < 1e-300 {
                return None;
            }
            a.swap(col, piv);
            b.swap(col, piv);
            for row in col + 1..n {
                let f = a[row][col] / a[col][col];
                if f != 0.0 {
                    let (upper, lower) = a.split_at_mut(row);
                    for (x, p) in lower[0][col..].iter_mut().zip(&upper[col][col..]) {
                        *x -= f * p;
                    }
                    b[row] -= f * b[col];
                }
            }
        }
        let mut x = vec![0.0; n];
        for row in (0..n).rev() {
            let s: f64 = (row + 1..n).map(|k| a[row][k] * x[k]).sum();
            x[row] = (b[row] - s) / a[row][row];
        }
        Some(x)
    }

    fn invert(mut a: Vec<Vec<f64>>) -> Option<Vec<Vec<f64>>> {
        let n = a.len();
        let mut inv: Vec<Vec<f64>> = (0..n)
            .map(|r| (0..n).map(|c| if r == c { 1.0 } else { 0.0 }).collect())
            .collect();
        for col in 0..n {
            let piv = (col..n).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
            if a[piv][col].abs() < 1e-300 {
                return None;
            }
            a.swap(col, piv);
            inv.swap(col, piv);
            let d = a[col][col];
            for x in a[col].iter_mut() {
                *x /= d;
            }
            for x in inv[col].iter_mut() {
                *x /= d;
            }
            let (pivot_a, pivot_inv) = (a[col].clone(), inv[col].clone());
            for row in 0..n {
                let f = a[row][col];
                if row == col || f == 0.0 {
                    continue;
                }
                for (x, p) in a[row].iter_mut().zip(&pivot_a) {
                    *x -= f * p;
                }
                for (x, p) in inv[row].iter_mut().zip(&pivot_inv) {
                    *x -= f * p;
                }
            }
        }
        Some(inv)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;

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
    pub(crate) fn random_pool(
        n: usize,
        rounds: usize,
        spread: f64,
        seed: u64,
    ) -> Vec<PairingScore> {
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
}
