//! Streaming aggregation of finished games into per-engine and per-pairing counts, and the
//! standings computed from them.
//!
//! Memory grows with the number of engines and pairings, not with the number of games, with
//! two exceptions that are unavoidable for exact results:
//! - **Duplicate game ids.** Every id is remembered to ignore a game seen twice (shards or
//!   files given twice). Ids of the form `<tournament id>-<game number>` are stored as one
//!   bit per game number in 1024-bit blocks per tournament (about one bit per game for
//!   dense numbering); any other id is stored as a 128-bit hash (16 bytes per game; the
//!   chance of a false duplicate is negligible, about n²/2¹²⁹).
//! - **Open game pairs.** The first game of a pair waits (a few bytes) until its partner
//!   arrives; a pair whose partner never arrives counts in the game statistics only.
//!
//! A pair is identified by the tournament id (the game id's prefix), the `pair` column and
//! the two engines, so pairs of different tournaments never mix.
//!
//! Games with termination `interrupted` are ignored (a resumed tournament plays them again),
//! and so are games of an engine against itself.

use super::elo::{Estimate, MeanAcc, Pentanomial, Wdl};
use crate::record::{FaultKind, GameRow, Termination};
use crate::rules::Side;
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};

mod standings;

pub use standings::{GroupInfo, H2hRow, StandingRow, Standings, UnknownEngine};

/// What [`Tally::add`] did with a game.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Added {
    /// Counted; `completed_pair` when it was the second game of its game pair.
    Counted { completed_pair: bool },
    /// The game id was seen before.
    Duplicate,
    /// Interrupted, or an engine against itself.
    Ignored,
    /// It repeats an earlier game move for move: counted apart, not as evidence.
    Repeat,
}

/// Faults charged to an engine, by kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Faults([u64; FaultKind::ALL.len()]);

impl Faults {
    pub fn count(&self, kind: FaultKind) -> u64 {
        self.0[kind.index()]
    }

    pub fn add(&mut self, kind: FaultKind) {
        self.0[kind.index()] += 1;
    }

    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }
}

/// A map of each fault kind (its `as_str`) to its count.
impl serde::Serialize for Faults {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(FaultKind::ALL.len()))?;
        for kind in FaultKind::ALL {
            map.serialize_entry(kind.as_str(), &self.count(kind))?;
        }
        map.end()
    }
}

/// One engine's pooled results against all opponents.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EngineTally {
    pub name: String,
    pub wdl: Wdl,
    pub penta: Pentanomial,
    /// Own store minus the opponent's, per game.
    pub margin: MeanAcc,
    pub faults: Faults,
}

/// Results of one pairing from its first engine's point of view.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PairingTally {
    pub wdl: Wdl,
    pub penta: Pentanomial,
    pub margin: MeanAcc,
}

impl PairingTally {
    /// Whether the pair statistics are used: at least one game pair is complete. Pairs
    /// (each opening played with the seats swapped) cancel the opening's bias, so their
    /// variance is the honest one; games whose partner is missing are then left out.
    pub fn by_pairs(&self) -> bool {
        self.penta.pairs() > 0
    }

    /// The Elo difference with its 95% interval: from the game pairs when
    /// [`by_pairs`](Self::by_pairs), else from the games.
    pub fn elo(&self) -> Estimate {
        if self.by_pairs() {
            self.penta.elo()
        } else {
            self.wdl.elo()
        }
    }

    /// Normalized Elo with its 95% interval (pairs or games as for [`elo`](Self::elo));
    /// NaN for both when the results have no spread.
    pub fn nelo(&self) -> Estimate {
        if self.by_pairs() {
            self.penta.nelo().or_undefined()
        } else {
            self.wdl.nelo().or_undefined()
        }
    }

    /// Likelihood of superiority (pairs or games as for [`elo`](Self::elo)).
    pub fn los(&self) -> f64 {
        if self.by_pairs() {
            self.penta.los()
        } else {
            self.wdl.los()
        }
    }

    /// The same results from the other engine's point of view.
    pub fn flipped(self) -> PairingTally {
        PairingTally {
            wdl: self.wdl.flipped(),
            penta: self.penta.flipped(),
            margin: self.margin.negated(),
        }
    }
}

