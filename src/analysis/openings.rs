//! Balanced openings: distinct lines of K random sowings from the start whose exact value
//! for south lies in [-V, V], so that the two games of a pair start from a position that is
//! even (or nearly) under perfect play.

use super::game::value_within;
use crate::record::{Board, BoardError, Opening, counted};
use crate::rules::{Position, Rules, Side, Sweep};
use crate::solver::{EndgameTable, Solver};
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

/// What to generate.
#[derive(Clone, Copy, Debug)]
pub(crate) struct OpeningsSpec {
    /// Sowings in each opening.
    pub plies: u32,
    pub count: usize,
    /// The largest exact value for south allowed, either way.
    pub max_value: i32,
    /// The seed of the random lines.
    pub seed: u64,
    /// Time for each position; one not solved in it is not used.
    pub budget: Option<Duration>,
    pub threads: usize,
    /// Memory of each thread's transposition table, in MiB.
    pub hash_mb: usize,
}

/// An opening and its exact value for south.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BalancedOpening {
    pub pits: Vec<u8>,
    pub value: i32,
}

/// Random lines tried per opening wanted before giving up.
const TRIES_PER_OPENING: usize = 200;

/// The exact value for south of the position after `pits` when it lies within
/// `[-max_value, max_value]`: `Some(Err(()))` when it lies outside, `None` when the budget
/// ran out. Two null-window tests settle whether the value is within the bound (most lines
/// are not, and are refused after one or two), then the solver finds it from a first
/// guess of 0.
fn south_value(
    solver: &mut Solver,
    rules: Rules,
    pits: &[u8],
    max_value: i32,
    budget: Option<Duration>,
) -> Option<Result<i32, ()>> {
    let mut pos = Position::start(rules);
    for &p in pits {
        pos = pos.play(p as i64).ok()?;
    }
    let deadline = budget.map(|d| std::time::Instant::now() + d);
    let budget = || crate::solver::Budget {
        deadline,
        max_nodes: None,
    };
    // The bound is the same either way, so the mover's value must lie within it too.
    match solver.test(&pos, -max_value, budget())? {
        crate::solver::Test::Below { .. } => return Some(Err(())),
        crate::solver::Test::AtLeast { bound, .. } if bound > max_value => return Some(Err(())),
        crate::solver::Test::AtLeast { .. } => {}
    }
    if let crate::solver::Test::AtLeast { .. } = solver.test(&pos, max_value + 1, budget())? {
        return Some(Err(()));
    }
    let remaining = deadline.map(|d| d.saturating_duration_since(std::time::Instant::now()));
    let v = value_within(solver, &pos, remaining, Some(0))?;
    Some(Ok(if pos.to_move() == Side::South { v } else { -v }))
}

/// Distinct candidate lines, in a fixed order for a seed: each of `spec.plies` sowings
/// that does not end the game, and each reaching a position no earlier line reached.
struct Candidates {
    rules: Rules,
    spec: OpeningsSpec,
    next: u64,
    seen: HashSet<(Vec<u16>, Side)>,
}

impl Candidates {
    fn take(&mut self, n: usize, limit: u64) -> Vec<Vec<u8>> {
        let mut out = Vec::with_capacity(n);
        while out.len() < n && self.next < limit {
            let line = random_opening(self.rules, self.spec.plies, self.spec.seed, self.next);
            self.next += 1;
            if line.len() != self.spec.plies as usize {
                continue;
            }
            let mut pos = Position::start(self.rules);
            for &p in &line {
                pos = pos.play(p as i64).expect("a legal line");
            }
            if self.seen.insert((pos.cells().to_vec(), pos.to_move())) {
                out.push(line);
            }
        }
        out
    }
}

