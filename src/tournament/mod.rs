//! Tournaments: configuration, schedules, running games, recording results, resuming.
//!
//! The pieces, in the order a run uses them:
//! - [`spec`] and [`config`]: engines and settings as given, then resolved and validated;
//! - [`schedule`]: the lazy, deterministic list of games (pairs with seats swapped,
//!   openings, shards);
//! - [`launcher`]: engine processes and the start-up checks;
//! - [`run`]: the game loop (concurrent games, engine pools, interruption);
//! - `recorder`: finished games written, counted in the scoreboard and shown to the
//!   [`events::View`]s, on a thread of its own.
//!
//! [`run_tournament`] ties them together. Views (the live display, leaderboards, an SPRT)
//! live outside this module and see only [`events`].
//!
//! ```no_run
//! use kalaha::stats::Tally;
//! use kalaha::tournament::config::ConfigFile;
//! use kalaha::tournament::events::{Control, Event, View};
//! use kalaha::tournament::spec::EngineSpec;
//! use kalaha::tournament::{RunOptions, run_tournament};
//!
//! /// Stops after 100 game pairs.
//! struct Pairs(u64);
//! impl View for Pairs {
//!     fn event(&mut self, e: &Event<'_>, _tally: &Tally) -> std::io::Result<Control> {
//!         if let Event::GameFinished { pair_completed: true, .. } = e {
//!             self.0 += 1;
//!         }
//!         Ok(if self.0 >= 100 { Control::Stop } else { Control::Continue })
//!     }
//! }
//!
//! // `builtin=` engines run this executable as `<exe> engine NAME`.
//! let config = ConfigFile {
//!     engines: vec![EngineSpec::builtin("hard"), EngineSpec::builtin("medium")],
//!     games: Some(1_000_000),
//!     ..ConfigFile::default()
//! }
//! .resolve()?;
//! let options = RunOptions::new("results/pairs");
//! let outcome = run_tournament(config, &options, &mut [&mut Pairs(0)], None)?;
//! assert!(outcome.summary.stopped_by_view);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod config;
pub mod events;
pub(crate) mod launcher;
mod orchestration;
pub(crate) mod program;
mod recorder;
pub(crate) mod repeats;
pub(crate) mod run;
pub mod schedule;
pub mod spec;

pub use recorder::Recorder;

use crate::results::{self, Claim};
use crate::stats::Tally;
use config::TournamentConfig;
use events::{RunSummary, StartInfo, StopRule, View};
pub use orchestration::{Counted, Run};
use spec::SpecError;
use std::io;
use std::path::{Path, PathBuf};

/// Why a tournament could not run.
#[derive(Debug, thiserror::Error)]
pub enum TournamentError {
    /// Bad input found before any game (exit code 2).
    #[error("{0}")]
    Input(String),
    /// The message holds the I/O error's text (not also exposed as `source()`).
    #[error("failed to write results in {path}: {error}")]
    Io { path: PathBuf, error: io::Error },
    /// A view could not show the run (a closed terminal, a broken pipe); the games
    /// recorded so far are kept.
    #[error("{}", output_failure(path, error))]
    Output { path: PathBuf, error: io::Error },
}

/// What a failure to show or write the run says: a full disk in so many words.
fn output_failure(path: &Path, error: &io::Error) -> String {
    let path = crate::record::shown_path(path);
    if let Some(full) = results::full_disk(error) {
        format!(
            "{full}: the run stopped; the games recorded so far are safe in \
             {path}/games.jsonl; free some space, and resuming the run continues it"
        )
    } else {
        format!(
            "failed to show the run ({error}; was its output closed?): it stopped; the games \
             recorded so far are kept in {path}, and resuming the run continues it"
        )
    }
}

/// Where and how to run.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// The results folder.
    pub out: PathBuf,
    /// Continue the tournament in `out` (its `tournament.toml` is the configuration).
    pub resume: bool,
    /// Games at once.
    pub concurrency: usize,
    /// Keep protocol transcripts in `logs/`.
    pub debug: bool,
    /// The kind of run (`tournament.toml` says it).
    pub kind: results::RunKind,
}

