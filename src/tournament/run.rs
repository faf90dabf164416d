//! Running a schedule: up to `concurrency` games at once on tokio, engine instances taken
//! from per-engine pools (each instance plays one game at a time; a healthy one is reused,
//! a faulted one is stopped and replaced by a fresh one when next needed), every finished
//! game handed to the [`Recorder`] on its own thread, and interruption (first: start
//! nothing new and stop running games, which are not recorded; second: stop at once).
//!
//! The game loop never waits for the results to be written or shown: a slot freed by a
//! finished game starts the next one at once.

use super::config::{Restart, TournamentConfig};
use super::events::{Hold, RunSummary, StopRule, View};
use super::recorder::{LoopControl, LoopEnd, Recorder, ToRecorder};
use super::schedule::ScheduledGame;
use crate::record::Fault;
use crate::referee::{self, Contestant, GameObserver, GameSetup, Played};
use crate::rules::Side;
use crate::stats::{Added, Tally};
use std::future::Future;
use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc as std_mpsc};
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

/// The engine pools and what every game needs from the configuration.
struct Shared<L: Launcher> {
    launcher: L,
    config: TournamentConfig,
    pools: Vec<Mutex<Vec<L::Engine>>>,
    stopping: Mutex<Vec<JoinHandle<()>>>,
    /// Idle instances replaced because they failed between two games.
    between_games: std::sync::atomic::AtomicU64,
    /// The views' observer of games as they are played.
    observer: Option<GameObserver>,
}

impl<L: Launcher> Shared<L> {
    /// An instance of engine `index` for the next game: an idle one that is still fit, or
    /// a new one. An idle instance that fails between games is replaced, and counted; only
    /// the failure of its replacement to start is the game's fault, with that said.
    async fn acquire(self: &Arc<Self>, index: usize) -> Result<L::Engine, Fault> {
        let idle = self.pools[index].lock().expect("pool lock").pop();
        let Some(mut engine) = idle else {
            return self.launcher.start(index).await;
        };
        let Err(why) = engine.between_games().await else {
            return Ok(engine);
        };
        self.between_games
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.stop_in_background(engine);
        self.launcher.start(index).await.map_err(|mut f| {
            f.detail = format!(
                "{} (started again after the last instance failed between games: {why})",
                f.detail
            );
            f
        })
    }

    /// Stops an instance in the background; finished stops are forgotten, so that a long
    /// run with many restarts keeps only the stops in progress.
    fn stop_in_background(self: &Arc<Self>, engine: L::Engine) {
        let me = self.clone();
        let h = tokio::spawn(async move { me.launcher.stop(engine).await });
        let mut stopping = self.stopping.lock().expect("stop lock");
        stopping.retain(|h| !h.is_finished());
        stopping.push(h);
    }

    /// Returns an instance to its pool, or stops it (in the background) after a fault, an
    /// interruption, or with `--restart always`.
    fn release(self: &Arc<Self>, index: usize, engine: L::Engine, healthy: bool) {
        if healthy && self.config.restart == Restart::OnFault {
            self.pools[index].lock().expect("pool lock").push(engine);
        } else {
            self.stop_in_background(engine);
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

    /// Drops every idle instance (an engine is killed when its handle is dropped).
    fn kill_all(&self) {
        for pool in &self.pools {
            pool.lock().expect("pool lock").clear();
        }
        for h in self.stopping.lock().expect("stop lock").drain(..) {
            h.abort();
        }
    }
}

/// Everything a run needs besides the engines.
pub(crate) struct RunInput<G> {
    /// The games to play, in order.
    pub games: G,
    /// Games at once.
    pub concurrency: usize,
    /// Interruptions (see [`ctrl_c_interrupts`]).
    pub interrupts: mpsc::UnboundedReceiver<()>,
    /// A rule that ends the run, with the scoreboard it starts from (the games already
    /// recorded).
    pub stop: Option<(Box<dyn StopRule>, Tally)>,
    /// The games recorded so far, to mark those to come that repeat one.
    pub repeats: super::repeats::Repeats,
}

/// Runs `input.games` with `launcher`'s engines on `runtime` (driven by a thread of its
/// own), recording every finished game with `recorder` on the calling thread and showing
/// it to `views`. `ready` holds already started instances per engine (from the start-up
/// checks, on the same runtime). Returns the summary and the scoreboard of the whole
/// tournament.
pub(crate) fn run_games<L: Launcher, G>(
    runtime: &tokio::runtime::Runtime,
    launcher: L,
    config: &TournamentConfig,
    ready: Vec<Vec<L::Engine>>,
    input: RunInput<G>,
    recorder: Recorder,
    views: &mut [&mut dyn View],
) -> io::Result<(RunSummary, Tally)>
where
    G: Iterator<Item = ScheduledGame> + Send + 'static,
{
    let mut pools: Vec<Mutex<Vec<L::Engine>>> = ready.into_iter().map(Mutex::new).collect();
    pools.resize_with(config.engines.len(), || Mutex::new(Vec::new()));
    let shared = Arc::new(Shared {
        launcher,
        config: config.clone(),
        pools,
        stopping: Mutex::new(Vec::new()),
        between_games: std::sync::atomic::AtomicU64::new(0),
        observer: GameObserver::all(views.iter_mut().filter_map(|v| v.observer()).collect()),
    });
    let (to_recorder, from_loop) = std_mpsc::channel();
    let (control_tx, control_rx) = mpsc::unbounded_channel();
    let unrecorded = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        let to_recorder = ToRecorderSender {
            channel: to_recorder,
            unrecorded: &unrecorded,
        };
        let game_loop = scope.spawn(|| {
            runtime.block_on(game_loop(shared, input, to_recorder, control_rx));
        });
        // A recorder that fails drops its end of the control channel, which stops the loop.
        let recorded = recorder.run(from_loop, &unrecorded, control_tx, views);
        if game_loop.join().is_err() {
            return Err(io::Error::other("the game loop failed"));
        }
        recorded
    })
}

