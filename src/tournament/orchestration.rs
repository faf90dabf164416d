//! The steps every command that plays games takes, in this order, whatever its schedule,
//! launcher, views and stop rule: claim the results folder ([`Run::claim`]), start and
//! check the engines ([`Run::start_engines`]), save the configuration
//! ([`Run::save_config`]), repair and count what the folder holds ([`Run::count`]), then
//! play and shut down ([`Run::play`]).
//!
//! `kalaha tournament`, `match` and `sprt` go through [`super::run_tournament`]; a play
//! session (`web::play`) takes the same steps with a launcher that seats the person and a
//! schedule without end.

use super::config::{ConfigFile, TournamentConfig};
use super::events::{RunSummary, StartInfo, StopRule, View};
use super::launcher::{ProcessLauncher, RunningEngine};
use super::run::{Launcher, RunInput, ctrl_c_interrupts, run_games};
use super::schedule::ScheduledGame;
use super::{Recorder, TournamentError};
use crate::results::{self, Claim, ResultsFolder, ResultsWriter, RunKind};
use crate::stats::Tally;
use std::collections::HashSet;
use std::io;
use std::time::Duration;

/// A run under way: its folder, locked until the run is dropped, and the runtime its
/// engines live on.
pub struct Run {
    folder: ResultsFolder,
    kind: RunKind,
    runtime: tokio::runtime::Runtime,
    debug: bool,
}

/// What a results folder held when the run began, counted.
pub struct Counted {
    /// Ids of the games already recorded.
    pub done: HashSet<String>,
    /// Their scoreboard.
    pub tally: Tally,
    /// What the repair found, for the user.
    pub notes: Vec<String>,
}

