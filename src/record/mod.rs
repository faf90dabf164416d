//! The vocabulary every layer shares: how a game ended ([`GameResult`], [`Termination`],
//! [`FaultKind`], [`Fault`]), how much time an engine gets ([`TimeControl`], [`TimeLimit`]),
//! what an engine reported about a move ([`SearchInfo`]) and the record of a finished game
//! ([`GameRecord`], with its borrowed summary [`GameRow`]).
//!
//! The protocol, the referee, the statistics, the reports and the results files all speak
//! these types; none of them passes a result, a termination or a time as a string. This
//! module depends on nothing but [`crate::rules`].

mod game;
pub(crate) mod name;
mod opening;
mod result;
pub(crate) mod shell;
mod termination;
mod time;

#[cfg(test)]
pub(crate) use game::tests::{game_of, played as played_game};
pub use game::{GameRecord, GameRow, MoveRecord, SearchInfo, format_pits};
pub use name::{
    MAX_NAME_CHARS, MAX_SHOWN_LINE, NameError, check_name, clean_message, clean_text, counted,
    escaped, fit_width, look_alike_groups, look_alike_warnings, shown_line, shown_name, shown_path,
    shown_values, truncate,
};
pub use opening::{Board, BoardError, Opening, OpeningError};
pub use result::{GameResult, SideResult};
pub use termination::{Fault, FaultKind, MAX_RECORDED_LINE, Termination};
pub use time::{
    DEFAULT_TIME_MARGIN, MAX_TIME, ParseTimeError, TimeControl, TimeLimit, format_duration,
    machine_load, parse_duration,
};