/// `spec.count` distinct openings of `spec.plies` sowings under `rules` whose exact value
/// for south lies in `[-max_value, max_value]`, in the order the seed draws them (the same
/// for the same seed, whatever the threads). `progress` hears the lines tried and the
/// openings found. An error says how many were found when the tries ran out.
pub(crate) fn balanced_openings(
    rules: Rules,
    spec: OpeningsSpec,
    table: Option<Arc<EndgameTable>>,
    progress: &mut dyn FnMut(u64, &[BalancedOpening]),
) -> Result<Vec<BalancedOpening>, String> {
    let threads = spec.threads.max(1);
    let mut solvers: Vec<Solver> = (0..threads)
        .map(|_| {
            let mut s = Solver::new(spec.hash_mb.max(1));
            s.set_endgame(table.clone());
            s
        })
        .collect();
    let limit = (spec.count.max(1) * TRIES_PER_OPENING) as u64;
    let mut cands = Candidates {
        rules,
        spec,
        next: 0,
        seen: HashSet::new(),
    };
    let mut found = Vec::new();
    let mut tried = 0u64;
    let mut unsolved = 0u64;
    while found.len() < spec.count {
        let batch = cands.take(threads * 2, limit);
        if batch.is_empty() {
            // A longer budget helps only if some line was left unsolved; more sowings give
            // more distinct lines to choose from.
            let budget = if unsolved > 0 {
                format!(
                    ", or a longer --budget ({} not solved within it)",
                    counted(unsolved, "line")
                )
            } else {
                String::new()
            };
            return Err(format!(
                "found only {} of {} distinct openings of {} sowings under {rules} with an exact \
                 value for south within ±{} after {} random lines: allow a larger --max-value, \
                 ask for fewer (--count) or use more sowings (--plies){budget}",
                found.len(),
                spec.count,
                spec.plies,
                spec.max_value,
                cands.next
            ));
        }
        let chunk = batch.len().div_ceil(threads);
        let values: Vec<Option<Result<i32, ()>>> = std::thread::scope(|scope| {
            let handles: Vec<_> = solvers
                .iter_mut()
                .zip(batch.chunks(chunk))
                .map(|(solver, lines)| {
                    scope.spawn(move || {
                        lines
                            .iter()
                            .map(|l| south_value(solver, rules, l, spec.max_value, spec.budget))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().expect("a solving thread panicked"))
                .collect()
        });
        for (pits, value) in batch.into_iter().zip(values) {
            tried += 1;
            match value {
                Some(Ok(v)) if found.len() < spec.count => {
                    debug_assert!(v.abs() <= spec.max_value);
                    found.push(BalancedOpening { pits, value: v })
                }
                Some(_) => {}
                None => unsolved += 1,
            }
        }
        progress(tried, &found);
    }
    Ok(found)
}

/// The openings as an openings file: comments saying what they are, how they were made
/// and the command that makes them again into `out` (as the shell reads it; the same file:
/// the lines are drawn from the seed and, without a time budget, every line is solved
/// whatever the machine), then one line each with the value as a comment.
pub(crate) fn openings_text(
    rules: Rules,
    spec: &OpeningsSpec,
    out: &str,
    openings: &[BalancedOpening],
) -> String {
    let mut s = format!(
        "# {} openings of {} sowings under {rules}, exact value for south within ±{} (seed {})\n\
         # Each is a line of random legal sowings from the start (drawn from the seed), reaching a\n\
         # position no earlier line reached, whose exact value for south (its final store minus\n\
         # north's under perfect play) kalaha's solver proved to lie within the bound.\n\
         # kalaha openings --plies {} --count {} --max-value {} --seed {} --budget {} --pits {} --seeds {}{} --sweep {} --out {out}\n",
        openings.len(),
        spec.plies,
        spec.max_value,
        spec.seed,
        spec.plies,
        spec.count,
        spec.max_value,
        spec.seed,
        spec.budget
            .map_or("none".to_string(), crate::record::format_duration),
        rules.pits(),
        rules.seeds(),
        if rules.empty_capture() {
            " --empty-capture"
        } else {
            ""
        },
        rules.sweep(),
    );
    for o in openings {
        s.push_str(&format!(
            "{}  # value {:+}\n",
            crate::record::format_pits(&o.pits),
            o.value
        ));
    }
    s
}

/// `plies` random legal sowings from the start that do not end the game. Deterministic in
/// `(seed, round)`: the generator is ChaCha8 seeded with `seed`, on stream `round`.
pub fn random_opening(rules: Rules, plies: u32, seed: u64, round: u64) -> Vec<u8> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(round);
    let mut best = Vec::new();
    for _attempt in 0..100 {
        let mut pos = Position::start(rules);
        let mut line = Vec::new();
        for _ in 0..plies {
            let legal: Vec<u8> = pos.legal_moves().collect();
            let pit = legal[rng.random_range(0..legal.len())];
            let next = pos.play(pit as i64).expect("a legal move");
            if next.is_over() {
                break;
            }
            pos = next;
            line.push(pit);
        }
        if line.len() == plies as usize {
            return line;
        }
        if line.len() > best.len() {
            best = line;
        }
    }
    best
}

/// Why an openings file was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OpeningsError {
    #[error("openings line {line}: {reason}")]
    Line { line: usize, reason: String },
    #[error("the openings file holds no opening")]
    Empty,
    #[error(
        "the openings file holds more than {MAX_OPENINGS} openings, the most a run keeps (in \
         its tournament.toml, so that it can be resumed): give fewer"
    )]
    TooMany,
}

/// The most openings a file may give: a run keeps them in its `tournament.toml`, which a
/// resume must be able to read back within [`crate::input::CONFIG_LIMIT`].
pub(crate) const MAX_OPENINGS: usize = 1_000_000;

/// Reads an openings file: one opening per line, either pit numbers sown from the start
/// (separated by spaces or commas) or a start position in the Kalah Game Protocol's board
/// notation, `<pits,south store,north store,south pits...,north pits...>` (south to move),
/// optionally followed by pit numbers sown from it; `#` starts a comment; blank lines are
/// skipped. Every opening must be legal under `rules` (a board: their pits a side and seeds
/// in all) and must not end the game.
pub fn parse_openings(text: &str, rules: Rules) -> Result<Vec<Opening>, OpeningsError> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        if out.len() == MAX_OPENINGS {
            return Err(OpeningsError::TooMany);
        }
        let err = |reason: String| OpeningsError::Line {
            line: i + 1,
            reason,
        };
        let (start, sowings) = match line.strip_prefix('<') {
            Some(_) => {
                let end = line.find('>').ok_or_else(|| {
                    err(format!(
                        "{line:?} opens a board with '<' but does not close it with '>'"
                    ))
                })?;
                let board: Board = line[..=end]
                    .parse()
                    .map_err(|e: BoardError| err(e.to_string()))?;
                (Some(board), &line[end + 1..])
            }
            None => (None, line),
        };
        let mut pits = Vec::new();
        for word in sowings.split(|c: char| c.is_whitespace() || c == ',') {
            if word.is_empty() {
                continue;
            }
            let pit: u8 = word
                .parse()
                .map_err(|_| err(format!("{word:?} is not a pit number")))?;
            pits.push(pit);
        }
        let opening = Opening { start, pits };
        opening.position(rules).map_err(|e| err(e.to_string()))?;
        out.push(opening);
    }
    if out.is_empty() {
        return Err(OpeningsError::Empty);
    }
    Ok(out)
}

/// A book of balanced openings kalaha ships (`books/NAME.openings` in the repository) and
/// the board it is the default of: its pits, seeds a pit, empty captures and sweep. The
/// file's header says how it was made.
pub(crate) struct Book {
    pub(crate) pits: usize,
    pub(crate) seeds: usize,
    pub(crate) empty_capture: bool,
    pub(crate) sweep: Sweep,
    pub(crate) name: &'static str,
    pub(crate) text: &'static str,
}

impl Book {
    /// Whether this is the book of `rules`' board.
    fn is_for(&self, rules: Rules) -> bool {
        (self.pits, self.seeds, self.empty_capture, self.sweep)
            == (
                rules.pits(),
                rules.seeds(),
                rules.empty_capture(),
                rules.sweep(),
            )
    }
}