impl Run {
    /// Claims and locks the results folder `out` as `claim` says, for a run of `kind`.
    /// `debug` keeps the engines' protocol transcripts.
    pub fn claim(
        out: &std::path::Path,
        claim: Claim,
        kind: RunKind,
        debug: bool,
    ) -> Result<Run, TournamentError> {
        let folder =
            ResultsFolder::claim(out, claim).map_err(|e| TournamentError::Input(e.to_string()))?;
        // Before any engine starts with settings the games were not played with.
        if claim == Claim::Resume
            && let Some(change) = super::played_changes(out)
        {
            return Err(TournamentError::Input(change));
        }
        // One thread plays every game: the referee's work per move is tiny next to the
        // engines', and a single thread wakes up less often than a pool.
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|error| TournamentError::Io {
                path: out.to_path_buf(),
                error,
            })?;
        Ok(Run {
            folder,
            kind,
            runtime,
            debug,
        })
    }

    /// The results folder.
    pub fn folder(&self) -> &ResultsFolder {
        &self.folder
    }

    fn io_error(&self, error: io::Error) -> TournamentError {
        TournamentError::Io {
            path: self.folder.path().to_path_buf(),
            error,
        }
    }

    /// Starts every engine of `config` and checks it (hello, options), settling its name,
    /// version and author; returns the launcher and the instances started. On a failure
    /// the folder stays, with the engines' logs the error points to.
    pub fn start_engines(
        &self,
        config: &mut TournamentConfig,
    ) -> Result<(ProcessLauncher, Vec<Vec<RunningEngine>>), TournamentError> {
        self.check_writable(config)?;
        self.runtime
            .block_on(ProcessLauncher::prepare(
                config,
                Some(self.folder.logs()),
                self.debug,
            ))
            .map_err(|e| TournamentError::Input(e.to_string()))
    }

    /// Refuses a `write=` folder that holds results (this run's folder, earlier runs below
    /// it) or lies inside a folder of results (`results::check_write_folder`): the
    /// sandbox hides this run's folder, but an engine could change what such a folder
    /// holds, which `kalaha ratings` later reads as it is.
    fn check_writable(&self, config: &TournamentConfig) -> Result<(), TournamentError> {
        for e in &config.engines {
            for w in &e.resolved.write {
                results::check_write_folder(w, self.folder.path()).map_err(|why| {
                    TournamentError::Input(format!("engine {}: {why}", e.identity.name))
                })?;
            }
        }
        self.check_shared_hidden(config)
    }

    /// Refuses a worker of a shared test whose engine lives in the shared folder (its
    /// program or working folder there): the sandbox could then cover only this worker's
    /// folder, and the engine would read the other workers' games and logs and every
    /// engine's `env.*`. A built-in engine reads nothing and is let be.
    fn check_shared_hidden(&self, config: &TournamentConfig) -> Result<(), TournamentError> {
        let hidden = results::hidden_from_engines(self.folder.path());
        let [shared, _run] = hidden.as_slice() else {
            return Ok(());
        };
        for e in config.engines.iter().filter(|e| e.spec.builtin.is_none()) {
            let c = &e.resolved.command;
            if crate::sandbox::folder_to_hide(shared, &c.program, c.dir.as_deref()).is_none() {
                return Err(TournamentError::Input(format!(
                    "engine {}: its program or working folder is inside the shared folder {}, \
                     which is hidden from the engines of its workers; run the workers from \
                     another folder (or give dir=), and keep the engine outside it",
                    e.identity.name,
                    crate::record::shown_path(shared)
                )));
            }
        }
        Ok(())
    }

    /// Saves `file` as the folder's `tournament.toml`, with the kind of run, under the
    /// comment `header` (what the file is and what continues it).
    pub fn save_config(&self, file: ConfigFile, header: &str) -> Result<(), TournamentError> {
        let file = ConfigFile {
            run: Some(self.kind),
            ..file
        };
        let text = toml::to_string(&file)
            .map_err(io::Error::other)
            .map_err(|e| self.io_error(e))?;
        let header: String = header.lines().map(|l| format!("# {l}\n")).collect();
        let text = format!("{header}{text}");
        // The settings the games are played with, apart from the file a user may edit.
        self.folder
            .write(results::Files::played_toml, text.as_bytes())
            .and_then(|()| {
                self.folder
                    .write(results::Files::tournament_toml, text.as_bytes())
            })
            .map_err(|e| self.io_error(e))
    }

    /// Repairs what the folder holds (a torn tail left by a crash, rows that disagree with
    /// their records) and counts the games of `config` recorded in it.
    pub fn count(&self, config: &TournamentConfig) -> Result<Counted, TournamentError> {
        super::existing(self.folder.path(), config).map_err(|e| match e.kind() {
            io::ErrorKind::InvalidData => TournamentError::Input(e.to_string()),
            _ => self.io_error(e),
        })
    }

    /// Plays `games` with `launcher` (`ready`: instances already started, per engine), up
    /// to `concurrency` at once, recording each into the folder, counting it in `tally`
    /// (the games already recorded) and showing it to `views`, until the games run out,
    /// `stop` or a view decides, or an interruption (Ctrl-C, SIGTERM); then stops the
    /// engines. Returns the summary and the scoreboard of the whole run.
    #[expect(
        clippy::too_many_arguments,
        reason = "the parts that differ between commands"
    )]
    pub fn play<L, G>(
        self,
        config: &TournamentConfig,
        launcher: L,
        ready: Vec<Vec<L::Engine>>,
        (tally, info): (Tally, StartInfo),
        games: G,
        concurrency: usize,
        views: &mut [&mut dyn View],
        stop: Option<Box<dyn StopRule>>,
    ) -> Result<(RunSummary, Tally), TournamentError>
    where
        L: Launcher,
        G: Iterator<Item = ScheduledGame> + Send + 'static,
    {
        let writer = ResultsWriter::open(self.folder.path()).map_err(|e| self.io_error(e))?;
        let recorder = Recorder {
            writer: Some(writer),
            tally,
            info,
        };
        let interrupts = {
            let _inside = self.runtime.enter();
            ctrl_c_interrupts()
        };
        let stop = stop.map(|mut rule| {
            rule.start(&recorder.info);
            (rule, recorder.tally.clone())
        });
        let repeats =
            super::repeats::Repeats::from_folder(self.folder.path(), &config.id, &config.schedule)
                .map_err(|e| self.io_error(e))?;
        let input = RunInput {
            games,
            concurrency,
            interrupts,
            stop,
            repeats,
        };
        let played = run_games(
            &self.runtime,
            launcher,
            config,
            ready,
            input,
            recorder,
            views,
        );
        // Every engine is stopped by now; do not wait for stray tasks.
        let Run {
            folder, runtime, ..
        } = self;
        runtime.shutdown_timeout(Duration::from_millis(100));
        // The recorder reports a failed write of the results in the summary; what comes
        // back as an error is a view that could not show the run.
        played.map_err(|error| TournamentError::Output {
            path: folder.path().to_path_buf(),
            error,
        })
    }
}
