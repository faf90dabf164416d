//! `kalaha ratings`: joint ratings, standings, head-to-head tables and leaderboards from any
//! number of `games.csv` files (whole tournaments, shards of one, several tournaments).

use super::{CliError, CliResult};
use crate::record::clean_message;
use crate::record::{GameRecord, GameRow};
use crate::report::{self, ReportContext, SettingsSection};
use crate::results::{Files, FolderLock, LockError, ReadSummary, games_csv_path, read_games_from};
use crate::stats::{Added, Tally};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

mod ids;
mod record;
mod runs;

/// Rate engines from the games of one or more tournaments.
///
/// Reads every FILE_OR_DIR (a folder means its games.jsonl when it has one, else its
/// games.csv), counts a game id seen twice only once (the first read, with a warning when
/// the two games differ), and writes standings.csv, h2h.csv, leaderboard.md and leaderboard.html into --out
/// (by default into the one input when it is a folder, as a tournament does; with several
/// inputs or a file, --out is required).
/// Ratings are a joint Bradley-Terry maximum-likelihood fit (a draw is half a point), mean 0
/// unless --anchor fixes one engine, with 95% intervals. On a terminal, progress (bytes read
/// of all inputs, then the fit) is shown on stderr.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Example:\n  kalaha ratings results/2026-01-02T10-00-00 --out site\n  \
kalaha ratings shard-*/ --anchor random=0 --out merged"
)]
pub struct Args {
    /// games.csv files, or results folders holding games.jsonl or games.csv.
    #[arg(required = true, value_name = "FILE_OR_DIR")]
    pub inputs: Vec<PathBuf>,
    /// Where to write the reports (created if missing) [default: the input, when it is a
    /// single folder; required otherwise].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Fix one engine's rating instead of centring the ratings on 0.
    #[arg(long, value_name = "NAME=ELO")]
    pub anchor: Option<String>,
    /// Title of the leaderboard [default: the run's own title or id when there is one run,
    /// else "Kalah engine leaderboard"].
    #[arg(long)]
    pub title: Option<String>,
}

fn parse_anchor(s: &str) -> Result<(String, f64), CliError> {
    let (name, elo) = s
        .rsplit_once('=')
        .ok_or_else(|| CliError::input_msg(format!("--anchor {s:?}: expected NAME=ELO")))?;
    let elo: f64 = elo
        .trim()
        .parse()
        .ok()
        .filter(|x: &f64| x.is_finite())
        .ok_or_else(|| CliError::input_msg(format!("--anchor {s:?}: {elo:?} is not a number")))?;
    Ok((name.to_string(), elo))
}

/// Where the reports go: --out, else the one input when it is a folder. A run's own folder
/// takes only the reports of its own games: pooled ones there would no longer match its
/// games.csv, and its next resume would overwrite them.
fn out_dir(args: &Args) -> Result<PathBuf, CliError> {
    let Some(out) = &args.out else {
        return match args.inputs.as_slice() {
            [dir] if dir.is_dir() => Ok(dir.clone()),
            [file] => Err(CliError::input_msg(format!(
                "{} is not a folder: give --out DIR for the reports",
                crate::record::shown_path(file)
            ))),
            inputs => Err(CliError::input_msg(format!(
                "{} inputs: give --out DIR for the reports (only a single folder is written \
                 into by default)",
                inputs.len()
            ))),
        };
    };
    if out.exists() && !out.is_dir() {
        return Err(CliError::input_msg(format!(
            "--out {} is a file, not a folder: give a folder for the reports",
            crate::record::shown_path(out)
        )));
    }
    let runs: Vec<PathBuf> = args.inputs.iter().map(|i| run_folder(i)).collect();
    if runs.iter().all(|run| same_folder(out, run)) {
        return Ok(out.clone());
    }
    if !holds_a_run(out) {
        // Only a new or empty folder, or one of reports, is written into: the reports
        // would replace files of the same names.
        let reports = Files::of(out).reports();
        let other = std::fs::read_dir(out)
            .into_iter()
            .flatten()
            .flatten()
            .find(|e| {
                !reports
                    .iter()
                    .any(|f| f.file_name() == Some(&e.file_name()))
            });
        return match other {
            None => Ok(out.clone()),
            Some(e) => Err(CliError::input_msg(format!(
                "--out {} holds other files than reports (such as {}): give a new or empty \
                 folder, or one that holds only reports",
                crate::record::shown_path(out),
                crate::record::shown_path(Path::new(&e.file_name()))
            ))),
        };
    }
    let whose = if runs.iter().any(|run| same_folder(out, run)) {
        "one of the runs rated"
    } else {
        "another run"
    };
    Err(CliError::input_msg(format!(
        "--out {} is the results folder of {whose}: pooled reports there would no longer \
         match its games. Give a folder of its own, e.g. `--out {}`",
        crate::record::shown_path(out),
        super::shell::shell_path(&beside(out))
    )))
}