impl RunOptions {
    /// A new tournament in `out`, as many games at once as there are cores.
    pub fn new(out: impl Into<PathBuf>) -> RunOptions {
        RunOptions {
            out: out.into(),
            resume: false,
            concurrency: std::thread::available_parallelism().map_or(1, |n| n.get()),
            debug: false,
            kind: results::RunKind::Tournament,
        }
    }
}

/// What a finished run reports.
#[derive(Debug)]
pub struct TournamentOutcome {
    pub summary: RunSummary,
    /// The scoreboard of the whole tournament (earlier runs included).
    pub tally: Tally,
    /// The configuration as run (engine names settled).
    pub config: TournamentConfig,
}

/// Reads the configuration saved in a results folder.
pub fn load_saved(dir: &Path) -> Result<TournamentConfig, TournamentError> {
    Ok(load_saved_run(dir)?.0)
}

/// The saved configuration of the tournament in `dir` and the games at once it ran with
/// (`None` in a folder written before that was kept).
pub fn load_saved_run(dir: &Path) -> Result<(TournamentConfig, Option<usize>), TournamentError> {
    let path = crate::results::Files::of(dir).tournament_toml();
    let file =
        config::ConfigFile::load(&path).map_err(|e| TournamentError::Input(e.to_string()))?;
    let concurrency = file.concurrency;
    let config = file.resolve().map_err(|e| {
        TournamentError::Input(match e {
            config::ConfigError::Engine { entry, error, .. }
                if matches!(
                    *error,
                    SpecError::Dir { .. } | SpecError::Program { .. } | SpecError::WriteDir { .. }
                ) =>
            {
                moved_engine(&path, &entry, &error)
            }
            e @ config::ConfigError::Engine { .. } => e.to_string(),
            e => format!("{}: {e}", crate::record::shown_path(&path)),
        })
    })?;
    Ok((config, concurrency))
}

/// What to do when an engine of a run to resume is not where the run began with it: the
/// results folder was moved or copied (with the engines beside it) to another place, or
/// the engine was. Where an engine is kept is not what its games were played with, so
/// `tournament.toml` may say where it is now ([`PLAYED_ENGINE_KEYS`] compares a program
/// by its file name).
fn moved_engine(path: &Path, entry: &str, error: &SpecError) -> String {
    let keys = match error {
        SpecError::WriteDir { .. } => "its write folders",
        _ => "cmd and dir (its program and working folder)",
    };
    format!(
        "{}, {entry}: {}: if the engine (or the results folder with the engines beside it) \
         was moved or copied, write where it is now as {keys} of this [[engine]] in {0}, \
         then resume again",
        crate::record::shown_path(path),
        error.reason(),
    )
}

/// What a results folder already holds, counted in a fresh scoreboard: its repaired
/// games of tournament `id`, and what the repair said.
fn existing(out: &Path, config: &TournamentConfig) -> Result<orchestration::Counted, io::Error> {
    let names = config.names();
    // A recorded game the schedule could not have played (edited by hand, or of another
    // run): not counted, no row of games.csv, and said so.
    let fits = |row: &crate::record::GameRow<'_>| {
        results::could_have_played(
            row,
            &config.id,
            &names,
            Some(&|n| config.schedule.has_game(n)),
        )
    };
    let repaired = results::repair(out, &config.id, &fits)?;
    // The settings must be those the games were played with: an edited tournament.toml
    // would rate games of one board under the name of another.
    if let Some(played) = repaired.rules_played.iter().find(|r| **r != config.rules()) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "{}/tournament.toml says the games are played as {}, but its games were \
                 played as {played}: the file was changed after the run began; put its \
                 [rules] back as they were, or start a new run",
                crate::record::shown_path(out),
                config.rules()
            ),
        ));
    }
    if let Some(changed) = first_game_played_otherwise(out, config, &repaired)? {
        return Err(io::Error::new(io::ErrorKind::InvalidData, changed));
    }
    let mut notes = repaired.notes();
    let mut tally = Tally::new();
    let csv = crate::results::Files::of(out).games_csv();
    let mut misfits = repaired.misfits;
    let repeated = repeats::repeated_games(out)?;
    if csv.exists() {
        let summary = results::read_games_csv(&csv, |row| {
            // A record that does not replay is said in the notes; it is not counted.
            if repaired.done.contains(row.game) && !repaired.unplayable_games.contains(row.game) {
                if fits(row) {
                    let row = crate::record::GameRow {
                        repeat: repeated.contains(row.game),
                        ..*row
                    };
                    tally.add(&row);
                } else {
                    misfits += 1;
                }
            }
        })
        .map_err(io::Error::other)?;
        notes.extend(summary.warning());
    }
    if misfits > 0 {
        // A warning, shown even with --quiet (notes are not).
        tracing::warn!(
            "{} in {} cannot be of this tournament (an engine not in it, an engine \
             against itself, or a number outside its schedule; games.jsonl or games.csv was \
             edited, or holds another run's games): not counted, and not played again \
             unless their lines are deleted from both files",
            crate::record::counted(misfits, "recorded game"),
            crate::record::shown_path(out)
        );
    }
    Ok(orchestration::Counted {
        done: repaired.done,
        tally,
        notes,
    })
}

