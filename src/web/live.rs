//! The state behind the page: the boards of the games being played (or, for a person, the
//! current game), the recent finished games, the standings, and the person's move when
//! one is awaited. It is fed by the referee's [`GameObserver`] (each sowing as it is
//! played), by the tournament's [`View`] events (each game recorded) and by the page's
//! requests; every change bumps a version that the page's event stream waits on.
//!
//! Everything is kept as data (names as they are); the page inserts text with
//! `textContent` only, so nothing from an engine is ever read as markup.

use super::frames::{Frame, frame, frames, record_frames};
use crate::record::{GameRecord, TimeLimit, clean_text};
use crate::referee::{GameObserver, GameUpdate};
use crate::report::{num, pm};
use crate::rules::{BoardView, Position, Rules, Side};
use crate::stats::Tally;
use crate::tournament::events::{Control, Event, RunSummary, StartInfo, View};
use serde::Serialize;
use std::collections::VecDeque;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::sync::{Semaphore, oneshot, watch};

/// What the page is showing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// A person plays an engine (`kalaha play --engine X`).
    Play,
    /// Two engines play each other, one game at a time (`kalaha play` with two engines).
    Watch,
    /// A tournament as it runs (`--live`).
    Tournament,
    /// A results folder (`kalaha show --serve`).
    Results,
}

/// Finished games kept in memory, most recent last (older ones are read from the results
/// folder when asked for).
pub const RECENT: usize = 200;

/// Finished games listed on the page.
const LISTED: usize = 100;

/// Lets the next game of a session start when the page asks for it: the seat that is told
/// about a game first waits here.
#[derive(Debug)]
pub struct Gate {
    permits: Semaphore,
}

impl Gate {
    /// A gate for a session whose first game starts at once when `open`, else when the
    /// page asks (a person on a clock: the clock must not run before the page is read).
    pub fn new(open: bool) -> Arc<Gate> {
        Arc::new(Gate {
            permits: Semaphore::new(usize::from(open)),
        })
    }

    fn is_open(&self) -> bool {
        self.permits.available_permits() > 0
    }

    /// Waits until a game may start, and uses up that permission.
    pub async fn wait(&self) {
        if let Ok(p) = self.permits.acquire().await {
            p.forget();
        }
    }

    fn open(&self) {
        if self.permits.available_permits() == 0 {
            self.permits.add_permits(1);
        }
    }
}

/// The person's move the referee waits for.
#[derive(Debug)]
struct Pending {
    game: String,
    legal: Vec<u8>,
    /// The time the person has for this move, when limited, and since when.
    time: Option<Duration>,
    since: Instant,
    reply: oneshot::Sender<u8>,
}

/// A game on a board: in progress, or (for a person) the last one, finished.
#[derive(Debug)]
struct Board {
    game: String,
    number: u64,
    south: String,
    north: String,
    rules: Rules,
    frames: Vec<Frame>,
    position: Position,
    record: Option<Arc<GameRecord>>,
}

#[derive(Debug)]
struct State {
    version: u64,
    title: String,
    names: Vec<String>,
    /// Games in the run's schedule (0: open-ended) and games recorded.
    total: u64,
    finished: u64,
    boards: Vec<Board>,
    recent: VecDeque<Arc<GameRecord>>,
    standings: Vec<StandingJson>,
    ended: Option<String>,
    person: Option<String>,
    pending: Option<Pending>,
    gate: Option<Arc<Gate>>,
    /// The page asked for a new game that has not started yet.
    starting: bool,
    snapshot: Option<(u64, Arc<str>)>,
}

/// The state behind the page, shared by the game loop, the recorder and the server.
#[derive(Debug)]
pub struct Live {
    mode: Mode,
    dir: Option<PathBuf>,
    state: Mutex<State>,
    version: watch::Sender<u64>,
}

