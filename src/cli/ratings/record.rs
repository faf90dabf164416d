//! The games of a results folder that holds `games.jsonl`: counted from that record, not
//! from `games.csv`, which is only checked against it (a row edited by hand must not change
//! a rating), and only the games its tournament could have played, as a resume counts them.

use crate::record::{GameRecord, GameResult, GameRow, Termination, clean_text, counted};
use crate::rules::Side;
use crate::tournament::schedule::{Openings, Schedule};
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// What a `games.csv` row says of its game, kept until the game's record is read.
#[derive(Clone, Debug)]
pub(super) struct RowView {
    pair: Option<u64>,
    south: String,
    north: String,
    result: GameResult,
    south_score: Option<u16>,
    north_score: Option<u16>,
    termination: Termination,
    loser: Option<Side>,
}

impl RowView {
    pub(super) fn of(row: &GameRow<'_>) -> RowView {
        RowView {
            pair: row.pair,
            south: row.south.to_string(),
            north: row.north.to_string(),
            result: row.result,
            south_score: row.south_score,
            north_score: row.north_score,
            termination: row.termination,
            loser: row.loser,
        }
    }

    /// Where this row and the record `rec` differ, each as `what (games.csv) where the
    /// record says ...`; columns the row does not have are not compared.
    fn differences(&self, rec: &GameRow<'_>) -> Vec<String> {
        let mut v = Vec::new();
        let mut differ = |what: &str, row: String, record: String| {
            if row != record {
                v.push(format!("{what} {row} where the record says {record}"));
            }
        };
        let opt = |x: Option<u16>| x.map_or_else(|| "none".to_string(), |x| x.to_string());
        let side = |s: Option<Side>| s.map_or("none", Side::as_str).to_string();
        differ(
            "south",
            clean_text(&self.south).into(),
            clean_text(rec.south).into(),
        );
        differ(
            "north",
            clean_text(&self.north).into(),
            clean_text(rec.north).into(),
        );
        differ(
            "result",
            self.result.as_str().into(),
            rec.result.as_str().into(),
        );
        differ(
            "termination",
            self.termination.as_str().into(),
            rec.termination.as_str().into(),
        );
        differ("loser", side(self.loser), side(rec.loser));
        if self.south_score.is_some() {
            differ("south_score", opt(self.south_score), opt(rec.south_score));
        }
        if self.north_score.is_some() {
            differ("north_score", opt(self.north_score), opt(rec.north_score));
        }
        if let (Some(row), Some(record)) = (self.pair, rec.pair) {
            differ("pair", row.to_string(), record.to_string());
        }
        v
    }
}

/// What the tournament of a folder could have played, as its `tournament.toml` says, read
/// without resolving its engines (their programs may be gone from this machine).
struct Plan {
    id: String,
    names: Vec<String>,
    /// `None`: no end was planned (a session of `kalaha play`).
    schedule: Option<Schedule>,
}

impl Plan {
    fn of(dir: &Path) -> Option<Plan> {
        let file = crate::tournament::config::ConfigFile::load(
            &crate::results::Files::of(dir).tournament_toml(),
        )
        .ok()?;
        let id = file.id.clone()?;
        let names: Vec<String> = file.engines.iter().map(|e| e.default_name()).collect();
        let rules = file.rules.unwrap_or_default().resolve().ok()?;
        let shard = match &file.shard {
            Some(s) => Some(s.parse().ok()?),
            None => None,
        };
        let schedule = file.games.map(|games| Schedule {
            kind: file.schedule.unwrap_or_default(),
            engines: names.len(),
            pairs_per_pairing: games.div_ceil(2),
            rules,
            // Which games there are does not depend on their openings.
            openings: Openings::Start,
            shard,
        });
        Some(Plan {
            id,
            names,
            schedule,
        })
    }
}

/// What was found comparing a folder's `games.csv` with its record.
#[derive(Debug, Default)]
pub(super) struct Checked {
    /// Rows that say otherwise than their record, and the first, with what differs.
    disagree: u64,
    first_disagree: Option<String>,
    /// Rows with no record.
    without_record: u64,
    first_without_record: Option<String>,
    /// Records the folder's tournament could not have played.
    refused: u64,
    first_refused: Option<String>,
    /// Unreadable, repeated or torn lines of `games.jsonl`.
    skipped: Option<String>,
}

