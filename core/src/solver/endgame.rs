//! Endgame tables: the exact future gain of every pit configuration with at most `k` seeds
//! in the pits, for one board size and rule variant, one signed byte a position, indexed by
//! [`Indexer`] rank (the side to move's pits first).
//!
//! The future gain does not depend on the stores nor on the seeds per pit the game started
//! with, so one table serves `(6, 4)` and `(6, 5)` alike; it depends on the number of pits,
//! on `empty_capture` and on `sweep` (which decides what the seeds left at the end are worth:
//! their owner's, the emptied side's, or no one's), which [`TableRules`] names.
//!
//! Building goes up by seeds in pits. A move either puts seeds in the mover's store or
//! captures (fewer seeds: a smaller table entry, already known) or keeps every sown seed in
//! the mover's own row. The latter moves seeds only towards the store, so the weighted sum
//! of seeds (pit number times seeds, over both rows) grows with each such move and a chain
//! of them ends: those children are solved first, recursively, on demand.

use super::index::{Indexer, next_same_total};
use crate::rules::{MAX_PITS, Rules, Sweep};
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};

/// What a table depends on: the number of pits and the two rules that change the value of
/// a configuration (the seeds per pit at the start do not).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TableRules {
    pub pits: u8,
    pub empty_capture: bool,
    pub sweep: Sweep,
}

impl TableRules {
    pub fn of(rules: &Rules) -> TableRules {
        TableRules {
            pits: rules.pits() as u8,
            empty_capture: rules.empty_capture(),
            sweep: rules.sweep(),
        }
    }

    /// Pits on the board, both rows: the parts of a configuration.
    pub fn parts(&self) -> usize {
        2 * self.pits as usize
    }
}

impl fmt::Display for TableRules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "pits={} empty_capture={} sweep={}",
            self.pits, self.empty_capture, self.sweep
        )
    }
}

/// The value stored for a configuration not solved yet (during a build).
const UNKNOWN: u8 = 0x80;

/// The largest `k` a table may have: values must fit a signed byte.
pub const MAX_TABLE_SEEDS: u32 = 127;

/// How a table's bytes are held: built in memory, or mapped from a file.
pub(super) enum Bytes {
    Owned(Vec<u8>),
    Mapped(super::cache::Mapping),
}

impl Bytes {
    fn as_slice(&self) -> &[u8] {
        match self {
            Bytes::Owned(v) => v,
            Bytes::Mapped(m) => m.data(),
        }
    }
}

/// A complete endgame table: the future gain for the side to move of every configuration
/// with at most [`EndgameTable::max_seeds`] seeds in the pits.
pub struct EndgameTable {
    rules: TableRules,
    max_seeds: u32,
    indexer: Indexer,
    bytes: Bytes,
}

impl fmt::Debug for EndgameTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "EndgameTable({}, k={})", self.rules, self.max_seeds)
    }
}

impl EndgameTable {
    pub(super) fn from_bytes(rules: TableRules, max_seeds: u32, bytes: Bytes) -> EndgameTable {
        let indexer = Indexer::new(rules.parts(), max_seeds).expect("checked table size");
        assert_eq!(bytes.as_slice().len() as u64, indexer.count(max_seeds));
        EndgameTable {
            rules,
            max_seeds,
            indexer,
            bytes,
        }
    }

    /// Builds the table in memory with `threads` threads (at least one). `progress` is
    /// called now and then with the number of positions done. `None` if `stop` was set
    /// before the build finished.
    pub fn build(
        rules: TableRules,
        max_seeds: u32,
        threads: usize,
        progress: &(dyn Fn(u64) + Sync),
        stop: &AtomicBool,
    ) -> Option<EndgameTable> {
        let bytes = build_bytes(rules, max_seeds, threads, progress, stop)?;
        Some(EndgameTable::from_bytes(
            rules,
            max_seeds,
            Bytes::Owned(bytes),
        ))
    }

    pub fn rules(&self) -> TableRules {
        self.rules
    }

    /// The most seeds in pits a configuration of this table holds.
    pub fn max_seeds(&self) -> u32 {
        self.max_seeds
    }

