//! The files of an SPRT in its results folder: `sprt.toml` (the test, written when it
//! starts and read on a resume), `sprt.csv` (the test after every game pair, appended as
//! the pairs come and rebuilt from the games on a resume) and `sprt-result.toml` (the
//! verdict).

use super::{Judgement, SprtEnd, SprtSettings, Test};
use crate::results;
use crate::stats::sprt::StoppedEstimate;
use crate::stats::{Added, SprtStatus, Tally};
use serde::Serialize;
use std::io::{self, Write};
use std::path::Path;

/// The header of `sprt.csv`.
pub(crate) const SPRT_CSV_HEADER: &str =
    "pairs,games,ll,ld,wl_dd,wd,ww,llr,lower,upper,elo,elo_error\n";

/// One line of `sprt.csv`.
pub(crate) fn csv_line(j: &Judgement) -> String {
    let num = |x: f64, d: usize| {
        if x.is_finite() {
            format!("{x:.d$}")
        } else {
            String::new()
        }
    };
    let (s, penta) = (&j.status, j.penta);
    format!(
        "{},{},{},{},{},{},{},{},{},{},{},{}\n",
        s.pairs,
        s.games,
        penta[0],
        penta[1],
        penta[2],
        penta[3],
        penta[4],
        num(s.llr, 4),
        num(s.lower, 4),
        num(s.upper, 4),
        num(s.elo.value, 2),
        num(s.elo.error, 2),
    )
}

/// Saves the test's settings as `dir/sprt.toml`.
pub(crate) fn save_settings(dir: &Path, settings: &SprtSettings) -> io::Result<()> {
    let text = toml::to_string(settings).map_err(io::Error::other)?;
    results::write_file(&crate::results::Files::of(dir).sprt_toml(), text.as_bytes())
}

/// Reads and checks the settings of the test in `dir`; the error names the file.
pub(crate) fn load_settings(dir: &Path) -> Result<SprtSettings, String> {
    let path = crate::results::Files::of(dir).sprt_toml();
    let shown = crate::record::shown_path(&path);
    let text = crate::input::read_text_limited(&path, crate::input::CONFIG_LIMIT)
        .map_err(|e| format!("failed to read {shown}: {e}"))?;
    let settings: SprtSettings = toml::from_str(&text).map_err(|e| format!("{shown}: {e}"))?;
    settings.validate().map_err(|e| format!("{shown}: {e}"))?;
    Ok(settings)
}

/// `dir/sprt.csv`, opened to append the lines of the pairs to come.
pub(crate) fn append_csv(dir: &Path) -> io::Result<std::fs::File> {
    crate::input::open_regular_with(
        &crate::results::Files::of(dir).sprt_csv(),
        std::fs::OpenOptions::new().append(true).create(true),
    )
}

/// Rebuilds `dir/sprt.csv` from the games recorded in `dir` (on a resume) and returns how
/// the test stands, and whether it had already ended.
pub(crate) fn replay(dir: &Path, test: &Test) -> io::Result<(Judgement, Option<SprtEnd>)> {
    let mut text = String::from(SPRT_CSV_HEADER);
    let mut tally = Tally::new();
    let mut end = None;
    let games = crate::results::Files::of(dir).games_csv();
    let repeated = crate::tournament::repeats::repeated_games(dir)?;
    if games.exists() {
        results::read_games_csv(&games, |row| {
            let row = crate::record::GameRow {
                repeat: repeated.contains(row.game),
                ..*row
            };
            let completed = matches!(
                tally.add(&row),
                Added::Counted {
                    completed_pair: true
                }
            );
            if completed && end.is_none() {
                let j = test.judge(&tally);
                text.push_str(&csv_line(&j));
                end = j.end;
            }
        })
        .map_err(io::Error::other)?;
    }
    results::write_file(&crate::results::Files::of(dir).sprt_csv(), text.as_bytes())?;
    Ok((test.judge(&tally), end))
}

/// The verdict as `sprt-result.toml` (and the `verdict` event of `--events`) says it,
/// with the naive Elo and the median-unbiased estimate of a test that stopped.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct VerdictRecord<'a> {
    pub verdict: &'a str,
    pub exit_code: u8,
    pub pairs: u64,
    pub games: u64,
    pub llr: f64,
    pub lower: f64,
    pub upper: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub elo: Option<f64>,
    /// The model of the median-unbiased estimate (`normalized`: a normalized Elo).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub median_unbiased_model: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub median_unbiased_elo: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub median_unbiased_elo_lower: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub median_unbiased_elo_upper: Option<f64>,
}

impl<'a> VerdictRecord<'a> {
    /// The verdict `text` ending in exit code `code`, at `status`.
    pub(crate) fn new(
        code: u8,
        text: &'a str,
        status: &SprtStatus,
        estimate: Option<StoppedEstimate>,
    ) -> VerdictRecord<'a> {
        // Rounded to two decimals, never -0.0.
        let finite = |x: f64| x.is_finite().then_some((x * 100.0).round() / 100.0 + 0.0);
        VerdictRecord {
            verdict: text,
            exit_code: code,
            pairs: status.pairs,
            games: status.games,
            llr: if status.llr.is_finite() {
                status.llr
            } else {
                0.0
            },
            lower: status.lower,
            upper: status.upper,
            elo: finite(status.elo.value),
            median_unbiased_model: estimate.map(|e| e.model.as_str()),
            median_unbiased_elo: estimate.and_then(|e| finite(e.elo)),
            median_unbiased_elo_lower: estimate.and_then(|e| finite(e.lower)),
            median_unbiased_elo_upper: estimate.and_then(|e| finite(e.upper)),
        }
    }
}

/// Writes the verdict beside the games, as `dir/sprt-result.toml` (see [`VerdictRecord`]).
pub(crate) fn save_verdict(
    dir: &Path,
    code: u8,
    text: &str,
    status: &SprtStatus,
    estimate: Option<StoppedEstimate>,
) -> io::Result<()> {
    let verdict = VerdictRecord::new(code, text, status, estimate);
    let body = toml::to_string(&verdict).map_err(io::Error::other)?;
    results::write_file(
        &crate::results::Files::of(dir).sprt_result_toml(),
        body.as_bytes(),
    )
}

/// Appends `line` to an open `sprt.csv`.
pub(crate) fn append_line(csv: &mut std::fs::File, j: &Judgement) -> io::Result<()> {
    csv.write_all(csv_line(j).as_bytes())
}
