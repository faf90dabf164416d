//! `kalaha sprt --workers N --worker K --shared DIR`: one worker of a test that several
//! processes play ([`crate::sprt::workers`]), and `kalaha sprt --report DIR`: the test of
//! a shared folder recomputed from its workers' games.

use super::common::RunFlags;
use super::execute::{RunKind, execute};
use super::sprt::{Args, exit_code, settings_of};
use super::{CliError, CliResult};
use crate::sprt::pool::{Pool, worker_folder};
use crate::sprt::workers::{self, News, SharedTest, Worker, WorkerView, read_shared, read_verdict};
use crate::sprt::{SprtSettings, files};
use crate::tournament::config::TournamentConfig;
use crate::tournament::load_saved_run;
use crate::tournament::schedule::Shard;
use std::io::Write;
use std::path::Path;
use std::time::Duration;

/// The tournament of `config` as a table of `tournament.toml`.
fn table_of(config: &TournamentConfig) -> Result<toml::Table, CliError> {
    Ok(toml::Table::try_from(config.to_file())?)
}

/// Runs worker `k` of `n` of the test in the shared folder `dir`, with the settings of
/// the command line.
pub(super) fn run_worker(args: &Args, dir: &Path, k: u64, n: u64) -> CliResult {
    let common = &args.common;
    if args.resume.is_some() || common.out.is_some() {
        return Err(CliError::input_msg(
            "--shared DIR plays into DIR/worker-K: --out and --resume do not apply (a \
             worker started again with the same flags continues its pairs)",
        ));
    }
    if n == 0 || !(1..=n).contains(&k) {
        return Err(CliError::input_msg(format!(
            "--worker {k} of --workers {n}: workers are numbered 1 to N (with Slurm, \
             --array=1-N gives $SLURM_ARRAY_TASK_ID; with Kubernetes, K is \
             $JOB_COMPLETION_INDEX + 1)"
        )));
    }
    let settings = SprtSettings {
        workers: Some(n),
        ..settings_of(args)?
    };
    let mut file = common.to_config_file()?;
    if file.engines.len() != 2 {
        return Err(CliError::input_msg(format!(
            "sprt needs exactly two engines (the new one first), {} given",
            file.engines.len()
        )));
    }
    if file.shard.is_some() {
        return Err(CliError::input_msg(
            "a worker plays the pairs of --worker K of --workers N: shard does not apply",
        ));
    }
    file.games = Some(settings.max_games.unwrap_or(super::sprt::DEFAULT_MAX_GAMES));
    file.shard = Some(Shard { index: k, count: n }.to_string());
    let id_given = file.id.is_some();
    // The test's id when a worker wrote it, else a new one (two first workers that race
    // settle on the one written first).
    let mut shared = None;
    for _ in 0..2 {
        if !id_given {
            file.id = Some(match read_shared(dir).map_err(CliError::input_msg)? {
                Some(test) => test.id().unwrap_or_default().to_string(),
                None => crate::tournament::config::new_tournament_id(),
            });
        }
        let config = common.resolve(&file)?;
        let mine = SharedTest::new(settings.clone(), table_of(&config)?);
        match workers::join(dir, &mine, k, true) {
            Ok(test) => {
                shared = Some((test, config));
                break;
            }
            Err(_)
                if !id_given
                    && read_shared(dir)
                        .ok()
                        .flatten()
                        .is_some_and(|t| t.id() != mine.id()) =>
            {
                continue;
            }
            Err(e) => return Err(CliError::input_msg(e)),
        }
    }
    let Some((_, config)) = shared else {
        return Err(CliError::input_msg(format!(
            "the test of {} keeps changing its id: start the workers again",
            crate::record::shown_path(dir)
        )));
    };
    let out = worker_folder(dir, k);
    let resume = crate::results::Files::of(&out).tournament_toml().exists();
    // A new worker that comes after the decision (its settings checked) has nothing to
    // play.
    if !resume && let Some(code) = decided(dir, common.quiet)? {
        return Ok(code);
    }
    let (config, flags) = if resume {
        let (saved, concurrency) = resumed(&out, &settings, dir, k)?;
        (saved, common.resume_flags(concurrency))
    } else {
        crate::results::check_folder(&out, crate::results::Claim::New).map_err(CliError::input)?;
        std::fs::create_dir_all(&out)?;
        files::save_settings(&out, &settings)?;
        (config, common.run_flags(Some(&file)))
    };
    common.open_events(Some(&file), RunKind::Sprt, &out, !resume)?;
    play(dir, k, settings, config, resume, &flags)
}