/// Whether `dir` holds a run's results (or what a resume rebuilds them from).
fn holds_a_run(dir: &Path) -> bool {
    Files::of(dir).hold_a_run()
}

/// A folder for the reports beside the run folder `dir`: `DIR-ratings`.
fn beside(dir: &Path) -> PathBuf {
    let full = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    match full.file_name() {
        Some(name) => full.with_file_name(format!("{}-ratings", name.to_string_lossy())),
        None => PathBuf::from("ratings"),
    }
}

/// The folder of a run given as its folder or its games.csv.
fn run_folder(input: &Path) -> PathBuf {
    match input.parent() {
        Some(parent) if input.is_file() && parent.as_os_str().is_empty() => PathBuf::from("."),
        Some(parent) if input.is_file() => parent.to_path_buf(),
        _ => input.to_path_buf(),
    }
}

/// Whether two paths name the same existing folder.
fn same_folder(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// A reader that advances a progress bar by the bytes it reads.
struct Counted<R> {
    inner: R,
    bar: ProgressBar,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.bar.inc(n as u64);
        Ok(n)
    }
}

/// A bar of the bytes of all inputs on stderr when it is a terminal, else a hidden one.
fn progress_bar(csvs: &[PathBuf]) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let total = csvs
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum();
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template(
        "{msg} {wide_bar} {binary_bytes}/{binary_total_bytes} ({binary_bytes_per_sec}, ETA {eta})",
    ) {
        bar.set_style(style);
    }
    bar
}

/// One input: a run's games, rated from its record when its folder has one.
struct Source {
    /// The run's folder.
    dir: PathBuf,
    /// Its games.csv, if it has one (only checked against the record when there is one).
    csv: Option<PathBuf>,
    /// Whether `dir` holds the record of the games, games.jsonl: they are rated from it.
    record: bool,
}

impl Source {
    fn of_csv(csv: PathBuf) -> Source {
        let dir = run_folder(&csv);
        Source {
            record: crate::results::Files::of(&dir).games_jsonl().exists(),
            dir,
            csv: Some(csv),
        }
    }

    /// The file a message about its games names: games.csv, else the record.
    fn games_file(&self) -> PathBuf {
        self.csv
            .clone()
            .unwrap_or_else(|| crate::results::Files::of(&self.dir).games_jsonl())
    }

    /// The files read, for the progress bar.
    fn files(&self) -> impl Iterator<Item = PathBuf> + '_ {
        self.csv.iter().cloned().chain(
            self.record
                .then(|| crate::results::Files::of(&self.dir).games_jsonl()),
        )
    }
}

