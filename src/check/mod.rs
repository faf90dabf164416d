//! The protocol compliance checker behind `kalaha check`: runs an engine through every step
//! of `protocol.md` and reports each step as passed or failed, with the line received.
//!
//! After a step fails on a bad message the engine is restarted for the next step; after it
//! fails on a dead or silent engine the remaining steps are counted in one last line, as
//! not run, with the reason.

mod hello;
mod play;
mod steps;

use crate::protocol::{FromEngine, OptionKind, ToEngine};
use crate::record::{DEFAULT_TIME_MARGIN, SideResult, Termination, TimeLimit};
use crate::rules::{Move, Position, Rules, Side, Sweep};
use crate::supervisor::{Engine, EngineCommand, EngineError, Settings, Stopped};
use hello::hello_fields;
use play::{WHOLE_GAME, play_whole_game};
pub(crate) use play::{few_seeds_left, play_until};
use serde_json::{Value, json};
use std::time::Duration;
pub(crate) use steps::{StepOutcome, Steps, Subject};

/// The outcome of one step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepResult {
    pub name: String,
    pub outcome: Outcome,
    /// Things a passed step noticed that the protocol allows but advises against (such
    /// as a `hello` without `version`); they do not fail the step.
    pub warnings: Vec<String>,
    /// Steps this result stands for: 1, or the number of steps not run after the engine
    /// died.
    pub steps: usize,
}

/// What became of a step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Passed,
    Failed(Failure),
    /// The step does not apply to this engine (it declares no option, the spec gives
    /// none): the reason. Every check counts the same steps; these are said as skipped.
    Skipped(String),
}

impl StepResult {
    /// The failure, if the step failed.
    pub fn failure(&self) -> Option<&Failure> {
        match &self.outcome {
            Outcome::Failed(f) => Some(f),
            Outcome::Passed | Outcome::Skipped(_) => None,
        }
    }
}

/// Why a step failed, and the line that showed it (if any).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    pub reason: String,
    pub received: Option<String>,
}

impl std::fmt::Display for StepResult {
    /// One line, with whatever came from the engine made safe to show.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let text = match &self.outcome {
            Outcome::Passed if self.warnings.is_empty() => format!("PASS {}", self.name),
            Outcome::Passed => {
                format!("PASS {} (warning: {})", self.name, self.warnings.join("; "))
            }
            Outcome::Skipped(reason) => format!("SKIP {}: {reason}", self.name),
            // A reason that already quotes the line does not get it twice.
            Outcome::Failed(Failure {
                reason,
                received: Some(line),
            }) if !reason.contains(&*crate::record::clean_text(line)) => {
                format!("FAIL {}: {reason} (received: {line})", self.name)
            }
            Outcome::Failed(Failure { reason, .. }) => format!("FAIL {}: {reason}", self.name),
        };
        f.write_str(&crate::record::clean_text(&text))
    }
}

/// The longest piece of a received line a report shows, in bytes.
const DISPLAY_BYTES: usize = 300;

/// How long a move may take in the timed steps beyond the time given (more than a run's
/// margin, so that a busy machine fails no step: a move later than that margin is warned
/// about).
const MOVE_SLACK: Duration = Duration::from_millis(250);
/// The short time limit of the `go-short-time` step.
const SHORT_MOVE_MS: u64 = 100;

impl Failure {
    fn msg(reason: impl Into<String>) -> Failure {
        Failure {
            reason: reason.into(),
            received: None,
        }
    }

    fn with_line(reason: impl Into<String>, line: &str) -> Failure {
        Failure {
            reason: reason.into(),
            received: Some(crate::record::truncate(line, DISPLAY_BYTES)),
        }
    }
}

impl From<EngineError> for Failure {
    fn from(e: EngineError) -> Failure {
        let received = e.line().map(|l| crate::record::truncate(l, DISPLAY_BYTES));
        let reason = match &e {
            EngineError::NotJson { error, .. } => {
                format!("a line that is not a JSON object: {error}")
            }
            EngineError::Malformed { kind, error, .. } => {
                format!("a bad {} {error}", crate::protocol::message_kind(kind))
            }
            EngineError::WrongMessage { expected, .. } => format!("expected {expected}"),
            EngineError::LineTooLong { limit, .. } => {
                format!("a line longer than the limit of {limit} bytes")
            }
            EngineError::Protocol { got, .. } => format!("protocol {got}, expected 1"),
            other => other.to_string(),
        };
        Failure { reason, received }
    }
}

