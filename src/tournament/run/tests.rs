use super::*;
use crate::referee::{Reply, TimeLimit};
use crate::rules::{Move, Rules};
use crate::tournament::config::ConfigFile;
use crate::tournament::spec::EngineSpec;
use std::sync::atomic::{AtomicUsize, Ordering};

/// An in-process engine: plays the lowest legal pit; `illegal` engines answer pit 99.
struct Fake {
    illegal: bool,
    slow: bool,
}

impl Contestant for Fake {
    async fn new_game(&mut self, _: &str, _: Rules, _: Side) -> Result<(), Fault> {
        Ok(())
    }
    async fn go(
        &mut self,
        pos: &Position,
        _: &[Move],
        _: TimeLimit,
        _: Duration,
    ) -> Result<Reply, Fault> {
        if self.slow {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let pit = if self.illegal {
            99
        } else {
            pos.legal_moves().next().unwrap() as i64
        };
        Ok(Reply {
            pit,
            line: format!("{{\"type\":\"move\",\"pit\":{pit}}}"),
            infos: vec![],
            elapsed: Duration::from_millis(1),
        })
    }
    async fn game_over(
        &mut self,
        _: &str,
        _: &'static str,
        _: u16,
        _: u16,
        _: Termination,
    ) -> Result<(), Fault> {
        Ok(())
    }
}

/// Engine 0 plays well, engine 1 plays illegal moves, engine 2 cannot start.
#[derive(Default)]
struct FakeLauncher {
    started: AtomicUsize,
    stopped: Arc<AtomicUsize>,
    slow: bool,
}

impl Launcher for FakeLauncher {
    type Engine = Fake;
    async fn start(&self, index: usize) -> Result<Fake, Fault> {
        self.started.fetch_add(1, Ordering::SeqCst);
        match index {
            2 => Err(Fault::new(Termination::Crash, "exited with status 3")),
            i => Ok(Fake {
                illegal: i == 1,
                slow: self.slow,
            }),
        }
    }
    async fn stop(&self, _engine: Fake) {
        self.stopped.fetch_add(1, Ordering::SeqCst);
    }
}

struct Collect(Vec<GameRecord>, usize, Option<usize>);

impl Reporter for Collect {
    fn event(&mut self, e: &Event<'_>) -> io::Result<Control> {
        match e {
            Event::GameFinished(r) => self.0.push((*r).clone()),
            Event::PairFinished([a, b]) => {
                assert_eq!(a.pair, b.pair);
                assert_eq!(b.number, a.number + 1);
                self.1 += 1;
            }
            Event::GameInterrupted(_) => {}
        }
        Ok(match self.2 {
            Some(n) if self.0.len() >= n => Control::Stop,
            _ => Control::Continue,
        })
    }
}

fn config(engines: usize, games: u64) -> TournamentConfig {
    ConfigFile {
        games: Some(games),
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

fn run(
    launcher: FakeLauncher,
    config: &TournamentConfig,
    stop_after: Option<usize>,
    interrupt: bool,
) -> (Collect, RunSummary) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let (tx, rx) = mpsc::unbounded_channel();
        if interrupt {
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(30)).await;
                let _ = tx.send(());
            });
        } else {
            std::mem::forget(tx);
        }
        let mut c = Collect(Vec::new(), 0, stop_after);
        let s = run_games(
            launcher,
            config,
            vec![],
            config.schedule.games(),
            2,
            &mut [&mut c],
            rx,
        )
        .await
        .unwrap();
        (c, s)
    })
}

#[test]
fn faults_lose_for_the_right_engine_and_the_tournament_goes_on() {
    let config = config(3, 2);
    let stopped = Arc::new(AtomicUsize::new(0));
    let launcher = FakeLauncher {
        stopped: stopped.clone(),
        ..Default::default()
    };
    let (c, s) = run(launcher, &config, None, false);
    assert!(s.complete());
    assert_eq!(c.0.len(), 6);
    assert_eq!(c.1, 3);
    for r in &c.0 {
        let names = [r.south.as_str(), r.north.as_str()];
        let expect = if names.contains(&"e2") {
            (Termination::Crash, "e2")
        } else {
            (Termination::IllegalMove, "e1")
        };
        assert_eq!(
            (r.play.termination, r.loser_name().unwrap()),
            expect,
            "{r:?}"
        );
    }
    // Every instance started is stopped at the end.
    assert!(stopped.load(Ordering::SeqCst) > 0);
}

#[test]
fn healthy_engines_are_reused_and_every_instance_is_stopped() {
    let config = config(2, 8);
    let launcher = FakeLauncher::default();
    let stopped = launcher.stopped.clone();
    let (c, _) = {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let (_tx, rx) = mpsc::unbounded_channel();
            let mut c = Collect(Vec::new(), 0, None);
            let l = launcher;
            let s = run_games(
                l,
                &config,
                vec![],
                config.schedule.games(),
                1,
                &mut [&mut c],
                rx,
            )
            .await
            .unwrap();
            (c, s)
        })
    };
    assert_eq!(c.0.len(), 8);
    // Engine 1 faults every game and is restarted each time; engine 0 is reused: one
    // instance of it, plus eight of engine 1, all stopped in the end.
    assert_eq!(stopped.load(Ordering::SeqCst), 9);
}

#[test]
fn a_reporter_can_stop_the_run() {
    let config = config(2, 20);
    let (c, s) = run(FakeLauncher::default(), &config, Some(4), false);
    assert!(s.stopped_by_reporter);
    assert!(c.0.len() >= 4 && c.0.len() < 20);
}

#[test]
fn an_interruption_ends_running_games_as_interrupted() {
    let config = config(2, 200);
    let launcher = FakeLauncher {
        slow: true,
        ..Default::default()
    };
    let (c, s) = run(launcher, &config, None, true);
    assert!(s.stopped_by_interrupt);
    assert!(s.interrupted >= 1, "{s:?}");
    assert!(c.0.len() < 200);
}
