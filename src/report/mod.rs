//! Standings, head-to-head tables and leaderboards written from [`Standings`]:
//! `standings.csv`, `h2h.csv`, `leaderboard.md` and `leaderboard.html` (one self-contained
//! page), plus the compact live standings for a terminal.
//!
//! Every string that comes from an engine (names, details) is escaped for HTML and Markdown,
//! and CSV text cells that a spreadsheet would run as a formula (starting with `=`, `+`,
//! `-`, `@`, tab or carriage return) are prefixed with `'`. Numbers are written as numbers;
//! a value that cannot be estimated (an infinite Elo from a 100% score, an error without
//! enough games) is an empty cell.
//!
//! Files are written to a temporary name in the same folder and renamed into place, so a
//! reader never sees half a file.

mod csv_out;
mod html;
mod markdown;
pub mod settings;
mod terminal;

pub use settings::{SettingsSection, read_tournament_toml, settings_from_toml};
pub use terminal::{standings_line, standings_table};

use crate::record::FaultKind;
use crate::results::{ReadError, read_games_csv};
use crate::stats::{Estimate, Standings, Tally, UnknownEngine};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// What a leaderboard says besides the numbers.
#[derive(Clone, Debug)]
pub struct ReportContext {
    pub title: String,
    /// One section per distinct `tournament.toml`.
    pub settings: Vec<SettingsSection>,
    /// When the report was made (shown in UTC).
    pub generated: SystemTime,
}

impl Default for ReportContext {
    fn default() -> Self {
        ReportContext {
            title: "Kalah engine leaderboard".to_string(),
            settings: Vec::new(),
            generated: SystemTime::now(),
        }
    }
}

/// Failure to write a report.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error(transparent)]
    Read(#[from] ReadError),
    #[error(transparent)]
    Anchor(#[from] UnknownEngine),
    #[error("failed to write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// The names of the files [`write_reports`] writes.
pub const REPORT_FILES: [&str; 4] = [
    "standings.csv",
    "h2h.csv",
    "leaderboard.md",
    "leaderboard.html",
];

/// Writes `standings.csv`, `h2h.csv`, `leaderboard.md` and `leaderboard.html` into `dir`
/// (created if missing).
pub fn write_reports(
    dir: &Path,
    standings: &Standings,
    context: &ReportContext,
) -> Result<(), ReportError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| ReportError::Write { path, source }
    };
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let contents = [
        csv_out::standings_csv(standings).into_bytes(),
        csv_out::h2h_csv(standings).into_bytes(),
        markdown::leaderboard_md(standings, context).into_bytes(),
        html::leaderboard_html(standings, context).into_bytes(),
    ];
    for (name, bytes) in REPORT_FILES.iter().zip(contents) {
        let path = dir.join(name);
        let tmp = dir.join(format!(".{name}.tmp"));
        std::fs::write(&tmp, bytes).map_err(io(&tmp))?;
        std::fs::rename(&tmp, &path).map_err(io(&path))?;
    }
    Ok(())
}

/// The heading of a fault kind's column.
pub(crate) fn fault_label(kind: FaultKind) -> &'static str {
    match kind {
        FaultKind::Timeout => "Timeouts",
        FaultKind::IllegalMove => "Illegal moves",
        FaultKind::ProtocolError => "Protocol errors",
        FaultKind::Crash => "Crashes",
        FaultKind::Stall => "Stalls",
    }
}

/// Reads a tournament folder's `games.csv` (and `tournament.toml`) and writes the reports
/// into the same folder. Returns the standings.
pub fn refresh_tournament_reports(dir: &Path) -> Result<Standings, ReportError> {
    let csv = dir.join(crate::results::GAMES_CSV);
    let mut tally = Tally::new();
    read_games_csv(&csv, |row| {
        tally.add(row);
    })?;
    let standings = tally.standings(None)?;
    let context = ReportContext {
        settings: read_tournament_toml(&csv).into_iter().collect(),
        ..ReportContext::default()
    };
    write_reports(dir, &standings, &context)?;
    Ok(standings)
}

/// The leaderboards' note for engines without a normalized Elo (standings.csv leaves both
/// `nelo` and `nelo_error` empty for them).
pub(crate) const NELO_UNDEFINED_NOTE: &str = "nElo is shown as ? for an engine that won, \
     lost or drew every game: its results have no spread, so its normalized Elo is undefined \
     (standings.csv leaves nelo and nelo_error empty).";

/// Formats a number with `decimals` places; empty if it is not finite.
pub(crate) fn num(x: f64, decimals: usize) -> String {
    if x.is_finite() {
        format!("{x:.decimals$}")
    } else {
        String::new()
    }
}