/// One row of [`BOOKS`]: the board, then the book's name (its file in `books/`).
macro_rules! book {
    ($pits:literal x $seeds:literal, $empty_capture:literal, $name:literal) => {
        Book {
            pits: $pits,
            seeds: $seeds,
            empty_capture: $empty_capture,
            sweep: Sweep::Owner,
            name: $name,
            text: include_str!(concat!("../../books/", $name, ".openings")),
        }
    };
}

/// The books kalaha ships, at most one a board.
pub(crate) const BOOKS: &[Book] = &[
    book!(6 x 4, false, "kalah-6x4"),
    book!(6 x 4, true, "kalah-6x4-empty-capture"),
    book!(4 x 3, false, "kalah-4x3"),
    book!(4 x 3, true, "kalah-4x3-empty-capture"),
    book!(4 x 4, false, "kalah-4x4"),
    book!(4 x 4, true, "kalah-4x4-empty-capture"),
    book!(5 x 4, false, "kalah-5x4"),
    book!(5 x 4, true, "kalah-5x4-empty-capture"),
    book!(6 x 3, false, "kalah-6x3"),
    book!(6 x 3, true, "kalah-6x3-empty-capture"),
];

/// The shipped book of `rules`' board, if there is one.
pub(crate) fn book_of(rules: Rules) -> Option<&'static Book> {
    BOOKS.iter().find(|b| b.is_for(rules))
}

/// The book of balanced openings kalaha plays by default under `rules`, when it ships one:
/// its name and its openings, in the file's order.
pub(crate) fn default_book(rules: Rules) -> Option<(&'static str, &'static [Opening])> {
    static READ: [std::sync::OnceLock<Vec<Opening>>; BOOKS.len()] =
        [const { std::sync::OnceLock::new() }; BOOKS.len()];
    let i = BOOKS.iter().position(|b| b.is_for(rules))?;
    let Book { name, text, .. } = BOOKS[i];
    let list = READ[i].get_or_init(|| {
        parse_openings(text, rules).unwrap_or_else(|e| panic!("the book {name} is damaged: {e}"))
    });
    Some((name, list))
}

/// Frontiers larger than this are not enumerated: positions after more sowings are drawn
/// at random instead (there are then far more of them than any run plays).
const MAX_FRONTIER: usize = 400_000;

/// Openings computed at most before a run starts, to say whether it has enough.
const COUNTED_AT_START: u64 = 50_000;

/// Random lines drawn in a row that all reach positions already used before a tier drawn
/// at random is taken as used up.
const MAX_DRAWN_IN_VAIN: u64 = 20_000;

/// Distinct openings in a fixed order: the positions of a book first (in an order fixed by
/// the seed), then the positions after `plies` sowings from the start, then after
/// `plies + 1`, and so on, each set of positions in an order fixed by the seed, and never
/// a position twice (a position reached by two lines, or by a line and a book, is one
/// opening). Opening `n` depends only on the rules, the book, `plies`, the seed and `n`, so
/// every shard and every resume agrees; the openings are computed once, as far as a run
/// asks for them.
///
/// What is kept is small: each opening past the book as its sowings, a byte each, and an
/// 8-byte slot of a [`PositionSet`] at most 3/4 full (11 to 22 bytes an opening) that
/// finds an opening by its position; and the positions after the last number of sowings
/// enumerated, as a line each.
pub struct DistinctOpenings {
    rules: Rules,
    plies: u32,
    seed: u64,
    /// The book's name and size, when it comes first.
    book: Option<(String, usize)>,
    limits: Limits,
    state: std::sync::Mutex<Distinct>,
}

/// When positions stop being enumerated and are drawn at random instead.
#[derive(Clone, Copy, Debug)]
struct Limits {
    /// See [`MAX_FRONTIER`].
    max_frontier: usize,
    /// See [`MAX_DRAWN_IN_VAIN`].
    max_drawn_in_vain: u64,
}

/// What has been computed of a [`DistinctOpenings`].
struct Distinct {
    /// The openings in order, as far as computed: the book's, then each tier's.
    openings: Computed,
    /// Every opening of `openings`, found by its position.
    seen: PositionSet,
    /// The lines to the positions after `depth` sowings (that do not end the game), each
    /// the first line found to its position; `None` once they are drawn at random instead.
    frontier: Option<Lines>,
    depth: u32,
    /// No position is left to add.
    done: bool,
}

/// The openings computed: the book's (kept as given), then the lines of each tier.
struct Computed {
    book: Vec<Opening>,
    tiers: Vec<Lines>,
    /// Openings in all.
    len: u64,
}

/// Where an opening is kept.
enum Kept<'a> {
    Book(&'a Opening),
    /// A tier, and the number of the line in it.
    Line(&'a Lines, usize),
}

impl Computed {
    /// Where opening `n` (below `len`) is kept.
    fn locate(&self, n: u64) -> Kept<'_> {
        let book = self.book.len() as u64;
        if n < book {
            return Kept::Book(&self.book[n as usize]);
        }
        let mut i = n - book;
        for tier in &self.tiers {
            let len = tier.len() as u64;
            if i < len {
                return Kept::Line(tier, i as usize);
            }
            i -= len;
        }
        unreachable!("opening {n} of {} computed", self.len)
    }

    /// Opening `n` (below `len`).
    fn get(&self, n: u64) -> Opening {
        match self.locate(n) {
            Kept::Book(o) => o.clone(),
            Kept::Line(tier, i) => Opening::line(tier.get(i).to_vec()),
        }
    }

    /// The position of opening `n` (below `len`).
    fn position(&self, rules: Rules, n: u64) -> Position {
        match self.locate(n) {
            Kept::Book(o) => o.position(rules).expect("a book opening that was played"),
            Kept::Line(tier, i) => tier.position(rules, i),
        }
    }

    /// The openings of each tier: (sowings, how many).
    fn tiers(&self) -> Vec<(u32, usize)> {
        self.tiers
            .iter()
            .map(|t| (t.plies as u32, t.len()))
            .collect()
    }
}

/// Lines of the same number of sowings from the start, packed: one byte a sowing.
#[derive(Clone, Debug, Default)]
struct Lines {
    plies: usize,
    count: usize,
    bytes: Vec<u8>,
}

