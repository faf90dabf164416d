//! kalaha: a referee and tournament harness for Kalah engines.
//!
//! The layers, from the bottom up:
//! - [`rules`]: the reference rules (pure, synchronous; from `kalaha-core`, as is [`solver`]);
//! - [`record`]: the vocabulary every layer shares (results, terminations, faults, time,
//!   the record of a game);
//! - [`solver`]: exact game values by search;
//! - [`analysis`]: what each sowing of played games lost against perfect play;
//! - [`protocol`]: the wire messages of `protocol.md`;
//! - [`sandbox`]: what an engine may write, see and signal, built before it runs;
//! - [`supervisor`]: engine processes in their sandbox, with deadlines and clean shutdown;
//! - [`referee`]: one game between two engines;
//! - [`engines`]: the built-in engines, run as separate processes by `kalaha engine`;
//! - [`check`]: the protocol compliance checker;
//! - [`kgp`]: agents of the Kalah Game Protocol, run as engines;
//! - [`results`]: the game files of a results folder, written and read in one place;
//! - [`stats`]: the scoreboard, Elo, SPRT and ratings;
//! - [`tournament`]: schedules, the game loop and the recorder;
//! - [`sprt`]: the test of `kalaha sprt`: settings, decision, stop rule, files, verdict;
//! - [`report`] and [`views`]: leaderboards, the live display, the SPRT view;
//! - [`events`]: the run as JSON lines for programs (`--events FILE`);
//! - [`web`]: the page where people play engines and watch games and tournaments;
//! - [`cli`]: the command line.

// `unsafe` is written in `sys` alone, behind safe functions.
#![deny(unsafe_code)]

mod analysis;
mod check;
pub mod cli;
pub mod engines;
pub mod events;
mod input;
pub mod kgp;
pub mod protocol;
pub mod record;
mod referee;
mod report;
pub mod results;
pub mod sandbox;
mod sprt;
pub mod stats;
pub mod supervisor;
mod sys;
pub mod tournament;
mod views;
mod web;

pub use kalaha_core::{rules, solver};
