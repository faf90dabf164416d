//! Analysing many games on every core: one solver whose threads search each position
//! together; the rows of each finished game are appended to `analysis.csv` at once, so an
//! interruption loses at most the game being analysed.

use super::file::AnalysisFile;
use super::game::{Analyser, Order, PlyAnalysis};
use crate::record::GameRecord;
use crate::rules::{Position, Rules};
use crate::solver::EndgameTable;
use std::collections::HashMap;
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The endgame table for each rule variant of the games (`None`: solve without one).
pub(crate) type Tables = HashMap<Rules, Option<Arc<EndgameTable>>>;

/// How to analyse.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AnalysisSettings {
    /// Threads searching each position.
    pub threads: usize,
    /// Time for each position; `None` for no limit.
    pub budget: Option<Duration>,
    /// Memory of the transposition table the threads share, in MiB.
    pub hash_mb: usize,
    /// The order in which the positions of a game are solved.
    pub order: Order,
}

/// What an analysis has done so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    pub games: u64,
    /// Positions looked at (one before each sowing, and the final one).
    pub positions: u64,
    /// Sowings whose loss is unknown: a position around them was not solved in time.
    pub unsolved: u64,
    /// Sowings whose values are estimates: a position around them was not solved in time.
    pub estimated: u64,
}

impl Counts {
    fn add(&mut self, rows: &[PlyAnalysis]) {
        self.games += 1;
        self.positions += rows.len() as u64 + 1;
        self.unsolved += rows.iter().filter(|r| r.loss().is_none()).count() as u64;
        self.estimated += rows.iter().filter(|r| r.estimated()).count() as u64;
    }
}

/// Analyses `games` one after the other with one [`Analyser`] searching on
/// `settings.threads` threads (games of the same rules together), appending each game's
/// rows to `file` as soon as it is done and telling `progress` the counts after each game.
/// `known` gives exact values already known (from an earlier run). Stops starting games
/// once `stop` is set. Games whose record the rules refuse are reported in the returned
/// list and skipped.
pub(crate) fn analyse_games(
    games: &[GameRecord],
    tables: &Tables,
    settings: AnalysisSettings,
    known: &[(Position, i32)],
    file: &mut AnalysisFile,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(&Counts),
) -> io::Result<(Counts, Vec<String>)> {
    // One analyser for every game rather than one per thread on its own games: the
    // threads then share one transposition table and what each game teaches it, and a
    // position two games share is solved once (with a table per thread, the early
    // positions of every game were solved anew by each thread).
    let mut analyser = Analyser::new(settings.hash_mb, settings.threads, settings.budget);
    analyser.set_order(settings.order);
    for (pos, v) in known {
        analyser.remember(pos, *v);
    }
    let mut order: Vec<&GameRecord> = games.iter().collect();
    // Changing rules clears the transposition table.
    let rules = crate::analysis::rules_of(games);
    order.sort_by_key(|g| rules.iter().position(|r| *r == g.rules));
    let mut counts = Counts::default();
    let mut errors = Vec::new();
    for g in order {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        analyser.set_endgame(tables.get(&g.rules).cloned().flatten());
        match analyser.analyse(g) {
            Ok(rows) => {
                file.append(&rows)?;
                counts.add(&rows);
                progress(&counts);
            }
            Err(e) => errors.push(e),
        }
    }
    Ok((counts, errors))
}
