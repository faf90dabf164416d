//! `kalaha analyze`: the exact analysis of a results folder's games.

use super::common::TournamentRulesArgs;
use super::tables::{TableArgs, obtain};
use super::{CliError, CliResult};
use crate::analysis::{self, AnalysisSettings, Counts, Tables, accuracy_text};
use crate::record::{format_duration, parse_duration};
use crate::results::{Files, FolderLock};
use crate::rules::Rules;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// Analyse every sowing of a results folder's games exactly: what it lost against perfect
/// play.
///
/// Writes DIR/analysis.csv, one row per sowing of every game played to its end or
/// adjudicated (openings included; games lost by a fault are left out): game, ply (1 for
/// the first sowing from the start), side, engine (empty for an opening's sowing), pit,
/// value_before and value_after (the exact final store difference for the side that sows,
/// under perfect play by both, before and after the sowing) and loss = value_before -
/// value_after (0 for a perfect sowing). DIR/analysis_games.csv sums each side of each game;
/// standings.csv and the leaderboards gain seeds lost per move, the share of perfect moves
/// and the blunders (moves that lose 2 seeds or more) of each engine.
///
/// Games are analysed on every core; each finished game is on disk at once, so an analysis
/// that is stopped (Ctrl-C, kill) continues where it stopped when run again.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
A sowing next to a position the solver does not finish within --budget gets values estimated by \
the engines' search to a fixed depth instead: its kind column says estimated (else exact) and \
its depth column the depth; the summaries count estimated moves apart from exact ones. On the standard board the solver needs its endgame table (built once, with a \
progress bar, and kept; see kalaha tables --help): then a position of a game takes \
milliseconds, the first few sowings from the start position longer.

Example:
  kalaha analyze results/run1
  kalaha analyze results/run1 --budget 2s --threads 2
  kalaha analyze results/small --pits 4 --seeds 3     # only the games of Kalah(4,3)")]
pub struct Args {
    /// The results folder (with games.jsonl).
    pub dir: PathBuf,
    /// Time for each position (a twentieth of it for a position inside a game's opening,
    /// whose sowings no engine chose); the sowings next to a position not solved in it get
    /// estimated values. `none` for no limit: every position solved.
    #[arg(long, default_value = "10s", value_name = "TIME")]
    pub budget: String,
    /// Games analysed at once, each on its own thread [default: the number of cores].
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Memory for the transposition table the threads share, in MiB (1 to 65536).
    #[arg(long, default_value_t = 1024, value_name = "N")]
    pub hash_mb: usize,
    /// The order in which the positions of a game are solved (for measurements).
    #[arg(long, value_enum, default_value = "backward", hide = true)]
    pub order: OrderArg,
    /// No progress bar and no table of engines.
    #[arg(long, short)]
    pub quiet: bool,
    /// Measure instead: analyse a copy of DIR's games in a temporary folder (DIR is left
    /// as it is), solve the start position of their rules with the same threads as
    /// `kalaha solve` does, and print the analysis time divided by that solve's time,
    /// positions per second and the positions without an exact value.
    #[arg(long)]
    pub bench: bool,
    #[command(flatten)]
    pub tables: TableArgs,
    /// Only the games of these rules (by default every game, each under its own rules).
    #[command(flatten)]
    pub rules: TournamentRulesArgs,
}

/// `--order`.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum OrderArg {
    Forward,
    Backward,
}

/// Reads a `--budget`: a time, or `none`.
pub(crate) fn parse_budget(text: &str) -> Result<Option<Duration>, CliError> {
    if text.trim() == "none" {
        return Ok(None);
    }
    parse_duration(text).map(Some).map_err(|e| {
        CliError::input_msg(format!(
            "invalid --budget {text:?}: {e} (e.g. 10s, 500ms, or none)"
        ))
    })
}

/// The endgame table for each rule variant in `rules`, loaded or built as `tables` says.
pub(crate) fn tables_for(
    rules: &[Rules],
    tables: &TableArgs,
    threads: usize,
) -> Result<Tables, CliError> {
    let mut out = Tables::new();
    for r in rules {
        out.insert(*r, obtain(r, tables, threads)?.map(Arc::new));
    }
    Ok(out)
}

