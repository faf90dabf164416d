//! Standings, head-to-head tables and leaderboards written from [`Standings`]:
//! `standings.csv`, `h2h.csv`, `leaderboard.md` and `leaderboard.html` (one self-contained
//! page), the compact live standings for a terminal, and the summary of a two-engine match.
//!
//! Every report ranks by the joint Elo rating. Normalized Elo and LOS are shown only per
//! pairing (in h2h.csv, the pairings table and the match summary): an engine's results
//! pooled over different opponents are not on a common scale.
//!
//! Every string that comes from an engine or a configuration (names, versions, settings) is
//! made safe: control characters and bidirectional overrides are written as escapes
//! ([`clean_text`]), then escaped for HTML or Markdown; CSV text cells that a spreadsheet
//! would run as a formula (starting with `=`, `+`, `-`, `@`, tab or carriage return) are
//! prefixed with `'`. Numbers are written as numbers; a value that cannot be estimated (an
//! infinite Elo from a 100% score, an error without enough games) is an empty cell.
//!
//! Sizes stay linear in the number of engines and of pairings that met: the head-to-head
//! matrix and the pairings table are written only for up to [`MATRIX_MAX_ENGINES`] engines,
//! the chart shows at most [`CHART_MAX_ENGINES`] (h2h.csv always holds every pairing).
//!
//! Files are written to a temporary name in the same folder and renamed into place, so a
//! reader never sees half a file.

mod accuracy;
mod csv_out;
mod html;
mod html_chart;
mod markdown;
mod notes;
pub(crate) mod settings;
mod summary;
mod terminal;

pub(crate) use settings::{SettingsSection, merge_settings, read_settings};
pub(crate) use summary::match_summary;
pub(crate) use terminal::{standings_line, standings_table};

use crate::record::{FaultKind, clean_text};
use crate::results::{ReadError, read_games_csv};
use crate::stats::{AccuracyTable, Estimate, Standings, Tally, UnknownEngine};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// The head-to-head matrix and the pairings table are written for at most this many
/// engines (beyond, h2h.csv holds the pairings: a matrix grows with the square).
pub(crate) const MATRIX_MAX_ENGINES: usize = 30;

/// The chart shows at most this many engines (the best rated).
pub(crate) const CHART_MAX_ENGINES: usize = 60;

/// The title of a leaderboard whose runs have neither a title nor a single id.
pub(crate) const DEFAULT_TITLE: &str = "Kalah engine leaderboard";

/// What a leaderboard says besides the numbers.
#[derive(Clone, Debug)]
pub(crate) struct ReportContext {
    /// The page's title (`--title`); by default the run's own title or id.
    pub title: Option<String>,
    /// One section per run (the shards of one tournament are one run).
    pub settings: Vec<SettingsSection>,
    /// When the report was made (shown in UTC).
    pub generated: SystemTime,
    /// The engines' accuracy from an exact analysis of the games (`kalaha analyze`).
    pub accuracy: Option<AccuracyTable>,
    /// What a reader must know before trusting the table (such as runs of different rules
    /// pooled in one rating), shown at the top.
    pub warnings: Vec<String>,
}

impl Default for ReportContext {
    fn default() -> Self {
        ReportContext {
            title: None,
            settings: Vec::new(),
            generated: SystemTime::now(),
            accuracy: None,
            warnings: Vec::new(),
        }
    }
}

impl ReportContext {
    /// The title: as given, else the single run's title or heading, else
    /// [`DEFAULT_TITLE`].
    pub(crate) fn page_title(&self) -> String {
        if let Some(t) = self.title.as_ref().filter(|t| !t.trim().is_empty()) {
            return t.clone();
        }
        match self.settings.as_slice() {
            [one] if one.title.is_some() || one.id.is_some() => one.heading(),
            _ => DEFAULT_TITLE.to_string(),
        }
    }
}

