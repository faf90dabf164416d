//! Analysing many games on every core: each thread has its own solver (sharing the endgame
//! tables) and takes the next game; the rows of each finished game are appended to
//! `analysis.csv` at once, so an interruption loses at most the games being analysed.

use super::file::AnalysisFile;
use super::game::{PlyAnalysis, analyse_game};
use crate::record::GameRecord;
use crate::rules::Rules;
use crate::solver::{EndgameTable, Solver};
use std::collections::HashMap;
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

/// The endgame table for each rule variant of the games (`None`: solve without one).
pub type Tables = HashMap<Rules, Option<Arc<EndgameTable>>>;

/// How to analyse.
#[derive(Clone, Copy, Debug)]
pub struct AnalysisSettings {
    /// Threads, each analysing its own game.
    pub threads: usize,
    /// Time for each position; `None` for no limit.
    pub budget: Option<Duration>,
    /// Memory of each thread's transposition table, in MiB.
    pub hash_mb: usize,
}

/// What an analysis has done so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub games: u64,
    /// Positions looked at (one before each sowing, and the final one).
    pub positions: u64,
    /// Sowings whose loss is unknown: a position around them was not solved in time.
    pub unsolved: u64,
}

impl Counts {
    fn add(&mut self, rows: &[PlyAnalysis]) {
        self.games += 1;
        self.positions += rows.len() as u64 + 1;
        self.unsolved += rows.iter().filter(|r| r.loss().is_none()).count() as u64;
    }
}

/// Analyses `games` on `settings.threads` threads, appending each game's rows to `file` as
/// soon as it is done and telling `progress` the counts after each game. Stops starting
/// games once `stop` is set. Games whose record the rules refuse are reported in the
/// returned list and skipped.
pub fn analyse_games(
    games: &[GameRecord],
    tables: &Tables,
    settings: AnalysisSettings,
    file: &mut AnalysisFile,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(&Counts),
) -> io::Result<(Counts, Vec<String>)> {
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel::<Result<Vec<PlyAnalysis>, String>>();
    let mut counts = Counts::default();
    let mut errors = Vec::new();
    std::thread::scope(|scope| -> io::Result<()> {
        for _ in 0..settings.threads.max(1) {
            let tx = tx.clone();
            let next = &next;
            scope.spawn(move || {
                let mut solver = Solver::new(settings.hash_mb.max(1));
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= games.len() || stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let g = &games[i];
                    solver.set_endgame(tables.get(&g.rules).cloned().flatten());
                    if tx
                        .send(analyse_game(&mut solver, g, settings.budget))
                        .is_err()
                    {
                        break;
                    }
                }
            });
        }
        drop(tx);
        for done in rx {
            match done {
                Ok(rows) => {
                    if let Err(e) = file.append(&rows) {
                        // The workers stop at their next game.
                        stop.store(true, Ordering::Relaxed);
                        return Err(e);
                    }
                    counts.add(&rows);
                    progress(&counts);
                }
                Err(e) => errors.push(e),
            }
        }
        Ok(())
    })?;
    Ok((counts, errors))
}
