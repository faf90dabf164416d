//! The state behind the page: the boards of the games being played (or, for a person, the
//! current game), the recent finished games, the standings, and the person's move when
//! one is awaited. It is fed by the referee's [`GameObserver`] (each sowing as it is
//! played), by the tournament's [`View`] events (each game recorded) and by the page's
//! requests; every change bumps a version that the page's event stream waits on.
//!
//! Everything is kept as data (names as they are); the page inserts text with
//! `textContent` only, so nothing from an engine is ever read as markup.

use super::frames::{Frame, frame, frames, record_frames};
use super::guide::Variant;
use super::matches::{Format, Match, parse_choice};
use crate::record::{GameRecord, clean_text};
use crate::referee::{GameObserver, GameUpdate};
use crate::rules::{Position, Rules};
use crate::stats::Tally;
use crate::tournament::events::{Control, Event, RunSummary, StartInfo, View};
use serde::Serialize;
use std::collections::VecDeque;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::sync::{Semaphore, oneshot, watch};

mod json;
use json::{
    GameJson, SnapshotJson, StandingJson, board_json, result_json, rules_text, standings_json,
    summary_json,
};
pub use json::{person_time, record_json, result_text};

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

/// What the person chose on the page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Choice {
    /// Sow this pit.
    Pit(u8),
    /// Give the game up.
    Resign,
}

/// The person's move the referee waits for.
#[derive(Debug)]
struct Pending {
    game: String,
    legal: Vec<u8>,
    /// The time the person has for this move, when limited, and since when.
    time: Option<Duration>,
    since: Instant,
    reply: oneshot::Sender<Choice>,
}

/// A game on a board: in progress, or (for a person) the last one, finished.
#[derive(Debug)]
struct Board {
    game: String,
    number: u64,
    south: String,
    north: String,
    rules: Rules,
    /// The position the game started from, when not the rules' own.
    start: Option<Position>,
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
    /// The game the person has resigned, if it is still being ended.
    resigned: Option<String>,
    /// The match the games of the session make (or made), if any.
    matched: Option<Match>,
    /// The session's matches before it, in order.
    past_matches: Vec<Match>,
    /// The rule variant of the guide, when it is not the standard one.
    guide: Option<Variant>,
    /// The page opens on the guide (`kalaha play --learn`).
    learn: bool,
    /// The value of the start position for the first player, once known.
    start_value: Option<i32>,
    snapshot: Option<(u64, Arc<str>)>,
}

/// The state behind the page, shared by the game loop, the recorder and the server.
#[derive(Debug)]
pub struct Live {
    mode: Mode,
    dir: Option<PathBuf>,
    state: Mutex<State>,
    version: watch::Sender<u64>,
    /// The event streams open, and the version each has sent (at least).
    followers: Mutex<(u64, Vec<(u64, u64)>)>,
}

/// An event stream, known to its [`Live`] until dropped: see [`Live::wait_sent`].
pub struct Follower {
    live: Arc<Live>,
    id: u64,
}

impl Follower {
    /// The stream has sent the state of `version` (or a later one).
    pub fn sent(&self, version: u64) {
        let mut f = self
            .live
            .followers
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(entry) = f.1.iter_mut().find(|(id, _)| *id == self.id) {
            entry.1 = entry.1.max(version);
        }
    }
}

