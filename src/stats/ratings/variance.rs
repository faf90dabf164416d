//! The variances behind the intervals: by sparse elimination, by one solve per engine, or
//! approximated (see the module documentation of [`super`]).

use super::laplacian::*;
use super::*;

/// A hasher for engine indices (a multiplicative hash: fast, and the high bits that the
/// hash table uses are well mixed).
#[derive(Clone, Copy, Default)]
pub(super) struct IndexHasher(u64);

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

pub(super) type IndexMap =
    std::collections::HashMap<u32, f64, std::hash::BuildHasherDefault<IndexHasher>>;

/// Exact variances by sparse elimination: `L` grounded (at the anchor, or at the engine with
/// the most weight) is factored as `L = U·D·Uᵀ` eliminating at each step an engine with the
/// fewest remaining neighbours, and the diagonal of its inverse follows from the factor
/// alone by Takahashi's recurrence (`Σᵥᵤ = -Σₖ lₖᵥ·Σₖᵤ` and `Σᵥᵥ = 1/dᵥ - Σₖ lₖᵥ·Σₖᵥ` over the
/// neighbours `k` of `v` at its elimination, in reverse order of elimination). Fast when
/// elimination creates little fill (ladders, gauntlets, trees, small pools); `None` when it
/// would take more than `budget` updates (pools of random pairings, where the approximation
/// is good).
pub(super) fn eliminated_variances(
    info: &Laplacian,
    anchor: Option<usize>,
    budget: f64,
) -> Option<Vec<f64>> {
    let factor = Factor::eliminate(info, budget)?;
    let sigma_diag = factor.inverse_diagonal();
    if anchor.is_some() {
        // Grounded at the anchor: the diagonal is the answer (0 for the anchor).
        return Some(sigma_diag);
    }
    Some(factor.mean_centred(sigma_diag))
}

/// `L` grounded at `info.ground`, factored as `U·D·Uᵀ` by elimination.
struct Factor {
    n: usize,
    ground: usize,
    /// The order of elimination.
    order: Vec<u32>,
    /// Each engine's column of the factor: (k, lₖᵥ), sorted by k.
    column: Vec<Vec<(u32, f64)>>,
    /// The pivot dᵥ of each engine when it was eliminated.
    d_of: Vec<f64>,
}

impl Factor {
    /// Eliminates the engine with the fewest neighbours left at each step; `None` once the
    /// updates would exceed `budget`.
    fn eliminate(info: &Laplacian, budget: f64) -> Option<Factor> {
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
        let mut f = Factor {
            n,
            ground,
            order: Vec::with_capacity(n),
            column: vec![Vec::new(); n],
            d_of: vec![0.0; n],
        };
        let mut work = 0.0;
        while let Some((Reverse(len), v)) = heap.pop() {
            let v = v as usize;
            if eliminated[v] || len != adj[v].len() {
                continue;
            }
            // The fewest neighbours left rarely shrinks: give up as soon as the engines
            // left, each with at least that many, would overrun the budget.
            let left = (n - 1 - f.order.len()) as f64;
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
            f.column[v] = col;
            f.d_of[v] = d;
            f.order.push(v as u32);
        }
        Some(f)
    }

    /// Takahashi: Σ for the diagonal and for the pattern of the factor; the diagonal.
    fn inverse_diagonal(&self) -> Vec<f64> {
        let (n, column) = (self.n, &self.column);
        let mut position = vec![usize::MAX; n];
        for (k, &v) in self.order.iter().enumerate() {
            position[v as usize] = k;
        }
        let mut sigma_diag = vec![0.0; n];
        let mut sigma_col: Vec<Vec<f64>> = vec![Vec::new(); n];
        for &v in self.order.iter().rev() {
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
            sigma_diag[v] =
                1.0 / self.d_of[v] - col.iter().zip(&s_v).map(|(&(_, l), s)| l * s).sum::<f64>();
            sigma_col[v] = s_v;
        }
        sigma_diag
    }

    /// The mean-centred diagonal from the grounded one: with G the inverse grounded at g
    /// (zero row and column g) and x = G·1, L⁺ᵢᵢ = Gᵢᵢ - 2xᵢ/n + Σx/n².
    fn mean_centred(&self, sigma_diag: Vec<f64>) -> Vec<f64> {
        let (n, column) = (self.n, &self.column);
        let mut x = vec![1.0; n];
        x[self.ground] = 0.0;
        for &v in &self.order {
            let v = v as usize;
            for &(u, l) in &column[v] {
                x[u as usize] -= l * x[v];
            }
        }
        for &v in &self.order {
            x[v as usize] /= self.d_of[v as usize];
        }
        for &v in self.order.iter().rev() {
            let v = v as usize;
            let s: f64 = column[v].iter().map(|&(u, l)| l * x[u as usize]).sum();
            x[v] -= s;
        }
        let nf = n as f64;
        let mean = x.iter().sum::<f64>() / nf;
        sigma_diag
            .iter()
            .zip(&x)
            .map(|(g, xi)| g - 2.0 * xi / nf + mean / nf)
            .collect()
    }
}

/// The variance of engine `i`'s rating, solved exactly: `L⁺ᵢᵢ` (mean-centred) or `(L
/// grounded at the anchor)⁻¹ᵢᵢ`.
pub(super) fn exact_variance(
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
pub(super) fn parallel_map(
    n: usize,
    items: &[usize],
    f: impl Fn(usize, &mut Work) -> f64 + Sync,
) -> Vec<f64> {
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
pub(super) struct Work {
    pub(super) rhs: Vec<f64>,
    pub(super) x: Vec<f64>,
    pub(super) cg: CgScratch,
}

impl Work {
    pub(super) fn new(n: usize) -> Self {
        Work {
            rhs: vec![0.0; n],
            x: vec![0.0; n],
            cg: CgScratch::new(n),
        }
    }
}

/// Exact variances by one conjugate-gradient solve per engine.
pub(super) fn solved_variances(info: &Laplacian, anchor: Option<usize>) -> Vec<f64> {
    let n = info.len();
    let all: Vec<usize> = (0..n).collect();
    parallel_map(n, &all, |i, w| {
        exact_variance(info, anchor, i, &mut w.rhs, &mut w.x, &mut w.cg)
    })
}

/// The approximation of the module documentation: exact centring, the walk series for the
/// diagonal, calibrated on a sample of exact solves. Also returns the largest relative error
/// of an interval (the square root of a variance) on the sample after calibration.
pub(super) fn approximate_variances(info: &Laplacian, anchor: Option<usize>) -> (Vec<f64>, f64) {
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
pub(super) fn walk_diagonal(info: &Laplacian) -> Vec<f64> {
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
pub(super) fn geometric_tail(t1: f64, t2: f64) -> f64 {
    if t1 > 0.0 && t2 > 0.0 && t2 < t1 {
        let q = t2 / t1;
        t2 * q / (1.0 - q)
    } else {
        0.0
    }
}
