//! `--analyze`: every game is analysed exactly as it finishes, on a thread of its own, and
//! appended to `analysis.csv`; at the end the analysis is completed (games of an earlier run
//! included) and put in order, before the leaderboards are written.

use crate::analysis::{
    self, Analyser, AnalysisFile, AnalysisSettings, Tables, analysable, analysable_games,
};
use crate::record::GameRecord;
use crate::stats::Tally;
use crate::tournament::events::{Control, Event, RunSummary, StartInfo, View};
use std::collections::HashMap;
use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

/// Analyses the games of a run in its folder.
pub(crate) struct AnalysisView {
    dir: PathBuf,
    tables: Tables,
    settings: AnalysisSettings,
    queue: Option<mpsc::Sender<GameRecord>>,
    worker: Option<JoinHandle<io::Result<()>>>,
    lag: Arc<Lag>,
}

/// How far behind the games the analysis is.
#[derive(Debug, Default)]
struct Lag {
    /// Games finished and not yet analysed.
    waiting: AtomicUsize,
    /// The most games that were waiting at once.
    most: AtomicUsize,
    /// Games analysed as the run went, and those of them with a smaller budget.
    analysed: AtomicUsize,
    hurried: AtomicUsize,
    /// Games left for the end of the run because [`MOST_WAITING`] were waiting.
    deferred: AtomicUsize,
    /// The run was interrupted: analyse no more games.
    stop: AtomicBool,
}

/// The most finished games that wait for the analysis during a run: a game finishing when
/// as many wait is analysed at the end of the run instead (when the games no longer need
/// the cores), so that what waits in memory stays bounded whatever the pace of the games.
const MOST_WAITING: usize = 8;

/// The budget of each position of a game analysed while `waiting` other games wait: the
/// whole budget when the analysis keeps up, halved for each game waiting beyond the first
/// (at least [`analysis::MIN_BUDGET`]), so that a run whose games finish faster than they are analysed does
/// not pile them up: positions the solver cannot finish in the shorter time get estimated
/// values (marked as such) instead of the run's analysis falling further behind.
fn hurried_budget(budget: Option<Duration>, waiting: usize) -> Option<Duration> {
    let base = budget.unwrap_or(Duration::from_secs(10));
    if waiting <= 1 {
        return budget;
    }
    let shift = (waiting - 1).min(16) as u32;
    Some((base / (1 << shift)).max(analysis::MIN_BUDGET).min(base))
}

impl AnalysisView {
    /// `tables` must hold the endgame table (or `None`) for the run's rules.
    pub(crate) fn new(
        dir: impl Into<PathBuf>,
        tables: Tables,
        settings: AnalysisSettings,
    ) -> AnalysisView {
        AnalysisView {
            dir: dir.into(),
            tables,
            settings,
            queue: None,
            worker: None,
            lag: Arc::new(Lag::default()),
        }
    }
}