    /// Positions in the table (one byte each).
    pub fn len(&self) -> u64 {
        self.bytes.as_slice().len() as u64
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The raw values, in rank order.
    pub fn bytes(&self) -> &[u8] {
        self.bytes.as_slice()
    }

    /// The future gain for the side to move whose pits are `mover` (pit 1 first), the other
    /// side's being `other`, if they hold at most `max_seeds` seeds together (and both
    /// rows hold some: a finished game has no future).
    #[inline]
    pub fn value<T: Copy + Into<u64>>(&self, mover: &[T], other: &[T], seeds: u32) -> Option<i32> {
        if seeds > self.max_seeds {
            return None;
        }
        let r = self.indexer.rank2(mover, other);
        Some(self.bytes.as_slice()[r as usize] as i8 as i32)
    }

    /// The rank of a configuration (the mover's pits, then the other side's) with at most
    /// `max_seeds` seeds: where its value is.
    #[inline]
    pub fn rank<T: Copy + Into<u64>>(&self, mover: &[T], other: &[T]) -> u64 {
        self.indexer.rank2(mover, other)
    }

    /// Asks the processor to fetch the value at `rank` (a hint).
    #[inline]
    pub fn prefetch(&self, rank: u64) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a prefetch is only a hint; it reads nothing and cannot fault.
        unsafe {
            let p = self.bytes.as_slice().as_ptr().wrapping_add(rank as usize);
            core::arch::x86_64::_mm_prefetch(p as *const i8, core::arch::x86_64::_MM_HINT_T0);
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = rank;
    }

    /// The value by rank (see [`Indexer`]).
    #[inline]
    pub fn value_at(&self, rank: u64) -> i32 {
        self.bytes.as_slice()[rank as usize] as i8 as i32
    }
}

/// How many bytes a table with at most `max_seeds` seeds in the pits takes, `None` when
/// that is beyond 64 bits.
pub fn table_len(rules: TableRules, max_seeds: u32) -> Option<u64> {
    Indexer::new(rules.parts(), max_seeds).map(|ix| ix.count(max_seeds))
}

/// The largest `k` whose table fits in `bytes` (at most [`MAX_TABLE_SEEDS`]).
pub fn max_seeds_within(rules: TableRules, bytes: u64) -> Option<u32> {
    (0..=MAX_TABLE_SEEDS)
        .take_while(|&k| table_len(rules, k).is_some_and(|len| len <= bytes))
        .last()
}

/// Both rows of the largest board.
const MAX_PARTS: usize = 2 * MAX_PITS as usize;

/// What one move of the builder led to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// The game is over: the gain is the whole value.
    Over,
    /// The mover moves again: the child keeps the mover's pits first.
    Extra,
    /// The other side moves: its pits come first in the child.
    Pass,
}

/// Sows pit `i` (0-based, holding seeds) of the side to move in the configuration `x`
/// (the mover's `P` pits, then the other side's; `seeds` in all), writing the child
/// configuration (unless the game is over) into `child`. Returns what the move adds to the
/// mover's store margin (captures and, when it ends the game, the sweep included).
///
/// The sowing goes round a ring of the mover's pits `0..P`, the mover's store at `P`
/// (empty at first) and the other side's pits `P + 1..=2P`; the other side's store is
/// never sown into.
#[inline(always)]
fn sow<const P: usize>(
    rules: TableRules,
    x: &[u8; MAX_PARTS],
    seeds: u32,
    i: usize,
    child: &mut [u8; MAX_PARTS],
) -> (i32, Kind) {
    let len = 2 * P + 1;
    let mut ring = [0u8; MAX_PARTS + 1];
    ring[..P].copy_from_slice(&x[..P]);
    ring[P + 1..2 * P + 1].copy_from_slice(&x[P..2 * P]);
    let s = ring[i] as usize;
    let (laps, rest) = (s / len, s % len);
    // Every cell gets the full laps; the `rest` cells after `i` get one more. Counted by
    // cells rather than seed by seed so that it runs without branches.
    ring[i] = 0;
    for (j, c) in ring[..2 * P + 1].iter_mut().enumerate() {
        let after = if j > i { j - i - 1 } else { j + len - i - 1 };
        *c += laps as u8 + (after < rest) as u8;
    }
    let end = i + rest;
    let last = if end >= len { end - len } else { end };
    // Seeds that went into own pits: the part of the window after `i` before the store,
    // and the part that came round to pit 1.
    let own_before: u32 = x[..P].iter().map(|&c| c as u32).sum();
    let into_own = (end.min(P - 1) - i.min(P - 1))
        + if end >= len {
            (end - len + 1).min(P)
        } else {
            0
        };
    let mut own = own_before - s as u32 + (laps * P + into_own) as u32;
    let mut gain = (laps + (end >= P) as usize) as i32;
    let mut captured = false;
    if last < P && ring[last] == 1 {
        let opposite = 2 * P - last;
        let across = ring[opposite];
        if across > 0 || rules.empty_capture {
            gain += across as i32 + 1;
            ring[opposite] = 0;
            ring[last] = 0;
            own -= 1;
            captured = true;
        }
    }
    let left = seeds - gain as u32;
    if own == 0 || (captured && own == left) {
        let theirs = left - own;
        gain += match rules.sweep {
            Sweep::Owner => own as i32 - theirs as i32,
            Sweep::EmptySide => {
                if own == 0 {
                    theirs as i32
                } else {
                    -(own as i32)
                }
            }
            Sweep::None => 0,
        };
        return (gain, Kind::Over);
    }
    if last == P {
        child[..P].copy_from_slice(&ring[..P]);
        child[P..2 * P].copy_from_slice(&ring[P + 1..2 * P + 1]);
        (gain, Kind::Extra)
    } else {
        child[..P].copy_from_slice(&ring[P + 1..2 * P + 1]);
        child[P..2 * P].copy_from_slice(&ring[..P]);
        (gain, Kind::Pass)
    }
}

