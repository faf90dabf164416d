//! Exact game values by alpha-beta search with a transposition table.
//!
//! The value of a position is the final store of the side to move minus the other side's,
//! when both sides play to maximise their own final margin. It splits into the current
//! store margin, which is known, plus the *future gain*: what the side to move can still
//! add to that margin. The future gain depends only on the seeds in the pits (whose they
//! are, seen from the side to move), never on the stores, so the transposition table keys
//! on the two rows alone (the mover's row first), and every position with the same pits is
//! one entry whatever the stores and whoever moves. The seeds still in the pits bound the
//! future gain on both sides, which prunes the search near the end of the game.
//!
//! An extra turn keeps the same mover, so the child's future gain adds to the move's own
//! gain; otherwise it is subtracted (negamax).

mod book;
mod cache;
mod endgame;
mod index;
mod moves;
mod search;
mod tt;
mod worker;

pub use book::{Book, BookError, BookMove};
pub use cache::{
    IN_MEMORY_BYTES, TableError, TableEvent, TableFile, TableHeader, TableStore, checksum,
    planned_seeds,
};
pub use endgame::{EndgameTable, MAX_TABLE_SEEDS, TableRules, max_seeds_within, table_len};
pub use index::{Indexer, binomial};
pub use moves::{ordered_moves, pack_bits, pits_key, seeds_in_pits};
pub use search::{Budget, Solution, Solver, Step, Test};

#[cfg(test)]
mod tests;
