//! Games that repeat an earlier game of the run move for move, with the same engines in
//! the same seats from the same start (deterministic engines do, from an opening played
//! twice, or from a longer opening that is where an earlier game went): such a game is
//! marked in its record (`repeats`, the id of the game it repeats) and left out of the
//! Elo and the SPRT, which would otherwise count one result twice.
//!
//! Only a run whose openings allow it ([`Schedule::games_can_repeat`]) can have repeats:
//! the others (openings of one shape, each played once) keep no table, so that their
//! memory does not grow with their games.

use crate::record::{GameRecord, Termination};
use crate::results::read_jsonl;
use crate::tournament::schedule::Schedule;
use std::collections::{HashMap, HashSet};
use std::io;
use std::path::Path;

/// The games of a run so far, to find the repeats among the games to come. Each game is
/// kept as a 128-bit hash of what makes two games the same (engines in their seats, start,
/// sowings) and its number: some 30 bytes a game, so that a run of a million games stays
/// within tens of MB, and none in a run whose games cannot repeat.
#[derive(Debug, Default)]
pub(crate) struct Repeats {
    /// The run's tournament id: the games of other ids in the folder are not its games.
    tournament: String,
    /// Whether a game of the run can repeat another at all.
    can_repeat: bool,
    first: HashMap<u128, u64>,
}

/// Whether a game can repeat another: one played to its end on the board (a fault is the
/// engine's, whatever the moves before it).
fn comparable(g: &GameRecord) -> bool {
    matches!(
        g.termination,
        Termination::Normal | Termination::Adjudicated
    )
}

/// A 128-bit hash of what makes two games the same (a collision of two different games
/// is as unlikely as that of two random 128-bit numbers).
fn key(g: &GameRecord) -> u128 {
    use std::hash::{Hash, Hasher};
    let half = |salt: u64| {
        let mut h = std::hash::DefaultHasher::new();
        salt.hash(&mut h);
        g.repeat_key().hash(&mut h);
        h.finish()
    };
    (u128::from(half(0)) << 64) | u128::from(half(0x9e37_79b9_7f4a_7c15))
}

impl Repeats {
    /// No game yet, of the tournament `id` played on `schedule`.
    pub(crate) fn new(id: &str, schedule: &Schedule) -> Repeats {
        Repeats {
            tournament: id.to_string(),
            can_repeat: schedule.games_can_repeat(),
            first: HashMap::new(),
        }
    }

    /// The games of tournament `id` recorded in `dir/games.jsonl` (none when it does not
    /// exist yet, or when no game of `schedule` can repeat another).
    pub(crate) fn from_folder(dir: &Path, id: &str, schedule: &Schedule) -> io::Result<Repeats> {
        let mut r = Repeats::new(id, schedule);
        let path = crate::results::Files::of(dir).games_jsonl();
        if r.can_repeat && path.exists() {
            read_jsonl(&path, |g, _| {
                if g.repeats.is_none() && comparable(&g) && r.ours(&g) {
                    r.first.entry(key(&g)).or_insert(g.number);
                }
            })?;
        }
        Ok(r)
    }

    /// Whether `g` is a game of the run's tournament, named by its number.
    fn ours(&self, g: &GameRecord) -> bool {
        g.game.strip_prefix(self.tournament.as_str()) == Some(&format!("-{}", g.number))
    }

    /// Marks `g` when it repeats an earlier game; otherwise remembers it.
    pub(crate) fn mark(&mut self, g: &mut GameRecord) {
        if !self.can_repeat || !self.ours(g) {
            return;
        }
        if let Some(earlier) = Repeats::key(g).and_then(|k| self.repeated(k, g.number)) {
            g.repeats = Some(format!("{}-{earlier}", self.tournament));
        }
    }

    /// What makes `g` the same game as another, kept small; `None` for a game that
    /// cannot repeat another (a fault's).
    pub(crate) fn key(g: &GameRecord) -> Option<u128> {
        comparable(g).then(|| key(g))
    }

    /// The number of the earlier game that game `number` (of key `key`) repeats; a game
    /// that repeats none is remembered.
    pub(crate) fn repeated(&mut self, key: u128, number: u64) -> Option<u64> {
        if !self.can_repeat {
            return None;
        }
        match self.first.get(&key) {
            Some(&earlier) if earlier != number => Some(earlier),
            Some(_) => None,
            None => {
                self.first.insert(key, number);
                None
            }
        }
    }
}

