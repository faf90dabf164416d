//! The command line: one module per subcommand, each with its clap arguments and a `run`
//! function. Exit codes: 0 success, 1 failure, 2 usage or input error; `sprt` adds 3 (H0
//! accepted) and 4 (game limit reached). A broken pipe on stdout is not an error.

mod check;
mod engine;
mod error;
mod match_cmd;
mod perft;
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
}

/// Runs the command line and returns the process exit code.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
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
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => e.report(),
    }
}
