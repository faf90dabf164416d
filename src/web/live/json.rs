//! The state as JSON for the page: the snapshot, its boards, the standings, the recent
//! games, and a recorded game with its frames.

use super::{Board, Mode, State};
use crate::record::{GameRecord, TimeLimit, clean_text};
use crate::report::{num, pm};
use crate::rules::{BoardView, Rules, Side};
use crate::stats::Tally;
use crate::web::frames::{Frame, record_frames};
use serde::Serialize;
use std::time::Duration;

#[derive(Serialize)]
pub(super) struct SnapshotJson<'a> {
    pub(super) version: u64,
    pub(super) mode: Mode,
    pub(super) title: &'a str,
    pub(super) names: &'a [String],
    pub(super) total: u64,
    pub(super) finished: u64,
    pub(super) ended: Option<&'a str>,
    /// The verdict of the run's test (an SPRT's), once given.
    pub(super) verdict: Option<&'a str>,
    pub(super) person: Option<&'a str>,
    pub(super) can_new: bool,
    pub(super) can_resign: bool,
    /// The page may choose a match format (or single games) for the next games.
    pub(super) can_choose_match: bool,
    /// The page opens on the rules guide.
    pub(super) learn: bool,
    pub(super) start_value: Option<i32>,
    #[serde(rename = "match")]
    pub(super) matched: Option<&'a crate::web::matches::Match>,
    pub(super) starting: bool,
    pub(super) boards: Vec<BoardJson<'a>>,
    pub(super) standings: &'a [StandingJson],
    pub(super) recent: Vec<SummaryJson<'a>>,
}

#[derive(Serialize)]
pub(super) struct BoardJson<'a> {
    pub(super) game: &'a str,
    pub(super) number: u64,
    pub(super) south: &'a str,
    pub(super) north: &'a str,
    pub(super) rules: Rules,
    pub(super) rules_text: String,
    /// The side the person plays in this game, if any.
    pub(super) person: Option<Side>,
    /// The position the game started from, when not the rules' own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) start: Option<BoardView>,
    pub(super) frames: &'a [Frame],
    pub(super) position: BoardView,
    pub(super) over: bool,
    /// The referee waits for the person's move: `legal` are the pits the person may sow.
    pub(super) awaiting: bool,
    pub(super) legal: &'a [u8],
    /// Milliseconds the person has left for this move, when limited.
    pub(super) clock_ms: Option<u64>,
    pub(super) result: Option<ResultJson>,
}

pub(super) fn board_json<'a>(b: &'a Board, s: &'a State) -> BoardJson<'a> {
    let person = s.person.as_deref().and_then(|p| {
        if b.south == p {
            Some(Side::South)
        } else if b.north == p {
            Some(Side::North)
        } else {
            None
        }
    });
    let pending = s.pending.as_ref().filter(|p| p.game == b.game);
    BoardJson {
        game: &b.game,
        number: b.number,
        south: &b.south,
        north: &b.north,
        rules: b.rules,
        rules_text: rules_text(b.rules),
        person,
        start: b.start.map(|p| p.view()),
        frames: &b.frames,
        position: b.position.view(),
        over: b.record.is_some() || b.position.is_over(),
        awaiting: pending.is_some(),
        legal: pending.map_or(&[], |p| &p.legal),
        clock_ms: pending.and_then(|p| {
            p.time
                .map(|t| t.saturating_sub(p.since.elapsed()).as_millis() as u64)
        }),
        result: b.record.as_deref().map(result_json),
    }
}

#[derive(Serialize)]
pub(super) struct GameJson<'a> {
    pub(super) game: &'a str,
    pub(super) number: u64,
    pub(super) south: &'a str,
    pub(super) north: &'a str,
    pub(super) rules: Rules,
    pub(super) rules_text: String,
    /// The position the game started from, when not the rules' own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) start: Option<BoardView>,
    /// Sowings of the opening (the first frames).
    pub(super) opening: usize,
    pub(super) frames: &'a [Frame],
    pub(super) result: Option<ResultJson>,
}

/// A recorded game with its frames, as JSON.
pub(crate) fn record_json(r: &GameRecord) -> String {
    let frames = record_frames(r);
    let json = GameJson {
        game: &r.game,
        number: r.number,
        south: &r.south,
        north: &r.north,
        rules: r.rules,
        rules_text: rules_text(r.rules),
        start: r
            .start
            .is_some()
            .then(|| r.start_position().ok().map(|p| p.view()))
            .flatten(),
        opening: r.opening.len(),
        frames: &frames,
        result: Some(result_json(r)),
    };
    serde_json::to_string(&json).unwrap_or_else(|_| "{}".to_string())
}