/// Failure to write a report.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ReportError {
    #[error(transparent)]
    Read(#[from] ReadError),
    #[error(transparent)]
    Anchor(#[from] UnknownEngine),
    /// The I/O error is said in the message (and is not also its `source()`, which would
    /// say it twice).
    #[error("{}", write_failure(path, error))]
    Write {
        path: PathBuf,
        error: std::io::Error,
    },
}

/// What a report that could not be written says: a full disk in so many words.
fn write_failure(path: &Path, error: &std::io::Error) -> String {
    match crate::results::full_disk(error) {
        Some(full) => format!(
            "failed to write {}: {full}: free some space and run the command again; each \
             report there is whole, the old one or the new",
            path.display()
        ),
        None => format!(
            "failed to write {}: {error} (check that the folder is writable and the disk not \
             full)",
            path.display()
        ),
    }
}

/// Writes `standings.csv`, `h2h.csv`, `leaderboard.md` and `leaderboard.html` into `dir`
/// (created if missing; [`crate::results::Files::reports`]). Each file is replaced whole
/// ([`crate::results::write_with`]).
pub(crate) fn write_reports(
    dir: &Path,
    standings: &Standings,
    context: &ReportContext,
) -> Result<(), ReportError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |error| ReportError::Write { path, error }
    };
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    // The pages people read show a look-alike name escaped; the CSV files keep the names.
    let (shown, shown_context) = look_alikes_escaped(standings, context);
    let (shown, shown_context) = (
        shown.as_ref().unwrap_or(standings),
        shown_context.as_ref().unwrap_or(context),
    );
    let files = crate::results::Files::of(dir);
    let write = |path: PathBuf, fill: &dyn Fn(&mut dyn std::io::Write) -> std::io::Result<()>| {
        crate::results::write_with(&path, |w| fill(w)).map_err(io(&path))
    };
    write(files.standings_csv(), &|w| {
        csv_out::standings_csv(&mut &mut *w, standings, context.accuracy.as_ref())
    })?;
    write(files.h2h_csv(), &|w| {
        csv_out::h2h_csv(&mut &mut *w, standings)
    })?;
    write(files.leaderboard_md(), &|w| {
        w.write_all(markdown::leaderboard_md(shown, shown_context).as_bytes())
    })?;
    write(files.leaderboard_html(), &|w| {
        w.write_all(html::leaderboard_html(shown, shown_context).as_bytes())
    })
}

/// How the names of `standings` that look like another one are shown: each beyond ASCII
/// written with its characters escaped (`h\u{430}rd` beside `hard`).
pub(crate) fn look_alike_renames(
    standings: &Standings,
) -> std::collections::HashMap<String, String> {
    let mut renamed: std::collections::HashMap<String, String> =
        crate::record::look_alike_groups(standings.rows.iter().map(|r| r.engine.as_str()))
            .iter()
            .flatten()
            .filter(|n| !n.is_ascii())
            .map(|n| (n.to_string(), crate::record::escaped(n)))
            .collect();
    if !renamed.is_empty() {
        // A name that holds a backslash could read as another's escape (`h\\u{430}rd`
        // typed as such): it is escaped too, its backslashes doubled.
        for r in standings.rows.iter().filter(|r| r.engine.contains('\\')) {
            renamed
                .entry(r.engine.clone())
                .or_insert_with(|| crate::record::escaped(&r.engine));
        }
    }
    renamed
}

