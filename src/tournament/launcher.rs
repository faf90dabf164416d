//! Engines as supervised processes: the [`Launcher`] of real tournaments, and the start-up
//! checks that run before any game (every engine starts, passes the handshake, accepts its
//! options and answers a ping), which also settle the engines' names. An engine speaks
//! kalaha's protocol or, with `protocol=kgp`, the Kalah Game Protocol ([`crate::kgp`]).

use super::config::TournamentConfig;
use super::run::Launcher;
use super::spec::{EngineProtocol, Identity, NameSource, dedupe_names};
use crate::kgp::{KgpEngine, KgpError};
use crate::record::{Fault, SideResult, Termination, TimeLimit, clean_text, shown_name};
use crate::referee::{Contestant, Reply};
use crate::rules::{Move, Position, Rules, Side};
use crate::supervisor::{Engine, EngineCommand, EngineError, LogPlace, Settings};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Duration;
use tokio::task::JoinSet;

/// Bytes of log all instances of one engine may write in one run.
pub(crate) const LOG_BUDGET: u64 = 10 << 20;

/// How to start one engine of the tournament.
#[derive(Clone, Debug)]
struct LaunchSpec {
    command: EngineCommand,
    options: Vec<(String, serde_json::Value)>,
    settings: Settings,
    protocol: EngineProtocol,
}

/// A running engine of either protocol.
pub enum RunningEngine {
    Kalaha(Engine),
    Kgp(KgpEngine),
}