impl Live {
    /// An empty state for `mode`; `dir` is the results folder, where games no longer in
    /// memory are found.
    pub fn new(mode: Mode, title: impl Into<String>, dir: Option<PathBuf>) -> Arc<Live> {
        Arc::new(Live {
            mode,
            dir,
            state: Mutex::new(State {
                version: 0,
                title: title.into(),
                names: Vec::new(),
                total: 0,
                finished: 0,
                boards: Vec::new(),
                recent: VecDeque::new(),
                standings: Vec::new(),
                ended: None,
                person: None,
                pending: None,
                gate: None,
                starting: false,
                snapshot: None,
            }),
            version: watch::Sender::new(0),
        })
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The results folder, if any.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// A receiver that sees every change of the state.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.version.subscribe()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while the lock was held leaves plain data behind: keep serving it.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Applies `change` and tells the page.
    fn change<T>(&self, change: impl FnOnce(&mut State) -> T) -> T {
        let mut s = self.lock();
        let out = change(&mut s);
        s.version += 1;
        let v = s.version;
        drop(s);
        self.version.send_replace(v);
        out
    }

    /// Who plays on the page (`person`), and the gate that starts each game on request.
    pub fn set_session(&self, person: Option<String>, gate: Arc<Gate>) {
        self.change(|s| {
            s.person = person;
            s.gate = Some(gate);
        });
    }

    /// The state as the page reads it (JSON), made once per version (each time while a
    /// person's clock runs, since it holds the time left).
    pub fn snapshot(&self) -> Arc<str> {
        let mut s = self.lock();
        let clock_runs = s.pending.as_ref().is_some_and(|p| p.time.is_some());
        if let Some((v, text)) = &s.snapshot
            && *v == s.version
            && !clock_runs
        {
            return text.clone();
        }
        let text: Arc<str> = serde_json::to_string(&self.snapshot_of(&s))
            .unwrap_or_else(|e| format!("{{\"error\":\"failed to write the state: {e}\"}}"))
            .into();
        s.snapshot = Some((s.version, text.clone()));
        text
    }

    fn snapshot_of<'a>(&self, s: &'a State) -> SnapshotJson<'a> {
        let can_new = self.can_start_new(s);
        SnapshotJson {
            version: s.version,
            mode: self.mode,
            title: &s.title,
            names: &s.names,
            total: s.total,
            finished: s.finished,
            ended: s.ended.as_deref(),
            person: s.person.as_deref(),
            can_new,
            starting: s.starting,
            boards: s.boards.iter().map(|b| board_json(b, s)).collect(),
            standings: &s.standings,
            recent: s
                .recent
                .iter()
                .rev()
                .take(LISTED)
                .map(|r| summary_json(r))
                .collect(),
        }
    }

    /// Whether the page may start the next game: the one shown is over (or none was
    /// played, and the first waits for the page) and no other is starting.
    fn can_start_new(&self, s: &State) -> bool {
        let Some(gate) = &s.gate else {
            return false;
        };
        matches!(self.mode, Mode::Play | Mode::Watch)
            && s.ended.is_none()
            && !s.starting
            && !gate.is_open()
            && s.boards.iter().all(|b| b.record.is_some())
    }

    /// The game `id` (or number) with its frames, as JSON, from memory; `None` when it is
    /// not there (look in the results folder then).
    pub fn game_json(&self, id: &str) -> Option<String> {
        let s = self.lock();
        if let Some(b) = s
            .boards
            .iter()
            .find(|b| b.game == id || b.number.to_string() == id)
        {
            let json = GameJson {
                game: &b.game,
                number: b.number,
                south: &b.south,
                north: &b.north,
                rules: b.rules,
                rules_text: rules_text(b.rules),
                opening: b.frames.iter().filter(|f| f.opening).count(),
                frames: &b.frames,
                result: b.record.as_deref().map(result_json),
            };
            return serde_json::to_string(&json).ok();
        }
        let r = s
            .recent
            .iter()
            .rev()
            .find(|r| r.game == id || r.number.to_string() == id)?
            .clone();
        drop(s);
        Some(record_json(&r))
    }

    // --- The person's moves and new games, from the page ------------------------------

    /// The referee waits for the person's move in `game`: one of `legal`, within `time`
    /// (unlimited when `None`). The pit chosen on the page is sent to `reply`.
    pub fn await_person(
        &self,
        game: &str,
        legal: Vec<u8>,
        time: Option<Duration>,
        reply: oneshot::Sender<u8>,
    ) {
        self.change(|s| {
            s.pending = Some(Pending {
                game: game.to_string(),
                legal,
                time,
                since: Instant::now(),
                reply,
            });
        });
    }

    /// The referee no longer waits (the time ran out, or the game was stopped).
    pub fn stop_waiting(&self, game: &str) {
        let waiting = self.lock().pending.as_ref().is_some_and(|p| p.game == game);
        if waiting {
            self.change(|s| s.pending = None);
        }
    }

    /// The person chose `pit` in `game` on the page. Refused (with the reason) unless the
    /// referee waits for the person's move in that game and the move is legal.
    pub fn person_move(&self, game: &str, pit: i64) -> Result<(), String> {
        let mut s = self.lock();
        let Some(p) = &s.pending else {
            return Err(match s.person {
                Some(_) => "it is not your turn: wait for the engine's move".to_string(),
                None => "no person plays on this page".to_string(),
            });
        };
        if p.game != game {
            return Err(format!(
                "game {:?} is not the game being played ({:?}): reload the page",
                clean_text(game),
                p.game
            ));
        }
        if !p.legal.iter().any(|&l| i64::from(l) == pit) {
            let legal: Vec<String> = p.legal.iter().map(|l| l.to_string()).collect();
            return Err(format!(
                "pit {pit} cannot be sown now: the legal pits are {}",
                legal.join(", ")
            ));
        }
        let p = s.pending.take().expect("checked above");
        drop(s);
        // The referee may have stopped waiting a moment ago (its deadline): then the pit
        // is not taken, and the page learns the result from the state.
        let sent = p.reply.send(pit as u8).is_ok();
        self.change(|_| {});
        if sent {
            Ok(())
        } else {
            Err("the game is no longer waiting for this move".to_string())
        }
    }

    /// The page asks for the next game.
    pub fn new_game(&self) -> Result<(), String> {
        let mut s = self.lock();
        if !matches!(self.mode, Mode::Play | Mode::Watch) {
            return Err("games start by themselves here: this page only watches".to_string());
        }
        if !self.can_start_new(&s) {
            return Err(if s.ended.is_some() {
                "the session has ended: start kalaha play again".to_string()
            } else if s.starting {
                "the next game is already starting".to_string()
            } else {
                "the game is not over yet".to_string()
            });
        }
        s.starting = true;
        let gate = s.gate.clone();
        drop(s);
        if let Some(g) = gate {
            g.open();
        }
        self.change(|_| {});
        Ok(())
    }

    // --- The run, from the referee and the recorder -----------------------------------

    /// A game started or a sowing was played.
    pub fn observe(&self, update: &GameUpdate<'_>) {
        match update {
            GameUpdate::Started {
                setup,
                position,
                moves,
            } => {
                let (opening, _) = frames(setup.rules, moves);
                let board = Board {
                    game: setup.id.clone(),
                    number: setup.number,
                    south: setup.names[0].clone(),
                    north: setup.names[1].clone(),
                    rules: setup.rules,
                    frames: opening,
                    position: **position,
                    record: None,
                };
                let single = matches!(self.mode, Mode::Play | Mode::Watch);
                self.change(|s| {
                    if single {
                        s.boards.clear();
                        s.starting = false;
                        s.pending = None;
                    } else {
                        s.boards.retain(|b| b.game != board.game);
                    }
                    s.boards.push(board);
                    s.boards.sort_by_key(|b| b.number);
                });
            }
            GameUpdate::Moved {
                game,
                ply,
                record,
                before,
                after,
            } => {
                let Some((f, _)) = frame(before, record) else {
                    return;
                };
                self.change(|s| {
                    if let Some(b) = s.boards.iter_mut().find(|b| b.game == *game)
                        && b.record.is_none()
                        && b.frames.len() == *ply
                    {
                        b.frames.push(f);
                        b.position = **after;
                    }
                });
            }
        }
    }

    /// The run starts.
    pub fn start_run(&self, info: &StartInfo, tally: &Tally) {
        let standings = standings_json(tally);
        self.change(|s| {
            s.names = info.names.clone();
            s.total = info.total;
            s.finished = info.done;
            s.standings = standings;
        });
    }

    /// A game was recorded.
    pub fn game_finished(&self, record: &GameRecord) {
        let record = Arc::new(record.clone());
        let single = matches!(self.mode, Mode::Play | Mode::Watch);
        self.change(|s| {
            s.finished += 1;
            match s.boards.iter_mut().find(|b| b.game == record.game) {
                Some(b) if single => {
                    b.frames = record_frames(&record);
                    b.position = record.final_position;
                    b.record = Some(record.clone());
                }
                Some(_) => s.boards.retain(|b| b.game != record.game),
                None if single => {
                    // A game lost before it started (an engine that failed to start).
                    s.boards.clear();
                    s.starting = false;
                    s.boards.push(Board {
                        game: record.game.clone(),
                        number: record.number,
                        south: record.south.clone(),
                        north: record.north.clone(),
                        rules: record.rules,
                        frames: record_frames(&record),
                        position: record.final_position,
                        record: Some(record.clone()),
                    });
                }
                None => {}
            }
            if single {
                s.pending = None;
            }
            s.recent.push_back(record);
            while s.recent.len() > RECENT {
                s.recent.pop_front();
            }
        });
    }

    /// A game was stopped and not recorded.
    pub fn game_interrupted(&self, id: &str) {
        self.change(|s| {
            s.boards.retain(|b| b.game != id);
            if s.pending.as_ref().is_some_and(|p| p.game == id) {
                s.pending = None;
            }
        });
    }

    /// The standings of `tally`.
    pub fn set_standings(&self, tally: &Tally) {
        let standings = standings_json(tally);
        self.change(|s| {
            s.standings = standings;
        });
    }

    /// The run has ended: `why`, for the page.
    pub fn run_ended(&self, why: String) {
        self.change(|s| {
            s.ended = Some(why);
            s.pending = None;
            if !matches!(self.mode, Mode::Play | Mode::Watch) {
                s.boards.clear();
            }
        });
    }

    /// Games read from the results folder (`kalaha show --serve`): `count` of them, the
    /// last of which are `last`, and the scoreboard of all the games read so far.
    pub fn add_recorded(&self, count: u64, last: Vec<GameRecord>, tally: &Tally) {
        let standings = standings_json(tally);
        self.change(|s| {
            s.finished += count;
            s.recent.extend(last.into_iter().map(Arc::new));
            while s.recent.len() > RECENT {
                s.recent.pop_front();
            }
            s.standings = standings;
            s.names = tally.engines().iter().map(|e| e.name.clone()).collect();
        });
    }

    /// An observer that feeds this state.
    pub fn observer(self: &Arc<Self>) -> GameObserver {
        let me = self.clone();
        GameObserver::new(move |u| me.observe(u))
    }
}

