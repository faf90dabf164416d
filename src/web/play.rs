//! A session of `kalaha play`: a person (or a second engine) against an engine, one game
//! at a time, each started from the page. The person is one more [`Contestant`]: the
//! referee asks it for moves like any engine, checks them with the rules and keeps its
//! clock (none unless one is set). The session is a tournament of two with an open-ended
//! schedule where the seats swap every game, run by the tournament's own game loop and
//! recorder, so every game lands in a results folder like a match's.

use super::live::{Choice, Gate, Live, person_time};
use crate::record::{
    Fault, FaultKind, MAX_TIME, SideResult, Termination, TimeControl, TimeLimit, format_duration,
};
use crate::referee::{Contestant, Reply};
use crate::results::{Claim, RunKind};
use crate::rules::{Move, Position, Rules, Side};
use crate::stats::Tally;
use crate::tournament::config::{EngineEntry, TournamentConfig};
use crate::tournament::events::{RunSummary, StartInfo, View};
use crate::tournament::launcher::{ProcessLauncher, RunningEngine};
use crate::tournament::run::Launcher;
use crate::tournament::schedule::ScheduledGame;
use crate::tournament::spec::{EngineSpec, Identity, NameSource, ResolvedEngine, dedupe_names};
use crate::tournament::{Run, TournamentError};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

/// The move time of a person without a clock: the longest time any setting takes (a
/// day), so the referee's deadline never comes in practice.
pub(crate) const NO_CLOCK: Duration = MAX_TIME;

/// How long the solver may look for the value of the start position.
const START_VALUE_TIME: Duration = Duration::from_secs(2);

/// The exact value of the start position for the first player (stores included, under
/// perfect play by both), when known: Kalah(6,4) of the standard rules is +8 (`kalaha
/// solve` takes minutes to prove it), other boards are solved if that takes at most `time`.
pub(crate) fn start_value(rules: Rules, time: Duration) -> Option<i32> {
    if rules == Rules::default() {
        return Some(8);
    }
    let budget = crate::solver::Budget {
        deadline: Some(Instant::now() + time),
        max_nodes: None,
    };
    crate::solver::Solver::new(16)
        .solve_within(&Position::start(rules), budget)
        .map(|s| s.value)
}

/// What `tournament.toml` says the person is.
const PERSON_COMMAND: &str = "a person, on the page of kalaha play";

/// The person's seat: the moves come from the page.
pub(crate) struct Person {
    live: Arc<Live>,
    game: String,
}

/// Clears the awaited move when the referee stops waiting (a deadline, an interruption).
struct StopWaiting<'a> {
    live: &'a Live,
    game: &'a str,
}

impl Drop for StopWaiting<'_> {
    fn drop(&mut self) {
        self.live.stop_waiting(self.game);
    }
}

impl Contestant for Person {
    async fn new_game(
        &mut self,
        game: &str,
        _rules: Rules,
        _start: Option<&Position>,
        _side: Side,
    ) -> Result<(), Fault> {
        self.game = game.to_string();
        Ok(())
    }

    async fn go(
        &mut self,
        pos: &Position,
        _moves: &[Move],
        time: TimeLimit,
        deadline: Duration,
    ) -> Result<Reply, Fault> {
        let started = Instant::now();
        let resigned = || Fault::new(FaultKind::Crash, "the person resigned");
        if self.live.has_resigned(&self.game) {
            return Err(resigned());
        }
        let (tx, rx) = oneshot::channel();
        self.live.await_person(
            &self.game,
            pos.legal_moves().collect(),
            person_time(time, NO_CLOCK),
            tx,
        );
        let _waiting = StopWaiting {
            live: &self.live,
            game: &self.game,
        };
        let pit = match tokio::time::timeout(deadline, rx).await {
            Ok(Ok(Choice::Pit(pit))) => pit,
            // The referee asks [`Contestant::resigned`] before it takes this for a fault.
            Ok(Ok(Choice::Resign)) => return Err(resigned()),
            Ok(Err(_)) => {
                return Err(Fault::new(
                    FaultKind::Crash,
                    "the page stopped waiting for the person's move",
                ));
            }
            Err(_) => {
                return Err(Fault::new(
                    FaultKind::Timeout,
                    format!(
                        "the person did not move within {}",
                        format_duration(time.available())
                    ),
                ));
            }
        };
        Ok(Reply {
            pit: i64::from(pit),
            line: format!("pit {pit}, chosen on the page"),
            infos: Vec::new(),
            infos_dropped: 0,
            elapsed: started.elapsed(),
        })
    }

    async fn game_over(
        &mut self,
        _game: &str,
        _result: SideResult,
        _south: u16,
        _north: u16,
        _termination: Termination,
    ) -> Result<(), Fault> {
        Ok(())
    }

