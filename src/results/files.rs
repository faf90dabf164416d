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
pub(super) const SPRT_WORKERS_TOML: &str = "sprt-workers.toml";
/// The engines' logs (and protocol transcripts with `--debug`).
pub(super) const LOGS: &str = "logs";
/// Each engine's rating, score and faults (a report).
const STANDINGS_CSV: &str = "standings.csv";
/// Each pairing's games and score (a report).
const H2H_CSV: &str = "h2h.csv";
/// The leaderboard as Markdown (a report).
const LEADERBOARD_MD: &str = "leaderboard.md";
/// The leaderboard as a web page (a report).
const LEADERBOARD_HTML: &str = "leaderboard.html";
/// `kalaha analyze`: one row per analysed sowing.
const ANALYSIS_CSV: &str = "analysis.csv";
/// `kalaha analyze`: one row per game and side, summing `analysis.csv`.
const ANALYSIS_GAMES_CSV: &str = "analysis_games.csv";
/// `kalaha play`: one row per match of several games.
const MATCH_CSV: &str = "match.csv";

/// Whether `name`, in a results folder, is a file kalaha writes there before the run's
/// settings are saved whole (`tournament.toml`): the lock, the logs, `.played.toml`, and
/// the temporary file of a file being replaced (`.NAME.tmp`, see
/// [`super::temporary_path`]). A folder that holds only these (and no games) is that of a
/// run stopped before its first game: a new run may take it.
pub(super) fn written_as_a_run_begins(name: &str) -> bool {
    let own = [TOURNAMENT_TOML, PLAYED_TOML, SPRT_TOML, SPRT_CSV];
    name == LOGS
        || name == super::lock::LOCK_FILE
        || name == PLAYED_TOML
        || name
            .strip_prefix('.')
            .and_then(|n| n.strip_suffix(".tmp"))
            .is_some_and(|n| own.contains(&n))
}

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

    /// The name `tournament.toml`, for words about the file of any folder.
    pub fn tournament_toml_name() -> &'static str {
        TOURNAMENT_TOML
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

    /// `standings.csv`: each engine's rating, score and faults.
    pub fn standings_csv(&self) -> PathBuf {
        self.dir.join(STANDINGS_CSV)
    }

    /// `h2h.csv`: each pairing's games and score.
    pub fn h2h_csv(&self) -> PathBuf {
        self.dir.join(H2H_CSV)
    }

    /// `leaderboard.md`: the leaderboard as Markdown.
    pub fn leaderboard_md(&self) -> PathBuf {
        self.dir.join(LEADERBOARD_MD)
    }

    /// `leaderboard.html`: the leaderboard as a web page.
    pub fn leaderboard_html(&self) -> PathBuf {
        self.dir.join(LEADERBOARD_HTML)
    }

    /// The reports, in the order they are written: `standings.csv`, `h2h.csv`,
    /// `leaderboard.md`, `leaderboard.html`.
    pub fn reports(&self) -> [PathBuf; 4] {
        [
            self.standings_csv(),
            self.h2h_csv(),
            self.leaderboard_md(),
            self.leaderboard_html(),
        ]
    }

    /// `analysis.csv`: what each sowing lost against perfect play, one row per sowing.
    pub fn analysis_csv(&self) -> PathBuf {
        self.dir.join(ANALYSIS_CSV)
    }

    /// `analysis_games.csv`: the sums of `analysis.csv` per game and side.
    pub fn analysis_games_csv(&self) -> PathBuf {
        self.dir.join(ANALYSIS_GAMES_CSV)
    }

    /// `match.csv`: the result of every match of a session of `kalaha play`.
    pub fn match_csv(&self) -> PathBuf {
        self.dir.join(MATCH_CSV)
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
