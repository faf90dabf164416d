//! Tournaments: configuration, schedules, running games, results and resume.
//!
//! The pieces, in the order a run uses them:
//! - [`spec`] and [`config`]: engines and settings as given, then resolved and validated;
//! - [`schedule`]: the lazy, deterministic list of games (pairs with seats swapped,
//!   openings, shards);
//! - [`process`]: engine processes and the start-up checks;
//! - [`run`]: concurrent games, engine pools, events, interruption;
//! - [`results`] and [`display`]: the reporters (files, standings, live display).
//!
//! [`run_tournament`] ties them together for `kalaha tournament` and `kalaha match`; a
//! program that wants game pairs one at a time (SPRT) passes its own [`run::Reporter`] and
//! stops the run from it with [`run::Control::Stop`]: running games still finish and are
//! recorded. `PairFinished` comes for pairs whose two games both ended in this run (on
//! resume, read the earlier ones from `games.csv`).
//!
//! ```no_run
//! use kalaha::tournament::config::ConfigFile;
//! use kalaha::tournament::run::{Control, Event, Reporter};
//! use kalaha::tournament::spec::EngineSpec;
//! use kalaha::tournament::{RunOptions, run_tournament};
//!
//! /// Stops after 100 game pairs.
//! struct Pairs(u64);
//! impl Reporter for Pairs {
//!     fn event(&mut self, e: &Event<'_>) -> std::io::Result<Control> {
//!         if let Event::PairFinished([first, second]) = e {
//!             self.0 += 1;
//!             let _ = (first.play.result, second.play.result); // south's view each
//!         }
//!         Ok(if self.0 >= 100 { Control::Stop } else { Control::Continue })
//!     }
//! }
//!
//! // `builtin=` engines run this executable as `<exe> engine NAME`.
//! let config = ConfigFile {
//!     engines: vec![EngineSpec::builtin("hard"), EngineSpec::builtin("medium")],
//!     games: Some(1_000_000),
//!     opening_plies: Some(4),
//!     ..ConfigFile::default()
//! }
//! .resolve()?;
//! let options = RunOptions {
//!     out: "results/sprt".into(),
//!     resume: false,
//!     concurrency: 2,
//!     debug: false,
//! };
//! let runtime = tokio::runtime::Runtime::new()?;
//! let mut pairs = Pairs(0);
//! let outcome = runtime.block_on(run_tournament(config, &options, &mut [&mut pairs]))?;
//! assert!(outcome.summary.stopped_by_reporter);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod config;
pub mod display;
pub mod process;
pub mod results;
pub mod run;
pub mod schedule;
pub mod spec;

use config::TournamentConfig;
use display::{ResultsReporter, Standings};
use results::ResultsWriter;
use run::{Reporter, RunSummary, StartInfo};
use std::io;
use std::path::{Path, PathBuf};

/// Why a tournament could not run.
#[derive(Debug, thiserror::Error)]
pub enum TournamentError {
    /// Bad input found before any game (exit code 2).
    #[error("{0}")]
    Input(String),
    /// The message holds the I/O error's text (not also exposed as `source()`).
    #[error("failed to write results in {path}: {error}")]
    Io { path: PathBuf, error: io::Error },
}

/// Where and how to run.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// The results folder.
    pub out: PathBuf,
    /// Continue the tournament in `out` (its `tournament.toml` is the configuration).
    pub resume: bool,
    /// Games at once.
    pub concurrency: usize,
    /// Keep protocol transcripts in `logs/`.
    pub debug: bool,
}

/// What a finished run reports.
#[derive(Debug)]
pub struct TournamentOutcome {
    pub summary: RunSummary,
    pub standings: Standings,
    /// The configuration as run (engine names settled).
    pub config: TournamentConfig,
}

/// The default results folder: `results/<UTC date-time>`, safe as a file name.
pub fn default_out_dir() -> PathBuf {
    let now = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    PathBuf::from("results").join(now.replace(':', "-"))
}

/// Creates and returns a fresh default results folder: `results/<UTC date-time>`, or with a
/// `-2`, `-3`... suffix when a run started in the same second took that name (the folder
/// is created exclusively, so two runs never share one).
pub fn claim_default_out_dir() -> io::Result<PathBuf> {
    let base = default_out_dir();
    if let Some(parent) = base.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let mut n = 1u32;
    loop {
        let dir = if n == 1 {
            base.clone()
        } else {
            PathBuf::from(format!("{}-{n}", base.display()))
        };
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && n < 1000 => n += 1,
            Err(e) => return Err(e),
        }
    }
}

/// Runs `f` on a results folder claimed by [`claim_default_out_dir`], removing the folder
/// again when `f` fails before any game was recorded.
pub fn with_claimed_dir<T, E>(dir: &Path, f: impl FnOnce() -> Result<T, E>) -> Result<T, E> {
    let r = f();
    if r.is_err() && !dir.join("games.csv").exists() {
        let _ = std::fs::remove_dir_all(dir);
    }
    r
}