/// The standings and context with every name that looks like another one (`h\u{430}rd`
/// beside `hard`) written with its characters beyond ASCII escaped, so that a reader of
/// the page can tell the two engines apart; `None` when no two names look alike.
fn look_alikes_escaped(
    standings: &Standings,
    context: &ReportContext,
) -> (Option<Standings>, Option<ReportContext>) {
    let renamed = look_alike_renames(standings);
    if renamed.is_empty() {
        return (None, None);
    }
    let mut s = standings.clone();
    for row in &mut s.rows {
        if let Some(to) = renamed.get(&row.engine) {
            row.engine = to.clone();
        }
    }
    if let Some((anchor, _)) = &mut s.anchor
        && let Some(to) = renamed.get(anchor.as_str())
    {
        *anchor = to.clone();
    }
    let mut c = context.clone();
    for (from, to) in &renamed {
        if let Some(a) = &mut c.accuracy {
            a.rename(from, to);
        }
        for sec in &mut c.settings {
            for e in &mut sec.engines {
                if &e.name == from {
                    e.name = to.clone();
                }
            }
        }
    }
    (Some(s), Some(c))
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

/// Reads a tournament folder's `games.csv` (and its settings) and writes the reports into
/// the same folder. Returns the standings.
pub(crate) fn refresh_tournament_reports(dir: &Path) -> Result<Standings, ReportError> {
    let csv = crate::results::Files::of(dir).games_csv();
    let mut tally = Tally::new();
    read_games_csv(&csv, |row| {
        tally.add(row);
    })?;
    let standings = tally.standings(None)?;
    let context = ReportContext {
        settings: read_settings(dir).into_iter().collect(),
        accuracy: crate::analysis::read_accuracy(dir),
        ..ReportContext::default()
    };
    write_reports(dir, &standings, &context)?;
    Ok(standings)
}

/// Text from an engine or a configuration, safe to show: control characters and
/// bidirectional overrides written as escapes.
pub(crate) fn safe(s: &str) -> std::borrow::Cow<'_, str> {
    clean_text(s)
}