/// The live state as a view of a run: every recorded game, the standings, the end.
pub struct LiveView {
    live: Arc<Live>,
    last_fit: Option<Instant>,
}

/// In a tournament the standings are refitted at most this often (and at the end).
const REFIT_EVERY: Duration = Duration::from_millis(500);

impl LiveView {
    pub fn new(live: Arc<Live>) -> LiveView {
        LiveView {
            live,
            last_fit: None,
        }
    }
}

impl View for LiveView {
    fn start(&mut self, info: &StartInfo, tally: &Tally) -> io::Result<()> {
        self.live.start_run(info, tally);
        self.last_fit = Some(Instant::now());
        Ok(())
    }

    fn event(&mut self, event: &Event<'_>, tally: &Tally) -> io::Result<Control> {
        match event {
            Event::GameFinished { record, .. } => {
                self.live.game_finished(record);
                let due = self.live.mode != Mode::Tournament
                    || self.last_fit.is_none_or(|t| t.elapsed() >= REFIT_EVERY);
                if due {
                    self.live.set_standings(tally);
                    self.last_fit = Some(Instant::now());
                }
            }
            Event::GameInterrupted { id } => self.live.game_interrupted(id),
        }
        Ok(Control::Continue)
    }

    fn observer(&mut self) -> Option<GameObserver> {
        Some(self.live.observer())
    }

