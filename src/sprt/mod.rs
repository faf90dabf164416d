//! The SPRT of `kalaha sprt`, in one place: its settings (saved as `sprt.toml`), the
//! decision after every game pair of the new engine against the base engine
//! ([`Test::judge`], the only place it is made), the rule that stops the run at the
//! decision ([`rule`]), its files ([`files`]: `sprt.toml`, `sprt.csv`, `sprt-result.toml`)
//! and the verdict. `views::sprt` prints the decisions as they come.
//!
//! The test reads the pentanomial counts of the pairing from the run's scoreboard, so the
//! pairs are the same as in every report.

pub(crate) mod files;
pub(crate) mod pool;
pub(crate) mod rule;
pub(crate) mod workers;

pub(crate) use rule::{Judgements, SprtRule};

use crate::stats::sprt::{StoppedEstimate, fmt_estimate, fmt_llr, fmt_signed};
use crate::stats::{Sprt, SprtDecision, SprtModel, SprtStatus, Tally};
use serde::{Deserialize, Serialize};

/// The test's parameters as saved in `sprt.toml`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SprtSettings {
    pub elo0: f64,
    pub elo1: f64,
    pub alpha: f64,
    pub beta: f64,
    pub model: SprtModel,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_games: Option<u64>,
    /// The workers of a test played by several processes that share a folder
    /// ([`workers`]); absent for a test on one machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workers: Option<u64>,
}

/// The largest Elo bound accepted: beyond it scores are indistinguishable from 0 or 1.
pub(crate) const MAX_ELO_BOUND: f64 = 2000.0;

/// Pairs after which a test whose every pair was a draw pair stops as undecidable.
pub(crate) const STALL_PAIRS: u64 = 100;

/// Pentanomial counts on which the LLR of every accepted test is a number: no pairs, one
/// pair of each kind, sweeps both ways, even and mixed results, and many pairs.
const PROBE_COUNTS: [[u64; 5]; 10] = [
    [0, 0, 0, 0, 0],
    [1, 0, 0, 0, 0],
    [0, 0, 1, 0, 0],
    [0, 0, 0, 0, 1],
    [0, 1, 0, 1, 0],
    [10, 0, 0, 0, 10],
    [1, 10, 100, 10, 1],
    [3, 0, 0, 0, 97],
    [1_000_000, 0, 0, 0, 0],
    [0, 0, 0, 0, 1_000_000],
];

/// The bounds each model can test, for messages.
fn sane_range(model: SprtModel) -> &'static str {
    match model {
        SprtModel::Normalized => {
            "normalized Elo bounds between -200 and 200 (typically 0 and 5; larger \
             differences need --model logistic)"
        }
        SprtModel::Logistic => "logistic Elo bounds between -2000 and 2000",
    }
}

impl SprtSettings {
    pub(crate) fn sprt(&self) -> Sprt {
        Sprt {
            elo0: self.elo0,
            elo1: self.elo1,
            alpha: self.alpha,
            beta: self.beta,
            model: self.model,
        }
    }

    /// Checks the parameters; the error names the setting.
    pub(crate) fn validate(&self) -> Result<(), String> {
        let p = |x: f64| x > 0.0 && x < 0.5;
        if !p(self.alpha) {
            return Err(format!(
                "alpha {}: it must be above 0 and below 0.5",
                self.alpha
            ));
        }
        if !p(self.beta) {
            return Err(format!(
                "beta {}: it must be above 0 and below 0.5",
                self.beta
            ));
        }
        for (name, x) in [("elo0", self.elo0), ("elo1", self.elo1)] {
            if !x.is_finite() || x.abs() > MAX_ELO_BOUND {
                return Err(format!(
                    "{name} {x}: it must be a number between -{MAX_ELO_BOUND} and {MAX_ELO_BOUND}"
                ));
            }
        }
        if self.elo0 >= self.elo1 {
            return Err(format!(
                "elo0 {} must be smaller than elo1 {}",
                self.elo0, self.elo1
            ));
        }
        if self.workers == Some(0) {
            return Err("workers: at least 1".to_string());
        }
        if self.max_games.is_some_and(|n| n < 2) {
            return Err("max_games: at least 2 (one game pair) are needed".to_string());
        }
        self.check_llr()
    }