/// Reads the configuration saved in a results folder.
pub fn load_saved(dir: &Path) -> Result<TournamentConfig, TournamentError> {
    let path = dir.join("tournament.toml");
    let file =
        config::ConfigFile::load(&path).map_err(|e| TournamentError::Input(e.to_string()))?;
    file.resolve()
        .map_err(|e| TournamentError::Input(format!("{}: {e}", path.display())))
}

/// Writes `tournament.toml` (temporary file, then rename).
fn save_config(dir: &Path, config: &TournamentConfig) -> io::Result<()> {
    let text = toml::to_string(&config.to_file()).map_err(io::Error::other)?;
    let header = "# The resolved configuration of this tournament; `kalaha tournament --resume \
                  DIR` continues it.\n";
    let tmp = dir.join("tournament.toml.tmp");
    let mut f = std::fs::File::create(&tmp)?;
    io::Write::write_all(&mut f, header.as_bytes())?;
    io::Write::write_all(&mut f, text.as_bytes())?;
    f.sync_all()?;
    std::fs::rename(&tmp, dir.join("tournament.toml"))?;
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Runs (or resumes) a tournament: checks every engine before any game, writes
/// `tournament.toml`, `games.csv`, `games.jsonl` and `logs/` into `options.out`, skips the
/// games already there, and feeds every event to the results writer and to `reporters`
/// (after the writer, so a reporter sees only games already on disk). Ctrl-C interrupts
/// (see [`run::run_games`]).
pub async fn run_tournament(
    mut config: TournamentConfig,
    options: &RunOptions,
    reporters: &mut [&mut dyn Reporter],
) -> Result<TournamentOutcome, TournamentError> {
    let out = &options.out;
    let io_err = |error: io::Error| TournamentError::Io {
        path: out.clone(),
        error,
    };
    let created = !out.exists();
    if !options.resume && out.join("games.csv").exists() {
        return Err(TournamentError::Input(format!(
            "{} already holds a tournament: continue it with --resume {0}, or choose another --out",
            out.display()
        )));
    }
    let logs = out.join("logs");
    std::fs::create_dir_all(&logs).map_err(io_err)?;

    let prepared = process::ProcessLauncher::prepare(&mut config, Some(logs), options.debug).await;
    let (launcher, ready) = match prepared {
        Ok(p) => p,
        Err(e) => {
            if created {
                let _ = std::fs::remove_dir_all(out);
            }
            return Err(TournamentError::Input(e.to_string()));
        }
    };
    if !options.resume {
        save_config(out, &config).map_err(io_err)?;
    }
    let existing = results::repair(out).map_err(io_err)?;
    let writer = ResultsWriter::open(out).map_err(io_err)?;
    let mut results_reporter = ResultsReporter(writer);
    let mut standings = Standings::new(&config.names());
    for row in &existing.rows {
        standings.add_row(row);
    }

    let schedule = config.schedule.clone();
    let done_in_shard = schedule
        .games()
        .filter(|g| existing.done.contains(&config.game_id(g.number)))
        .count() as u64;
    let info = StartInfo {
        id: config.id.clone(),
        names: config.names(),
        total: schedule.games_in_shard(),
        done: done_in_shard,
        earlier: standings.clone(),
    };
    let mut tally = Tally(standings);
    let mut extra = Many(reporters);
    let summary = {
        let mut all: [&mut dyn Reporter; 3] = [&mut results_reporter, &mut tally, &mut extra];
        for r in all.iter_mut() {
            r.start(&info).map_err(io_err)?;
        }
        let done = existing.done;
        let id_of = {
            let c = config.clone();
            move |n: u64| c.game_id(n)
        };
        let games = schedule
            .games()
            .filter(move |g| !done.contains(&id_of(g.number)));
        let interrupts = run::ctrl_c_interrupts();
        let summary = run::run_games(
            launcher,
            &config,
            ready,
            games,
            options.concurrency,
            &mut all,
            interrupts,
        )
        .await
        .map_err(io_err)?;
        for r in all.iter_mut() {
            r.finish(&summary).map_err(io_err)?;
        }
        summary
    };
    Ok(TournamentOutcome {
        summary,
        standings: tally.0,
        config,
    })
}

/// Several reporters as one (each sees every event in order; any may stop the run).
pub struct Many<'s, 'r>(pub &'s mut [&'r mut dyn Reporter]);

impl Reporter for Many<'_, '_> {
    fn start(&mut self, info: &StartInfo) -> io::Result<()> {
        self.0.iter_mut().try_for_each(|r| r.start(info))
    }
    fn event(&mut self, event: &run::Event<'_>) -> io::Result<run::Control> {
        let mut control = run::Control::Continue;
        for r in self.0.iter_mut() {
            if r.event(event)? == run::Control::Stop {
                control = run::Control::Stop;
            }
        }
        Ok(control)
    }
    fn finish(&mut self, summary: &RunSummary) -> io::Result<()> {
        self.0.iter_mut().try_for_each(|r| r.finish(summary))
    }
}

/// Keeps the standings of the whole tournament (earlier runs included).
struct Tally(Standings);

impl Reporter for Tally {
    fn event(&mut self, event: &run::Event<'_>) -> io::Result<run::Control> {
        if let run::Event::GameFinished(g) = event {
            self.0.add(g);
        }
        Ok(run::Control::Continue)
    }
}
