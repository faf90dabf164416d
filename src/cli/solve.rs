//! `kalaha solve`: the exact value of a position and a line of best play.

use super::{CliError, CliResult, RulesArgs};
use crate::rules::{Position, Side};
use crate::solver::Solver;
use std::io::Write;
use std::time::Instant;

/// Solve a position exactly: both sides maximise their own final store margin.
///
/// Prints the position, the principal variation (one sowing per line: move number, side,
/// pit, and whether it earned an extra turn or captured), the final stores, the search
/// statistics and, as the last line, `value N`: the final store of the side to move minus
/// the other's (from the start position: south, the first player, minus north).
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Positions (--position) are written SOUTH_PITS:STORE/NORTH_PITS:STORE/SIDE, pits listed from \
each owner's pit 1 (their left), SIDE s or n. The number of pits comes from the rows and \
any seed total is accepted.

Example:
  kalaha solve --pits 4 --seeds 4
  kalaha solve --pits 3 --seeds 6 --sweep empty_side --empty-capture
  kalaha solve --position 3,3,0,4:1/3,3,3,3:0/s")]
pub struct Args {
    #[command(flatten)]
    pub rules: RulesArgs,
    /// Solve this position instead of the start position (see below).
    #[arg(long, value_name = "COMPACT")]
    pub position: Option<String>,
    /// Memory for the transposition table, in MiB (1 to 65536).
    #[arg(long, default_value_t = 64, value_name = "N")]
    pub hash_mb: usize,
}

pub fn run(args: Args) -> CliResult {
    let rules = args.rules.rules()?;
    let pos = match &args.position {
        Some(text) => Position::from_compact(text, rules).map_err(CliError::input)?,
        None => Position::start(rules),
    };
    if args.hash_mb == 0 || args.hash_mb > 65536 {
        return Err(CliError::input_msg(format!(
            "invalid --hash-mb {}: it must be between 1 and {}",
            args.hash_mb, 65536
        )));
    }
    let mut out = std::io::stdout().lock();
    writeln!(out, "rules {}", pos.rules())?;
    writeln!(out, "position {}", pos.to_compact())?;
    writeln!(out, "{pos}")?;
    out.flush()?;

    let mut solver = Solver::new(args.hash_mb);
    let t = Instant::now();
    let sol = solver.solve(&pos);
    let secs = t.elapsed().as_secs_f64();

    let mut cur = pos;
    for (i, m) in sol.pv.iter().enumerate() {
        let (next, effect) = cur.play_traced(m.pit as i64)?;
        let mut line = format!("{:>3}. {} {}", i + 1, m.side, m.pit);
        if effect.extra_turn {
            line.push_str(" extra turn");
        }
        if effect.captured > 0 {
            line.push_str(&format!(" captures {}", effect.captured));
        }
        if effect.game_over {
            line.push_str(" game over");
        }
        writeln!(out, "{line}")?;
        cur = next;
    }
    writeln!(
        out,
        "final south {} north {}",
        cur.store(Side::South),
        cur.store(Side::North)
    )?;
    let nps = if secs > 0.0 {
        sol.nodes as f64 / secs
    } else {
        0.0
    };
    writeln!(
        out,
        "nodes {} time {secs:.3} s ({nps:.0} nodes/s), table {}% full",
        sol.nodes,
        solver.table_fill_permille() / 10
    )?;
    writeln!(out, "value {}", sol.value)?;
    Ok(0)
}
