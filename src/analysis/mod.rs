//! Exact analysis of played games: the solver's value of every position a game passed
//! through, and the seeds each sowing gave away against perfect play (`analysis.csv`, one
//! row per sowing), summed per engine (seeds lost per move, share of perfect moves,
//! blunders) for the standings and the leaderboard, and per game (`analysis_games.csv`).
//!
//! Values are final store differences under perfect play by both sides, stores included,
//! from the view of the side that sows: a sowing's loss is the value before it minus the
//! value after it for the same side, never negative, 0 for a perfect sowing.
//!
//! The same solver picks balanced openings ([`balanced_openings`]): lines of random sowings
//! whose exact value lies in a small range.

mod file;
mod game;
mod known;
mod openings;
mod run;
mod summary;

pub(crate) use file::{AnalysisFile, read_analysis};
pub(crate) use game::{
    Analyser, DEFAULT_ORDER, ESTIMATE_DEPTH, MIN_BUDGET, Order, PlyAnalysis, analysable,
    position_budget, positions,
};
#[cfg(test)]
pub(crate) use game::{analyse_game, value_within};
pub(crate) use openings::{
    BalancedOpening, DistinctOpenings, OpeningsSpec, balanced_openings, default_book,
    openings_text, parse_openings,
};
#[cfg(test)]
pub(crate) use openings::{MAX_OPENINGS, OpeningsError};
pub(crate) use run::{AnalysisSettings, Counts, Tables, analyse_games};
pub(crate) use summary::{accuracy, accuracy_text, read_accuracy, write_games_summary};

use crate::record::GameRecord;
use crate::results::read_games;
use crate::rules::{Position, Rules};
use std::collections::HashMap;
use std::io;
use std::path::Path;
use std::sync::atomic::AtomicBool;

/// The games of a results folder that are to be analysed, in the order of `games.jsonl`
/// (each game once), and what was left out of the file, for a warning.
pub(crate) fn analysable_games(dir: &Path) -> io::Result<(Vec<GameRecord>, Option<String>)> {
    let mut games = read_games(&crate::results::Files::of(dir).games_jsonl())?;
    let skipped = games.skipped();
    games.records.retain(analysable);
    Ok((games.records, skipped))
}

/// The rule variants of `games`, in the order they first appear.
pub(crate) fn rules_of(games: &[GameRecord]) -> Vec<Rules> {
    let mut out: Vec<Rules> = Vec::new();
    for g in games {
        if !out.contains(&g.rules) {
            out.push(g.rules);
        }
    }
    out
}

/// The positions of the games of `rows` (whole games of `games`, analysed by an earlier
/// run) with their values: a resumed analysis does not solve them again.
fn known_values(games: &[GameRecord], rows: &[PlyAnalysis]) -> Vec<(Position, i32)> {
    let by_id: HashMap<&str, &GameRecord> = games.iter().map(|g| (g.game.as_str(), g)).collect();
    let mut out = Vec::new();
    let mut replayed: Option<(&str, Vec<Position>)> = None;
    for r in rows {
        let Some(v) = r.value_before else { continue };
        if replayed
            .as_ref()
            .is_none_or(|(id, _)| *id != r.game.as_str())
        {
            let Some(pos) = by_id.get(r.game.as_str()).and_then(|g| g.replay().ok()) else {
                continue;
            };
            replayed = Some((r.game.as_str(), pos));
        }
        if let Some((_, pos)) = &replayed
            && let Some(p) = pos.get(r.ply as usize - 1)
        {
            out.push((*p, v));
        }
    }
    out
}

/// What [`analyse_folder`] did.
#[derive(Clone, Debug, Default)]
pub(crate) struct FolderAnalysis {
    /// Games found already analysed in `analysis.csv` (an earlier, interrupted run).
    pub kept: u64,
    /// What this run analysed.
    pub counts: Counts,
    /// Games of the folder to analyse, in all.
    pub total: u64,
    /// Every game is analysed (not stopped).
    pub complete: bool,
    /// Sowings left without a value, over the whole folder.
    pub unsolved: u64,
    /// Sowings with estimated values, over the whole folder.
    pub estimated: u64,
    /// Sowings analysed, over the whole folder.
    pub sowings: u64,
    /// Games whose record the rules refuse (not analysed).
    pub errors: Vec<String>,
    /// The accuracy of each engine over the whole folder.
    pub accuracy: crate::stats::AccuracyTable,
    /// Rows of `analysis.csv` an earlier run left that were skipped (their games analysed
    /// again), with the first few reasons.
    pub skipped_rows: crate::results::ReadSummary,
}

/// Analyses the games of `games` not yet in `dir/analysis.csv`, appending each as it is
/// done; once all are, rewrites `analysis.csv` in the order of `games` and writes
/// `analysis_games.csv`. `progress` hears, after each game, the games found already
/// analysed and what this run did so far.
pub(crate) fn analyse_folder(
    dir: &Path,
    games: &[GameRecord],
    tables: &Tables,
    settings: AnalysisSettings,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(u64, &Counts),
) -> io::Result<FolderAnalysis> {
    let plies: HashMap<String, usize> = games.iter().map(|g| (g.game.clone(), g.plies())).collect();
    let (mut file, kept, read) = AnalysisFile::open(dir, &plies)?;
    let done: std::collections::HashSet<&str> = kept.iter().map(|r| r.game.as_str()).collect();
    let todo: Vec<GameRecord> = games
        .iter()
        .filter(|g| !done.contains(g.game.as_str()))
        .cloned()
        .collect();
    let kept_games = done.len() as u64;
    let known = known_values(games, &kept);
    let (counts, errors) =
        analyse_games(&todo, tables, settings, &known, &mut file, stop, &mut |c| {
            progress(kept_games, c)
        })?;
    let (mut rows, _) = read_analysis(&crate::results::Files::of(dir).analysis_csv())?;
    let complete = kept_games + counts.games + errors.len() as u64 == games.len() as u64;
    if complete {
        let order: HashMap<&str, usize> = games
            .iter()
            .enumerate()
            .map(|(i, g)| (g.game.as_str(), i))
            .collect();
        rows.sort_by_key(|r| (order.get(r.game.as_str()).copied(), r.ply));
        file.rewrite(&rows)?;
        write_games_summary(dir, &rows)?;
    }
    Ok(FolderAnalysis {
        kept: kept_games,
        counts,
        total: games.len() as u64,
        complete,
        unsolved: rows.iter().filter(|r| r.loss().is_none()).count() as u64,
        estimated: rows.iter().filter(|r| r.estimated()).count() as u64,
        sowings: rows.len() as u64,
        errors,
        accuracy: accuracy(&rows),
        skipped_rows: read,
    })
}

#[cfg(test)]
pub(crate) mod tests;