/// `value ± error` for display; `∞` and `?` where there is no finite estimate.
pub(crate) fn pm(e: Estimate, decimals: usize) -> String {
    let v = if e.value.is_finite() {
        // Never `-0.0`: values that round to zero print as `+0.0`.
        let scale = 10f64.powi(decimals as i32);
        let x = if (e.value * scale).round() == 0.0 {
            0.0
        } else {
            e.value
        };
        format!("{x:+.decimals$}")
    } else if e.value.is_nan() {
        "?".to_string()
    } else if e.value > 0.0 {
        "+∞".to_string()
    } else {
        "−∞".to_string()
    };
    if e.error.is_finite() {
        format!("{v} ± {:.decimals$}", e.error)
    } else {
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{FaultKind, GameResult, GameRow, Termination};
    use crate::rules::Side;

    /// A small tournament with hostile names.
    pub(crate) fn sample() -> Standings {
        let mut t = Tally::new();
        let names = ["<b>evil</b> & co", "=cmd|' /C calc'!A0", "plain", "-minus"];
        let mut id = 0;
        for (i, a) in names.iter().enumerate() {
            for b in &names[i + 1..] {
                for pair in 0..3 {
                    for (south, north) in [(a, b), (b, a)] {
                        id += 1;
                        // The earlier-named engine is stronger.
                        let result = if south == a || pair == 0 {
                            GameResult::SouthWins
                        } else {
                            GameResult::Draw
                        };
                        let game = format!("t-{id}");
                        t.add(&GameRow {
                            game: &game,
                            pair: Some((i * 100 + pair) as u64),
                            south,
                            north,
                            result,
                            south_score: Some(36),
                            north_score: Some(36),
                            termination: if id == 5 {
                                Termination::Fault(FaultKind::Crash)
                            } else {
                                Termination::Normal
                            },
                            loser: (id == 5).then_some(Side::North),
                        });
                    }
                }
            }
        }
        t.standings(None).unwrap()
    }

    #[test]
    fn writes_all_files() {
        let dir = tempfile::tempdir().unwrap();
        let s = sample();
        write_reports(dir.path(), &s, &ReportContext::default()).unwrap();
        for name in REPORT_FILES {
            let text = std::fs::read_to_string(dir.path().join(name)).unwrap();
            assert!(!text.is_empty(), "{name}");
            if !name.ends_with(".csv") {
                assert!(!text.contains("<b>evil"), "{name} has an unescaped name");
            }
        }
    }

    #[test]
    fn number_formatting() {
        assert_eq!(num(f64::INFINITY, 2), "");
        assert_eq!(num(-1.23456, 2), "-1.23");
        let e = Estimate {
            value: f64::INFINITY,
            error: f64::NAN,
        };
        assert_eq!(pm(e, 1), "+∞");
        let e = Estimate {
            value: -12.34,
            error: 5.0,
        };
        assert_eq!(pm(e, 1), "-12.3 ± 5.0");
        let e = Estimate {
            value: -0.04,
            error: 0.0,
        };
        assert_eq!(pm(e, 1), "+0.0 ± 0.0");
        assert_eq!(pm(e, 2), "-0.04 ± 0.00");
    }

    /// A standings table where `loser` lost every game (nElo undefined) against `name`.
    fn one_sided(name: &str) -> Standings {
        let mut t = Tally::new();
        for (id, (south, north, result)) in [
            (name, "loser", GameResult::SouthWins),
            ("loser", name, GameResult::NorthWins),
        ]
        .into_iter()
        .enumerate()
        {
            t.add(&GameRow {
                game: &format!("t-{}", id + 1),
                pair: Some(1),
                south,
                north,
                result,
                south_score: Some(30),
                north_score: Some(18),
                termination: Termination::Normal,
                loser: None,
            });
        }
        t.standings(None).unwrap()
    }

    #[test]
    fn terminal_tables_show_names_up_to_the_width_aligned() {
        let long = "an-engine-with-a-really-long-name-v1.2.3";
        let live = standings_table(&one_sided(long), 120, 10);
        assert!(live.contains(long), "{live}");
        // The columns stay aligned.
        let cols: Vec<Option<usize>> = live.lines().map(|l| l.find('%')).collect();
        assert!(cols[1].is_some() && cols[1] == cols[2], "{live}");
    }

    #[test]
    fn undefined_nelo_is_consistent_across_reports() {
        let s = one_sided("winner");
        let csv = csv_out::standings_csv(&s);
        let mut lines = csv.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        let (v, e) = (
            header.iter().position(|h| *h == "nelo").unwrap(),
            header.iter().position(|h| *h == "nelo_error").unwrap(),
        );
        for line in lines {
            let cells: Vec<&str> = line.split(',').collect();
            assert_eq!((cells[v], cells[e]), ("", ""), "{line}");
        }
        let md = markdown::leaderboard_md(&s, &ReportContext::default());
        let html = html::leaderboard_html(&s, &ReportContext::default());
        for text in [&md, &html] {
            assert!(text.contains("normalized Elo is undefined"), "{text}");
        }
        let row = md.lines().find(|l| l.contains("| loser |")).unwrap();
        assert!(row.contains("| ? |") && !row.contains('∞'), "{row}");
        // No note when every nElo is defined.
        let md = markdown::leaderboard_md(&sample(), &ReportContext::default());
        assert!(!md.contains("normalized Elo is undefined"));
    }
}