/// The games of every input, checked to exist: a folder's record or its games.csv.
fn sources(inputs: &[PathBuf]) -> Result<Vec<Source>, CliError> {
    inputs
        .iter()
        .map(|input| {
            let csv = games_csv_path(input);
            if csv.is_file() {
                if Files::is_games_jsonl(input) {
                    return Err(CliError::input_msg(format!(
                        "{} is the record of the games, not their results: give its folder \
                         (`kalaha ratings {}` rates its games from this record)",
                        crate::record::shown_path(input),
                        super::shell::shell_path(&run_folder(input))
                    )));
                }
                return Ok(Source::of_csv(csv));
            }
            let give = "give a games.csv file or a results folder holding one";
            if csv.exists() {
                // There, but a FIFO, a device or a folder: named as what it is.
                let what = match crate::input::open_regular(&csv) {
                    Err(e) => e.to_string(),
                    Ok(_) => "it cannot be read".to_string(),
                };
                return Err(CliError::input_msg(format!(
                    "{}: {what}",
                    crate::record::shown_path(&csv)
                )));
            }
            if !input.exists() {
                return Err(CliError::input_msg(format!(
                    "{} does not exist: {give}",
                    crate::record::shown_path(input)
                )));
            }
            if input.is_dir() && crate::results::Files::of(input).games_jsonl().is_file() {
                // The record alone: its games are rated all the same.
                return Ok(Source {
                    dir: input.clone(),
                    csv: None,
                    record: true,
                });
            }
            let runs = super::common::runs_inside(input, Files::games_csv);
            let give = if runs.is_empty() {
                give.to_string()
            } else {
                // Quoted, then the pattern, so that the shell still expands it to the
                // runs' results files only; several inputs need a folder for the reports.
                let dir = super::shell::shell_path(input);
                let out = super::shell::shell_path(&beside(input));
                format!(
                    "give one, or all of them to rate them together: \
                     `kalaha ratings {dir}/*/games.csv --out {out}`"
                )
            };
            Err(CliError::input_msg(format!(
                "no results file at {}{runs}: {give}",
                crate::record::shown_path(&csv)
            )))
        })
        .collect()
}

/// Among several inputs, the results folders that hold no game at all (a run that failed
/// at its start keeps only its logs): left out with a warning, so that `kalaha ratings
/// results/*` rates the runs that played. A single input is never left out.
fn without_empty_runs(inputs: &[PathBuf]) -> Vec<PathBuf> {
    if inputs.len() < 2 {
        return inputs.to_vec();
    }
    inputs
        .iter()
        .filter(|input| {
            let empty = input.is_dir()
                && !crate::results::Files::of(input).games_csv().exists()
                && !crate::results::Files::of(input).games_jsonl().exists();
            if empty {
                eprintln!(
                    "warning: {} holds no games (a run that stopped before its first game?): \
                     left out",
                    crate::record::shown_path(input)
                );
            }
            !empty
        })
        .cloned()
        .collect()
}

/// What the input files held, read once.
#[derive(Default)]
struct Inputs {
    tally: Tally,
    summary: ReadSummary,
    counts: Counts,
    settings: Vec<SettingsSection>,
    /// Warnings of the records read.
    checks: Vec<String>,
    /// Files of which no game counts, and why.
    empty: Vec<String>,
    /// The rules of the runs read, with the games file of each run played under them.
    boards: Vec<(crate::rules::Rules, Vec<PathBuf>)>,
    /// What each game id counted stood for, and the conflicts found.
    ids: ids::Ids,
    /// The runs of each tournament id, and the warnings about their settings.
    runs: runs::Runs,
}

/// How many games were counted, and why the others were not.
#[derive(Clone, Copy, Default)]
struct Counts {
    counted: u64,
    /// The same game given twice.
    duplicates: u64,
    /// Another game under an id counted before.
    conflicts: u64,
    /// Interrupted games, and games of an engine against itself.
    ignored: u64,
    /// Games that repeat an earlier game of their run move for move.
    repeats: u64,
}

