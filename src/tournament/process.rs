//! Engines as supervised processes: the [`Launcher`] of real tournaments, the start-up
//! checks that run before any game (every engine starts, passes the handshake and accepts
//! its options), and the mapping of supervisor errors to terminations.

use crate::engines::{EngineOption, OptionKind};
use crate::protocol::{GameResult as WireResult, TimeLimit as WireTime};
use crate::referee::{Contestant, Fault, MAX_RECORDED_LINE, Reply, Termination, TimeLimit};
use crate::rules::{Move, Position, Rules, Side};
use crate::supervisor::{Engine, EngineCommand, EngineError, Settings};
use crate::tournament::config::TournamentConfig;
use crate::tournament::run::Launcher;
use crate::tournament::spec::dedupe_names;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The termination an engine error causes.
pub fn fault_of(e: &EngineError) -> Fault {
    let termination = match e {
        EngineError::Spawn { .. }
        | EngineError::Exited { .. }
        | EngineError::StdoutClosed
        | EngineError::Io(_) => Termination::Crash,
        EngineError::HandshakeTimeout { .. } | EngineError::Stall { .. } => Termination::Stall,
        EngineError::Timeout { .. } => Termination::Timeout,
        EngineError::IllegalMove { .. } => Termination::IllegalMove,
        EngineError::Protocol { .. }
        | EngineError::LineTooLong { .. }
        | EngineError::NotJson { .. }
        | EngineError::Malformed { .. }
        | EngineError::WrongMessage { .. }
        | EngineError::BadOption { .. } => Termination::ProtocolError,
    };
    Fault {
        termination,
        detail: e.to_string(),
        line: e
            .line()
            .map(|l| crate::referee::truncate(l, MAX_RECORDED_LINE)),
    }
}

fn wire_time(t: TimeLimit) -> WireTime {
    match t {
        TimeLimit::MoveTime(d) => WireTime::MoveTime {
            move_ms: d.as_millis() as u64,
        },
        TimeLimit::Clock {
            remaining,
            increment,
            opponent_remaining,
        } => WireTime::Clock {
            remaining_ms: remaining.as_millis() as u64,
            increment_ms: increment.as_millis() as u64,
            opponent_remaining_ms: Some(opponent_remaining.as_millis() as u64),
        },
    }
}

impl Contestant for Engine {
    async fn new_game(&mut self, game: &str, rules: Rules, side: Side) -> Result<(), Fault> {
        Engine::new_game(self, game, rules, side)
            .await
            .map_err(|e| fault_of(&e))
    }

    async fn go(
        &mut self,
        pos: &Position,
        moves: &[Move],
        time: TimeLimit,
        deadline: Duration,
    ) -> Result<Reply, Fault> {
        let r = Engine::go(self, pos, moves, wire_time(time), deadline)
            .await
            .map_err(|e| fault_of(&e))?;
        Ok(Reply {
            pit: r.pit,
            line: r.line,
            infos: r.infos,
            elapsed: r.elapsed,
        })
    }

    async fn game_over(
        &mut self,
        game: &str,
        result: &'static str,
        south: u16,
        north: u16,
        termination: Termination,
    ) -> Result<(), Fault> {
        let result = match result {
            "win" => WireResult::Win,
            "draw" => WireResult::Draw,
            _ => WireResult::Loss,
        };
        Engine::game_over(self, game, result, south, north, termination.as_str())
            .await
            .map_err(|e| fault_of(&e))
    }
}

/// How to start one engine of the tournament.
#[derive(Clone, Debug)]
struct LaunchSpec {
    name: String,
    command: EngineCommand,
    options: Vec<(String, serde_json::Value)>,
}

/// Starts engine processes, each instance with its own stderr log (and transcript with
/// `debug`) in `logs/`.
pub struct ProcessLauncher {
    engines: Vec<LaunchSpec>,
    settings: Settings,
    logs: Option<PathBuf>,
    debug: bool,
    instances: AtomicU64,
}

/// Why the tournament could not start (exit code 2).
#[derive(Debug, thiserror::Error)]
#[error("engine {engine}: {message}")]
pub struct StartupError {
    pub engine: String,
    pub message: String,
}

