//! `kalaha check --protocol kgp`: runs a KGP agent through the steps kalaha relies on and
//! reports each one, as [`crate::check`] does for kalaha engines: start, connection,
//! version and `mode`, the `set info:` hints, `ping`, an unknown `set` ignored, `state`s
//! answered with legal `move`s (several boards, both seats, a game clock), `stop`
//! respected, and `goodbye`.
//!
//! After a step fails on a bad command the agent is restarted for the next step; after it
//! fails on a dead, silent or disconnected agent the remaining steps are counted in one
//! last line, as not run, with the reason.

use super::agent::{KgpEngine, Launch};
use super::command::{Arg, Command};
use super::error::KgpError;
use crate::check::{Failure, StepResult};
use crate::record::TimeLimit;
use crate::rules::{Position, Rules, Side, Sweep};
use crate::supervisor::{EngineCommand, Settings, Stopped};
use std::time::Duration;
use tokio::time::Instant;

/// The longest piece of a received line a report shows, in bytes.
const DISPLAY_BYTES: usize = 300;

/// The time of a `state` in the ordinary steps.
const STATE_TIME: Duration = Duration::from_millis(1000);

/// The time of the first `state` of the `stop-respected` step.
const SHORT_STATE_TIME: Duration = Duration::from_millis(100);

/// How long a first move may come after the time of its `state`.
const MOVE_SLACK: Duration = Duration::from_millis(250);

fn failure(e: &KgpError) -> Failure {
    Failure {
        reason: e.reason(),
        received: e.line().map(|l| crate::referee::truncate(l, DISPLAY_BYTES)),
    }
}

type StepOutcome = Result<Vec<String>, (Failure, bool)>;

fn fail(e: KgpError) -> (Failure, bool) {
    (failure(&e), e.is_fatal())
}

struct Checker<'a> {
    cmd: &'a EngineCommand,
    settings: &'a Settings,
    agent: Option<KgpEngine>,
    dead: Option<String>,
    /// Steps not run because the agent could not be used.
    skipped: usize,
    results: Vec<StepResult>,
    report: &'a mut dyn FnMut(&StepResult),
}

