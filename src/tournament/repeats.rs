//! Games that repeat an earlier game of the run move for move, with the same engines in
//! the same seats from the same start (deterministic engines do, from an opening played
//! twice): such a game is marked in its record (`repeats`, the id of the game it repeats)
//! and left out of the Elo and the SPRT, which would otherwise count one result twice.

use crate::record::{GameRecord, Termination};
use crate::results::read_jsonl;
use std::collections::{HashMap, HashSet};
use std::io;
use std::path::Path;

/// The games of a run so far, to find the repeats among the games to come. Each game is
/// kept as a 128-bit hash of what makes two games the same (engines in their seats, start,
/// sowings) and its number: some 30 bytes a game, so that a run of a million games stays
/// within tens of MB.
#[derive(Debug, Default)]
pub(crate) struct Repeats {
    /// The run's tournament id: the games of other ids in the folder are not its games.
    tournament: String,
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
    /// No game yet, of the tournament `id`.
    pub(crate) fn new(id: &str) -> Repeats {
        Repeats {
            tournament: id.to_string(),
            first: HashMap::new(),
        }
    }

    /// The games of tournament `id` recorded in `dir/games.jsonl` (none when it does not
    /// exist yet).
    pub(crate) fn from_folder(dir: &Path, id: &str) -> io::Result<Repeats> {
        let mut r = Repeats::new(id);
        let path = dir.join(crate::results::GAMES_JSONL);
        if path.exists() {
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
        if !self.ours(g) {
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
    let path = dir.join(crate::results::GAMES_JSONL);
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
    use crate::record::played_game;

    #[test]
    fn a_game_played_again_move_for_move_is_marked_once_per_repeat() {
        let mut first = played_game();
        let mut r = Repeats::new(first.game.rsplit_once('-').unwrap().0);
        r.mark(&mut first);
        assert_eq!(first.repeats, None);
        let mut again = played_game();
        again.game = format!("{}-3", r.tournament);
        again.number = 3;
        r.mark(&mut again);
        assert_eq!(again.repeats, Some(first.game.clone()));
        assert!(again.row().repeat);
        // Seats swapped: another game.
        let mut swapped = played_game();
        swapped.game = format!("{}-4", r.tournament);
        swapped.number = 4;
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
}