/// The game ids seen so far (see the module documentation for the representation).
#[derive(Clone, Debug, Default)]
struct GameIds {
    blocks: HashMap<(u32, u64), Box<[u64; 16]>>,
    hashed: HashSet<u128>,
}

fn hash128(s: &str) -> u128 {
    let mut h1 = std::hash::DefaultHasher::new();
    s.hash(&mut h1);
    let mut h2 = std::hash::DefaultHasher::new();
    0x9e37_79b9_7f4a_7c15u64.hash(&mut h2);
    s.hash(&mut h2);
    (u128::from(h1.finish()) << 64) | u128::from(h2.finish())
}

impl GameIds {
    /// Records an id; false if it was already there.
    fn insert(&mut self, tournament: Option<(u32, u64)>, id: &str) -> bool {
        match tournament {
            Some((t, number)) => {
                let block = self
                    .blocks
                    .entry((t, number / 1024))
                    .or_insert_with(|| Box::new([0; 16]));
                let bit = number % 1024;
                let (word, mask) = ((bit / 64) as usize, 1u64 << (bit % 64));
                let fresh = block[word] & mask == 0;
                block[word] |= mask;
                fresh
            }
            None => self.hashed.insert(hash128(id)),
        }
    }
}

/// Where a pair's first game waits for its partner.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct PairKey {
    tournament: u32,
    pair: u64,
    lo: u32,
    hi: u32,
}

/// Streaming aggregation of games; feed it with [`Tally::add`].
#[derive(Clone, Debug, Default)]
pub struct Tally {
    names: HashMap<Box<str>, u32>,
    engines: Vec<EngineTally>,
    pairings: HashMap<(u32, u32), PairingTally>,
    tournaments: HashMap<Box<str>, u32>,
    ids: GameIds,
    /// First game of a pair: the lower engine's half points in it.
    open_pairs: HashMap<PairKey, u8>,
    games: u64,
    duplicates: u64,
    ignored: u64,
    repeats: u64,
}

impl Tally {
    pub fn new() -> Tally {
        Tally::default()
    }

    fn engine(&mut self, name: &str) -> u32 {
        if let Some(&i) = self.names.get(name) {
            return i;
        }
        let i = self.engines.len() as u32;
        self.names.insert(name.into(), i);
        self.engines.push(EngineTally {
            name: name.to_string(),
            ..EngineTally::default()
        });
        i
    }

    fn tournament(&mut self, prefix: &str) -> u32 {
        if let Some(&i) = self.tournaments.get(prefix) {
            return i;
        }
        let i = self.tournaments.len() as u32;
        self.tournaments.insert(prefix.into(), i);
        i
    }

    /// Adds one finished game.
    pub fn add(&mut self, row: &GameRow<'_>) -> Added {
        if row.termination == Termination::Interrupted || row.south == row.north {
            self.ignored += 1;
            return Added::Ignored;
        }
        let (prefix, number) = match row.game.rsplit_once('-') {
            Some((p, n)) => (p, n.parse::<u64>().ok()),
            None => ("", row.game.parse::<u64>().ok()),
        };
        let tournament = self.tournament(prefix);
        if !self.ids.insert(number.map(|n| (tournament, n)), row.game) {
            self.duplicates += 1;
            return Added::Duplicate;
        }
        if row.repeat {
            // A game played again move for move says nothing new about the engines.
            self.repeats += 1;
            return Added::Repeat;
        }
        self.games += 1;
        let south = self.engine(row.south);
        let north = self.engine(row.north);
        let south_hp = row.result.half_points(Side::South);
        // Margins come from games that ended on the board: the stores at a fault say
        // nothing of the play (the winner may even be behind).
        let ended_on_board = matches!(
            row.termination,
            Termination::Normal | Termination::Adjudicated
        );
        let margin = match (row.south_score, row.north_score) {
            (Some(s), Some(n)) if ended_on_board => Some(f64::from(s) - f64::from(n)),
            _ => None,
        };

        for (me, hp, sign) in [(south, south_hp, 1.0), (north, 2 - south_hp, -1.0)] {
            let e = &mut self.engines[me as usize];
            e.wdl.add_half_points(hp);
            if let Some(m) = margin {
                e.margin.push(sign * m);
            }
        }
        let (lo, hi) = (south.min(north), south.max(north));
        let lo_hp = if lo == south { south_hp } else { 2 - south_hp };
        let p = self.pairings.entry((lo, hi)).or_default();
        p.wdl.add_half_points(lo_hp);
        if let Some(m) = margin {
            p.margin.push(if lo == south { m } else { -m });
        }

        if let (Some(kind), Some(side)) = (row.termination.fault(), row.loser) {
            let loser = if side == Side::South { south } else { north };
            self.engines[loser as usize].faults.add(kind);
        }

        let mut completed_pair = false;
        if let Some(pair) = row.pair {
            let key = PairKey {
                tournament,
                pair,
                lo,
                hi,
            };
            if let Some(first) = self.open_pairs.remove(&key) {
                let total = first + lo_hp;
                self.pairings
                    .get_mut(&(lo, hi))
                    .expect("pairing")
                    .penta
                    .add_pair(total);
                self.engines[lo as usize].penta.add_pair(total);
                self.engines[hi as usize].penta.add_pair(4 - total);
                completed_pair = true;
            } else {
                self.open_pairs.insert(key, lo_hp);
            }
        }
        Added::Counted { completed_pair }
    }

