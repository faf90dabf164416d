//! `kalaha check`: runs an engine through every step of the protocol and reports each step.

use super::{CliError, CliResult};
use crate::check::check_engine;
use crate::kgp::check_agent;
use crate::supervisor::{EngineCommand, LogPlace, Settings};
use crate::tournament::spec::{EngineProtocol, EngineSpec};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

/// Check that an engine follows the protocol (protocol.md).
///
/// Prints one line per step, `PASS step` (with `(warning: ...)` for what the protocol allows
/// but advises against), `FAIL step: reason (received: line)` or `SKIP step: reason` (a step
/// that does not apply to the engine), then how many of the steps passed: the same number
/// of steps for every engine. Exits with 1 if any step failed.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Example:\n  kalaha check -- python3 engines/python/example.py\n  \
kalaha check builtin=greedy\n  kalaha check cmd=./my-engine arg=--threads arg=1 option.depth=8\n  \
kalaha check --startup-timeout 30s -- ./my-engine --threads 1\n  \
kalaha check --protocol kgp -- python3 my_kgp_agent.py\n  \
kalaha check cmd=python3 arg=my_kgp_agent.py protocol=kgp\n\n\
Exit status: 0 if every step passed, 1 if a step failed, 2 for bad usage or an engine \
program that does not exist or is not executable."
)]
pub struct Args {
    /// Time the engine has to answer the first hello.
    #[arg(long, default_value = "10s", value_parser = time_arg, value_name = "TIME")]
    pub startup_timeout: Duration,
    /// Time the engine has to exit after quit.
    #[arg(long, default_value = "1s", value_parser = time_arg, value_name = "TIME")]
    pub quit_grace: Duration,
    /// The longest line accepted from the engine, in bytes (a longer one is a fault).
    #[arg(long, default_value_t = crate::protocol::DEFAULT_LINE_LIMIT, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..), value_name = "BYTES")]
    pub line_limit: usize,
    /// Keep each started engine's log (its stderr and log messages) in DIR, as
    /// `check.N.log`.
    #[arg(long, value_name = "DIR")]
    pub logs: Option<PathBuf>,
    /// Also keep a transcript of every line sent and received, as `check.N.transcript`
    /// in the --logs folder (the current folder without one).
    #[arg(long)]
    pub debug: bool,
    /// The protocol the engine speaks: `kgp` checks a Kalah Game Protocol agent, which
    /// connects to KGP_HOST:KGP_PORT (docs/kgp.md); so does `protocol=kgp` in a spec.
    #[arg(long, value_enum, default_value = "kalaha", value_name = "PROTOCOL")]
    pub protocol: EngineProtocol,
    /// The engine, as for every command: `builtin=NAME`, or `cmd=PROGRAM` with `arg=`,
    /// `dir=`, `env.VAR=`, `option.NAME=` and `protocol=` words; or a program and its
    /// arguments (put `--` before a program that takes options).
    #[arg(required = true, trailing_var_arg = true, value_name = "ENGINE")]
    pub engine: Vec<String>,
}

/// A time with its unit, at most a day.
fn time_arg(s: &str) -> Result<Duration, String> {
    crate::record::parse_duration(s).map_err(|e| e.to_string())
}

/// The engine to check, the options (`NAME`, `VALUE`) to set on it and the protocol of its
/// spec.
type CheckedEngine = (EngineCommand, Vec<(String, String)>, EngineProtocol);

/// The engine to check: an engine spec as every command takes it (`cmd=PROGRAM arg=...
/// dir=... env.VAR=... option.NAME=... protocol=...`, or `builtin=NAME`), or a program and
/// its arguments.
pub(crate) fn engine_command(words: &[String]) -> Result<CheckedEngine, CliError> {
    let is_spec = words.first().is_some_and(|w| {
        w.split_once('=')
            .is_some_and(|(k, _)| ["cmd", "builtin"].contains(&k))
    });
    match words {
        [] => Err(CliError::input_msg("no engine given")),
        _ if is_spec => {
            let spec = EngineSpec::parse(words).map_err(CliError::input)?;
            let r = spec.resolve().map_err(CliError::input)?;
            Ok((r.command, r.options, r.protocol))
        }
        [program, args @ ..] => {
            check_program(Path::new(program))?;
            Ok((
                EngineCommand::new(program, args.iter().cloned()),
                Vec::new(),
                EngineProtocol::Kalaha,
            ))
        }
    }
}

