//! `kalaha sprt`: plays game pairs between a new engine and a base engine until the
//! generalized SPRT on the pairs' pentanomial counts accepts H0 or H1 (or the game limit
//! runs out). The test itself is [`crate::sprt`]; this module reads the flags, and
//! runs it like a tournament (same runtime, interruption and resume).

use super::common::{CommonArgs, RunFlags};
use super::execute::{RunKind, execute};
use super::{CliError, CliResult};
use crate::sprt::{SprtEnd, SprtRule, SprtSettings, Test, Verdict, files};
use crate::stats::SprtModel;
use crate::tournament::config::TournamentConfig;
use crate::tournament::load_saved_run;
use crate::views::SprtView;
use std::io::Write;
use std::path::PathBuf;

/// Games scheduled when `--max-games` is not given (the schedule is set when the test
/// starts; a test of close engines with narrow bounds can need more).
pub(super) const DEFAULT_MAX_GAMES: u64 = 200_000;

/// Test whether a new engine is stronger than a base engine (generalized SPRT).
///
/// The first engine is the new one. Game pairs (each opening played twice with the seats
/// swapped) are played until the log-likelihood ratio of "new is elo1 stronger" against "new
/// is elo0 stronger", computed on the pairs' pentanomial counts, leaves [ln(β/(1-α)),
/// ln((1-β)/α)]. No game starts after the decision; games running then are stopped and not
/// recorded. Exit status: 0 H1 accepted, 3 H0 accepted, 4 no decision.
///
/// The tournament flags apply, except --games and --shard. The results folder holds the
/// games (as for a tournament), sprt.toml (the test), sprt.csv (the LLR after every pair)
/// and sprt-result.toml (the verdict). With --workers, --worker and --shared, processes on
/// many machines play one test together (see docs/sprt.md).
#[derive(Debug, clap::Args)]
#[command(
    mut_arg("games", |a| a.hide(true)),
    mut_arg("shard", |a| a.hide(true)),
)]
#[command(after_help = "Example:\n  \
kalaha sprt --engine cmd=./new name=new --engine cmd=./old name=old --elo0 0 --elo1 5 --move-time 50ms\n  \
kalaha sprt --engine builtin=hard --engine builtin=random --elo0 0 --elo1 10 --model logistic --max-games 2000\n  \
kalaha sprt --resume results/sprt-1\n  \
kalaha sprt --engine cmd=./new --engine cmd=./old --elo0 0 --elo1 5 --workers 8 --worker 3 --shared /shared/sprt-1\n  \
kalaha sprt --report /shared/sprt-1")]
pub struct Args {
    #[command(flatten)]
    pub common: CommonArgs,
    /// H0: the new engine is ELO0 stronger (normalized or logistic Elo, see --model)
    /// [default: 0].
    #[arg(long, allow_hyphen_values = true, value_name = "ELO0")]
    pub elo0: Option<f64>,
    /// H1: the new engine is ELO1 stronger [default: 5].
    #[arg(long, allow_hyphen_values = true, value_name = "ELO1")]
    pub elo1: Option<f64>,
    /// Probability of accepting H1 when H0 is true [default: 0.05].
    #[arg(long, value_name = "P")]
    pub alpha: Option<f64>,
    /// Probability of accepting H0 when H1 is true [default: 0.05].
    #[arg(long, value_name = "P")]
    pub beta: Option<f64>,
    /// How ELO0 and ELO1 are read [default: normalized].
    #[arg(long, value_enum)]
    pub model: Option<SprtModel>,
    /// Stop after this many games (rounded up to whole pairs) without a decision (exit 4)
    /// [default: 200000].
    #[arg(long, value_name = "N")]
    pub max_games: Option<u64>,
    /// Continue the test in DIR (only --concurrency, --quiet and --debug may change).
    #[arg(long, value_name = "DIR")]
    pub resume: Option<PathBuf>,
    /// Play the test with N workers: processes on any machines that see the --shared
    /// folder. Each plays its own game pairs (worker K: pairs K, K+N, K+2N, ...) into
    /// DIR/worker-K and pools every worker's games; the verdict is the same as one
    /// machine's playing the pairs in order, and every worker exits with it.
    #[arg(long, value_name = "N", requires_all = ["worker", "shared"])]
    pub workers: Option<u64>,
    /// This worker's number, 1 to N (with Slurm, --array=1-N and $SLURM_ARRAY_TASK_ID;
    /// with Kubernetes, $JOB_COMPLETION_INDEX + 1). A worker started again with the same
    /// flags continues its pairs.
    #[arg(long, value_name = "K", requires_all = ["workers", "shared"])]
    pub worker: Option<u64>,
    /// The folder every worker of the test sees (a network file system, a shared volume):
    /// DIR/sprt-workers.toml holds the test, DIR/worker-K the games of worker K,
    /// DIR/sprt-result.toml the verdict.
    #[arg(long, value_name = "DIR", requires_all = ["workers", "worker"])]
    pub shared: Option<PathBuf>,
    /// Recompute the verdict, LLR and estimates of the test in the shared folder DIR from
    /// its workers' games, and check them against DIR/sprt-result.toml (exit 1 when they
    /// differ; 4 while the test goes on).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["workers", "worker", "shared", "resume"])]
    pub report: Option<PathBuf>,
}

