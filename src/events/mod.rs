//! `--events FILE`: a run as JSON lines for programs (a CI job, a ladder, a results
//! server), one object a line, `{"v":1,"event":NAME,...}`. The schema is here and nowhere
//! else: one type per event, the variants of [`Event`]; `docs/events.md` documents every
//! event and field (a test checks that the two name the same events).
//!
//! What an event says is taken from the one place that says it elsewhere: a finished
//! game is its `games.csv` row ([`CsvRow`]), the standings are the scoreboard's
//! [`StandingRow`]s, an SPRT's status is the [`Judgement`] of [`crate::sprt::Test::judge`]
//! made for the pair, its verdict the record of `sprt-result.toml` ([`VerdictRecord`]).
//!
//! The stream itself ([`stream`]) belongs to the process: the command line opens it before
//! a run, the run's view ([`EventsView`]), the SPRT and the warnings write into it, and the
//! command line ends it with the exit code ([`stream::finish`]).

pub mod stream;
mod view;
mod warnings;

pub use stream::emit;
pub use view::EventsView;
pub use warnings::WarningLayer;

use crate::results::{CsvRow, RunKind};
use crate::sprt::Judgement;
use crate::sprt::files::VerdictRecord;
use crate::stats::{Estimate, StandingRow};
use crate::tournament::config::ConfigFile;
use serde::Serialize;

/// The version of the schema, the `v` of every line. A field may be added without a new
/// version; a field removed or changed in meaning makes one.
pub const VERSION: u32 = 1;

/// Every event's name, as its lines' `event` says it, in the order a run writes them.
pub const NAMES: [&str; 8] = [
    "run_started",
    "game_started",
    "game_finished",
    "standings",
    "sprt_status",
    "verdict",
    "warning",
    "run_finished",
];

/// Something a run tells a program: one line of the stream.
#[derive(Debug, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event<'a> {
    RunStarted(Box<RunStarted>),
    GameStarted(GameStarted<'a>),
    /// The game's `games.csv` row, once the game is recorded.
    GameFinished(CsvRow<'a>),
    Standings(Standings<'a>),
    SprtStatus(SprtStatus),
    Verdict(Verdict<'a>),
    Warning(Warning),
    RunFinished(RunFinished),
}

impl Event<'_> {
    /// The event's name, one of [`NAMES`].
    pub fn name(&self) -> &'static str {
        match self {
            Event::RunStarted(_) => NAMES[0],
            Event::GameStarted(_) => NAMES[1],
            Event::GameFinished(_) => NAMES[2],
            Event::Standings(_) => NAMES[3],
            Event::SprtStatus(_) => NAMES[4],
            Event::Verdict(_) => NAMES[5],
            Event::Warning(_) => NAMES[6],
            Event::RunFinished(_) => NAMES[7],
        }
    }

    /// The event as a line of the stream, with its newline.
    pub fn line(&self) -> String {
        #[derive(Serialize)]
        struct Line<'a, 'b> {
            v: u32,
            #[serde(flatten)]
            event: &'b Event<'a>,
        }
        let mut text = serde_json::to_string(&Line {
            v: VERSION,
            event: self,
        })
        .expect("an event serialises to JSON");
        text.push('\n');
        text
    }
}

/// The games are about to start: the engines have answered `hello`, the results folder is
/// claimed, and (on a resume) its games are counted.
#[derive(Debug, Serialize)]
pub struct RunStarted {
    /// `tournament`, `match`, `sprt` or `play`.
    pub kind: RunKind,
    /// The results folder.
    pub folder: String,
    /// The tournament id, the prefix of every game id.
    pub id: String,
    /// The run continues one begun earlier (`--resume`).
    pub resumed: bool,
    /// Games of the schedule already recorded (by earlier runs of a resumed one).
    pub games_done: u64,
    /// Games in the schedule (this shard's); for an SPRT, the most it may play.
    pub games_total: u64,
    /// The engines' names, in the order of the settings.
    pub engines: Vec<String>,
    /// The run's `tournament.toml`: the resolved settings and the engines (`engine`) with
    /// their commands, versions and authors.
    pub settings: Option<ConfigFile>,
    /// An SPRT's `sprt.toml`: its bounds, error rates and model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sprt: Option<crate::sprt::SprtSettings>,
    /// What the repair of a resumed folder found.
    pub notes: Vec<String>,
}

/// A game started: both engines have been told of it.
#[derive(Debug, Serialize)]
pub struct GameStarted<'a> {
    pub game: &'a str,
    pub round: u64,
    pub pair: u64,
    pub south: &'a str,
    pub north: &'a str,
    /// The opening's sowings, as the `opening` column of `games.csv` writes them.
    pub opening: String,
}