/// Continues the worker of the folder `out` (`kalaha sprt --resume DIR/worker-K`), with its
/// saved settings; `settings` are those of its `sprt.toml`.
pub(super) fn resume_worker(out: &Path, settings: SprtSettings, flags: &RunFlags) -> CliResult {
    let (config, _) = load_saved_run(out).map_err(CliError::input)?;
    let shard = config.schedule.shard;
    let (Some(n), Some(shard)) = (settings.workers, shard) else {
        return Err(CliError::input_msg(format!(
            "{} is not a worker of a shared test",
            crate::record::shown_path(out)
        )));
    };
    let dir = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    if shard.count != n || worker_folder(&dir, shard.index) != out {
        return Err(CliError::input_msg(format!(
            "{} holds worker {shard} of a shared test, but is not DIR/worker-{} of its shared \
             folder: move it back",
            crate::record::shown_path(out),
            shard.index
        )));
    }
    let (config, _) = resumed(out, &settings, &dir, shard.index)?;
    play(&dir, shard.index, settings, config, true, flags)
}

/// The saved configuration of the worker folder `out` (worker `k` of the shared folder
/// `dir`) and its games at once, checked against the test of `dir`.
fn resumed(
    out: &Path,
    settings: &SprtSettings,
    dir: &Path,
    k: u64,
) -> Result<(TournamentConfig, Option<usize>), CliError> {
    let saved_settings = files::load_settings(out).map_err(CliError::input_msg)?;
    let (saved, concurrency) = load_saved_run(out).map_err(CliError::input)?;
    let mine = SharedTest::new(saved_settings, table_of(&saved)?);
    let test = workers::join(dir, &mine, k, false).map_err(|e| {
        CliError::input_msg(format!(
            "{} (the games of {} were played with these settings)",
            e,
            crate::record::shown_path(out)
        ))
    })?;
    if let Some(d) =
        SharedTest::new(settings.clone(), test.tournament.clone()).difference(&test, false)
    {
        return Err(CliError::input_msg(format!(
            "this worker's settings differ from the test of {}: {d}",
            crate::record::shown_path(dir)
        )));
    }
    Ok((saved, concurrency))
}

/// The verdict already written in the shared folder `dir`, printed, and its exit code.
fn decided(dir: &Path, quiet: bool) -> Result<Option<u8>, CliError> {
    let Some(v) = read_verdict(dir)? else {
        return Ok(None);
    };
    if !quiet {
        writeln!(
            std::io::stdout().lock(),
            "the test of {} is decided: nothing to play",
            crate::record::shown_path(dir)
        )?;
    }
    writeln!(std::io::stdout().lock(), "{}", v.verdict)?;
    Ok(Some(v.exit_code))
}