/// The most finished games the recorder may have still to write: while it has as many, no
/// new game starts, so that a recorder slower than the games (a slow disk, a slow view)
/// holds back the run instead of its memory growing without end.
const MAX_UNRECORDED: usize = super::recorder::BATCH;

/// How long the game loop waits before it looks again whether the recorder caught up.
const UNRECORDED_WAIT: Duration = Duration::from_millis(2);

/// The game loop's end of the channel to the recorder, counting the games it has still
/// to write.
struct ToRecorderSender<'a> {
    channel: std_mpsc::Sender<ToRecorder>,
    unrecorded: &'a AtomicUsize,
}

impl ToRecorderSender<'_> {
    fn send(&self, msg: ToRecorder) {
        if matches!(msg, ToRecorder::Finished(_)) {
            self.unrecorded.fetch_add(1, Ordering::Relaxed);
        }
        // A recorder that is gone has failed: the control channel says so.
        let _ = self.channel.send(msg);
    }

    fn behind(&self) -> bool {
        self.unrecorded.load(Ordering::Relaxed) >= MAX_UNRECORDED
    }
}

/// Plays the games, hands every end to the recorder, and ends by sending
/// [`ToRecorder::End`].
async fn game_loop<L: Launcher, G: Iterator<Item = ScheduledGame>>(
    shared: Arc<Shared<L>>,
    mut input: RunInput<G>,
    recorder: ToRecorderSender<'_>,
    mut control: mpsc::UnboundedReceiver<LoopControl>,
) {
    let started = Instant::now();
    let (cancel_tx, cancel_rx) = watch::channel(false);
    let mut set: JoinSet<Option<Played>> = JoinSet::new();
    let mut ids = std::collections::HashMap::new();
    let mut end = LoopEnd::default();
    let mut stop_starting = false;
    let mut stopped_by_rule = false;
    let mut control_open = true;
    let concurrency = input.concurrency.max(1);
    let send = |msg| recorder.send(msg);
    // A game the stop rule holds back, and for how long.
    let mut held: Option<ScheduledGame> = None;
    loop {
        let mut hold = None;
        while !stop_starting && set.len() < concurrency {
            if recorder.behind() {
                hold = Some(UNRECORDED_WAIT);
                break;
            }
            let Some(g) = held.take().or_else(|| input.games.next()) else {
                break;
            };
            if let Some((rule, _)) = &mut input.stop {
                match rule.hold(&g) {
                    Hold::Start => {}
                    Hold::Wait(wait) => {
                        (held, hold) = (Some(g), Some(wait));
                        break;
                    }
                    Hold::Stop => {
                        stopped_by_rule = true;
                        stop_starting = true;
                        let _ = cancel_tx.send(true);
                        break;
                    }
                }
            }
            let id = shared.config.game_id(g.number);
            let task = set.spawn(play_scheduled(shared.clone(), g, cancel_rx.clone()));
            ids.insert(task.id(), id);
        }
        if set.is_empty() && hold.is_none() {
            break;
        }
        tokio::select! {
            () = tokio::time::sleep(hold.unwrap_or_default()), if hold.is_some() => {}
            joined = set.join_next_with_id(), if !set.is_empty() => {
                match joined.expect("the set is not empty") {
                    Ok((task, Some(played))) if stopped_by_rule => {
                        // After the rule's decision: not recorded.
                        ids.remove(&task);
                        send(ToRecorder::Interrupted(played.record.game));
                    }
                    Ok((task, Some(mut played))) => {
                        ids.remove(&task);
                        input.repeats.mark(&mut played.record);
                        if let Some((rule, tally)) = &mut input.stop
                            && let Added::Counted { completed_pair: true } =
                                tally.add(&played.record.row())
                            && rule.should_stop(tally)
                        {
                            stopped_by_rule = true;
                            stop_starting = true;
                            let _ = cancel_tx.send(true);
                        }
                        send(ToRecorder::Finished(Box::new(played.record)));
                    }
                    Ok((task, None)) => {
                        let id = ids.remove(&task).unwrap_or_default();
                        send(ToRecorder::Interrupted(id));
                    }
                    Err(e) => {
                        // A game task panicked: a bug; the game is not recorded.
                        let id = ids.remove(&e.id()).unwrap_or_default();
                        tracing::error!("game {id} failed: {e}");
                        send(ToRecorder::Interrupted(id));
                    }
                }
            }
            Some(()) = input.interrupts.recv() => {
                if end.stopped_by_interrupt {
                    end.aborted = true;
                    set.shutdown().await;
                    shared.kill_all();
                    end.elapsed = started.elapsed();
                    send(ToRecorder::End(end));
                    return;
                }
                end.stopped_by_interrupt = true;
                stop_starting = true;
                let _ = cancel_tx.send(true);
            }
            message = control.recv(), if control_open => {
                // A view has decided, the results cannot be written, or the recorder is
                // gone: running games cannot change anything any more.
                control_open = message.is_some();
                stop_starting = true;
                let _ = cancel_tx.send(true);
            }
        }
    }
    end.stopped_by_rule = stopped_by_rule;
    end.restarted_between_games = shared
        .between_games
        .load(std::sync::atomic::Ordering::Relaxed);
    // Stop the engines; a second interruption cuts this short too.
    tokio::select! {
        () = shared.stop_all() => {}
        Some(()) = input.interrupts.recv() => {
            end.aborted = true;
            shared.kill_all();
        }
    }
    end.elapsed = started.elapsed();
    send(ToRecorder::End(end));
}

