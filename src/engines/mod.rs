//! The built-in engines, each run as a separate process by `kalaha engine NAME`.
//!
//! An engine is a [`Player`]: it chooses moves; the protocol loop around it (reading the
//! referee's lines, answering them) is shared by all of them.

mod player;
mod serve;

pub use player::{EngineOption, Limits, OptionKind, Player, SearchInfo};
pub use serve::serve;
