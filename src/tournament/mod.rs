//! Tournaments: configuration, schedules, running games, results and resume.

pub mod results;
pub mod schedule;
pub mod spec;
