//! The Fisher information of a group as a sparse weighted Laplacian, and the conjugate-
//! gradient solves on it that the fit and the intervals use.

use super::*;

pub(super) fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

pub(super) fn softplus(x: f64) -> f64 {
    if x > 30.0 {
        x + (-x).exp().ln_1p()
    } else {
        x.exp().ln_1p()
    }
}

pub(super) fn log_likelihood(theta: &[f64], edges: &[Edge]) -> f64 {
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
pub(super) struct Laplacian<'a> {
    pub(super) edges: &'a [Edge],
    /// The weight `nᵢⱼ·p·(1-p)` of each edge.
    pub(super) weight: Vec<f64>,
    /// `Dᵢ = Σⱼ wᵢⱼ`.
    pub(super) degree: Vec<f64>,
    /// `1/Dᵢ`, 0 at the ground (the Jacobi preconditioner).
    pub(super) inv_degree: Vec<f64>,
    pub(super) ground: usize,
}

/// Scratch vectors of one conjugate-gradient solver.
pub(super) struct CgScratch {
    pub(super) r: Vec<f64>,
    pub(super) z: Vec<f64>,
    pub(super) p: Vec<f64>,
    pub(super) ap: Vec<f64>,
}

impl CgScratch {
    pub(super) fn new(n: usize) -> Self {
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
    pub(super) fn at(theta: &[f64], edges: &'a [Edge], ground: Option<usize>) -> Self {
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

    pub(super) fn len(&self) -> usize {
        self.degree.len()
    }

    /// `y = L·x` on the engines other than the ground (`x` is 0 at the ground, and so is
    /// `y`).
    pub(super) fn apply(&self, x: &[f64], y: &mut [f64]) {
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
    pub(super) fn solve(&self, b: &[f64], x: &mut [f64], rtol: f64, s: &mut CgScratch) -> usize {
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
    pub(super) fn solve_centred(&self, b: &[f64], x: &mut [f64], rtol: f64, s: &mut CgScratch) {
        self.solve(b, x, rtol, s);
        let mean = x.iter().sum::<f64>() / x.len() as f64;
        for v in x.iter_mut() {
            *v -= mean;
        }
    }
}

/// `z = M⁻¹·r` for the Jacobi preconditioner `M⁻¹ = diag(inv_degree)`.
pub(super) fn precondition(r: &[f64], inv_degree: &[f64], z: &mut [f64]) {
    for ((z, r), d) in z.iter_mut().zip(r).zip(inv_degree) {
        *z = r * d;
    }
}

pub(super) fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}