/// Why an engine of either protocol failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum StartError {
    #[error(transparent)]
    Kalaha(#[from] EngineError),
    #[error(transparent)]
    Kgp(#[from] KgpError),
}

impl StartError {
    pub(crate) fn fault(&self) -> Fault {
        match self {
            StartError::Kalaha(e) => e.fault(),
            StartError::Kgp(e) => e.fault(),
        }
    }
}

impl RunningEngine {
    /// Starts `spec`'s engine: the handshake of its protocol.
    async fn start(spec: &LaunchSpec) -> Result<RunningEngine, StartError> {
        Ok(match spec.protocol {
            EngineProtocol::Kalaha => {
                RunningEngine::Kalaha(Engine::start(&spec.command, &spec.settings).await?)
            }
            EngineProtocol::Kgp => {
                RunningEngine::Kgp(KgpEngine::start(&spec.command, &spec.settings).await?)
            }
        })
    }

    /// The name the engine gives itself: its `hello` name, or a KGP agent's
    /// `set info:name` (empty if it gave none).
    pub(crate) fn own_name(&self) -> &str {
        match self {
            RunningEngine::Kalaha(e) => &e.hello().name,
            RunningEngine::Kgp(a) => &a.info().name,
        }
    }

    /// The version the engine gives (KGP has none).
    pub(crate) fn version(&self) -> &str {
        match self {
            RunningEngine::Kalaha(e) => &e.hello().version,
            RunningEngine::Kgp(_) => "",
        }
    }

    /// The author the engine gives: its `hello` author, or a KGP agent's
    /// `set info:authors`.
    pub(crate) fn author(&self) -> &str {
        match self {
            RunningEngine::Kalaha(e) => &e.hello().author,
            RunningEngine::Kgp(a) => &a.info().authors,
        }
    }

    /// Ends the engine; never fails.
    pub(crate) async fn shutdown(self) {
        match self {
            RunningEngine::Kalaha(e) => {
                e.shutdown().await;
            }
            RunningEngine::Kgp(a) => {
                a.shutdown().await;
            }
        }
    }
}

impl Contestant for RunningEngine {
    async fn new_game(
        &mut self,
        game: &str,
        rules: Rules,
        start: Option<&Position>,
        side: Side,
    ) -> Result<(), Fault> {
        match self {
            RunningEngine::Kalaha(e) => Contestant::new_game(e, game, rules, start, side).await,
            RunningEngine::Kgp(a) => Contestant::new_game(a, game, rules, start, side).await,
        }
    }

    async fn go(
        &mut self,
        pos: &Position,
        moves: &[Move],
        time: TimeLimit,
        deadline: Duration,
    ) -> Result<Reply, Fault> {
        match self {
            RunningEngine::Kalaha(e) => Contestant::go(e, pos, moves, time, deadline).await,
            RunningEngine::Kgp(a) => Contestant::go(a, pos, moves, time, deadline).await,
        }
    }

    async fn game_over(
        &mut self,
        game: &str,
        result: SideResult,
        south: u16,
        north: u16,
        termination: Termination,
    ) -> Result<(), Fault> {
        match self {
            RunningEngine::Kalaha(e) => {
                Contestant::game_over(e, game, result, south, north, termination).await
            }
            RunningEngine::Kgp(a) => {
                Contestant::game_over(a, game, result, south, north, termination).await
            }
        }
    }

    async fn between_games(&mut self) -> Result<(), String> {
        match self {
            RunningEngine::Kalaha(e) => Contestant::between_games(e).await,
            RunningEngine::Kgp(a) => Contestant::between_games(a).await,
        }
    }
}

/// Starts engine processes, each instance with its own log (and transcript with `debug`)
/// in `logs/`.
pub struct ProcessLauncher {
    engines: Vec<LaunchSpec>,
}

/// Why the tournament could not start (exit code 2).
#[derive(Debug, thiserror::Error)]
#[error("engine {}: {}", clean_text(engine), clean_text(message))]
pub(crate) struct StartupError {
    pub engine: String,
    pub message: String,
}

impl ProcessLauncher {
    /// A fresh instance of engine `index`: handshake, options, and the set-up ping (a KGP
    /// agent has no options; its handshake ends with a ping).
    async fn start_ready(&self, index: usize) -> Result<RunningEngine, StartError> {
        let spec = &self.engines[index];
        let mut running = RunningEngine::start(spec).await?;
        let RunningEngine::Kalaha(engine) = &mut running else {
            return Ok(running);
        };
        let mut ready = Ok(());
        for (name, value) in &spec.options {
            ready = engine.set_option(name, value.clone()).await;
            if ready.is_err() {
                break;
            }
        }
        if ready.is_ok() {
            ready = engine.ping().await.map(|_| ());
        }
        match ready {
            Ok(()) => Ok(running),
            Err(e) => {
                running.shutdown().await;
                Err(e.into())
            }
        }
    }

    /// Starts one instance of every engine (all at once), checks the handshake, the
    /// options and a ping, settles the engines' names (an engine given by command without
    /// `name=` is called by its `hello` name) and returns the launcher with those first
    /// instances.
    pub(crate) async fn prepare(
        config: &mut TournamentConfig,
        logs: Option<PathBuf>,
        debug: bool,
    ) -> Result<(ProcessLauncher, Vec<Vec<RunningEngine>>), StartupError> {
        let stems = log_stems(config.engines.iter().map(|e| e.identity.name.as_str()));
        let launcher = ProcessLauncher {
            engines: config
                .engines
                .iter()
                .zip(stems)
                .map(|(e, stem)| LaunchSpec {
                    command: e.resolved.command.clone(),
                    options: Vec::new(),
                    protocol: e.resolved.protocol,
                    settings: Settings {
                        startup_timeout: config.startup_timeout,
                        line_limit: config.line_limit,
                        logs: logs.as_ref().map(|dir| {
                            let left = LOG_BUDGET.saturating_sub(logged(dir, &stem));
                            LogPlace {
                                dir: dir.clone(),
                                stem,
                                budget: Arc::new(AtomicU64::new(left)),
                            }
                        }),
                        transcript: debug,
                        limits: e.resolved.limits,
                        writable: e.resolved.write.clone(),
                        network: e.resolved.network,
                        // The results folder, whose logs/ folder `logs` is, or the
                        // shared folder that holds it.
                        private_dirs: logs
                            .as_ref()
                            .and_then(|d| d.parent())
                            .map(crate::results::hidden_from_engines)
                            .unwrap_or_default(),
                        ..Settings::default()
                    },
                })
                .collect(),
        };
        let rules = config.rules();
        let standard = !rules.empty_capture() && rules.sweep() == crate::rules::Sweep::Owner;
        for e in &config.engines {
            if e.resolved.protocol == EngineProtocol::Kgp && !standard {
                tracing::warn!(
                    "engine {}: KGP tells an agent the board, not the rule variant; it plays \
                     legal moves but may assume the standard rules, not {rules}",
                    e.identity.name
                );
            }
        }
        let name_of = |i: usize| config.engines[i].identity.name.clone();
        let mut first = launcher.start_all().await.map_err(|(i, e)| StartupError {
            engine: name_of(i),
            message: format!(
                "failed to start `{}`: {e}",
                launcher.engines[i].command.display()
            ),
        })?;
        // Names first, so that what setting the options says names each engine as the
        // rest of the run does.
        match identities(config, &first) {
            Ok(settled) => {
                for (entry, identity) in config.engines.iter_mut().zip(settled) {
                    entry.identity = identity;
                }
            }
            Err(e) => {
                shutdown_all(first).await;
                return Err(e);
            }
        }
        let mut launcher = match launcher.set_options(config, &mut first).await {
            Ok(l) => l,
            Err(e) => {
                shutdown_all(first).await;
                return Err(e);
            }
        };
        launcher.follow_names(config, &mut first);
        Ok((launcher, first.into_iter().map(|e| vec![e]).collect()))
    }

    /// Logs under the settled names: the first instances' files, created before the names
    /// were known, are moved to `NAME.N.log` (and `.transcript`), and later instances
    /// start there.
    fn follow_names(&mut self, config: &TournamentConfig, first: &mut [RunningEngine]) {
        let stems = log_stems(config.engines.iter().map(|e| e.identity.name.as_str()));
        for ((i, running), stem) in first.iter_mut().enumerate().zip(stems) {
            let Some(place) = &mut self.engines[i].settings.logs else {
                continue;
            };
            if place.stem == stem {
                continue;
            }
            place.stem = stem.clone();
            let moved = match running {
                RunningEngine::Kalaha(engine) => engine.rename_logs(&stem),
                RunningEngine::Kgp(agent) => agent.rename_logs(&stem),
            };
            if let Err(e) = moved {
                tracing::warn!("cannot move the logs of engine {stem} to its name: {e}");
            }
        }
    }

    /// Starts one instance of every engine at once (handshakes can be slow); on a failure
    /// stops the others and says which failed.
    async fn start_all(&self) -> Result<Vec<RunningEngine>, (usize, StartError)> {
        let mut set = JoinSet::new();
        for (i, spec) in self.engines.iter().enumerate() {
            let spec = spec.clone();
            set.spawn(async move { (i, RunningEngine::start(&spec).await) });
        }
        let mut started: Vec<Option<RunningEngine>> =
            (0..self.engines.len()).map(|_| None).collect();
        let mut failure = None;
        while let Some(joined) = set.join_next().await {
            match joined.expect("a start task never panics") {
                (i, Ok(e)) => started[i] = Some(e),
                (i, Err(e)) => {
                    if failure.as_ref().is_none_or(|(j, _)| i < *j) {
                        failure = Some((i, e));
                    }
                }
            }
        }
        match failure {
            Some(f) => {
                shutdown_all(started.into_iter().flatten().collect()).await;
                Err(f)
            }
            None => Ok(started.into_iter().map(|e| e.expect("started")).collect()),
        }
    }

    /// Converts each engine's options to the types it declares, sets them on its first
    /// instance and checks it is still there with a ping.
    async fn set_options(
        mut self,
        config: &TournamentConfig,
        first: &mut [RunningEngine],
    ) -> Result<ProcessLauncher, StartupError> {
        for (i, running) in first.iter_mut().enumerate() {
            let entry = &config.engines[i];
            let problem = |message: String| StartupError {
                engine: entry.identity.name.clone(),
                message,
            };
            let engine = match running {
                RunningEngine::Kalaha(e) => e,
                // KGP has no options; the handshake ended with a ping.
                RunningEngine::Kgp(_) => continue,
            };
            let declared = engine.hello().options.clone();
            let mut wanted = entry.resolved.options.clone();
            for (name, value) in [("depth", config.depth), ("nodes", config.nodes)] {
                let Some(v) = value else { continue };
                if !declared.iter().any(|o| o.name == name) {
                    tracing::warn!(
                        "engine {}: it declares no {name} option, so the {name} limit does \
                         not apply to it",
                        entry.identity.name
                    );
                } else if !wanted.iter().any(|(n, _)| n == name) {
                    wanted.push((name.to_string(), v.to_string()));
                }
            }
            let mut typed = Vec::new();
            for (name, text) in &wanted {
                let opt = crate::protocol::find_option(&declared, name).map_err(problem)?;
                typed.push((name.clone(), opt.parse_text(text).map_err(problem)?));
            }
            for (name, value) in &typed {
                engine
                    .set_option(name, value.clone())
                    .await
                    .map_err(|e| problem(e.to_string()))?;
            }
            // The readiness barrier: an engine that dies on its options fails here.
            engine.ping().await.map_err(|e| {
                problem(if typed.is_empty() {
                    format!("failed at the ping after its hello: {e}")
                } else {
                    format!("failed after its options were set: {e}")
                })
            })?;
            self.engines[i].options = typed;
        }
        Ok(self)
    }
}

/// The engines' identities from their handshakes: the `hello` name of an engine given by
/// command without `name=` (made safe to show, and cut to the longest name allowed),
/// duplicates numbered, and the version and author each gave.
fn identities(
    config: &TournamentConfig,
    first: &[RunningEngine],
) -> Result<Vec<Identity>, StartupError> {
    let mut names: Vec<String> = Vec::new();
    let mut sources = Vec::new();
    for (i, entry) in config.engines.iter().enumerate() {
        let given = &entry.identity.name;
        let use_hello = !entry.explicit_name() && entry.spec.cmd.is_some();
        let hello_name = shown_name(first[i].own_name());
        let (name, source) = match (use_hello, hello_name) {
            (true, Some(name)) => {
                if name != first[i].own_name().trim() {
                    tracing::warn!(
                        "engine {given}: its hello name was cut or cleaned to \"{name}\""
                    );
                }
                (name, NameSource::Hello)
            }
            (true, None) => {
                tracing::warn!(
                    "engine {given}: its hello name \"{}\" holds nothing that can be shown; it \
                     is named after its program",
                    crate::record::shown_line(first[i].own_name())
                );
                (given.clone(), NameSource::Given)
            }
            _ if entry.explicit_name() => (given.clone(), NameSource::User),
            _ => (given.clone(), NameSource::Given),
        };
        names.push(name);
        sources.push(source);
    }
    dedupe_names(&mut names, &sources).map_err(|e| StartupError {
        engine: String::new(),
        message: e.to_string(),
    })?;
    for w in crate::record::look_alike_warnings(names.iter().map(String::as_str)) {
        tracing::warn!("{w}");
    }
    Ok(names
        .into_iter()
        .zip(first)
        .map(|(name, running)| Identity {
            name,
            version: shown_name(running.version()),
            author: shown_name(running.author()),
        })
        .collect())
}

async fn shutdown_all(engines: Vec<RunningEngine>) {
    let mut set = JoinSet::new();
    for e in engines {
        set.spawn(e.shutdown());
    }
    while set.join_next().await.is_some() {}
}

impl Launcher for ProcessLauncher {
    type Engine = RunningEngine;

    async fn start(&self, index: usize) -> Result<RunningEngine, Fault> {
        self.start_ready(index).await.map_err(|e| e.fault())
    }

    async fn stop(&self, engine: RunningEngine) {
        engine.shutdown().await;
    }
}

/// Bytes already in the logs of engine `stem` in `dir` (earlier runs of the tournament):
/// the budget is per engine and tournament, not per run.
fn logged(dir: &std::path::Path, stem: &str) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.starts_with(&format!("{stem}.")) && name.ends_with(".log")
        })
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.len())
        .sum()
}

