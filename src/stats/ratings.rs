//! Joint ratings of many engines: a Bradley-Terry maximum-likelihood fit on the logistic Elo
//! scale.
//!
//! Model: engine `i` scores against engine `j` with expectation
//! `p = 1/(1 + 10^((rⱼ - rᵢ)/400))`; every game is a Bernoulli trial in which a draw counts as
//! half a win and half a loss. The ratings maximise the log-likelihood
//! `Σ sᵢⱼ·ln p + (nᵢⱼ - sᵢⱼ)·ln(1 - p)` over all pairings (Newton's method with step halving;
//! the likelihood is concave).
//!
//! - **Scale.** Only differences are determined. Each group of engines that are connected
//!   by games is mean-centred (its ratings sum to zero), unless it contains the anchor engine,
//!   which is then fixed at the anchor's value.
//! - **Intervals.** 95% intervals from the observed Fisher information `I` (the negative
//!   Hessian of the log-likelihood at the maximum): for a mean-centred group the covariance
//!   is the pseudo-inverse of `I` (the inverse under the sum-zero constraint), for an anchored
//!   group the inverse of `I` with the anchor's row and column removed (the anchor's error is
//!   0). The error is `1.96·√var` in Elo.
//! - **Perfect scores.** The maximum likelihood is infinite when some part of a group never
//!   scored a point against the rest (for example an engine that won or lost all its games).
//!   Then, in that group only, every pairing that was played receives one virtual draw
//!   (the prior of BayesElo-style ratings), which makes every rating finite; the group is
//!   marked `regularized`. Groups where the maximum exists are fitted on the games alone.
//! - **Disconnected pools.** Engines that are not linked by any chain of games form
//!   separate groups; ratings of different groups are not comparable, and the result lists
//!   the groups.

use std::collections::HashMap;

const ELO_PER_NAT: f64 = 400.0 / std::f64::consts::LN_10;

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

