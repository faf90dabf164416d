//! The game files of a results folder, written and read in one place: `games.jsonl` (one
//! [`GameRecord`] per line: the whole game) and `games.csv` (one row per game, for
//! spreadsheets and for merging many runs).
//!
//! A game is *recorded* when its line in `games.jsonl` is on disk: the [`ResultsWriter`]
//! appends the lines of every game that finished in a short window and syncs them with one
//! `fdatasync` (group commit), then appends their `games.csv` rows. After a crash,
//! [`repair`] cuts torn lines, rebuilds `games.csv` rows from `games.jsonl`, and never drops a
//! recorded game; [`read_games_csv`] streams rows of any `games.csv` (also of other
//! tournaments and older versions) as [`GameRow`]s and counts the rows it cannot read.
//!
//! Text cells that a spreadsheet would run as a formula are written with a leading `'`
//! ([`text_cell`]) and read back as they were ([`from_text_cell`]).

mod csv_file;
mod jsonl;
mod lock;
mod repair;
mod writer;

pub use csv_file::{
    CSV_COLUMNS, ReadError, ReadSummary, csv_row, from_text_cell, games_csv_path, read_games_csv,
    read_games_from, text_cell,
};
pub use jsonl::{
    Games, JsonlSummary, find_game, names_game, read_games, read_jsonl, read_jsonl_from,
};
pub use lock::{FolderLock, LockError};
pub use repair::{Repaired, could_have_played, repair};
pub use writer::ResultsWriter;

#[cfg(test)]
pub(crate) use tests::sample_record;

pub use crate::record::{GameRecord, GameRow};

/// What kind of run played the games of a folder: a tournament (of two or more engines),
/// a match (`kalaha match`: a tournament of two, said so in its header) or an SPRT (its
/// game count is a limit, not a plan).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RunKind {
    #[default]
    Tournament,
    Match,
    /// An SPRT (`sprt.toml` next to `tournament.toml`).
    Sprt,
}

impl RunKind {
    /// The command that continues a run of this kind.
    pub fn command(self) -> &'static str {
        match self {
            RunKind::Tournament | RunKind::Match => "tournament",
            RunKind::Sprt => "sprt",
        }
    }
}

/// The file names.
pub const GAMES_CSV: &str = "games.csv";
pub const GAMES_JSONL: &str = "games.jsonl";

#[cfg(test)]
mod tests {
    use crate::record::GameRecord;

    /// A game `<tournament>-<n>` of `south` against `north`, played to its end under the
    /// standard rules (each side sowing its lowest legal pit).
    pub(crate) fn sample_record(tournament: &str, n: u64, south: &str, north: &str) -> GameRecord {
        let mut g = crate::record::played_game();
        g.game = format!("{tournament}-{n}");
        g.number = n;
        g.pair = n.div_ceil(2);
        (g.south, g.north) = (south.into(), north.into());
        g.duration_ms = 12;
        g
    }
}
