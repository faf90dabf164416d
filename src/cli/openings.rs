//! `kalaha openings`: openings whose exact value is small, for fair game pairs.

use super::analyze::parse_budget;
use super::common::write_atomically;
use super::tables::{TableArgs, check_threads, obtain};
use super::{CliError, CliResult, RulesArgs};
use crate::analysis::{OpeningsSpec, balanced_openings, openings_text};
use crate::record::format_duration;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::{IsTerminal, Write};
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
game pair. Openings are kept in FILE.partial as they are found (so a search stopped early keeps \
them); FILE is written once all are.

Example:
  kalaha openings --plies 4 --count 50 --max-value 2 --out openings.txt
  kalaha openings --pits 4 --seeds 3 --plies 3 --count 5 --max-value 0 --out even.txt")]
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

pub(crate) fn run(args: Args) -> CliResult {
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
    let to_stdout = args.out.as_os_str() == "-";
    // The file the header's command writes: the one given, as a shell reads it.
    let out = if to_stdout {
        "-".to_string()
    } else {
        super::shell::shell_path(&args.out)
    };
    // Openings are kept in FILE.partial as they are found, so an interrupted search keeps
    // them; the file takes its name once all are found.
    let partial = (!to_stdout).then(|| {
        let mut name = args.out.clone().into_os_string();
        name.push(".partial");
        PathBuf::from(name)
    });
    if let Some(p) = &partial {
        // Where the openings go is checked now, not after minutes of solving.
        if args.out.is_dir() {
            return Err(CliError::input_msg(format!(
                "--out {} is a folder: give a file name",
                crate::record::shown_path(&args.out)
            )));
        }
        write_atomically(p, &openings_text(rules, &spec, &out, &[]))
            .map_err(CliError::input_msg)?;
    }
    let table = obtain(&rules, &args.tables, threads)?.map(Arc::new);
    let plain = !std::io::stderr().is_terminal();
    if plain {
        eprintln!(
            "solving random lines of {} sowings until {} have an exact value within ±{} ({} each at most){}",
            args.plies,
            args.count,
            spec.max_value,
            spec.budget.map_or("no limit".to_string(), format_duration),
            partial.as_ref().map_or(String::new(), |p| format!(
                "; those found are kept in {} as they come",
                crate::record::shown_path(p)
            ))
        );
    }
    let bar = ProgressBar::with_draw_target(Some(args.count as u64), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("[{bar:30}] {pos}/{len} openings, {msg}, {eta} left")
            .expect("a valid template")
            .progress_chars("=> "),
    );
    let mut shown = 0;
    let mut write_error = None;
    let found = balanced_openings(rules, spec, table, &mut |tried, found| {
        bar.set_position(found.len() as u64);
        bar.set_message(format!("{tried} lines solved"));
        if found.len() > shown {
            shown = found.len();
            if plain {
                eprintln!("  {shown} of {} found ({tried} lines solved)", args.count);
            }
            if let Some(p) = &partial
                && write_error.is_none()
                && let Err(e) = write_atomically(p, &openings_text(rules, &spec, &out, found))
            {
                write_error = Some(e);
            }
        }
    });
    bar.finish_and_clear();
    if let Some(e) = write_error {
        return Err(CliError::input_msg(e));
    }
    let found = found.map_err(|e| {
        CliError::input_msg(match &partial {
            Some(p) if shown > 0 => format!(
                "{e}; the {shown} found are kept in {}",
                crate::record::shown_path(p)
            ),
            _ => e,
        })
    })?;
    let text = openings_text(rules, &spec, &out, &found);
    match &partial {
        None => std::io::stdout().lock().write_all(text.as_bytes())?,
        Some(partial) => {
            write_atomically(&args.out, &text).map_err(|e| {
                CliError::input_msg(format!(
                    "{e}; the openings are in {}",
                    crate::record::shown_path(partial)
                ))
            })?;
            let _ = std::fs::remove_file(partial);
            println!(
                "{} of {}, exact value for south within ±{}, in {}",
                crate::record::counted(found.len() as u64, "opening"),
                crate::record::counted(u64::from(args.plies), "sowing"),
                spec.max_value,
                crate::record::shown_path(&args.out)
            );
        }
    }
    Ok(super::exit::OK)
}