/// The first recorded game of the run that its settings would not have played, said as
/// an error naming the setting: a game past the end of the schedule (`games` lowered), or
/// one the schedule gives another opening (the seed or the openings changed) or other
/// seats (the engines or the schedule changed). This catches what was changed after the
/// run began in `.played.toml` too (or in a folder older than it), where games played
/// from here on would not be the pairs' partners of those recorded. What the records do
/// not show (the time control, the margin) only `.played.toml` checks.
fn first_game_played_otherwise(
    out: &Path,
    config: &TournamentConfig,
    repaired: &results::Repaired,
) -> io::Result<Option<String>> {
    let names = config.names();
    let schedule = &config.schedule;
    let folder = crate::record::shown_path(out);
    let (put_it_back, put_them_back) = (
        "put it back as it was, or start a new run",
        "put them back as they were, or start a new run",
    );
    let mut changed = None;
    results::read_jsonl(&crate::results::Files::of(out).games_jsonl(), |rec, _| {
        if changed.is_some() || repaired.unplayable_games.contains(&rec.game) {
            return;
        }
        let Some(number) = rec
            .game
            .strip_prefix(config.id.as_str())
            .and_then(|rest| rest.strip_prefix('-'))
            .and_then(|n| n.parse::<u64>().ok())
        else {
            return;
        };
        // A game the schedule has not, or of engines not in the run, is not counted, and
        // said so elsewhere.
        let ours = |name: &str| names.iter().any(|n| n == name);
        if rec.south == rec.north || !ours(&rec.south) || !ours(&rec.north) {
            return;
        }
        // A record numbered as kalaha numbers the games (its pair and round those of its
        // number) past the last game: the schedule was longer when it was played.
        let pairings = schedule.pairings().len() as u64;
        let laid_out = number > 0
            && rec.number == number
            && rec.pair == number.div_ceil(2)
            && pairings > 0
            && rec.round == (rec.pair - 1) / pairings + 1;
        if laid_out && number > 2 * schedule.total_pairs() {
            changed = Some(format!(
                "{folder}/tournament.toml, games: it says {}, but game {} was played, of \
                 round {} (games = {} at least): games was lowered after the run began; \
                 {put_it_back}",
                2 * schedule.pairs_per_pairing,
                crate::record::clean_text(&rec.game),
                rec.round,
                2 * rec.round,
            ));
            return;
        }
        let Some(game) = schedule.game(number) else {
            return;
        };
        let played = crate::record::Opening {
            start: rec.start.clone(),
            pits: rec.opening.clone(),
        };
        let said = |o: &crate::record::Opening| match o.to_string() {
            t if t.is_empty() => "the start position".to_string(),
            t => format!("the opening {t}"),
        };
        let (south, north) = (&names[game.south], &names[game.north]);
        if rec.south != *south || rec.north != *north {
            changed = Some(format!(
                "{folder}/tournament.toml gives game {} {} south and {} north, but it was \
                 played with {} south and {} north: the engines (their number or order) or \
                 the schedule were changed after the run began; {put_them_back}",
                rec.game,
                crate::record::clean_text(south),
                crate::record::clean_text(north),
                crate::record::clean_text(&rec.south),
                crate::record::clean_text(&rec.north),
            ));
        } else if played != game.opening {
            let (setting, put_back) = match &schedule.openings {
                schedule::Openings::Distinct(_) => ("the seed or opening_plies", put_them_back),
                schedule::Openings::List(_) => ("opening_list", put_it_back),
                schedule::Openings::Start => ("opening_plies", put_it_back),
            };
            changed = Some(format!(
                "{folder}/tournament.toml gives game {} {}, but it was played from {}: \
                 {setting} changed after the run began; {put_back}",
                rec.game,
                said(&game.opening),
                said(&played),
            ));
        }
    })?;
    Ok(changed)
}