impl ProcessLauncher {
    fn settings_for(&self, name: &str) -> Settings {
        let n = self.instances.fetch_add(1, Ordering::Relaxed) + 1;
        let mut s = self.settings.clone();
        if let Some(dir) = &self.logs {
            let stem = format!("{}.{n}", file_safe(name));
            s.stderr_log = Some(dir.join(format!("{stem}.stderr.log")));
            if self.debug {
                s.transcript = Some(dir.join(format!("{stem}.transcript")));
            }
        }
        s
    }

    async fn start_ready(&self, index: usize) -> Result<Engine, EngineError> {
        let spec = &self.engines[index];
        let settings = self.settings_for(&spec.name);
        let mut engine = Engine::start(&spec.command, &settings).await?;
        for (name, value) in &spec.options {
            if let Err(e) = engine.set_option(name, value.clone()).await {
                engine.shutdown().await;
                return Err(e);
            }
        }
        Ok(engine)
    }

    /// Starts one instance of every engine (all at once), checks the handshake and the
    /// options, settles the engines' names (an engine given by command without `name=` is
    /// called by its `hello` name) and returns the launcher with those first instances.
    pub async fn prepare(
        config: &mut TournamentConfig,
        logs: Option<PathBuf>,
        debug: bool,
    ) -> Result<(ProcessLauncher, Vec<Vec<Engine>>), StartupError> {
        let settings = Settings {
            startup_timeout: config.startup_timeout,
            line_limit: config.line_limit,
            ..Settings::default()
        };
        let mut launcher = ProcessLauncher {
            engines: config
                .engines
                .iter()
                .map(|e| LaunchSpec {
                    name: e.resolved.name.clone(),
                    command: EngineCommand {
                        program: e.resolved.program.clone(),
                        args: e.resolved.args.clone(),
                        dir: e.resolved.dir.clone(),
                        env: e.resolved.env.clone(),
                    },
                    options: Vec::new(),
                })
                .collect(),
            settings,
            logs,
            debug,
            instances: AtomicU64::new(0),
        };
        // Start them all concurrently; handshakes can be slow.
        let starts = launcher.engines.iter().map(|spec| {
            let settings = launcher.settings_for(&spec.name);
            let command = spec.command.clone();
            async move { Engine::start(&command, &settings).await }
        });
        let started = futures_join_all(starts).await;
        let mut first = Vec::new();
        let mut failure = None;
        for (i, r) in started.into_iter().enumerate() {
            match r {
                Ok(e) => first.push(e),
                Err(e) => {
                    failure.get_or_insert(StartupError {
                        engine: config.engines[i].resolved.name.clone(),
                        message: format!(
                            "failed to start `{}`: {e}",
                            launcher.engines[i].command.display()
                        ),
                    });
                }
            }
        }
        if let Some(f) = failure {
            for e in first {
                e.shutdown().await;
            }
            return Err(f);
        }
        // Options, converted to the declared types, then set on the first instances.
        let mut problem = None;
        for (i, engine) in first.iter_mut().enumerate() {
            let entry = &config.engines[i];
            let declared = &engine.hello().options;
            let mut wanted = entry.resolved.options.clone();
            for (name, value) in [("depth", config.depth), ("nodes", config.nodes)] {
                if let Some(v) = value
                    && declared.iter().any(|o| o.name == name)
                    && !wanted.iter().any(|(n, _)| n == name)
                {
                    wanted.push((name.to_string(), v.to_string()));
                }
            }
            let mut typed = Vec::new();
            for (name, text) in &wanted {
                match typed_value(declared, name, text) {
                    Ok(v) => typed.push((name.clone(), v)),
                    Err(m) => {
                        problem.get_or_insert(StartupError {
                            engine: entry.resolved.name.clone(),
                            message: m,
                        });
                    }
                }
            }
            for (name, value) in &typed {
                if let Err(e) = engine.set_option(name, value.clone()).await {
                    problem.get_or_insert(StartupError {
                        engine: entry.resolved.name.clone(),
                        message: e.to_string(),
                    });
                }
            }
            launcher.engines[i].options = typed;
        }
        // The readiness barrier: an engine that dies on its options fails here.
        if problem.is_none() {
            for (i, engine) in first.iter_mut().enumerate() {
                if let Err(e) = engine.ping().await {
                    problem = Some(StartupError {
                        engine: config.engines[i].resolved.name.clone(),
                        message: format!("failed after its options were set: {e}"),
                    });
                    break;
                }
            }
        }
        if let Some(p) = problem {
            for e in first {
                e.shutdown().await;
            }
            return Err(p);
        }
        // Names.
        let mut names: Vec<String> = Vec::new();
        let mut explicit = Vec::new();
        for (i, entry) in config.engines.iter().enumerate() {
            let hello_name = first[i].hello().name.trim();
            let use_hello = !entry.explicit_name && entry.spec.cmd.is_some();
            // A name with control characters (a newline would break the display and the
            // results files) is not used.
            let usable = !hello_name.is_empty() && !hello_name.chars().any(char::is_control);
            names.push(if use_hello && usable {
                hello_name.to_string()
            } else {
                entry.resolved.name.clone()
            });
            explicit.push(entry.explicit_name);
        }
        if let Err(e) = dedupe_names(&mut names, &explicit) {
            for e in first {
                e.shutdown().await;
            }
            return Err(StartupError {
                engine: String::new(),
                message: e.to_string(),
            });
        }
        for (i, name) in names.into_iter().enumerate() {
            config.engines[i].resolved.name = name.clone();
            launcher.engines[i].name = name;
        }
        Ok((launcher, first.into_iter().map(|e| vec![e]).collect()))
    }
}

