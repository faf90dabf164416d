//! Running a schedule: up to `concurrency` games at once on tokio, engine instances taken
//! from per-engine pools (each instance plays one game at a time; a healthy one is reused,
//! a faulted one is stopped and replaced by a fresh one when next needed), typed events out
//! to reporters, and interruption (first: finish nothing new and end running games as
//! interrupted; second: stop at once).

use crate::referee::{self, Contestant, Fault, GamePlay, GameResult, GameSetup, Termination};
use crate::rules::{Position, Side};
use crate::tournament::config::{Restart, TournamentConfig};
use crate::tournament::results::GameRecord;
use crate::tournament::schedule::ScheduledGame;
use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, watch};
use tokio::task::{JoinHandle, JoinSet};

/// Starts and stops instances of the tournament's engines.
pub trait Launcher: Send + Sync + 'static {
    type Engine: Contestant + 'static;

    /// Starts a fresh, ready instance of engine `index` (handshake and options done).
    fn start(&self, index: usize) -> impl Future<Output = Result<Self::Engine, Fault>> + Send;

    /// Stops an instance for good, leaving no process behind.
    fn stop(&self, engine: Self::Engine) -> impl Future<Output = ()> + Send;
}

/// What the runner reports as it goes.
#[derive(Debug)]
pub enum Event<'a> {
    /// A game ended with a result (not interrupted).
    GameFinished(&'a GameRecord),
    /// Both games of a game pair ended in this run (after their `GameFinished`).
    PairFinished([&'a GameRecord; 2]),
    /// A game was stopped by an interruption; it is not recorded and will be played again
    /// on resume.
    GameInterrupted(&'a GameRecord),
}

/// A reporter's answer to an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    Continue,
    /// Start no more games; let the running ones finish (and be reported).
    Stop,
}

/// What the run is about, for reporters.
#[derive(Clone, Debug)]
pub struct StartInfo {
    pub id: String,
    pub names: Vec<String>,
    /// Games in this shard.
    pub total: u64,
    /// Games of this shard already done (on resume).
    pub done: u64,
    /// The standings of the games already done.
    pub earlier: crate::tournament::display::Standings,
}

/// A consumer of events: results files, the live display, leaderboards.
pub trait Reporter: Send {
    fn start(&mut self, _info: &StartInfo) -> io::Result<()> {
        Ok(())
    }
    fn event(&mut self, event: &Event<'_>) -> io::Result<Control>;
    fn finish(&mut self, _summary: &RunSummary) -> io::Result<()> {
        Ok(())
    }
}

/// How a run ended.
#[derive(Clone, Debug, Default)]
pub struct RunSummary {
    /// Games finished in this run.
    pub played: u64,
    /// Games interrupted (to be played again on resume).
    pub interrupted: u64,
    /// Moves played by engines in the finished games.
    pub moves: u64,
    /// An interruption stopped the run.
    pub stopped_by_interrupt: bool,
    /// A second interruption stopped it at once.
    pub aborted: bool,
    /// A reporter asked to stop.
    pub stopped_by_reporter: bool,
    pub elapsed: Duration,
}

impl RunSummary {
    /// Whether the whole (shard of the) schedule was played.
    pub fn complete(&self) -> bool {
        !self.stopped_by_interrupt && !self.aborted && !self.stopped_by_reporter
    }
}

/// The settings of a game that come from the configuration.
struct Shared<L: Launcher> {
    launcher: L,
    config: TournamentConfig,
    pools: Vec<Mutex<Vec<L::Engine>>>,
    stopping: Mutex<Vec<JoinHandle<()>>>,
}

impl<L: Launcher> Shared<L> {
    async fn acquire(&self, index: usize) -> Result<L::Engine, Fault> {
        let idle = self.pools[index].lock().expect("pool lock").pop();
        match idle {
            Some(e) => Ok(e),
            None => self.launcher.start(index).await,
        }
    }
}

impl<L: Launcher> Shared<L> {
    /// Returns an instance to its pool, or stops it (in the background) after a fault, an
    /// interruption, or with `--restart always`.
    fn release(self: &Arc<Self>, index: usize, engine: L::Engine, healthy: bool) {
        if healthy && self.config.restart == Restart::OnFault {
            self.pools[index].lock().expect("pool lock").push(engine);
        } else {
            let me = self.clone();
            let h = tokio::spawn(async move { me.launcher.stop(engine).await });
            self.stopping.lock().expect("stop lock").push(h);
        }
    }

    /// Stops every idle instance and waits for every stop in progress.
    async fn stop_all(self: &Arc<Self>) {
        let mut set = JoinSet::new();
        for pool in &self.pools {
            let engines: Vec<_> = pool.lock().expect("pool lock").drain(..).collect();
            for e in engines {
                let me = self.clone();
                set.spawn(async move { me.launcher.stop(e).await });
            }
        }
        while set.join_next().await.is_some() {}
        loop {
            let handles: Vec<_> = self.stopping.lock().expect("stop lock").drain(..).collect();
            if handles.is_empty() {
                break;
            }
            for h in handles {
                let _ = h.await;
            }
        }
    }

    /// Drops every idle instance (the supervisor kills their process groups on drop).
    fn kill_all(&self) {
        for pool in &self.pools {
            pool.lock().expect("pool lock").clear();
        }
        for h in self.stopping.lock().expect("stop lock").drain(..) {
            h.abort();
        }
    }
}

/// Runs `games` with `launcher`'s engines. `ready` holds already started instances per
/// engine (from the start-up checks). Interruptions arrive on `interrupts` (see
/// [`ctrl_c_interrupts`]).
pub async fn run_games<L: Launcher>(
    launcher: L,
    config: &TournamentConfig,
    ready: Vec<Vec<L::Engine>>,
    games: impl Iterator<Item = ScheduledGame>,
    concurrency: usize,
    reporters: &mut [&mut dyn Reporter],
    mut interrupts: mpsc::UnboundedReceiver<()>,
) -> io::Result<RunSummary> {
    let started = Instant::now();
    let mut pools: Vec<Mutex<Vec<L::Engine>>> = ready.into_iter().map(Mutex::new).collect();
    pools.resize_with(config.engines.len(), || Mutex::new(Vec::new()));
    let shared = Arc::new(Shared {
        launcher,
        config: config.clone(),
        pools,
        stopping: Mutex::new(Vec::new()),
    });
    let (cancel_tx, cancel_rx) = watch::channel(false);
    let mut set: JoinSet<GameRecord> = JoinSet::new();
    let mut games = games;
    let mut summary = RunSummary::default();
    let mut stop_starting = false;
    let mut first_pair_game: HashMap<u64, GameRecord> = HashMap::new();
    let mut failure: Option<io::Error> = None;
    let concurrency = concurrency.max(1);

    loop {
        while !stop_starting && set.len() < concurrency {
            match games.next() {
                Some(g) => {
                    set.spawn(play_scheduled(shared.clone(), g, cancel_rx.clone()));
                }
                None => break,
            }
        }
        if set.is_empty() {
            break;
        }
        tokio::select! {
            joined = set.join_next() => {
                let record = match joined.expect("the set is not empty") {
                    Ok(r) => r,
                    Err(e) => return Err(io::Error::other(format!("a game task failed: {e}"))),
                };
                let mut control = Control::Continue;
                let mut report = |ev: &Event<'_>| -> io::Result<()> {
                    for r in reporters.iter_mut() {
                        if r.event(ev)? == Control::Stop {
                            control = Control::Stop;
                        }
                    }
                    Ok(())
                };
                let res = if record.play.termination == Termination::Interrupted {
                    summary.interrupted += 1;
                    report(&Event::GameInterrupted(&record))
                } else {
                    summary.played += 1;
                    summary.moves += record.play.moves.len() as u64;
                    report(&Event::GameFinished(&record)).and_then(|()| {
                        match first_pair_game.remove(&record.pair) {
                            Some(first) => {
                                let pair = if first.number < record.number {
                                    [&first, &record]
                                } else {
                                    [&record, &first]
                                };
                                report(&Event::PairFinished(pair))
                            }
                            None => {
                                first_pair_game.insert(record.pair, record);
                                Ok(())
                            }
                        }
                    })
                };
                if let Err(e) = res {
                    // Results cannot be written: stop now, as for an interruption.
                    failure.get_or_insert(e);
                    stop_starting = true;
                    let _ = cancel_tx.send(true);
                }
                if control == Control::Stop && !stop_starting {
                    stop_starting = true;
                    summary.stopped_by_reporter = true;
                }
            }
            Some(()) = interrupts.recv() => {
                if summary.stopped_by_interrupt {
                    summary.aborted = true;
                    set.shutdown().await;
                    shared.kill_all();
                    summary.elapsed = started.elapsed();
                    return Ok(summary);
                }
                summary.stopped_by_interrupt = true;
                stop_starting = true;
                let _ = cancel_tx.send(true);
            }
        }
    }
    // Stop the engines; a second interruption cuts this short too.
    tokio::select! {
        () = shared.stop_all() => {}
        Some(()) = interrupts.recv() => {
            summary.aborted = true;
            shared.kill_all();
        }
    }
    summary.elapsed = started.elapsed();
    match failure {
        Some(e) => Err(e),
        None => Ok(summary),
    }
}

/// Forwards every Ctrl-C (SIGINT) and SIGTERM to a channel for [`run_games`]. SIGTERM is
/// how cluster schedulers (Slurm, Kubernetes) stop a job: it ends the run as cleanly as a
/// Ctrl-C, so the shard resumes later.
pub fn ctrl_c_interrupts() -> mpsc::UnboundedReceiver<()> {
    let (tx, rx) = mpsc::unbounded_channel();
    let term_tx = tx.clone();
    tokio::spawn(async move {
        while tokio::signal::ctrl_c().await.is_ok() {
            if tx.send(()).is_err() {
                break;
            }
        }
    });
    tokio::spawn(async move {
        use tokio::signal::unix::{SignalKind, signal};
        let Ok(mut term) = signal(SignalKind::terminate()) else {
            return;
        };
        while term.recv().await.is_some() {
            if term_tx.send(()).is_err() {
                break;
            }
        }
    });
    rx
}

/// Plays one scheduled game, from taking its engines to giving them back.
async fn play_scheduled<L: Launcher>(
    shared: Arc<Shared<L>>,
    g: ScheduledGame,
    mut cancel: watch::Receiver<bool>,
) -> GameRecord {
    let config = &shared.config;
    let setup = GameSetup {
        id: config.game_id(g.number),
        rules: config.rules(),
        opening: g.opening.clone(),
        time: [config.tc_of(g.south), config.tc_of(g.north)],
        margin: config.margin,
        adjudicate: config.adjudicate,
    };
    let record = |play: GamePlay| GameRecord {
        id: setup.id.clone(),
        number: g.number,
        round: g.round,
        pair: g.pair,
        south: config.engines[g.south].resolved.name.clone(),
        north: config.engines[g.north].resolved.name.clone(),
        play,
    };
    let started = Instant::now();
    if *cancel.borrow() {
        return record(referee::interrupted(&setup, started.elapsed()));
    }
    let south = shared.acquire(g.south).await;
    let north = match &south {
        Ok(_) => Some(shared.acquire(g.north).await),
        Err(_) => None,
    };
    let (mut south, mut north) = match (south, north) {
        (Ok(s), Some(Ok(n))) => (s, n),
        (Err(f), _) => return record(forfeit(&setup, Side::South, f, started)),
        (Ok(s), Some(Err(f))) => {
            shared.release(g.south, s, true);
            return record(forfeit(&setup, Side::North, f, started));
        }
        (Ok(_), None) => unreachable!("north is acquired after south"),
    };
    let play = tokio::select! {
        biased;
        _ = cancel.wait_for(|c| *c) => None,
        p = referee::play_game(&setup, &mut south, &mut north) => Some(p),
    };
    match play {
        Some(play) => {
            shared.release(g.south, south, !play.faulted[0]);
            shared.release(g.north, north, !play.faulted[1]);
            record(play)
        }
        None => {
            shared.release(g.south, south, false);
            shared.release(g.north, north, false);
            record(referee::interrupted(&setup, started.elapsed()))
        }
    }
}

/// The record of a game lost before its first move because `side`'s engine could not be
/// started or readied.
fn forfeit(setup: &GameSetup, side: Side, fault: Fault, started: Instant) -> GamePlay {
    let mut pos = Position::start(setup.rules);
    for &pit in &setup.opening {
        pos = pos.play(pit as i64).expect("openings are checked");
    }
    let mut faulted = [false; 2];
    faulted[side.index()] = true;
    GamePlay {
        rules: setup.rules,
        opening: setup.opening.clone(),
        moves: Vec::new(),
        final_position: pos,
        result: GameResult::win_for(side.opponent()),
        south_score: pos.store(Side::South),
        north_score: pos.store(Side::North),
        termination: fault.termination,
        loser: Some(side),
        detail: format!("failed to start: {}", fault.detail),
        line: fault.line,
        duration: started.elapsed(),
        faulted,
    }
}

#[cfg(test)]
mod tests;
