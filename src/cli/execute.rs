//! Running a resolved tournament from the command line: the header line, the live
//! display and the leaderboard views, interruption and its exit code, the CPU figures (in
//! the log).

use super::CliError;
use super::common::RunFlags;
use super::shell::shell_path;
use crate::record::format_duration;
pub(crate) use crate::results::RunKind;
use crate::tournament::config::TournamentConfig;
use crate::tournament::events::{StopRule, View};
use crate::tournament::schedule::ScheduleKind;
use crate::tournament::{RunOptions, TournamentError, TournamentOutcome};
use crate::views::{AnalysisView, DisplayMode, LeaderboardView, LiveDisplay};
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

/// A run that ended: its outcome and the exit code so far (0, or 130 when interrupted,
/// after printing how to resume).
pub(crate) struct Executed {
    pub outcome: TournamentOutcome,
    pub code: u8,
    /// The run's live page (`--live`), which still serves: an SPRT shows its verdict there.
    pub live: Option<std::sync::Arc<crate::web::Live>>,
}

/// The time control as the header shows it: the common one, or each engine's.
fn time_controls(config: &TournamentConfig) -> String {
    let tcs: Vec<String> = (0..config.engines.len())
        .map(|i| config.tc_of(i).to_string())
        .collect();
    if tcs.iter().all(|t| *t == tcs[0]) {
        tcs[0].clone()
    } else {
        let each: Vec<String> = config
            .engines
            .iter()
            .zip(&tcs)
            .map(|(e, t)| format!("{} {t}", e.identity.name))
            .collect();
        each.join(", ")
    }
}