    /// Checks that the LLR is a number on [`PROBE_COUNTS`]: with bounds the model cannot
    /// fit (a normalized Elo of a few hundred) it is not, and the test could never decide.
    fn check_llr(&self) -> Result<(), String> {
        let sprt = self.sprt();
        let computable = |s: Sprt| PROBE_COUNTS.iter().all(|c| s.llr(c).is_finite());
        for (name, x) in [("elo1", self.elo1), ("elo0", self.elo0)] {
            if !computable(Sprt {
                elo0: x,
                elo1: x,
                ..sprt
            }) {
                return Err(format!(
                    "{name} {x}: the {} model cannot test this bound (its likelihood ratio \
                     is not a number); use {}",
                    sprt.model.as_str(),
                    sane_range(self.model)
                ));
            }
        }
        if !computable(sprt) {
            return Err(format!(
                "elo0 {} and elo1 {}: the {} model cannot test these bounds (their \
                 likelihood ratio is not a number); use {}",
                self.elo0,
                self.elo1,
                sprt.model.as_str(),
                sane_range(self.model)
            ));
        }
        Ok(())
    }
}

/// How a test ended.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum SprtEnd {
    /// The LLR left its bounds (the status of the pair that decided).
    Decided(SprtStatus),
    /// Every pair was a draw pair for [`STALL_PAIRS`] pairs: the test cannot decide.
    Stalled(SprtStatus),
    /// The LLR is not a number (bounds the model cannot fit, which validation refuses):
    /// the test cannot decide.
    Undefined(SprtStatus),
}

/// The test of one engine against another: what [`Test::judge`] needs.
#[derive(Clone, Debug)]
pub(crate) struct Test {
    sprt: Sprt,
    /// The new engine's name and the base engine's, as the scoreboard knows them.
    pub new: String,
    pub base: String,
}

/// Where a test stands after a game pair: its status, the pentanomial counts it was
/// computed from, and its end if this pair ended it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Judgement {
    pub status: SprtStatus,
    pub penta: [u64; 5],
    pub end: Option<SprtEnd>,
}

impl Test {
    /// The test of `settings`, of `new` against `base`.
    pub(crate) fn new(settings: &SprtSettings, new: &str, base: &str) -> Test {
        Test {
            sprt: settings.sprt(),
            new: new.to_string(),
            base: base.to_string(),
        }
    }

    /// Where the test stands in `tally`, and whether it has ended: the test's one
    /// decision, whoever asks (the stop rule on the game loop, the rebuild of `sprt.csv`
    /// on a resume).
    pub(crate) fn judge(&self, tally: &Tally) -> Judgement {
        let pairing = match (
            tally.engine_index(&self.new),
            tally.engine_index(&self.base),
        ) {
            (Some(a), Some(b)) => tally.pairing(a, b),
            _ => None,
        }
        .unwrap_or_default();
        let status = self.sprt.status(pairing.penta);
        let penta = pairing.penta.0;
        Judgement {
            status,
            penta,
            end: end_of(status, penta),
        }
    }
}

/// The end of a test at `status`, if it has ended.
fn end_of(status: SprtStatus, penta: [u64; 5]) -> Option<SprtEnd> {
    if status.llr.is_nan() {
        return Some(SprtEnd::Undefined(status));
    }
    if status.decision != SprtDecision::Continue {
        return Some(SprtEnd::Decided(status));
    }
    // Every pair a draw pair (1-1): the engines play each opening alike from both seats
    // and the LLR stays at 0 however long the test runs.
    let all_even = penta[2] == status.pairs;
    (status.pairs >= STALL_PAIRS && all_even).then_some(SprtEnd::Stalled(status))
}

