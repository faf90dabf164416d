//! The solver's transposition table: a fixed-size array of 4-entry buckets holding bounds on
//! the future gain of a pit configuration (see the module documentation of [`super`]).

/// One stored result: bounds `lo..=hi` on the future gain of the position with this key,
/// the best move found (a pit, 0 for none) and a rough measure of the work it took.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Entry {
    pub key: u64,
    pub lo: i16,
    pub hi: i16,
    pub mv: u8,
    /// log2 of the nodes the search below this position visited: deeper work is kept.
    pub work: u8,
}

const BUCKET: usize = 4;

/// A bounded transposition table. Key 0 marks an empty slot (no position that is still
/// being played packs or hashes to 0, see `Solver::key`).
pub(super) struct Table {
    entries: Vec<Entry>,
    mask: usize,
}

impl Table {
    /// A table using at most `mb` mebibytes (at least one bucket).
    pub fn new(mb: usize) -> Table {
        let bytes = mb.max(1) * 1024 * 1024;
        let buckets = (bytes / (BUCKET * std::mem::size_of::<Entry>()))
            .max(1)
            .next_power_of_two();
        // Round down to stay within the limit.
        let buckets = if buckets * BUCKET * std::mem::size_of::<Entry>() > bytes && buckets > 1 {
            buckets / 2
        } else {
            buckets
        };
        Table {
            entries: vec![Entry::default(); buckets * BUCKET],
            mask: buckets - 1,
        }
    }

    pub fn clear(&mut self) {
        self.entries.fill(Entry::default());
    }

    #[inline]
    fn bucket(&self, key: u64) -> usize {
        // A final mix so that packed keys spread over the buckets.
        let mut h = key;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^= h >> 33;
        (h as usize & self.mask) * BUCKET
    }

    #[inline]
    pub fn probe(&self, key: u64) -> Option<Entry> {
        let b = self.bucket(key);
        self.entries[b..b + BUCKET]
            .iter()
            .find(|e| e.key == key)
            .copied()
    }

    /// Stores bounds for `key`, narrowing what is already known about it; otherwise
    /// replaces an empty slot or the slot that cost the least work.
    #[inline]
    pub fn store(&mut self, key: u64, lo: i16, hi: i16, mv: u8, work: u8) {
        let b = self.bucket(key);
        let bucket = &mut self.entries[b..b + BUCKET];
        if let Some(e) = bucket.iter_mut().find(|e| e.key == key) {
            e.lo = e.lo.max(lo);
            e.hi = e.hi.min(hi);
            if e.lo > e.hi {
                // Cannot happen with exact bounds; keep the newest result if it does.
                e.lo = lo;
                e.hi = hi;
            }
            if mv != 0 {
                e.mv = mv;
            }
            e.work = e.work.max(work);
            return;
        }
        let slot = bucket
            .iter_mut()
            .min_by_key(|e| if e.key == 0 { 0 } else { e.work as u16 + 1 })
            .expect("bucket is not empty");
        *slot = Entry {
            key,
            lo,
            hi,
            mv,
            work,
        };
    }

    /// How many slots are in use, per mille (for reports).
    pub fn fill_permille(&self) -> u32 {
        let sample = self.entries.len().min(4000);
        let used = self.entries[..sample].iter().filter(|e| e.key != 0).count();
        (used * 1000 / sample.max(1)) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_is_bounded_and_bounds_narrow() {
        let mut t = Table::new(1);
        assert!(t.entries.len() * std::mem::size_of::<Entry>() <= 1024 * 1024);
        assert_eq!(t.probe(42), None);
        t.store(42, -5, 9, 3, 1);
        t.store(42, 0, 12, 0, 1);
        let e = t.probe(42).unwrap();
        assert_eq!((e.lo, e.hi, e.mv), (0, 9, 3));
        t.clear();
        assert_eq!(t.probe(42), None);
    }

    #[test]
    fn a_full_bucket_keeps_the_costliest_entries() {
        let mut t = Table::new(1);
        t.mask = 0; // one bucket
        for k in 1..=4u64 {
            t.store(k, 0, 0, 1, 10 + k as u8);
        }
        t.store(99, 0, 0, 1, 5);
        assert!(t.probe(1).is_none());
        assert!(t.probe(99).is_some());
        assert!(t.probe(4).is_some());
    }
}
