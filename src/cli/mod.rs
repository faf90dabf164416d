//! The command line: one module per subcommand, each with its clap arguments and a `run`
//! function. Exit codes: 0 success, 1 failure, 2 usage or input error; `sprt` adds 3 (H0
//! accepted) and 4 (game limit reached). A broken pipe on stdout is not an error.

mod check;
mod common;
mod engine;
mod error;
mod execute;
mod match_cmd;
mod perft;
mod play;
mod ratings;
mod rules_args;
mod show;
mod solve;
mod sprt;
mod tables;
mod tournament;

pub use error::{CliError, CliResult};
pub use rules_args::RulesArgs;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// A referee and tournament harness for Kalah engines.
#[derive(Debug, Parser)]
#[command(name = "kalaha", version, about, long_about = None)]
#[command(
    after_help = "Exit codes: 0 success, 1 failure, 2 usage or input error \
(sprt: 3 when H0 is accepted, 4 when --max-games ran out)."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    Perft(perft::Args),
    Solve(solve::Args),
    Engine(engine::Args),
    Check(check::Args),
    Match(match_cmd::Args),
    Tournament(tournament::Args),
    Sprt(sprt::Args),
    Ratings(ratings::Args),
    Show(show::Args),
    Tables(tables::Args),
    Play(play::Args),
}

/// Sends the library's warnings (and, with `RUST_LOG=debug`, its traces) to stderr.
/// `RUST_LOG` takes a level, or `target=level` pairs separated by commas.
fn init_logging() {
    use std::io::IsTerminal;
    use tracing_subscriber::filter::{LevelFilter, Targets};
    use tracing_subscriber::prelude::*;
    let filter = match std::env::var("RUST_LOG") {
        Ok(text) if !text.trim().is_empty() => text.parse::<Targets>().unwrap_or_else(|e| {
            eprintln!("warning: RUST_LOG={text:?} is not understood ({e}); showing warnings");
            Targets::new().with_default(LevelFilter::WARN)
        }),
        _ => Targets::new().with_default(LevelFilter::WARN),
    };
    let layer = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .without_time()
        .with_target(false);
    let _ = tracing_subscriber::registry()
        .with(layer)
        .with(filter)
        .try_init();
}

/// What kalaha calls an option that cutechess-cli or fastchess spell another way.
const FOREIGN_FLAGS: &[(&str, &str)] = &[
    (
        "-engine",
        "--engine cmd=PROGRAM name=NAME ... (one --engine per engine)",
    ),
    ("-each", "--each KEY=VALUE ..."),
    ("-games", "--games N (games per pairing)"),
    (
        "-rounds",
        "--games N (games per pairing; each opening is played twice, seats swapped)",
    ),
    (
        "--rounds",
        "--games N (games per pairing; each opening is played twice, seats swapped)",
    ),
    ("-concurrency", "--concurrency N"),
    (
        "-tc",
        "--clock BASE+INC (e.g. 10s+100ms) or --move-time TIME; tc= in an engine spec for odds",
    ),
    (
        "--tc",
        "--clock BASE+INC (e.g. 10s+100ms) or --move-time TIME; tc= in an engine spec for odds",
    ),
    ("-st", "--move-time TIME (e.g. 100ms)"),
    (
        "-openings",
        "--openings FILE (pit numbers per line) or --opening-plies K",
    ),
    (
        "-repeat",
        "nothing: every opening is played twice, seats swapped, always",
    ),
    ("-sprt", "kalaha sprt --elo0 A --elo1 B"),
    (
        "-pgnout",
        "nothing: every game is in games.csv and games.jsonl of the results folder",
    ),
    (
        "-epdout",
        "nothing: every game is in games.jsonl of the results folder",
    ),
    (
        "-recover",
        "nothing: an engine that fails is restarted for its next game",
    ),
    ("-draw", "--adjudicate decided"),
    ("-resign", "--adjudicate decided"),
    ("-ratinginterval", "--report-every N"),
    ("-srand", "--seed N"),
    ("-debug", "--debug"),
    ("-pgnin", "--openings FILE"),
    ("-config", "--config FILE"),
];

/// A hint for a cutechess-cli or fastchess spelling among `args`, if any.
fn foreign_flag(args: &[String]) -> Option<String> {
    args.iter().skip(1).find_map(|a| {
        let flag = a.split('=').next().unwrap_or(a);
        FOREIGN_FLAGS
            .iter()
            .find(|(f, _)| *f == flag)
            .map(|(f, ours)| {
                format!(
                    "error: {f} is how cutechess-cli or fastchess write it; kalaha writes {ours}. \
                     See `kalaha <command> --help`."
                )
            })
    })
}

/// Runs the command line and returns the process exit code.
pub fn main() -> ExitCode {
    init_logging();
    let args: Vec<String> = std::env::args().collect();
    if let Some(hint) = foreign_flag(&args) {
        eprintln!("{hint}");
        return ExitCode::from(2);
    }
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) => {
            // clap prints help and version to stdout with exit 0, usage errors with 2.
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    let result = match cli.command {
        Command::Perft(a) => perft::run(a),
        Command::Solve(a) => solve::run(a),
        Command::Engine(a) => engine::run(a),
        Command::Check(a) => check::run(a),
        Command::Match(a) => match_cmd::run(a),
        Command::Tournament(a) => tournament::run(a),
        Command::Sprt(a) => sprt::run(a),
        Command::Ratings(a) => ratings::run(a),
        Command::Show(a) => show::run(a),
        Command::Tables(a) => tables::run(a),
        Command::Play(a) => play::run(a),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => e.report(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cutechess_spellings_get_a_hint() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let h = foreign_flag(&args(&["kalaha", "tournament", "-engine", "cmd=x"])).unwrap();
        assert!(h.contains("--engine cmd="), "{h}");
        let h = foreign_flag(&args(&["kalaha", "match", "--rounds", "10"])).unwrap();
        assert!(h.contains("--games"), "{h}");
        let h = foreign_flag(&args(&["kalaha", "match", "-tc=40/60"])).unwrap();
        assert!(h.contains("--clock"), "{h}");
        assert!(foreign_flag(&args(&["kalaha", "match", "--games", "4", "-j", "2"])).is_none());
        // Values are not flags.
        assert!(foreign_flag(&args(&["kalaha", "check", "--", "./x", "-x"])).is_none());
    }
}
