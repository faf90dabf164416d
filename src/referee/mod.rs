//! Playing one game between two engines: the referee holds the only true position, checks
//! every move with [`crate::rules`] (the one place where legality is decided), keeps the
//! clocks, and turns every way a game can end into a [`GameRecord`].
//!
//! The referee talks to engines through the small [`Contestant`] trait, implemented by the
//! supervised engine processes ([`crate::supervisor`]) and by in-process engines
//! ([`crate::engines::InProcess`]). A [`GameObserver`] may follow a game as it is played:
//! it hears of the start and of every sowing once the referee has checked and played it.

mod clock;
mod exact;

pub(crate) use clock::Clocks;
pub(crate) use exact::{EXACT_NODES, saved_table_missing, settle, shared_table};

use crate::record::{
    Fault, FaultKind, GameRecord, GameResult, MoveRecord, Opening, SearchInfo, SideResult,
    Termination, TimeControl, TimeLimit,
};
use crate::rules::{Move, Position, Rules, Side};
use serde::{Deserialize, Serialize};
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// An engine's answer to `go`.
#[derive(Clone, Debug, Default)]
pub struct Reply {
    /// The pit as sent (not yet checked).
    pub pit: i64,
    /// The `move` line as read.
    pub line: String,
    /// The latest `info` reports, and how many more were received but not kept.
    pub infos: Vec<SearchInfo>,
    pub infos_dropped: u64,
    /// From writing `go` to reading the move, on the referee's monotonic clock.
    pub elapsed: Duration,
}

/// One side of a game as the referee sees it: the messages of `protocol.md` that carry a
/// game, each of which may fail with a [`Fault`].
pub trait Contestant: Send {
    /// `new_game` followed by the readiness barrier. `start` is the position the game
    /// starts from when it is not the rules' own.
    fn new_game(
        &mut self,
        game: &str,
        rules: Rules,
        start: Option<&Position>,
        side: Side,
    ) -> impl Future<Output = Result<(), Fault>> + Send;

    /// `go`: asks for a move in `pos` (whose `to_move` is this engine's side) after `moves`
    /// (the whole game) and waits at most `deadline` for it.
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
        result: SideResult,
        south: u16,
        north: u16,
        termination: Termination,
    ) -> impl Future<Output = Result<(), Fault>> + Send;

    /// Before an instance that played a game plays the next one: whether it is still fit
    /// (alive, silent since, answering). What went wrong between two games is no game's
    /// fault: the caller replaces the instance.
    fn between_games(&mut self) -> impl Future<Output = Result<(), String>> + Send {
        async { Ok(()) }
    }

    /// Whether this side has given up the game in progress (a person, from the page):
    /// asked before every move and when `go` fails. Engines never resign.
    fn resigned(&self) -> bool {
        false
    }
}

/// When the referee ends a game before the rules do.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Adjudication {
    /// Play every game to its end.
    #[default]
    Off,
    /// End a game once a store holds more than half of all seeds (its winner is settled).
    Decided,
    /// End a game as soon as the solver proves its value within a small budget before a
    /// move, once each engine has made a move of its own (the opening alone decides
    /// nothing); the stores are those perfect play from there reaches.
    Exact,
}

/// Everything the referee needs to know about one game.
#[derive(Clone, Debug)]
pub(crate) struct GameSetup {
    /// The game id sent in `new_game` and written to the results.
    pub id: String,
    pub number: u64,
    pub round: u64,
    pub pair: u64,
    /// The engines' names, south first.
    pub names: [String; 2],
    pub rules: Rules,
    /// The start position and the pits sown from it before the engines take over (already
    /// checked legal).
    pub opening: Opening,
    /// Time control of the engine playing south, then north.
    pub time: [TimeControl; 2],
    /// The tolerance on every deadline (on a clock: once, when it reaches zero).
    pub margin: Duration,
    pub adjudication: Adjudication,
}

