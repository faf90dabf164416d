//! The views of a run: what people see while it goes and what it leaves behind besides
//! the games. Each is a [`crate::tournament::events::View`]: the live display
//! ([`display`]), the leaderboard files ([`leaderboard`]), the SPRT ([`sprt`]) and the
//! exact analysis of the games as they finish ([`analysis`]).

pub mod analysis;
pub mod display;
pub mod leaderboard;
pub mod sprt;

pub use analysis::AnalysisView;
pub use display::{DisplayMode, LiveDisplay};
pub use leaderboard::LeaderboardView;
pub use sprt::SprtView;