    /// Counted games.
    pub fn games(&self) -> u64 {
        self.games
    }

    /// Games whose id had been seen before.
    pub fn duplicates(&self) -> u64 {
        self.duplicates
    }

    /// Interrupted games and games of an engine against itself.
    pub fn ignored(&self) -> u64 {
        self.ignored
    }

    /// Games that repeat an earlier game move for move, left out of every count.
    pub fn repeats(&self) -> u64 {
        self.repeats
    }

    /// Games whose pair partner has not (yet) been seen.
    pub fn unpaired(&self) -> u64 {
        self.open_pairs.len() as u64
    }

    /// Every engine seen, in order of first appearance.
    pub fn engines(&self) -> &[EngineTally] {
        &self.engines
    }

    /// The index of an engine by name.
    pub fn engine_index(&self, name: &str) -> Option<usize> {
        self.names.get(name).map(|&i| i as usize)
    }

    /// The results of `a` against `b` from `a`'s point of view.
    pub fn pairing(&self, a: usize, b: usize) -> Option<PairingTally> {
        let (lo, hi) = (a.min(b) as u32, a.max(b) as u32);
        let p = *self.pairings.get(&(lo, hi))?;
        Some(if a as u32 == lo { p } else { p.flipped() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn row<'a>(
        game: &'a str,
        pair: &'a str,
        south: &'a str,
        north: &'a str,
        result: &str,
    ) -> GameRow<'a> {
        GameRow {
            game,
            pair: pair.parse().ok(),
            south,
            north,
            result: result.parse().unwrap(),
            south_score: Some(if result == "1-0" { 40 } else { 30 }),
            north_score: Some(if result == "0-1" { 40 } else { 30 }),
            termination: Termination::Normal,
            loser: None,
            repeat: false,
        }
    }

    proptest::proptest! {
        /// The order in which games arrive (shards, concurrency) changes nothing.
        #[test]
        fn order_does_not_matter(
            games in proptest::collection::vec((0usize..4, 0usize..4, 0u8..3, 0u8..3), 1..40),
            seed in 0u64..1000,
        ) {
            let names = ["a", "b", "c", "d"];
            let mut rows = Vec::new();
            for (k, &(x, y, r1, r2)) in games.iter().enumerate() {
                let (a, b) = (names[x], names[(x + 1 + y % 3) % 4]);
                let res = |r: u8| ["1-0", "1/2-1/2", "0-1"][r as usize];
                rows.push((format!("t-{}", 2 * k), k.to_string(), a, b, res(r1)));
                rows.push((format!("t-{}", 2 * k + 1), k.to_string(), b, a, res(r2)));
            }
            let tally_of = |rows: &[(String, String, &str, &str, &str)]| {
                let mut t = Tally::new();
                for (id, pair, s, n, r) in rows {
                    t.add(&row(id, pair, s, n, r));
                }
                t
            };
            let t1 = tally_of(&rows);
            // A deterministic shuffle.
            let mut shuffled = rows.clone();
            let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
            for i in (1..shuffled.len()).rev() {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                shuffled.swap(i, (state >> 33) as usize % (i + 1));
            }
            let t2 = tally_of(&shuffled);
            proptest::prop_assert_eq!(t2.unpaired(), 0);
            for name in names {
                let (Some(i), Some(j)) = (t1.engine_index(name), t2.engine_index(name)) else {
                    continue;
                };
                let (e1, e2) = (&t1.engines()[i], &t2.engines()[j]);
                proptest::prop_assert_eq!(e1.wdl, e2.wdl);
                proptest::prop_assert_eq!(e1.penta, e2.penta);
                proptest::prop_assert_eq!(e1.wdl.games(), 2 * e1.penta.pairs());
            }
            let s1 = t1.standings(None).unwrap();
            let s2 = t2.standings(None).unwrap();
            for r1 in &s1.rows {
                let r2 = s2.rows.iter().find(|r| r.engine == r1.engine).unwrap();
                proptest::prop_assert!((r1.elo.value - r2.elo.value).abs() < 1e-6);
            }
        }
    }

    /// Equal Elo and score: the larger seed margin ranks first, whatever the names.
    #[test]
    fn a_tie_goes_to_the_larger_margin() {
        let mut t = Tally::new();
        let mut won = row("t-1", "1", "zed", "amy", "1-0");
        (won.south_score, won.north_score) = (Some(40), Some(8));
        t.add(&won);
        let mut lost = row("t-2", "1", "amy", "zed", "1-0");
        (lost.south_score, lost.north_score) = (Some(26), Some(22));
        t.add(&lost);
        let s = t.standings(None).unwrap();
        let order: Vec<&str> = s.rows.iter().map(|r| r.engine.as_str()).collect();
        assert_eq!(order, ["zed", "amy"]);
    }

    #[test]
    fn pairs_duplicates_and_faults() {
        let mut t = Tally::new();
        let counted = |completed_pair| Added::Counted { completed_pair };
        assert_eq!(t.add(&row("t1-1", "1", "a", "b", "1-0")), counted(false));
        assert_eq!(t.add(&row("t1-2", "1", "b", "a", "1/2-1/2")), counted(true));
        assert_eq!(
            t.add(&row("t1-2", "1", "b", "a", "1/2-1/2")),
            Added::Duplicate
        );
        // Same pair number in another tournament: a separate pair.
        assert_eq!(t.add(&row("t2-1", "1", "a", "b", "0-1")), counted(false));
        let mut fault = row("t1-3", "2", "b", "a", "1-0");
        fault.termination = Termination::Fault(FaultKind::Timeout);
        fault.loser = Some(Side::North);
        t.add(&fault);
        let mut interrupted = row("t1-4", "2", "a", "b", "1-0");
        interrupted.termination = Termination::Interrupted;
        assert_eq!(t.add(&interrupted), Added::Ignored);
        assert_eq!(t.add(&row("odd id", "", "a", "b", "1-0")), counted(false));
        assert_eq!(t.add(&row("odd id", "", "a", "b", "1-0")), Added::Duplicate);

        assert_eq!(t.games(), 5);
        assert_eq!(t.duplicates(), 2);
        assert_eq!(t.unpaired(), 2);
        let a = t.engine_index("a").unwrap();
        let b = t.engine_index("b").unwrap();
        let ab = t.pairing(a, b).unwrap();
        assert_eq!(ab.wdl, Wdl::new(2, 1, 2));
        assert_eq!(ab.penta, Pentanomial([0, 0, 0, 1, 0]));
        assert_eq!(t.pairing(b, a).unwrap().penta, Pentanomial([0, 1, 0, 0, 0]));
        assert_eq!(t.engines()[a].faults.count(FaultKind::Timeout), 1);
        assert_eq!(t.engines()[b].faults.total(), 0);
        // margins from a's view: +10, 0, -10, +10; none from the game lost by a fault
        assert_eq!(ab.margin.n, 4);
        assert_eq!(ab.margin.estimate().value, 2.5);
        assert_eq!(t.engines()[a].margin.n, 4);
        let s = t.standings(None).unwrap();
        assert_eq!(s.rows.len(), 2);
        assert_eq!(s.h2h_rows().count(), 2);
        assert_eq!(s.pairings().len(), 1);
        assert!((s.rows[0].elo.value + s.rows[1].elo.value).abs() < 1e-9);
        assert!(t.standings(Some(("zz", 0.0))).is_err());
    }
}
