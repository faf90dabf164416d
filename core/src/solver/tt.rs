//! The solver's transposition table: a fixed-size array of 4-entry buckets holding bounds on
//! the future gain of a pit configuration (see the module documentation of [`super`]),
//! shared by the threads of a search without locks.
//!
//! Each entry is two 64-bit words, the data and the key XOR the data, written one after
//! the other: a reader that sees words from two different writes finds a key that does not
//! match and treats the entry as absent. Every entry holds bounds proved by a finished
//! search, so whatever a reader sees is true.

use std::sync::atomic::{AtomicU64, Ordering};

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

impl Entry {
    fn data(&self) -> u64 {
        (self.lo as u16 as u64)
            | (self.hi as u16 as u64) << 16
            | (self.mv as u64) << 32
            | (self.work as u64) << 40
            | 1 << 48
    }

    fn from_words(check: u64, data: u64) -> Option<Entry> {
        if data == 0 {
            return None;
        }
        Some(Entry {
            key: check ^ data,
            lo: data as u16 as i16,
            hi: (data >> 16) as u16 as i16,
            mv: (data >> 32) as u8,
            work: (data >> 40) as u8,
        })
    }
}

const BUCKET: usize = 4;

/// A bounded transposition table. A slot whose data word is 0 is empty.
pub(super) struct Table {
    /// Two words per entry: key XOR data, then data. The buckets start at word `start`,
    /// the first on a 64-byte boundary, so that a bucket is one cache line: the memory
    /// of a large allocation starts 16 bytes after a page boundary, which would spread
    /// every bucket over two lines and make each probe wait for memory twice.
    words: Box<[AtomicU64]>,
    start: usize,
    mask: usize,
}

/// Words in a bucket, a 64-byte cache line.
const BUCKET_WORDS: usize = BUCKET * 2;

/// `len` words of zero, as the system gives fresh memory: a large table costs nothing until
/// its pages are used, so a small board's search does not wait for the whole table to be
/// written. `None` when the system refuses that much memory.
fn zeroed_words(len: usize) -> Option<Box<[AtomicU64]>> {
    let len = len.max(1);
    let layout = std::alloc::Layout::array::<AtomicU64>(len).ok()?;
    // SAFETY: the layout has a non-zero size; zero bytes are a valid `AtomicU64` (it has
    // the representation of a `u64`), and the box frees the memory with the same layout.
    unsafe {
        let ptr = std::alloc::alloc_zeroed(layout).cast::<AtomicU64>();
        if ptr.is_null() {
            return None;
        }
        Some(Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, len)))
    }
}

impl Table {
    /// A table using at most `mb` mebibytes (at least one bucket).
    #[cfg(test)]
    pub fn new(mb: usize) -> Table {
        Table::with_bytes(mb.max(1) * 1024 * 1024)
    }

    /// A table using at most `bytes` bytes (at least one bucket).
    pub fn with_bytes(bytes: usize) -> Table {
        let per_bucket = BUCKET * 16;
        let buckets = (bytes / per_bucket).max(1).next_power_of_two();
        // Round down to stay within the limit.
        let buckets = if buckets * per_bucket > bytes && buckets > 1 {
            buckets / 2
        } else {
            buckets
        };
        // Half as much, and again, while the system refuses the memory (a --hash-mb larger
        // than the machine): a smaller table only makes the search slower.
        let (mut buckets, asked) = (buckets, buckets);
        loop {
            if let Some(words) = zeroed_words(buckets * BUCKET_WORDS + BUCKET_WORDS - 1) {
                if buckets < asked {
                    tracing::warn!(
                        "the system gave {} MiB of the {} MiB asked for the transposition \
                         table; searching with that",
                        (buckets * per_bucket) >> 20,
                        (asked * per_bucket) >> 20
                    );
                }
                let misalign = (words.as_ptr() as usize / 8) % BUCKET_WORDS;
                return Table {
                    words,
                    start: (BUCKET_WORDS - misalign) % BUCKET_WORDS,
                    mask: buckets - 1,
                };
            }
            assert!(buckets > 1, "no memory for a table of one bucket");
            buckets /= 2;
        }
    }