impl Lines {
    fn new(plies: u32) -> Lines {
        Lines {
            plies: plies as usize,
            ..Lines::default()
        }
    }

    fn len(&self) -> usize {
        self.count
    }

    fn get(&self, i: usize) -> &[u8] {
        &self.bytes[i * self.plies..(i + 1) * self.plies]
    }

    fn push(&mut self, line: &[u8]) {
        assert_eq!(line.len(), self.plies, "a line of another length");
        self.bytes.extend_from_slice(line);
        self.count += 1;
    }

    fn swap(&mut self, i: usize, j: usize) {
        for k in 0..self.plies {
            self.bytes.swap(i * self.plies + k, j * self.plies + k);
        }
    }

    /// The position line `i` reaches.
    fn position(&self, rules: Rules, i: usize) -> Position {
        self.get(i).iter().fold(Position::start(rules), |pos, &p| {
            pos.play(i64::from(p)).expect("a legal line")
        })
    }
}

/// A set of positions that keeps, for each, only the number of an item that reaches it
/// (an opening, a line) and a few bits of its hash, in 8 bytes a slot at most 3/4 full:
/// the position itself is computed again from the item when a slot's bits match (so the
/// set is exact, and knows nothing of how positions hash beyond telling them apart
/// faster). An open-addressing table with linear probing.
#[derive(Debug, Default)]
struct PositionSet {
    /// 0 for an empty slot; else the hash's top [`TAG_BITS`] above the item's number + 1.
    slots: Vec<u64>,
    len: usize,
}

/// Bits of a position's hash kept in its slot.
const TAG_BITS: u32 = 24;
/// Items numbered from 0 to `ITEM_MASK - 1`.
const ITEM_MASK: u64 = (1 << (64 - TAG_BITS)) - 1;

fn position_hash(pos: &Position) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::hash::DefaultHasher::new();
    pos.hash(&mut h);
    h.finish()
}

impl PositionSet {
    /// The item kept for `pos`, if any; `at(item)` is the position of an item.
    fn find(&self, pos: &Position, at: impl Fn(u64) -> Position) -> Option<u64> {
        if self.slots.is_empty() {
            return None;
        }
        let hash = position_hash(pos);
        let tag = hash >> (64 - TAG_BITS);
        let mask = self.slots.len() - 1;
        let mut i = hash as usize & mask;
        loop {
            let slot = self.slots[i];
            if slot == 0 {
                return None;
            }
            let item = (slot & ITEM_MASK) - 1;
            if slot >> (64 - TAG_BITS) == tag && at(item) == *pos {
                return Some(item);
            }
            i = (i + 1) & mask;
        }
    }

    fn contains(&self, pos: &Position, at: impl Fn(u64) -> Position) -> bool {
        self.find(pos, at).is_some()
    }

    /// Keeps `item` for `pos` unless the set holds `pos` already: whether it did not.
    fn insert(&mut self, pos: &Position, item: u64, at: impl Fn(u64) -> Position) -> bool {
        if self.find(pos, &at).is_some() {
            return false;
        }
        assert!(item < ITEM_MASK, "more positions than a set can number");
        if (self.len + 1) * 4 > self.slots.len() * 3 {
            let size = (self.slots.len() * 2).max(16);
            let old = std::mem::replace(&mut self.slots, vec![0; size]);
            for slot in old.into_iter().filter(|&s| s != 0) {
                self.place(position_hash(&at((slot & ITEM_MASK) - 1)), slot);
            }
        }
        let hash = position_hash(pos);
        self.place(
            hash,
            (hash >> (64 - TAG_BITS) << (64 - TAG_BITS)) | (item + 1),
        );
        self.len += 1;
        true
    }

    /// Puts `slot` in the first free slot from `hash`'s.
    fn place(&mut self, hash: u64, slot: u64) {
        let mask = self.slots.len() - 1;
        let mut i = hash as usize & mask;
        while self.slots[i] != 0 {
            i = (i + 1) & mask;
        }
        self.slots[i] = slot;
    }
}

impl std::fmt::Debug for DistinctOpenings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DistinctOpenings")
            .field("rules", &self.rules)
            .field("plies", &self.plies)
            .field("seed", &self.seed)
            .field("book", &self.book)
            .finish()
    }
}

impl PartialEq for DistinctOpenings {
    fn eq(&self, other: &Self) -> bool {
        (self.rules, self.plies, self.seed, &self.book)
            == (other.rules, other.plies, other.seed, &other.book)
    }
}

impl Eq for DistinctOpenings {}

/// Items `0..len` in an order fixed by `seed` and `stream` (a Fisher-Yates shuffle):
/// `swap(i, j)` exchanges two.
fn shuffle(len: usize, seed: u64, stream: u64, mut swap: impl FnMut(usize, usize)) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(stream);
    for i in (1..len).rev() {
        let j = rng.random_range(0..=i);
        swap(i, j);
    }
}

/// The stream of the generator that orders the book (tiers use their number of sowings).
const BOOK_STREAM: u64 = u64::MAX;

impl DistinctOpenings {
    /// Openings of `plies` sowings (at least 1) and more, after `book` (a name and its
    /// openings) when one is given.
    pub(crate) fn new(
        rules: Rules,
        plies: u32,
        seed: u64,
        book: Option<(&str, &[Opening])>,
    ) -> DistinctOpenings {
        let limits = Limits {
            max_frontier: MAX_FRONTIER,
            max_drawn_in_vain: MAX_DRAWN_IN_VAIN,
        };
        DistinctOpenings::with_limits(rules, plies, seed, book, limits)
    }