impl GameSetup {
    /// The position after the opening, and the opening's sowings.
    fn after_opening(&self) -> (Position, Vec<MoveRecord>) {
        let mut pos = self
            .opening
            .start_position(self.rules)
            .expect("openings are checked before the game");
        let mut moves = Vec::with_capacity(self.opening.pits.len() + 64);
        for &pit in &self.opening.pits {
            moves.push(MoveRecord::opening(pos.to_move(), pit));
            pos = pos
                .play(pit as i64)
                .expect("openings are checked before the game");
        }
        (pos, moves)
    }
}

/// A game as played: its record, and which engines failed at any point (including after
/// the result was settled, e.g. on `game_over`), which must be restarted before their next
/// game.
#[derive(Clone, Debug)]
pub(crate) struct Played {
    pub record: GameRecord,
    /// South, then north.
    pub faulted: [bool; 2],
}

/// How the game loop ended.
enum End {
    /// The rules ended it.
    Over,
    /// Adjudicated: the reason, and the final stores (south, north) when the adjudication
    /// says them (else the current stores stand).
    Adjudicated(String, Option<(u16, u16)>),
    /// An engine's fault.
    Fault(Side, Fault),
    /// A side gave the game up.
    Resigned(Side),
}

/// What the referee tells a [`GameObserver`] while a game goes on.
#[derive(Debug)]
pub(crate) enum GameUpdate<'a> {
    /// Both engines have been told about the game: the position and the sowings after the
    /// opening (the opening's sowings, or none).
    Started {
        setup: &'a GameSetup,
        position: &'a Position,
        moves: &'a [MoveRecord],
    },
    /// A sowing was checked and played: `ply` is its index in the game's sowings (the
    /// opening's included), `before` and `after` the positions around it.
    Moved {
        game: &'a str,
        ply: usize,
        record: &'a MoveRecord,
        before: &'a Position,
        after: &'a Position,
    },
}