    /// Asks for huge pages for the table: fewer page faults and misses of the address
    /// cache for a long search that touches all of it, but each fault may wait for the
    /// system to gather 2 MiB, which a short search does not pay back.
    pub fn use_huge_pages(&self) {
        super::cache::advise_huge_pages(&self.words);
    }

    /// The bytes the table uses.
    pub fn bytes(&self) -> usize {
        (self.mask + 1) * BUCKET_WORDS * 8
    }

    pub fn clear(&self) {
        for w in &self.words {
            w.store(0, Ordering::Relaxed);
        }
    }

    #[inline]
    fn bucket(&self, key: u64) -> usize {
        // A final mix so that exact keys (ranks) spread over the buckets.
        let mut h = key;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^= h >> 33;
        self.start + (h as usize & self.mask) * BUCKET_WORDS
    }

    #[inline]
    fn read(&self, i: usize) -> Option<Entry> {
        let check = self.words[i].load(Ordering::Relaxed);
        let data = self.words[i + 1].load(Ordering::Relaxed);
        Entry::from_words(check, data)
    }

    #[inline]
    fn write(&self, i: usize, e: &Entry) {
        let data = e.data();
        self.words[i].store(e.key ^ data, Ordering::Relaxed);
        self.words[i + 1].store(data, Ordering::Relaxed);
    }

    /// Asks the processor to fetch the bucket of `key` (a hint).
    #[inline]
    pub fn prefetch(&self, key: u64) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a prefetch is only a hint; it reads nothing and cannot fault.
        unsafe {
            let p = self.words.as_ptr().add(self.bucket(key));
            core::arch::x86_64::_mm_prefetch(p as *const i8, core::arch::x86_64::_MM_HINT_T0);
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = key;
    }

    #[inline]
    pub fn probe(&self, key: u64) -> Option<Entry> {
        let b = self.bucket(key);
        (0..BUCKET)
            .filter_map(|s| self.read(b + 2 * s))
            .find(|e| e.key == key)
    }

    /// Stores bounds for `key`, narrowing what is already known about it; otherwise
    /// replaces an empty slot or the slot that cost the least work.
    #[inline]
    pub fn store(&self, key: u64, lo: i16, hi: i16, mv: u8, work: u8) {
        let b = self.bucket(key);
        let mut victim = b;
        let mut victim_work = u16::MAX;
        for s in 0..BUCKET {
            let i = b + 2 * s;
            match self.read(i) {
                Some(mut e) if e.key == key => {
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
                    self.write(i, &e);
                    return;
                }
                Some(e) => {
                    if (e.work as u16 + 1) < victim_work {
                        victim_work = e.work as u16 + 1;
                        victim = i;
                    }
                }
                None => {
                    if victim_work > 0 {
                        victim_work = 0;
                        victim = i;
                    }
                }
            }
        }
        self.write(
            victim,
            &Entry {
                key,
                lo,
                hi,
                mv,
                work,
            },
        );
    }

    /// How many slots are in use, per mille (for reports).
    pub fn fill_permille(&self) -> u32 {
        let slots = (self.mask + 1) * BUCKET;
        let sample = slots.min(4000);
        let used = (0..sample)
            .filter(|&s| self.read(self.start + 2 * s).is_some())
            .count();
        (used * 1000 / sample.max(1)) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_is_bounded_and_bounds_narrow() {
        let t = Table::new(1);
        assert!(t.bytes() <= 1024 * 1024);
        // Every bucket is one cache line.
        assert_eq!(t.words[t.bucket(42)..].as_ptr() as usize % 64, 0);
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

    #[test]
    fn key_zero_and_negative_bounds_round_trip() {
        let t = Table::new(1);
        t.store(0, -48, -3, 6, 200);
        let e = t.probe(0).unwrap();
        assert_eq!((e.key, e.lo, e.hi, e.mv, e.work), (0, -48, -3, 6, 200));
    }

    /// More than the machine can give (1 PiB) is not a crash: the table is as large as
    /// the system allows, and works.
    #[test]
    fn a_table_larger_than_the_machine_shrinks_to_what_it_gets() {
        let t = Table::with_bytes(1 << 50);
        assert!(t.bytes() < 1 << 50 && t.bytes() > 0);
        t.store(12345, -3, 7, 2, 5);
        assert!(t.probe(12345).is_some());
    }
}