    fn with_limits(
        rules: Rules,
        plies: u32,
        seed: u64,
        book: Option<(&str, &[Opening])>,
        limits: Limits,
    ) -> DistinctOpenings {
        let plies = plies.max(1);
        let mut list = Vec::new();
        let mut positions = Vec::new();
        let mut seen = PositionSet::default();
        if let Some((_, openings)) = book {
            for o in openings {
                if let Ok(pos) = o.position(rules)
                    && seen.insert(&pos, list.len() as u64, |i| positions[i as usize])
                {
                    list.push(o.clone());
                    positions.push(pos);
                }
            }
            shuffle(list.len(), seed, BOOK_STREAM, |i, j| {
                list.swap(i, j);
                positions.swap(i, j);
            });
            // Numbered again in the book's new order.
            seen = PositionSet::default();
            for (i, pos) in positions.iter().enumerate() {
                seen.insert(pos, i as u64, |k| positions[k as usize]);
            }
        }
        let book = book.map(|(name, _)| (name.to_string(), list.len()));
        let mut start = Lines::new(0);
        start.push(&[]);
        DistinctOpenings {
            rules,
            plies,
            seed,
            book,
            limits,
            state: std::sync::Mutex::new(Distinct {
                openings: Computed {
                    len: list.len() as u64,
                    book: list,
                    tiers: Vec::new(),
                },
                seen,
                frontier: Some(start),
                depth: 0,
                done: false,
            }),
        }
    }

    pub(crate) fn plies(&self) -> u32 {
        self.plies
    }

    /// The book's name and how many distinct positions of it are played first.
    pub(crate) fn book(&self) -> Option<(&str, usize)> {
        self.book.as_ref().map(|(n, c)| (n.as_str(), *c))
    }

    /// Opening `n` (0-based). Once every position reachable has been used (only on tiny
    /// boards), the openings are played again in the same order.
    pub(crate) fn get(&self, n: u64) -> Opening {
        let mut st = self.state.lock().expect("openings lock");
        while st.openings.len <= n && !st.done {
            self.grow(&mut st);
        }
        if st.openings.len == 0 {
            // No line of `plies` sowings leaves the game going: the longest that does.
            return Opening::line(random_opening(self.rules, self.plies, self.seed, n));
        }
        st.openings.get(n % st.openings.len)
    }

    /// How many distinct openings there are before they repeat (`None`: at least `upto`,
    /// or more than it is worth computing now), and the openings of each tier computed to
    /// know it: (sowings, count).
    pub(crate) fn count_upto(&self, upto: u64) -> (Option<u64>, Vec<(u32, usize)>) {
        let upto = upto.min(COUNTED_AT_START);
        let mut st = self.state.lock().expect("openings lock");
        while !st.done && (st.openings.len < upto || st.openings.tiers.is_empty()) {
            self.grow(&mut st);
        }
        let n = st.openings.len;
        ((st.done || n < upto).then_some(n), st.openings.tiers())
    }

    /// Whether a game of a run of `rounds` rounds can repeat an earlier game move for move:
    /// when the openings run out and are played again, or when they are not all of one
    /// shape (one start, one number of sowings), since a longer opening can be the very
    /// line an earlier game of a shorter one went on to. Openings of one shape are
    /// distinct lines, so no game can then be another's.
    pub(crate) fn can_repeat_within(&self, rounds: u64) -> bool {
        let (count, _) = self.count_upto(rounds);
        if count.is_some_and(|c| c < rounds) {
            return true;
        }
        let st = self.state.lock().expect("openings lock");
        if st.openings.len < rounds {
            // Beyond what is worth counting at the start: more tiers will come.
            return true;
        }
        let mut shapes = std::collections::HashSet::new();
        for o in st.openings.book.iter().take(rounds as usize) {
            shapes.insert((o.start.as_ref().map(|b| b.to_string()), o.pits.len()));
        }
        let mut first = st.openings.book.len() as u64;
        for tier in &st.openings.tiers {
            if first >= rounds {
                break;
            }
            shapes.insert((None, tier.plies));
            first += tier.count as u64;
        }
        shapes.len() > 1
    }

    /// The lines to the positions after one more sowing of each of `frontier` (first line
    /// first), and when `tier`, those of them to positions no opening of `st` reaches
    /// (`None` when there are more than the frontier limit).
    fn expand(&self, frontier: &Lines, st: &Distinct, tier: bool) -> Option<(Lines, Lines)> {
        let rules = self.rules;
        let plies = frontier.plies as u32 + 1;
        let (mut next, mut new) = (Lines::new(plies), Lines::new(plies));
        let mut here = PositionSet::default();
        let mut line = Vec::with_capacity(plies as usize);
        for i in 0..frontier.len() {
            let pos = frontier.position(rules, i);
            for pit in pos.legal_moves() {
                let after = pos.play(i64::from(pit)).expect("a legal move");
                if after.is_over()
                    || !here.insert(&after, next.len() as u64, |k| {
                        next.position(rules, k as usize)
                    })
                {
                    continue;
                }
                if next.len() >= self.limits.max_frontier {
                    return None;
                }
                line.clear();
                line.extend_from_slice(frontier.get(i));
                line.push(pit);
                next.push(&line);
                if tier && !st.seen.contains(&after, |n| st.openings.position(rules, n)) {
                    new.push(&line);
                }
            }
        }
        Some((next, new))
    }

    /// Adds the next tier: the new positions after `depth + 1` sowings (from `plies` on).
    fn grow(&self, st: &mut Distinct) {
        loop {
            st.depth += 1;
            let depth = st.depth;
            let mut tier: Lines = match st.frontier.take() {
                Some(frontier) if frontier.len() == 0 => {
                    st.done = true;
                    return;
                }
                Some(frontier) => match self.expand(&frontier, st, depth >= self.plies) {
                    Some((next, new)) => {
                        st.frontier = Some(next);
                        new
                    }
                    None => self.drawn(st, depth),
                },
                None => self.drawn(st, depth),
            };
            if depth < self.plies {
                continue;
            }
            shuffle(tier.len(), self.seed, u64::from(depth), |i, j| {
                tier.swap(i, j)
            });
            let first = st.openings.len;
            let count = tier.len();
            st.openings.tiers.push(tier);
            st.openings.len += count as u64;
            let Distinct { openings, seen, .. } = st;
            for k in 0..count as u64 {
                let n = first + k;
                let pos = openings.position(self.rules, n);
                seen.insert(&pos, n, |m| openings.position(self.rules, m));
            }
            return;
        }
    }

