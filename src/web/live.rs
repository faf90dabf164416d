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
use crate::results::RunKind;
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
mod person;
mod run;
use json::{
    GameJson, SnapshotJson, StandingJson, board_json, result_json, rules_text, standings_json,
    summary_json,
};
pub(crate) use json::{person_time, record_json, result_text};
pub(crate) use person::{Choice, Gate};
pub(crate) use run::LiveView;

/// What the page is showing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Mode {
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
pub(crate) const RECENT: usize = 200;

/// Finished games listed on the page.
const LISTED: usize = 100;

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
    /// The verdict of the run's test, once given (an SPRT's).
    verdict: Option<String>,
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
pub(crate) struct Live {
    mode: Mode,
    dir: Option<PathBuf>,
    state: Mutex<State>,
    version: watch::Sender<u64>,
    /// The event streams open, and the version each has sent (at least).
    followers: Mutex<(u64, Vec<(u64, u64)>)>,
}

/// An event stream, known to its [`Live`] until dropped: see [`Live::wait_sent`].
pub(crate) struct Follower {
    live: Arc<Live>,
    id: u64,
}

impl Follower {
    /// The stream has sent the state of `version` (or a later one).
    pub(crate) fn sent(&self, version: u64) {
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
    pub(crate) fn new(mode: Mode, title: impl Into<String>, dir: Option<PathBuf>) -> Arc<Live> {
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
                verdict: None,
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
    pub(crate) fn follow(self: &Arc<Self>) -> Follower {
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
    pub(crate) fn wait_sent(&self, limit: Duration) -> bool {
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

    pub(crate) fn mode(&self) -> Mode {
        self.mode
    }

    /// The results folder, if any.
    pub(crate) fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// A receiver that sees every change of the state.
    pub(crate) fn subscribe(&self) -> watch::Receiver<u64> {
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
    pub(crate) fn set_title(&self, title: String) {
        self.change(|s| s.title = title);
    }

    /// The value of the start position for the first player (`None`: not known).
    pub(crate) fn set_start_value(&self, value: Option<i32>) {
        self.change(|s| s.start_value = value);
    }

    /// The guide follows `variant` (the session's), and the page opens on it if `learn`.
    pub(crate) fn set_guide(&self, variant: Variant, learn: bool) {
        self.change(|s| {
            s.guide = Some(variant);
            s.learn = learn;
        });
    }

    /// The rule variant of the guide: the session's, else the standard one.
    pub(crate) fn guide_variant(&self) -> Variant {
        self.lock()
            .guide
            .unwrap_or_else(|| Variant::of(&Rules::default()))
    }

    /// The session's games make the match `m` (of `--match`), from its first game on.
    pub(crate) fn begin_match(&self, m: Match) {
        self.change(|s| {
            if let Some(old) = s.matched.take() {
                s.past_matches.push(old);
            }
            s.matched = Some(m);
        });
    }

    /// Counts a finished game in the match in progress, if it is one of its games: then
    /// every match of the session (for `match.csv`) and the one in progress.
    pub(crate) fn count_in_match(&self, record: &GameRecord) -> Option<(Vec<Match>, Match)> {
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
    pub(crate) fn choose_match(&self, choice: &str) -> Result<(), String> {
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
    pub(crate) fn set_session(&self, person: Option<String>, gate: Arc<Gate>) {
        self.change(|s| {
            s.person = person;
            s.gate = Some(gate);
        });
    }

    /// The state as the page reads it (JSON), made once per version (each time while a
    /// person's clock runs, since it holds the time left).
    pub(crate) fn snapshot(&self) -> Arc<str> {
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
            verdict: s.verdict.as_deref(),
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

    /// The game `id` (or number) with its frames, as JSON, from memory; `None` when it is
    /// not there (look in the results folder then).
    pub(crate) fn game_json(&self, id: &str) -> Option<String> {
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
}

#[cfg(test)]
mod tests;