pub(crate) fn run(args: Args) -> CliResult {
    let budget = parse_budget(&args.budget)?;
    super::solve::check_hash_mb(args.hash_mb)?;
    let threads = match args.threads {
        Some(n) => super::tables::check_threads(n)?,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let dir = &args.dir;
    super::common::require_results_file(
        dir,
        Files::games_jsonl,
        "give the folder a tournament, match or sprt wrote its results to",
    )?;
    let _lock = if args.bench {
        // Only read.
        None
    } else {
        Some(FolderLock::acquire(dir).map_err(CliError::input)?)
    };
    let (mut games, skipped) = analysis::analysable_games(dir).map_err(CliError::reading)?;
    if let Some(skipped) = skipped {
        eprintln!(
            "warning: {} has {skipped}: those lines are not analysed",
            crate::record::shown_path(&crate::results::Files::of(dir).games_jsonl())
        );
    }
    if games.is_empty() {
        // Going on would write an empty analysis and call it done.
        return Err(CliError::input_msg(format!(
            "{} holds no game to analyse yet: run a tournament or match into the folder \
             first",
            crate::record::shown_path(&crate::results::Files::of(dir).games_jsonl())
        )));
    }
    if args.rules.any() {
        let only = args
            .rules
            .over(None)
            .expect("a rules flag was given")
            .resolve()
            .map_err(CliError::input)?;
        let before = games.len();
        games.retain(|g| g.rules == only);
        if games.is_empty() && before > 0 {
            // Going on would rewrite the folder's analysis as empty.
            return Err(CliError::input_msg(format!(
                "none of the {before} games of {} is played under {only}: give the rules \
                 flags of its games, or none to analyse them all",
                crate::record::shown_path(dir)
            )));
        }
    }
    // Every record replayed before anything is solved: one that does not replay under its
    // own rules (edited, damaged or crafted) is left out, and no endgame table is built
    // for the rules of a record that is not a game.
    games.retain(|g| match analysis::positions(g) {
        Ok(_) => true,
        Err(e) => {
            eprintln!(
                "warning: not analysed: {}",
                crate::record::clean_message(&e)
            );
            false
        }
    });
    if games.is_empty() {
        return Err(CliError::input_msg(format!(
            "none of the games of {} replays under its own rules: nothing to analyse",
            crate::record::shown_path(&crate::results::Files::of(dir).games_jsonl())
        )));
    }
    let tables = tables_for(&analysis::rules_of(&games), &args.tables, threads)?;
    let settings = AnalysisSettings {
        threads,
        budget,
        hash_mb: args.hash_mb,
        order: match args.order {
            OrderArg::Forward => analysis::Order::Forward,
            OrderArg::Backward => analysis::Order::Backward,
        },
    };
    if args.bench {
        return bench(&games, &tables, settings, args.quiet);
    }
    let bar = progress_bar(args.quiet, games.len() as u64);
    let started = Instant::now();
    let stop = AtomicBool::new(false);
    let done = analysis::analyse_folder(
        dir,
        &games,
        &tables,
        settings,
        &stop,
        &mut |kept, c: &Counts| {
            bar.set_position(kept + c.games);
            let secs = started.elapsed().as_secs_f64().max(1e-9);
            bar.set_message(format!("{:.0} positions/s", c.positions as f64 / secs));
        },
    )
    .map_err(|e| match crate::results::full_disk(&e) {
        Some(full) => CliError::Failure(anyhow::anyhow!(
            "failed to write the analysis in {dir}: {full}: every game analysed so far is \
             kept; free some space, and `kalaha analyze {dir}` goes on where it stopped",
            dir = crate::record::shown_path(dir)
        )),
        None => CliError::from(e),
    })?;
    bar.finish_and_clear();
    report(dir, &done, started.elapsed(), budget, args.quiet)
}

fn progress_bar(quiet: bool, total: u64) -> ProgressBar {
    let target = if quiet {
        ProgressDrawTarget::hidden()
    } else {
        ProgressDrawTarget::stderr()
    };
    let bar = ProgressBar::with_draw_target(Some(total), target);
    bar.set_style(
        ProgressStyle::with_template("analysing [{bar:30}] {pos}/{len} games, {msg}, {eta} left")
            .expect("a valid template")
            .progress_chars("=> "),
    );
    bar
}

/// The summary lines, the engines' table and the refreshed reports.
fn report(
    dir: &Path,
    done: &analysis::FolderAnalysis,
    elapsed: Duration,
    budget: Option<Duration>,
    quiet: bool,
) -> CliResult {
    for problem in &done.skipped_rows.problems {
        eprintln!("warning: {}", crate::record::clean_message(problem));
    }
    for e in &done.errors {
        eprintln!(
            "warning: not analysed: {}",
            crate::record::clean_message(&e.to_string())
        );
    }
    let c = &done.counts;
    let secs = elapsed.as_secs_f64().max(1e-9);
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "analysed {} ({} positions in {secs:.1} s, {:.0} positions/s){}; {} of {} done",
        crate::record::counted(c.games, "game"),
        c.positions,
        c.positions as f64 / secs,
        if done.kept > 0 {
            format!(", {} analysed by an earlier run", done.kept)
        } else {
            String::new()
        },
        done.kept + c.games,
        crate::record::counted(done.total, "game")
    )?;
    let within = budget.map_or("without a limit".to_string(), |b| {
        let opening = analysis::position_budget(Some(b), true).unwrap_or(b);
        format!(
            "within the budget of {} a position, {} inside an opening",
            format_duration(b),
            format_duration(opening)
        )
    });
    writeln!(out, "unsolved {} sowings ({within})", done.unsolved)?;
    let exact = done.sowings - done.estimated - done.unsolved;
    if done.estimated == 0 {
        writeln!(
            out,
            "exact {exact} of {} sowings, none estimated",
            done.sowings
        )?;
    } else {
        writeln!(
            out,
            "exact {exact} of {} sowings, estimated {} (the solver did not finish {within}: the \
             engines' search to depth {})",
            done.sowings,
            done.estimated,
            analysis::ESTIMATE_DEPTH
        )?;
    }
    if !quiet && !done.accuracy.is_empty() {
        write!(out, "{}", accuracy_text(&done.accuracy))?;
    }
    if done.complete {
        if crate::results::Files::of(dir).games_csv().exists() {
            crate::report::refresh_tournament_reports(dir).map_err(anyhow::Error::from)?;
        }
        writeln!(
            out,
            "analysis in {} and {}",
            crate::record::shown_path(&Files::of(dir).analysis_csv()),
            crate::record::shown_path(&Files::of(dir).analysis_games_csv())
        )?;
    }
    Ok(super::exit::OK)
}

