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
mod csv_rows;
mod durable;
mod files;
mod folder;
mod jsonl;
mod lock;
mod reach;
mod repair;
mod writer;

pub use csv_file::{
    CSV_COLUMNS, CsvRow, ReadError, ReadSummary, csv_row, from_text_cell, games_csv_path,
    read_games_csv, read_games_from, text_cell,
};
pub(crate) use csv_rows::{CsvRows, Row};
pub use durable::{full_disk, temporary_path, write_file, write_new_file, write_with};
pub use files::Files;
use files::{GAMES_CSV, GAMES_JSONL, LOGS, SPRT_CSV, SPRT_TOML, TOURNAMENT_TOML};
pub use folder::{
    Claim, ClaimError, ResultsFolder, check as check_folder, claim_default_folder, default_folder,
};
pub use jsonl::{
    Games, JsonlSummary, find_game, names_game, read_games, read_jsonl, read_jsonl_from,
};
pub use lock::{FolderLock, LockError};
pub use reach::{WALK_DEPTH, WALK_ENTRIES, check_write_folder, hidden_from_engines};
pub use repair::{Repaired, could_have_played, repair};
pub use writer::ResultsWriter;

#[cfg(test)]
pub(crate) use tests::sample_record;

pub use crate::record::{GameRecord, GameRow};

/// What kind of run played the games of a folder: a tournament (of two or more engines),
/// a match (`kalaha match`: a tournament of two, said so in its header), an SPRT (its game
/// count is a limit, not a plan) or a play session. `tournament.toml` says which
/// ([`run_kind`] reads it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunKind {
    #[default]
    Tournament,
    Match,
    Sprt,
    /// `kalaha play`: a person (or an engine) against an engine on the page.
    Play,
}

impl RunKind {
    /// The run's kind as a heading says it: `Tournament`, `Match`, `SPRT`, `Play session`.
    pub fn title(self) -> &'static str {
        match self {
            RunKind::Tournament => "Tournament",
            RunKind::Match => "Match",
            RunKind::Sprt => "SPRT",
            RunKind::Play => "Play session",
        }
    }

    /// The command that continues a run of this kind.
    pub fn command(self) -> &'static str {
        match self {
            RunKind::Tournament => "tournament",
            RunKind::Match => "match",
            RunKind::Sprt => "sprt",
            RunKind::Play => "play",
        }
    }
}

/// What kind of run played the games of `dir`, as its `tournament.toml` says (`run`); a
/// folder written before it said so is an SPRT when it holds `sprt.toml`, else a
/// tournament.
pub fn run_kind(dir: &std::path::Path) -> RunKind {
    let said = crate::input::read_text_limited(
        &Files::of(dir).tournament_toml(),
        crate::input::CONFIG_LIMIT,
    )
    .ok()
    .and_then(|text| text.parse::<toml::Table>().ok())
    .and_then(|t| t.get("run")?.clone().try_into::<RunKind>().ok());
    match said {
        Some(kind) => kind,
        None if Files::of(dir).sprt_toml().exists() => RunKind::Sprt,
        None => RunKind::Tournament,
    }
}

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
