//! What the rows of `analysis.csv` say per engine (for the standings and the leaderboard)
//! and per game (`analysis_games.csv`).

use super::file::read_analysis;
use super::game::PlyAnalysis;
use crate::results::text_cell;
use crate::rules::Side;
use crate::stats::{Accuracy, AccuracyTable};
use std::io;
use std::path::Path;

/// The columns of `analysis_games.csv`: one row per game and side.
pub(crate) const GAMES_SUMMARY_COLUMNS: [&str; 11] = [
    "game",
    "side",
    "engine",
    "moves",
    "seeds_lost",
    "loss_per_move",
    "perfect",
    "blunders",
    "unsolved",
    "estimated",
    "estimated_seeds_lost",
];

/// The loss of a row as the scoreboard counts it (`None`: unsolved).
fn loss(r: &PlyAnalysis) -> Option<u32> {
    r.loss().map(|l| l.max(0) as u32)
}

/// Counts `r` in `a`: exact and estimated losses apart.
fn add(a: &mut Accuracy, r: &PlyAnalysis) {
    match (r.estimated(), r.loss()) {
        (true, Some(l)) => a.add_estimated(l),
        _ => a.add(loss(r)),
    }
}

/// Every engine's accuracy over the engines' sowings of `rows` (opening sowings are not
/// counted).
pub(crate) fn accuracy(rows: &[PlyAnalysis]) -> AccuracyTable {
    let mut t = AccuracyTable::new();
    for r in rows.iter().filter(|r| r.by_engine()) {
        match (r.estimated(), r.loss()) {
            (true, Some(l)) => t.add_estimated(&r.engine, l),
            _ => t.add(&r.engine, loss(r)),
        }
    }
    t
}

/// The accuracy of the engines of a results folder from its `analysis.csv`; `None` when
/// the folder has no analysis (or it cannot be read).
pub(crate) fn read_accuracy(dir: &Path) -> Option<AccuracyTable> {
    let (rows, _) = read_analysis(&crate::results::Files::of(dir).analysis_csv()).ok()?;
    let t = accuracy(&rows);
    (!t.is_empty()).then_some(t)
}

/// Each side's accuracy in each game, in the order of `rows` (which holds whole games).
pub(crate) fn per_game(rows: &[PlyAnalysis]) -> Vec<(String, Side, String, Accuracy)> {
    let mut out: Vec<(String, Side, String, Accuracy)> = Vec::new();
    for r in rows.iter().filter(|r| r.by_engine()) {
        let i = match out
            .iter()
            .rposition(|(g, s, _, _)| *g == r.game && *s == r.side)
        {
            Some(i) => i,
            None => {
                out.push((
                    r.game.clone(),
                    r.side,
                    r.engine.clone(),
                    Accuracy::default(),
                ));
                out.len() - 1
            }
        };
        add(&mut out[i].3, r);
    }
    out
}

fn num(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.3}")
    } else {
        String::new()
    }
}

/// Writes `analysis_games.csv` into `dir` (through a temporary file).
pub(crate) fn write_games_summary(dir: &Path, rows: &[PlyAnalysis]) -> io::Result<()> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(GAMES_SUMMARY_COLUMNS)?;
    for (game, side, engine, a) in per_game(rows) {
        w.write_record([
            text_cell(&game).as_ref(),
            side.as_str(),
            text_cell(&engine).as_ref(),
            &a.moves.to_string(),
            &a.seeds_lost.to_string(),
            &num(a.loss_per_move()),
            &a.perfect.to_string(),
            &a.blunders.to_string(),
            &a.unsolved.to_string(),
            &a.estimated.to_string(),
            &a.estimated_lost.to_string(),
        ])?;
    }
    let bytes = w
        .into_inner()
        .map_err(|e| io::Error::other(e.to_string()))?;
    crate::results::write_file(&crate::results::Files::of(dir).analysis_games_csv(), &bytes)
}

/// The per-engine table as text for a terminal: name, moves, seeds lost per move, perfect
/// moves, blunders, unsolved moves and moves with an estimated loss (with their estimated
/// loss per move), best first.
pub(crate) fn accuracy_text(t: &AccuracyTable) -> String {
    let mut list: Vec<(&str, &Accuracy)> = t.iter().collect();
    list.sort_by(|a, b| {
        a.1.loss_per_move()
            .total_cmp(&b.1.loss_per_move())
            .then(a.0.cmp(b.0))
    });
    let width = list
        .iter()
        .map(|(n, _)| n.chars().count())
        .max()
        .unwrap_or(6)
        .max(6);
    let mut s = format!(
        "{:<width$}  {:>7}  {:>9}  {:>7}  {:>8}  {:>8}  {:>9}  {:>9}\n",
        "engine", "moves", "loss/move", "perfect", "blunders", "unsolved", "estimated", "est. loss"
    );
    for (name, a) in list {
        s.push_str(&format!(
            "{:<width$}  {:>7}  {:>9}  {:>6.1}%  {:>8}  {:>8}  {:>9}  {:>9}\n",
            crate::record::clean_text(name),
            a.moves,
            num(a.loss_per_move()),
            100.0 * a.perfect_share(),
            a.blunders,
            a.unsolved,
            a.estimated,
            num(a.estimated_loss_per_move())
        ));
    }
    s
}