    fn finish(&mut self, summary: &RunSummary, tally: &Tally) -> io::Result<()> {
        self.live.set_standings(tally);
        let why = if matches!(self.live.mode, Mode::Play | Mode::Watch) {
            let n = summary.played;
            format!("{n} game{} recorded", if n == 1 { "" } else { "s" })
        } else if summary.complete() {
            format!("the run is over: {} games played", summary.played)
        } else {
            format!("the run was stopped: {} games played", summary.played)
        };
        self.live.run_ended(why);
        Ok(())
    }
}

// --- JSON for the page --------------------------------------------------------------

#[derive(Serialize)]
struct SnapshotJson<'a> {
    version: u64,
    mode: Mode,
    title: &'a str,
    names: &'a [String],
    total: u64,
    finished: u64,
    ended: Option<&'a str>,
    person: Option<&'a str>,
    can_new: bool,
    starting: bool,
    boards: Vec<BoardJson<'a>>,
    standings: &'a [StandingJson],
    recent: Vec<SummaryJson<'a>>,
}

#[derive(Serialize)]
struct BoardJson<'a> {
    game: &'a str,
    number: u64,
    south: &'a str,
    north: &'a str,
    rules: Rules,
    rules_text: String,
    /// The side the person plays in this game, if any.
    person: Option<Side>,
    frames: &'a [Frame],
    position: BoardView,
    over: bool,
    /// The referee waits for the person's move: `legal` are the pits the person may sow.
    awaiting: bool,
    legal: &'a [u8],
    /// Milliseconds the person has left for this move, when limited.
    clock_ms: Option<u64>,
    result: Option<ResultJson>,
}