/// Reads every input, each run with a record from its record.
fn read_inputs(sources: &[Source], bar: &ProgressBar) -> Result<Inputs, CliError> {
    let mut inputs = Inputs::default();
    for (k, source) in sources.iter().enumerate() {
        if sources.len() > 1 {
            bar.set_message(format!("reading {}/{}", k + 1, sources.len()));
        } else {
            bar.set_message("reading");
        }
        let Inputs {
            tally, counts, ids, ..
        } = &mut inputs;
        let before = *counts;
        let mut count = |row: &GameRow<'_>, record: Option<&GameRecord>| match tally.add(row) {
            Added::Counted { .. } => {
                counts.counted += 1;
                ids.counted(k, row, record);
            }
            Added::Repeat => {
                counts.repeats += 1;
                ids.counted(k, row, record);
            }
            Added::Duplicate if ids.conflicts(k, row, record) => counts.conflicts += 1,
            Added::Duplicate => counts.duplicates += 1,
            Added::Ignored => counts.ignored += 1,
        };
        // Rows of a run with a record are only compared with it.
        let mut rows: std::collections::HashMap<String, record::RowView> = Default::default();
        let mut read = None;
        if let Some(csv) = &source.csv {
            let file = crate::input::open_regular(csv).map_err(|e| {
                CliError::input_msg(format!(
                    "failed to open {}: {e}",
                    crate::record::shown_path(csv)
                ))
            })?;
            let reader = Counted {
                inner: file,
                bar: bar.clone(),
            };
            read = Some(
                read_games_from(csv, reader, |row| match source.record {
                    true => {
                        rows.entry(row.game.to_string())
                            .or_insert_with(|| record::RowView::of(row));
                    }
                    false => count(row, None),
                })
                .map_err(CliError::input)?,
            );
        }
        if source.record {
            let checked = record::read_record(
                &source.dir,
                rows,
                |bytes| bar.inc(bytes),
                |row, rec| count(row, Some(rec)),
            )
            .map_err(|e| CliError::input_msg(format!("failed to read the record: {e}")))?;
            inputs.checks.extend(checked.warnings(&source.dir));
        }
        // A folder whose games were all read before (given twice) or are conflicts is
        // said so by the summary or its own warning.
        let now = inputs.counts;
        if now.counted == before.counted
            && now.duplicates == before.duplicates
            && now.conflicts == before.conflicts
        {
            inputs.empty.push(match &read {
                Some(read) if !source.record => no_games(&source.games_file(), read),
                _ => no_recorded_games(&source.dir),
            });
        }
        if let Some(read) = read {
            inputs.summary.add(read);
        }
        if let Some(rules) = run_rules(&source.dir) {
            let file = source.games_file();
            match inputs.boards.iter_mut().find(|(r, _)| *r == rules) {
                Some((_, files)) => files.push(file),
                None => inputs.boards.push((rules, vec![file])),
            }
        }
        let section = report::read_settings(&source.dir);
        inputs.runs.add(&source.dir, section.as_ref());
        if let Some(section) = section {
            report::merge_settings(&mut inputs.settings, section);
        }
    }
    Ok(inputs)
}

/// The warning that the runs read were played under more than one rules, if they were.
fn mixed_rules(boards: &[(crate::rules::Rules, Vec<PathBuf>)]) -> Option<String> {
    if boards.len() < 2 {
        return None;
    }
    let list: Vec<String> = boards
        .iter()
        .map(|(rules, csvs)| {
            let mut files: Vec<String> = csvs
                .iter()
                .take(5)
                .map(|c| crate::record::shown_path(c))
                .collect();
            if csvs.len() > 5 {
                files.push(format!("and {} more", csvs.len() - 5));
            }
            format!("{} ({})", rules_in_words(rules), files.join(", "))
        })
        .collect();
    Some(format!(
        "the runs were played under {} different rules: {}. One rating pools them; rate \
         the runs of each rules apart to compare engines on one game",
        boards.len(),
        list.join("; ")
    ))
}

