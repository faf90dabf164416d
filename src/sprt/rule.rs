//! The test as the run's stop rule: it is asked on the game loop after every finished
//! game, so the run ends at the pair that decides and no game starts after the decision.
//! Each completed pair's [`Judgement`] is handed, in order, to whoever shows the test
//! (`views::sprt`), which so shows the decision that stopped the run, not one of its own.

use super::{Judgement, SprtSettings, Test};
use crate::stats::Tally;
use crate::tournament::events::{StartInfo, StopRule};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// The judgements of the completed pairs not yet shown, oldest first.
#[derive(Clone, Debug, Default)]
pub(crate) struct Judgements(Arc<Mutex<VecDeque<Judgement>>>);

impl Judgements {
    fn push(&self, j: Judgement) {
        self.0.lock().expect("judgements lock").push_back(j);
    }

    /// The oldest judgement not yet shown.
    pub(crate) fn next(&self) -> Option<Judgement> {
        self.0.lock().expect("judgements lock").pop_front()
    }
}

/// The test as the run's stop rule.
pub(crate) struct SprtRule {
    test: Test,
    judgements: Judgements,
    ended: bool,
}

impl SprtRule {
    /// The rule of `settings` (the engines' names are settled at the start of the run), and
    /// the judgements it will make.
    pub(crate) fn new(settings: &SprtSettings, new: &str, base: &str) -> (SprtRule, Judgements) {
        let judgements = Judgements::default();
        let rule = SprtRule {
            test: Test::new(settings, new, base),
            judgements: judgements.clone(),
            ended: false,
        };
        (rule, judgements)
    }
}

impl StopRule for SprtRule {
    fn start(&mut self, info: &StartInfo) {
        if let [new, base] = &info.names[..] {
            (self.test.new, self.test.base) = (new.clone(), base.clone());
        }
    }

    /// Asked after every completed pair.
    fn should_stop(&mut self, tally: &Tally) -> bool {
        if self.ended {
            return true;
        }
        let j = self.test.judge(tally);
        self.ended = j.end.is_some();
        self.judgements.push(j);
        self.ended
    }
}
