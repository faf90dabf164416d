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
use crate::check::{Failure, StepOutcome, StepResult, Steps, Subject, few_seeds_left, play_until};
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
        received: e.line().map(|l| crate::record::truncate(l, DISPLAY_BYTES)),
    }
}

fn fail(e: KgpError) -> (Failure, bool) {
    (failure(&e), e.is_fatal())
}

impl Subject for KgpEngine {
    type Start<'a> = (&'a EngineCommand, &'a Settings);
    const NOUN: &'static str = "agent";

    async fn start<'s>(with: Self::Start<'s>) -> Result<KgpEngine, String> {
        let (cmd, settings) = with;
        KgpEngine::start(cmd, settings)
            .await
            .map_err(|e| e.to_string())
    }

    async fn stop(self) {
        self.shutdown().await;
    }
}

struct Checker<'a> {
    steps: Steps<'a, KgpEngine>,
    settings: &'a Settings,
}

impl Checker<'_> {
    async fn step<F>(&mut self, name: &str, f: F)
    where
        F: AsyncFnOnce(&mut KgpEngine) -> StepOutcome,
    {
        self.steps.step(name, f).await;
    }

    /// `start`, `connect`, `mode` and `info`, on the first instance.
    async fn connection_steps(&mut self) {
        let end = Instant::now() + self.settings.startup_timeout;
        let steps = &mut self.steps;
        let (cmd, settings) = steps.start();
        let launch = match Launch::spawn(cmd, settings).await {
            Ok(l) => l,
            Err(e) => {
                steps.give_up(format!("not run: {e}"));
                steps.not_run += 3;
                return steps.push("start", Some(failure(&e)), Vec::new());
            }
        };
        steps.push("start", None, Vec::new());
        let mut agent = match launch.accept(end).await {
            Ok(a) => a,
            Err(e) => {
                steps.give_up("not run: the agent never connected");
                steps.not_run += 2;
                return steps.push("connect", Some(failure(&e)), Vec::new());
            }
        };
        steps.push("connect", None, Vec::new());
        if let Err(e) = agent.handshake(end).await {
            agent.shutdown().await;
            steps.give_up("not run: no mode");
            steps.not_run += 1;
            return steps.push("mode", Some(failure(&e)), Vec::new());
        }
        steps.push("mode", None, Vec::new());
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
        steps.push("info", None, warnings);
        steps.subject = Some(agent);
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
            return self.steps.fail(name, "no such position (checker bug)");
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
                        received: Some(crate::record::truncate(&reply.line, DISPLAY_BYTES)),
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
                        received: Some(crate::record::truncate(&reply.line, DISPLAY_BYTES)),
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
        let Some(mut agent) = self.steps.take_for_last_step().await else {
            return;
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
            Err(e) => return self.steps.push(name, Some(failure(&e)), Vec::new()),
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
        self.steps.push(name, None, warnings);
    }
}

/// A position near the end of a game with `side` to move (few seeds left in the pits).
fn near_end(rules: Rules, side: Side) -> Option<Position> {
    play_until(rules, Some(side), few_seeds_left).map(|(pos, _)| pos)
}

/// Runs every step against the agent and returns the results; `report` sees each result
/// as soon as it is known.
pub async fn check_agent(
    cmd: &EngineCommand,
    settings: &Settings,
    report: &mut dyn FnMut(&StepResult),
) -> Vec<StepResult> {
    let mut checker = Checker {
        steps: Steps::new((cmd, settings), report),
        settings,
    };
    checker.connection_steps().await;
    checker.robustness_steps().await;
    checker.state_steps().await;
    checker.stop_step().await;
    checker.goodbye_step().await;
    checker.steps.finish().await
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