/// Formats a number with `decimals` places; empty if it is not finite.
pub(crate) fn num(x: f64, decimals: usize) -> String {
    if x.is_finite() {
        // Never `-0.00`: a value that rounds to zero is written `0.00`.
        let x = if (x * 10f64.powi(decimals as i32)).round() == 0.0 {
            0.0
        } else {
            x
        };
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
pub(crate) mod tests {
    use super::settings::settings_from_files;
    use super::*;
    use crate::record::{FaultKind, GameResult, GameRow, Termination};
    use crate::rules::Side;

    /// Two engines, `strong` winning all four games against `weak`: the fit adds its
    /// virtual draws.
    pub(crate) fn swept() -> Standings {
        let mut t = Tally::new();
        for k in 0..4u64 {
            let game = format!("g-{k}");
            let (south, north, result) = if k % 2 == 0 {
                ("strong", "weak", GameResult::SouthWins)
            } else {
                ("weak", "strong", GameResult::NorthWins)
            };
            t.add(&GameRow {
                game: &game,
                pair: Some(k / 2),
                south,
                north,
                result,
                south_score: Some(30),
                north_score: Some(18),
                termination: Termination::Normal,
                loser: None,
                repeat: false,
            });
        }
        t.standings(None).unwrap()
    }

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
                            repeat: false,
                        });
                    }
                }
            }
        }
        t.standings(None).unwrap()
    }

    /// Two engines whose names look alike (`hard` and `h\u{430}rd`, a Cyrillic a): the
    /// pages show the look-alike escaped, the CSV files keep the names as they are.
    #[test]
    fn a_look_alike_name_is_shown_escaped_on_the_pages() {
        let mut t = Tally::new();
        let (plain, cyrillic) = ("hard", "h\u{430}rd");
        for (id, (south, north)) in [(plain, cyrillic), (cyrillic, plain)].iter().enumerate() {
            let game = format!("t-{}", id + 1);
            t.add(&GameRow {
                game: &game,
                pair: Some(1),
                south,
                north,
                result: GameResult::SouthWins,
                south_score: Some(30),
                north_score: Some(18),
                termination: Termination::Normal,
                loser: None,
                repeat: false,
            });
        }
        let dir = tempfile::tempdir().unwrap();
        write_reports(
            dir.path(),
            &t.standings(None).unwrap(),
            &ReportContext::default(),
        )
        .unwrap();
        let read = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap();
        for page in ["leaderboard.md", "leaderboard.html"] {
            let text = read(page);
            assert!(
                !text.contains(cyrillic),
                "{page} shows the look-alike as it is"
            );
            assert!(
                text.contains("h\\u{430}rd") || text.contains("h\\\\u{430}rd"),
                "{page}: {text}"
            );
        }
        assert!(read("standings.csv").contains(cyrillic));
    }

    #[test]
    fn writes_all_files() {
        let dir = tempfile::tempdir().unwrap();
        let s = sample();
        write_reports(dir.path(), &s, &ReportContext::default()).unwrap();
        for path in crate::results::Files::of(dir.path()).reports() {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let text = std::fs::read_to_string(&path).unwrap();
            assert!(!text.is_empty(), "{name}");
            if !name.ends_with(".csv") {
                assert!(!text.contains("<b>evil"), "{name} has an unescaped name");
            }
        }
        let leftovers: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .filter(|n| n.to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
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
                repeat: false,
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

    fn csv_rows(text: &str) -> (csv::StringRecord, Vec<csv::StringRecord>) {
        let mut r = csv::Reader::from_reader(text.as_bytes());
        let header = r.headers().unwrap().clone();
        (header, r.records().map(|x| x.unwrap()).collect())
    }

    #[test]
    fn a_clean_sweep_has_los_one_and_undefined_nelo_everywhere() {
        let s = one_sided("winner");
        let (header, rows) = csv_rows(&csv_out::tests::to_text(|w| csv_out::h2h_csv(w, &s)));
        let col = |name: &str| header.iter().position(|h| h == name).unwrap();
        for r in &rows {
            let winner = &r[0] == "winner";
            let los = if winner { "1.0000" } else { "0.0000" };
            assert_eq!((&r[col("los")], &r[col("penta_los")]), (los, los), "{r:?}");
            assert_eq!((&r[col("nelo")], &r[col("nelo_error")]), ("", ""), "{r:?}");
        }
        // No per-engine nElo: pooled over opponents, it is on no common scale.
        let standings = csv_out::tests::to_text(|w| csv_out::standings_csv(w, &s, None));
        assert!(!standings.lines().next().unwrap().contains("nelo"));
        let md = markdown::leaderboard_md(&s, &ReportContext::default());
        let html = html::leaderboard_html(&s, &ReportContext::default());
        for text in [&md, &html] {
            assert!(text.contains("normalized Elo is undefined"), "{text}");
            assert!(text.contains("100.0%"), "LOS of the winner: {text}");
        }
        let row = md
            .lines()
            .find(|l| l.starts_with("| winner | loser |"))
            .unwrap();
        assert!(row.contains("| ? |"), "{row}");
        // No such note when every nElo is defined.
        let md = markdown::leaderboard_md(&sample(), &ReportContext::default());
        assert!(!md.contains("normalized Elo is undefined"));
    }

    #[test]
    fn engine_text_is_neutralised_in_every_file() {
        let evil = "ev\u{202e}il\u{1b}[31m\u{7}";
        let s = one_sided(evil);
        let section = settings_from_files(
            "id = \"x\"\n[[engine]]\nname = \"w\"\nversion = \"1\\u202e2<b>\"\nauthor = \"A\\u0007\"\n",
            None,
            None,
        );
        let ctx = ReportContext {
            title: Some("T\u{202e}<i>".into()),
            settings: vec![section],
            ..ReportContext::default()
        };
        let texts = [
            csv_out::tests::to_text(|w| csv_out::standings_csv(w, &s, None)),
            csv_out::tests::to_text(|w| csv_out::h2h_csv(w, &s)),
            markdown::leaderboard_md(&s, &ctx),
            html::leaderboard_html(&s, &ctx),
        ];
        for text in &texts {
            for c in ['\u{202e}', '\u{1b}', '\u{7}'] {
                assert!(!text.contains(c), "{c:?} in {text}");
            }
            assert!(text.contains("u{202e}il"), "{text}");
            assert!(!text.contains("<b>") && !text.contains("<i>"), "{text}");
        }
    }

    #[test]
    fn big_fields_get_no_matrix_and_a_capped_chart() {
        let mut t = Tally::new();
        let n = MATRIX_MAX_ENGINES.max(CHART_MAX_ENGINES) + 5;
        for k in 0..n {
            let (a, b) = (format!("e{k}"), format!("e{}", (k + 1) % n));
            t.add(&GameRow {
                game: &format!("t-{k}"),
                pair: None,
                south: &a,
                north: &b,
                result: GameResult::Draw,
                south_score: Some(24),
                north_score: Some(24),
                termination: Termination::Normal,
                loser: None,
                repeat: false,
            });
        }
        let s = t.standings(None).unwrap();
        let html = html::leaderboard_html(&s, &ReportContext::default());
        let md = markdown::leaderboard_md(&s, &ReportContext::default());
        assert!(!html.contains("id=\"h2h-table\"") && !html.contains("id=\"pairings-table\""));
        assert!(!md.contains("## Head to head") && !md.contains("## Pairings"));
        assert_eq!(
            html.matches("class=\"chart-row\"").count(),
            CHART_MAX_ENGINES
        );
        assert_eq!(html.matches("class=\"engine-row\"").count(), n);
        for text in [&html, &md] {
            assert!(
                text.contains(&format!("h2h.csv holds all {n} pairings")),
                "{text}"
            );
        }
        let h2h = csv_out::tests::to_text(|w| csv_out::h2h_csv(w, &s));
        assert_eq!(h2h.lines().count(), 1 + 2 * n);
    }

    /// On a phone the first columns are what fits: the rank, the engine, its Elo, its
    /// score and its games come first, each row's cells in the header's order.
    #[test]
    fn the_standings_put_the_most_useful_columns_first() {
        let mut t = Tally::new();
        t.add(&GameRow {
            game: "t-1",
            pair: None,
            south: "a",
            north: "b",
            result: GameResult::SouthWins,
            south_score: Some(30),
            north_score: Some(18),
            termination: Termination::Normal,
            loser: None,
            repeat: false,
        });
        let s = t.standings(None).unwrap();
        let html = html::leaderboard_html(&s, &ReportContext::default());
        let at = html.find("id=\"standings-table\"").unwrap();
        let table = &html[at..at + html[at..].find("</table>").unwrap()];
        let thead = &table[..table.find("</thead>").unwrap()];
        let head: Vec<&str> = thead
            .split("</th>")
            .filter_map(|c| c.rsplit_once('>').map(|(_, text)| text))
            .filter(|t| !t.is_empty())
            .collect();
        assert_eq!(
            head,
            [
                "#", "Engine", "Elo", "Score", "Games", "W", "D", "L", "Margin", "Faults"
            ]
        );
        let row = &table[table.find("data-rank=\"1\"").unwrap()..];
        let row = &row[..row.find("</tr>").unwrap()];
        let cells: Vec<&str> = row
            .split("<td")
            .skip(1)
            .map(|c| &c[c.find('>').unwrap() + 1..c.find("</td>").unwrap()])
            .collect();
        assert_eq!(cells[0], "1");
        assert!(cells[1].starts_with('a'), "{row}");
        assert_eq!(cells[3..8], ["100.0%", "1", "1", "0", "0"], "{row}");
    }

    #[test]
    fn the_title_comes_from_the_flag_the_run_or_a_default() {
        let run = |id: &str| settings_from_files(&format!("id = \"{id}\"\n"), None, None);
        let mut ctx = ReportContext::default();
        assert_eq!(ctx.page_title(), DEFAULT_TITLE);
        ctx.settings = vec![run("abc")];
        assert_eq!(ctx.page_title(), "Tournament abc");
        ctx.settings.push(run("def"));
        assert_eq!(ctx.page_title(), DEFAULT_TITLE);
        ctx.title = Some("Spring cup".into());
        assert_eq!(ctx.page_title(), "Spring cup");
        let html = html::leaderboard_html(&sample(), &ctx);
        assert!(html.contains("<title>Spring cup</title>") && html.contains("<h1>Spring cup</h1>"));
        assert!(html.contains("<h3>Tournament abc</h3>"));
    }
}