/// Checks that `program` exists and is executable, as the operating system would find it
/// (a name without `/` is looked up in `PATH`): a missing engine is an input error, with
/// what to run instead.
fn check_program(program: &Path) -> Result<(), CliError> {
    crate::tournament::program::find_program(program, None)
        .map(|_| ())
        .map_err(|reason| {
            CliError::input_msg(format!(
                "the engine program {} {reason}",
                crate::record::shown_path(program)
            ))
        })
}

pub(crate) fn run(args: Args) -> CliResult {
    let (cmd, options, spec_protocol) = engine_command(&args.engine)?;
    let protocol = match (args.protocol, spec_protocol) {
        (EngineProtocol::Kalaha, EngineProtocol::Kalaha) => EngineProtocol::Kalaha,
        _ => EngineProtocol::Kgp,
    };
    let logs = match (&args.logs, args.debug) {
        (Some(dir), _) => Some(dir.clone()),
        (None, true) => Some(PathBuf::from(".")),
        (None, false) => None,
    };
    if let Some(dir) = &logs {
        std::fs::create_dir_all(dir).map_err(|e| {
            CliError::input_msg(format!(
                "cannot create the log folder {}: {e}",
                crate::record::shown_path(dir)
            ))
        })?;
    }
    let settings = Settings {
        startup_timeout: args.startup_timeout,
        quit_grace: args.quit_grace,
        line_limit: args.line_limit,
        logs: logs.map(|dir| LogPlace {
            dir,
            stem: "check".to_string(),
            budget: Arc::new(AtomicU64::new(crate::tournament::launcher::LOG_BUDGET)),
        }),
        transcript: args.debug,
        ..Settings::default()
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let mut out = std::io::stdout().lock();
    let mut write_error = None;
    let mut report = |r: &crate::check::StepResult| {
        if write_error.is_none()
            && let Err(e) = writeln!(out, "{r}").and_then(|_| out.flush())
        {
            write_error = Some(e);
        }
    };
    let results = match protocol {
        EngineProtocol::Kalaha => {
            runtime.block_on(check_engine(&cmd, &settings, &options, &mut report))
        }
        EngineProtocol::Kgp => Ok(runtime.block_on(check_agent(&cmd, &settings, &mut report))),
    };
    let results = results.map_err(CliError::input_msg)?;
    if let Some(e) = write_error {
        return Err(e.into());
    }
    writeln!(out, "{}", summary(&results, protocol))?;
    let failed = results.iter().any(|r| r.failure().is_some());
    Ok(if failed { 1 } else { 0 })
}

/// The last line of a check: how many of its steps passed, failed (or were not run) and
/// were skipped, of a total that is the same for every program a check of `protocol`
/// runs, and what that means.
fn summary(results: &[crate::check::StepResult], protocol: EngineProtocol) -> String {
    use crate::check::Outcome;
    let count = |f: fn(&Outcome) -> bool| -> usize {
        results
            .iter()
            .filter(|r| f(&r.outcome))
            .map(|r| r.steps)
            .sum()
    };
    let passed = count(|o| matches!(o, Outcome::Passed));
    let failed = count(|o| matches!(o, Outcome::Failed(_)));
    let skipped = count(|o| matches!(o, Outcome::Skipped(_)));
    let mut text = format!("{passed} of {} steps passed", passed + failed + skipped);
    if failed > 0 {
        text.push_str(&format!(", {failed} failed or not run"));
    }
    if skipped > 0 {
        text.push_str(&format!(", {skipped} skipped (they do not apply)"));
    }
    let meaning = match (failed, protocol) {
        (0, EngineProtocol::Kalaha) => "the engine follows the protocol",
        (_, EngineProtocol::Kalaha) => "the engine does NOT follow the protocol",
        (0, EngineProtocol::Kgp) => "the agent plays KGP as kalaha needs it",
        (_, EngineProtocol::Kgp) => "the agent does NOT play KGP as kalaha needs it",
    };
    format!("{text}: {meaning}")
}