/// Asks the processor to fetch a cache line before it is needed.
#[inline(always)]
fn prefetch(p: *const AtomicU8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint; it reads nothing and cannot fault.
    unsafe {
        core::arch::x86_64::_mm_prefetch(p as *const i8, core::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

struct Builder<'a> {
    rules: TableRules,
    indexer: &'a Indexer,
    values: &'a [AtomicU8],
}

/// Positions whose children are fetched together before any of them is used.
const BATCH: usize = 32;

/// One move found in a batch: its gain, what it led to and the child's rank.
#[derive(Clone, Copy)]
struct Edge {
    gain: i32,
    kind: Kind,
    /// The pit sown (0-based).
    pit: u8,
    rank: u64,
}

impl Builder<'_> {
    #[inline(always)]
    fn rank<const P: usize>(&self, x: &[u8; MAX_PARTS]) -> u64 {
        self.indexer.rank(&x[..2 * P])
    }

    /// The value of configuration `x` (both rows non-empty) with `seeds` seeds, solving
    /// same-size children first where they are not known yet.
    fn solve<const P: usize>(&self, x: &[u8; MAX_PARTS], seeds: u32) -> i8 {
        let mut best = i32::MIN;
        let mut child = [0u8; MAX_PARTS];
        for i in 0..P {
            if x[i] == 0 {
                continue;
            }
            let (gain, kind) = sow::<P>(self.rules, x, seeds, i, &mut child);
            let value = match kind {
                Kind::Over => gain,
                Kind::Extra => gain + self.child_value::<P>(&child, seeds) as i32,
                Kind::Pass => gain - self.child_value::<P>(&child, seeds) as i32,
            };
            best = best.max(value);
        }
        best as i8
    }

    /// The value of a child configuration, solved now if it has as many seeds as its
    /// parent (`seeds`) and is not known yet.
    #[inline]
    fn child_value<const P: usize>(&self, child: &[u8; MAX_PARTS], seeds: u32) -> i8 {
        let r = self.rank::<P>(child) as usize;
        let v = self.values[r].load(Ordering::Relaxed);
        if v != UNKNOWN {
            return v as i8;
        }
        let v = self.solve::<P>(child, seeds);
        self.values[r].store(v as u8, Ordering::Relaxed);
        v
    }

    /// Solves the ranks `start..end`, all with `seeds` seeds, in batches: the children of
    /// a whole batch are found and fetched from memory first, then used.
    fn run<const P: usize>(&self, start: u64, end: u64, seeds: u32) {
        let mut x = [0u8; MAX_PARTS];
        self.indexer.unrank(start, &mut x[..2 * P]);
        let mut configs = [[0u8; MAX_PARTS]; BATCH];
        let mut edges = [[Edge {
            gain: 0,
            kind: Kind::Over,
            pit: 0,
            rank: 0,
        }; MAX_PITS as usize]; BATCH];
        let mut counts = [0usize; BATCH];
        let mut child = [0u8; MAX_PARTS];
        let mut r = start;
        while r < end {
            let batch = BATCH.min((end - r) as usize);
            for b in 0..batch {
                configs[b] = x;
                let mut n = 0;
                let over = x[..P].iter().all(|&c| c == 0) || x[P..2 * P].iter().all(|&c| c == 0);
                if !over {
                    for i in 0..P {
                        if x[i] == 0 {
                            continue;
                        }
                        let (gain, kind) = sow::<P>(self.rules, &x, seeds, i, &mut child);
                        let rank = if kind == Kind::Over {
                            0
                        } else {
                            let rank = self.rank::<P>(&child);
                            prefetch(&self.values[rank as usize]);
                            rank
                        };
                        edges[b][n] = Edge {
                            gain,
                            kind,
                            pit: i as u8,
                            rank,
                        };
                        n += 1;
                    }
                }
                counts[b] = n;
                next_same_total(&mut x[..2 * P]);
            }
            for b in 0..batch {
                let cell = &self.values[(r + b as u64) as usize];
                if cell.load(Ordering::Relaxed) != UNKNOWN {
                    continue;
                }
                if counts[b] == 0 {
                    // A finished game: never looked up.
                    cell.store(0, Ordering::Relaxed);
                    continue;
                }
                let mut best = i32::MIN;
                for e in &edges[b][..counts[b]] {
                    let value = match e.kind {
                        Kind::Over => e.gain,
                        Kind::Extra | Kind::Pass => {
                            let mut v = self.values[e.rank as usize].load(Ordering::Relaxed);
                            if v == UNKNOWN {
                                // A child with as many seeds, not solved yet.
                                sow::<P>(
                                    self.rules,
                                    &configs[b],
                                    seeds,
                                    e.pit as usize,
                                    &mut child,
                                );
                                v = self.child_value::<P>(&child, seeds) as u8;
                            }
                            if e.kind == Kind::Extra {
                                e.gain + v as i8 as i32
                            } else {
                                e.gain - v as i8 as i32
                            }
                        }
                    };
                    best = best.max(value);
                }
                cell.store(best as i8 as u8, Ordering::Relaxed);
            }
            r += batch as u64;
        }
    }
}

/// Positions handed to a thread at a time.
const CHUNK: u64 = 1 << 16;

fn build_bytes(
    rules: TableRules,
    max_seeds: u32,
    threads: usize,
    progress: &(dyn Fn(u64) + Sync),
    stop: &AtomicBool,
) -> Option<Vec<u8>> {
    macro_rules! by_pits {
        ($($p:literal)*) => {
            match rules.pits {
                $($p => build_bytes_for::<$p>(rules, max_seeds, threads, progress, stop),)*
                other => panic!("{other} pits is not a supported board"),
            }
        };
    }
    by_pits!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16)
}

