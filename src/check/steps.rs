//! The step runner both checks share (`kalaha check` for kalaha engines and for KGP
//! agents): steps run one after another against one running program, which is started
//! again after a step fails; once it cannot be used, the remaining steps are counted and
//! reported in one last line, as not run, with the reason. A step that does not apply to
//! the program is said as skipped: every check of one kind counts the same steps.

use super::{Failure, Outcome, StepResult};

/// What a step returns: the warnings of a passed step, or the failure and whether the
/// program can no longer be used (`true`: the remaining steps do not run).
pub(crate) type StepOutcome = Result<Vec<String>, (Failure, bool)>;

/// A program a check runs its steps against.
pub(crate) trait Subject: Sized {
    /// What it takes to start one again.
    type Start<'a>: Copy;
    /// The program as the reasons name it: "engine" or "agent".
    const NOUN: &'static str;
    /// Starts one, ready for a step; the error says why it could not.
    async fn start<'s>(with: Self::Start<'s>) -> Result<Self, String>;
    /// Ends it.
    async fn stop(self);
}

/// The steps run so far and the program the next one runs against.
pub(crate) struct Steps<'a, T: Subject> {
    start: T::Start<'a>,
    /// The running program, if the last step left one.
    pub subject: Option<T>,
    /// Set when the program can no longer be used: the reason the remaining steps do not
    /// run.
    pub dead: Option<String>,
    /// Steps not run because the program is dead.
    pub not_run: usize,
    results: Vec<StepResult>,
    report: &'a mut dyn FnMut(&StepResult),
}

impl<'a, T: Subject> Steps<'a, T> {
    /// No step run yet, no program running; `report` sees each result as it is known.
    pub(crate) fn new(start: T::Start<'a>, report: &'a mut dyn FnMut(&StepResult)) -> Self {
        Steps {
            start,
            subject: None,
            dead: None,
            not_run: 0,
            results: Vec::new(),
            report,
        }
    }

    /// What the program is started with.
    pub(crate) fn start(&self) -> T::Start<'a> {
        self.start
    }

    /// Records the result of a step.
    pub(crate) fn push(&mut self, name: &str, failure: Option<Failure>, warnings: Vec<String>) {
        let outcome = match failure {
            Some(f) => Outcome::Failed(f),
            None => Outcome::Passed,
        };
        self.record(name, outcome, warnings);
    }

    /// Records a step that does not apply to this program, for `reason`.
    pub(crate) fn skip(&mut self, name: &str, reason: &str) {
        self.record(name, Outcome::Skipped(reason.to_string()), Vec::new());
    }

    fn record(&mut self, name: &str, outcome: Outcome, warnings: Vec<String>) {
        let r = StepResult {
            name: name.to_string(),
            outcome,
            warnings,
            steps: 1,
        };
        (self.report)(&r);
        self.results.push(r);
    }

    /// Records a step that failed with `reason` and no line received.
    pub(crate) fn fail(&mut self, name: &str, reason: impl Into<String>) {
        self.push(name, Some(Failure::msg(reason)), Vec::new());
    }

    /// Marks the program as unusable: the remaining steps are not run, for `reason`.
    pub(crate) fn give_up(&mut self, reason: impl Into<String>) {
        self.dead = Some(reason.into());
    }

    /// The program for the next step, started again if the last step ended it; `Err` (the
    /// reason) when it is dead or cannot be started.
    pub(crate) async fn subject(&mut self) -> Result<&mut T, String> {
        if let Some(reason) = &self.dead {
            return Err(reason.clone());
        }
        if self.subject.is_none() {
            match T::start(self.start).await {
                Ok(s) => self.subject = Some(s),
                Err(e) => {
                    let reason = format!("not run: the {} could not be restarted: {e}", T::NOUN);
                    self.dead = Some(reason.clone());
                    return Err(reason);
                }
            }
        }
        Ok(self.subject.as_mut().expect("the program was just started"))
    }

    /// Runs one step; after a failure the program is stopped (to be started again for the
    /// next step) or, if the failure says so, given up.
    pub(crate) async fn step<F>(&mut self, name: &str, f: F)
    where
        F: AsyncFnOnce(&mut T) -> StepOutcome,
    {
        let subject = match self.subject().await {
            Ok(s) => s,
            Err(_) => {
                self.not_run += 1;
                return;
            }
        };
        match f(subject).await {
            Ok(warnings) => self.push(name, None, warnings),
            Err((failure, fatal)) => {
                if let Some(s) = self.subject.take() {
                    s.stop().await;
                }
                if fatal {
                    self.dead = Some(format!("not run: the {} failed at {name}", T::NOUN));
                }
                self.push(name, Some(failure), Vec::new());
            }
        }
    }

    /// The running program, taken for a last step of its own (`None` if it is dead or
    /// cannot be started again; the step is then counted as not run).
    pub(crate) async fn take_for_last_step(&mut self) -> Option<T> {
        if self.subject().await.is_err() {
            self.not_run += 1;
            return None;
        }
        self.subject.take()
    }

    /// Stops the program, if one runs.
    pub(crate) async fn stop(&mut self) {
        if let Some(s) = self.subject.take() {
            s.stop().await;
        }
    }

    /// Every result, the steps not run counted in one last line with the reason.
    pub(crate) async fn finish(mut self) -> Vec<StepResult> {
        self.stop().await;
        if self.not_run > 0 {
            let reason = self.dead.clone().unwrap_or_default();
            let name = format!(
                "{} more",
                crate::record::counted(self.not_run as u64, "step")
            );
            self.fail(&name, reason);
            if let Some(last) = self.results.last_mut() {
                last.steps = self.not_run;
            }
        }
        self.results
    }
}
