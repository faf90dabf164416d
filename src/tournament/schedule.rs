//! The schedule: which engines meet, in which seats, from which opening, in which order.
//!
//! It is a pure function of the configuration and the seed and is produced lazily: game
//! `n` is computed when it is reached, so a schedule of millions of games costs nothing.
//!
//! Layout: the pairings (every pair of engines for a round robin; the first engine against
//! each other one for a gauntlet) are played in rounds; round `r` holds one game pair of
//! every pairing, all from opening `r`. Pair `p` (0-based, over the whole tournament) is
//! pairing `p % K` in round `p / K`; its two games are numbers `2p + 1` and `2p + 2`, the
//! second with the seats swapped. Shard `k/N` takes the pairs with `p % N == k - 1`.

use crate::rules::Rules;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

pub(crate) use crate::analysis::{DistinctOpenings, parse_openings};
use crate::record::{Opening, counted};

/// Which engines meet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScheduleKind {
    /// Every engine against every other.
    #[default]
    RoundRobin,
    /// The first engine against each of the others.
    Gauntlet,
}

impl ScheduleKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ScheduleKind::RoundRobin => "round_robin",
            ScheduleKind::Gauntlet => "gauntlet",
        }
    }
}

/// Where openings come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Openings {
    /// Every game from the rules' start position (`--opening-plies 0`).
    Start,
    /// Distinct positions: a book's first when there is one, then those after random
    /// sowings (see [`DistinctOpenings`]).
    Distinct(Arc<DistinctOpenings>),
    /// A fixed list (from `--openings FILE`), used in order and played again from its
    /// first once all are played.
    List(Arc<Vec<Opening>>),
}

impl Openings {
    /// The opening of round `round` (0-based).
    pub fn get(&self, round: u64) -> Opening {
        match self {
            Openings::Start => Opening::default(),
            Openings::Distinct(d) => d.get(round),
            Openings::List(list) => list[(round % list.len() as u64) as usize].clone(),
        }
    }

    /// Whether a game of a run of `rounds` rounds can repeat an earlier one move for move
    /// with the same engines in the same seats ([`GameRecord::repeat_key`]): every game
    /// from the start; a list played again, holding a position twice, or of openings of
    /// more than one shape (start and number of sowings); distinct positions that run out
    /// or come in more than one shape within the rounds
    /// ([`DistinctOpenings::can_repeat_within`]). Openings of one shape, each played once,
    /// are distinct lines: no game can then be another's, and nothing need be kept to
    /// compare with.
    ///
    /// [`GameRecord::repeat_key`]: crate::record::GameRecord::repeat_key
    pub fn can_repeat(&self, rounds: u64, rules: Rules) -> bool {
        match self {
            Openings::Start => rounds > 1,
            Openings::List(list) => {
                if rounds > list.len() as u64 {
                    return true;
                }
                let mut positions = std::collections::HashSet::new();
                let mut shapes = std::collections::HashSet::new();
                for o in list.iter().take(rounds as usize) {
                    shapes.insert((o.start.as_ref().map(|b| b.to_string()), o.pits.len()));
                    if !positions.insert(o.position(rules).ok()) {
                        return true;
                    }
                }
                shapes.len() > 1
            }
            Openings::Distinct(d) => d.can_repeat_within(rounds),
        }
    }

    /// What a run of `rounds` rounds plays, in a line for its start, and a note when the
    /// openings run short of the rounds: the book or the sowings give fewer distinct
    /// positions (more sowings follow), or the file is played again.
    pub fn describe(&self, rounds: u64) -> (String, Option<String>) {
        match self {
            Openings::Start => (
                "openings: none, every game from the start position".to_string(),
                None,
            ),
            Openings::List(list) => {
                let n = list.len() as u64;
                let what = format!("openings: {} given, in order", counted(n, "opening"));
                let note = (rounds > n).then(|| {
                    format!(
                        "note: the {} given (an openings file, opening_list or balanced \
                         openings) are fewer than the {} rounds (game pairs of each pairing): \
                         they are played again from the first after round {n}, in the same \
                         order, and a game that repeats an earlier one move for move is \
                         counted apart",
                        counted(n, "opening"),
                        rounds
                    )
                });
                (what, note)
            }
            Openings::Distinct(d) => {
                let plies = d.plies();
                let (count, tiers) = d.count_upto(rounds);
                let what = match d.book() {
                    Some((name, n)) => format!(
                        "openings: {} distinct positions of the book {name}, in an order fixed by \
                         --seed, then distinct positions after {plies} or more random sowings",
                        n
                    ),
                    None => format!(
                        "openings: distinct positions after {plies} random sowings (a new one each round: the pairings of a round share it)"
                    ),
                };
                let first = d.book().map(|(_, n)| n as u64);
                let at_plies = tiers
                    .iter()
                    .find(|(k, _)| *k == plies)
                    .map(|&(_, n)| n as u64);
                let note = match (first, at_plies) {
                    (_, _) if count.is_some_and(|c| c < rounds) => Some(format!(
                        "note: only {} distinct positions can be reached for {rounds} rounds (game \
                         pairs of each pairing): they are played again in the same order after \
                         round {}",
                        count.unwrap_or(0),
                        count.unwrap_or(0)
                    )),
                    (Some(b), _) if rounds > b => Some(format!(
                        "note: the book holds {b} positions for up to {rounds} rounds (game pairs \
                         of each pairing): the rounds after the first {b} take distinct positions after \
                         {plies} or more random sowings"
                    )),
                    (None, Some(n)) if rounds > n => Some(format!(
                        "note: {plies} sowings reach {n} distinct positions, fewer than the \
                         {rounds} rounds (game pairs of each pairing): the rounds after the first {n} \
                         take positions after {} or more sowings",
                        plies + 1
                    )),
                    _ => None,
                };
                (what, note)
            }
        }
    }
}