fn board_json<'a>(b: &'a Board, s: &'a State) -> BoardJson<'a> {
    let person = s.person.as_deref().and_then(|p| {
        if b.south == p {
            Some(Side::South)
        } else if b.north == p {
            Some(Side::North)
        } else {
            None
        }
    });
    let pending = s.pending.as_ref().filter(|p| p.game == b.game);
    BoardJson {
        game: &b.game,
        number: b.number,
        south: &b.south,
        north: &b.north,
        rules: b.rules,
        rules_text: rules_text(b.rules),
        person,
        frames: &b.frames,
        position: b.position.view(),
        over: b.record.is_some() || b.position.is_over(),
        awaiting: pending.is_some(),
        legal: pending.map_or(&[], |p| &p.legal),
        clock_ms: pending.and_then(|p| {
            p.time
                .map(|t| t.saturating_sub(p.since.elapsed()).as_millis() as u64)
        }),
        result: b.record.as_deref().map(result_json),
    }
}

#[derive(Serialize)]
struct GameJson<'a> {
    game: &'a str,
    number: u64,
    south: &'a str,
    north: &'a str,
    rules: Rules,
    rules_text: String,
    /// Sowings of the opening (the first frames).
    opening: usize,
    frames: &'a [Frame],
    result: Option<ResultJson>,
}

/// A recorded game with its frames, as JSON.
pub fn record_json(r: &GameRecord) -> String {
    let frames = record_frames(r);
    let json = GameJson {
        game: &r.game,
        number: r.number,
        south: &r.south,
        north: &r.north,
        rules: r.rules,
        rules_text: rules_text(r.rules),
        opening: r.opening.len(),
        frames: &frames,
        result: Some(result_json(r)),
    };
    serde_json::to_string(&json).unwrap_or_else(|_| "{}".to_string())
}

