//! `kalaha openings`: openings whose exact value is small, for fair game pairs.

use super::analyze::parse_budget;
use super::tables::{TableArgs, check_threads, obtain};
use super::{CliError, CliResult, RulesArgs};
use crate::analysis::{OpeningsSpec, balanced_openings, openings_text};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

/// Write balanced openings: N distinct lines of K sowings from the start whose exact value
/// for south (its final store minus north's under perfect play by both) lies in [-V, V].
///
/// The file is an openings file (`tournament --openings FILE`): one opening per line, its
/// pits separated by spaces, with its value as a `#` comment. Lines are drawn at random
/// (seeded by --seed, so the same flags give the same file), every one reaching a position
/// no other reaches, and each is solved exactly; a line whose position is not solved within
/// --budget is not used.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
On the standard board the solver needs its endgame table (built once and kept; see kalaha \
tables --help). `kalaha tournament --balanced-openings V` makes such openings itself, one per \
game pair.

Example:
  kalaha openings --plies 4 --count 50 --max-value 2 --out openings.txt
  kalaha openings --pits 4 --seeds 3 --plies 2 --count 5 --max-value 0 --out even.txt")]
pub struct Args {
    /// Sowings in each opening.
    #[arg(long, default_value_t = 4, value_name = "K")]
    pub plies: u32,
    /// Openings to write.
    #[arg(long, value_name = "N")]
    pub count: usize,
    /// The largest exact value for south allowed, either way (0: only positions that are a
    /// draw under perfect play).
    #[arg(long, default_value_t = 0, value_name = "V")]
    pub max_value: u32,
    /// The file to write (`-` for standard output).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Seed of the random lines.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub seed: u64,
    /// Time for each position; a line not solved in it is not used. `none` for no limit.
    #[arg(long, default_value = "10s", value_name = "TIME")]
    pub budget: String,
    /// Threads solving lines at once [default: the number of cores].
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Memory for each thread's transposition table, in MiB (1 to 65536).
    #[arg(long, default_value_t = 128, value_name = "N")]
    pub hash_mb: usize,
    #[command(flatten)]
    pub rules: RulesArgs,
    #[command(flatten)]
    pub tables: TableArgs,
}

pub fn run(args: Args) -> CliResult {
    let rules = args.rules.rules()?;
    if args.count == 0 {
        return Err(CliError::input_msg(
            "invalid --count 0: ask for at least one opening",
        ));
    }
    if args.plies == 0 {
        return Err(CliError::input_msg(
            "invalid --plies 0: an opening has at least one sowing (the start position alone is `kalaha solve`)",
        ));
    }
    super::solve::check_hash_mb(args.hash_mb)?;
    let threads = match args.threads {
        Some(n) => check_threads(n)?,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let spec = OpeningsSpec {
        plies: args.plies,
        count: args.count,
        max_value: args.max_value.min(i32::MAX as u32) as i32,
        seed: args.seed,
        budget: parse_budget(&args.budget)?,
        threads,
        hash_mb: args.hash_mb,
    };
    let table = obtain(&rules, &args.tables, threads)?.map(Arc::new);
    let bar = ProgressBar::with_draw_target(Some(args.count as u64), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("[{bar:30}] {pos}/{len} openings, {msg}")
            .expect("a valid template")
            .progress_chars("=> "),
    );
    let found = balanced_openings(rules, spec, table, &mut |tried, found| {
        bar.set_position(found as u64);
        bar.set_message(format!("{tried} lines solved"));
    });
    bar.finish_and_clear();
    let found = found.map_err(CliError::input_msg)?;
    let text = openings_text(rules, &spec, &found);
    if args.out.as_os_str() == "-" {
        std::io::stdout().lock().write_all(text.as_bytes())?;
    } else {
        std::fs::write(&args.out, text).map_err(|e| {
            CliError::input_msg(format!("failed to write {}: {e}", args.out.display()))
        })?;
        println!(
            "{} openings of {} sowings, exact value for south within ±{}, in {}",
            found.len(),
            args.plies,
            spec.max_value,
            args.out.display()
        );
    }
    Ok(0)
}