/// The stems of the log files of the engines named `names`, one each: the name made
/// file-safe ([`file_safe`]), and when that is another engine's stem too (an engine may be
/// called what another's name cleans to), the engine's place in the run added.
fn log_stems<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut stems: Vec<String> = Vec::new();
    for (i, name) in names.into_iter().enumerate() {
        let mut stem = file_safe(name);
        while stems.contains(&stem) {
            stem = format!("{stem}-e{}", i + 1);
        }
        stems.push(stem);
    }
    stems
}

/// A name usable in a file name.
fn file_safe(name: &str) -> String {
    let safe: String = name
        .chars()
        .take(64)
        .enumerate()
        .map(|(i, c)| {
            // Never a leading '-': a file name that reads as an option to a shell command.
            if c.is_ascii_alphanumeric() || c == '_' || (c == '-' && i > 0) {
                c
            } else {
                '_'
            }
        })
        .collect();
    if safe == name {
        return safe;
    }
    // Changed, so it could be another engine's: a short hash of the name keeps it apart
    // (`a/b` and `a.b` both clean to `a_b`, and an engine may be called `a_b`).
    let hash = name.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{safe}-{:06x}", hash & 0xff_ffff)
}

#[cfg(test)]
mod file_name_tests {
    use super::{file_safe, log_stems};

