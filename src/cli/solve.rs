//! `kalaha solve`: the exact value of a position and a line of best play.

use super::tables::{TableArgs, check_threads, costs_help, obtain};
use super::{CliError, CliResult, RulesArgs};
use crate::engines::first_guess;
use crate::rules::{Position, Side};
use crate::solver::{Budget, Solver, Step, seeds_in_pits};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Solve a position exactly: both sides maximise their own final store margin.
///
/// Prints the position, the endgame table used, the principal variation (one sowing per
/// line: move number, side, pit, and whether it earned an extra turn or captured), the
/// final stores, the search statistics and, as the last line, `value N`: the final store of
/// the side to move minus the other's (from the start position: south, the first player,
/// minus north). On a terminal, progress goes to standard error: the table build, then the
/// bounds on the value after each null-window search, nodes per second and how full the
/// transposition table is.
#[derive(Debug, clap::Args)]
#[command(after_help = format!("\
Positions (--position) are written SOUTH_PITS:STORE/NORTH_PITS:STORE/SIDE, pits listed from \
each owner's pit 1 (their left), SIDE s or n. The number of pits comes from the rows and \
any seed total is accepted. A start position of an openings file or of games.jsonl's `start`, \
in the Kalah Game Protocol's board notation <pits,south store,north store,south pits...,north \
pits...> (south to move), is accepted too, checked against the rules flags.

{}

Example:
  kalaha solve --pits 4 --seeds 4
  kalaha solve --pits 3 --seeds 6 --sweep empty_side --empty-capture
  kalaha solve --position 3,3,0,4:1/3,3,3,3:0/s
  kalaha solve --threads 2                   # the standard board, Kalah(6,4)", costs_help()))]
pub struct Args {
    #[command(flatten)]
    pub rules: RulesArgs,
    /// Solve this position instead of the start position (see below).
    #[arg(long, value_name = "COMPACT")]
    pub position: Option<String>,
    /// Memory for the transposition table, in MiB (1 to 65536).
    #[arg(long, default_value_t = DEFAULT_HASH_MB, value_name = "N")]
    pub hash_mb: usize,
    /// Threads for the table build and the search (they share the transposition table).
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub threads: usize,
    /// A guess of the value to start from (the closer, the fewer searches; by default a
    /// heuristic search of at most half a second and 14 plies guesses it, and its line
    /// `first guess N` says so).
    #[arg(long, value_name = "V", allow_negative_numbers = true)]
    pub guess: Option<i32>,
    #[command(flatten)]
    pub tables: TableArgs,
}

/// The most time and depth of the heuristic search that gives MTD(f) its first guess when
/// `--guess` is not given: a fraction of a second, which saves whole null-window searches
/// of a long solve (on Kalah(6,5) each takes minutes).
pub(super) const GUESS_TIME: Duration = Duration::from_millis(500);
pub(super) const GUESS_DEPTH: u32 = 14;

/// The default `--hash-mb`.
pub(super) const DEFAULT_HASH_MB: usize = 256;

/// Checks a `--hash-mb`.
pub(crate) fn check_hash_mb(mb: usize) -> Result<(), CliError> {
    if mb == 0 || mb > 65536 {
        return Err(CliError::input_msg(format!(
            "invalid --hash-mb {mb}: it must be between 1 and 65536"
        )));
    }
    Ok(())
}

pub(crate) fn run(args: Args) -> CliResult {
    let rules = args.rules.rules()?;
    let pos = match &args.position {
        Some(text) if text.trim_start().starts_with('<') => text
            .parse::<crate::record::Board>()
            .and_then(|b| b.position(rules))
            .map_err(|e| CliError::input_msg(format!("invalid --position {text:?}: {e}")))?,
        Some(text) => Position::from_compact(text, rules).map_err(CliError::input)?,
        None => Position::start(rules),
    };
    check_hash_mb(args.hash_mb)?;
    let threads = check_threads(args.threads)?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "rules {}", pos.rules())?;
    writeln!(out, "position {}", pos.to_compact())?;
    writeln!(out, "{pos}")?;
    out.flush()?;

    let table = obtain(pos.rules(), &args.tables, threads)?;
    match &table {
        Some(t) => writeln!(
            out,
            "endgame table k={} ({:.1} MiB)",
            t.max_seeds(),
            t.len() as f64 / (1 << 20) as f64
        )?,
        None => writeln!(out, "endgame table none")?,
    }
    let mut solver = Solver::new(args.hash_mb);
    solver.allow_huge_pages();
    solver.set_threads(threads);
    solver.set_endgame(table.map(Arc::new));

    let in_table = solver
        .endgame()
        .is_some_and(|t| seeds_in_pits(&pos) <= t.max_seeds() as i32);
    let guess = match args.guess {
        Some(g) => Some(g),
        None if !pos.is_over() && !in_table => {
            let (g, depth) = first_guess(&pos, GUESS_DEPTH, Instant::now() + GUESS_TIME);
            writeln!(out, "first guess {g} (heuristic search to depth {depth})")?;
            out.flush()?;
            Some(g)
        }
        None => None,
    };

    let t = Instant::now();
    let sol = solve_with_progress(&mut solver, &pos, guess);
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
        "nodes {} time {secs:.3} s ({nps:.0} nodes/s), {}, transposition table {}% full",
        sol.nodes,
        crate::record::counted(threads as u64, "thread"),
        solver.table_fill_permille() / 10
    )?;
    writeln!(out, "value {}", sol.value)?;
    Ok(super::exit::OK)
}

/// Solves `pos` with a progress line on standard error (drawn only on a terminal): the
/// bounds on the value after each null-window search and the search speed.
fn solve_with_progress(
    solver: &mut Solver,
    pos: &Position,
    guess: Option<i32>,
) -> crate::solver::Solution {
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    bar.set_style(ProgressStyle::with_template("{spinner} {msg}").expect("a valid template"));
    let live = solver.live_nodes();
    let start_nodes = live.load(Ordering::Relaxed);
    let started = Instant::now();
    let bounds: Mutex<Option<Step>> = Mutex::new(None);
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let ticker = scope.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                let nodes = live.load(Ordering::Relaxed) - start_nodes;
                let secs = started.elapsed().as_secs_f64().max(1e-9);
                let range = match *bounds.lock().expect("not poisoned") {
                    Some(s) => format!("value from {} to {}", s.lower, s.upper),
                    None => "first search".to_string(),
                };
                bar.set_message(format!(
                    "{range}: {:.1} M nodes, {:.2} M nodes/s, {:.0} s",
                    nodes as f64 / 1e6,
                    nodes as f64 / secs / 1e6,
                    secs
                ));
                bar.tick();
                // Woken at once when the search ends, so a quick solve does not wait.
                std::thread::park_timeout(Duration::from_millis(200));
            }
        });
        let mut steps = 0;
        let sol = solver.solve_observed(pos, Budget::unlimited(), guess, &mut |s| {
            steps += 1;
            *bounds.lock().expect("not poisoned") = Some(*s);
            bar.println(format!(
                "search {steps}: value from {} to {} after {:.1} s, {:.1} M nodes ({:.2} M nodes/s), transposition table {:.1}% full",
                s.lower,
                s.upper,
                s.elapsed.as_secs_f64(),
                s.nodes as f64 / 1e6,
                s.nodes as f64 / s.elapsed.as_secs_f64().max(1e-9) / 1e6,
                s.fill_permille as f64 / 10.0
            ));
        });
        done.store(true, Ordering::Relaxed);
        ticker.thread().unpark();
        bar.finish_and_clear();
        sol.expect("an unlimited search finishes")
    })
}
