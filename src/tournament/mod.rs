//! Tournaments: configuration, schedules, running games, results and resume.

pub mod config;
pub mod display;
pub mod results;
pub mod run;
pub mod schedule;
pub mod spec;