/// The rules in words: `6 pits, 4 seeds each`, and the variants that differ from the
/// defaults.
pub(super) fn rules_text(r: Rules) -> String {
    let mut s = format!("{} pits, {} seeds each", r.pits(), r.seeds());
    if r.empty_capture() {
        s.push_str(", a last seed in an empty pit captures even alone");
    }
    match r.sweep() {
        crate::rules::Sweep::Owner => {}
        crate::rules::Sweep::EmptySide => {
            s.push_str(", the seeds left go to the side that ran out")
        }
        crate::rules::Sweep::None => s.push_str(", the seeds left count for no one"),
    }
    s
}

/// How a game ended, in data and in words.
#[derive(Serialize)]
pub(super) struct ResultJson {
    pub(super) result: &'static str,
    pub(super) winner: Option<Side>,
    pub(super) south_score: u16,
    pub(super) north_score: u16,
    pub(super) termination: &'static str,
    pub(super) loser: Option<Side>,
    pub(super) detail: String,
    pub(super) text: String,
}

pub(super) fn result_json(r: &GameRecord) -> ResultJson {
    ResultJson {
        result: r.result.as_str(),
        winner: r.result.winner(),
        south_score: r.south_score,
        north_score: r.north_score,
        termination: r.termination.as_str(),
        loser: r.loser,
        detail: clean_text(&r.detail).into_owned(),
        text: result_text(r),
    }
}

/// The end of a game in words: the final stores and who won, and how.
pub(crate) fn result_text(r: &GameRecord) -> String {
    let stores = format!(
        "{} (south) {} – {} {} (north)",
        r.south, r.south_score, r.north_score, r.north
    );
    let who = match r.result.winner() {
        Some(side) => format!("{} wins", r.name(side)),
        None => "a draw".to_string(),
    };
    let how = match (r.termination.fault(), r.loser_name()) {
        (Some(kind), Some(loser)) => {
            let what = kind.as_str().replace('_', " ");
            let detail = clean_text(&r.detail);
            if detail.is_empty() {
                format!(" ({loser} lost by {what})")
            } else {
                format!(" ({loser} lost by {what}: {detail})")
            }
        }
        (None, Some(loser)) if r.termination == crate::record::Termination::Resigned => {
            format!(" ({loser} resigned)")
        }
        _ if r.termination == crate::record::Termination::Adjudicated => {
            format!(" (adjudicated: {})", clean_text(&r.detail))
        }
        _ => String::new(),
    };
    format!("{stores}: {who}{how}")
}

#[derive(Serialize)]
pub(super) struct SummaryJson<'a> {
    pub(super) game: &'a str,
    pub(super) number: u64,
    pub(super) south: &'a str,
    pub(super) north: &'a str,
    pub(super) result: &'static str,
    pub(super) south_score: u16,
    pub(super) north_score: u16,
    pub(super) termination: &'static str,
    pub(super) plies: usize,
}

pub(super) fn summary_json(r: &GameRecord) -> SummaryJson<'_> {
    SummaryJson {
        game: &r.game,
        number: r.number,
        south: &r.south,
        north: &r.north,
        result: r.result.as_str(),
        south_score: r.south_score,
        north_score: r.north_score,
        termination: r.termination.as_str(),
        plies: r.plies(),
    }
}

/// One line of the standings, as the leaderboards write it.
#[derive(Clone, Debug, Serialize)]
pub(super) struct StandingJson {
    pub(super) rank: usize,
    pub(super) engine: String,
    pub(super) elo: String,
    pub(super) games: u64,
    pub(super) wins: u64,
    pub(super) draws: u64,
    pub(super) losses: u64,
    pub(super) score: String,
    pub(super) margin: String,
}

pub(super) fn standings_json(tally: &Tally) -> Vec<StandingJson> {
    if tally.games() == 0 {
        return Vec::new();
    }
    let Ok(s) = tally.standings(None) else {
        return Vec::new();
    };
    s.rows
        .iter()
        .map(|r| StandingJson {
            rank: r.rank,
            engine: r.engine.clone(),
            elo: pm(r.elo, 1),
            games: r.wdl.games(),
            wins: r.wdl.wins,
            draws: r.wdl.draws,
            losses: r.wdl.losses,
            score: num(100.0 * r.wdl.score(), 1),
            margin: pm(r.margin, 2),
        })
        .collect()
}

/// The time a person has for a move, `None` when it is unlimited (no clock).
pub(crate) fn person_time(limit: TimeLimit, unlimited: Duration) -> Option<Duration> {
    match limit {
        TimeLimit::MoveTime(t) if t >= unlimited => None,
        l => Some(l.available()),
    }
}