pub(crate) fn run(args: Args) -> CliResult {
    let anchor = args.anchor.as_deref().map(parse_anchor).transpose()?;
    let sources = sources(&without_empty_runs(&args.inputs))?;
    let out_dir = out_dir(&args)?;
    // Held from before the reading to the last report written: a run that holds the
    // folder is writing into it.
    let mut lock = hold(&out_dir)?;
    let read_files: Vec<PathBuf> = sources.iter().flat_map(Source::files).collect();
    let bar = progress_bar(&read_files);
    let Inputs {
        tally,
        summary,
        counts,
        settings,
        checks,
        empty,
        boards,
        ids,
        runs,
    } = read_inputs(&sources, &bar)?;
    if counts.counted == 0 {
        bar.finish_and_clear();
        return Err(CliError::input_msg(format!(
            "no games to rate: {}. Give the results folder (or games.csv) of a run that \
             played games, e.g. `kalaha ratings results/<run>` after `kalaha tournament`",
            empty.join("; ")
        )));
    }
    for e in empty.iter().chain(&checks) {
        bar.suspend(|| eprintln!("warning: {}", clean_message(&e.to_string())));
    }
    let folders: Vec<PathBuf> = sources.iter().map(|s| s.dir.clone()).collect();
    let mut warnings: Vec<String> = runs.warnings().to_vec();
    warnings.extend(ids.warnings(&folders));
    drop(ids);
    warnings.extend(names_of_two_engines(&settings));
    warnings.extend(mixed_rules(&boards));
    warnings.extend(crate::record::look_alike_warnings(
        tally.engines().iter().map(|e| e.name.as_str()),
    ));
    for w in &warnings {
        bar.suspend(|| eprintln!("warning: {}", clean_message(&w.to_string())));
    }
    if !bar.is_hidden()
        && let Ok(style) = ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
    {
        bar.set_style(style);
    }
    bar.set_message(format!(
        "rating {} engines from {} games",
        tally.engines().len(),
        tally.games()
    ));
    bar.enable_steady_tick(Duration::from_millis(200));
    let standings = tally
        .standings(anchor.as_ref().map(|(n, e)| (n.as_str(), *e)))
        .map_err(CliError::input)?;
    drop(tally);
    bar.set_message("writing the reports");
    // A run's reports rewritten in its own folder keep its exact analysis, as a resume does.
    let accuracy = match args.inputs.as_slice() {
        [only] if same_folder(&out_dir, &run_folder(only)) => {
            crate::analysis::read_accuracy(&out_dir)
        }
        _ => None,
    };
    let context = ReportContext {
        title: args.title.clone(),
        settings,
        warnings,
        accuracy,
        ..ReportContext::default()
    };
    if lock.is_none() {
        // A new folder: made now, and held while the reports are written.
        std::fs::create_dir_all(&out_dir).map_err(|e| {
            CliError::input_msg(format!(
                "cannot create {}: {e}",
                crate::record::shown_path(&out_dir)
            ))
        })?;
        lock = hold(&out_dir)?;
    }
    report::write_reports(&out_dir, &standings, &context)?;
    drop(lock);
    bar.finish_and_clear();
    print_summary(&standings, &summary, counts, &out_dir)?;
    Ok(super::exit::OK)
}

/// The lock of the folder `out` for the reports, when it exists: refused while a run
/// (a tournament, a resume, an analysis) holds it, as it is writing there.
fn hold(out: &Path) -> Result<Option<FolderLock>, CliError> {
    if !out.is_dir() {
        return Ok(None);
    }
    FolderLock::acquire(out).map(Some).map_err(|e| match e {
        LockError::Busy { .. } => CliError::input_msg(format!(
            "{e} (ratings write their reports only into a folder no run is writing; \
             --out DIR rates its games so far elsewhere)"
        )),
        LockError::Io { .. } => CliError::input(e),
    })
}

/// Why no game of the run in `dir`, which holds its record, counts (none was read before).
fn no_recorded_games(dir: &Path) -> String {
    format!(
        "{}: none of the games of its record counts (none recorded, or none its tournament \
         could have played)",
        crate::record::shown_path(&crate::results::Files::of(dir).games_jsonl())
    )
}

/// Why no game of `csv` counts, from what reading it found.
fn no_games(csv: &Path, read: &ReadSummary) -> String {
    let why = if read.rows == 0 {
        "has no games (only a header, or nothing)".to_string()
    } else if read.malformed == read.rows {
        format!(
            "none of its {} rows could be read ({})",
            read.rows,
            read.problems.join("; ")
        )
    } else {
        format!(
            "its {} readable games are all interrupted or games of an engine against itself",
            read.rows - read.malformed
        )
    };
    format!("{}: {why}", crate::record::shown_path(csv))
}