    /// New positions after `depth` sowings drawn at random (beyond the frontiers that are
    /// enumerated), until [`MAX_DRAWN_IN_VAIN`] lines in a row find none: at most as many
    /// as the frontier limit, in the order drawn.
    fn drawn(&self, st: &Distinct, depth: u32) -> Lines {
        let rules = self.rules;
        let mut out = Lines::new(depth);
        let mut here = PositionSet::default();
        let mut vain = 0;
        let mut stream = 0u64;
        while vain < self.limits.max_drawn_in_vain && out.len() < self.limits.max_frontier {
            let line = random_opening(
                rules,
                depth,
                self.seed ^ u64::from(depth).rotate_left(32),
                stream,
            );
            stream += 1;
            if line.len() != depth as usize {
                vain += 1;
                continue;
            }
            let pos = Opening::line(line.clone())
                .position(rules)
                .expect("a legal line");
            if !st.seen.contains(&pos, |n| st.openings.position(rules, n))
                && here.insert(&pos, out.len() as u64, |k| out.position(rules, k as usize))
            {
                out.push(&line);
                vain = 0;
            } else {
                vain += 1;
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::tests::minimax;
    use crate::rules::Sweep;

    /// The lines `d` reaches after `upto` openings: its openings in order and their
    /// positions, checked to be distinct.
    fn distinct_positions(d: &DistinctOpenings, rules: Rules, upto: u64) -> Vec<Opening> {
        let list: Vec<Opening> = (0..upto).map(|n| d.get(n)).collect();
        let positions: HashSet<Position> =
            list.iter().map(|o| o.position(rules).unwrap()).collect();
        assert_eq!(positions.len() as u64, upto, "a position twice");
        list
    }

    /// The openings kept packed are the openings computed before, in the same order, so
    /// that a results folder of an earlier version resumes with the same openings: with a
    /// book and without, enumerated and drawn at random, on a board whose positions run out.
    #[test]
    fn packed_openings_are_the_openings_computed_before_in_the_same_order() {
        let default = Limits {
            max_frontier: MAX_FRONTIER,
            max_drawn_in_vain: MAX_DRAWN_IN_VAIN,
        };
        // Frontiers past 2,000 positions drawn at random, after 300 lines in vain.
        let small = Limits {
            max_frontier: 2_000,
            max_drawn_in_vain: 300,
        };
        let kalah = Rules::default();
        let empty = Rules::new(6, 4, true, Sweep::Owner).unwrap();
        let tiny = Rules::new(2, 1, false, Sweep::Owner).unwrap();
        let cases: [(Rules, u32, u64, bool, Limits, u64); 6] = [
            // The book, then 4, 5 and 6 sowings (23,115 positions).
            (kalah, 4, 0, true, default, 30_000),
            (kalah, 4, 12_345, true, default, 8_000),
            (empty, 4, 7, true, default, 8_000),
            (kalah, 3, 3, false, small, 12_000),
            (
                Rules::new(4, 3, false, Sweep::Owner).unwrap(),
                2,
                5,
                true,
                small,
                6_000,
            ),
            (tiny, 1, 0, false, default, 40),
        ];
        for (rules, plies, seed, book, limits, upto) in cases {
            let book = book.then(|| default_book(rules)).flatten();
            let new = DistinctOpenings::with_limits(rules, plies, seed, book, limits);
            let old = before::Before::new(rules, plies, seed, book, limits);
            let what = format!("{rules}, {plies} sowings, seed {seed}");
            for n in 0..upto {
                assert_eq!(new.get(n), old.get(n), "{what}: opening {n}");
            }
            assert_eq!(new.count_upto(upto), old.count_upto(upto), "{what}");
        }
        // The cases reach tiers drawn at random, and a board whose positions run out.
        let d = DistinctOpenings::with_limits(kalah, 3, 3, None, small);
        let (_, tiers) = d.count_upto(12_000);
        assert!(
            tiers.len() >= 4 && tiers.iter().all(|&(_, n)| n <= 2_000),
            "{tiers:?}"
        );
        assert!(tiers.iter().any(|&(_, n)| n == 2_000), "{tiers:?}");
        let (count, _) = DistinctOpenings::new(tiny, 1, 0, None).count_upto(40);
        assert!(count.is_some_and(|c| c < 20), "{count:?}");
    }

    /// No position is played twice, through the book, tiers enumerated and tiers drawn at
    /// random; and what is kept of each opening is some 30 bytes.
    #[test]
    fn distinct_openings_are_distinct_positions_kept_in_a_few_bytes_each() {
        let rules = Rules::default();
        let d = DistinctOpenings::new(rules, 4, 1, default_book(rules));
        let list = distinct_positions(&d, rules, 30_000);
        assert!(
            list[..1000].iter().all(|o| o.pits.len() == 10),
            "the book's first"
        );
        let st = d.state.lock().unwrap();
        let kept = st.seen.slots.len() * 8
            + st.openings
                .tiers
                .iter()
                .map(|t| t.bytes.len())
                .sum::<usize>();
        let past_book = st.openings.len as usize - st.openings.book.len();
        assert!(past_book > 28_000, "{past_book}");
        assert!(
            kept <= 30 * past_book,
            "{kept} bytes for {past_book} openings"
        );
        drop(st);
        let small = Limits {
            max_frontier: 1_000,
            max_drawn_in_vain: 200,
        };
        let drawn = DistinctOpenings::with_limits(rules, 2, 9, None, small);
        distinct_positions(&drawn, rules, 10_000);
    }

    /// A position set finds each position it holds by the item kept for it, and no other
    /// position: not one whose slot's bits match but whose item reaches another position.
    #[test]
    fn a_position_set_finds_exactly_the_positions_it_holds() {
        let rules = Rules::default();
        let mut frontier = vec![Position::start(rules)];
        let mut all = Vec::new();
        for _ in 0..5 {
            let mut next = Vec::new();
            for p in &frontier {
                for pit in p.legal_moves() {
                    let after = p.play(i64::from(pit)).unwrap();
                    if !after.is_over() {
                        next.push(after);
                    }
                }
            }
            all.extend(next.iter().copied());
            frontier = next;
        }
        let (held, others) = all.split_at(all.len() / 2);
        let mut set = PositionSet::default();
        let mut items: Vec<Position> = Vec::new();
        let mut first = std::collections::HashMap::new();
        for p in held {
            let new = set.insert(p, items.len() as u64, |i| items[i as usize]);
            assert_eq!(new, !first.contains_key(p));
            if new {
                first.insert(*p, items.len() as u64);
                items.push(*p);
            }
        }
        assert_eq!(set.len, first.len());
        assert!(set.len * 4 <= set.slots.len() * 3);
        for p in held {
            assert_eq!(set.find(p, |i| items[i as usize]), first.get(p).copied());
        }
        for p in others {
            let found = set.find(p, |i| items[i as usize]);
            assert_eq!(found, first.get(p).copied(), "{p:?}");
        }
        // A slot whose bits match is taken only when its item reaches the position.
        let mut one = PositionSet::default();
        one.insert(&held[0], 0, |_| unreachable!());
        assert_eq!(one.find(&held[0], |_| held[0]), Some(0));
        assert_eq!(one.find(&held[0], |_| Position::start(rules)), None);
    }

    /// The books shipped are the default of their boards, one a board and every file of
    /// `books/` one of them: at least 1,000 distinct positions each, every line of the
    /// sowings the header names with its recorded value within ±2, and the header gives
    /// the command that makes the book again, for the book's own board.
    #[test]
    fn the_shipped_books_hold_a_thousand_distinct_balanced_positions() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("books");
        let mut files: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|e| {
                let name = e.unwrap().file_name().into_string().unwrap();
                name.strip_suffix(".openings").map(str::to_string)
            })
            .collect();
        files.sort();
        let mut names: Vec<String> = BOOKS.iter().map(|b| b.name.to_string()).collect();
        names.sort();
        assert_eq!(
            names, files,
            "a book of books/ not in BOOKS, or the other way"
        );
        for b in BOOKS {
            let rules =
                Rules::new(b.pits as u32, b.seeds as u32, b.empty_capture, b.sweep).unwrap();
            let (name, book) = default_book(rules).unwrap();
            assert_eq!(name, b.name, "one book a board");
            let ec = if b.empty_capture {
                "-empty-capture"
            } else {
                ""
            };
            assert_eq!(name, format!("kalah-{}x{}{ec}", b.pits, b.seeds));
            let positions: HashSet<Position> =
                book.iter().map(|o| o.position(rules).unwrap()).collect();
            assert_eq!(positions.len(), book.len(), "{name}: a position twice");
            assert!(book.len() >= 1000, "{name}: {} openings", book.len());
            let values: Vec<i32> = b
                .text
                .lines()
                .filter(|l| !l.starts_with('#'))
                .map(|l| {
                    let v = l.split("# value ").nth(1).unwrap();
                    v.trim().parse().unwrap()
                })
                .collect();
            assert_eq!(values.len(), book.len());
            assert!(values.iter().all(|v| v.abs() <= 2), "{name}");
            let command = b
                .text
                .lines()
                .find(|l| l.starts_with("# kalaha openings "))
                .unwrap();
            let plies: usize = command
                .split("--plies ")
                .nth(1)
                .and_then(|r| r.split(' ').next())
                .and_then(|k| k.parse().ok())
                .unwrap_or_else(|| panic!("{command}"));
            assert!(
                book.iter()
                    .all(|o| o.start.is_none() && o.pits.len() == plies)
            );
            let board = format!(
                " --pits {} --seeds {}{} --sweep owner ",
                b.pits,
                b.seeds,
                if b.empty_capture {
                    " --empty-capture"
                } else {
                    ""
                }
            );
            assert!(command.contains(&board), "{command}: not{board}");
            assert!(command.contains("--budget none"), "{command}");
            assert!(command.contains("--max-value 2 "), "{command}");
        }
        for (pits, seeds, sweep) in [
            (6, 5, Sweep::Owner),
            (6, 4, Sweep::EmptySide),
            (3, 3, Sweep::Owner),
        ] {
            for ec in [false, true] {
                let rules = Rules::new(pits, seeds, ec, sweep).unwrap();
                assert!(default_book(rules).is_none(), "{rules}");
            }
        }
    }

    /// `openings --help`'s example finds its five openings; with fewer sowings there are
    /// too few lines, and the error does not suggest a longer budget when every line was
    /// solved.
    #[test]
    fn the_help_example_works_and_a_shortfall_names_only_what_can_help() {
        let rules = Rules::new(4, 3, false, Sweep::Owner).unwrap();
        let spec = OpeningsSpec {
            plies: 3,
            count: 5,
            max_value: 0,
            seed: 0,
            budget: None,
            threads: 1,
            hash_mb: 4,
        };
        let found = balanced_openings(rules, spec, None, &mut |_, _| {}).unwrap();
        assert_eq!(found.len(), 5);
        let short = OpeningsSpec { plies: 2, ..spec };
        let err = balanced_openings(rules, short, None, &mut |_, _| {}).unwrap_err();
        assert!(err.contains("--count") && err.contains("--plies"), "{err}");
        assert!(!err.contains("--budget"), "{err}");
    }

    #[test]
    fn openings_are_distinct_of_k_sowings_and_within_the_value() {
        let rules = Rules::new(3, 3, false, Sweep::Owner).unwrap();
        let spec = OpeningsSpec {
            plies: 2,
            count: 4,
            max_value: 2,
            seed: 7,
            budget: None,
            threads: 2,
            hash_mb: 4,
        };
        let found = balanced_openings(rules, spec, None, &mut |_, _| {}).unwrap();
        assert_eq!(found.len(), 4);
        let again = balanced_openings(
            rules,
            OpeningsSpec { threads: 1, ..spec },
            None,
            &mut |_, _| {},
        )
        .unwrap();
        assert_eq!(
            found, again,
            "the same for the same seed, whatever the threads"
        );
        let text = openings_text(rules, &spec, "-", &found);
        let parsed = parse_openings(&text, rules).unwrap();
        assert_eq!(
            parsed,
            found
                .iter()
                .map(|o| Opening::line(o.pits.clone()))
                .collect::<Vec<_>>()
        );
        let mut memo = std::collections::HashMap::new();
        let mut positions = HashSet::new();
        for o in &found {
            assert_eq!(o.pits.len(), 2);
            let mut pos = Position::start(rules);
            for &p in &o.pits {
                pos = pos.play(p as i64).unwrap();
            }
            assert!(!pos.is_over());
            assert!(
                positions.insert((pos.cells().to_vec(), pos.to_move())),
                "distinct: {found:?}"
            );
            let v = minimax(&pos, &mut memo);
            let south = if pos.to_move() == Side::South { v } else { -v };
            assert_eq!(south, o.value);
            assert!(o.value.abs() <= 2);
        }
        // Asking for more than exist says so.
        let err = balanced_openings(
            rules,
            OpeningsSpec { count: 500, ..spec },
            None,
            &mut |_, _| {},
        )
        .unwrap_err();
        assert!(err.contains("found only"), "{err}");
    }
}

#[cfg(test)]
/// The openings as they were computed before they were kept packed (every position and
/// line whole): the reference the packed ones must equal, opening for opening.
mod before {
    use super::*;

