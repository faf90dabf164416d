//! Playing one game between two engines: the referee holds the only true position, checks
//! every move with [`crate::rules`], keeps the clocks, and turns every way a game can end
//! into a [`Termination`] and a [`GamePlay`].
//!
//! The referee talks to engines through the small [`Contestant`] trait, implemented for the
//! supervised engine processes in [`crate::tournament`] and, in tests, by in-process fakes.

mod time;

pub use time::{ParseTimeError, TimeControl, TimeLimit, format_duration, parse_duration};

use crate::engines::SearchInfo;
use crate::rules::{Move, Position, Rules, Side};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::future::Future;
use std::str::FromStr;
use std::time::{Duration, Instant};

/// How a game ended. The CSV and the protocol's `game_over` carry [`Termination::as_str`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Termination {
    /// The game was played to its end under the rules.
    Normal,
    /// An engine used more than its time plus the margin.
    Timeout,
    /// An engine chose a pit the rules do not allow.
    IllegalMove,
    /// An engine sent a line that is not JSON, too long, or the wrong message.
    ProtocolError,
    /// An engine exited, closed its pipe, or could not be started.
    Crash,
    /// An engine did not answer the handshake or a ping.
    Stall,
    /// The game was ended early because its winner could no longer change.
    Adjudicated,
    /// The run was stopped while the game was in progress.
    Interrupted,
}

impl Termination {
    pub const ALL: [Termination; 8] = [
        Termination::Normal,
        Termination::Timeout,
        Termination::IllegalMove,
        Termination::ProtocolError,
        Termination::Crash,
        Termination::Stall,
        Termination::Adjudicated,
        Termination::Interrupted,
    ];

    /// The stable name written in `games.csv` and sent in `game_over`.
    pub fn as_str(self) -> &'static str {
        match self {
            Termination::Normal => "normal",
            Termination::Timeout => "timeout",
            Termination::IllegalMove => "illegal_move",
            Termination::ProtocolError => "protocol_error",
            Termination::Crash => "crash",
            Termination::Stall => "stall",
            Termination::Adjudicated => "adjudicated",
            Termination::Interrupted => "interrupted",
        }
    }

    /// Whether this termination is an engine's fault (the engine loses and is restarted).
    pub fn is_fault(self) -> bool {
        match self {
            Termination::Timeout
            | Termination::IllegalMove
            | Termination::ProtocolError
            | Termination::Crash
            | Termination::Stall => true,
            Termination::Normal | Termination::Adjudicated | Termination::Interrupted => false,
        }
    }
}

impl fmt::Display for Termination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Termination {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Termination::ALL
            .into_iter()
            .find(|t| t.as_str() == s)
            .ok_or_else(|| format!("unknown termination {s:?}"))
    }
}

impl Serialize for Termination {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Termination {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// The result of a game from south's point of view.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GameResult {
    SouthWins,
    NorthWins,
    Draw,
    /// The game was interrupted before it had a result.
    Unfinished,
}

impl GameResult {
    /// `1-0`, `0-1`, `1/2-1/2`, or `*` for an unfinished game.
    pub fn as_str(self) -> &'static str {
        match self {
            GameResult::SouthWins => "1-0",
            GameResult::NorthWins => "0-1",
            GameResult::Draw => "1/2-1/2",
            GameResult::Unfinished => "*",
        }
    }

    /// The result when `winner` wins.
    pub fn win_for(winner: Side) -> GameResult {
        match winner {
            Side::South => GameResult::SouthWins,
            Side::North => GameResult::NorthWins,
        }
    }

    /// Points for `side`: 1, 0.5 or 0 (0 for an unfinished game).
    pub fn points(self, side: Side) -> f64 {
        match (self, side) {
            (GameResult::SouthWins, Side::South) | (GameResult::NorthWins, Side::North) => 1.0,
            (GameResult::Draw, _) => 0.5,
            (GameResult::SouthWins, Side::North)
            | (GameResult::NorthWins, Side::South)
            | (GameResult::Unfinished, _) => 0.0,
        }
    }

    /// The word the protocol's `game_over` sends to the engine playing `side`.
    pub fn for_side(self, side: Side) -> &'static str {
        let p = self.points(side);
        if p >= 1.0 {
            "win"
        } else if p > 0.0 {
            "draw"
        } else {
            "loss"
        }
    }
}

impl fmt::Display for GameResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for GameResult {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "1-0" => Ok(GameResult::SouthWins),
            "0-1" => Ok(GameResult::NorthWins),
            "1/2-1/2" => Ok(GameResult::Draw),
            "*" => Ok(GameResult::Unfinished),
            other => Err(format!("unknown result {other:?}")),
        }
    }
}

impl Serialize for GameResult {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for GameResult {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// An engine's failure, as the referee records it: the termination it causes, a
/// human-readable detail, and the offending line when there is one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    pub termination: Termination,
    pub detail: String,
    pub line: Option<String>,
}

impl Fault {
    pub fn new(termination: Termination, detail: impl Into<String>) -> Fault {
        Fault {
            termination,
            detail: detail.into(),
            line: None,
        }
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.termination, self.detail)?;
        if let Some(line) = &self.line {
            write!(f, " (line: {})", truncate(line, 200))?;
        }
        Ok(())
    }
}