/// The ids of the games of `dir/games.jsonl` marked as repeats (`games.csv` does not say
/// it).
pub(crate) fn repeated_games(dir: &Path) -> io::Result<HashSet<String>> {
    let mut out = HashSet::new();
    let path = crate::results::Files::of(dir).games_jsonl();
    if path.exists() {
        read_jsonl(&path, |g, _| {
            if g.repeats.is_some() {
                out.insert(g.game);
            }
        })?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{game_of, played_game};
    use crate::rules::{Position, Rules};
    use crate::tournament::schedule::{Openings, ScheduleKind};
    use std::sync::Arc;

    /// A schedule of two engines, `pairs` rounds, with `openings`.
    fn schedule(openings: Openings, pairs: u64) -> Schedule {
        Schedule {
            kind: ScheduleKind::RoundRobin,
            engines: 2,
            pairs_per_pairing: pairs,
            rules: Rules::default(),
            openings,
            shard: None,
        }
    }

    /// Game `number` of tournament `t`.
    fn numbered(mut g: GameRecord, t: &str, number: u64) -> GameRecord {
        g.game = format!("{t}-{number}");
        g.number = number;
        g
    }

    /// `opening` then the first legal sowing each turn, to the end.
    fn game_after(opening: &[u8]) -> GameRecord {
        let rules = Rules::default();
        let mut pos = Position::start(rules);
        let mut pits = opening.to_vec();
        for &p in opening {
            pos = pos.play(i64::from(p)).unwrap();
        }
        while !pos.is_over() {
            let pit = pos.legal_moves().next().unwrap();
            pits.push(pit);
            pos = pos.play(i64::from(pit)).unwrap();
        }
        game_of(rules, &pits, opening.len())
    }

    #[test]
    fn a_game_played_again_move_for_move_is_marked_once_per_repeat() {
        let mut r = Repeats::new("t", &schedule(Openings::Start, 10));
        let mut first = numbered(played_game(), "t", 1);
        r.mark(&mut first);
        assert_eq!(first.repeats, None);
        let mut again = numbered(played_game(), "t", 3);
        r.mark(&mut again);
        assert_eq!(again.repeats, Some(first.game.clone()));
        assert!(again.row().repeat);
        // Seats swapped: another game.
        let mut swapped = numbered(played_game(), "t", 4);
        std::mem::swap(&mut swapped.south, &mut swapped.north);
        r.mark(&mut swapped);
        assert_eq!(swapped.repeats, None);
        // Counted apart, not as evidence.
        let mut t = crate::stats::Tally::new();
        assert!(matches!(
            t.add(&first.row()),
            crate::stats::Added::Counted { .. }
        ));
        assert_eq!(t.add(&again.row()), crate::stats::Added::Repeat);
        assert_eq!((t.games(), t.repeats()), (1, 1));
    }

    /// Game 3's opening is a line game 1 went on to by its engines' moves: the same
    /// sowings from the same start, so game 3 repeats game 1 (deterministic engines play
    /// it again from there), though its opening is another.
    #[test]
    fn a_longer_opening_where_an_earlier_game_went_repeats_that_game() {
        let mut r = Repeats::new("t", &schedule(Openings::Start, 10));
        let mut first = numbered(game_after(&[1, 2]), "t", 1);
        let mut later: Vec<u8> = first.moves.iter().map(|m| m.pit).collect();
        later.truncate(3);
        let mut second = numbered(game_after(&later), "t", 3);
        assert_ne!(first.opening, second.opening);
        r.mark(&mut first);
        r.mark(&mut second);
        assert_eq!(second.repeats.as_deref(), Some("t-1"));
    }

    /// A start given as a board that is the rules' own start is the same start.
    #[test]
    fn a_board_that_is_the_rules_start_is_the_same_start() {
        let mut r = Repeats::new("t", &schedule(Openings::Start, 10));
        let mut first = numbered(game_after(&[1]), "t", 1);
        let mut second = numbered(game_after(&[1]), "t", 3);
        second.start = Some(crate::record::Board::of(&Position::start(Rules::default())));
        r.mark(&mut first);
        r.mark(&mut second);
        assert_eq!(second.repeats.as_deref(), Some("t-1"));
    }

    /// Distinct openings of one shape (here the positions after 4 sowings, of which there
    /// are more than the 100 rounds) are distinct lines: no game can repeat another, and
    /// nothing is kept.
    #[test]
    fn a_run_of_openings_of_one_shape_keeps_no_table() {
        let distinct = Openings::Distinct(Arc::new(
            crate::tournament::schedule::DistinctOpenings::new(Rules::default(), 4, 1, None),
        ));
        let mut r = Repeats::new("t", &schedule(distinct, 100));
        for n in 1..=10 {
            let mut g = numbered(played_game(), "t", n);
            r.mark(&mut g);
            assert_eq!(g.repeats, None);
        }
        assert!(r.first.is_empty());
    }
}