    fn resigned(&self) -> bool {
        self.live.has_resigned(&self.game)
    }
}

/// Who sits in a seat (not a built-in's move chooser, [`crate::engines::Player`]).
pub(crate) enum Occupant {
    Person(Person),
    Engine(Box<RunningEngine>),
}

/// A seat of the session: the seat playing south waits for the page's permission before
/// each game; an engine's moves are paced so that people can follow them.
pub(crate) struct Seat {
    occupant: Occupant,
    gate: Arc<Gate>,
    pace: Duration,
}

impl Contestant for Seat {
    async fn new_game(
        &mut self,
        game: &str,
        rules: Rules,
        start: Option<&Position>,
        side: Side,
    ) -> Result<(), Fault> {
        if side == Side::South {
            self.gate.wait().await;
        }
        match &mut self.occupant {
            Occupant::Person(p) => p.new_game(game, rules, start, side).await,
            Occupant::Engine(e) => Contestant::new_game(&mut **e, game, rules, start, side).await,
        }
    }

    async fn go(
        &mut self,
        pos: &Position,
        moves: &[Move],
        time: TimeLimit,
        deadline: Duration,
    ) -> Result<Reply, Fault> {
        match &mut self.occupant {
            Occupant::Person(p) => p.go(pos, moves, time, deadline).await,
            Occupant::Engine(e) => {
                // Before the engine's clock starts: the pause is not its time.
                if !self.pace.is_zero() {
                    tokio::time::sleep(self.pace).await;
                }
                Contestant::go(&mut **e, pos, moves, time, deadline).await
            }
        }
    }

    async fn game_over(
        &mut self,
        game: &str,
        result: SideResult,
        south: u16,
        north: u16,
        termination: Termination,
    ) -> Result<(), Fault> {
        match &mut self.occupant {
            Occupant::Person(p) => p.game_over(game, result, south, north, termination).await,
            Occupant::Engine(e) => {
                Contestant::game_over(&mut **e, game, result, south, north, termination).await
            }
        }
    }

    /// An engine is checked before each of its games like in any run (a ping, see
    /// protocol.md); the person has nothing to check.
    async fn between_games(&mut self) -> Result<(), String> {
        match &mut self.occupant {
            Occupant::Person(_) => Ok(()),
            Occupant::Engine(e) => Contestant::between_games(&mut **e).await,
        }
    }

    fn resigned(&self) -> bool {
        match &self.occupant {
            Occupant::Person(p) => p.resigned(),
            Occupant::Engine(_) => false,
        }
    }
}

/// Hands out the person's seat and engine processes.
struct SessionLauncher {
    engines: ProcessLauncher,
    /// For each engine of the session, its index among the processes (`None`: the person).
    processes: Vec<Option<usize>>,
    live: Arc<Live>,
    gate: Arc<Gate>,
    pace: Duration,
}

impl SessionLauncher {
    fn seat(&self, occupant: Occupant) -> Seat {
        Seat {
            occupant,
            gate: self.gate.clone(),
            pace: self.pace,
        }
    }
}

impl Launcher for SessionLauncher {
    type Engine = Seat;

    async fn start(&self, index: usize) -> Result<Seat, Fault> {
        match self.processes[index] {
            None => Ok(self.seat(Occupant::Person(Person {
                live: self.live.clone(),
                game: String::new(),
            }))),
            Some(p) => Launcher::start(&self.engines, p)
                .await
                .map(|e| self.seat(Occupant::Engine(Box::new(e)))),
        }
    }

    async fn stop(&self, seat: Seat) {
        if let Occupant::Engine(e) = seat.occupant {
            Launcher::stop(&self.engines, *e).await;
        }
    }
}

/// The games of a session, without end: engine 0 (the person) moves first in odd games,
/// engine 1 in even ones; two games with the seats swapped form a pair.
struct Alternating {
    next: u64,
}

impl Iterator for Alternating {
    type Item = ScheduledGame;

    fn next(&mut self) -> Option<ScheduledGame> {
        let number = self.next;
        self.next += 1;
        let first = number % 2 == 1;
        Some(ScheduledGame {
            number,
            round: number.div_ceil(2),
            pair: number.div_ceil(2),
            south: if first { 0 } else { 1 },
            north: if first { 1 } else { 0 },
            opening: Default::default(),
        })
    }
}

/// How a session runs.
#[derive(Clone, Debug)]
pub(crate) struct SessionOptions {
    /// The results folder.
    pub out: PathBuf,
    /// Keep the engines' protocol transcripts.
    pub debug: bool,
    /// The least time before each engine move.
    pub pace: Duration,
}