    pub(super) struct Before {
        limits: Limits,
        rules: Rules,
        plies: u32,
        seed: u64,
        state: std::sync::Mutex<Distinct>,
    }

    struct Distinct {
        list: Vec<Opening>,
        seen: HashSet<Position>,
        frontier: Option<Vec<(Position, Vec<u8>)>>,
        depth: u32,
        tiers: Vec<(u32, usize)>,
        done: bool,
    }

    impl Before {
        pub(super) fn new(
            rules: Rules,
            plies: u32,
            seed: u64,
            book: Option<(&str, &[Opening])>,
            limits: Limits,
        ) -> Before {
            let plies = plies.max(1);
            let mut list = Vec::new();
            let mut seen = HashSet::new();
            if let Some((_, openings)) = book {
                for o in openings {
                    if let Ok(pos) = o.position(rules)
                        && seen.insert(pos)
                    {
                        list.push(o.clone());
                    }
                }
                shuffle(list.len(), seed, BOOK_STREAM, |i, j| list.swap(i, j));
            }
            Before {
                limits,
                rules,
                plies,
                seed,
                state: std::sync::Mutex::new(Distinct {
                    list,
                    seen,
                    frontier: Some(vec![(Position::start(rules), Vec::new())]),
                    depth: 0,
                    tiers: Vec::new(),
                    done: false,
                }),
            }
        }