/// Forwards every Ctrl-C (SIGINT) and SIGTERM to a channel for [`run_games`]. SIGTERM is
/// how cluster schedulers (Slurm, Kubernetes) stop a job: it ends the run as cleanly as a
/// Ctrl-C, so the shard resumes later. Must be called inside the runtime.
pub(crate) fn ctrl_c_interrupts() -> mpsc::UnboundedReceiver<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let (tx, rx) = mpsc::unbounded_channel();
    // Both handlers are in place before the process notes the signals: from then on a
    // Ctrl-C no longer ends the process, and it stops the run.
    for kind in [SignalKind::interrupt(), SignalKind::terminate()] {
        let tx = tx.clone();
        match signal(kind) {
            Ok(mut signals) => {
                tokio::spawn(async move {
                    while signals.recv().await.is_some() {
                        if tx.send(()).is_err() {
                            break;
                        }
                    }
                });
            }
            Err(e) => tracing::debug!("failed to handle signal {kind:?}: {e}"),
        }
    }
    crate::sys::note_interrupts();
    rx
}

/// Plays one scheduled game, from taking its engines to giving them back; `None` when it
/// was stopped before its end.
async fn play_scheduled<L: Launcher>(
    shared: Arc<Shared<L>>,
    g: ScheduledGame,
    mut cancel: watch::Receiver<bool>,
) -> Option<Played> {
    let setup = shared.config.setup(&g);
    if *cancel.borrow() {
        return None;
    }
    let south = shared.acquire(g.south).await;
    let north = match &south {
        Ok(_) => Some(shared.acquire(g.north).await),
        Err(_) => None,
    };
    let (mut south, mut north) = match (south, north) {
        (Ok(s), Some(Ok(n))) => (s, n),
        (Err(f), _) => return Some(referee::forfeit(&setup, Side::South, f)),
        (Ok(s), Some(Err(f))) => {
            shared.release(g.south, s, true);
            return Some(referee::forfeit(&setup, Side::North, f));
        }
        (Ok(_), None) => unreachable!("north is acquired after south"),
    };
    let played = tokio::select! {
        biased;
        _ = cancel.wait_for(|c| *c) => None,
        p = referee::play_game_observed(&setup, &mut south, &mut north, shared.observer.as_ref()) => Some(p),
    };
    let healthy = played
        .as_ref()
        .map_or([false; 2], |p| p.faulted.map(|f| !f));
    shared.release(g.south, south, healthy[0]);
    shared.release(g.north, north, healthy[1]);
    played
}

impl TournamentConfig {
    /// What the referee needs to play scheduled game `g`.
    pub(crate) fn setup(&self, g: &ScheduledGame) -> GameSetup {
        GameSetup {
            id: self.game_id(g.number),
            number: g.number,
            round: g.round,
            pair: g.pair,
            names: [
                self.engines[g.south].identity.name.clone(),
                self.engines[g.north].identity.name.clone(),
            ],
            rules: self.rules(),
            opening: g.opening.clone(),
            time: [self.tc_of(g.south), self.tc_of(g.north)],
            margin: self.margin,
            adjudication: self.adjudication,
        }
    }
}

#[cfg(test)]
mod tests;