/// The `kalaha solve` of the start position that `--bench` measures against: the same
/// memory for the table (its default), the first guess of a heuristic search, `threads`
/// threads and the endgame table of the games; within `budget` (a board beyond the solver
/// is not solved). Returns the value (`None`: out of budget) and the time taken.
///
/// The budget is the analysis's per position, times six and at least a minute: the start
/// is the longest solve of a game, and on a loaded machine the standard board's takes
/// longer than the 10 s a position of the default budget.
fn bench_solve(
    rules: &Rules,
    tables: &Tables,
    threads: usize,
    budget: Option<Duration>,
) -> (Option<i32>, Duration) {
    let pos = crate::rules::Position::start(*rules);
    let started = Instant::now();
    let mut solver = crate::solver::Solver::new(super::solve::DEFAULT_HASH_MB);
    solver.allow_huge_pages();
    solver.set_threads(threads);
    solver.set_endgame(tables.get(rules).cloned().flatten());
    let (guess, _) = crate::engines::first_guess(
        &pos,
        super::solve::GUESS_DEPTH,
        Instant::now() + super::solve::GUESS_TIME,
    );
    let budget = crate::solver::Budget {
        deadline: budget.map(|b| Instant::now() + b),
        max_nodes: None,
    };
    let value = solver
        .solve_observed(&pos, budget, Some(guess), &mut |_| {})
        .map(|s| s.value);
    (value, started.elapsed())
}

/// `--bench`: the analysis of `games` in a temporary folder, timed against one solve of
/// the start position in the same run.
fn bench(
    games: &[crate::record::GameRecord],
    tables: &Tables,
    settings: AnalysisSettings,
    quiet: bool,
) -> CliResult {
    let rules = games[0].rules;
    let mut out = std::io::stdout().lock();
    let solve_budget = settings
        .budget
        .map(|b| (b * 6).max(Duration::from_secs(60)));
    let (value, solve_time) = bench_solve(&rules, tables, settings.threads, solve_budget);
    let solve_secs = solve_time.as_secs_f64();
    match value {
        Some(v) => writeln!(
            out,
            "solve of the start position of {rules} ({}): value {v} in {solve_secs:.2} s",
            crate::record::counted(settings.threads as u64, "thread")
        )?,
        None => writeln!(
            out,
            "solve of the start position of {rules}: not finished within the budget \
             ({solve_secs:.1} s)"
        )?,
    }
    out.flush()?;
    let dir = std::env::temp_dir().join(format!("kalaha-analyze-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let result = (|| -> CliResult {
        let mut jsonl = Vec::new();
        for g in games {
            jsonl.extend_from_slice(&serde_json::to_vec(g).map_err(anyhow::Error::from)?);
            jsonl.push(b'\n');
        }
        std::fs::write(crate::results::Files::of(&dir).games_jsonl(), jsonl)?;
        let bar = progress_bar(quiet, games.len() as u64);
        let started = Instant::now();
        let stop = AtomicBool::new(false);
        let done = analysis::analyse_folder(
            &dir,
            games,
            tables,
            settings,
            &stop,
            &mut |kept, c: &Counts| bar.set_position(kept + c.games),
        )?;
        bar.finish_and_clear();
        let secs = started.elapsed().as_secs_f64().max(1e-9);
        let c = &done.counts;
        let ratio = match value {
            Some(_) => format!(
                "{:.1} solves of the start position",
                secs / solve_secs.max(1e-9)
            ),
            None => "the start position is not solved".to_string(),
        };
        writeln!(
            out,
            "analysis of {} ({} positions, {} threads): {secs:.2} s = {ratio}, {:.1} positions/s, \
             {:.2} s a game",
            crate::record::counted(c.games, "game"),
            c.positions,
            settings.threads,
            c.positions as f64 / secs,
            secs / c.games.max(1) as f64,
        )?;
        let exact = done.sowings - done.estimated - done.unsolved;
        writeln!(
            out,
            "exact {exact} of {} sowings ({:.1}%), estimated {}, unsolved {}",
            done.sowings,
            100.0 * exact as f64 / done.sowings.max(1) as f64,
            done.estimated,
            done.unsolved
        )?;
        Ok(super::exit::OK)
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}
