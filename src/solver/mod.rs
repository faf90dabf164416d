//! Exact game values by alpha-beta search with a transposition table.