/// The standings table and what was read, on stdout.
fn print_summary(
    standings: &crate::stats::Standings,
    summary: &ReadSummary,
    counts: Counts,
    out_dir: &Path,
) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    write!(
        out,
        "{}",
        report::standings_table(standings, 100, usize::MAX)
    )?;
    let conflicts = match counts.conflicts {
        0 => String::new(),
        n => format!(
            ", {} ignored",
            crate::record::counted(n, "conflicting game")
        ),
    };
    writeln!(
        out,
        "{} counted, {} ignored{conflicts}, {} ignored, {} ignored, {} skipped, {} without a \
         pair partner",
        crate::record::counted(counts.counted, "game"),
        crate::record::counted(counts.duplicates, "duplicate id"),
        crate::record::counted(counts.ignored, "interrupted or self-play game"),
        crate::record::counted(counts.repeats, "repeated game"),
        crate::record::counted(summary.malformed, "unreadable row"),
        crate::record::counted(standings.unpaired, "game"),
    )?;
    if let Some(w) = summary.warning() {
        writeln!(out, "{w}")?;
    }
    if standings.groups.len() > 1 {
        writeln!(
            out,
            "warning: the engines form {} groups that never met; ratings compare only within a group",
            standings.groups.len()
        )?;
    }
    writeln!(
        out,
        "reports written to {}",
        crate::record::shown_path(out_dir)
    )
}

/// A warning for each name that stands for different engines in the pooled runs (another
/// program, version or options): their games would be rated as one engine's.
fn names_of_two_engines(settings: &[SettingsSection]) -> Vec<String> {
    let mut by_name: std::collections::BTreeMap<&str, Vec<String>> = Default::default();
    for section in settings {
        for e in &section.engines {
            let mut words: Vec<String> = e.program.iter().cloned().collect();
            words.extend(e.version.as_ref().map(|v| format!("version {v}")));
            words.extend(e.options.iter().cloned());
            let who = if words.is_empty() {
                "unknown".to_string()
            } else {
                words.join(" ")
            };
            let seen = by_name.entry(&e.name).or_default();
            if !seen.contains(&who) {
                seen.push(who);
            }
        }
    }
    by_name
        .into_iter()
        .filter(|(_, who)| who.len() > 1)
        .map(|(name, who)| {
            format!(
                "the name {name} stands for {} different engines in the pooled runs ({}); \
                 their games are rated as one engine's: give them different names (name=) \
                 to rate them apart",
                who.len(),
                who.join("; ")
            )
        })
        .collect()
}

/// `rules` as the warning about pooled runs names them.
fn rules_in_words(rules: &crate::rules::Rules) -> String {
    use crate::rules::Sweep;
    let mut words = format!(
        "{} pits a side, {} seeds a pit",
        rules.pits(),
        rules.seeds()
    );
    if rules.empty_capture() {
        words.push_str(", empty capture");
    }
    words.push_str(match rules.sweep() {
        Sweep::Owner => "",
        Sweep::EmptySide => ", seeds left go to the player whose pits ran empty",
        Sweep::None => ", seeds left go to no one",
    });
    words
}

/// The rules a run in `dir` was played under, as its `tournament.toml` gives them (rules
/// it leaves out take their defaults); `None` without a readable file.
fn run_rules(dir: &Path) -> Option<crate::rules::Rules> {
    let file = crate::tournament::config::ConfigFile::load(
        &crate::results::Files::of(dir).tournament_toml(),
    )
    .ok()?;
    file.rules.unwrap_or_default().resolve().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anchors_parse() {
        assert_eq!(parse_anchor("a=b=12.5").unwrap(), ("a=b".to_string(), 12.5));
        assert!(parse_anchor("x").is_err());
        assert!(parse_anchor("x=inf").is_err());
    }
}