fn build_bytes_for<const P: usize>(
    rules: TableRules,
    max_seeds: u32,
    threads: usize,
    progress: &(dyn Fn(u64) + Sync),
    stop: &AtomicBool,
) -> Option<Vec<u8>> {
    assert!(max_seeds <= MAX_TABLE_SEEDS, "k above {MAX_TABLE_SEEDS}");
    let indexer = Indexer::new(2 * P, max_seeds).expect("table size fits in 64 bits");
    let len = indexer.count(max_seeds) as usize;
    let mut bytes: Vec<u8> = Vec::with_capacity(len);
    super::cache::advise_huge_pages(bytes.spare_capacity_mut());
    bytes.resize(len, UNKNOWN);
    // SAFETY: `AtomicU8` has the size and alignment of `u8`, and `bytes` is not otherwise
    // used while `values` lives.
    let values: &[AtomicU8] = unsafe { &*(bytes.as_mut_slice() as *mut [u8] as *const [AtomicU8]) };
    let builder = Builder {
        rules,
        indexer: &indexer,
        values,
    };
    let done = AtomicU64::new(0);
    for n in 0..=max_seeds {
        let lo = if n == 0 { 0 } else { indexer.count(n - 1) };
        let hi = indexer.count(n);
        let next = AtomicU64::new(lo);
        let work = || {
            while !stop.load(Ordering::Relaxed) {
                let start = next.fetch_add(CHUNK, Ordering::Relaxed);
                if start >= hi {
                    return;
                }
                let end = (start + CHUNK).min(hi);
                builder.run::<P>(start, end, n);
                progress(done.fetch_add(end - start, Ordering::Relaxed) + (end - start));
            }
        };
        std::thread::scope(|s| {
            for _ in 1..threads.max(1) {
                s.spawn(work);
            }
            work();
        });
        if stop.load(Ordering::Relaxed) {
            return None;
        }
    }
    Some(bytes)
}