/// The rules in words: `6 pits, 4 seeds each`, and the variants that differ from the
/// defaults.
fn rules_text(r: Rules) -> String {
    let mut s = format!("{} pits, {} seeds each", r.pits(), r.seeds());
    if r.empty_capture() {
        s.push_str(", a last seed in an empty pit captures even alone");
    }
    match r.sweep() {
        crate::rules::Sweep::Owner => {}
        crate::rules::Sweep::EmptySide => {
            s.push_str(", the seeds left go to the side that ran out")
        }
        crate::rules::Sweep::None => s.push_str(", the seeds left count for no one"),
    }
    s
}

/// How a game ended, in data and in words.
#[derive(Serialize)]
struct ResultJson {
    result: &'static str,
    winner: Option<Side>,
    south_score: u16,
    north_score: u16,
    termination: &'static str,
    loser: Option<Side>,
    detail: String,
    text: String,
}

fn result_json(r: &GameRecord) -> ResultJson {
    ResultJson {
        result: r.result.as_str(),
        winner: r.result.winner(),
        south_score: r.south_score,
        north_score: r.north_score,
        termination: r.termination.as_str(),
        loser: r.loser,
        detail: clean_text(&r.detail).into_owned(),
        text: result_text(r),
    }
}

/// The end of a game in words: the final stores and who won, and how.
pub fn result_text(r: &GameRecord) -> String {
    let stores = format!(
        "{} (south) {} – {} {} (north)",
        r.south, r.south_score, r.north_score, r.north
    );
    let who = match r.result.winner() {
        Some(side) => format!("{} wins", r.name(side)),
        None => "a draw".to_string(),
    };
    let how = match (r.termination.fault(), r.loser_name()) {
        (Some(kind), Some(loser)) => {
            let what = kind.as_str().replace('_', " ");
            let detail = clean_text(&r.detail);
            if detail.is_empty() {
                format!(" ({loser} lost by {what})")
            } else {
                format!(" ({loser} lost by {what}: {detail})")
            }
        }
        _ if r.termination == crate::record::Termination::Adjudicated => {
            format!(" (adjudicated: {})", clean_text(&r.detail))
        }
        _ => String::new(),
    };
    format!("{stores}: {who}{how}")
}

#[derive(Serialize)]
struct SummaryJson<'a> {
    game: &'a str,
    number: u64,
    south: &'a str,
    north: &'a str,
    result: &'static str,
    south_score: u16,
    north_score: u16,
    termination: &'static str,
    plies: usize,
}

fn summary_json(r: &GameRecord) -> SummaryJson<'_> {
    SummaryJson {
        game: &r.game,
        number: r.number,
        south: &r.south,
        north: &r.north,
        result: r.result.as_str(),
        south_score: r.south_score,
        north_score: r.north_score,
        termination: r.termination.as_str(),
        plies: r.plies(),
    }
}

/// One line of the standings, as the leaderboards write it.
#[derive(Clone, Debug, Serialize)]
struct StandingJson {
    rank: usize,
    engine: String,
    elo: String,
    games: u64,
    wins: u64,
    draws: u64,
    losses: u64,
    score: String,
    margin: String,
}

fn standings_json(tally: &Tally) -> Vec<StandingJson> {
    if tally.games() == 0 {
        return Vec::new();
    }
    let Ok(s) = tally.standings(None) else {
        return Vec::new();
    };
    s.rows
        .iter()
        .map(|r| StandingJson {
            rank: r.rank,
            engine: r.engine.clone(),
            elo: pm(r.elo, 1),
            games: r.wdl.games(),
            wins: r.wdl.wins,
            draws: r.wdl.draws,
            losses: r.wdl.losses,
            score: num(100.0 * r.wdl.score(), 1),
            margin: pm(r.margin, 2),
        })
        .collect()
}