/// What a test concluded; `cli::exit` gives each its exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    H1,
    H0,
    NoDecision,
}

/// The median-unbiased estimate of the test `settings` after the pairs `penta`, as the
/// verdict, `sprt-result.toml` and the leaderboard give it (in the model's Elo).
pub(crate) fn stopped_estimate(
    settings: &SprtSettings,
    penta: [u64; 5],
) -> Option<StoppedEstimate> {
    settings.sprt().median_unbiased(&penta)
}

/// The verdict of a test that ended as `end` (`None`: the game limit ran out) with the
/// status `last` after the pairs `penta`: its kind, its line and the estimate that
/// stopping does not bias (for a test that stopped at a bound or ran out).
pub(crate) fn conclusion(
    settings: &SprtSettings,
    end: Option<SprtEnd>,
    last: SprtStatus,
    penta: [u64; 5],
    new: &str,
    base: &str,
) -> (Verdict, String, Option<StoppedEstimate>) {
    let estimate = match end {
        Some(SprtEnd::Decided(_)) | None => stopped_estimate(settings, penta),
        Some(SprtEnd::Stalled(_) | SprtEnd::Undefined(_)) => None,
    };
    let (verdict, text) = verdict(end, last, penta, estimate, new, base);
    (verdict, text, estimate)
}

/// Why every pair of a test drawn 1-1 leaves it undecided, and what to change: the end of
/// the verdict of a test that stalled, or that reached its game limit with only such pairs.
fn all_drawn(pairs: u64) -> String {
    format!(
        "{} drawn 1-1 (each engine won one game of each pair, or both games were \
         drawn), which leaves the LLR at 0. Engines that play alike, or openings that one \
         seat wins whoever holds it, do this: use more even or more varied openings \
         (--balanced-openings, --openings, --opening-plies) or engines that differ.",
        if pairs == 1 {
            "the only pair was".to_string()
        } else {
            format!("all {pairs} pairs were")
        }
    )
}

/// Every pair of `penta` is a draw pair (1-1), and there is at least one.
fn every_pair_drawn(penta: [u64; 5]) -> bool {
    penta[2] > 0 && penta[2] == penta.iter().sum::<u64>()
}