/// Runs a resolved tournament with the live display, the leaderboard and `extra` views
/// (first), and says how it ended.
pub(crate) fn execute(
    config: TournamentConfig,
    out: PathBuf,
    resume: bool,
    kind: RunKind,
    flags: &RunFlags,
    extra: &mut [&mut dyn View],
    stop: Option<Box<dyn StopRule>>,
) -> Result<Executed, CliError> {
    // `cargo run` execs this program: the CPU time of cargo and of the compilers it waited
    // for is already on the counters, so only what is used from here on is reported.
    let cpu_at_start = (
        crate::sys::cpu_time(crate::sys::Who::Me),
        crate::sys::cpu_time(crate::sys::Who::Children),
    );
    let options = RunOptions {
        out: out.clone(),
        resume,
        concurrency: flags.concurrency,
        debug: flags.debug,
        kind,
    };
    // Refused now, before the header says the run starts.
    crate::results::check_folder(
        &out,
        if resume {
            crate::results::Claim::Resume
        } else {
            crate::results::Claim::New
        },
    )
    .map_err(CliError::input)?;
    crate::sandbox::Policy::from_strict(flags.strict)
        .check()
        .map_err(CliError::input_msg)?;
    let mode = DisplayMode::detect(flags.quiet);
    print_header(&config, &out, resume, kind, options.concurrency, mode)?;
    if config.adjudication == crate::referee::Adjudication::Exact {
        // Loaded now (a large table takes seconds), not in the middle of the first game.
        crate::referee::shared_table(&config.rules());
    }
    let mut analysis = if flags.analyze {
        Some(analysis_view(&config, &out)?)
    } else {
        None
    };
    let mut leaderboard = LeaderboardView::new(&out, flags.report_every);
    let mut display = match kind {
        // The test shows its own progress: the game count is only its limit.
        RunKind::Sprt => LiveDisplay::new(mode).until_decided(),
        _ => LiveDisplay::new(mode),
    };
    let page = flags.live.map(|_| {
        crate::web::Live::new(
            crate::web::Mode::Tournament,
            crate::web::run_title(kind, &config.names(), config.title.as_deref(), Some(&out)),
            Some(out.clone()),
        )
    });
    let mut live = match (flags.live, &page) {
        (Some((port, open)), Some(page)) => Some(
            crate::cli::play::live_page(page.clone(), port, open, "the live page of the run")?
                .of_run(kind, config.title.clone()),
        ),
        _ => None,
    };
    let mut events = crate::events::EventsView::if_open(&out, kind, resume, flags.report_every);
    let mut views: Vec<&mut dyn View> = Vec::with_capacity(extra.len() + 4);
    // First: a game's event comes before what other views say of it (an SPRT's status).
    if let Some(v) = events.as_mut() {
        views.push(v);
    }
    for v in extra.iter_mut() {
        views.push(&mut **v);
    }
    // Before the leaderboard, which shows what the analysis found.
    if let Some(v) = analysis.as_mut() {
        views.push(v);
    }
    views.push(&mut leaderboard);
    if let Some(v) = live.as_mut() {
        views.push(v);
    }
    views.push(&mut display);
    let outcome = match crate::tournament::run_tournament(config, &options, &mut views, stop) {
        Ok(o) => o,
        Err(TournamentError::Input(m)) => return Err(CliError::input_msg(m)),
        Err(e @ TournamentError::Output { .. }) => {
            return Err(CliError::from(anyhow::anyhow!(
                "{e}: `kalaha {} --resume {}`",
                kind.command(),
                shell_path(&out)
            )));
        }
        Err(e) => return Err(e.into()),
    };
    let s = &outcome.summary;
    if let Some(failure) = &s.failed {
        if s.failed_resumable {
            return Err(CliError::from(anyhow::anyhow!(
                "{failure}: `kalaha {} --resume {}`",
                kind.command(),
                shell_path(&out)
            )));
        }
        return Err(CliError::from(anyhow::anyhow!("{failure}")));
    }
    if s.stopped_by_interrupt || s.aborted {
        eprintln!(
            "interrupted: {} played, {} stopped and not recorded. Resume with:\n  kalaha {} --resume {}",
            crate::record::counted(s.played, "game"),
            s.interrupted,
            kind.command(),
            shell_path(&out)
        );
        return Ok(Executed {
            outcome,
            code: super::exit::INTERRUPTED,
            live: page,
        });
    }
    if s.restarted_between_games > 0 {
        eprintln!(
            "note: {} failed between two games (exited, sent something unasked or did not \
             answer) and {} started again; no game was charged for it (see the engines' logs)",
            crate::record::counted(s.restarted_between_games, "engine instance"),
            if s.restarted_between_games == 1 {
                "was"
            } else {
                "were"
            }
        );
    }
    let repeats = outcome.tally.repeats();
    if repeats > 0 {
        // A warning, shown even with --quiet.
        tracing::warn!(
            "{} repeated an earlier game of the run move for move (the same \
             engines in the same seats from the same start): marked `repeats` in games.jsonl \
             and left out of the Elo and the SPRT, as they add no evidence; they come from \
             openings played again, or from longer openings where earlier games went (a run \
             longer than the book, or than the positions after --opening-plies sowings)",
            crate::record::counted(repeats, "game")
        );
    }
    if mode != DisplayMode::Quiet {
        print_summary(s.moves, cpu_at_start, &out)?;
    }
    Ok(Executed {
        outcome,
        code: super::exit::OK,
        live: page,
    })
}

/// Prints the run's header (unless quiet): what is played, by how many engines, under which
/// rules and clocks, and where the results go.
fn print_header(
    config: &TournamentConfig,
    out: &std::path::Path,
    resume: bool,
    kind: RunKind,
    concurrency: usize,
    mode: DisplayMode,
) -> Result<(), CliError> {
    // No more games run at once than the run has.
    let at_once =
        concurrency.min(usize::try_from(config.schedule.games_in_shard()).unwrap_or(usize::MAX));
    if mode != DisplayMode::Quiet {
        let what = match (kind, config.schedule.kind) {
            (RunKind::Match, _) => "match",
            (RunKind::Sprt, _) => "SPRT games",
            (RunKind::Play, _) => "play session",
            // Two engines are a match, whichever command started them (a resume is run
            // as a tournament).
            (RunKind::Tournament, ScheduleKind::RoundRobin) if config.engines.len() == 2 => "match",
            (RunKind::Tournament, ScheduleKind::RoundRobin) => "round robin",
            (RunKind::Tournament, ScheduleKind::Gauntlet) => "gauntlet",
        };
        // An SPRT stops as soon as it decides: its game count is a limit, said here once.
        // A worker of a test that several play plays its own pairs: its limit is theirs.
        let games = match kind {
            RunKind::Sprt => format!(
                "at most {}",
                crate::record::counted(config.schedule.games_in_shard(), "game")
            ),
            _ => format!(
                "{} games per pairing",
                2 * config.schedule.pairs_per_pairing
            ),
        };
        let (openings, note) = config
            .schedule
            .openings
            .describe(config.schedule.pairs_per_pairing);
        let note = note.map_or(String::new(), |n| format!("\n{n}"));
        // One write: a reader that takes the first line and closes the output (`head -1`)
        // stops the run where it writes next, not before it starts.
        let text = format!(
            "{} {what}: {} engines, {games}, {}, time {} (+{} margin), {} at once; results in {}\n\
             {openings}{note}\n",
            if resume { "resuming" } else { "starting" },
            config.engines.len(),
            config.rules(),
            time_controls(config),
            format_duration(config.margin),
            at_once,
            crate::record::shown_path(out)
        );
        std::io::stdout().lock().write_all(text.as_bytes())?;
    }
    if let Some(warning) = crate::record::machine_load()
        .and_then(|(load, cpus)| load_warning(load, cpus, config.margin))
    {
        tracing::warn!("{warning}");
    }
    Ok(())
}