impl Launcher for ProcessLauncher {
    type Engine = Engine;

    async fn start(&self, index: usize) -> Result<Engine, Fault> {
        self.start_ready(index).await.map_err(|e| fault_of(&e))
    }

    async fn stop(&self, engine: Engine) {
        engine.shutdown().await;
    }
}

/// Converts an option's text to the JSON type the engine declares.
fn typed_value(
    declared: &[EngineOption],
    name: &str,
    text: &str,
) -> Result<serde_json::Value, String> {
    let Some(opt) = declared.iter().find(|o| o.name == name) else {
        let known: Vec<&str> = declared.iter().map(|o| o.name.as_str()).collect();
        return Err(format!(
            "unknown option {name:?} (the engine declares: {})",
            if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            }
        ));
    };
    match &opt.kind {
        OptionKind::Int { .. } => text
            .trim()
            .parse::<i64>()
            .map(serde_json::Value::from)
            .map_err(|_| format!("option {name}: {text:?} is not an integer")),
        OptionKind::Bool { .. } => match text.trim() {
            "true" | "1" | "on" | "yes" => Ok(true.into()),
            "false" | "0" | "off" | "no" => Ok(false.into()),
            _ => Err(format!("option {name}: {text:?} is not true or false")),
        },
        OptionKind::String { .. } | OptionKind::Choice { .. } => Ok(text.into()),
    }
}

/// A name usable in a file name.
fn file_safe(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Awaits all futures concurrently, keeping their order.
async fn futures_join_all<F>(futures: impl Iterator<Item = F>) -> Vec<F::Output>
where
    F: std::future::Future,
{
    let futures: Vec<_> = futures.map(Box::pin).collect();
    let mut results: Vec<Option<F::Output>> = futures.iter().map(|_| None).collect();
    let mut pending: Vec<_> = futures.into_iter().enumerate().collect();
    std::future::poll_fn(|cx| {
        pending.retain_mut(|(i, f)| match f.as_mut().poll(cx) {
            std::task::Poll::Ready(v) => {
                results[*i] = Some(v);
                false
            }
            std::task::Poll::Pending => true,
        });
        if pending.is_empty() {
            std::task::Poll::Ready(())
        } else {
            std::task::Poll::Pending
        }
    })
    .await;
    results
        .into_iter()
        .map(|r| r.expect("every future finished"))
        .collect()
}
