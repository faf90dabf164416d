use super::*;
use crate::engines::{InProcess, Misbehaviour};
use crate::record::{FaultKind, GameRecord, Termination};
use crate::tournament::config::ConfigFile;
use crate::tournament::events::{Control, Event, StartInfo, StopRule};
use crate::tournament::spec::EngineSpec;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// Engine 0 plays well, engine 1 plays illegal moves, engine 2 cannot start; with `slow`,
/// every move takes 20 ms.
#[derive(Default)]
struct FakeLauncher {
    started: Arc<AtomicUsize>,
    stopped: Arc<AtomicUsize>,
    slow: bool,
}

impl Launcher for FakeLauncher {
    type Engine = InProcess;
    async fn start(&self, index: usize) -> Result<InProcess, Fault> {
        self.started.fetch_add(1, Ordering::SeqCst);
        let mut e = InProcess::builtin("first").unwrap();
        if self.slow {
            e = e.misbehave_always(Misbehaviour::Delay(Duration::from_millis(20)));
        }
        match index {
            2 => Err(Fault::new(FaultKind::Crash, "exited with status 3")),
            1 => Ok(e.misbehave_always(Misbehaviour::Illegal(99))),
            _ => Ok(e),
        }
    }
    async fn stop(&self, _engine: InProcess) {
        self.stopped.fetch_add(1, Ordering::SeqCst);
    }
}

/// Keeps every recorded game and counts completed pairs; stops after `stop_after` games.
#[derive(Default)]
struct Collect {
    games: Vec<GameRecord>,
    pairs: usize,
    interrupted: usize,
    stop_after: Option<usize>,
    stop_at_pair: bool,
}

impl View for Collect {
    fn event(&mut self, e: &Event<'_>, tally: &Tally) -> io::Result<Control> {
        match e {
            Event::GameFinished {
                record,
                pair_completed,
            } => {
                self.games.push((*record).clone());
                assert_eq!(tally.games(), self.games.len() as u64);
                if *pair_completed {
                    self.pairs += 1;
                    if self.stop_at_pair {
                        return Ok(Control::Stop);
                    }
                }
            }
            Event::GameInterrupted { .. } => self.interrupted += 1,
        }
        Ok(match self.stop_after {
            Some(n) if self.games.len() >= n => Control::Stop,
            _ => Control::Continue,
        })
    }
}

fn config(engines: usize, games: u64) -> TournamentConfig {
    ConfigFile {
        games: Some(games),
        opening_plies: Some(2),
        engines: (0..engines)
            .map(|i| EngineSpec {
                name: Some(format!("e{i}")),
                ..EngineSpec::builtin("first")
            })
            .collect(),
        ..ConfigFile::default()
    }
    .resolve()
    .unwrap()
}

/// A recorder of `config`'s games from none, writing into `dir` when given.
fn recorder(config: &TournamentConfig, dir: Option<&std::path::Path>) -> Recorder {
    Recorder {
        writer: dir.map(|d| crate::results::ResultsWriter::open(d).unwrap()),
        tally: Tally::new(),
        info: StartInfo {
            id: config.id.clone(),
            names: config.names(),
            total: config.schedule.games_in_shard(),
            done: 0,
            notes: Vec::new(),
        },
    }
}

fn run(
    launcher: FakeLauncher,
    config: &TournamentConfig,
    view: &mut Collect,
    concurrency: usize,
    interrupt_after: Option<Duration>,
    dir: Option<&std::path::Path>,
) -> RunSummary {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let (tx, rx) = mpsc::unbounded_channel();
    if let Some(after) = interrupt_after {
        rt.spawn(async move {
            tokio::time::sleep(after).await;
            let _ = tx.send(());
        });
    } else {
        std::mem::forget(tx);
    }
    let recorder = recorder(config, dir);
    let input = RunInput {
        games: config.schedule.games(),
        concurrency,
        interrupts: rx,
        stop: None,
        repeats: Default::default(),
    };
    let (summary, tally) =
        run_games(&rt, launcher, config, vec![], input, recorder, &mut [view]).unwrap();
    assert_eq!(tally.games(), summary.played);
    summary
}

#[test]
fn faults_lose_for_the_right_engine_and_the_tournament_goes_on() {
    let config = config(3, 2);
    let launcher = FakeLauncher::default();
    let stopped = launcher.stopped.clone();
    let mut c = Collect::default();
    let s = run(launcher, &config, &mut c, 2, None, None);
    assert!(s.complete());
    assert_eq!(c.games.len(), 6);
    assert_eq!(c.pairs, 3);
    for r in &c.games {
        let names = [r.south.as_str(), r.north.as_str()];
        let expect = if names.contains(&"e2") {
            (Termination::Fault(FaultKind::Crash), "e2")
        } else {
            (Termination::Fault(FaultKind::IllegalMove), "e1")
        };
        assert_eq!((r.termination, r.loser_name().unwrap()), expect, "{r:?}");
    }
    assert!(stopped.load(Ordering::SeqCst) > 0);
}