impl Checker<'_> {
    fn push(&mut self, name: &str, failure: Option<Failure>, warnings: Vec<String>) {
        let r = StepResult {
            name: name.to_string(),
            failure,
            warnings,
            steps: 1,
        };
        (self.report)(&r);
        self.results.push(r);
    }

    fn not_run(&mut self, name: &str, reason: String) {
        self.push(
            name,
            Some(Failure {
                reason,
                received: None,
            }),
            Vec::new(),
        );
    }

    /// A ready agent for the next step (restarted if needed).
    async fn agent(&mut self) -> Result<&mut KgpEngine, String> {
        if let Some(reason) = &self.dead {
            return Err(reason.clone());
        }
        if self.agent.is_none() {
            match KgpEngine::start(self.cmd, self.settings).await {
                Ok(a) => self.agent = Some(a),
                Err(e) => {
                    let reason = format!("not run: the agent could not be restarted: {e}");
                    self.dead = Some(reason.clone());
                    return Err(reason);
                }
            }
        }
        Ok(self.agent.as_mut().expect("the agent was just started"))
    }

    async fn step<F>(&mut self, name: &str, f: F)
    where
        F: AsyncFnOnce(&mut KgpEngine) -> StepOutcome,
    {
        let agent = match self.agent().await {
            Ok(a) => a,
            Err(_) => {
                self.skipped += 1;
                return;
            }
        };
        match f(agent).await {
            Ok(warnings) => self.push(name, None, warnings),
            Err((failure, fatal)) => {
                if let Some(a) = self.agent.take() {
                    a.shutdown().await;
                }
                if fatal {
                    self.dead = Some(format!("not run: the agent failed at {name}"));
                }
                self.push(name, Some(failure), Vec::new());
            }
        }
    }

    /// `start`, `connect`, `mode` and `info`, on the first instance.
    async fn connection_steps(&mut self) {
        let end = Instant::now() + self.settings.startup_timeout;
        let launch = match Launch::spawn(self.cmd, self.settings).await {
            Ok(l) => l,
            Err(e) => {
                self.dead = Some(format!("not run: {e}"));
                self.skipped += 3;
                return self.push("start", Some(failure(&e)), Vec::new());
            }
        };
        self.push("start", None, Vec::new());
        let mut agent = match launch.accept(end).await {
            Ok(a) => a,
            Err(e) => {
                self.dead = Some("not run: the agent never connected".to_string());
                self.skipped += 2;
                return self.push("connect", Some(failure(&e)), Vec::new());
            }
        };
        self.push("connect", None, Vec::new());
        if let Err(e) = agent.handshake(end).await {
            agent.shutdown().await;
            self.dead = Some("not run: no mode".to_string());
            self.skipped += 1;
            return self.push("mode", Some(failure(&e)), Vec::new());
        }
        self.push("mode", None, Vec::new());
        let info = agent.info().clone();
        let mut warnings = Vec::new();
        if info.name.trim().is_empty() {
            warnings.push(
                "no `set info:name`: the agent is named by its program or the name= of its spec"
                    .to_string(),
            );
        }
        if info.authors.trim().is_empty() {
            warnings.push("no `set info:authors`".to_string());
        }
        self.push("info", None, warnings);
        self.agent = Some(agent);
    }

    /// `ping`, and an unknown `set` ignored.
    async fn robustness_steps(&mut self) {
        self.step("ping", async |a: &mut KgpEngine| {
            a.ping().await.map_err(fail)?;
            Ok(Vec::new())
        })
        .await;
        self.step("unknown-set-ignored", async |a: &mut KgpEngine| {
            let set = Command::new("set")
                .arg(Arg::Word("x-future:option".into()))
                .arg(Arg::string("a value \"quoted\""));
            a.send(set).await.map_err(fail)?;
            a.ping().await.map_err(fail)?;
            Ok(Vec::new())
        })
        .await;
    }

    /// A `state` of `pos` answered with a legal move within `time` (plus the slack).
    async fn state_step(&mut self, name: &str, at: Option<Position>, time: TimeLimit) {
        let Some(pos) = at else {
            return self.not_run(name, "no such position (checker bug)".to_string());
        };
        let game = format!("check-{name}");
        self.step(name, async |a: &mut KgpEngine| {
            a.new_game(&game).await.map_err(fail)?;
            let deadline = time.available() + MOVE_SLACK;
            let reply = a.go(&pos, time, deadline).await.map_err(fail)?;
            pos.check(reply.pit).map_err(|err| {
                (
                    Failure {
                        reason: format!(
                            "{err} (KGP pits are numbered from 1, from the mover's left)"
                        ),
                        received: Some(crate::referee::truncate(&reply.line, DISPLAY_BYTES)),
                    },
                    false,
                )
            })?;
            Ok(Vec::new())
        })
        .await;
    }

    async fn state_steps(&mut self) {
        let normal = TimeLimit::MoveTime(STATE_TIME);
        let rules = Rules::default();
        let start = Position::start(rules);
        self.state_step("state-start", Some(start), normal).await;
        let extra = start.play(3).ok();
        self.state_step("state-extra-turn", extra, normal).await;
        let north = start.play(1).ok();
        self.state_step("state-north-to-move", north, normal).await;
        for side in [Side::South, Side::North] {
            let near = near_end(rules, side);
            self.state_step(&format!("state-near-end side={side}"), near, normal)
                .await;
        }
        let small = Rules::new(3, 3, false, Sweep::Owner).expect("valid rules");
        self.state_step("state-3-pits", Some(Position::start(small)), normal)
            .await;
        let big = Rules::new(8, 6, false, Sweep::Owner).expect("valid rules");
        self.state_step("state-8-pits", Some(Position::start(big)), normal)
            .await;
        let clock = TimeLimit::Clock {
            remaining: Duration::from_secs(10),
            increment: Duration::from_millis(100),
            opponent_remaining: Some(Duration::from_secs(10)),
        };
        self.state_step("state-clock", Some(start), clock).await;
    }

    /// A short `state`, stopped, and at once another: the agent must move in the new
    /// one; its moves for the stopped one are ignored (with a warning).
    async fn stop_step(&mut self) {
        let rules = Rules::default();
        let first = Position::start(rules);
        let second = first.play(1).ok();
        self.step("stop-respected", async |a: &mut KgpEngine| {
            let Some(second) = second else {
                return Err((
                    Failure {
                        reason: "no such position (checker bug)".into(),
                        received: None,
                    },
                    false,
                ));
            };
            a.new_game("check-stop").await.map_err(fail)?;
            let short = TimeLimit::MoveTime(SHORT_STATE_TIME);
            a.go(&first, short, SHORT_STATE_TIME + MOVE_SLACK)
                .await
                .map_err(fail)?;
            let late_before = a.late_commands();
            let normal = TimeLimit::MoveTime(STATE_TIME);
            let reply = a
                .go(&second, normal, STATE_TIME + MOVE_SLACK)
                .await
                .map_err(fail)?;
            second.check(reply.pit).map_err(|err| {
                (
                    Failure {
                        reason: format!("the move for the state after a stop: {err}"),
                        received: Some(crate::referee::truncate(&reply.line, DISPLAY_BYTES)),
                    },
                    false,
                )
            })?;
            a.ping().await.map_err(fail)?;
            let late = a.late_commands() - late_before;
            Ok(if late > 0 {
                vec![format!(
                    "{late} move or yield commands came after their state was stopped (ignored)"
                )]
            } else {
                Vec::new()
            })
        })
        .await;
    }

    async fn goodbye_step(&mut self) {
        let name = "goodbye";
        if self.agent().await.is_err() {
            self.skipped += 1;
            return;
        }
        let Some(mut agent) = self.agent.take() else {
            return self.not_run(name, "not run: no agent".to_string());
        };
        let grace = self.settings.quit_grace;
        let closed = agent.goodbye(grace).await;
        let stopped = agent.shutdown().await;
        let mut warnings = Vec::new();
        match closed {
            Ok(true) => {}
            Ok(false) => warnings.push(format!(
                "the agent kept its connection open for {} after goodbye",
                crate::record::format_duration(grace)
            )),
            Err(e) => return self.push(name, Some(failure(&e)), Vec::new()),
        }
        match stopped {
            Stopped::Exited(_) => {}
            Stopped::Terminated => warnings.push(
                "the agent did not exit after goodbye; SIGTERM ended it (KGP does not ask an \
                 agent to exit, kalaha ends it)"
                    .to_string(),
            ),
            Stopped::Killed => warnings.push(
                "the agent did not exit after goodbye, nor on SIGTERM; SIGKILL ended it"
                    .to_string(),
            ),
        }
        self.push(name, None, warnings);
    }
}