/// An engine's answer to `go`.
#[derive(Clone, Debug, Default)]
pub struct Reply {
    /// The pit as sent (not yet checked).
    pub pit: i64,
    /// The `move` line as read.
    pub line: String,
    pub infos: Vec<SearchInfo>,
    /// From writing `go` to reading the move, on the referee's monotonic clock.
    pub elapsed: Duration,
}

/// One side of a game as the referee sees it: the messages of `protocol.md` that carry a
/// game, each of which may fail with a [`Fault`].
pub trait Contestant: Send {
    /// `new_game` followed by the readiness barrier.
    fn new_game(
        &mut self,
        game: &str,
        rules: Rules,
        side: Side,
    ) -> impl Future<Output = Result<(), Fault>> + Send;

    /// `go`: asks for a move in `pos` (whose `to_move` is this engine's side) and waits at
    /// most `deadline` for it.
    fn go(
        &mut self,
        pos: &Position,
        moves: &[Move],
        time: TimeLimit,
        deadline: Duration,
    ) -> impl Future<Output = Result<Reply, Fault>> + Send;

    /// `game_over`, sent to both engines when a game ends.
    fn game_over(
        &mut self,
        game: &str,
        result: &'static str,
        south: u16,
        north: u16,
        termination: Termination,
    ) -> impl Future<Output = Result<(), Fault>> + Send;
}

/// Everything the referee needs to know about one game.
#[derive(Clone, Debug)]
pub struct GameSetup {
    /// The game id sent in `new_game` and written to the results.
    pub id: String,
    pub rules: Rules,
    /// Pits sown from the start before the engines take over (already checked legal).
    pub opening: Vec<u8>,
    /// Time control of the engine playing south, then north.
    pub time: [TimeControl; 2],
    /// The tolerance on top of each time limit.
    pub margin: Duration,
    /// End the game as soon as a store holds more than half of all seeds.
    pub adjudicate: bool,
}

/// One move played by an engine.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MoveRecord {
    pub side: Side,
    pub pit: u8,
    /// Time used, in milliseconds (referee's clock).
    pub time_ms: u64,
    /// The engine's `info` reports before the move.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub info: Vec<SearchInfo>,
}

/// A finished (or interrupted) game as the referee saw it.
#[derive(Clone, Debug)]
pub struct GamePlay {
    pub rules: Rules,
    pub opening: Vec<u8>,
    pub moves: Vec<MoveRecord>,
    pub final_position: Position,
    pub result: GameResult,
    pub south_score: u16,
    pub north_score: u16,
    pub termination: Termination,
    /// The side whose engine faulted, if any.
    pub loser: Option<Side>,
    pub detail: String,
    /// The offending line, if the fault had one.
    pub line: Option<String>,
    pub duration: Duration,
    /// Engines that failed at any point (including after the result was settled, e.g. on
    /// `game_over`): they must be restarted before their next game. South, then north.
    pub faulted: [bool; 2],
}

impl GamePlay {
    /// Number of sowings in the game, the opening included.
    pub fn plies(&self) -> usize {
        self.opening.len() + self.moves.len()
    }
}

/// Shortens a line for a record or a message, marking the cut.
pub fn truncate(line: &str, max: usize) -> String {
    if line.len() <= max {
        return line.to_string();
    }
    let mut end = max;
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}... ({} bytes)", &line[..end], line.len())
}

/// The longest offending line kept in a record.
pub const MAX_RECORDED_LINE: usize = 1000;

/// A clock per side, counting down under a game clock; unused under a fixed move time.
#[derive(Clone, Copy, Debug)]
struct Clock {
    remaining: Duration,
}

