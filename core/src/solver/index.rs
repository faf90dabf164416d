//! A perfect index of pit configurations: the combinatorial number system.
//!
//! A configuration is the seeds of both rows, the side to move's pits first, as `m = 2 *
//! pits` numbers. With `S_j` the seeds in parts `0..=j`, its rank is
//!
//! ```text
//! rank = sum over j in 0..m of C(S_j + j, j + 1)
//! ```
//!
//! a bijection between all configurations and the natural numbers in which the
//! configurations with at most `k` seeds are exactly the ranks `0..C(k + m, m)`, and those
//! with exactly `n` seeds the ranks `C(n + m - 1, m)..C(n + m, m)`. So one array indexed by
//! rank holds every position with at most `k` seeds with no gaps, a table for `k` begins
//! with the table for every smaller `k`, and the rank is also an exact transposition key
//! while `C(total + m, m)` fits in 64 bits (up to 6 pits and 100 seeds, for instance).

/// Binomial coefficients `C(a, b)` for `b <= parts` and `a <= max_a`, saturating at
/// `u64::MAX`, arranged for ranking: `rows[j][a] = C(a, j + 1)`.
#[derive(Clone, Debug)]
pub struct Indexer {
    parts: usize,
    max_seeds: u32,
    /// `rows[j * width + a] = C(a, j + 1)`.
    rows: Vec<u64>,
    width: usize,
}

/// `C(a, b)`, saturating at `u64::MAX`.
pub fn binomial(a: u64, b: u64) -> u64 {
    if b > a {
        return 0;
    }
    let b = b.min(a - b);
    let mut c: u128 = 1;
    for i in 0..b {
        c = c * (a - i) as u128 / (i + 1) as u128;
        if c > u64::MAX as u128 {
            return u64::MAX;
        }
    }
    c as u64
}

impl Indexer {
    /// An indexer for configurations of `parts` numbers holding at most `max_seeds` seeds
    /// in all. `None` when their number does not fit in 64 bits.
    pub fn new(parts: usize, max_seeds: u32) -> Option<Indexer> {
        assert!(parts >= 1, "a configuration has at least one part");
        if binomial(max_seeds as u64 + parts as u64, parts as u64) == u64::MAX {
            return None;
        }
        let width = max_seeds as usize + parts + 1;
        let mut rows = vec![0u64; parts * width];
        for j in 0..parts {
            for a in 0..width {
                rows[j * width + a] = binomial(a as u64, j as u64 + 1);
            }
        }
        Some(Indexer {
            parts,
            max_seeds,
            rows,
            width,
        })
    }

    pub fn parts(&self) -> usize {
        self.parts
    }

    /// The most seeds a configuration may hold.
    pub fn max_seeds(&self) -> u32 {
        self.max_seeds
    }

    /// How many configurations hold at most `seeds` seeds: the ranks `0..count(seeds)`.
    pub fn count(&self, seeds: u32) -> u64 {
        binomial(seeds as u64 + self.parts as u64, self.parts as u64)
    }

    /// The rank of a configuration (`parts` numbers, at most `max_seeds` in all).
    #[inline]
    pub fn rank<T: Copy + Into<u64>>(&self, parts: &[T]) -> u64 {
        debug_assert_eq!(parts.len(), self.parts);
        let mut sum = 0usize;
        let mut rank = 0u64;
        for (j, &x) in parts.iter().enumerate() {
            sum += x.into() as usize;
            rank += self.rows[j * self.width + sum + j];
        }
        rank
    }

    /// The rank of `first` followed by `second` (together `parts` numbers).
    #[inline]
    pub fn rank2<T: Copy + Into<u64>>(&self, first: &[T], second: &[T]) -> u64 {
        debug_assert_eq!(first.len() + second.len(), self.parts);
        let mut sum = 0usize;
        let mut rank = 0u64;
        for (j, &x) in first.iter().chain(second).enumerate() {
            sum += x.into() as usize;
            rank += self.rows[j * self.width + sum + j];
        }
        rank
    }