impl View for AnalysisView {
    fn start(&mut self, _info: &StartInfo, _tally: &Tally) -> io::Result<()> {
        let (games, _) = analysable_games(&self.dir)?;
        let plies: HashMap<String, usize> =
            games.iter().map(|g| (g.game.clone(), g.plies())).collect();
        let (mut file, _, _) = AnalysisFile::open(&self.dir, &plies)?;
        let (tx, rx) = mpsc::channel::<GameRecord>();
        let tables = self.tables.clone();
        let settings = self.settings;
        let lag = self.lag.clone();
        self.worker = Some(std::thread::spawn(move || {
            let mut analyser = Analyser::new(settings.hash_mb, settings.threads, settings.budget);
            analyser.set_order(settings.order);
            // Looked at before each position's search, so that games finishing while a
            // long one is analysed hurry it too.
            let hurried = Arc::new(AtomicBool::new(false));
            let (rule_lag, rule_hurried) = (lag.clone(), hurried.clone());
            analyser.set_budget_rule(Box::new(move |budget| {
                let b = hurried_budget(budget, rule_lag.waiting.load(Ordering::Relaxed));
                if b != budget {
                    rule_hurried.store(true, Ordering::Relaxed);
                }
                b
            }));
            for g in rx {
                if lag.stop.load(Ordering::Relaxed) {
                    // Interrupted: the games left are analysed by the resumed run.
                    break;
                }
                hurried.store(false, Ordering::Relaxed);
                analyser.set_endgame(tables.get(&g.rules).cloned().flatten());
                let done = analyser.analyse(&g);
                lag.waiting.fetch_sub(1, Ordering::Relaxed);
                if let Ok(rows) = done {
                    file.append(&rows)?;
                    lag.analysed.fetch_add(1, Ordering::Relaxed);
                    if hurried.load(Ordering::Relaxed) {
                        lag.hurried.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
            Ok(())
        }));
        self.queue = Some(tx);
        Ok(())
    }

    fn event(&mut self, event: &Event<'_>, _tally: &Tally) -> io::Result<Control> {
        if let (Event::GameFinished { record, .. }, Some(q)) = (event, &self.queue)
            && analysable(record)
        {
            if self.lag.waiting.load(Ordering::Relaxed) >= MOST_WAITING {
                self.lag.deferred.fetch_add(1, Ordering::Relaxed);
                return Ok(Control::Continue);
            }
            let waiting = self.lag.waiting.fetch_add(1, Ordering::Relaxed) + 1;
            self.lag.most.fetch_max(waiting, Ordering::Relaxed);
            // A worker that stopped on an error says so at the end.
            let _ = q.send((*record).clone());
        }
        Ok(Control::Continue)
    }

    fn finish(&mut self, summary: &RunSummary, _tally: &Tally) -> io::Result<()> {
        let interrupted = summary.stopped_by_interrupt || summary.aborted;
        if interrupted {
            self.lag.stop.store(true, Ordering::Relaxed);
        }
        self.queue = None;
        if let Some(w) = self.worker.take() {
            w.join()
                .map_err(|_| io::Error::other("the analysis thread panicked"))??;
        }
        let lag = &self.lag;
        let analysed = lag.analysed.load(Ordering::Relaxed);
        let deferred = lag.deferred.load(Ordering::Relaxed);
        if analysed + deferred > 0 {
            // After the live display's last line.
            eprintln!(
                "analysis: {} analysed as they finished, at most {} waiting at once{}{}",
                crate::record::counted(analysed as u64, "game"),
                lag.most.load(Ordering::Relaxed),
                match lag.hurried.load(Ordering::Relaxed) {
                    0 => String::new(),
                    n => format!(
                        ", {} with a shorter budget to keep up (their unsolved positions \
                         estimated)",
                        crate::record::counted(n as u64, "game")
                    ),
                },
                match deferred {
                    0 => String::new(),
                    n => format!(
                        "; {} {} behind, {}",
                        crate::record::counted(n as u64, "game"),
                        if n == 1 { "was" } else { "were" },
                        if interrupted {
                            "left for the resumed run"
                        } else {
                            "analysed now on every core"
                        }
                    ),
                }
            );
        }
        if interrupted {
            // The games analysed so far are kept; a resumed run goes on.
            return Ok(());
        }
        let (games, _) = analysable_games(&self.dir)?;
        let stop = AtomicBool::new(false);
        // The games are over: the cores are free.
        let settings = AnalysisSettings {
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            ..self.settings
        };
        analysis::analyse_folder(
            &self.dir,
            &games,
            &self.tables,
            settings,
            &stop,
            &mut |_, _| {},
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_shrinks_as_games_wait_and_never_below_10_ms() {
        let ten = Some(Duration::from_secs(10));
        assert_eq!(hurried_budget(ten, 0), ten);
        assert_eq!(hurried_budget(ten, 1), ten);
        assert_eq!(hurried_budget(ten, 2), Some(Duration::from_secs(5)));
        assert_eq!(hurried_budget(ten, 4), Some(Duration::from_millis(1250)));
        assert_eq!(hurried_budget(ten, 50), Some(Duration::from_millis(10)));
        assert_eq!(hurried_budget(None, 1), None);
        assert_eq!(hurried_budget(None, 3), Some(Duration::from_millis(2500)));
    }
}
