//! The person's side of the page: the gate before each game, the moves and resignations
//! the page sends, and the new games it asks for.

use super::*;

/// Lets the next game of a session start when the page asks for it: the seat that is told
/// about a game first waits here.
#[derive(Debug)]
pub(crate) struct Gate {
    pub(super) permits: Semaphore,
}

impl Gate {
    /// A gate for a session whose first game starts at once when `open`, else when the
    /// page asks (a person on a clock: the clock must not run before the page is read).
    pub(crate) fn new(open: bool) -> Arc<Gate> {
        Arc::new(Gate {
            permits: Semaphore::new(usize::from(open)),
        })
    }

    pub(super) fn is_open(&self) -> bool {
        self.permits.available_permits() > 0
    }

    /// Waits until a game may start, and uses up that permission.
    pub(crate) async fn wait(&self) {
        if let Ok(p) = self.permits.acquire().await {
            p.forget();
        }
    }

    pub(super) fn open(&self) {
        if self.permits.available_permits() == 0 {
            self.permits.add_permits(1);
        }
    }
}

/// What the person chose on the page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Choice {
    /// Sow this pit.
    Pit(u8),
    /// Give the game up.
    Resign,
}

impl Live {
    /// Whether the page may start the next game: the one shown is over (or none was
    /// played, and the first waits for the page) and no other is starting.
    pub(super) fn can_start_new(&self, s: &State) -> bool {
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
    pub(super) fn can_choose_match(&self, s: &State) -> bool {
        matches!(self.mode, Mode::Play | Mode::Watch)
            && s.gate.is_some()
            && s.ended.is_none()
            && s.names.len() >= 2
            && s.matched.as_ref().is_none_or(|m| m.over)
    }

    /// The person's game in progress, if any, that the person has not resigned yet.
    pub(super) fn resignable<'a>(&self, s: &'a State) -> Option<&'a Board> {
        if self.mode != Mode::Play || s.person.is_none() || s.ended.is_some() {
            return None;
        }
        s.boards
            .iter()
            .find(|b| b.record.is_none() && s.resigned.as_deref() != Some(b.game.as_str()))
    }

    /// Marks `game` resigned (the caller holds the lock) and tells the referee if it waits
    /// for the person's move in it.
    pub(super) fn resign_locked(s: &mut State, game: &str) {
        s.resigned = Some(game.to_string());
        if s.pending.as_ref().is_some_and(|p| p.game == game) {
            let p = s.pending.take().expect("checked above");
            let _ = p.reply.send(Choice::Resign);
        }
    }

    /// The person gives up `game`, in progress: it is recorded as a loss by resignation,
    /// at once if the person is to move, else as soon as the engine has sown.
    pub(crate) fn resign(&self, game: &str) -> Result<(), String> {
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
    pub(crate) fn has_resigned(&self, game: &str) -> bool {
        self.lock().resigned.as_deref() == Some(game)
    }

    /// The referee waits for the person's move in `game`: one of `legal`, within `time`
    /// (unlimited when `None`). The pit chosen on the page is sent to `reply`.
    pub(crate) fn await_person(
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
    pub(crate) fn stop_waiting(&self, game: &str) {
        let waiting = self.lock().pending.as_ref().is_some_and(|p| p.game == game);
        if waiting {
            self.change(|s| s.pending = None);
        }
    }

    /// The person chose `pit` in `game` on the page. Refused (with the reason) unless the
    /// referee waits for the person's move in that game and the move is legal.
    pub(crate) fn person_move(&self, game: &str, pit: i64) -> Result<(), String> {
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
    pub(crate) fn new_game(&self) -> Result<(), String> {
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
}