        pub(super) fn get(&self, n: u64) -> Opening {
            let mut st = self.state.lock().expect("openings lock");
            while (st.list.len() as u64) <= n && !st.done {
                self.grow(&mut st);
            }
            if st.list.is_empty() {
                // No line of `plies` sowings leaves the game going: the longest that does.
                return Opening::line(random_opening(self.rules, self.plies, self.seed, n));
            }
            st.list[(n % st.list.len() as u64) as usize].clone()
        }

        pub(super) fn count_upto(&self, upto: u64) -> (Option<u64>, Vec<(u32, usize)>) {
            let upto = upto.min(COUNTED_AT_START);
            let mut st = self.state.lock().expect("openings lock");
            while !st.done && ((st.list.len() as u64) < upto || st.tiers.is_empty()) {
                self.grow(&mut st);
            }
            let n = st.list.len() as u64;
            ((st.done || n < upto).then_some(n), st.tiers.clone())
        }

        fn expand(&self, frontier: &[(Position, Vec<u8>)]) -> Option<Vec<(Position, Vec<u8>)>> {
            let mut next = Vec::new();
            let mut here = HashSet::new();
            for (pos, line) in frontier {
                for pit in pos.legal_moves() {
                    let after = pos.play(i64::from(pit)).expect("a legal move");
                    if !after.is_over() && here.insert(after) {
                        if next.len() >= self.limits.max_frontier {
                            return None;
                        }
                        let mut l = line.clone();
                        l.push(pit);
                        next.push((after, l));
                    }
                }
            }
            Some(next)
        }

        fn grow(&self, st: &mut Distinct) {
            loop {
                st.depth += 1;
                let depth = st.depth;
                let mut tier: Vec<Opening> = match st.frontier.take() {
                    Some(frontier) if frontier.is_empty() => {
                        st.done = true;
                        return;
                    }
                    Some(frontier) => match self.expand(&frontier) {
                        Some(next) => {
                            let tier = if depth >= self.plies {
                                next.iter()
                                    .filter(|(p, _)| !st.seen.contains(p))
                                    .map(|(_, l)| Opening::line(l.clone()))
                                    .collect()
                            } else {
                                Vec::new()
                            };
                            st.frontier = Some(next);
                            tier
                        }
                        None => self.drawn(st, depth),
                    },
                    None => self.drawn(st, depth),
                };
                if depth < self.plies {
                    continue;
                }
                shuffle(tier.len(), self.seed, u64::from(depth), |i, j| {
                    tier.swap(i, j)
                });
                for o in &tier {
                    st.seen
                        .insert(o.position(self.rules).expect("a legal line"));
                }
                st.tiers.push((depth, tier.len()));
                st.list.extend(tier);
                return;
            }
        }

        fn drawn(&self, st: &mut Distinct, depth: u32) -> Vec<Opening> {
            let mut out = Vec::new();
            let mut here = HashSet::new();
            let mut vain = 0;
            let mut stream = 0u64;
            while vain < self.limits.max_drawn_in_vain && out.len() < self.limits.max_frontier {
                let line = random_opening(
                    self.rules,
                    depth,
                    self.seed ^ u64::from(depth).rotate_left(32),
                    stream,
                );
                stream += 1;
                if line.len() != depth as usize {
                    vain += 1;
                    continue;
                }
                let pos = Opening::line(line.clone())
                    .position(self.rules)
                    .expect("a legal line");
                if !st.seen.contains(&pos) && here.insert(pos) {
                    out.push(Opening::line(line));
                    vain = 0;
                } else {
                    vain += 1;
                }
            }
            out
        }
    }
}