    /// The configuration of a rank (`< count(max_seeds)`), written into `out`.
    pub fn unrank(&self, mut rank: u64, out: &mut [u8]) {
        debug_assert_eq!(out.len(), self.parts);
        let m = self.parts;
        // The prefix sums, from the last (the total) down.
        let mut upper = self.max_seeds as usize;
        let mut sums = [0usize; 64];
        assert!(m <= sums.len(), "at most 64 parts");
        for j in (0..m).rev() {
            // The largest s <= upper with C(s + j, j + 1) <= rank.
            let mut s = upper;
            while self.rows[j * self.width + s + j] > rank {
                s -= 1;
            }
            rank -= self.rows[j * self.width + s + j];
            sums[j] = s;
            upper = s;
        }
        let mut prev = 0;
        for j in 0..m {
            out[j] = (sums[j] - prev) as u8;
            prev = sums[j];
        }
    }
}

/// Steps `parts` to the configuration of the next rank with the same total, in place.
/// Returns `false` (leaving `parts` unchanged) after the last one.
#[inline]
pub fn next_same_total(parts: &mut [u8]) -> bool {
    // The smallest j with parts[j + 1] > 0: everything up to j, plus one seed taken from
    // j + 1, moves into j.
    let m = parts.len();
    let mut sum = 0u8;
    for j in 0..m.saturating_sub(1) {
        sum += parts[j];
        if parts[j + 1] > 0 {
            for p in parts[..j].iter_mut() {
                *p = 0;
            }
            parts[j] = sum + 1;
            parts[j + 1] -= 1;
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every configuration of `parts` numbers with exactly `total` seeds, by brute force.
    fn all(parts: usize, total: u32) -> Vec<Vec<u8>> {
        if parts == 1 {
            return vec![vec![total as u8]];
        }
        let mut v = Vec::new();
        for first in 0..=total {
            for mut rest in all(parts - 1, total - first) {
                rest.insert(0, first as u8);
                v.push(rest);
            }
        }
        v
    }

    #[test]
    fn binomials_are_exact_and_saturate() {
        assert_eq!(binomial(5, 2), 10);
        assert_eq!(binomial(36, 12), 1_251_677_700);
        assert_eq!(binomial(3, 5), 0);
        assert_eq!(binomial(200, 100), u64::MAX);
    }

    #[test]
    fn ranks_are_a_bijection_onto_a_prefix_ordered_by_total() {
        for (parts, max) in [(1, 5), (2, 6), (4, 5), (6, 4)] {
            let ix = Indexer::new(parts, max).unwrap();
            let mut seen = vec![false; ix.count(max) as usize];
            for total in 0..=max {
                let lo = if total == 0 { 0 } else { ix.count(total - 1) };
                let hi = ix.count(total);
                let configs = all(parts, total);
                assert_eq!(configs.len() as u64, hi - lo);
                for c in configs {
                    let r = ix.rank(&c);
                    assert!((lo..hi).contains(&r), "{c:?} rank {r}");
                    assert!(!seen[r as usize], "{c:?} rank {r} twice");
                    seen[r as usize] = true;
                    let mut back = vec![0u8; parts];
                    ix.unrank(r, &mut back);
                    assert_eq!(back, c);
                    let (a, b) = c.split_at(parts / 2);
                    assert_eq!(ix.rank2(a, b), r);
                }
            }
            assert!(seen.iter().all(|&s| s));
        }
    }

    #[test]
    fn stepping_visits_the_ranks_in_order() {
        let ix = Indexer::new(5, 6).unwrap();
        for total in 0..=6 {
            let first = if total == 0 { 0 } else { ix.count(total - 1) };
            let mut c = vec![0u8; 5];
            ix.unrank(first, &mut c);
            let mut expected = first;
            loop {
                assert_eq!(ix.rank(&c), expected);
                expected += 1;
                if !next_same_total(&mut c) {
                    break;
                }
            }
            assert_eq!(expected, ix.count(total));
        }
    }

    #[test]
    fn sizes_that_do_not_fit_are_refused() {
        assert!(Indexer::new(12, 100).is_some());
        assert!(Indexer::new(32, 3200).is_none());
    }
}