/// The most games a tournament may have (far beyond any real one; game numbers stay exact
/// in every JSON reader).
pub const MAX_GAMES: u64 = 1 << 50;

/// One scheduled game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScheduledGame {
    /// 1-based number over the whole tournament (all shards): the game id's suffix.
    pub number: u64,
    /// 1-based round.
    pub round: u64,
    /// 1-based game pair over the whole tournament.
    pub pair: u64,
    /// Engine indices: `south` moves first.
    pub south: usize,
    pub north: usize,
    pub opening: Opening,
}

/// A shard `index/count` (1-based index).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

impl std::str::FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || format!("invalid shard {s:?}: expected K/N with 1 <= K <= N");
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let index: u64 = k.trim().parse().map_err(|_| bad())?;
        let count: u64 = n.trim().parse().map_err(|_| bad())?;
        if index == 0 || count == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// A whole tournament's schedule.
#[derive(Clone, Debug)]
pub struct Schedule {
    pub kind: ScheduleKind,
    pub engines: usize,
    /// Game pairs per pairing (`--games` rounded up, halved).
    pub pairs_per_pairing: u64,
    pub rules: Rules,
    pub openings: Openings,
    pub shard: Option<Shard>,
}

impl Schedule {
    /// Whether a game of the run can repeat another ([`Openings::can_repeat`]).
    pub fn games_can_repeat(&self) -> bool {
        self.openings.can_repeat(self.pairs_per_pairing, self.rules)
    }

    /// The pairings in order: `(first, second)` engine indices.
    pub fn pairings(&self) -> Vec<(usize, usize)> {
        match self.kind {
            ScheduleKind::RoundRobin => (0..self.engines)
                .flat_map(|a| (a + 1..self.engines).map(move |b| (a, b)))
                .collect(),
            ScheduleKind::Gauntlet => (1..self.engines).map(|b| (0, b)).collect(),
        }
    }

    /// Game pairs in the whole tournament (every shard).
    pub fn total_pairs(&self) -> u64 {
        self.pairing_count() * self.pairs_per_pairing
    }

    /// The number of pairings, without listing them (asked once a recorded game).
    fn pairing_count(&self) -> u64 {
        let n = self.engines as u64;
        match self.kind {
            ScheduleKind::RoundRobin => n * n.saturating_sub(1) / 2,
            ScheduleKind::Gauntlet => n.saturating_sub(1),
        }
    }

    /// Games in the whole tournament, `None` when there would be more than
    /// [`MAX_GAMES`].
    pub fn checked_total_games(&self) -> Option<u64> {
        self.pairing_count()
            .checked_mul(self.pairs_per_pairing)?
            .checked_mul(2)
            .filter(|&g| g <= MAX_GAMES)
    }

    /// Whether pair `p` (0-based) belongs to this shard.
    fn in_shard(&self, p: u64) -> bool {
        self.shard.is_none_or(|s| p % s.count == s.index - 1)
    }

    /// Whether game `number` (1-based) is one of this shard's.
    pub fn has_game(&self, number: u64) -> bool {
        let pair = number.wrapping_sub(1) / 2;
        number >= 1 && pair < self.total_pairs() && self.in_shard(pair)
    }