/// The verdict and the line that says it, naming the new engine and the base engine; a
/// test that stopped gives its naive Elo and its median-unbiased estimate (`estimate`). A
/// test that ended with every pair of `penta` drawn 1-1, whatever ended it, says so and
/// what would help.
pub(crate) fn verdict(
    end: Option<SprtEnd>,
    last: SprtStatus,
    penta: [u64; 5],
    estimate: Option<StoppedEstimate>,
    new: &str,
    base: &str,
) -> (Verdict, String) {
    let elo = |s: &SprtStatus| match estimate {
        // The naive estimate in the units of the median-unbiased one: the test's model.
        Some(e) => format!(
            "naive {unit} {}; median-unbiased {unit} {} [{}, {}]",
            fmt_estimate(match e.model {
                SprtModel::Normalized => s.nelo,
                SprtModel::Logistic => s.elo,
            }),
            e.value_words(),
            fmt_signed(e.lower),
            fmt_signed(e.upper),
            unit = match e.model {
                SprtModel::Normalized => "nElo",
                SprtModel::Logistic => "Elo",
            }
        ),
        None => format!("Elo {}", fmt_estimate(s.elo)),
    };
    let (new, base) = (format!("{new} (new)"), format!("{base} (base)"));
    match end {
        Some(SprtEnd::Decided(s)) if s.decision == SprtDecision::H1 => (
            Verdict::H1,
            format!(
                "H1 accepted: {new} is stronger than {base} (LLR {} >= {} after {}, {})",
                fmt_llr(s.llr),
                fmt_llr(s.upper),
                crate::record::counted(s.pairs, "pair"),
                elo(&s)
            ),
        ),
        Some(SprtEnd::Decided(s)) => (
            Verdict::H0,
            format!(
                "H0 accepted: {new} is not stronger than {base} (LLR {} <= {} after {}, {})",
                fmt_llr(s.llr),
                fmt_llr(s.lower),
                crate::record::counted(s.pairs, "pair"),
                elo(&s)
            ),
        ),
        Some(SprtEnd::Stalled(s)) => (
            Verdict::NoDecision,
            format!("no decision possible: {}", all_drawn(s.pairs)),
        ),
        Some(SprtEnd::Undefined(s)) => (
            Verdict::NoDecision,
            format!(
                "no decision possible: the LLR is not a number after {} (the model \
                 cannot fit the bounds in sprt.toml); start a new test with narrower bounds",
                crate::record::counted(s.pairs, "pair")
            ),
        ),
        None => (
            Verdict::NoDecision,
            format!(
                "no decision: the game limit was reached (LLR {} in [{}, {}] after {}, {}){}",
                fmt_llr(last.llr),
                fmt_llr(last.lower),
                fmt_llr(last.upper),
                crate::record::counted(last.pairs, "pair"),
                elo(&last),
                if every_pair_drawn(penta) {
                    format!("; {}", all_drawn(last.pairs))
                } else {
                    String::new()
                }
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> SprtSettings {
        SprtSettings {
            elo0: 0.0,
            elo1: 5.0,
            alpha: 0.05,
            beta: 0.05,
            model: SprtModel::Normalized,
            max_games: None,
            workers: None,
        }
    }

    /// The games of a judgement are those of the pairs its LLR counts: not the first game
    /// of a pair whose second has not finished, nor the game beside a repeated one.
    #[test]
    fn a_judgement_counts_the_games_of_its_pairs() {
        let test = Test::new(&settings(), "new", "base");
        let mut tally = Tally::new();
        let mut add = |n: u64, repeat: bool| {
            let (south, north) = if n % 2 == 1 {
                ("new", "base")
            } else {
                ("base", "new")
            };
            let g = crate::results::sample_record("t", n, south, north);
            tally.add(&crate::record::GameRow { repeat, ..g.row() });
            let s = test.judge(&tally).status;
            (s.pairs, s.games)
        };
        assert_eq!(add(1, false), (0, 0));
        assert_eq!(add(2, false), (1, 2));
        // The first game of pair 2 is played, its second is not yet.
        assert_eq!(add(3, false), (1, 2));
        assert_eq!(add(4, false), (2, 4));
        // Pair 3 has a game that repeats an earlier one: it never completes.
        assert_eq!(add(5, false), (2, 4));
        assert_eq!(add(6, true), (2, 4));
        assert_eq!(add(8, false), (2, 4));
        assert_eq!(add(7, false), (3, 6));
    }

    #[test]
    fn absurd_settings_are_refused_by_name() {
        let bad = |f: &dyn Fn(&mut SprtSettings)| {
            let mut s = settings();
            f(&mut s);
            s.validate().unwrap_err()
        };
        assert!(
            bad(&|s| {
                s.elo0 = -1e308;
                s.elo1 = 1e308
            })
            .contains("elo0")
        );
        assert!(bad(&|s| s.elo1 = f64::NAN).contains("elo1"));
        assert!(bad(&|s| s.elo1 = -1.0).contains("smaller"));
        assert!(bad(&|s| s.max_games = Some(0)).contains("max_games"));
        assert!(bad(&|s| s.alpha = 0.5).contains("alpha"));
        assert!(settings().validate().is_ok());
    }

    #[test]
    fn bounds_the_model_cannot_fit_are_refused_by_name() {
        let with = |elo0, elo1, model| SprtSettings {
            elo0,
            elo1,
            model,
            ..settings()
        };
        let e = with(0.0, 2000.0, SprtModel::Normalized)
            .validate()
            .unwrap_err();
        assert!(
            e.starts_with("elo1 2000") && e.contains("-200 and 200"),
            "{e}"
        );
        let e = with(-500.0, 0.0, SprtModel::Normalized)
            .validate()
            .unwrap_err();
        assert!(e.starts_with("elo0 -500"), "{e}");
        assert!(with(0.0, 150.0, SprtModel::Normalized).validate().is_ok());
        assert!(with(0.0, 2000.0, SprtModel::Logistic).validate().is_ok());
        assert!(
            with(-2000.0, 2000.0, SprtModel::Logistic)
                .validate()
                .is_ok()
        );
    }

    #[test]
    fn a_llr_that_is_not_a_number_ends_the_test_undecided() {
        // Bounds that validation refuses, as an old sprt.toml might hold.
        let sprt = SprtSettings {
            elo1: 2000.0,
            ..settings()
        }
        .sprt();
        let penta = [1, 2, 3, 2, 1];
        let s = sprt.status(crate::stats::Pentanomial(penta));
        assert!(s.llr.is_nan());
        assert!(matches!(end_of(s, penta), Some(SprtEnd::Undefined(_))));
        let (code, text) = verdict(end_of(s, penta), s, penta, None, "a", "b");
        assert_eq!(code, Verdict::NoDecision);
        assert!(text.contains("not a number"), "{text}");
    }

    #[test]
    fn a_test_where_every_pair_scores_alike_stalls() {
        let sprt = settings().sprt();
        let penta = [0, 0, STALL_PAIRS, 0, 0];
        let s = sprt.status(crate::stats::Pentanomial(penta));
        assert_eq!(s.decision, SprtDecision::Continue);
        assert!(matches!(end_of(s, penta), Some(SprtEnd::Stalled(_))));
        let (code, text) = verdict(end_of(s, penta), s, penta, None, "a", "b");
        assert_eq!(code, Verdict::NoDecision);
        assert!(
            text.starts_with("no decision possible: all 100 pairs were drawn 1-1"),
            "{text}"
        );
        let fewer = [0, 0, 10, 0, 0];
        let s = sprt.status(crate::stats::Pentanomial(fewer));
        assert_eq!(end_of(s, fewer), None);
        // A sweep is not a stall: the LLR rises.
        let sweep = [0, 0, 0, 0, STALL_PAIRS];
        let s = sprt.status(crate::stats::Pentanomial(sweep));
        assert_eq!(end_of(s, sweep), None);
    }

    /// The game limit reached with every pair drawn 1-1 says that no decision was
    /// possible, as a test that stalled does; with one pair that was not a draw pair, or
    /// with no pair, it does not.
    #[test]
    fn a_game_limit_reached_with_every_pair_drawn_says_why_there_was_no_decision() {
        let sprt = settings().sprt();
        let say = |penta: [u64; 5]| {
            let s = sprt.status(crate::stats::Pentanomial(penta));
            assert_eq!(end_of(s, penta), None, "{penta:?}");
            let (code, text, _) = conclusion(&settings(), None, s, penta, "new", "old");
            assert_eq!(code, Verdict::NoDecision);
            assert!(
                text.starts_with("no decision: the game limit was reached (LLR "),
                "{text}"
            );
            text
        };
        for (penta, pairs) in [
            ([0, 0, 2, 0, 0], "all 2 pairs were"),
            ([0, 0, 1, 0, 0], "the only pair was"),
        ] {
            let text = say(penta);
            assert!(
                text.contains(&format!("); {pairs} drawn 1-1 (each engine won")),
                "{text}"
            );
            assert!(text.contains("--balanced-openings"), "{text}");
        }
        for penta in [[0, 0, 0, 0, 0], [0, 1, 5, 1, 0]] {
            let text = say(penta);
            assert!(!text.contains("drawn 1-1"), "{penta:?}: {text}");
        }
    }
}
