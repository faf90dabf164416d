//! Tournaments: configuration, schedules, running games, results and resume.