/// A new test: its configuration, folder, settings and how to run it.
type NewTest = (TournamentConfig, PathBuf, SprtSettings, RunFlags);

/// The test's settings as the flags give them, checked.
pub(super) fn settings_of(args: &Args) -> Result<SprtSettings, CliError> {
    let settings = SprtSettings {
        elo0: args.elo0.unwrap_or(0.0),
        elo1: args.elo1.unwrap_or(5.0),
        alpha: args.alpha.unwrap_or(0.05),
        beta: args.beta.unwrap_or(0.05),
        model: args.model.unwrap_or_default(),
        max_games: args.max_games,
        workers: None,
    };
    settings
        .validate()
        .map_err(|e| CliError::input_msg(format!("--{}", e.replace('_', "-"))))?;
    Ok(settings)
}

/// Reads a new test's settings and configuration from the flags.
fn new_test(args: &Args) -> Result<NewTest, CliError> {
    let common = &args.common;
    let settings = settings_of(args)?;
    let mut file = common.to_config_file()?;
    if file.engines.len() != 2 {
        return Err(CliError::input_msg(format!(
            "sprt needs exactly two engines (the new one first), {} given",
            file.engines.len()
        )));
    }
    file.games = Some(args.max_games.unwrap_or(DEFAULT_MAX_GAMES));
    let config = common.resolve(&file)?;
    let out = super::common::new_results_folder(&file, "sprt-")?;
    std::fs::create_dir_all(&out)?;
    files::save_settings(&out, &settings)?;
    let flags = common.run_flags(Some(&file));
    common.open_events(Some(&file), RunKind::Sprt, &out, true)?;
    Ok((config, out, settings, flags))
}

/// The first flag of the test itself given on the command line, if any.
fn test_flag_given(args: &Args) -> Option<&'static str> {
    [
        ("--elo0", args.elo0.is_some()),
        ("--elo1", args.elo1.is_some()),
        ("--alpha", args.alpha.is_some()),
        ("--beta", args.beta.is_some()),
        ("--model", args.model.is_some()),
        ("--max-games", args.max_games.is_some()),
    ]
    .into_iter()
    .find(|(_, given)| *given)
    .map(|(flag, _)| flag)
}

