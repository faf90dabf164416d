//! Standings from a [`Tally`]: the ratings fit, the engines ranked by it, and the pairings
//! that met in the same order (time and memory linear in the number of pairings, never in
//! the square of the number of engines).

use super::{Faults, PairingTally, Tally};
use crate::stats::elo::{Estimate, Pentanomial, Wdl};
use crate::stats::ratings::{self, PairingScore};
use std::collections::HashMap;

impl Tally {
    /// Computes ratings and standings; `anchor` fixes one engine's Elo.
    ///
    /// Costs a ratings fit plus time and memory linear in the number of pairings that met
    /// (never in the square of the number of engines).
    pub fn standings(&self, anchor: Option<(&str, f64)>) -> Result<Standings, UnknownEngine> {
        let anchor = match anchor {
            Some((name, elo)) => Some((
                self.engine_index(name)
                    .ok_or_else(|| UnknownEngine(name.to_string()))?,
                elo,
            )),
            None => None,
        };
        let mut scores: Vec<PairingScore> = self
            .pairings
            .iter()
            .map(|(&(a, b), p)| PairingScore {
                a: a as usize,
                b: b as usize,
                games: p.wdl.games() as f64,
                points: p.wdl.points(),
            })
            .collect();
        // In a fixed order, not the hash map's (which differs between processes): the
        // same games give the same ratings to the last digit.
        scores.sort_by_key(|p| (p.a, p.b));
        let fit = ratings::fit(self.engines.len(), &scores, anchor);
        drop(scores);
        let mut order: Vec<usize> = (0..self.engines.len()).collect();
        order.sort_by(|&x, &y| {
            fit.ratings[y]
                .elo
                .total_cmp(&fit.ratings[x].elo)
                .then(
                    self.engines[y]
                        .wdl
                        .score()
                        .total_cmp(&self.engines[x].wdl.score()),
                )
                // Then the larger seed margin (no margin counts as the least).
                .then({
                    let margin = |i: usize| {
                        let m = self.engines[i].margin.estimate().value;
                        if m.is_nan() { f64::NEG_INFINITY } else { m }
                    };
                    margin(y).total_cmp(&margin(x))
                })
                .then(self.engines[x].name.cmp(&self.engines[y].name))
        });
        let rows: Vec<StandingRow> = order
            .iter()
            .enumerate()
            .map(|(rank, &i)| {
                let e = &self.engines[i];
                let r = fit.ratings[i];
                StandingRow {
                    rank: rank + 1,
                    index: i,
                    engine: e.name.clone(),
                    wdl: e.wdl,
                    penta: e.penta,
                    elo: Estimate {
                        value: r.elo,
                        error: r.error,
                    },
                    margin: e.margin.estimate(),
                    faults: e.faults,
                    group: r.group,
                }
            })
            .collect();
        let groups = fit
            .groups
            .iter()
            .map(|g| GroupInfo {
                engines: g
                    .members
                    .iter()
                    .map(|&m| self.engines[m].name.clone())
                    .collect(),
                regularized: g.regularized,
                anchored: g.anchored,
            })
            .collect();
        let meetings = Meetings::new(&self.pairings, &order);
        Ok(Standings {
            rows,
            meetings,
            groups,
            games: self.games,
            duplicates: self.duplicates,
            ignored: self.ignored,
            unpaired: self.unpaired(),
            anchor: anchor.map(|(i, elo)| (self.engines[i].name.clone(), elo)),
        })
    }
}

/// An anchor names an engine that played no game.
#[derive(Debug, thiserror::Error)]
#[error(
    "failed to anchor the ratings: no engine named {0:?} played a counted game (check the \
     spelling against the south and north columns of games.csv)"
)]
pub struct UnknownEngine(pub String);

/// One engine's line in the standings (serialised as it is in the `standings` event of
/// `--events`).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct StandingRow {
    pub rank: usize,
    /// Index in [`Tally::engines`].
    pub index: usize,
    pub engine: String,
    pub wdl: Wdl,
    pub penta: Pentanomial,
    /// The joint Bradley-Terry rating (see [`crate::stats::ratings`]), the one ranking of every
    /// report.
    pub elo: Estimate,
    /// Mean seed margin (own store minus the opponent's).
    pub margin: Estimate,
    pub faults: Faults,
    /// Index in [`Standings::groups`].
    pub group: usize,
}

/// The results of one engine against one opponent.
///
/// Normalized Elo belongs here, to a pairing: an engine's results pooled over different
/// opponents mix opponents of different strength, so a per-engine normalized Elo would not
/// be on a common scale.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct H2hRow {
    /// Index in [`Tally::engines`] (and [`StandingRow::index`]).
    pub engine_index: usize,
    pub opponent_index: usize,
    /// From the engine's point of view.
    pub tally: PairingTally,
}

/// A set of engines linked by games (ratings of different groups are not comparable).
#[derive(Clone, Debug, PartialEq)]
pub struct GroupInfo {
    pub engines: Vec<String>,
    pub regularized: bool,
    pub anchored: bool,
}

/// The pairings that met, in standings order, and for each engine its opponents.
///
/// One entry per unordered pairing, from the higher-ranked engine's point of view, sorted by
/// the ranks of (engine, opponent); each engine's meetings are kept as positions in that
/// list, sorted by the opponent's rank (a compressed adjacency list).
#[derive(Clone, Debug, Default, PartialEq)]
struct Meetings {
    pairings: Vec<H2hRow>,
    /// Rank position (0-based) of each engine index.
    position: Vec<u32>,
    /// `adjacency[start[i]..start[i + 1]]`: engine `i`'s entries in `pairings`.
    start: Vec<u32>,
    adjacency: Vec<u32>,
}