struct Checker<'a> {
    steps: Steps<'a, Engine>,
    settings: &'a Settings,
    /// Options to set after every start (`option.NAME=VALUE` of the engine spec).
    options: &'a [(String, String)],
    /// Set when an option of the engine spec does not fit the engine's declarations: the
    /// check stops, as a usage error.
    usage: Option<String>,
}

fn fail(e: EngineError) -> (Failure, bool) {
    let fatal = e.is_fatal();
    (e.into(), fatal)
}

/// How the checker starts a kalaha engine: the command, the settings and the options of
/// the engine spec, set after the handshake.
type EngineStart<'a> = (&'a EngineCommand, &'a Settings, &'a [(String, String)]);

impl Subject for Engine {
    type Start<'a> = EngineStart<'a>;
    const NOUN: &'static str = "engine";

    async fn start<'s>(with: Self::Start<'s>) -> Result<Engine, String> {
        let (cmd, settings, options) = with;
        start_with_options(cmd, settings, options)
            .await
            .map_err(|e| e.to_string())
    }

    async fn stop(self) {
        self.shutdown().await;
    }
}

impl Checker<'_> {
    /// Runs one step that has no warnings to give.
    async fn step<F>(&mut self, name: &str, f: F)
    where
        F: AsyncFnOnce(&mut Engine) -> Result<(), (Failure, bool)>,
    {
        self.steps
            .step(name, async |e: &mut Engine| f(e).await.map(|()| Vec::new()))
            .await;
    }

    async fn handshake_steps(&mut self) {
        let (cmd, settings, _) = self.steps.start();
        let mut engine = match Engine::spawn(cmd, settings) {
            Ok(e) => e,
            Err(e) => {
                self.steps.give_up(format!("not run: {e}"));
                // handshake and hello-fields
                self.steps.not_run += 2;
                self.steps.push("start", Some(Failure::from(e)), Vec::new());
                return;
            }
        };
        self.steps.push("start", None, Vec::new());
        match engine.handshake().await {
            Ok(_) => {
                self.steps.push("handshake", None, Vec::new());
                let fields = hello_fields(engine.hello_line());
                self.steps.subject = Some(engine);
                match fields {
                    Ok(warnings) => self.steps.push("hello-fields", None, warnings),
                    Err(failure) => self.steps.push("hello-fields", Some(failure), Vec::new()),
                }
            }
            Err(e) => {
                engine.shutdown().await;
                self.steps.give_up("not run: no handshake");
                // hello-fields
                self.steps.not_run += 1;
                self.steps.push("handshake", Some(e.into()), Vec::new());
            }
        }
    }

    /// Sets the options of the engine spec, as a tournament does after the handshake (and
    /// again after the steps that try other values, so that later steps see the user's);
    /// skipped when the spec gives none. An option the engine does not declare, or a value
    /// that does not fit, stops the check as a usage error.
    async fn spec_options_step(&mut self, name: &str) {
        if self.steps.dead.is_some() {
            self.steps.not_run += 1;
            return;
        }
        if self.options.is_empty() {
            return self
                .steps
                .skip(name, "the engine spec gives no option.NAME=VALUE");
        }
        let options = self.options;
        if let Ok(e) = self.steps.subject().await
            && let Err(EngineError::BadOption { name, reason }) = typed_options(e, options)
        {
            let text = self
                .options
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, t)| t);
            self.usage = Some(format!(
                "option.{name}={}: {reason}; give option.NAME=VALUE for an option the engine \
                 declares in its hello, with a value of its type",
                text.map_or("", |t| t.as_str())
            ));
            self.steps
                .give_up("not run: an option of the engine spec was refused");
            return;
        }
        self.step(name, async |e: &mut Engine| {
            set_options(e, options).await.map_err(fail)?;
            e.ping().await.map_err(fail)?;
            Ok(())
        })
        .await;
    }

    /// Every declared option, in one step (skipped when the engine declares none), then an
    /// unknown option ignored.
    async fn option_steps(&mut self) {
        match self.steps.subject().await {
            Err(_) => self.steps.not_run += 1,
            Ok(e) if e.hello().options.is_empty() => {
                self.steps.skip("options", "the engine declares no option")
            }
            Ok(e) => {
                let options = e.hello().options.clone();
                self.step("options", async |e: &mut Engine| {
                    for opt in options {
                        for v in tried_values(&opt.kind) {
                            let named = |(mut f, fatal): (Failure, bool)| {
                                f.reason = format!("option {} set to {v}: {}", opt.name, f.reason);
                                (f, fatal)
                            };
                            e.set_option(&opt.name, v.clone())
                                .await
                                .map_err(fail)
                                .map_err(named)?;
                            e.ping().await.map_err(fail).map_err(named)?;
                        }
                    }
                    Ok(())
                })
                .await;
            }
        }
        self.step("bad-option-ignored", async |e: &mut Engine| {
            let bad = ToEngine::Option {
                name: "no_such_option_x".to_string(),
                value: json!({"nested": [1, 2]}),
            };
            e.send(&bad).await.map_err(fail)?;
            e.ping().await.map_err(fail)?;
            Ok(())
        })
        .await;
    }

    async fn go_step(
        &mut self,
        name: &str,
        rules: Rules,
        side: Side,
        at: Option<(Position, Vec<Move>)>,
        time: TimeLimit,
        max: Duration,
    ) {
        let Some((pos, moves)) = at else {
            return self.steps.fail(name, "no such position (checker bug)");
        };
        self.steps
            .step(name, async |e: &mut Engine| {
                e.new_game("check", rules, None, side).await.map_err(fail)?;
                let asked = std::time::Instant::now();
                let reply = e.go(&pos, &moves, time, max).await.map_err(fail)?;
                let took = asked.elapsed();
                pos.check(reply.pit)
                    .map_err(|err| (Failure::with_line(err.to_string(), &reply.line), false))?;
                // The step allows a busy machine more than a run does: an engine that needs
                // that much is told it would lose its games on time.
                let warnings = match time {
                    TimeLimit::MoveTime(t) if took > t + DEFAULT_TIME_MARGIN => vec![format!(
                        "the move took {} ms of {} ms: a run allows {} ms more by default \
                     (--time-margin), so this engine would lose on time; think for about 60% \
                     of move_ms",
                        took.as_millis(),
                        t.as_millis(),
                        DEFAULT_TIME_MARGIN.as_millis()
                    )],
                    _ => Vec::new(),
                };
                // The checker stops the game here: it ends as interrupted, with the stores it has.
                let after = pos.play(reply.pit).expect("checked");
                e.game_over(
                    "check",
                    SideResult::Draw,
                    after.store(Side::South),
                    after.store(Side::North),
                    Termination::Interrupted,
                )
                .await
                .map_err(fail)?;
                Ok(warnings)
            })
            .await;
    }

    async fn game_steps(&mut self) {
        let normal = TimeLimit::MoveTime(Duration::from_millis(1000));
        let normal_max = Duration::from_millis(1000) + MOVE_SLACK;
        let variants = [
            Rules::default(),
            Rules::new(6, 6, false, Sweep::Owner).expect("rules"),
            Rules::new(4, 3, true, Sweep::EmptySide).expect("rules"),
            Rules::new(3, 2, false, Sweep::None).expect("rules"),
            Rules::new(1, 1, false, Sweep::Owner).expect("rules"),
        ];
        for rules in variants {
            for side in [Side::South, Side::North] {
                let name = format!(
                    "new-game pits={} seeds={} empty_capture={} sweep={} side={side}",
                    rules.pits(),
                    rules.seeds(),
                    rules.empty_capture(),
                    rules.sweep()
                );
                let at = play_until(rules, Some(side), |_| true);
                if at.is_none() {
                    // 1 pit, 1 seed: south's only move ends the game; north never moves.
                    continue;
                }
                self.go_step(&name, rules, side, at, normal, normal_max)
                    .await;
            }
        }
        let rules = Rules::default();
        let start = Some((Position::start(rules), Vec::new()));
        self.go_step("go-start", rules, Side::South, start, normal, normal_max)
            .await;
        let extra = Position::start(rules).play(3).expect("legal");
        let moves = vec![Move {
            side: Side::South,
            pit: 3,
        }];
        self.go_step(
            "go-extra-turn",
            rules,
            Side::South,
            Some((extra, moves)),
            normal,
            normal_max,
        )
        .await;
        for side in [Side::South, Side::North] {
            let at = play_until(rules, Some(side), few_seeds_left);
            let name = format!("go-near-end side={side}");
            self.go_step(&name, rules, side, at, normal, normal_max)
                .await;
        }
        let start = Some((Position::start(rules), Vec::new()));
        self.go_step(
            "go-short-time",
            rules,
            Side::South,
            start.clone(),
            TimeLimit::MoveTime(Duration::from_millis(SHORT_MOVE_MS)),
            Duration::from_millis(SHORT_MOVE_MS) + MOVE_SLACK,
        )
        .await;
        self.go_step(
            "go-clock",
            rules,
            Side::South,
            start,
            TimeLimit::Clock {
                remaining: Duration::from_millis(2000),
                increment: Duration::from_millis(100),
                opponent_remaining: Some(Duration::from_millis(2000)),
            },
            Duration::from_millis(2000),
        )
        .await;
    }

    async fn robustness_steps(&mut self) {
        self.step("ping", async |e: &mut Engine| {
            e.send_raw(r#"{"type":"ping","id":424242}"#)
                .await
                .map_err(fail)?;
            let (msg, line) = e.recv_message(Duration::from_secs(5)).await.map_err(fail)?;
            match msg {
                FromEngine::Pong { id: 424242 } => Ok(()),
                _ => Err((
                    Failure::with_line("expected {\"type\":\"pong\",\"id\":424242}", &line),
                    false,
                )),
            }
        })
        .await;
        self.step("unknown-message-ignored", async |e: &mut Engine| {
            e.send_raw(r#"{"type":"x_future_message","data":[1,{"a":null}]}"#)
                .await
                .map_err(fail)?;
            e.ping().await.map_err(fail)?;
            Ok(())
        })
        .await;
        self.step("unknown-fields-ignored", async |e: &mut Engine| {
            let rules = Rules::default();
            let mut ng = serde_json::to_value(ToEngine::NewGame {
                game: "check".into(),
                rules,
                start: None,
                side: Side::South,
            })
            .expect("json");
            ng["x_future"] = json!("yes");
            ng["rules"]["x_future_rule"] = json!(false);
            e.send_raw(&ng.to_string()).await.map_err(fail)?;
            e.ping().await.map_err(fail)?;
            let pos = Position::start(rules);
            let mut go = serde_json::to_value(ToEngine::Go {
                position: pos.view(),
                legal: pos.legal_moves().collect(),
                moves: Vec::new(),
                time: TimeLimit::MoveTime(Duration::from_millis(1000)),
            })
            .expect("json");
            go["x_future"] = json!({"nested": [1, 2, 3]});
            go["position"]["x_future"] = json!(1);
            go["time"]["x_future_ms"] = json!(5);
            e.send_raw(&go.to_string()).await.map_err(fail)?;
            let total = Duration::from_millis(1000) + MOVE_SLACK;
            // `info` lines before the move are noted by `recv_message`, not returned.
            let (msg, line) = e.recv_message(total).await.map_err(|err| match err {
                EngineError::Timeout { .. } => fail(EngineError::Timeout { deadline: total }),
                err => fail(err),
            })?;
            match msg {
                FromEngine::Move { pit } => pos
                    .check(pit)
                    .map_err(|err| (Failure::with_line(err.to_string(), &line), false)),
                m => Err((
                    Failure::with_line(format!("expected move, got {}", m.kind()), &line),
                    false,
                )),
            }
        })
        .await;
        self.step("game-over", async |e: &mut Engine| {
            let (result, south, north) = play_whole_game(e).await?;
            e.game_over(WHOLE_GAME, result, south, north, Termination::Normal)
                .await
                .map_err(fail)?;
            e.ping().await.map_err(fail)?;
            Ok(())
        })
        .await;
    }

    async fn quit_step(&mut self) {
        let Some(engine) = self.steps.take_for_last_step().await else {
            return;
        };
        let grace = self.settings.quit_grace;
        let failure = match engine.shutdown().await {
            Stopped::Exited(e) if e.code == Some(0) => None,
            Stopped::Exited(e) => Some(Failure::msg(format!("after quit the engine {e}"))),
            Stopped::Terminated => Some(Failure::msg(format!(
                "the engine did not exit within {grace:?} of quit (SIGTERM ended it)"
            ))),
            Stopped::Killed => Some(Failure::msg(format!(
                "the engine did not exit within {grace:?} of quit, nor on SIGTERM (SIGKILL ended it)"
            ))),
        };
        self.steps.push("quit", failure, Vec::new());
    }
}

/// The values the `options` step sets an option of `kind` to, in order: the minimum and
/// the default of an `int` (not the maximum: for sizes such as a hash table it may not fit
/// this machine, and the result would depend on where the check runs), both values of a
/// `bool`, every value of a `choice` then its default, the default of a `string`.
fn tried_values(kind: &OptionKind) -> Vec<Value> {
    match kind {
        OptionKind::Int { default, min, .. } => vec![json!(min), json!(default)],
        OptionKind::Bool { default } => vec![json!(!default), json!(default)],
        OptionKind::String { default } => vec![json!(default)],
        OptionKind::Choice { default, values } => values
            .iter()
            .map(|v| json!(v))
            .chain([json!(default)])
            .collect(),
    }
}

/// Starts the engine and sets `options` (given as text, converted to the declared types).
async fn start_with_options(
    cmd: &EngineCommand,
    settings: &Settings,
    options: &[(String, String)],
) -> Result<Engine, EngineError> {
    let mut engine = Engine::start(cmd, settings).await?;
    if let Err(e) = set_options(&mut engine, options).await {
        engine.shutdown().await;
        return Err(e);
    }
    Ok(engine)
}

/// Sets `options` (given as text) on the engine, converted to the types it declares, as a
/// tournament does.
async fn set_options(engine: &mut Engine, options: &[(String, String)]) -> Result<(), EngineError> {
    for (name, value) in typed_options(engine, options)? {
        engine.set_option(&name, value).await?;
    }
    Ok(())
}

/// `options` converted to the types the engine declares (an unknown option or a value that
/// does not fit is an error).
fn typed_options(
    engine: &Engine,
    options: &[(String, String)],
) -> Result<Vec<(String, Value)>, EngineError> {
    options
        .iter()
        .map(|(name, text)| {
            crate::protocol::find_option(&engine.hello().options, name)
                .and_then(|o| o.parse_text(text))
                .map(|v| (name.clone(), v))
                .map_err(|reason| EngineError::BadOption {
                    name: name.clone(),
                    reason,
                })
        })
        .collect()
}

/// Runs every step against the engine (with `options` set after each start) and returns
/// the results; `report` sees each result as soon as it is known. An option that does not
/// fit the engine's declarations is an error: it says which, and what to give.
pub(crate) async fn check_engine(
    cmd: &EngineCommand,
    settings: &Settings,
    options: &[(String, String)],
    report: &mut dyn FnMut(&StepResult),
) -> Result<Vec<StepResult>, String> {
    let mut checker = Checker {
        steps: Steps::new((cmd, settings, options), report),
        settings,
        options,
        usage: None,
    };
    checker.handshake_steps().await;
    checker.spec_options_step("spec-options").await;
    if let Some(usage) = checker.usage.take() {
        checker.steps.stop().await;
        return Err(usage);
    }
    checker.option_steps().await;
    checker.spec_options_step("spec-options-again").await;
    // Moves first: an engine that cannot move fails there, not in a later step that
    // needs a move for something else (unknown fields, a whole game).
    checker.game_steps().await;
    checker.robustness_steps().await;
    checker.quit_step().await;
    Ok(checker.steps.finish().await)
}

#[cfg(test)]
mod tests;
