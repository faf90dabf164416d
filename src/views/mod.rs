//! The views of a run: what people see while it goes and what it leaves behind besides
//! the games. Each is a [`crate::tournament::events::View`]: the live display
//! ([`display`]), the leaderboard files ([`leaderboard`]), the SPRT ([`sprt`]) and the
//! exact analysis of the games as they finish ([`analysis`]).

pub(crate) mod analysis;
pub(crate) mod display;
pub(crate) mod leaderboard;
pub(crate) mod sprt;

pub(crate) use analysis::AnalysisView;
pub(crate) use display::{DisplayMode, LiveDisplay};
pub(crate) use leaderboard::LeaderboardView;
pub(crate) use sprt::SprtView;