/// A position near the end of a game with `side` to move (few seeds left in the pits).
fn near_end(rules: Rules, side: Side) -> Option<Position> {
    (0..50usize).find_map(|pattern| {
        let mut pos = Position::start(rules);
        for ply in 0..10_000usize {
            if pos.is_over() {
                return None;
            }
            let in_pits: u32 = pos.row_sum(Side::South) + pos.row_sum(Side::North);
            if in_pits <= 8 && pos.to_move() == side {
                return Some(pos);
            }
            let legal: Vec<u8> = pos.legal_moves().collect();
            let pit = legal[(ply * (pattern + 1) + pattern / 3) % legal.len()];
            pos = pos.play(pit as i64).ok()?;
        }
        None
    })
}

/// Runs every step against the agent and returns the results; `report` sees each result
/// as soon as it is known.
pub async fn check_agent(
    cmd: &EngineCommand,
    settings: &Settings,
    report: &mut dyn FnMut(&StepResult),
) -> Vec<StepResult> {
    let mut checker = Checker {
        cmd,
        settings,
        agent: None,
        dead: None,
        skipped: 0,
        results: Vec::new(),
        report,
    };
    checker.connection_steps().await;
    checker.robustness_steps().await;
    checker.state_steps().await;
    checker.stop_step().await;
    checker.goodbye_step().await;
    if checker.skipped > 0 {
        let reason = checker.dead.clone().unwrap_or_default();
        let name = format!("{} more steps", checker.skipped);
        checker.not_run(&name, reason);
        if let Some(last) = checker.results.last_mut() {
            last.steps = checker.skipped;
        }
    }
    checker.results
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_end_positions_exist() {
        for side in [Side::South, Side::North] {
            let pos = near_end(Rules::default(), side).unwrap();
            assert_eq!(pos.to_move(), side);
            assert!(!pos.is_over());
        }
    }
}