/// A warning when more processes already wait to run than there are CPUs: engines then
/// wait for a CPU on their clock and may lose on time.
fn load_warning(load: f64, cpus: usize, margin: Duration) -> Option<String> {
    (load > cpus as f64).then(|| {
        format!(
            "the load average is {load:.1} on {}: engines wait for a CPU on their \
             clock and may lose on time (the built-in engines think less; the margin is {}, \
             --time-margin gives more)",
            crate::record::counted(cpus as u64, "CPU"),
            format_duration(margin)
        )
    })
}

/// The last line of a run, where the results are; and, in the log (`RUST_LOG=info`), the
/// CPU the referee and the engine processes used since `cpu_at_start` (the referee's own,
/// and its children's).
fn print_summary(
    moves: u64,
    cpu_at_start: (Duration, Duration),
    out: &std::path::Path,
) -> Result<(), CliError> {
    let own = crate::sys::cpu_time(crate::sys::Who::Me).saturating_sub(cpu_at_start.0);
    let engines = crate::sys::cpu_time(crate::sys::Who::Children).saturating_sub(cpu_at_start.1);
    // For whoever measures kalaha itself: shown with RUST_LOG=info.
    if moves > 0 {
        tracing::info!(
            "referee CPU {:.0} ms for {} moves ({:.1} us per move); engine processes CPU {:.0} ms",
            own.as_secs_f64() * 1e3,
            moves,
            own.as_secs_f64() * 1e6 / moves as f64,
            engines.as_secs_f64() * 1e3
        );
    }
    let mut o = std::io::stdout().lock();
    writeln!(o, "results in {}", crate::record::shown_path(out))?;
    Ok(())
}

/// The `--analyze` view: one thread, the endgame table of the run's rules (built once if
/// needed), 10 s a position at most while it keeps up with the games (less when games
/// wait), a 512 MiB transposition table kept for the whole run.
fn analysis_view(
    config: &TournamentConfig,
    out: &std::path::Path,
) -> Result<AnalysisView, CliError> {
    let args = super::tables::TableArgs {
        tables: None,
        table_mb: super::tables::DEFAULT_TABLE_MB,
    };
    let rules = config.rules();
    let tables = super::analyze::tables_for(&[rules], &args, 1)?;
    Ok(AnalysisView::new(
        out,
        tables,
        crate::analysis::AnalysisSettings {
            threads: 1,
            budget: Some(Duration::from_secs(10)),
            hash_mb: 512,
            order: crate::analysis::DEFAULT_ORDER,
        },
    ))
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_load_above_the_cpus_is_warned_of() {
        assert_eq!(load_warning(1.9, 2, Duration::from_millis(50)), None);
        assert_eq!(load_warning(2.0, 2, Duration::from_millis(50)), None);
        assert_eq!(
            load_warning(3.46, 2, Duration::from_millis(50)).as_deref(),
            Some(
                "the load average is 3.5 on 2 CPUs: engines wait for a CPU on their \
                 clock and may lose on time (the built-in engines think less; the margin is \
                 50ms, --time-margin gives more)"
            )
        );
    }
}