    /// Game `number` (1-based) of this shard: its round, seats and opening; `None` when the
    /// shard has no such game.
    pub fn game(&self, number: u64) -> Option<ScheduledGame> {
        if !self.has_game(number) {
            return None;
        }
        let p = (number - 1) / 2;
        let pairings = self.pairings();
        let opening = self.openings.get(p / pairings.len() as u64);
        let (first, second) = pair_games(p, &pairings, opening);
        Some(if number % 2 == 1 { first } else { second })
    }

    /// Games in this shard.
    pub fn games_in_shard(&self) -> u64 {
        let total = self.total_pairs();
        let pairs = match self.shard {
            None => total,
            Some(s) => total / s.count + u64::from(total % s.count >= s.index),
        };
        2 * pairs
    }

    /// The games of this shard, in order, lazily.
    pub fn games(&self) -> Games {
        Games {
            schedule: self.clone(),
            pairings: self.pairings(),
            next_pair: match self.shard {
                Some(s) => s.index - 1,
                None => 0,
            },
            second: None,
            round_cache: None,
        }
    }
}

/// The lazy iterator over a schedule's games.
#[derive(Clone, Debug)]
pub struct Games {
    schedule: Schedule,
    pairings: Vec<(usize, usize)>,
    next_pair: u64,
    /// The second game of the current pair, once the first has been handed out.
    second: Option<ScheduledGame>,
    round_cache: Option<(u64, Opening)>,
}

impl Iterator for Games {
    type Item = ScheduledGame;

    fn next(&mut self) -> Option<ScheduledGame> {
        if let Some(g) = self.second.take() {
            return Some(g);
        }
        let k = self.pairings.len() as u64;
        let p = self.next_pair;
        if k == 0 || p >= self.schedule.total_pairs() {
            return None;
        }
        debug_assert!(self.schedule.in_shard(p));
        self.next_pair += self.schedule.shard.map_or(1, |s| s.count);
        let round = p / k;
        let opening = match &self.round_cache {
            Some((r, o)) if *r == round => o.clone(),
            _ => {
                let o = self.schedule.openings.get(round);
                self.round_cache = Some((round, o.clone()));
                o
            }
        };
        let (first, second) = pair_games(p, &self.pairings, opening);
        self.second = Some(second);
        Some(first)
    }
}

