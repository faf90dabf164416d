//! The views of a run: what people see while it goes and what it leaves behind besides
//! the games. Each is a [`crate::tournament::events::View`]: the live display
//! ([`display`]), the leaderboard files ([`leaderboard`]) and the SPRT ([`sprt`]).

pub mod display;
pub mod leaderboard;
pub mod sprt;

pub use display::{DisplayMode, LiveDisplay};
pub use leaderboard::LeaderboardView;
pub use sprt::{SprtSettings, SprtView};
