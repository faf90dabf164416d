//! kalaha-core: the part of kalaha that computes rather than talks, in a crate of its own
//! so that it is built fully optimised while the rest of kalaha (processes, protocol,
//! files, reports) is built for a short compile (see the release profile in the root
//! `Cargo.toml`).
//!
//! - [`rules`]: the reference rules of Kalah and their variants (pure, synchronous);
//! - [`solver`]: exact game values by search, with endgame tables and an opening book;
//! - [`search`]: the game-tree search of the built-in engines `medium`, `hard` and
//!   `perfect`'s fallback;
//! - [`text`]: text made safe to show (the solver's errors quote paths).
//!
//! kalaha re-exports [`rules`] and [`solver`] as `kalaha::rules` and `kalaha::solver`.

pub mod rules;
pub mod search;
pub mod solver;
pub mod text;