/// The two games of pair `p` (0-based over the whole tournament) of a schedule of
/// `pairings`, from `opening`: the pairing's engines in the order of its round (turned
/// around every other round), then with the seats swapped.
fn pair_games(
    p: u64,
    pairings: &[(usize, usize)],
    opening: Opening,
) -> (ScheduledGame, ScheduledGame) {
    let k = pairings.len() as u64;
    let round = p / k;
    let (mut a, mut b) = pairings[(p % k) as usize];
    if round % 2 == 1 {
        std::mem::swap(&mut a, &mut b);
    }
    let first = ScheduledGame {
        number: 2 * p + 1,
        round: round + 1,
        pair: p + 1,
        south: a,
        north: b,
        opening,
    };
    let second = ScheduledGame {
        number: 2 * p + 2,
        south: b,
        north: a,
        ..first.clone()
    };
    (first, second)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schedule(engines: usize, pairs: u64, plies: u32, seed: u64) -> Schedule {
        Schedule {
            kind: ScheduleKind::RoundRobin,
            engines,
            pairs_per_pairing: pairs,
            rules: Rules::default(),
            openings: match plies {
                0 => Openings::Start,
                _ => Openings::Distinct(Arc::new(DistinctOpenings::new(
                    Rules::default(),
                    plies,
                    seed,
                    None,
                ))),
            },
            shard: None,
        }
    }

    #[test]
    fn round_robin_pairs_everyone_with_seats_swapped() {
        let s = schedule(3, 2, 0, 0);
        let games: Vec<_> = s.games().collect();
        assert_eq!(games.len() as u64, s.games_in_shard());
        assert_eq!(games.len(), 3 * 2 * 2);
        for (i, g) in games.iter().enumerate() {
            assert_eq!(g.number, i as u64 + 1);
        }
        for pair in games.chunks(2) {
            assert_eq!(pair[0].pair, pair[1].pair);
            assert_eq!(
                (pair[0].south, pair[0].north),
                (pair[1].north, pair[1].south)
            );
            assert_eq!(pair[0].opening, pair[1].opening);
        }
        // Every engine moves first equally often against every opponent.
        for a in 0..3 {
            for b in 0..3 {
                if a != b {
                    let n = games
                        .iter()
                        .filter(|g| g.south == a && g.north == b)
                        .count();
                    assert_eq!(n, 2);
                }
            }
        }
        let mut g = s.clone();
        g.kind = ScheduleKind::Gauntlet;
        assert!(g.games().all(|x| x.south == 0 || x.north == 0));
        assert_eq!(g.games().count(), 2 * 2 * 2);
    }

    #[test]
    fn the_same_seed_gives_the_same_schedule() {
        let a: Vec<_> = schedule(4, 3, 6, 42).games().collect();
        let b: Vec<_> = schedule(4, 3, 6, 42).games().collect();
        assert_eq!(a, b);
        let c: Vec<_> = schedule(4, 3, 6, 43).games().collect();
        assert_ne!(a, c);
        // Random openings are legal, of the asked length, and differ between rounds.
        for g in &a {
            assert_eq!(g.opening.pits.len(), 6);
            assert!(!g.opening.position(Rules::default()).unwrap().is_over());
        }
        assert_ne!(a[0].opening, a.last().unwrap().opening);
    }

    #[test]
    fn shards_split_whole_pairs_disjointly() {
        let full: Vec<_> = schedule(4, 5, 2, 1).games().collect();
        let mut merged = Vec::new();
        for k in 1..=3 {
            let mut s = schedule(4, 5, 2, 1);
            s.shard = Some(Shard { index: k, count: 3 });
            let part: Vec<_> = s.games().collect();
            assert_eq!(part.len() as u64, s.games_in_shard());
            // A shard knows its games by number alone.
            let numbers: Vec<u64> = (0..=full.len() as u64 + 2)
                .filter(|&n| s.has_game(n))
                .collect();
            assert_eq!(numbers, part.iter().map(|g| g.number).collect::<Vec<_>>());
            assert!(part.chunks(2).all(|p| p[0].pair == p[1].pair));
            merged.extend(part);
        }
        merged.sort_by_key(|g| g.number);
        assert_eq!(merged, full);
        assert!("0/3".parse::<Shard>().is_err());
        assert!("4/3".parse::<Shard>().is_err());
        assert_eq!("2/3".parse::<Shard>(), Ok(Shard { index: 2, count: 3 }));
    }

    /// No position is played twice: more rounds than 4 sowings reach go on with 5, every
    /// shard and a resume (a new schedule asked for a late round first) agree, and the
    /// run says so at its start.
    #[test]
    fn openings_are_distinct_positions_whatever_the_shard_or_resume() {
        let rules = Rules::default();
        let s = schedule(2, 1500, 4, 9);
        let full: Vec<_> = s.games().collect();
        let positions: Vec<_> = full
            .iter()
            .step_by(2)
            .map(|g| g.opening.position(rules).unwrap())
            .collect();
        let distinct: std::collections::HashSet<_> = positions.iter().collect();
        assert_eq!(distinct.len(), 1500, "a position played twice");
        let Openings::Distinct(d) = &s.openings else {
            panic!("distinct openings")
        };
        let (_, tiers) = d.count_upto(1500);
        let (plies, at_four) = tiers[0];
        assert_eq!(plies, 4);
        assert!(at_four < 1500, "{tiers:?}");
        let lengths: Vec<usize> = full
            .iter()
            .step_by(2)
            .map(|g| g.opening.pits.len())
            .collect();
        assert!(lengths[..at_four].iter().all(|&n| n == 4));
        assert!(lengths[at_four..].iter().all(|&n| n == 5), "{tiers:?}");
        let (_, note) = s.openings.describe(1500);
        assert_eq!(
            note.unwrap(),
            format!(
                "note: 4 sowings reach {at_four} distinct positions, fewer than the 1500 rounds \
                 (game pairs of each pairing): the rounds after the first {at_four} take \
                 positions after 5 or more sowings"
            )
        );
        assert_eq!(s.openings.describe(at_four as u64).1, None);
        let resumed = schedule(2, 1500, 4, 9);
        assert_eq!(resumed.openings.get(1400), full[2 * 1400].opening);
        let mut shard = schedule(2, 1500, 4, 9);
        shard.shard = Some(Shard { index: 3, count: 4 });
        for g in shard.games() {
            assert_eq!(g, full[g.number as usize - 1]);
        }
        // Another seed, another order.
        assert_ne!(schedule(2, 1500, 4, 10).openings.get(0), full[0].opening);
    }

    /// On a board with few positions the openings are played again once all are used,
    /// and the run says so.
    #[test]
    fn a_board_with_few_positions_plays_them_again_and_says_so() {
        let rules = Rules::new(2, 1, false, crate::rules::Sweep::Owner).unwrap();
        let d = DistinctOpenings::new(rules, 1, 0, None);
        let (count, _) = d.count_upto(100);
        let n = count.expect("a handful");
        assert!(n > 0 && n < 20, "{n}");
        let all: Vec<_> = (0..n).map(|i| d.get(i).position(rules).unwrap()).collect();
        let distinct: std::collections::HashSet<_> = all.iter().collect();
        assert_eq!(distinct.len() as u64, n);
        assert_eq!(d.get(n), d.get(0));
        let openings = Openings::Distinct(Arc::new(d));
        let (_, note) = openings.describe(100);
        assert!(
            note.unwrap()
                .starts_with(&format!("note: only {n} distinct positions"))
        );
        // Played again, a game can repeat another.
        assert!(openings.can_repeat(n + 1, rules));
    }

    /// Whether a game of a run can repeat another: openings played again, or of more than
    /// one shape, where a longer one can be the line a game of a shorter one went on to.
    #[test]
    fn games_can_repeat_when_openings_come_again_or_differ_in_shape() {
        let rules = Rules::default();
        assert!(Openings::Start.can_repeat(2, rules));
        assert!(!Openings::Start.can_repeat(1, rules));
        let line = |pits: &[u8]| Opening::line(pits.to_vec());
        let two = Openings::List(Arc::new(vec![line(&[1]), line(&[2])]));
        assert!(!two.can_repeat(2, rules));
        assert!(two.can_repeat(3, rules), "played again from the first");
        let shapes = Openings::List(Arc::new(vec![line(&[1]), line(&[2, 3])]));
        assert!(shapes.can_repeat(2, rules), "a longer line after a shorter");
        // Two ways to one position are one opening played twice.
        let after = line(&[3]).position(rules).unwrap();
        assert_eq!(after.to_move(), crate::rules::Side::South, "an extra turn");
        let b = Opening::board(crate::record::Board::of(&after));
        let transposed = Openings::List(Arc::new(vec![line(&[3]), line(&[1]), b]));
        assert!(transposed.can_repeat(3, rules));
        assert!(!transposed.can_repeat(2, rules));
        // Distinct positions after 4 sowings, then after 5 once those run out (942).
        assert!(!schedule(2, 900, 4, 1).games_can_repeat());
        assert!(schedule(2, 5_000, 4, 1).games_can_repeat());
        assert!(schedule(2, 5_000, 0, 1).games_can_repeat());
    }

    #[test]
    fn huge_schedules_are_lazy() {
        let s = schedule(10, 100_000_000, 4, 7);
        assert_eq!(s.games_in_shard(), 45 * 200_000_000);
        assert_eq!(s.games().nth(1_000).unwrap().number, 1_001);
    }

    #[test]
    fn openings_files_are_checked() {
        let rules = Rules::default();
        let list = parse_openings("# comment\n3 1\n\n 2, 6 # tail\n", rules).unwrap();
        assert_eq!(
            list,
            vec![Opening::line(vec![3, 1]), Opening::line(vec![2, 6])]
        );
        let e = parse_openings("3\n9\n", rules).unwrap_err();
        assert!(e.to_string().contains("line 2"), "{e}");
        assert!(parse_openings("x\n", rules).is_err());
        assert_eq!(
            parse_openings("# nothing\n", rules),
            Err(crate::analysis::OpeningsError::Empty)
        );
        assert_eq!(crate::record::format_pits(&[3, 1]), "3 1");
        // Start positions, alone or followed by sowings; a bad one names its line.
        let list = parse_openings(
            "<6,0,0,3,4,4,4,4,4,4,4,4,4,4,5>\n<6,0,0,4,4,4,4,4,4,4,4,4,4,4,4> 3 1 # start\n",
            rules,
        )
        .unwrap();
        assert_eq!(list[0].pits, Vec::<u8>::new());
        assert_eq!(
            list[0].start.as_ref().unwrap().to_string(),
            "<6,0,0,3,4,4,4,4,4,4,4,4,4,4,5>"
        );
        assert_eq!(
            list[1].position(rules).unwrap(),
            Opening::line(vec![3, 1]).position(rules).unwrap()
        );
        let e = parse_openings("3 1\n<6,1,0,4,4,4,4,4,4,4,4,4,4,4,4>\n", rules).unwrap_err();
        assert_eq!(
            e.to_string(),
            "openings line 2: the board holds 49 seeds but the rules start with 48 (6 pits of \
             4 seeds a side)"
        );
        let e = parse_openings("<6,0,0,4,4,4,4,4,4,4,4,4,4,4,4 3\n", rules).unwrap_err();
        assert!(e.to_string().starts_with("openings line 1: "), "{e}");
    }
}
