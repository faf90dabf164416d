//! The exact analysis of one game: the value of every position it passed through, and what
//! each sowing lost of it.

use crate::record::{GameRecord, Termination, clean_text};
use crate::rules::{Position, Side};
use crate::solver::{Budget, Solver};
use std::time::{Duration, Instant};

/// One sowing of a game and what it cost: a row of `analysis.csv`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlyAnalysis {
    pub game: String,
    /// 1 for the first sowing from the start position (openings included).
    pub ply: u32,
    pub side: Side,
    /// The engine that chose the sowing; empty for a sowing of the opening.
    pub engine: String,
    pub pit: u8,
    /// The exact value of the position before the sowing for the side that sows (final
    /// store minus the other's under perfect play), `None` when the budget ran out.
    pub value_before: Option<i32>,
    /// The exact value after the sowing for the same side.
    pub value_after: Option<i32>,
}

impl PlyAnalysis {
    /// Seeds the sowing gave away: `value_before - value_after` (0 for a perfect sowing),
    /// when both are known.
    pub fn loss(&self) -> Option<i32> {
        Some(self.value_before? - self.value_after?)
    }

    /// Whether an engine chose this sowing (not the opening).
    pub fn by_engine(&self) -> bool {
        !self.engine.is_empty()
    }
}

/// Whether a game's sowings are analysed: games played to their end or adjudicated (every
/// sowing in them was an engine's legal choice or the opening's); games lost by a fault are
/// not.
pub fn analysable(record: &GameRecord) -> bool {
    matches!(
        record.termination,
        Termination::Normal | Termination::Adjudicated
    )
}

/// The positions of a game from the start ([`GameRecord::replay`]), or an error naming the
/// game and what does not replay.
pub fn positions(record: &GameRecord) -> Result<Vec<Position>, String> {
    record
        .replay()
        .map_err(|e| format!("game {}: {e}", clean_text(&record.game)))
}

/// The exact value of `pos` for its side to move, or `None` when `budget` (per position)
/// runs out. `guess` (a value close to it) makes the search faster.
pub fn value_within(
    solver: &mut Solver,
    pos: &Position,
    budget: Option<Duration>,
    guess: Option<i32>,
) -> Option<i32> {
    if pos.is_over() {
        return Some(pos.store_margin(pos.to_move()));
    }
    let budget = Budget {
        deadline: budget.map(|d| Instant::now() + d),
        max_nodes: None,
    };
    solver
        .solve_observed(pos, budget, guess, &mut |_| {})
        .map(|s| s.value)
}

/// Analyses every sowing of `record` with `solver` (whose endgame table, if any, should be
/// of the game's rules), at most `budget` per position. Positions are solved from the end
/// of the game back to the start: late positions are quick and fill the solver's table
/// with what the earlier ones need.
pub fn analyse_game(
    solver: &mut Solver,
    record: &GameRecord,
    budget: Option<Duration>,
) -> Result<Vec<PlyAnalysis>, String> {
    let positions = positions(record)?;
    // values[i]: the value of positions[i] for its side to move.
    let mut values: Vec<Option<i32>> = vec![None; positions.len()];
    let mut guess = None;
    for i in (0..positions.len()).rev() {
        let pos = &positions[i];
        // The next position's value, seen from this mover, is the best guess.
        let g = guess.map(|(v, side): (i32, Side)| if side == pos.to_move() { v } else { -v });
        values[i] = value_within(solver, pos, budget, g);
        guess = values[i].map(|v| (v, pos.to_move())).or(guess);
    }
    let rows = record
        .moves
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let after = &positions[i + 1];
            let value_after = if after.is_over() {
                Some(after.store_margin(m.side))
            } else if after.to_move() == m.side {
                values[i + 1]
            } else {
                values[i + 1].map(|v| -v)
            };
            PlyAnalysis {
                game: record.game.clone(),
                ply: i as u32 + 1,
                side: m.side,
                engine: if m.opening {
                    String::new()
                } else {
                    record.name(m.side).to_string()
                },
                pit: m.pit,
                value_before: values[i],
                value_after,
            }
        })
        .collect();
    Ok(rows)
}
