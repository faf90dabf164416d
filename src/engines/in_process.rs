//! A built-in engine playing inside the referee's process: a [`Contestant`] over a
//! [`Player`], with no process and no pipes. Tests use it (with scripted misbehaviour) to
//! drive the referee and the runner; it plays by the same rules as a real engine, since the
//! referee checks its moves and its time like any other.

use super::Player;
use crate::record::{Fault, SideResult, Termination, TimeLimit};
use crate::referee::{Contestant, Reply};
use crate::rules::{Move, Position, Rules, Side};
use std::time::{Duration, Instant};

/// Something an in-process engine does wrong on purpose.
#[derive(Clone, Debug)]
pub enum Misbehaviour {
    /// Answers this pit instead of its own choice.
    Illegal(i64),
    /// Fails the request with this fault.
    Fail(Fault),
    /// Waits this long before answering.
    Delay(Duration),
}

/// A [`Player`] as a [`Contestant`].
pub struct InProcess {
    player: Box<dyn Player>,
    /// What to do wrong, by the number of the `go` (0-based, counted over all games).
    script: Vec<(usize, Misbehaviour)>,
    gos: usize,
    /// Every `game_over` received: game id, result and termination.
    pub game_overs: Vec<(String, SideResult, Termination)>,
}

impl InProcess {
    pub fn new(player: Box<dyn Player>) -> InProcess {
        InProcess {
            player,
            script: Vec::new(),
            gos: 0,
            game_overs: Vec::new(),
        }
    }

    /// A built-in engine by name (`None` for an unknown name).
    pub fn builtin(name: &str) -> Option<InProcess> {
        super::builtin(name).map(InProcess::new)
    }

    /// Misbehaves on the `n`-th `go` (0-based).
    pub fn misbehave_at(mut self, n: usize, m: Misbehaviour) -> InProcess {
        self.script.push((n, m));
        self
    }

    /// Misbehaves on every `go`.
    pub fn misbehave_always(mut self, m: Misbehaviour) -> InProcess {
        self.script.push((usize::MAX, m));
        self
    }

    fn misbehaviour(&self, n: usize) -> Option<&Misbehaviour> {
        self.script
            .iter()
            .find(|(at, _)| *at == n || *at == usize::MAX)
            .map(|(_, m)| m)
    }
}

fn move_line(pit: i64) -> String {
    format!("{{\"type\":\"move\",\"pit\":{pit}}}")
}

impl Contestant for InProcess {
    async fn new_game(
        &mut self,
        game: &str,
        rules: Rules,
        _start: Option<&Position>,
        side: Side,
    ) -> Result<(), Fault> {
        self.player.new_game(game, rules, side);
        Ok(())
    }

    async fn go(
        &mut self,
        pos: &Position,
        moves: &[Move],
        time: TimeLimit,
        _deadline: Duration,
    ) -> Result<Reply, Fault> {
        let started = Instant::now();
        let n = self.gos;
        self.gos += 1;
        let mut infos = Vec::new();
        let mut pit = i64::from(
            self.player
                .choose_move(pos, moves, Some(time), &mut |i| infos.push(i)),
        );
        match self.misbehaviour(n).cloned() {
            Some(Misbehaviour::Illegal(p)) => pit = p,
            Some(Misbehaviour::Fail(f)) => return Err(f),
            Some(Misbehaviour::Delay(d)) => tokio::time::sleep(d).await,
            None => {}
        }
        Ok(Reply {
            pit,
            line: move_line(pit),
            infos,
            infos_dropped: 0,
            elapsed: started.elapsed(),
        })
    }

    async fn game_over(
        &mut self,
        game: &str,
        result: SideResult,
        _south: u16,
        _north: u16,
        termination: Termination,
    ) -> Result<(), Fault> {
        self.game_overs
            .push((game.to_string(), result, termination));
        Ok(())
    }
}