/// The keys of `tournament.toml` that decide what the games are: a resume refuses a file
/// whose values differ from those the run began with. The plain settings that change what
/// a tournament plays, besides the title, and those with a shape of their own.
fn played_keys() -> impl Iterator<Item = &'static str> {
    config::settings::SETTINGS
        .iter()
        .filter(|s| s.plays && s.key != "title")
        .map(|s| s.key)
        .chain(["run", "schedule", "rules", "tc", "opening_list", "each"])
}

/// The keys of an engine's table that decide what plays (its name is checked against the
/// games). Where the engine is kept is not among them: a results folder moved or copied
/// elsewhere, or to another machine, with its engines beside it, says in `tournament.toml`
/// where they are now. So `cmd` is compared by the program's file name, and its working
/// folder (`dir`), its `write` folders and `command` (its program and arguments as run,
/// for people to read) are not compared.
const PLAYED_ENGINE_KEYS: [&str; 9] = [
    "builtin", "cmd", "args", "env", "network", "options", "tc", "limit", "protocol",
];

/// An engine's value of `key` as [`played_difference`] compares it: a program by its file
/// name, wherever it is kept.
fn played_value(key: &str, value: Option<&toml::Value>) -> Option<toml::Value> {
    match (key, value) {
        ("cmd", Some(toml::Value::String(cmd))) => Some(toml::Value::String(
            Path::new(cmd)
                .file_name()
                .map_or_else(|| cmd.clone(), |n| n.to_string_lossy().into_owned()),
        )),
        (_, v) => v.cloned(),
    }
}

/// What differs between `dir/tournament.toml` and the settings the run began with
/// (`dir/.played.toml`), said for the user; `None` when nothing does, or when the folder
/// was written before the settings were kept apart.
pub fn played_changes(dir: &Path) -> Option<String> {
    let folder = crate::record::shown_path(dir);
    let files = results::Files::of(dir);
    let played = crate::record::shown_path(&files.played_toml());
    let (now, then) = match (
        read_table(&files.tournament_toml()),
        read_table(&files.played_toml()),
    ) {
        (Err(e), _) | (_, Err(e)) => return Some(e),
        (Ok(Some(now)), Ok(Some(then))) => (now, then),
        // A folder whose tournament.toml says its kind was written with .played.toml
        // beside it: without it, nothing would check an edited tournament.toml.
        (Ok(Some(now)), Ok(None)) if now.contains_key("run") => {
            return Some(format!(
                "{played} is missing: kalaha writes it when a run begins, with the \
                 settings its games are played with, and a resume checks tournament.toml \
                 against it; put it back (a copy of tournament.toml as the run began), or \
                 start a new run"
            ));
        }
        _ => return None,
    };
    let changed = format!(
        "the file was changed after the run began ({played} keeps the settings it began \
         with); put it back as it was, or start a new run"
    );
    let d = played_difference(&now, &then)?;
    if d.key == ENGINE_COUNT {
        return Some(format!(
            "{folder}/tournament.toml has {} engines, but the run began with {}: {changed}",
            d.shown(&d.a),
            d.shown(&d.b)
        ));
    }
    Some(format!(
        "{folder}/tournament.toml, {}: it says {}, but the run's games are played with {}: \
         {changed}",
        d.key,
        d.shown(&d.a),
        d.shown(&d.b),
    ))
}

/// The `[[engine]]` tables of a `tournament.toml` table, in order.
fn engine_tables(t: &toml::Table) -> &[toml::Value] {
    match t.get("engine") {
        Some(toml::Value::Array(list)) => list,
        _ => &[],
    }
}