impl Checked {
    /// The warnings, each naming the folder `dir`.
    pub(super) fn warnings(&self, dir: &Path) -> Vec<String> {
        let dir = crate::record::shown_path(dir);
        let mut v = Vec::new();
        if let Some(first) = &self.first_disagree {
            v.push(format!(
                "{dir}: {} of games.csv {} with the record of {} in games.jsonl (the first: \
                 {first}); the record is rated, not the row: games.jsonl is the record, \
                 games.csv its view",
                counted(self.disagree, "row"),
                if self.disagree == 1 {
                    "disagrees"
                } else {
                    "disagree"
                },
                if self.disagree == 1 {
                    "its game"
                } else {
                    "their games"
                },
            ));
        }
        if let Some(first) = &self.first_without_record {
            v.push(format!(
                "{dir}: {} of games.csv {} no record in games.jsonl (the first: game {first}): \
                 not counted, as games.jsonl is the record of the games played",
                counted(self.without_record, "row"),
                if self.without_record == 1 {
                    "has"
                } else {
                    "have"
                },
            ));
        }
        if let Some(first) = &self.first_refused {
            v.push(format!(
                "{dir}: {} of games.jsonl could not have been played by its tournament (the \
                 first: {first}): not counted, as a resume does not count {}",
                counted(self.refused, "record"),
                if self.refused == 1 { "it" } else { "them" },
            ));
        }
        if let Some(skipped) = &self.skipped {
            v.push(format!(
                "{dir}: games.jsonl has {skipped}; they are not counted"
            ));
        }
        v
    }
}

/// Hands every game of the record `dir/games.jsonl` that its tournament could have played
/// to `add` with its record (each game once: its first line), and compares the `rows` of `games.csv`
/// (by game id) with their records; `line` is told the bytes of each line read.
pub(super) fn read_record(
    dir: &Path,
    mut rows: HashMap<String, RowView>,
    mut line: impl FnMut(u64),
    mut add: impl FnMut(&GameRow<'_>, &GameRecord),
) -> std::io::Result<Checked> {
    let plan = Plan::of(dir);
    let mut checked = Checked::default();
    let mut seen = HashSet::new();
    let mut repeated = 0u64;
    let mut visit = |rec: GameRecord, bytes: &[u8]| {
        line(bytes.len() as u64);
        if !seen.insert(rec.game.clone()) {
            repeated += 1;
            return;
        }
        let id = clean_text(&rec.game).into_owned();
        let row_view = rows.remove(&rec.game);
        let refused = match rec.replay() {
            Err(e) => Some(format!("game {id}: {e}")),
            Ok(_) => plan
                .as_ref()
                .filter(|p| {
                    let scheduled = p.schedule.as_ref().map(|s| move |n| s.has_game(n));
                    !crate::results::could_have_played(
                        &rec.row(),
                        &p.id,
                        &p.names,
                        scheduled.as_ref().map(|f| f as &dyn Fn(u64) -> bool),
                    )
                })
                .map(|p| {
                    format!(
                        "game {id}, not a game of tournament {} (an engine not in it, an \
                         engine against itself, or a number outside its schedule)",
                        clean_text(&p.id)
                    )
                }),
        };
        if let Some(why) = refused {
            checked.refused += 1;
            checked.first_refused.get_or_insert(why);
            return;
        }
        let row = rec.row();
        if let Some(view) = row_view {
            let differences = view.differences(&row);
            if !differences.is_empty() {
                checked.disagree += 1;
                checked
                    .first_disagree
                    .get_or_insert_with(|| format!("game {id}: {}", differences.join(", ")));
            }
        }
        add(&row, &rec);
    };
    let summary =
        crate::results::read_jsonl(&crate::results::Files::of(dir).games_jsonl(), &mut visit)?;
    let games = crate::results::Games {
        summary,
        repeated,
        ..Default::default()
    };
    checked.skipped = games.skipped();
    // Rows left have no record; the first in id order, so that the warning is the same
    // from run to run.
    checked.without_record = rows.len() as u64;
    checked.first_without_record = rows.keys().min().map(|id| clean_text(id).into_owned());
    Ok(checked)
}
