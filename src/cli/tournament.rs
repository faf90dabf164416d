//! `kalaha tournament`: a round robin or gauntlet of engines, with results written to a
//! folder and resumable after any interruption.

use super::common::{CommonArgs, resume_flag};
use super::execute::{RunKind, execute};
use super::{CliError, CliResult};
use crate::record::TimeControl;
use crate::tournament::load_saved_run;
use crate::tournament::schedule::ScheduleKind;
use crate::tournament::spec::EngineSpec;
use std::path::PathBuf;
use std::time::Duration;

/// The built-in engines of the demo tournament (no engines given).
pub(crate) const DEMO_ENGINES: [&str; 5] = ["random", "greedy", "easy", "medium", "hard"];

/// Run a round robin (or a gauntlet) between engines; with no engines, a demo round robin
/// of the built-in engines random, greedy, easy, medium and hard (20 games per pairing from
/// 4-ply random openings, 20 ms per move with a 150 ms margin).
#[derive(Debug, clap::Args)]
#[command(after_help = "Example:\n  \
kalaha tournament\n  \
kalaha tournament --engine builtin=hard --engine builtin=medium --engine cmd=./my-engine name=mine option.depth=8 --games 20 --move-time 100ms\n  \
kalaha tournament --config tournament.toml --concurrency 4 --out results/run1\n  \
kalaha tournament --resume results/run1\n\n\
Exit status 130 when interrupted (Ctrl-C); the results so far are kept and --resume continues.")]
pub struct Args {
    #[command(flatten)]
    pub common: CommonArgs,
    /// The first engine plays each of the others (instead of everyone against everyone).
    #[arg(long)]
    pub gauntlet: bool,
    /// Continue the tournament in DIR (only --concurrency, --quiet, --debug, --report-every
    /// and --events may change).
    #[arg(long, value_name = "DIR")]
    pub resume: Option<PathBuf>,
}

pub(crate) fn run(args: Args) -> CliResult {
    if let Some(dir) = &args.resume {
        if args.gauntlet {
            return Err(resume_flag("--gauntlet"));
        }
        return resume(dir, &args.common);
    }
    let demo = args.common.engines.0.is_empty() && args.common.config.is_none();
    let mut file = args.common.to_config_file()?;
    if args.gauntlet {
        file.schedule = Some(ScheduleKind::Gauntlet);
    }
    if demo {
        file.engines = DEMO_ENGINES
            .iter()
            .map(|n| EngineSpec::builtin(n))
            .collect();
        // The demo's time control only when the user gave none (of any spelling).
        if file.tc.is_none() && file.move_time.is_none() && file.clock.is_none() {
            file.tc = Some(TimeControl::MoveTime(Duration::from_millis(20)));
        }
        file.games.get_or_insert(20);
        // A loaded machine delays processes by tens of milliseconds: the demo should show
        // the engines' strength, not the machine's load.
        file.time_margin.get_or_insert_with(|| "150ms".into());
        if file.openings.is_none() {
            file.opening_plies.get_or_insert(4);
        }
    }
    let config = args.common.resolve(&file)?;
    let out = super::common::new_results_folder(&file, "")?;
    let flags = args.common.run_flags(Some(&file));
    args.common
        .open_events(Some(&file), RunKind::Tournament, &out, true)?;
    Ok(execute(
        config,
        out,
        false,
        RunKind::Tournament,
        &flags,
        &mut [],
        None,
    )?
    .code)
}

/// Continues the run in `dir` (a tournament or a match) with its saved settings.
pub(super) fn resume(dir: &std::path::Path, common: &CommonArgs) -> CliResult {
    if !common.engines.0.is_empty() || common.config.is_some() || common.out.is_some() {
        return Err(CliError::input_msg(
            "--resume takes its engines and settings from DIR/tournament.toml; \
             only --concurrency, --quiet, --debug, --report-every and --events may be given \
             with it",
        ));
    }
    if let Some(flag) = common.settings_given() {
        return Err(resume_flag(flag));
    }
    let kind = crate::results::run_kind(dir);
    match kind {
        RunKind::Sprt => {
            return Err(CliError::input_msg(format!(
                "{} holds an SPRT: continue it with `kalaha sprt --resume {0}` (as a \
                 tournament it would play on without its stopping rule)",
                crate::record::shown_path(dir)
            )));
        }
        RunKind::Play => {
            return Err(CliError::input_msg(format!(
                "{} holds the games of a play session, which does not go on: start a new \
                 session with `kalaha play` (`kalaha ratings {0}` rates these games)",
                crate::record::shown_path(dir)
            )));
        }
        RunKind::Tournament | RunKind::Match => {}
    }
    if let Some(e) = super::common::no_settings_to_resume(dir) {
        return Err(e);
    }
    super::common::require_results_file(
        dir,
        crate::results::Files::tournament_toml,
        "give the results folder of the run to resume",
    )?;
    let (config, concurrency) = load_saved_run(dir).map_err(CliError::input)?;
    let flags = common.resume_flags(concurrency);
    common.open_events(None, kind, dir, false)?;
    Ok(execute(
        config,
        dir.to_path_buf(),
        true,
        RunKind::Tournament,
        &flags,
        &mut [],
        None,
    )?
    .code)
}