/// The table of the TOML file `path`; `None` when there is no such file.
fn read_table(path: &Path) -> Result<Option<toml::Table>, String> {
    let shown = crate::record::shown_path(path);
    if std::fs::symlink_metadata(path).is_err() {
        return Ok(None);
    }
    crate::input::read_text_limited(path, crate::input::CONFIG_LIMIT)
        .map_err(|e| format!("failed to read {shown}: {e}"))?
        .parse::<toml::Table>()
        .map(Some)
        .map_err(|e| format!("{shown}: {}", e.message()))
}

/// A note for each engine of the run in `dir` that `tournament.toml` now keeps elsewhere
/// than the run began with (`.played.toml`): its program or its working folder moved.
fn moved_engines(dir: &Path) -> Vec<String> {
    let (Ok(Some(now)), Ok(Some(then))) = (
        read_table(&results::Files::of(dir).tournament_toml()),
        read_table(&results::Files::of(dir).played_toml()),
    ) else {
        return Vec::new();
    };
    let mut notes = Vec::new();
    for (i, (x, y)) in engine_tables(&now)
        .iter()
        .zip(engine_tables(&then))
        .enumerate()
    {
        for key in ["cmd", "dir"] {
            let (Some(a), Some(b)) = (
                x.get(key).and_then(toml::Value::as_str),
                y.get(key).and_then(toml::Value::as_str),
            ) else {
                continue;
            };
            if a != b {
                notes.push(format!(
                    "engine {} ({}): {key} is {} now; the run began with {} (tournament.toml \
                     says where it is kept)",
                    i + 1,
                    crate::record::shown_line(
                        x.get("name").and_then(toml::Value::as_str).unwrap_or("?")
                    ),
                    crate::record::shown_line(a),
                    crate::record::shown_line(b),
                ));
            }
        }
    }
    notes
}

/// A setting that two `tournament.toml` tables give different values.
#[derive(Clone, Debug, PartialEq)]
pub struct Difference {
    /// The setting, as a user knows it: `seed`, `[rules] seeds`, `engine 2, options`, or
    /// [`ENGINE_COUNT`].
    pub key: String,
    pub a: Option<toml::Value>,
    pub b: Option<toml::Value>,
}

/// The key of a [`Difference`] in the number of engines.
pub const ENGINE_COUNT: &str = "the number of engines";

impl Difference {
    /// One of the two values, as a message shows it (`nothing` when it is absent).
    pub fn shown(&self, v: &Option<toml::Value>) -> String {
        match v {
            Some(v) => crate::record::shown_line(&v.to_string()),
            None => "nothing".to_string(),
        }
    }
}

/// The first setting that decides what the games are (see [`played_keys`] and
/// [`PLAYED_ENGINE_KEYS`]) on which the `tournament.toml` tables `a` and `b` differ.
pub fn played_difference(a: &toml::Table, b: &toml::Table) -> Option<Difference> {
    let differ = |key: String, x: Option<&toml::Value>, y: Option<&toml::Value>| {
        Some(Difference {
            key,
            a: x.cloned(),
            b: y.cloned(),
        })
    };
    for key in played_keys() {
        let (x, y) = (a.get(key), b.get(key));
        if x == y {
            continue;
        }
        // A table (`[rules]`) names the key inside it that changed.
        if let (Some(toml::Value::Table(x)), Some(toml::Value::Table(y))) = (x, y)
            && let Some(inner) = x.keys().chain(y.keys()).find(|k| x.get(*k) != y.get(*k))
        {
            return differ(format!("[{key}] {inner}"), x.get(inner), y.get(inner));
        }
        return differ(config::settings::key_words(key), x, y);
    }
    let (x, y) = (engine_tables(a), engine_tables(b));
    if x.len() != y.len() {
        let count = |n: usize| Some(toml::Value::Integer(n as i64));
        return Some(Difference {
            key: ENGINE_COUNT.to_string(),
            a: count(x.len()),
            b: count(y.len()),
        });
    }
    for (i, (x, y)) in x.iter().zip(y).enumerate() {
        for key in PLAYED_ENGINE_KEYS {
            let (v, w) = (x.get(key), y.get(key));
            if played_value(key, v) != played_value(key, w) {
                return differ(format!("engine {}, {key}", i + 1), v, w);
            }
        }
    }
    None
}