/// The person as an engine of the session's configuration: `name` (`explicit` when the
/// person chose it: an engine of the same name is then renamed, not the person), with
/// `clock` or no clock at all.
pub(crate) fn person_entry(name: &str, clock: Option<TimeControl>, explicit: bool) -> EngineEntry {
    let spec = EngineSpec {
        // Only a name the person chose counts as chosen (another engine then yields it).
        name: explicit.then(|| name.to_string()),
        tc: clock,
        command: Some(match clock {
            Some(c) => format!("{PERSON_COMMAND}, with a clock of {c}"),
            None => format!("{PERSON_COMMAND}, without a clock"),
        }),
        ..EngineSpec::default()
    };
    EngineEntry {
        spec,
        // No program: the launcher of the session seats the person.
        resolved: ResolvedEngine {
            tc: Some(clock.unwrap_or(TimeControl::MoveTime(NO_CLOCK))),
            ..ResolvedEngine::default()
        },
        identity: Identity::named(name),
    }
}

/// Runs a session: `config` holds two engines, the first of which is the person when
/// `person` is set (see [`person_entry`]). The engines are started and checked first; then
/// games follow one another, each when the page asks, until Ctrl-C. Every game is written
/// to `options.out` and shown to `live` and `views`.
pub(crate) fn run_session(
    mut config: TournamentConfig,
    person: bool,
    options: &SessionOptions,
    live: Arc<Live>,
    views: &mut [&mut dyn View],
) -> Result<(RunSummary, Tally, TournamentConfig), TournamentError> {
    let run = Run::claim(&options.out, Claim::Session, RunKind::Play, options.debug)?;
    // The processes: every engine but the person.
    let processes: Vec<Option<usize>> = (0..config.engines.len())
        .map(|i| match (person, i) {
            (true, 0) => None,
            (true, i) => Some(i - 1),
            (false, i) => Some(i),
        })
        .collect();
    let mut process_config = config.clone();
    if person {
        process_config.engines.remove(0);
    }
    let (engines, ready) = run.start_engines(&mut process_config)?;
    let mut ready: Vec<Option<Vec<RunningEngine>>> = ready.into_iter().map(Some).collect();
    for (i, p) in processes.iter().enumerate() {
        if let Some(p) = p {
            config.engines[i].identity = process_config.engines[*p].identity.clone();
        }
    }
    let mut names = config.names();
    let sources: Vec<NameSource> = config
        .engines
        .iter()
        .map(|e| match e.explicit_name() {
            true => NameSource::User,
            false => NameSource::Given,
        })
        .collect();
    dedupe_names(&mut names, &sources).map_err(|e| TournamentError::Input(e.to_string()))?;
    for (e, name) in config.engines.iter_mut().zip(names) {
        e.identity.name = name;
    }
    let mut file = config.to_file();
    // An open-ended schedule: the number of games is whatever was played.
    file.games = None;
    run.save_config(
        file,
        "The games of a kalaha play session: one game at a time, the seats swapped every \
         game. The person has no clock unless `tc` says so.",
    )?;
    let counted = run.count(&config)?;
    // A person on a clock starts the first game from the page; otherwise it starts at once.
    let clocked = person
        && config.engines[0]
            .resolved
            .tc
            .is_some_and(|tc| tc != TimeControl::MoveTime(NO_CLOCK));
    let gate = Gate::new(!clocked);
    let person_name = person.then(|| config.engines[0].identity.name.clone());
    // The first player's advantage, when known: at once for the standard board, else
    // from the solver if it finishes within a moment, away from the games.
    {
        let rules = config.rules();
        let live = live.clone();
        let _ = std::thread::Builder::new()
            .name("kalaha-start-value".into())
            .spawn(move || live.set_start_value(start_value(rules, START_VALUE_TIME)));
    }
    // The page says who plays: "kalaha: human against hard", "kalaha: medium against hard".
    let names = config.names();
    live.set_title(super::run_title(
        crate::results::RunKind::Play,
        &names,
        None,
        None,
    ));
    live.set_session(person_name, gate.clone());
    let launcher = SessionLauncher {
        engines,
        processes: processes.clone(),
        live: live.clone(),
        gate: gate.clone(),
        pace: options.pace,
    };
    let ready: Vec<Vec<Seat>> = processes
        .iter()
        .map(|p| match p {
            Some(p) => ready[*p]
                .take()
                .unwrap_or_default()
                .into_iter()
                .map(|e| launcher.seat(Occupant::Engine(Box::new(e))))
                .collect(),
            None => Vec::new(),
        })
        .collect();
    let info = StartInfo {
        id: config.id.clone(),
        names: config.names(),
        total: 0,
        done: 0,
        notes: counted.notes,
    };
    let (summary, tally) = run.play(
        &config,
        launcher,
        ready,
        (counted.tally, info),
        Alternating { next: 1 },
        1,
        views,
        None,
    )?;
    Ok((summary, tally, config))
}

#[cfg(test)]
mod tests;
