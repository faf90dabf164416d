//! `kalaha perft`: counts move sequences from the start position, the rules' speed measure.

use super::{CliResult, RulesArgs};
use crate::rules::{Position, perft};
use std::io::Write;
use std::time::Instant;

/// Count the sequences of exactly D sowings from the start, for every depth 1..=D.
///
/// Prints a header, then one line per depth: depth, node count, seconds, nodes per second.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Example:\n  kalaha perft --depth 10\n  kalaha perft --depth 8 --pits 4 --seeds 3 --sweep none"
)]
pub struct Args {
    /// The deepest depth to count (at least 1).
    #[arg(long, short, value_name = "D", value_parser = clap::value_parser!(u32).range(1..))]
    pub depth: u32,
    #[command(flatten)]
    pub rules: RulesArgs,
}

pub(crate) fn run(args: Args) -> CliResult {
    let rules = args.rules.rules()?;
    let start = Position::start(rules);
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{:>5} {:>20} {:>10} {:>14}",
        "depth", "nodes", "seconds", "nodes/s"
    )?;
    for depth in 1..=args.depth {
        let t = Instant::now();
        let nodes = perft(&start, depth);
        let secs = t.elapsed().as_secs_f64();
        let nps = if secs > 0.0 { nodes as f64 / secs } else { 0.0 };
        writeln!(out, "{depth:>5} {nodes:>20} {secs:>10.3} {nps:>14.0}")?;
        out.flush()?;
    }
    Ok(super::exit::OK)
}