/// Something that follows games as they are played (a live page). It is called on the
/// thread that plays the games, so it must be quick: copy what it needs and return.
#[derive(Clone)]
pub struct GameObserver(Arc<dyn Fn(&GameUpdate<'_>) + Send + Sync>);

impl GameObserver {
    pub(crate) fn new(f: impl Fn(&GameUpdate<'_>) + Send + Sync + 'static) -> GameObserver {
        GameObserver(Arc::new(f))
    }

    /// One observer that tells all of `observers`, in order (`None` when there are none).
    pub(crate) fn all(mut observers: Vec<GameObserver>) -> Option<GameObserver> {
        match observers.len() {
            0 => None,
            1 => observers.pop(),
            _ => Some(GameObserver::new(move |u| {
                for o in &observers {
                    o.tell(u);
                }
            })),
        }
    }

    fn tell(&self, update: &GameUpdate<'_>) {
        (self.0)(update)
    }
}

impl std::fmt::Debug for GameObserver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("GameObserver")
    }
}

/// Plays one game between `south` and `north`. It never fails: every engine failure
/// becomes the result of the game. Dropping the future (on interruption) is safe.
#[cfg(test)]
pub(crate) async fn play_game<S: Contestant, N: Contestant>(
    setup: &GameSetup,
    south: &mut S,
    north: &mut N,
) -> Played {
    play_game_observed(setup, south, north, None).await
}

/// [`play_game`], telling `observer` about the game's start and each of its sowings.
pub(crate) async fn play_game_observed<S: Contestant, N: Contestant>(
    setup: &GameSetup,
    south: &mut S,
    north: &mut N,
    observer: Option<&GameObserver>,
) -> Played {
    let started = Instant::now();
    let (mut pos, mut moves) = setup.after_opening();
    let end = play_moves(setup, south, north, &mut pos, &mut moves, observer).await;
    let (record, mut faulted) = finish(setup, pos, moves, end, started);
    // Tell both engines (a faulted engine is about to be stopped: spare it the message).
    let tell = |side: Side| {
        (
            setup.id.as_str(),
            record.result.for_side(side),
            record.south_score,
            record.north_score,
            record.termination,
        )
    };
    if !faulted[0] {
        let (id, r, s, n, t) = tell(Side::South);
        faulted[0] = south.game_over(id, r, s, n, t).await.is_err();
    }
    if !faulted[1] {
        let (id, r, s, n, t) = tell(Side::North);
        faulted[1] = north.game_over(id, r, s, n, t).await.is_err();
    }
    Played { record, faulted }
}

/// The side that has resigned, if one has.
fn resigned<S: Contestant, N: Contestant>(south: &S, north: &N) -> Option<Side> {
    if south.resigned() {
        Some(Side::South)
    } else if north.resigned() {
        Some(Side::North)
    } else {
        None
    }
}

/// The moves of the engines until the game ends, by the rules or otherwise.
async fn play_moves<S: Contestant, N: Contestant>(
    setup: &GameSetup,
    south: &mut S,
    north: &mut N,
    pos: &mut Position,
    moves: &mut Vec<MoveRecord>,
    observer: Option<&GameObserver>,
) -> End {
    // Both engines are told about the game first, south first.
    let start = setup.opening.start.as_ref().map(|_| {
        setup
            .opening
            .start_position(setup.rules)
            .expect("openings are checked before the game")
    });
    let start = start.as_ref();
    if let Err(f) = south
        .new_game(&setup.id, setup.rules, start, Side::South)
        .await
    {
        return End::Fault(Side::South, f);
    }
    if let Err(f) = north
        .new_game(&setup.id, setup.rules, start, Side::North)
        .await
    {
        return End::Fault(Side::North, f);
    }
    if let Some(o) = observer {
        o.tell(&GameUpdate::Started {
            setup,
            position: pos,
            moves,
        });
    }
    let mut clocks = Clocks::new(setup.time, setup.margin);
    let mut history: Vec<Move> = moves
        .iter()
        .map(|m| Move {
            side: m.side,
            pit: m.pit,
        })
        .collect();
    // Whether each engine (south, north) has sown at least once: the opening measures no engine.
    let mut moved = [false; 2];
    while !pos.is_over() {
        if let Some(side) = resigned(south, north) {
            return End::Resigned(side);
        }
        if setup.adjudication == Adjudication::Decided && decided(pos) {
            let winner = winner_by_stores(pos);
            return End::Adjudicated(
                format!(
                    "{winner} holds more than half of the {} seeds",
                    setup.rules.total_seeds()
                ),
                None,
            );
        }
        if setup.adjudication == Adjudication::Exact
            && moved == [true; 2]
            && let Some((s, n)) = settle_apart(*pos).await
        {
            return End::Adjudicated(
                format!(
                    "perfect play from here ends {s}-{n}: exact value {:+} for south",
                    s as i32 - n as i32
                ),
                Some((s, n)),
            );
        }
        let side = pos.to_move();
        let (limit, deadline) = clocks.limit(side);
        let reply = match side {
            Side::South => south.go(pos, &history, limit, deadline).await,
            Side::North => north.go(pos, &history, limit, deadline).await,
        };
        let reply = match reply {
            Ok(r) => r,
            Err(_) if resigned(south, north) == Some(side) => return End::Resigned(side),
            Err(f) => return End::Fault(side, f),
        };
        if let Err(detail) = clocks.charge(side, reply.elapsed) {
            return End::Fault(
                side,
                Fault::new(FaultKind::Timeout, detail).with_line(&reply.line),
            );
        }
        match pos.play(reply.pit) {
            Ok(next) => {
                let pit = reply.pit as u8;
                moved[side.index()] = true;
                history.push(Move { side, pit });
                moves.push(MoveRecord {
                    side,
                    pit,
                    opening: false,
                    time_ms: reply.elapsed.as_millis() as u64,
                    info: reply.infos,
                    info_dropped: reply.infos_dropped,
                });
                if let Some(o) = observer {
                    o.tell(&GameUpdate::Moved {
                        game: &setup.id,
                        ply: moves.len() - 1,
                        record: &moves[moves.len() - 1],
                        before: pos,
                        after: &next,
                    });
                }
                *pos = next;
            }
            Err(illegal) => {
                let f =
                    Fault::new(FaultKind::IllegalMove, illegal.to_string()).with_line(&reply.line);
                return End::Fault(side, f);
            }
        }
    }
    End::Over
}

/// [`settle`] on a thread of the blocking pool: a search of some milliseconds must not hold
/// up the other games' engines, whose replies would then seem late.
async fn settle_apart(pos: Position) -> Option<(u16, u16)> {
    tokio::task::spawn_blocking(move || settle(&pos, EXACT_NODES))
        .await
        .ok()
        .flatten()
}

/// The side with more seeds in its store (south on equal stores, which a decided position
/// never has).
fn winner_by_stores(pos: &Position) -> Side {
    if pos.store(Side::North) > pos.store(Side::South) {
        Side::North
    } else {
        Side::South
    }
}

/// The record of a game that ended with `end` in `pos`.
fn finish(
    setup: &GameSetup,
    pos: Position,
    moves: Vec<MoveRecord>,
    end: End,
    started: Instant,
) -> (GameRecord, [bool; 2]) {
    let mut faulted = [false; 2];
    let mut stores = None;
    let (result, termination, loser, detail, line) = match end {
        End::Fault(side, fault) => {
            faulted[side.index()] = true;
            (
                GameResult::from_winner(Some(side.opponent())),
                Termination::Fault(fault.kind),
                Some(side),
                fault.detail,
                fault.line,
            )
        }
        End::Resigned(side) => (
            GameResult::from_winner(Some(side.opponent())),
            Termination::Resigned,
            Some(side),
            format!("{} resigned", setup.names[side.index()]),
            None,
        ),
        End::Over => {
            let outcome = pos.outcome().expect("the game is over");
            let result = GameResult::from_winner(outcome.winner);
            (result, Termination::Normal, None, String::new(), None)
        }
        End::Adjudicated(reason, exact) => {
            let result = match exact {
                Some((s, n)) => GameResult::from_winner(match s.cmp(&n) {
                    std::cmp::Ordering::Greater => Some(Side::South),
                    std::cmp::Ordering::Less => Some(Side::North),
                    std::cmp::Ordering::Equal => None,
                }),
                None => GameResult::from_winner(Some(winner_by_stores(&pos))),
            };
            stores = exact;
            (result, Termination::Adjudicated, None, reason, None)
        }
    };
    // The record waits for the recorder: it keeps what it holds, not the room for more.
    let mut moves = moves;
    moves.shrink_to_fit();
    let record = GameRecord {
        game: setup.id.clone(),
        number: setup.number,
        round: setup.round,
        pair: setup.pair,
        south: setup.names[0].clone(),
        north: setup.names[1].clone(),
        rules: setup.rules,
        start: setup.opening.start.clone(),
        opening: setup.opening.pits.clone(),
        moves,
        final_position: pos,
        result,
        south_score: stores.map_or(pos.store(Side::South), |s| s.0),
        north_score: stores.map_or(pos.store(Side::North), |s| s.1),
        termination,
        loser,
        detail,
        line,
        repeats: None,
        duration_ms: started.elapsed().as_millis() as u64,
    };
    (record, faulted)
}

/// The record of a game lost before its first move because `side`'s engine could not be
/// started or readied.
pub(crate) fn forfeit(setup: &GameSetup, side: Side, fault: Fault) -> Played {
    let (pos, moves) = setup.after_opening();
    let fault = Fault {
        detail: format!("failed to start: {}", fault.detail),
        ..fault
    };
    let (record, faulted) = finish(setup, pos, moves, End::Fault(side, fault), Instant::now());
    Played { record, faulted }
}

/// Whether one store holds more than half of all seeds, so the winner can no longer change.
pub(crate) fn decided(pos: &Position) -> bool {
    let half = pos.rules().total_seeds() / 2;
    pos.store(Side::South) as u32 > half || pos.store(Side::North) as u32 > half
}

#[cfg(test)]
mod tests;
