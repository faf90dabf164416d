//! kalaha: a referee and tournament harness for Kalah engines.
//!
//! The layers, from the bottom up:
//! - [`rules`]: the reference rules (pure, synchronous);
//! - [`solver`]: exact game values by search;
//! - [`protocol`]: the wire messages of `protocol.md`;
//! - [`supervisor`]: one task per engine process, with deadlines and clean shutdown;
//! - [`engines`]: the built-in engines, run as separate processes by `kalaha engine`;
//! - [`check`]: the protocol compliance checker;
//! - [`referee`] and [`tournament`]: playing games and running schedules;
//! - [`stats`] and [`report`]: Elo, SPRT, ratings and leaderboards;
//! - [`cli`]: the command line.

pub mod check;
pub mod cli;
pub mod engines;
pub mod protocol;
pub mod referee;
pub mod report;
pub mod rules;
pub mod solver;
pub mod stats;
pub mod supervisor;
pub mod tournament;