/// Plays worker `k`'s pairs of the test in the shared folder `dir` into `DIR/worker-K`,
/// then waits for the verdict; returns its exit code.
fn play(
    dir: &Path,
    k: u64,
    settings: SprtSettings,
    config: TournamentConfig,
    resume: bool,
    flags: &RunFlags,
) -> CliResult {
    let out = worker_folder(dir, k);
    let n = settings.workers.unwrap_or(1);
    let schedule = crate::tournament::schedule::Schedule {
        shard: None,
        ..config.schedule.clone()
    };
    let worker = Worker {
        dir: dir.to_path_buf(),
        k,
        settings: settings.clone(),
        schedule,
        id: config.id.clone(),
        code_of: exit_code,
    };
    if !flags.quiet {
        let sprt = settings.sprt();
        let (lower, upper) = sprt.bounds();
        let names = config.names();
        writeln!(
            std::io::stdout().lock(),
            "worker {k} of {n} of the SPRT of {} (new) against {} (base) in {}: H0 {model} Elo = {}, \
             H1 {model} Elo = {}, alpha {}, beta {}, LLR bounds [{lower:.2}, {upper:.2}]; pairs {k}, {}, {}, ...",
            names[0],
            names[1],
            crate::record::shown_path(dir),
            sprt.elo0,
            sprt.elo1,
            sprt.alpha,
            sprt.beta,
            k + n,
            k + 2 * n,
            model = sprt.model.as_str(),
        )?;
    }
    let pace = workers::Pace::new(worker.clone(), flags.concurrency);
    // The pooled test in the event stream, if there is one.
    let news = Box::new(|news: News<'_>| match news {
        News::Judged(j) => crate::events::emit(&crate::events::Event::SprtStatus(j.into())),
        News::Verdict(c) => {
            let record = files::VerdictRecord::new(c.code, &c.text, &c.status, c.estimate);
            crate::events::emit(&crate::events::Event::Verdict(crate::events::Verdict::new(
                c.verdict, record,
            )));
        }
    });
    let mut view = WorkerView::new(worker, flags.quiet, news);
    if read_verdict(dir)?.is_some() {
        // Decided while this worker was away: nothing to play; its copy of the verdict
        // says which of its pairs came after the decision.
        let names = config.names();
        view.set_names(&names[0], &names[1]);
        view.check()?;
        if !flags.quiet {
            writeln!(
                std::io::stdout().lock(),
                "the test of {} is decided: nothing to play",
                crate::record::shown_path(dir)
            )?;
        }
        return finish(&mut view, dir, k, flags.quiet);
    }
    let executed = execute(
        config,
        out.clone(),
        resume,
        RunKind::Sprt,
        flags,
        &mut [&mut view],
        Some(Box::new(pace)),
    )?;
    if view.published.is_none() {
        if executed.code == super::exit::INTERRUPTED {
            return Ok(executed.code);
        }
        if !wait(&mut view)? {
            eprintln!(
                "interrupted while waiting for the verdict: the worker's games are recorded; \
                 start it again with the same command"
            );
            return Ok(super::exit::INTERRUPTED);
        }
    }
    view.print(true)?;
    finish(&mut view, dir, k, flags.quiet)
}

/// Writes worker `k`'s copy of the verdict that `view` knows, with its pairs after the
/// decision, refreshes its leaderboards and prints the verdict; returns its exit code.
fn finish(view: &mut WorkerView, dir: &Path, k: u64, quiet: bool) -> CliResult {
    let out = worker_folder(dir, k);
    let published = view.published.clone().expect("known by now");
    let pool = view.pool()?.expect("made by the check");
    let after: Vec<u64> = pool.after_decision(Some(k)).into_iter().collect();
    // This worker's copy of the verdict, with its pairs that came after the decision.
    let mut own = std::fs::read_to_string(crate::results::Files::of(dir).sprt_result_toml())?;
    own.push_str(&toml::to_string(&OwnVerdict {
        worker: k,
        pairs_after_decision: after.clone(),
    })?);
    crate::results::write_file(
        &crate::results::Files::of(&out).sprt_result_toml(),
        own.as_bytes(),
    )?;
    if let Err(e) = crate::report::refresh_tournament_reports(&out) {
        tracing::warn!(
            "the leaderboards of {} do not show the verdict: {e}",
            crate::record::shown_path(&out)
        );
    }
    if let Some(mine) = &published.differs {
        eprintln!(
            "warning: the verdict in {} differs from this worker's pooling of the games ({}): \
             a game it pooled is no longer recorded; `kalaha sprt --report {}` recomputes it",
            crate::record::shown_path(dir),
            mine.verdict,
            super::shell::shell_path(dir)
        );
    }
    let mut o = std::io::stdout().lock();
    if !quiet {
        writeln!(
            o,
            "worker {k}: {} of its pairs recorded after the decision ({}), not counted",
            after.len(),
            if published.first {
                "it wrote the verdict"
            } else {
                "another worker wrote the verdict"
            }
        )?;
    }
    writeln!(o, "{}", published.verdict.verdict)?;
    Ok(published.verdict.exit_code)
}

/// What a worker adds to its copy of the verdict.
#[derive(serde::Serialize)]
struct OwnVerdict {
    worker: u64,
    /// This worker's pairs with a game recorded after the stopping point.
    pairs_after_decision: Vec<u64>,
}