/// The standings of the whole run (games of earlier runs of a resumed one included).
#[derive(Debug, Serialize)]
pub struct Standings<'a> {
    /// Games counted in them.
    pub games: u64,
    /// The standings at the end of the run (else those of every `--report-every` games).
    pub at_end: bool,
    /// Best first.
    pub rows: &'a [StandingRow],
}

/// Where an SPRT stands after a game pair: the judgement the test made of it.
#[derive(Debug, Serialize)]
pub struct SprtStatus {
    pub pairs: u64,
    pub games: u64,
    /// The pairs' pentanomial counts, from the new engine's side: LL, LD, WL+DD, WD, WW.
    pub penta: [u64; 5],
    /// The log-likelihood ratio (null when it is not a number).
    pub llr: f64,
    pub lower: f64,
    pub upper: f64,
    /// The new engine's Elo from the pairs, in the test's model's units.
    pub elo: Estimate,
    /// `H0` or `H1` when this pair ended the test by a bound, else null.
    pub accepted: Option<&'static str>,
    /// This pair ended the test (by a bound, or as undecidable).
    pub ended: bool,
}

impl From<&Judgement> for SprtStatus {
    fn from(j: &Judgement) -> SprtStatus {
        let s = &j.status;
        SprtStatus {
            pairs: s.pairs,
            games: s.games,
            penta: j.penta,
            llr: s.llr,
            lower: s.lower,
            upper: s.upper,
            elo: s.elo,
            accepted: match j.end {
                Some(crate::sprt::SprtEnd::Decided(_)) => hypothesis(s.decision),
                _ => None,
            },
            ended: j.end.is_some(),
        }
    }
}

fn hypothesis(d: crate::stats::SprtDecision) -> Option<&'static str> {
    match d {
        crate::stats::SprtDecision::H0 => Some("H0"),
        crate::stats::SprtDecision::H1 => Some("H1"),
        crate::stats::SprtDecision::Continue => None,
    }
}

/// An SPRT's verdict: the fields of `sprt-result.toml`, and the hypothesis accepted.
#[derive(Debug, Serialize)]
pub struct Verdict<'a> {
    /// `H0`, `H1`, or null for no decision.
    pub accepted: Option<&'static str>,
    #[serde(flatten)]
    pub record: VerdictRecord<'a>,
}

impl<'a> Verdict<'a> {
    pub fn new(verdict: crate::sprt::Verdict, record: VerdictRecord<'a>) -> Verdict<'a> {
        Verdict {
            accepted: match verdict {
                crate::sprt::Verdict::H0 => Some("H0"),
                crate::sprt::Verdict::H1 => Some("H1"),
                crate::sprt::Verdict::NoDecision => None,
            },
            record,
        }
    }
}

/// A warning the run printed (on standard error, as `warning: MESSAGE`).
#[derive(Debug, Serialize)]
pub struct Warning {
    pub message: String,
}

/// The command ended: the last line of every stream.
#[derive(Debug, Serialize)]
pub struct RunFinished {
    /// The process's exit status (README, "Exit codes").
    pub exit_code: u8,
    pub reason: Reason,
    /// The error, when the command failed.
    pub message: Option<String>,
    /// Games recorded by this run (null when no game was to be played).
    pub games_played: Option<u64>,
    /// Games stopped and not recorded (a resume plays them again).
    pub games_interrupted: Option<u64>,
}

/// Why a command ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// The whole schedule was played (exit 0).
    Complete,
    /// An SPRT accepted H1 (exit 0).
    H1Accepted,
    /// An SPRT accepted H0 (exit 3).
    H0Accepted,
    /// An SPRT ran out of games, or cannot decide (exit 4).
    NoDecision,
    /// Ctrl-C or SIGTERM stopped the run; a resume continues it (exit 130).
    Interrupted,
    /// A usage or input error (exit 2), or a failure (exit 1): see `message`.
    Error,
}

#[cfg(test)]
mod tests;