/// The time a person has for a move, `None` when it is unlimited (no clock).
pub fn person_time(limit: TimeLimit, unlimited: Duration) -> Option<Duration> {
    match limit {
        TimeLimit::MoveTime(t) if t >= unlimited => None,
        l => Some(l.available()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{GameResult, MoveRecord, Termination};
    use crate::referee::GameSetup;
    use crate::results::sample_record;

    fn setup(id: &str, number: u64) -> GameSetup {
        GameSetup {
            id: id.into(),
            number,
            round: 1,
            pair: 1,
            names: ["human".into(), "<b>bot</b>".into()],
            rules: Rules::default(),
            opening: Vec::new(),
            time: [crate::record::TimeControl::MoveTime(Duration::from_secs(1)); 2],
            margin: Duration::ZERO,
            adjudication: Default::default(),
        }
    }

    fn play(live: &Live, game: &str, ply: usize, before: &Position, pit: u8) -> Position {
        let after = before.play(pit as i64).unwrap();
        let record = MoveRecord {
            side: before.to_move(),
            pit,
            opening: false,
            time_ms: 3,
            info: Vec::new(),
            info_dropped: 0,
        };
        live.observe(&GameUpdate::Moved {
            game,
            ply,
            record: &record,
            before,
            after: &after,
        });
        after
    }

    fn json(live: &Live) -> serde_json::Value {
        serde_json::from_str(&live.snapshot()).unwrap()
    }

    #[test]
    fn a_person_moves_only_legal_pits_in_turn() {
        let live = Live::new(Mode::Play, "t", None);
        let gate = Gate::new(true);
        live.set_session(Some("human".into()), gate.clone());
        let start = Position::start(Rules::default());
        let s = setup("g-1", 1);
        live.observe(&GameUpdate::Started {
            setup: &s,
            position: &start,
            moves: &[],
        });
        assert!(
            live.person_move("g-1", 3)
                .unwrap_err()
                .contains("not your turn")
        );
        let (tx, mut rx) = oneshot::channel();
        live.await_person("g-1", start.legal_moves().collect(), None, tx);
        let v = json(&live);
        assert_eq!(v["boards"][0]["person"], "south");
        assert_eq!(v["boards"][0]["awaiting"], true);
        assert_eq!(v["boards"][0]["legal"].as_array().unwrap().len(), 6);
        assert_eq!(v["boards"][0]["north"], "<b>bot</b>");
        let e = live.person_move("g-1", 7).unwrap_err();
        assert!(e.contains("legal pits are 1, 2, 3, 4, 5, 6"), "{e}");
        assert!(live.person_move("g-2", 3).is_err());
        assert!(rx.try_recv().is_err());
        live.person_move("g-1", 3).unwrap();
        assert_eq!(rx.try_recv().unwrap(), 3);
        assert!(live.person_move("g-1", 3).is_err(), "one move per request");
        // The sowing arrives from the referee; a repeated or skipped ply is ignored.
        let after = play(&live, "g-1", 0, &start, 3);
        play(&live, "g-1", 0, &start, 3);
        play(&live, "g-1", 5, &after, 1);
        let v = json(&live);
        let frames = v["boards"][0]["frames"].as_array().unwrap();
        assert_eq!(frames.len(), 1);
        assert_eq!(frames[0]["note"], "extra turn");
        assert_eq!(v["can_new"], false);
        assert!(live.new_game().unwrap_err().contains("not over"));
    }

    #[test]
    fn the_next_game_starts_when_the_page_asks() {
        let live = Live::new(Mode::Play, "t", None);
        let gate = Gate::new(true);
        live.set_session(Some("human".into()), gate.clone());
        // The first game may start at once.
        assert_eq!(gate.permits.available_permits(), 1);
        assert_eq!(json(&live)["can_new"], false);
        gate.permits.try_acquire().unwrap().forget();
        let s = setup("g-1", 1);
        let start = Position::start(Rules::default());
        live.observe(&GameUpdate::Started {
            setup: &s,
            position: &start,
            moves: &[],
        });
        let mut record = sample_record("g", 1, "human", "<b>bot</b>");
        record.result = GameResult::NorthWins;
        record.termination = Termination::Fault(crate::record::FaultKind::Timeout);
        record.loser = Some(Side::South);
        record.detail = "no move within 1s\u{1b}[2J".into();
        live.game_finished(&record);
        let v = json(&live);
        assert_eq!(v["can_new"], true);
        let text = v["boards"][0]["result"]["text"].as_str().unwrap();
        assert_eq!(
            text,
            "human (south) 1 – 0 <b>bot</b> (north): <b>bot</b> wins (human lost by timeout: \
             no move within 1s\\u{1b}[2J)"
        );
        assert_eq!(v["recent"][0]["game"], "g-1");
        live.new_game().unwrap();
        assert_eq!(gate.permits.available_permits(), 1);
        assert!(live.new_game().unwrap_err().contains("already starting"));
        assert_eq!(gate.permits.available_permits(), 1);
        let s2 = setup("g-2", 2);
        live.observe(&GameUpdate::Started {
            setup: &s2,
            position: &start,
            moves: &[],
        });
        let v = json(&live);
        assert_eq!(v["boards"].as_array().unwrap().len(), 1);
        assert_eq!(v["boards"][0]["game"], "g-2");
        assert_eq!(v["starting"], false);
        // A person on a clock starts the first game from the page.
        let clocked = Live::new(Mode::Play, "t", None);
        let closed = Gate::new(false);
        clocked.set_session(Some("human".into()), closed.clone());
        assert_eq!(json(&clocked)["can_new"], true);
        clocked.new_game().unwrap();
        assert_eq!(closed.permits.available_permits(), 1);
        assert_eq!(json(&clocked)["can_new"], false);
        // The finished game stays replayable.
        let g: serde_json::Value = serde_json::from_str(&live.game_json("1").unwrap()).unwrap();
        assert_eq!(g["game"], "g-1");
        assert!(live.game_json("g-9").is_none());
    }

    #[test]
    fn the_time_left_is_fresh_in_every_snapshot() {
        let live = Live::new(Mode::Play, "t", None);
        live.set_session(Some("human".into()), Gate::new(true));
        let s = setup("g-1", 1);
        let start = Position::start(Rules::default());
        live.observe(&GameUpdate::Started {
            setup: &s,
            position: &start,
            moves: &[],
        });
        let (tx, _rx) = oneshot::channel();
        live.await_person("g-1", vec![1, 2], Some(Duration::from_secs(5)), tx);
        let first = json(&live)["boards"][0]["clock_ms"].as_u64().unwrap();
        std::thread::sleep(Duration::from_millis(20));
        let later = json(&live)["boards"][0]["clock_ms"].as_u64().unwrap();
        assert!(first <= 5000 && later + 15 <= first, "{first} then {later}");
    }

    #[test]
    fn a_tournament_shows_the_games_in_progress() {
        let live = Live::new(Mode::Tournament, "t", None);
        let start = Position::start(Rules::default());
        for n in [2, 1] {
            let s = setup(&format!("g-{n}"), n);
            live.observe(&GameUpdate::Started {
                setup: &s,
                position: &start,
                moves: &[],
            });
        }
        let v = json(&live);
        assert_eq!(v["boards"][0]["game"], "g-1");
        assert_eq!(v["boards"][1]["game"], "g-2");
        assert!(live.new_game().is_err());
        live.game_finished(&sample_record("g", 1, "a", "b"));
        live.game_interrupted("g-2");
        let v = json(&live);
        assert!(v["boards"].as_array().unwrap().is_empty());
        assert_eq!(v["finished"], 1);
        let version = v["version"].as_u64().unwrap();
        // The snapshot is made once per version.
        assert!(Arc::ptr_eq(&live.snapshot(), &live.snapshot()));
        live.run_ended("over".into());
        assert!(json(&live)["version"].as_u64().unwrap() > version);
    }
}
