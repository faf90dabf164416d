//! Game ids read twice. The same game given twice (a shard folder given twice, a copy of a
//! run) is a duplicate and counts once; two different games under one id (a shard re-run
//! with another seed or other settings, or engines that did not play the same moves again)
//! are a conflict: the game read first counts, the other does not, and a warning names the
//! two folders, how many games and the first id.
//!
//! Which id counts is still the tally's to say ([`crate::stats::Tally::add`]); this only
//! remembers what each counted id stood for, to tell the two cases apart.

use crate::record::{GameRecord, GameResult, GameRow, Termination, clean_text, counted};
use std::collections::{BTreeMap, HashMap};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::PathBuf;

/// What a counted game id stood for: enough to tell another game under the same id.
struct Seen {
    /// The input it was read from (an index into the inputs).
    input: usize,
    /// The engines in their seats.
    engines: u64,
    result: GameResult,
    termination: Termination,
    /// The final stores, when the input has them.
    stores: Option<(u16, u16)>,
    /// The start and every sowing (the opening's first), when the input is a record.
    moves: Option<u64>,
}

impl Seen {
    fn of(input: usize, row: &GameRow<'_>, record: Option<&GameRecord>) -> Seen {
        Seen {
            input,
            engines: hash(&(row.south, row.north)),
            result: row.result,
            termination: row.termination,
            stores: row.south_score.zip(row.north_score),
            moves: record.map(|r| hash(&r.repeat_key())),
        }
    }

    /// What differs between the game `self` and `other` under one id: each thing, with
    /// its value in each when it has one; empty for the same game. What only one input has
    /// (stores, moves) is not compared.
    fn differences(&self, other: &Seen) -> Vec<Difference> {
        let mut v = Vec::new();
        if self.engines != other.engines {
            v.push(("engines in the seats", None));
        }
        if self.result != other.result {
            let values = (self.result.as_str().into(), other.result.as_str().into());
            v.push(("result", Some(values)));
        }
        if self.termination != other.termination {
            let values = (
                self.termination.as_str().into(),
                other.termination.as_str().into(),
            );
            v.push(("termination", Some(values)));
        }
        if let (Some(a), Some(b)) = (self.stores, other.stores)
            && a != b
        {
            let values = (format!("{}-{}", a.0, a.1), format!("{}-{}", b.0, b.1));
            v.push(("stores", Some(values)));
        }
        if let (Some(a), Some(b)) = (self.moves, other.moves)
            && a != b
        {
            v.push(("opening or moves", None));
        }
        v
    }
}

/// One thing two games under one id differ in, with its value in the first and the
/// later one when it has a short one.
type Difference = (&'static str, Option<(String, String)>);

fn hash(value: &impl Hash) -> u64 {
    let mut h = DefaultHasher::new();
    value.hash(&mut h);
    h.finish()
}

/// The conflicts between two inputs: how many, and the first, with what differs.
struct Conflicts {
    games: u64,
    first: String,
    differences: Vec<Difference>,
}

/// The games counted so far, by id, and the conflicts found.
#[derive(Default)]
pub(super) struct Ids {
    seen: HashMap<String, Seen>,
    /// By (the input read first, the later one).
    conflicts: BTreeMap<(usize, usize), Conflicts>,
}

impl Ids {
    /// Remembers the game `row` (with its record, if read from one) of input `input`,
    /// which the tally counted.
    pub(super) fn counted(&mut self, input: usize, row: &GameRow<'_>, record: Option<&GameRecord>) {
        self.seen
            .entry(row.game.to_string())
            .or_insert_with(|| Seen::of(input, row, record));
    }

    /// Whether the game `row` of input `input`, whose id the tally had counted before, is
    /// another game than the one counted (a conflict, remembered for the warning) rather
    /// than the same one given twice.
    pub(super) fn conflicts(
        &mut self,
        input: usize,
        row: &GameRow<'_>,
        record: Option<&GameRecord>,
    ) -> bool {
        let Some(first) = self.seen.get(row.game) else {
            return false;
        };
        let differences = first.differences(&Seen::of(input, row, record));
        if differences.is_empty() {
            return false;
        }
        self.conflicts
            .entry((first.input, input))
            .or_insert_with(|| Conflicts {
                games: 0,
                first: clean_text(row.game).into_owned(),
                differences,
            })
            .games += 1;
        true
    }

    /// A warning for each two inputs that hold different games under the same ids, naming
    /// their folders (`folders[k]` is the folder of input `k`).
    pub(super) fn warnings(&self, folders: &[PathBuf]) -> Vec<String> {
        let shown = |k: usize| {
            folders
                .get(k)
                .map_or_else(|| "?".to_string(), |f| crate::record::shown_path(f))
        };
        self.conflicts
            .iter()
            .map(|((first, later), c)| {
                let (first, later) = (shown(*first), shown(*later));
                let differences: Vec<String> = c
                    .differences
                    .iter()
                    .map(|(what, values)| match values {
                        Some((a, b)) => format!("{what} {a} in {first}, {b} in {later}"),
                        None => format!("other {what}"),
                    })
                    .collect();
                format!(
                    "{later} holds {} under ids that {first} gave to other games (the first: \
                     game {}, {}): a game id names one game, so the games of {first}, read \
                     first, are counted and those of {later} are not. Shards of one \
                     tournament need the same configuration and seed; give a run with other \
                     settings an id of its own (--id) to rate both",
                    counted(c.games, "game"),
                    c.first,
                    differences.join("; ")
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::GameResult;

    fn row(game: &str, result: GameResult) -> GameRow<'_> {
        GameRow {
            game,
            pair: Some(1),
            south: "a",
            north: "b",
            result,
            south_score: Some(30),
            north_score: Some(18),
            termination: Termination::Normal,
            loser: None,
            repeat: false,
        }
    }

    #[test]
    fn the_same_game_twice_is_no_conflict_and_another_game_is() {
        let mut ids = Ids::default();
        ids.counted(0, &row("t-1", GameResult::SouthWins), None);
        assert!(!ids.conflicts(1, &row("t-1", GameResult::SouthWins), None));
        let mut other = row("t-1", GameResult::NorthWins);
        other.south_score = Some(18);
        other.north_score = Some(30);
        assert!(ids.conflicts(1, &other, None));
        let w = ids.warnings(&[PathBuf::from("sh2"), PathBuf::from("sh3")]);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].starts_with(
                "sh3 holds 1 game under ids that sh2 gave to other games (the first: game \
                 t-1, result 1-0 in sh2, 0-1 in sh3; stores 30-18 in sh2, 18-30 in sh3)"
            ) && w[0]
                .contains("the games of sh2, read first, are counted and those of sh3 are not"),
            "{}",
            w[0]
        );
    }
}