/// Fits ratings for `engines` engines from their pairings' scores. `anchor` fixes one
/// engine's rating; otherwise (and in groups without the anchor) ratings are mean-centred.
pub fn fit(engines: usize, pairings: &[PairingScore], anchor: Option<(usize, f64)>) -> Ratings {
    // Merge pairings into one entry per unordered pair (a < b).
    let mut merged: HashMap<(usize, usize), (f64, f64)> = HashMap::new();
    for p in pairings {
        if p.a == p.b || p.games <= 0.0 {
            continue;
        }
        let (key, pts) = if p.a < p.b {
            ((p.a, p.b), p.points)
        } else {
            ((p.b, p.a), p.games - p.points)
        };
        let e = merged.entry(key).or_default();
        e.0 += p.games;
        e.1 += pts;
    }
    let mut edges: Vec<(usize, usize, f64, f64)> = merged
        .into_iter()
        .map(|((a, b), (n, s))| (a, b, n, s))
        .collect();
    edges.sort_by_key(|x| (x.0, x.1));

    let groups = components(engines, &edges);
    let mut ratings = vec![
        Rating {
            elo: 0.0,
            error: f64::NAN,
            group: 0,
        };
        engines
    ];
    let mut out_groups = Vec::new();
    for (gi, members) in groups.into_iter().enumerate() {
        let local: HashMap<usize, usize> =
            members.iter().enumerate().map(|(k, &e)| (e, k)).collect();
        let mut group_edges: Vec<(usize, usize, f64, f64)> = edges
            .iter()
            .filter(|e| local.contains_key(&e.0))
            .map(|&(a, b, n, s)| (local[&a], local[&b], n, s))
            .collect();
        let regularized = !strongly_connected(members.len(), &group_edges);
        if regularized {
            for e in &mut group_edges {
                e.2 += 1.0;
                e.3 += 0.5;
            }
        }
        let anchor_local = anchor.and_then(|(e, v)| local.get(&e).map(|&k| (k, v)));
        let (theta, var) = fit_group(members.len(), &group_edges, anchor_local.map(|a| a.0));
        let shift = match anchor_local {
            Some((k, v)) => v - theta[k] * ELO_PER_NAT,
            None => -theta.iter().sum::<f64>() / theta.len() as f64 * ELO_PER_NAT,
        };
        for (k, &e) in members.iter().enumerate() {
            let error = if members.len() == 1 {
                f64::NAN
            } else {
                super::elo::z95() * var[k].max(0.0).sqrt() * ELO_PER_NAT
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

/// Connected components (sorted members; components in order of their smallest member).
fn components(n: usize, edges: &[(usize, usize, f64, f64)]) -> Vec<Vec<usize>> {
    let mut parent: Vec<usize> = (0..n).collect();
    fn find(p: &mut [usize], mut x: usize) -> usize {
        while p[x] != x {
            p[x] = p[p[x]];
            x = p[x];
        }
        x
    }
    for &(a, b, _, _) in edges {
        let (ra, rb) = (find(&mut parent, a), find(&mut parent, b));
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
fn strongly_connected(n: usize, edges: &[(usize, usize, f64, f64)]) -> bool {
    if n <= 1 {
        return true;
    }
    let mut fwd = vec![Vec::new(); n];
    let mut rev = vec![Vec::new(); n];
    for &(a, b, games, s) in edges {
        if s > 0.0 {
            // a scored against b
            fwd[a].push(b);
            rev[b].push(a);
        }
        if games - s > 0.0 {
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

fn log_likelihood(theta: &[f64], edges: &[(usize, usize, f64, f64)]) -> f64 {
    edges
        .iter()
        .map(|&(a, b, n, s)| {
            let d = theta[a] - theta[b];
            // ln σ(d) = -ln(1 + e^{-d}), computed stably.
            let ln_p = -softplus(-d);
            let ln_q = -softplus(d);
            s * ln_p + (n - s) * ln_q
        })
        .sum()
}

fn softplus(x: f64) -> f64 {
    if x > 30.0 {
        x + (-x).exp().ln_1p()
    } else {
        x.exp().ln_1p()
    }
}

/// Gradient and Fisher information (negative Hessian) of the log-likelihood.
fn grad_info(theta: &[f64], edges: &[(usize, usize, f64, f64)]) -> (Vec<f64>, Vec<Vec<f64>>) {
    let n = theta.len();
    let mut g = vec![0.0; n];
    let mut info = vec![vec![0.0; n]; n];
    for &(a, b, games, s) in edges {
        let p = sigmoid(theta[a] - theta[b]);
        let r = s - games * p;
        g[a] += r;
        g[b] -= r;
        let w = games * p * (1.0 - p);
        info[a][a] += w;
        info[b][b] += w;
        info[a][b] -= w;
        info[b][a] -= w;
    }
    (g, info)
}

/// Fits one connected group (local indices) and returns natural-unit ratings (arbitrary
/// offset) and each rating's variance under the group's constraint.
fn fit_group(
    n: usize,
    edges: &[(usize, usize, f64, f64)],
    anchor: Option<usize>,
) -> (Vec<f64>, Vec<f64>) {
    let mut theta = vec![0.0; n];
    if n == 1 {
        return (theta, vec![0.0]);
    }
    // Newton on all but the last engine (fixed at 0).
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
            let inv = invert(reduced);
            let mut var = vec![0.0; n];
            for (r, &i) in keep.iter().enumerate() {
                var[i] = inv.as_ref().map_or(f64::NAN, |m| m[r][r]);
            }
            var
        }
        None => {
            // Pseudo-inverse of a connected Laplacian-like matrix: (I + J/n)⁻¹ - J/n.
            let j = 1.0 / n as f64;
            let shifted: Vec<Vec<f64>> = info
                .iter()
                .map(|r| r.iter().map(|x| x + j).collect())
                .collect();
            match invert(shifted) {
                Some(m) => (0..n).map(|i| m[i][i] - j).collect(),
                None => vec![f64::NAN; n],
            }
        }
    };
    (theta, var)
}

/// Solves `a·x = b` by Gaussian elimination with partial pivoting.
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

/// Inverts a square matrix (Gauss-Jordan elimination with partial pivoting).
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

#[cfg(test)]
mod tests {
    use super::*;

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
        // The anchored error of A is wider than A's mean-centred error is not guaranteed,
        // but it is finite and positive.
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
        // Two engines, one won everything: one virtual draw gives 10.5 / 11.
        let r = fit(2, &[pairing(0, 1, 10, 0, 0)], None);
        let diff = r.ratings[0].elo - r.ratings[1].elo;
        assert!((diff - 400.0 * 21f64.log10()).abs() < 1e-6, "{diff}");
    }

    #[test]
    fn many_engines_fit_quickly_and_recover_strengths() {
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
}