#[test]
fn healthy_engines_are_reused_and_every_instance_is_stopped() {
    let config = config(2, 8);
    let launcher = FakeLauncher::default();
    let (started, stopped) = (launcher.started.clone(), launcher.stopped.clone());
    let mut c = Collect::default();
    run(launcher, &config, &mut c, 1, None, None);
    assert_eq!(c.games.len(), 8);
    // Engine 1 faults every game and is restarted each time; engine 0 is reused: one
    // instance of it, plus eight of engine 1, all stopped in the end.
    assert_eq!(started.load(Ordering::SeqCst), 9);
    assert_eq!(stopped.load(Ordering::SeqCst), 9);
}

#[test]
fn a_view_stops_the_run_and_running_games_are_not_recorded() {
    let config = config(2, 20);
    let launcher = FakeLauncher {
        slow: true,
        ..Default::default()
    };
    let mut c = Collect {
        stop_at_pair: true,
        ..Collect::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let s = run(launcher, &config, &mut c, 2, None, Some(dir.path()));
    assert!(s.stopped_by_view);
    // The first pair decides; the games started meanwhile are stopped, not recorded.
    assert_eq!(c.games.len(), 2, "{s:?}");
    assert!(c.interrupted >= 1, "{s:?}");
    let rows = std::fs::read_to_string(dir.path().join("games.csv")).unwrap();
    assert_eq!(rows.lines().count(), 3, "{rows}");
}

#[test]
fn an_interruption_stops_running_games_without_recording_them() {
    let config = config(2, 200);
    let launcher = FakeLauncher {
        slow: true,
        ..Default::default()
    };
    let mut c = Collect::default();
    let s = run(
        launcher,
        &config,
        &mut c,
        2,
        Some(Duration::from_millis(30)),
        None,
    );
    assert!(s.stopped_by_interrupt);
    assert!(s.interrupted >= 1, "{s:?}");
    assert_eq!(c.interrupted as u64, s.interrupted);
    assert!(c.games.len() < 200);
}

#[test]
fn every_recorded_game_is_in_the_files_before_a_view_sees_it() {
    struct OnDisk(std::path::PathBuf, usize);
    impl View for OnDisk {
        fn event(&mut self, e: &Event<'_>, _: &Tally) -> io::Result<Control> {
            if let Event::GameFinished { record, .. } = e {
                let jsonl = std::fs::read_to_string(self.0.join("games.jsonl"))?;
                assert!(jsonl.contains(&format!("\"game\":\"{}\"", record.game)));
                self.1 += 1;
            }
            Ok(Control::Continue)
        }
    }
    let config = config(2, 10);
    let dir = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let (_tx, rx) = mpsc::unbounded_channel();
    let recorder = Recorder {
        writer: Some(crate::results::ResultsWriter::open(dir.path()).unwrap()),
        tally: Tally::new(),
        info: StartInfo {
            id: config.id.clone(),
            names: config.names(),
            total: 10,
            done: 0,
            notes: Vec::new(),
        },
    };
    let input = RunInput {
        games: config.schedule.games(),
        concurrency: 2,
        interrupts: rx,
        stop: None,
        repeats: Default::default(),
    };
    let mut v = OnDisk(dir.path().to_path_buf(), 0);
    let (s, _) = run_games(
        &rt,
        FakeLauncher::default(),
        &config,
        vec![],
        input,
        recorder,
        &mut [&mut v],
    )
    .unwrap();
    assert_eq!((s.played, v.1), (10, 10));
}

#[test]
fn a_stop_rule_ends_the_run_at_its_decision_and_nothing_after_is_recorded() {
    /// Stops once three pairs are complete.
    struct ThreePairs;
    impl StopRule for ThreePairs {
        fn should_stop(&mut self, tally: &Tally) -> bool {
            tally.engines().iter().all(|e| e.penta.pairs() >= 3)
        }
    }
    let config = config(2, 400);
    let dir = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let (_tx, rx) = mpsc::unbounded_channel();
    let recorder = Recorder {
        writer: Some(crate::results::ResultsWriter::open(dir.path()).unwrap()),
        tally: Tally::new(),
        info: StartInfo {
            id: config.id.clone(),
            names: config.names(),
            total: 400,
            done: 0,
            notes: Vec::new(),
        },
    };
    // Fast engines and four games at once: many games end between the decision and the
    // moment the recorder could have seen it.
    let input = RunInput {
        games: config.schedule.games(),
        concurrency: 4,
        interrupts: rx,
        stop: Some((Box::new(ThreePairs), Tally::new())),
        repeats: Default::default(),
    };
    let mut c = Collect::default();
    let (s, tally) = run_games(
        &rt,
        FakeLauncher::default(),
        &config,
        vec![],
        input,
        recorder,
        &mut [&mut c],
    )
    .unwrap();
    assert!(s.stopped_by_view, "{s:?}");
    assert_eq!(tally.engines()[0].penta.pairs(), 3);
    assert_eq!(c.pairs, 3, "{s:?}");
    let rows = std::fs::read_to_string(dir.path().join("games.csv")).unwrap();
    assert_eq!(rows.lines().count() as u64, 1 + s.played, "{rows}");
    assert_eq!(c.games.len() as u64, s.played);
}

/// A view that takes its time over the first game it sees, and notes how far the games
/// had gone by then.
struct SlowFirst {
    started: Arc<AtomicUsize>,
    seen: Option<(u64, usize)>,
}

impl View for SlowFirst {
    fn event(&mut self, e: &Event<'_>, tally: &Tally) -> io::Result<Control> {
        if matches!(e, Event::GameFinished { .. }) && self.seen.is_none() {
            std::thread::sleep(Duration::from_secs(1));
            self.seen = Some((tally.games(), self.started.load(Ordering::SeqCst)));
        }
        Ok(Control::Continue)
    }
}

/// A recorder slower than the games holds the run back: the games finished and not yet
/// recorded stay within a bound, where they would pile up in memory without end.
#[test]
fn games_wait_for_a_recorder_that_falls_behind() {
    let config = config(2, 5_000);
    // Engine 1 loses every game at once and is started again for the next: `started`
    // counts the games begun.
    let launcher = FakeLauncher::default();
    let mut view = SlowFirst {
        started: launcher.started.clone(),
        seen: None,
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let (_tx, rx) = mpsc::unbounded_channel();
    let recorder = recorder(&config, None);
    let input = RunInput {
        games: config.schedule.games(),
        concurrency: 2,
        interrupts: rx,
        stop: None,
        repeats: Default::default(),
    };
    let (summary, _) = run_games(
        &rt,
        launcher,
        &config,
        vec![],
        input,
        recorder,
        &mut [&mut view],
    )
    .unwrap();
    assert_eq!(summary.played, 5_000);
    let (recorded, started) = view.seen.unwrap();
    // The batch written before the view was shown its first game, then at most the bound
    // and the games running (and engine 1's next instance).
    let ahead = started as u64 - recorded;
    assert!(
        ahead <= (super::super::recorder::BATCH + MAX_UNRECORDED + 2 + 2) as u64,
        "{started} games begun while {recorded} were recorded"
    );
}

/// A view that fails at the end of the run does not keep the views after it from ending
/// (the leaderboards are written though the event stream was cut); its error is the run's.
#[test]
fn every_view_ends_though_one_fails_at_the_end() {
    struct FailsAtEnd;
    impl View for FailsAtEnd {
        fn event(&mut self, _: &Event<'_>, _: &Tally) -> io::Result<Control> {
            Ok(Control::Continue)
        }
        fn finish(&mut self, _: &RunSummary, _: &Tally) -> io::Result<()> {
            Err(io::Error::other("the reader stopped reading"))
        }
    }
    #[derive(Default)]
    struct Ends(Option<RunSummary>);
    impl View for Ends {
        fn event(&mut self, _: &Event<'_>, _: &Tally) -> io::Result<Control> {
            Ok(Control::Continue)
        }
        fn finish(&mut self, summary: &RunSummary, _: &Tally) -> io::Result<()> {
            self.0 = Some(summary.clone());
            Ok(())
        }
    }
    let config = config(2, 4);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let (_interrupt, interrupts) = mpsc::unbounded_channel();
    let input = RunInput {
        games: config.schedule.games(),
        concurrency: 2,
        interrupts,
        stop: None,
        repeats: Default::default(),
    };
    let (mut fails, mut ends) = (FailsAtEnd, Ends::default());
    let result = run_games(
        &rt,
        FakeLauncher::default(),
        &config,
        vec![],
        input,
        recorder(&config, None),
        &mut [&mut fails, &mut ends],
    );
    let error = result.expect_err("the failing view's error is the run's");
    assert_eq!(error.to_string(), "the reader stopped reading");
    let summary = ends.0.expect("the view after it ended");
    assert_eq!(summary.played, 4);
    assert!(summary.complete(), "{summary:?}");
}
