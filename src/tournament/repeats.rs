//! Games that repeat an earlier game of the run move for move, with the same engines in
//! the same seats from the same start (deterministic engines do, from an opening played
//! twice): such a game is marked in its record (`repeats`, the id of the game it repeats)
//! and left out of the Elo and the SPRT, which would otherwise count one result twice.

use crate::record::{GameRecord, Termination};
use crate::results::read_jsonl;
use std::collections::{HashMap, HashSet};
use std::io;
use std::path::Path;

/// What makes two games the same: engines in their seats, start, sowings.
type Key = (String, String, Option<String>, Vec<u8>);

/// The games of a run so far, to find the repeats among the games to come.
#[derive(Debug, Default)]
pub struct Repeats {
    first: HashMap<Key, String>,
}

/// Whether a game can repeat another: one played to its end on the board (a fault is the
/// engine's, whatever the moves before it).
fn comparable(g: &GameRecord) -> bool {
    matches!(
        g.termination,
        Termination::Normal | Termination::Adjudicated
    )
}

fn key(g: &GameRecord) -> Key {
    let (south, north, start, moves) = g.repeat_key();
    (south.to_string(), north.to_string(), start, moves)
}

impl Repeats {
    /// The games recorded in `dir/games.jsonl` (none when it does not exist yet).
    pub fn from_folder(dir: &Path) -> io::Result<Repeats> {
        let mut r = Repeats::default();
        let path = dir.join(crate::results::GAMES_JSONL);
        if path.exists() {
            read_jsonl(&path, |g, _| {
                if g.repeats.is_none() && comparable(&g) {
                    r.first.entry(key(&g)).or_insert(g.game);
                }
            })?;
        }
        Ok(r)
    }

    /// Marks `g` when it repeats an earlier game; otherwise remembers it.
    pub fn mark(&mut self, g: &mut GameRecord) {
        if !comparable(g) {
            return;
        }
        match self.first.get(&key(g)) {
            Some(earlier) if *earlier != g.game => g.repeats = Some(earlier.clone()),
            Some(_) => {}
            None => {
                self.first.insert(key(g), g.game.clone());
            }
        }
    }
}

/// The ids of the games of `dir/games.jsonl` marked as repeats (`games.csv` does not say
/// it).
pub fn repeated_games(dir: &Path) -> io::Result<HashSet<String>> {
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
        let mut r = Repeats::default();
        let mut first = played_game();
        r.mark(&mut first);
        assert_eq!(first.repeats, None);
        let mut again = played_game();
        again.game = "t-3".into();
        r.mark(&mut again);
        assert_eq!(again.repeats, Some(first.game.clone()));
        assert!(again.row().repeat);
        // Seats swapped: another game.
        let mut swapped = played_game();
        swapped.game = "t-4".into();
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