pub(crate) fn run(args: Args) -> CliResult {
    let common = &args.common;
    if common.games.is_some() || common.shard.is_some() {
        return Err(CliError::input_msg(
            "sprt plays until a decision: use --max-games instead of --games; --shard does not apply",
        ));
    }
    if let Some(dir) = &args.report {
        if !common.engines.0.is_empty() || common.config.is_some() || common.out.is_some() {
            return Err(CliError::input_msg(
                "--report reads the test and its games from DIR: give no engines, --config or --out",
            ));
        }
        return super::sprt_workers::report(dir);
    }
    if let (Some(dir), Some(k), Some(n)) = (&args.shared, args.worker, args.workers) {
        return super::sprt_workers::run_worker(&args, dir, k, n);
    }
    let (config, out, settings, flags, resume) = match &args.resume {
        Some(dir) => {
            if !common.engines.0.is_empty() || common.config.is_some() || common.out.is_some() {
                return Err(CliError::input_msg(
                    "--resume takes its engines and settings from DIR; only --concurrency, \
                     --quiet and --debug may be given with it",
                ));
            }
            if let Some(flag) = common.settings_given().or(test_flag_given(&args)) {
                return Err(CliError::input_msg(format!(
                    "{flag} cannot be given with --resume: the test keeps its settings in \
                     DIR/sprt.toml and DIR/tournament.toml; only --concurrency, --quiet and \
                     --debug may be given with it"
                )));
            }
            if crate::results::Files::of(dir).tournament_toml().exists()
                && crate::results::run_kind(dir) != RunKind::Sprt
            {
                return Err(CliError::input_msg(format!(
                    "{} holds a tournament or match, not an SPRT: continue it with `kalaha \
                     tournament --resume {}`",
                    crate::record::shown_path(dir),
                    super::shell::shell_path(dir)
                )));
            }
            if let Some(e) = super::common::no_settings_to_resume(dir) {
                return Err(e);
            }
            super::common::require_results_file(
                dir,
                crate::results::Files::sprt_toml,
                "give the results folder of the SPRT to resume",
            )?;
            let settings = files::load_settings(dir).map_err(CliError::input_msg)?;
            let (config, concurrency) = load_saved_run(dir).map_err(CliError::input)?;
            let flags = common.resume_flags(concurrency);
            common.open_events(None, RunKind::Sprt, dir, false)?;
            if settings.workers.is_some() {
                // A worker of a test that several play: it goes on as that worker.
                return super::sprt_workers::resume_worker(dir, settings, &flags);
            }
            (config, dir.clone(), settings, flags, true)
        }
        None => {
            let (config, out, settings, flags) = new_test(&args)?;
            (config, out, settings, flags, false)
        }
    };
    let names = config.names();
    let (new, base) = (names[0].clone(), names[1].clone());
    let sprt = settings.sprt();
    let (before, ended) = files::replay(&out, &Test::new(&settings, &new, &base))?;
    let before_penta = before.penta;
    let before = before.status;
    if !common.quiet {
        let (lower, upper) = sprt.bounds();
        let model = sprt.model.as_str();
        let mut o = std::io::stdout().lock();
        writeln!(
            o,
            "{} SPRT of {new} (new) against {base} (base): H0 {model} Elo = {}, H1 {model} Elo = {}, alpha {}, beta {}, LLR bounds [{lower:.2}, {upper:.2}]",
            if resume { "resuming" } else { "starting" },
            sprt.elo0,
            sprt.elo1,
            sprt.alpha,
            sprt.beta,
        )?;
        if before.pairs > 0 {
            writeln!(o, "{}", before.line())?;
        }
    }
    if ended.is_some() {
        return conclude(
            &out,
            &settings,
            ended,
            before,
            before_penta,
            &new,
            &base,
            None,
        );
    }
    let (rule, judgements) = SprtRule::new(&settings, &new, &base);
    let mut view = SprtView::new(&out, judgements, common.quiet)?;
    let executed = execute(
        config,
        out.clone(),
        resume,
        RunKind::Sprt,
        &flags,
        &mut [&mut view],
        Some(Box::new(rule)),
    )?;
    // The names as settled at the start (an engine without `name=` goes by its hello name).
    let names = executed.outcome.config.names();
    let (new, base) = (names[0].clone(), names[1].clone());
    // Where the test stands after the last game recorded (the decision, if any, is the
    // rule's, shown by the view).
    let last = Test::new(&settings, &new, &base).judge(&executed.outcome.tally);
    if view.end.is_none() && executed.code == super::exit::INTERRUPTED {
        return Ok(super::exit::INTERRUPTED);
    }
    if !common.quiet {
        view.print_last()?;
    }
    conclude(
        &out,
        &settings,
        view.end,
        last.status,
        last.penta,
        &new,
        &base,
        executed.live.as_deref(),
    )
}

/// The exit code of a verdict.
pub(super) fn exit_code(verdict: Verdict) -> u8 {
    match verdict {
        Verdict::H1 => super::exit::OK,
        Verdict::H0 => super::exit::H0_ACCEPTED,
        Verdict::NoDecision => super::exit::NO_DECISION,
    }
}

/// Prints and saves the verdict, and shows it on the run's `live` page; returns its exit
/// code.
#[expect(
    clippy::too_many_arguments,
    reason = "the test's end, where it stands and where the verdict goes"
)]
fn conclude(
    out: &std::path::Path,
    settings: &SprtSettings,
    end: Option<SprtEnd>,
    last: crate::stats::SprtStatus,
    penta: [u64; 5],
    new: &str,
    base: &str,
    live: Option<&crate::web::Live>,
) -> CliResult {
    let (verdict, text, estimate) = crate::sprt::conclusion(settings, end, last, penta, new, base);
    let code = exit_code(verdict);
    files::save_verdict(out, code, &text, &last, estimate)?;
    let record = files::VerdictRecord::new(code, &text, &last, estimate);
    crate::events::emit(&crate::events::Event::Verdict(crate::events::Verdict::new(
        verdict, record,
    )));
    // The leaderboards were written before the verdict existed: write them again with it.
    if let Err(e) = crate::report::refresh_tournament_reports(out) {
        tracing::warn!(
            "the leaderboards of {} do not show the verdict: {e}",
            crate::record::shown_path(out)
        );
    }
    writeln!(std::io::stdout().lock(), "{text}")?;
    if let Some(live) = live {
        live.show_verdict(text);
    }
    Ok(code)
}