impl Drop for Follower {
    fn drop(&mut self) {
        let mut f = self
            .live
            .followers
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        f.1.retain(|(id, _)| *id != self.id);
    }
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
                resigned: None,
                matched: None,
                past_matches: Vec::new(),
                guide: None,
                learn: false,
                start_value: None,
                snapshot: None,
            }),
            version: watch::Sender::new(0),
            followers: Mutex::new((0, Vec::new())),
        })
    }

    /// Registers an event stream.
    pub fn follow(self: &Arc<Self>) -> Follower {
        let mut f = self.followers.lock().unwrap_or_else(|e| e.into_inner());
        let id = f.0;
        f.0 += 1;
        f.1.push((id, 0));
        Follower {
            live: self.clone(),
            id,
        }
    }

    /// Waits (at most `limit`) until every open event stream has sent the state as it is
    /// now, so that a page learns of the end before the process goes. True if they all did.
    pub fn wait_sent(&self, limit: Duration) -> bool {
        let now = *self.version.borrow();
        let start = Instant::now();
        loop {
            let behind = {
                let f = self.followers.lock().unwrap_or_else(|e| e.into_inner());
                f.1.iter().any(|(_, sent)| *sent < now)
            };
            if !behind {
                return true;
            }
            if start.elapsed() >= limit {
                return false;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
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

    /// The page's title.
    pub fn set_title(&self, title: String) {
        self.change(|s| s.title = title);
    }

    /// The value of the start position for the first player (`None`: not known).
    pub fn set_start_value(&self, value: Option<i32>) {
        self.change(|s| s.start_value = value);
    }

    /// The guide follows `variant` (the session's), and the page opens on it if `learn`.
    pub fn set_guide(&self, variant: Variant, learn: bool) {
        self.change(|s| {
            s.guide = Some(variant);
            s.learn = learn;
        });
    }

    /// The rule variant of the guide: the session's, else the standard one.
    pub fn guide_variant(&self) -> Variant {
        self.lock()
            .guide
            .unwrap_or_else(|| Variant::of(&Rules::default()))
    }

    /// The session's games make the match `m` (of `--match`), from its first game on.
    pub fn begin_match(&self, m: Match) {
        self.change(|s| {
            if let Some(old) = s.matched.take() {
                s.past_matches.push(old);
            }
            s.matched = Some(m);
        });
    }

    /// Counts a finished game in the match in progress, if it is one of its games: then
    /// every match of the session (for `match.csv`) and the one in progress.
    pub fn count_in_match(&self, record: &GameRecord) -> Option<(Vec<Match>, Match)> {
        let mut s = self.lock();
        let counted = s.matched.as_mut().is_some_and(|m| m.add(record));
        if !counted {
            return None;
        }
        let current = s.matched.clone()?;
        let mut all = s.past_matches.clone();
        all.push(current.clone());
        drop(s);
        self.change(|_| {});
        Some((all, current))
    }

    /// The page chooses how the next games are played: `choice` is `single` (single games)
    /// or a match format (`best-of-3`, ...). Refused while a match is being played. A match
    /// starts with the game shown if nothing has been sown in it yet, else with the next
    /// game; when no game is in progress, the next one starts at once.
    pub fn choose_match(&self, choice: &str) -> Result<(), String> {
        let format: Option<Format> = parse_choice(choice)?;
        let mut s = self.lock();
        if !matches!(self.mode, Mode::Play | Mode::Watch) {
            return Err("games start by themselves here: this page only watches".to_string());
        }
        if s.ended.is_some() {
            return Err("the session has ended: start kalaha play again".to_string());
        }
        if s.matched.as_ref().is_some_and(|m| !m.over) {
            return Err("a match is being played: it ends when it is decided".to_string());
        }
        let [a, b, ..] = s.names.as_slice() else {
            return Err("the players are not known yet: wait for the engines".to_string());
        };
        let names = [a.clone(), b.clone()];
        let shown = s.boards.first();
        let in_progress = shown.is_some_and(|b| b.record.is_none());
        let untouched = shown.is_some_and(|b| b.record.is_none() && b.frames.is_empty());
        let first_game = match shown {
            Some(b) if untouched && !s.starting => b.number,
            Some(b) => b.number + 1,
            None => 1,
        };
        if let Some(old) = s.matched.take() {
            s.past_matches.push(old);
        }
        s.matched = format.map(|f| Match::from_game(f, names, first_game));
        // Between games, the next one starts: the match (or the single games) begins.
        let gate = s.gate.clone();
        let start = !in_progress && !s.starting && gate.as_ref().is_some_and(|g| !g.is_open());
        if start {
            s.starting = true;
        }
        drop(s);
        if start && let Some(g) = gate {
            g.open();
        }
        self.change(|_| {});
        Ok(())
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
        let can_resign = self.resignable(s).is_some();
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
            can_resign,
            can_choose_match: self.can_choose_match(s),
            learn: s.learn,
            matched: s.matched.as_ref(),
            start_value: s.start_value,
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
        // A person may leave a game at any moment (it is resigned); two engines finish
        // theirs first.
        let over = s.boards.iter().all(|b| b.record.is_some());
        if s.matched.as_ref().is_some_and(|m| m.over) {
            return false;
        }
        match self.mode {
            Mode::Play => s.ended.is_none() && !s.starting && !gate.is_open(),
            Mode::Watch => s.ended.is_none() && !s.starting && !gate.is_open() && over,
            Mode::Tournament | Mode::Results => false,
        }
    }

    /// Whether the page may choose how the next games are played: in a session still going
    /// on, once the players are known, when no match is being played.
    fn can_choose_match(&self, s: &State) -> bool {
        matches!(self.mode, Mode::Play | Mode::Watch)
            && s.gate.is_some()
            && s.ended.is_none()
            && s.names.len() >= 2
            && s.matched.as_ref().is_none_or(|m| m.over)
    }

    /// The person's game in progress, if any, that the person has not resigned yet.
    fn resignable<'a>(&self, s: &'a State) -> Option<&'a Board> {
        if self.mode != Mode::Play || s.person.is_none() || s.ended.is_some() {
            return None;
        }
        s.boards
            .iter()
            .find(|b| b.record.is_none() && s.resigned.as_deref() != Some(b.game.as_str()))
    }

    /// Marks `game` resigned (the caller holds the lock) and tells the referee if it waits
    /// for the person's move in it.
    fn resign_locked(s: &mut State, game: &str) {
        s.resigned = Some(game.to_string());
        if s.pending.as_ref().is_some_and(|p| p.game == game) {
            let p = s.pending.take().expect("checked above");
            let _ = p.reply.send(Choice::Resign);
        }
    }

    /// The person gives up `game`, in progress: it is recorded as a loss by resignation,
    /// at once if the person is to move, else as soon as the engine has sown.
    pub fn resign(&self, game: &str) -> Result<(), String> {
        let mut s = self.lock();
        let Some(b) = self.resignable(&s) else {
            return Err(match (self.mode, s.person.is_some()) {
                (Mode::Play, true) => "no game of yours is in progress".to_string(),
                _ => "no person plays on this page".to_string(),
            });
        };
        if b.game != game {
            return Err(format!(
                "game {:?} is not the game being played ({:?}): reload the page",
                clean_text(game),
                b.game
            ));
        }
        Self::resign_locked(&mut s, game);
        drop(s);
        self.change(|_| {});
        Ok(())
    }

    /// Whether the person has resigned `game`.
    pub fn has_resigned(&self, game: &str) -> bool {
        self.lock().resigned.as_deref() == Some(game)
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
                start: b.start.map(|p| p.view()),
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
        reply: oneshot::Sender<Choice>,
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
        let sent = p.reply.send(Choice::Pit(pit as u8)).is_ok();
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
            } else if s.matched.as_ref().is_some_and(|m| m.over) {
                "the match is over: start kalaha play again for another".to_string()
            } else if s.starting {
                "the next game is already starting".to_string()
            } else {
                "the game is not over yet".to_string()
            });
        }
        // A game in progress is given up first.
        if let Some(game) = self.resignable(&s).map(|b| b.game.clone()) {
            Self::resign_locked(&mut s, &game);
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
                let start = setup
                    .opening
                    .start_position(setup.rules)
                    .expect("openings are checked before the game");
                let (opening, _) = frames(start, moves);
                let board = Board {
                    start: setup.opening.start.is_some().then_some(start),
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
                        s.resigned = None;
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
            let idle = s.boards.iter().all(|b| b.record.is_some());
            match s.boards.iter_mut().find(|b| b.game == record.game) {
                Some(b) if single => {
                    b.frames = record_frames(&record);
                    b.position = record.final_position;
                    b.record = Some(record.clone());
                }
                Some(_) => s.boards.retain(|b| b.game != record.game),
                // The next game may have started already (the page asked for it before
                // this one ended): its board stays.
                None if single && idle => {
                    // A game lost before it started (an engine that failed to start).
                    s.boards.clear();
                    s.starting = false;
                    s.boards.push(Board {
                        game: record.game.clone(),
                        number: record.number,
                        south: record.south.clone(),
                        north: record.north.clone(),
                        rules: record.rules,
                        start: record
                            .start
                            .is_some()
                            .then(|| record.start_position().ok())
                            .flatten(),
                        frames: record_frames(&record),
                        position: record.final_position,
                        record: Some(record.clone()),
                    });
                }
                None => {}
            }
            if single && s.pending.as_ref().is_some_and(|p| p.game == record.game) {
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
        let played = crate::record::counted(summary.played, "game");
        let why = if matches!(self.live.mode, Mode::Play | Mode::Watch) {
            format!("{played} recorded")
        } else if summary.complete() {
            format!("the run is over: {played} played")
        } else {
            format!("the run was stopped: {played} played")
        };
        let why = match (&self.live.dir, self.live.mode) {
            (Some(dir), Mode::Tournament) => format!(
                "{why}; run finished: results in {}",
                crate::record::shown_path(dir)
            ),
            _ => why,
        };
        self.live.run_ended(why);
        // The process ends next: the pages that follow the run see its end first.
        self.live.wait_sent(FAREWELL);
        Ok(())
    }
}

/// How long the end of a run waits for its pages to be sent the final state.
const FAREWELL: Duration = Duration::from_secs(3);

#[cfg(test)]
mod tests;
