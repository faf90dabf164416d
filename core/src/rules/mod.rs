//! The reference rules of Kalah (see `RULES.md` in the shared folder and the README):
//! rule variants, positions, legal moves, sowing, captures, the end of the game and its
//! outcome. Pure and synchronous: no I/O, no async, no logging, so that the referee, the
//! solver, the engines and the tests all stand on the same small, fast core.

mod board;
mod compact;
mod perft;
mod variant;

pub use board::{BoardView, MAX_CELLS, MAX_TOTAL_SEEDS};
pub use board::{
    IllegalMove, IllegalReason, Move, MoveEffect, Outcome, Position, PositionError, Row,
};
pub use compact::ParsePositionError;
pub use perft::{perft, perft_divide};
pub use variant::{MAX_PITS, MAX_SEEDS, Rules, RulesError, Side, Sweep};

#[cfg(test)]
mod tests;
