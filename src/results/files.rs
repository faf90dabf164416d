//! Where the files of a results folder are: every path into a results folder is made
//! here, from the names in this one place.

use std::path::{Path, PathBuf};

/// The record: one line per game (see [`crate::record::GameRecord`]).
pub(super) const GAMES_JSONL: &str = "games.jsonl";
/// One row per game, derived from the record.
pub(super) const GAMES_CSV: &str = "games.csv";
/// The run's resolved configuration; `--resume` reads it back.
pub(super) const TOURNAMENT_TOML: &str = "tournament.toml";
/// What the run's games are played with: `tournament.toml` as the run began, kept apart so
/// that a resume can refuse a `tournament.toml` edited since (see
/// `tournament::played_changes`).
pub(super) const PLAYED_TOML: &str = ".played.toml";
/// An SPRT's test (its bounds, model, error rates and game limit).
pub(super) const SPRT_TOML: &str = "sprt.toml";
/// An SPRT's log-likelihood ratio after every game pair.
pub(super) const SPRT_CSV: &str = "sprt.csv";
/// An SPRT's verdict.
pub(super) const SPRT_RESULT_TOML: &str = "sprt-result.toml";
/// The test every worker of a shared folder plays (`kalaha sprt --workers N --worker K
/// --shared DIR`): in `DIR`, beside the workers' results folders `DIR/worker-K`.
pub const SPRT_WORKERS_TOML: &str = "sprt-workers.toml";
/// The engines' logs (and protocol transcripts with `--debug`).
pub(super) const LOGS: &str = "logs";

/// The paths of the files of the results folder `dir` (which need not exist).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Files {
    dir: PathBuf,
}

impl Files {
    /// The files of the results folder `dir`.
    pub fn of(dir: impl AsRef<Path>) -> Files {
        Files {
            dir: dir.as_ref().to_path_buf(),
        }
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// `games.jsonl`: the record, one line per game.
    pub fn games_jsonl(&self) -> PathBuf {
        self.dir.join(GAMES_JSONL)
    }

    /// `games.csv`: one row per game, derived from the record.
    pub fn games_csv(&self) -> PathBuf {
        self.dir.join(GAMES_CSV)
    }

    /// `tournament.toml`: the run's settings, which `--resume` reads.
    pub fn tournament_toml(&self) -> PathBuf {
        self.dir.join(TOURNAMENT_TOML)
    }

    /// `.played.toml`: the settings the games were played with, as the run began.
    pub fn played_toml(&self) -> PathBuf {
        self.dir.join(PLAYED_TOML)
    }

    /// `sprt.toml`: an SPRT's test.
    pub fn sprt_toml(&self) -> PathBuf {
        self.dir.join(SPRT_TOML)
    }

    /// `sprt.csv`: an SPRT's log-likelihood ratio after every game pair.
    pub fn sprt_csv(&self) -> PathBuf {
        self.dir.join(SPRT_CSV)
    }

    /// `sprt-result.toml`: an SPRT's verdict.
    pub fn sprt_result_toml(&self) -> PathBuf {
        self.dir.join(SPRT_RESULT_TOML)
    }

    /// `sprt-workers.toml`: in the shared folder of a test played by several workers, the
    /// test they play.
    pub fn sprt_workers_toml(&self) -> PathBuf {
        self.dir.join(SPRT_WORKERS_TOML)
    }

    /// `logs/`: the engines' logs.
    pub fn logs(&self) -> PathBuf {
        self.dir.join(LOGS)
    }

    /// Whether `path` names a `games.jsonl` (of whatever folder).
    pub fn is_games_jsonl(path: &Path) -> bool {
        path.file_name().is_some_and(|n| n == GAMES_JSONL)
    }

    /// Whether the folder holds the files of a run: `games.jsonl`, `games.csv`,
    /// `tournament.toml` or `.played.toml`.
    pub fn hold_a_run(&self) -> bool {
        [
            self.games_jsonl(),
            self.games_csv(),
            self.tournament_toml(),
            self.played_toml(),
        ]
        .iter()
        .any(|f| f.exists())
    }

    /// Whether the folder is the shared folder of a test played by several workers (it
    /// holds `sprt-workers.toml`).
    pub fn is_shared_test(&self) -> bool {
        self.sprt_workers_toml().exists()
    }

    /// Whether the folder holds recorded games (`games.csv` or `games.jsonl`).
    pub fn hold_games(&self) -> bool {
        self.games_csv().exists() || self.games_jsonl().exists()
    }
}
