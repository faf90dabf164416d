//! What a run tells the rest of the program: [`Event`]s for [`View`]s (the results are
//! already on disk and counted in the scoreboard when a view sees a game), and the
//! [`RunSummary`] at the end.
//!
//! Views run on the recorder's thread, never on the thread that plays the games: a slow
//! view (a leaderboard rewrite, a terminal) delays no game.

use crate::record::GameRecord;
use crate::referee::GameObserver;
use crate::stats::Tally;
use std::io;
use std::time::Duration;

/// What the run is about.
#[derive(Clone, Debug)]
pub struct StartInfo {
    /// The tournament id.
    pub id: String,
    /// The engines' names, in configuration order.
    pub names: Vec<String>,
    /// Games in this run's schedule (this shard's).
    pub total: u64,
    /// Games of it already recorded (on resume).
    pub done: u64,
    /// What the repair of the results folder found, for the user (on resume).
    pub notes: Vec<String>,
}

/// Something that happened in the run.
#[derive(Debug)]
pub enum Event<'a> {
    /// A game ended with a result, was written to the results and counted in the
    /// scoreboard; `pair_completed` when it was the second game of its pair.
    GameFinished {
        record: &'a GameRecord,
        pair_completed: bool,
    },
    /// A game was stopped by an interruption or a decision to stop: it is not recorded,
    /// and a resumed run plays it again.
    GameInterrupted { id: &'a str },
}

/// A view's answer to an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    Continue,
    /// Start no more games and stop the running ones (they are not recorded): the run
    /// has what it needs (an SPRT decision).
    Stop,
}

/// A consumer of events: the live display, leaderboards, an SPRT. Every method gets the
/// scoreboard of the whole tournament (games of earlier runs included).
pub trait View: Send {
    fn start(&mut self, _info: &StartInfo, _tally: &Tally) -> io::Result<()> {
        Ok(())
    }
    fn event(&mut self, event: &Event<'_>, tally: &Tally) -> io::Result<Control>;
    /// An observer of every game's start and sowings as they are played (a live page),
    /// asked for once before the first game. It runs on the thread that plays the games.
    fn observer(&mut self) -> Option<GameObserver> {
        None
    }
    fn finish(&mut self, _summary: &RunSummary, _tally: &Tally) -> io::Result<()> {
        Ok(())
    }
}

/// A rule that ends a run as soon as it has what it needs (an SPRT decision). It is asked
/// on the game loop itself after every finished game that completes a game pair, with a
/// scoreboard of the games so far, so that no game starts after its decision; games that
/// end after it are not recorded (like interrupted ones).
pub trait StopRule: Send {
    /// Told what the run is about before the first game: the engines' names are settled
    /// by then (an engine without `name=` goes by its `hello` name).
    fn start(&mut self, _info: &StartInfo) {}
    fn should_stop(&mut self, tally: &Tally) -> bool;
    /// Asked before `game` starts (see [`Hold`]). A worker of a test that several play
    /// holds its games back while it is far ahead of the others.
    fn hold(&mut self, _game: &super::schedule::ScheduledGame) -> Hold {
        Hold::Start
    }
}

/// Whether the next game starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hold {
    Start,
    /// Not yet: the rule is asked again after this long; the games running go on.
    Wait(Duration),
    /// The rule has what it needs: no game starts any more, as after its decision.
    Stop,
}

/// How a run ended.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunSummary {
    /// Games recorded in this run.
    pub played: u64,
    /// Games stopped and not recorded (played again on resume).
    pub interrupted: u64,
    /// Moves played by engines in the recorded games.
    pub moves: u64,
    /// Sowings of the recorded games, openings included.
    pub plies: u64,
    /// An interruption (Ctrl-C, SIGTERM) stopped the run.
    pub stopped_by_interrupt: bool,
    /// A second interruption stopped it at once.
    pub aborted: bool,
    /// A view or the run's stop rule asked to stop.
    pub stopped_by_view: bool,
    /// Results could not be written; the run stopped.
    pub failed: Option<String>,
    /// The failure leaves the folder whole: resuming the run continues it.
    pub failed_resumable: bool,
    pub elapsed: Duration,
    /// Engine instances replaced because they failed between two games (exited, sent
    /// something unasked or did not answer a ping): no game was charged for it.
    pub restarted_between_games: u64,
}

impl RunSummary {
    /// Whether the whole (shard of the) schedule was played.
    pub fn complete(&self) -> bool {
        !self.stopped_by_interrupt
            && !self.aborted
            && !self.stopped_by_view
            && self.failed.is_none()
    }
}