impl Meetings {
    fn new(tallies: &HashMap<(u32, u32), PairingTally>, order: &[usize]) -> Meetings {
        let mut position = vec![0u32; order.len()];
        for (rank, &i) in order.iter().enumerate() {
            position[i] = rank as u32;
        }
        let mut pairings: Vec<H2hRow> = tallies
            .iter()
            .map(|(&(a, b), &tally)| {
                let (a, b) = (a as usize, b as usize);
                if position[a] < position[b] {
                    H2hRow {
                        engine_index: a,
                        opponent_index: b,
                        tally,
                    }
                } else {
                    H2hRow {
                        engine_index: b,
                        opponent_index: a,
                        tally: tally.flipped(),
                    }
                }
            })
            .collect();
        pairings.sort_unstable_by_key(|h| (position[h.engine_index], position[h.opponent_index]));
        let mut start = vec![0u32; order.len() + 1];
        for h in &pairings {
            start[h.engine_index + 1] += 1;
            start[h.opponent_index + 1] += 1;
        }
        for i in 0..order.len() {
            start[i + 1] += start[i];
        }
        // Filling in list order gives each engine its opponents in rank order: first those
        // ranked above it (as the opponent of theirs), then those below (as the engine).
        let mut next = start.clone();
        let mut adjacency = vec![0u32; 2 * pairings.len()];
        for (k, h) in pairings.iter().enumerate() {
            for i in [h.engine_index, h.opponent_index] {
                adjacency[next[i] as usize] = k as u32;
                next[i] += 1;
            }
        }
        Meetings {
            pairings,
            position,
            start,
            adjacency,
        }
    }

    /// Entry `k` of `pairings` from engine `i`'s point of view.
    fn oriented(&self, i: usize, k: u32) -> H2hRow {
        let h = self.pairings[k as usize];
        if h.engine_index == i {
            h
        } else {
            H2hRow {
                engine_index: i,
                opponent_index: h.engine_index,
                tally: h.tally.flipped(),
            }
        }
    }

    /// Engine `i`'s entries in `pairings`, by the opponent's rank.
    fn list(&self, i: usize) -> &[u32] {
        &self.adjacency[self.start[i] as usize..self.start[i + 1] as usize]
    }
}

/// Ratings, standings and head-to-head results.
#[derive(Clone, Debug, PartialEq)]
pub struct Standings {
    /// Sorted by rating, best first.
    pub rows: Vec<StandingRow>,
    pub groups: Vec<GroupInfo>,
    pub games: u64,
    pub duplicates: u64,
    pub ignored: u64,
    pub unpaired: u64,
    pub anchor: Option<(String, f64)>,
    meetings: Meetings,
}

impl Standings {
    /// The row of the engine with index `i` (see [`StandingRow::index`]).
    pub fn row_of(&self, i: usize) -> &StandingRow {
        &self.rows[self.meetings.position[i] as usize]
    }

    /// The results of `a` against `b` (engine indices), if they met.
    pub fn h2h(&self, a: usize, b: usize) -> Option<H2hRow> {
        let m = &self.meetings;
        let list = m.list(a);
        let at = list
            .binary_search_by_key(&m.position[b], |&k| {
                m.position[m.oriented(a, k).opponent_index]
            })
            .ok()?;
        Some(m.oriented(a, list[at]))
    }

    /// Every ordered pair of engines that met, in standings order (engine, then opponent).
    pub fn h2h_rows(&self) -> impl Iterator<Item = H2hRow> + '_ {
        let m = &self.meetings;
        self.rows
            .iter()
            .flat_map(move |r| m.list(r.index).iter().map(move |&k| m.oriented(r.index, k)))
    }

    /// Every pairing that met once, from the higher-ranked engine's point of view, in
    /// standings order.
    pub fn pairings(&self) -> &[H2hRow] {
        &self.meetings.pairings
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::row;
    use super::*;

    proptest::proptest! {
        /// The head-to-head lists built from the pairings that met equal the obvious double
        /// loop over every ordered pair of engines in standings order.
        #[test]
        fn h2h_equals_the_double_loop(
            games in proptest::collection::vec((0usize..7, 0usize..7, 0u8..3), 0..60),
        ) {
            let mut t = Tally::new();
            for (k, &(a, b, r)) in games.iter().enumerate() {
                let res = ["1-0", "1/2-1/2", "0-1"][r as usize];
                let (a, b) = (format!("e{a}"), format!("e{b}"));
                t.add(&row(&format!("t-{k}"), "", &a, &b, res));
            }
            let s = t.standings(None).unwrap();
            let mut slow = Vec::new();
            for x in &s.rows {
                for y in &s.rows {
                    if let (true, Some(p)) = (x.index != y.index, t.pairing(x.index, y.index)) {
                        slow.push((x.index, y.index, p));
                    }
                }
            }
            let fast: Vec<_> = s
                .h2h_rows()
                .map(|h| (h.engine_index, h.opponent_index, h.tally))
                .collect();
            proptest::prop_assert_eq!(&fast, &slow);
            proptest::prop_assert_eq!(s.pairings().len() * 2, slow.len());
            for &(a, b, p) in &slow {
                proptest::prop_assert_eq!(s.h2h(a, b).map(|h| h.tally), Some(p));
                proptest::prop_assert_eq!(s.row_of(a).index, a);
            }
            for h in s.pairings() {
                proptest::prop_assert!(s.row_of(h.engine_index).rank < s.row_of(h.opponent_index).rank);
            }
            for x in &s.rows {
                for y in &s.rows {
                    if t.pairing(x.index, y.index).is_none() {
                        proptest::prop_assert!(s.h2h(x.index, y.index).is_none());
                    }
                }
            }
        }
    }
}