/// A warning when more games would run at once than the machine has CPUs: `concurrency`
/// at most, and no more than the `left` games still to play (none on a resume of a run
/// that is over).
fn oversubscribed(concurrency: usize, left: u64) -> Option<String> {
    let at_once = concurrency.min(usize::try_from(left).unwrap_or(usize::MAX));
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    (at_once > cpus).then(|| {
        format!(
            "{at_once} games at once on {}: engines will wait for a CPU while their clocks \
             run, so they play worse and may lose on time (-j {cpus} plays one game a CPU)",
            crate::record::counted(cpus as u64, "CPU")
        )
    })
}

/// A warning for each engine whose `hello` version differs from the one `tournament.toml`
/// recorded (read back in its spec): the results would mix its versions.
fn version_changes(config: &TournamentConfig) -> Vec<String> {
    config
        .engines
        .iter()
        .filter_map(|e| {
            let old = e.spec.version.as_deref()?;
            let new = e.identity.version.as_deref().unwrap_or("");
            (old != new).then(|| {
                format!(
                    "engine {}: its hello version is now {new:?}, but it was {old:?} when \
                     the tournament started (tournament.toml): the results mix two versions \
                     of it; start a new tournament to compare one version",
                    e.identity.name
                )
            })
        })
        .collect()
}

/// Runs (or resumes) a tournament: checks every engine before any game, writes
/// `tournament.toml`, `games.csv`, `games.jsonl` and `logs/` into `options.out`, skips the
/// games already there, and shows every recorded game to `views`. `stop` may end the run
/// early (see [`events::StopRule`]). Ctrl-C and SIGTERM interrupt (see [`run::run_games`]).
/// The folder is locked for the whole run.
pub fn run_tournament(
    mut config: TournamentConfig,
    options: &RunOptions,
    views: &mut [&mut dyn View],
    stop: Option<Box<dyn StopRule>>,
) -> Result<TournamentOutcome, TournamentError> {
    let claim = match options.resume {
        true => Claim::Resume,
        false => Claim::New,
    };
    let run = Run::claim(&options.out, claim, options.kind, options.debug)?;
    let (launcher, ready) = run.start_engines(&mut config)?;
    if !options.resume {
        let mut file = config.to_file();
        file.concurrency = Some(options.concurrency);
        run.save_config(
            file,
            "The resolved configuration of this tournament; `kalaha tournament --resume DIR` \
             continues it.",
        )?;
    }
    let Counted {
        done,
        tally,
        mut notes,
    } = run.count(&config)?;
    if options.resume {
        for warning in version_changes(&config) {
            tracing::warn!("{warning}");
            notes.push(warning);
        }
        for note in moved_engines(&options.out) {
            tracing::warn!("{note}");
        }
    }
    let schedule = config.schedule.clone();
    // Counted from the games done, not by walking the schedule, which may hold billions.
    let prefix = format!("{}-", config.id);
    let done_in_shard = done
        .iter()
        .filter_map(|id| id.strip_prefix(&prefix)?.parse::<u64>().ok())
        .filter(|&n| schedule.has_game(n) && done.contains(&config.game_id(n)))
        .count() as u64;
    let left = schedule.games_in_shard().saturating_sub(done_in_shard);
    if let Some(warning) = oversubscribed(options.concurrency, left) {
        tracing::warn!("{warning}");
    }
    let info = StartInfo {
        id: config.id.clone(),
        names: config.names(),
        total: schedule.games_in_shard(),
        done: done_in_shard,
        notes,
    };
    let id_of = {
        let c = config.clone();
        move |n: u64| c.game_id(n)
    };
    let games = schedule
        .games()
        .filter(move |g| !done.contains(&id_of(g.number)));
    let (summary, tally) = run.play(
        &config,
        launcher,
        ready,
        (tally, info),
        games,
        options.concurrency,
        views,
        stop,
    )?;
    Ok(TournamentOutcome {
        summary,
        tally,
        config,
    })
}