    /// An engine named what another's name cleans to gets a file of its own all the same.
    #[test]
    fn every_engine_of_a_run_has_log_files_of_its_own() {
        let cleaned = file_safe("a/b");
        let names = ["a/b", cleaned.as_str(), "hard", "a.b", cleaned.as_str()];
        let stems = log_stems(names);
        let mut unique = stems.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "{stems:?}");
        assert_eq!(stems[0], cleaned);
        assert_eq!(stems[2], "hard");
        assert!(stems.iter().all(|s| !s.starts_with('-')), "{stems:?}");
    }

    #[test]
    fn log_names_are_distinct_and_never_start_with_a_dash() {
        let names = ["a/b", "a_b", "a.b", "a b", "-rf", "hard", "h\u{430}rd"];
        let stems: Vec<String> = names.iter().map(|n| file_safe(n)).collect();
        let mut unique = stems.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "{stems:?}");
        assert!(stems.iter().all(|s| !s.starts_with('-')), "{stems:?}");
        assert_eq!(file_safe("hard"), "hard");
        assert_eq!(file_safe("a_b"), "a_b");
        assert!(file_safe("-rf").starts_with("_rf-"), "{}", file_safe("-rf"));
        assert!(stems.iter().all(|s| {
            s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        }));
    }
}