/// Waits for the verdict once the worker's pairs are played; `false` when interrupted.
fn wait(view: &mut WorkerView) -> Result<bool, CliError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let mut interrupts = {
        let _inside = runtime.enter();
        crate::tournament::run::ctrl_c_interrupts()
    };
    Ok(view.wait(|| {
        runtime.block_on(async {
            tokio::select! {
                () = tokio::time::sleep(Duration::from_millis(500)) => false,
                _ = interrupts.recv() => true,
            }
        })
    })?)
}

/// `kalaha sprt --report DIR`: recomputes the test of the shared folder `dir` from its
/// workers' games and checks the verdict written there; the exit code is the verdict's
/// (4 while the test goes on), 1 when the verdict written differs.
pub(super) fn report(dir: &Path) -> CliResult {
    let test = read_shared(dir)
        .map_err(CliError::input_msg)?
        .ok_or_else(|| {
            CliError::input_msg(format!(
                "{} holds no {}: give the shared folder of a test played with --workers",
                crate::record::shown_path(dir),
                crate::results::Files::of(dir)
                    .sprt_workers_toml()
                    .file_name()
                    .unwrap_or_default()
                    .display()
            ))
        })?;
    let n = test.workers();
    let file: crate::tournament::config::ConfigFile = test.tournament.clone().try_into()?;
    let config = file.resolve().map_err(|e| {
        CliError::input_msg(format!(
            "{}: {e}",
            crate::record::shown_path(&crate::results::Files::of(dir).sprt_workers_toml())
        ))
    })?;
    // The engines' names as their games give them (settled when a worker started).
    let names = (1..=n)
        .map(|k| worker_folder(dir, k))
        .find_map(|w| load_saved_run(&w).ok())
        .map_or_else(|| config.names(), |(c, _)| c.names());
    let (new, base) = (names[0].as_str(), names[1].as_str());
    let mut pool = Pool::new(dir, &test.sprt, &config.schedule, &config.id, new, base);
    let ended = pool.refresh()?;
    let mut o = std::io::stdout().lock();
    let by_worker = pool.games_by_worker();
    let games: Vec<String> = by_worker
        .iter()
        .enumerate()
        .map(|(i, g)| format!("worker {}: {g}", i + 1))
        .collect();
    writeln!(
        o,
        "SPRT of {new} (new) against {base} (base) by {} in {}: {} games recorded ({})",
        crate::record::counted(n, "worker"),
        crate::record::shown_path(dir),
        by_worker.iter().sum::<u64>(),
        games.join(", ")
    )?;
    if pool.not_counted > 0 {
        writeln!(
            o,
            "{} lines of the workers' games.jsonl are not games of this test or do not replay: not counted",
            pool.not_counted
        )?;
    }
    let written = read_verdict(dir)?;
    let Some(ended) = ended else {
        let (pair, k) = pool.waiting_for().expect("not ended");
        writeln!(
            o,
            "no decision yet: {}; pair {pair} (worker {k}) is the next in order",
            pool.last().status.line()
        )?;
        if written.is_some() {
            return Err(CliError::from(anyhow::anyhow!(
                "{} holds a verdict, but the games recorded do not reach it: games were lost",
                crate::record::shown_path(&crate::results::Files::of(dir).sprt_result_toml())
            )));
        }
        return Ok(super::exit::NO_DECISION);
    };
    let (verdict, _) = workers::verdict_of(&ended, &test.sprt, new, base, exit_code);
    writeln!(o, "{}", pool.last().status.line())?;
    writeln!(o, "{}", verdict.verdict)?;
    let after = pool.after_decision(None);
    writeln!(
        o,
        "{} recorded after the decision (pairs above {}), not counted",
        crate::record::counted(after.len() as u64, "pair"),
        pool.judged()
    )?;
    let path = crate::record::shown_path(&crate::results::Files::of(dir).sprt_result_toml());
    match written {
        None => writeln!(o, "{path}: not written yet")?,
        Some(w)
            if w.verdict == verdict.verdict
                && w.pairs == verdict.pairs
                && w.exit_code == verdict.exit_code =>
        {
            writeln!(o, "{path}: the same verdict")?;
        }
        Some(w) => {
            return Err(CliError::from(anyhow::anyhow!(
                "{path} says {:?}, but the games recorded say {:?}",
                w.verdict,
                verdict.verdict
            )));
        }
    }
    Ok(verdict.exit_code)
}