/// Plays one game between `south` and `north` and returns its record. It never fails: every
/// engine failure becomes the result of the game. Dropping the future (on interruption) is
/// safe; the caller records such a game itself (see [`interrupted`]).
pub async fn play_game<S: Contestant, N: Contestant>(
    setup: &GameSetup,
    south: &mut S,
    north: &mut N,
) -> GamePlay {
    let started = Instant::now();
    let mut pos = Position::start(setup.rules);
    let mut history: Vec<Move> = Vec::new();
    for &pit in &setup.opening {
        let side = pos.to_move();
        pos = pos
            .play(pit as i64)
            .expect("openings are checked before the game");
        history.push(Move { side, pit });
    }
    let mut moves = Vec::new();
    let mut faulted = [false; 2];

    let end = 'game: {
        // Both engines are told about the game first, south first.
        if let Err(f) = south.new_game(&setup.id, setup.rules, Side::South).await {
            break 'game Some((Side::South, f));
        }
        if let Err(f) = north.new_game(&setup.id, setup.rules, Side::North).await {
            break 'game Some((Side::North, f));
        }
        let mut clocks = setup.time.map(|tc| Clock {
            remaining: tc.base(),
        });
        while !pos.is_over() {
            let side = pos.to_move();
            if setup.adjudicate && decided(&pos) {
                break 'game None;
            }
            let i = side.index();
            let tc = setup.time[i];
            let (limit, allowed) = match tc {
                TimeControl::MoveTime(t) => (TimeLimit::MoveTime(t), t),
                TimeControl::Clock { increment, .. } => (
                    TimeLimit::Clock {
                        remaining: clocks[i].remaining,
                        increment,
                        opponent_remaining: clocks[1 - i].remaining,
                    },
                    clocks[i].remaining,
                ),
            };
            let deadline = allowed + setup.margin;
            let reply = match side {
                Side::South => south.go(&pos, &history, limit, deadline).await,
                Side::North => north.go(&pos, &history, limit, deadline).await,
            };
            let reply = match reply {
                Ok(r) => r,
                Err(f) => break 'game Some((side, f)),
            };
            if reply.elapsed > deadline {
                break 'game Some((
                    side,
                    Fault {
                        termination: Termination::Timeout,
                        detail: format!(
                            "moved after {} ms, {} ms allowed with the margin",
                            reply.elapsed.as_millis(),
                            deadline.as_millis()
                        ),
                        line: Some(truncate(&reply.line, MAX_RECORDED_LINE)),
                    },
                ));
            }
            if let TimeControl::Clock { increment, .. } = tc {
                clocks[i].remaining = clocks[i].remaining.saturating_sub(reply.elapsed) + increment;
            }
            match pos.play(reply.pit) {
                Ok(next) => {
                    let pit = reply.pit as u8;
                    history.push(Move { side, pit });
                    moves.push(MoveRecord {
                        side,
                        pit,
                        time_ms: reply.elapsed.as_millis() as u64,
                        info: reply.infos,
                    });
                    pos = next;
                }
                Err(illegal) => {
                    break 'game Some((
                        side,
                        Fault {
                            termination: Termination::IllegalMove,
                            detail: illegal.to_string(),
                            line: Some(truncate(&reply.line, MAX_RECORDED_LINE)),
                        },
                    ));
                }
            }
        }
        None
    };

    let south_score = pos.store(Side::South);
    let north_score = pos.store(Side::North);
    let (result, termination, loser, detail, line) = match end {
        Some((side, fault)) => {
            faulted[side.index()] = true;
            (
                GameResult::win_for(side.opponent()),
                fault.termination,
                Some(side),
                fault.detail,
                fault.line,
            )
        }
        None if pos.is_over() => {
            let outcome = pos.outcome().expect("the game is over");
            let result = match outcome.winner {
                Some(w) => GameResult::win_for(w),
                None => GameResult::Draw,
            };
            (result, Termination::Normal, None, String::new(), None)
        }
        None => {
            let winner = if south_score > north_score {
                Side::South
            } else {
                Side::North
            };
            (
                GameResult::win_for(winner),
                Termination::Adjudicated,
                None,
                format!(
                    "{winner} holds more than half of the {} seeds",
                    setup.rules.total_seeds()
                ),
                None,
            )
        }
    };

    // Tell both engines (a faulted engine is about to be killed: spare it the message).
    if !faulted[0]
        && let Err(_f) = south
            .game_over(
                &setup.id,
                result.for_side(Side::South),
                south_score,
                north_score,
                termination,
            )
            .await
    {
        faulted[0] = true;
    }
    if !faulted[1]
        && let Err(_f) = north
            .game_over(
                &setup.id,
                result.for_side(Side::North),
                south_score,
                north_score,
                termination,
            )
            .await
    {
        faulted[1] = true;
    }

    GamePlay {
        rules: setup.rules,
        opening: setup.opening.clone(),
        moves,
        final_position: pos,
        result,
        south_score,
        north_score,
        termination,
        loser,
        detail,
        line,
        duration: started.elapsed(),
        faulted,
    }
}

/// Whether one store holds more than half of all seeds, so the winner can no longer change.
pub fn decided(pos: &Position) -> bool {
    let half = pos.rules().total_seeds() / 2;
    pos.store(Side::South) as u32 > half || pos.store(Side::North) as u32 > half
}

/// The record of a game stopped by an interruption before it ended.
pub fn interrupted(setup: &GameSetup, duration: Duration) -> GamePlay {
    let mut pos = Position::start(setup.rules);
    for &pit in &setup.opening {
        pos = pos.play(pit as i64).expect("openings are checked");
    }
    GamePlay {
        rules: setup.rules,
        opening: setup.opening.clone(),
        moves: Vec::new(),
        final_position: pos,
        result: GameResult::Unfinished,
        south_score: pos.store(Side::South),
        north_score: pos.store(Side::North),
        termination: Termination::Interrupted,
        loser: None,
        detail: "the run was interrupted".into(),
        line: None,
        duration,
        faulted: [true, true],
    }
}

#[cfg(test)]
mod tests;
