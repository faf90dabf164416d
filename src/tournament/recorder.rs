//! The recorder: the one place finished games go. It runs on its own thread, takes games
//! from the game loop over a channel, writes them (a batch of games that finished close
//! together is made durable by one sync), counts them in the scoreboard, and only then
//! shows them to the views. It answers the game loop with [`LoopControl`]s.

use super::events::{Control, Event, RunSummary, StartInfo, View};
use crate::record::GameRecord;
use crate::results::ResultsWriter;
use crate::stats::{Added, Tally};
use std::io;
use std::sync::mpsc;
use std::time::Duration;

/// What the game loop hands to the recorder.
#[derive(Debug)]
pub(crate) enum ToRecorder {
    Finished(Box<GameRecord>),
    Interrupted(String),
    /// The loop has ended (nothing follows).
    End(LoopEnd),
}

/// How the game loop ended.
#[derive(Clone, Debug, Default)]
pub(crate) struct LoopEnd {
    pub stopped_by_interrupt: bool,
    /// The run's stop rule decided.
    pub stopped_by_rule: bool,
    pub aborted: bool,
    pub elapsed: Duration,
    /// Engine instances replaced because they failed between two games.
    pub restarted_between_games: u64,
}

/// What the recorder asks of the game loop.
#[derive(Debug)]
pub(crate) enum LoopControl {
    /// A view asked to stop.
    Stop,
    /// Results cannot be written: stop.
    Failed,
}

/// The most games written in one batch.
pub(super) const BATCH: usize = 256;

/// How long the recorder waits for more games to end before it syncs a batch: games that
/// end within this window share one `fdatasync` (a view sees a game at most this much
/// later; the game loop never waits).
const WINDOW: Duration = Duration::from_millis(5);

/// The results writer (none in tests that keep no files) and the scoreboard, with the
/// games of earlier runs already in it.
pub struct Recorder {
    pub writer: Option<ResultsWriter>,
    pub tally: Tally,
    pub info: StartInfo,
}

impl Recorder {
    /// Runs until the game loop ends; returns the run's summary and the scoreboard.
    pub(crate) fn run(
        mut self,
        games: mpsc::Receiver<ToRecorder>,
        unrecorded: &std::sync::atomic::AtomicUsize,
        control: tokio::sync::mpsc::UnboundedSender<LoopControl>,
        views: &mut [&mut dyn View],
    ) -> io::Result<(RunSummary, Tally)> {
        let mut summary = RunSummary::default();
        let mut view_error = None;
        for v in views.iter_mut() {
            v.start(&self.info, &self.tally)?;
        }
        let mut stop_sent = false;
        let mut batch: Vec<GameRecord> = Vec::new();
        let mut interrupted: Vec<String> = Vec::new();
        let mut end = None;
        while end.is_none() {
            let Ok(first) = games.recv() else { break };
            let closes = std::time::Instant::now() + WINDOW;
            let mut next = Some(first);
            while let Some(msg) = next.take() {
                match msg {
                    ToRecorder::Finished(g) => batch.push(*g),
                    ToRecorder::Interrupted(id) => interrupted.push(id),
                    ToRecorder::End(e) => end = Some(e),
                }
                if batch.len() < BATCH && end.is_none() {
                    let wait = closes.saturating_duration_since(std::time::Instant::now());
                    next = games.recv_timeout(wait).ok();
                }
            }
            if summary.failed.is_none()
                && let Some(w) = &mut self.writer
                && let Err(e) = w.write(&batch)
            {
                let full = crate::results::full_disk(&e);
                summary.failed_resumable = full.is_some();
                let message = match full {
                    Some(full) => format!(
                        "{full}: the run stopped; every game recorded so far is safe in \
                         games.jsonl; free some space, and resuming the run continues it"
                    ),
                    None => format!("failed to write the results: {e}"),
                };
                let _ = control.send(LoopControl::Failed);
                summary.failed = Some(message);
            }
            // Written, or never to be: the game loop may start more games.
            unrecorded.fetch_sub(batch.len(), std::sync::atomic::Ordering::Relaxed);
            if summary.failed.is_some() {
                // Games that could not be written are not shown as finished.
                summary.interrupted += batch.len() as u64;
                batch.clear();
            }
            for g in batch.drain(..) {
                summary.played += 1;
                summary.moves += g.engine_moves().count() as u64;
                summary.plies += g.plies() as u64;
                let pair_completed = match self.tally.add(&g.row()) {
                    Added::Counted { completed_pair } => completed_pair,
                    Added::Duplicate | Added::Ignored | Added::Repeat => false,
                };
                let event = Event::GameFinished {
                    record: &g,
                    pair_completed,
                };
                if show(views, &event, &self.tally, &mut view_error) == Control::Stop && !stop_sent
                {
                    stop_sent = true;
                    summary.stopped_by_view = true;
                    let _ = control.send(LoopControl::Stop);
                }
            }
            for id in interrupted.drain(..) {
                summary.interrupted += 1;
                show(
                    views,
                    &Event::GameInterrupted { id: &id },
                    &self.tally,
                    &mut view_error,
                );
            }
        }
        let end = end.unwrap_or_default();
        summary.stopped_by_interrupt = end.stopped_by_interrupt;
        summary.stopped_by_view |= end.stopped_by_rule;
        summary.aborted = end.aborted;
        summary.elapsed = end.elapsed;
        summary.restarted_between_games = end.restarted_between_games;
        if let Some(w) = &mut self.writer
            && let Err(e) = w.finish()
            && summary.failed.is_none()
        {
            summary.failed = Some(format!("failed to write the results: {e}"));
        }
        // Every view ends, even after one failed: the leaderboards of a run are written
        // though its event stream was cut.
        for v in views.iter_mut() {
            if let Err(e) = v.finish(&summary, &self.tally) {
                view_error.get_or_insert(e);
            }
        }
        match view_error {
            Some(e) => Err(e),
            None => Ok((summary, self.tally)),
        }
    }
}

/// Shows an event to every view. A view that fails stops the run (its error is returned
/// at the end; the games already finished are still recorded).
fn show(
    views: &mut [&mut dyn View],
    event: &Event<'_>,
    tally: &Tally,
    error: &mut Option<io::Error>,
) -> Control {
    let mut control = Control::Continue;
    for v in views.iter_mut() {
        match v.event(event, tally) {
            Ok(Control::Stop) => control = Control::Stop,
            Ok(Control::Continue) => {}
            Err(e) => {
                error.get_or_insert(e);
                control = Control::Stop;
            }
        }
    }
    control
}
