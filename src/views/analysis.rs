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
use std::sync::atomic::AtomicBool;
use std::sync::mpsc;
use std::thread::JoinHandle;

/// Analyses the games of a run in its folder.
pub struct AnalysisView {
    dir: PathBuf,
    tables: Tables,
    settings: AnalysisSettings,
    queue: Option<mpsc::Sender<GameRecord>>,
    worker: Option<JoinHandle<io::Result<()>>>,
}

impl AnalysisView {
    /// `tables` must hold the endgame table (or `None`) for the run's rules.
    pub fn new(
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
        }
    }
}

impl View for AnalysisView {
    fn start(&mut self, _info: &StartInfo, _tally: &Tally) -> io::Result<()> {
        let (games, _) = analysable_games(&self.dir)?;
        let plies: HashMap<String, usize> =
            games.iter().map(|g| (g.game.clone(), g.plies())).collect();
        let (mut file, _) = AnalysisFile::open(&self.dir, &plies)?;
        let (tx, rx) = mpsc::channel::<GameRecord>();
        let tables = self.tables.clone();
        let settings = self.settings;
        self.worker = Some(std::thread::spawn(move || {
            let mut analyser = Analyser::new(settings.hash_mb, settings.threads, settings.budget);
            analyser.set_order(settings.order);
            for g in rx {
                analyser.set_endgame(tables.get(&g.rules).cloned().flatten());
                if let Ok(rows) = analyser.analyse(&g) {
                    file.append(&rows)?;
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
            // A worker that stopped on an error says so at the end.
            let _ = q.send((*record).clone());
        }
        Ok(Control::Continue)
    }

    fn finish(&mut self, summary: &RunSummary, _tally: &Tally) -> io::Result<()> {
        self.queue = None;
        if let Some(w) = self.worker.take() {
            w.join()
                .map_err(|_| io::Error::other("the analysis thread panicked"))??;
        }
        if summary.stopped_by_interrupt || summary.aborted {
            // The games analysed so far are kept; a resumed run goes on.
            return Ok(());
        }
        let (games, _) = analysable_games(&self.dir)?;
        let stop = AtomicBool::new(false);
        analysis::analyse_folder(
            &self.dir,
            &games,
            &self.tables,
            self.settings,
            &stop,
            &mut |_, _| {},
        )?;
        Ok(())
    }
}
