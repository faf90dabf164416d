//! The dense fit this module replaced: Newton with Gaussian elimination and explicit
//! inverses, cubic in the number of engines. The tests compare the sparse fit with it.
use super::{ELO_PER_NAT, Edge, log_likelihood, merge, sigmoid};

/// Ratings (Elo, mean-centred or anchored) and errors of one connected pool.
pub(crate) fn fit(
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
