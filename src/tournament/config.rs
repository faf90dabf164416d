//! The tournament configuration in its two stages: [`ConfigFile`], what a user writes (in a
//! `--config` TOML file, or on the command line, which is merged on top), and
//! [`TournamentConfig`], the validated configuration the runner uses. `tournament.toml` in a
//! results folder is a fully filled [`ConfigFile`], so `--resume` reads it back the same way.

use crate::record::{TimeControl, format_duration, parse_duration};
use crate::referee::Adjudication;
use crate::rules::Rules;
use crate::tournament::schedule::{Openings, Schedule, ScheduleKind, Shard, parse_openings};
use crate::tournament::spec::{EngineSpec, Identity, ResolvedEngine, SpecError};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

pub mod settings;
pub use settings::{Origin, Origins};

/// When engines are restarted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Restart {
    /// Only after a fault; a healthy engine is reused across games.
    #[default]
    #[value(name = "on-fault")]
    OnFault,
    /// Before every game.
    Always,
}

macro_rules! config_file {
    ($( $(#[doc = $doc:literal])* $key:ident : $ty:ty {
        flag: $flag:literal, arg: ($($arg:tt)*), plays: $plays:literal, show: $show:expr $(,)?
    }, )*) => {
        /// A configuration as written by a user (every field optional) or as saved in
        /// `tournament.toml` (every field filled). The plain settings are declared in
        /// [`settings`]; the fields after them have shapes of their own.
        #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct ConfigFile {
            $(
                $(#[doc = $doc])*
                #[serde(default, skip_serializing_if = "Option::is_none")]
                pub $key: Option<$ty>,
            )*
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub schedule: Option<ScheduleKind>,
            /// What kind of run wrote this file as its `tournament.toml` (not a setting a
            /// user gives: the command that started the run says it).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub run: Option<crate::results::RunKind>,
            /// The rules; any of them may be left out (the defaults apply).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub rules: Option<RulesSpec>,
            /// `100ms` (per move) or `10s+100ms` (game clock); `move_time` and `clock` are
            /// other ways to write it.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub tc: Option<TimeControl>,
            /// Openings given inline, `"3 1"` each (`tournament.toml` keeps the openings of
            /// an `openings` file or of `balanced_openings` so).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub opening_list: Option<Vec<String>>,
            /// Settings applied to every engine (its own keys win).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub each: Option<EngineSpec>,
            /// `"required"`: refuse to run unless every layer of the engines' sandbox holds
            /// (as `--strict`); `"best-effort"` (the default): run with what holds, and say
            /// what does not.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub sandbox: Option<crate::sandbox::Policy>,
            #[serde(default, rename = "engine", skip_serializing_if = "Vec::is_empty")]
            pub engines: Vec<EngineSpec>,
            /// Where each value came from (not a key of the file).
            #[serde(skip)]
            pub origins: Origins,
        }

        impl ConfigFile {
            /// Fills every field this file leaves empty from `under`. A time control given
            /// here (as `tc`, `move_time` or `clock`) replaces any of `under`.
            pub fn or(self, mut under: ConfigFile) -> ConfigFile {
                if self.tc.is_some() || self.move_time.is_some() || self.clock.is_some() {
                    under.tc = None;
                    under.move_time = None;
                    under.clock = None;
                    for key in ["tc", "move_time", "clock"] {
                        under.origins.remove(key);
                    }
                }
                ConfigFile {
                    $($key: self.$key.or(under.$key),)*
                    schedule: self.schedule.or(under.schedule),
                    run: self.run.or(under.run),
                    rules: match (self.rules, under.rules) {
                        (Some(a), Some(b)) => Some(a.over(b)),
                        (a, b) => a.or(b),
                    },
                    tc: self.tc.or(under.tc),
                    opening_list: self.opening_list.or(under.opening_list),
                    each: self.each.or(under.each),
                    sandbox: self.sandbox.or(under.sandbox),
                    engines: if self.engines.is_empty() {
                        under.engines
                    } else {
                        self.engines
                    },
                    origins: self.origins.over(under.origins),
                }
            }
        }
    };
}
settings::with_settings!(config_file);

/// Why a configuration was refused (exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The message holds the I/O error's text (it is not also exposed as `source()`, so
    /// a printed chain does not repeat it).
    #[error("failed to read {path}: {error}")]
    Read {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("failed to parse {path}: {message}")]
    Parse { path: PathBuf, message: String },
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// An `[[engine]]` of the configuration file at `path` is refused: `entry` names it
    /// ([`engine_entry`]).
    #[error("{}, {entry}: {}", crate::record::shown_path(path), error.reason())]
    Engine {
        path: PathBuf,
        entry: String,
        error: Box<SpecError>,
    },
    /// A key of the file at `path` that does not parse, `games` or `[rules] pits`.
    #[error("{}, {key}: {message}", crate::record::shown_path(path))]
    Key {
        path: PathBuf,
        key: String,
        message: String,
    },
    /// A setting's value is refused: `setting` is its key in a configuration file
    /// (`rules.pits` for a rule); [`Origins::given`] names it as the user gave it.
    #[error("{}: {message}", settings::key_words(setting))]
    Setting {
        setting: &'static str,
        message: String,
    },
    /// A setting needs another one that is missing: the setting given is named, not its
    /// value.
    #[error("{}: {message}", settings::key_words(setting))]
    Needs {
        setting: &'static str,
        message: String,
    },
}

/// The first key of a configuration file's `table` that does not parse, as the file
/// writes it (`games`, `[rules] pits`), with why.
fn bad_key(table: &toml::Table) -> Option<(String, String)> {
    fn alone<T: serde::de::DeserializeOwned>(key: &str, value: &toml::Value) -> Option<String> {
        let mut one = toml::Table::new();
        one.insert(key.to_string(), value.clone());
        toml::Value::Table(one)
            .try_into::<T>()
            .err()
            .map(|e| e.message().trim().to_string())
    }
    for (key, value) in table {
        // An engine is named by its place in the list and by its name or program.
        if let (true, toml::Value::Array(engines)) = (key == "engine", value) {
            for (i, engine) in engines.iter().enumerate() {
                let Err(e) = engine.clone().try_into::<EngineSpec>() else {
                    continue;
                };
                let text = |key: &str| engine.get(key).and_then(toml::Value::as_str);
                let label = ["name", "builtin", "cmd"]
                    .into_iter()
                    .find_map(|key| text(key).map(|value| (key, value)));
                return Some((engine_entry(i, label), e.message().trim().to_string()));
            }
        }
        if let (true, toml::Value::Table(rules)) = (key == "rules", value) {
            for (rule, v) in rules {
                if let Some(message) = alone::<RulesSpec>(rule, v) {
                    return Some((format!("[rules] {rule}"), message));
                }
            }
        }
        if let Some(message) = alone::<ConfigFile>(key, value) {
            return Some((key.clone(), message));
        }
    }
    None
}

/// How a message names the engine at `index` (from 0) of a configuration file's list: its
/// place as the file counts it, from 1, and what tells it apart (`label`, its name, its
/// built-in or its program), made safe to show: `[[engine]] 2 (name = "mine")`.
pub fn engine_entry(index: usize, label: Option<(&str, &str)>) -> String {
    let place = format!("[[engine]] {}", index + 1);
    match label {
        Some((key, value)) => format!(
            "{place} ({key} = \"{}\")",
            crate::record::fit_width(&crate::record::clean_text(value), 60)
        ),
        None => place,
    }
}

/// [`engine_entry`] of `spec`, the engine at `index` of a file.
fn spec_entry(index: usize, spec: &EngineSpec) -> String {
    let cmd = spec.cmd.as_deref().map(crate::record::shown_path);
    let label = [
        ("name", spec.name.as_deref()),
        ("builtin", spec.builtin.as_deref()),
        ("cmd", cmd.as_deref()),
    ]
    .into_iter()
    .find_map(|(key, value)| Some((key, value?)));
    engine_entry(index, label)
}

fn refuse(setting: &'static str, message: impl Into<String>) -> ConfigError {
    ConfigError::Setting {
        setting,
        message: message.into(),
    }
}

impl ConfigFile {
    /// Reads a TOML configuration file. Paths in it (an engine's `cmd` and `dir`, the
    /// `openings` file, `out`) are taken from the file's folder, which is also the working
    /// directory of an engine given by `cmd` without `dir` (so its relative arguments work
    /// from wherever kalaha runs).
    pub fn load(path: &Path) -> Result<ConfigFile, ConfigError> {
        let text =
            crate::input::read_text_limited(path, crate::input::CONFIG_LIMIT).map_err(|error| {
                ConfigError::Read {
                    path: path.to_path_buf(),
                    error,
                }
            })?;
        let parse = |message: String| ConfigError::Parse {
            path: path.to_path_buf(),
            message,
        };
        let table: toml::Table = text
            .parse()
            .map_err(|e: toml::de::Error| parse(e.to_string()))?;
        let mut file: ConfigFile = match table.clone().try_into() {
            Ok(file) => file,
            Err(e) => {
                return Err(match bad_key(&table) {
                    Some((key, message)) => ConfigError::Key {
                        path: path.to_path_buf(),
                        key,
                        message,
                    },
                    None => parse(e.to_string()),
                });
            }
        };
        for (key, value) in &table {
            file.origins
                .set(key.clone(), Origin::File(path.to_path_buf()));
            if let (true, toml::Value::Table(rules)) = (key == "rules", value) {
                for rule in rules.keys() {
                    file.origins
                        .set(format!("rules.{rule}"), Origin::File(path.to_path_buf()));
                }
            }
        }
        // The folder of a bare file name ("t.toml") is the empty path: the current folder.
        let folder = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let folder = std::path::absolute(folder).unwrap_or_else(|_| folder.to_path_buf());
        file.rebase(&folder);
        Ok(file)
    }

    /// Takes every relative path of this file from `folder`, and makes `folder` the working
    /// directory of each engine given by `cmd` that sets no `dir` (nor does `each`). A
    /// `cmd` without a `/` is a program looked up in `PATH` and stays as it is.
    fn rebase(&mut self, folder: &Path) {
        let each_dir = self.each.as_ref().is_some_and(|e| e.dir.is_some());
        let on = |p: &mut PathBuf| {
            if p.is_relative() {
                *p = folder.join(&*p);
            }
        };
        for spec in self.engines.iter_mut().chain(self.each.iter_mut()) {
            if let Some(cmd) = &mut spec.cmd
                && cmd.components().count() > 1
            {
                on(cmd);
            }
            if let Some(dir) = &mut spec.dir {
                on(dir);
            }
            spec.write.iter_mut().for_each(on);
        }
        for spec in &mut self.engines {
            if spec.cmd.is_some() && spec.dir.is_none() && !each_dir {
                spec.dir = Some(folder.to_path_buf());
            }
        }
        if let Some(o) = &mut self.openings {
            on(o);
        }
        if let Some(o) = &mut self.out {
            on(o);
        }
        if let Some(e) = self.events.as_mut().filter(|e| e.as_os_str() != "-") {
            on(e);
        }
    }

    /// Validates and resolves the configuration.
    pub fn resolve(&self) -> Result<TournamentConfig, ConfigError> {
        let rules = self.rules.unwrap_or_default().resolve().map_err(|e| {
            let rule = match e {
                crate::rules::RulesError::Pits(_) => "rules.pits",
                crate::rules::RulesError::Seeds(_) => "rules.seeds",
            };
            refuse(rule, e.to_string())
        })?;
        let games = self.games.unwrap_or(DEFAULT_GAMES);
        if games == 0 {
            return Err(refuse("games", "must be at least 1"));
        }
        if self.concurrency == Some(0) {
            return Err(refuse("concurrency", "must be at least 1 (games at once)"));
        }
        if self.report_every == Some(0) {
            return Err(refuse(
                "report_every",
                "must be at least 1 (games between two rewrites of the leaderboards)",
            ));
        }
        for (key, limit) in [("depth", self.depth), ("nodes", self.nodes)] {
            if limit.is_some_and(|n| n < 1) {
                return Err(refuse(key, "must be at least 1"));
            }
        }
        let (openings, opening_plies) = self.openings(rules, games.div_ceil(2))?;
        let shard = match &self.shard {
            Some(s) => Some(s.parse::<Shard>().map_err(|e| refuse("shard", e))?),
            None => None,
        };
        let engines = self.engines()?;
        let schedule = Schedule {
            kind: self.schedule.unwrap_or_default(),
            engines: engines.len(),
            pairs_per_pairing: games.div_ceil(2),
            rules,
            openings,
            shard,
        };
        if schedule.checked_total_games().is_none() {
            return Err(refuse(
                "games",
                format!(
                    "{games} games per pairing among {} engines is more than the {} games a \
                     tournament may have",
                    engines.len(),
                    crate::tournament::schedule::MAX_GAMES
                ),
            ));
        }
        let time = |key: &'static str, value: &Option<String>, default: Duration| match value {
            Some(m) => parse_duration(m).map_err(|e| refuse(key, e.to_string())),
            None => Ok(default),
        };
        Ok(TournamentConfig {
            id: self.id(shard.is_some())?,
            engines,
            schedule,
            tc: self.time_control()?,
            margin: time(
                "time_margin",
                &self.time_margin,
                crate::record::DEFAULT_TIME_MARGIN,
            )?,
            seed: self.seed.unwrap_or(0),
            opening_plies,
            restart: self.restart.unwrap_or_default(),
            adjudication: self.adjudicate.unwrap_or_default(),
            startup_timeout: match time(
                "startup_timeout",
                &self.startup_timeout,
                Duration::from_secs(10),
            )? {
                Duration::ZERO => {
                    return Err(refuse(
                        "startup_timeout",
                        "must be above zero (an engine needs time to answer hello)",
                    ));
                }
                t => t,
            },
            line_limit: match self.line_limit {
                Some(0) => return Err(refuse("line_limit", "it must be at least 1 byte")),
                Some(n) => usize::try_from(n).unwrap_or(usize::MAX),
                None => crate::supervisor::Settings::default().line_limit,
            },
            depth: self.depth,
            nodes: self.nodes,
            title: self.title.clone(),
        })
    }

    /// The time control: `tc`, `move_time` or `clock` (at most one), 100 ms a move by
    /// default.
    fn time_control(&self) -> Result<TimeControl, ConfigError> {
        let move_time = match &self.move_time {
            Some(m) => Some(
                TimeControl::parse_move_time(m).map_err(|e| refuse("move_time", e.to_string()))?,
            ),
            None => None,
        };
        let clock = match &self.clock {
            Some(c) => {
                Some(TimeControl::parse_clock(c).map_err(|e| refuse("clock", e.to_string()))?)
            }
            None => None,
        };
        match (self.tc, move_time, clock) {
            (None, None, None) => Ok(TimeControl::MoveTime(Duration::from_millis(100))),
            (Some(t), None, None) | (None, Some(t), None) | (None, None, Some(t)) => Ok(t),
            _ => Err(refuse(
                "tc",
                "give one time control (--move-time or --clock on the command line; tc, \
                 move_time or clock in a configuration file), not several",
            )),
        }
    }

    /// Where the openings come from (`rounds` of them are played), and the random sowings
    /// of each.
    fn openings(&self, rules: Rules, rounds: u64) -> Result<(Openings, u32), ConfigError> {
        if let Some(v) = self.balanced_openings {
            return self.balanced(rules, rounds, v);
        }
        let plies = match (&self.openings, &self.opening_list) {
            (None, None) => self.opening_plies.unwrap_or(DEFAULT_OPENING_PLIES),
            _ => self.opening_plies.unwrap_or(0),
        };
        let openings = match (&self.openings, &self.opening_list) {
            (Some(_), Some(_)) => {
                return Err(refuse(
                    "openings",
                    "give either an openings file or an inline opening_list",
                ));
            }
            (Some(_), None) if plies > 0 => {
                return Err(refuse(
                    "openings",
                    "an openings file and opening_plies cannot be used together",
                ));
            }
            (Some(path), None) => {
                let text = crate::input::read_text_limited(path, crate::input::OPENINGS_LIMIT)
                    .map_err(|e| {
                        refuse(
                            "openings",
                            format!("failed to read {}: {e}", crate::record::shown_path(path)),
                        )
                    })?;
                let list = parse_openings(&text, rules).map_err(|e| {
                    refuse(
                        "openings",
                        format!("{}: {e}", crate::record::shown_path(path)),
                    )
                })?;
                Openings::List(Arc::new(list))
            }
            (None, Some(lines)) => {
                let list = parse_openings(&lines.join("\n"), rules)
                    .map_err(|e| refuse("opening_list", e.to_string()))?;
                Openings::List(Arc::new(list))
            }
            (None, None) if plies == 0 => Openings::Start,
            (None, None) => {
                // The book is the default of its board; sowings chosen by the user replace it.
                let book = match self.opening_plies {
                    None => crate::analysis::default_book(rules),
                    Some(_) => None,
                };
                Openings::Distinct(Arc::new(
                    crate::tournament::schedule::DistinctOpenings::new(
                        rules,
                        plies,
                        self.seed.unwrap_or(0),
                        book,
                    ),
                ))
            }
        };
        Ok((openings, plies))
    }

    /// Balanced openings within ±`max_value`, found by the solver: one per round, at most
    /// [`MAX_BALANCED_OPENINGS`] (used in order and repeated: an SPRT may play many more
    /// pairs than it is worth solving openings for).
    fn balanced(
        &self,
        rules: Rules,
        rounds: u64,
        max_value: u32,
    ) -> Result<(Openings, u32), ConfigError> {
        if self.openings.is_some() || self.opening_list.is_some() {
            return Err(refuse(
                "balanced_openings",
                "give balanced openings or an openings list, not both",
            ));
        }
        let spec = crate::analysis::OpeningsSpec {
            plies: self.opening_plies.unwrap_or(DEFAULT_OPENING_PLIES).max(1),
            count: rounds.min(MAX_BALANCED_OPENINGS) as usize,
            max_value: max_value.min(i32::MAX as u32) as i32,
            seed: self.seed.unwrap_or(0),
            budget: Some(Duration::from_secs(10)),
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            hash_mb: 128,
        };
        let table = crate::referee::shared_table(&rules);
        if crate::referee::saved_table_missing(&rules) {
            // Without its table the solver would try for many minutes, silently.
            return Err(refuse(
                "balanced_openings",
                format!(
                    "the solver needs the endgame table of {rules} for balanced openings, and \
                     it is not built: build it once with `kalaha tables build --pits {} \
                     --seeds {}{} --sweep {} --threads 2` (minutes), or write openings with \
                     `kalaha openings ... --out FILE` and give --openings FILE",
                    rules.pits(),
                    rules.seeds(),
                    if rules.empty_capture() {
                        " --empty-capture"
                    } else {
                        ""
                    },
                    rules.sweep()
                ),
            ));
        }
        // The search takes seconds to minutes an opening: say so, and how far it is.
        tracing::warn!(
            "finding {} with the solver before the first game: seconds to minutes each (on \
             the standard board the book that ships with kalaha is the default and takes \
             no time)",
            crate::record::counted(spec.count as u64, "balanced opening")
        );
        let mut said = std::time::Instant::now();
        let count = spec.count;
        let mut progress = |_: u64, found: &[crate::analysis::BalancedOpening]| {
            if said.elapsed() >= Duration::from_secs(10) {
                said = std::time::Instant::now();
                eprintln!("balanced openings: {} of {count} found", found.len());
            }
        };
        let found = crate::analysis::balanced_openings(rules, spec, table, &mut progress)
            .map_err(|e| refuse("balanced_openings", e))?;
        let list = found
            .into_iter()
            .map(|o| crate::record::Opening::line(o.pits))
            .collect();
        Ok((Openings::List(Arc::new(list)), 0))
    }

    /// The engines, each with the `each` settings under its own.
    fn engines(&self) -> Result<Vec<EngineEntry>, ConfigError> {
        let each = self.each.clone().unwrap_or_default();
        if each.cmd.is_some() || each.builtin.is_some() || each.name.is_some() {
            return Err(refuse(
                "each",
                "cannot set cmd, builtin or name (they differ per engine)",
            ));
        }
        // An engine of a file is named by its entry there; one of `--engine` by its words.
        let in_file = |index: usize, error: SpecError| match self.origins.get("engine") {
            Some(Origin::File(path)) => ConfigError::Engine {
                path: path.clone(),
                entry: spec_entry(index, &self.engines[index]),
                error: Box::new(error),
            },
            _ => ConfigError::Spec(error),
        };
        let mut engines = Vec::new();
        for (i, spec) in self.engines.iter().enumerate() {
            engines.push(EngineEntry::new(spec.with_defaults(&each)).map_err(|e| in_file(i, e))?);
        }
        // Two engines the user named alike: refused now, before anything starts.
        let mut names = Vec::new();
        for (i, e) in engines
            .iter()
            .enumerate()
            .filter(|(_, e)| e.explicit_name())
        {
            if names.contains(&&e.identity.name) {
                return Err(in_file(
                    i,
                    SpecError::DuplicateName(e.identity.name.clone()),
                ));
            }
            names.push(&e.identity.name);
        }
        if engines.len() < 2 {
            return Err(refuse(
                "engine",
                format!(
                    "a tournament needs at least two engines, {} given",
                    engines.len()
                ),
            ));
        }
        Ok(engines)
    }

    /// The tournament id: as given (and checked), or a fresh one unless `sharded`.
    fn id(&self, sharded: bool) -> Result<String, ConfigError> {
        match &self.id {
            Some(id) => {
                let ok = !id.is_empty()
                    && id
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c));
                if !ok {
                    return Err(refuse("id", "use letters, digits, '_', '.' and '-'"));
                }
                Ok(id.clone())
            }
            None if sharded => Err(ConfigError::Needs {
                setting: "shard",
                message: "needs an id: every shard of one tournament must use the same id, or \
                          merged results count games twice"
                    .into(),
            }),
            None => Ok(new_tournament_id()),
        }
    }
}

/// The rules as a configuration file gives them: any rule may be left out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RulesSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pits: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seeds: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub empty_capture: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<crate::rules::Sweep>,
}

impl RulesSpec {
    /// These rules, each one not given taken from `under`.
    pub fn over(self, under: RulesSpec) -> RulesSpec {
        RulesSpec {
            pits: self.pits.or(under.pits),
            seeds: self.seeds.or(under.seeds),
            empty_capture: self.empty_capture.or(under.empty_capture),
            sweep: self.sweep.or(under.sweep),
        }
    }

    /// The rules, the defaults filling what is not given.
    pub fn resolve(self) -> Result<Rules, crate::rules::RulesError> {
        let d = Rules::default();
        Rules::new(
            self.pits.unwrap_or(d.pits() as u32),
            self.seeds.unwrap_or(d.seeds() as u32),
            self.empty_capture.unwrap_or(d.empty_capture()),
            self.sweep.unwrap_or(d.sweep()),
        )
    }
}

impl From<Rules> for RulesSpec {
    fn from(r: Rules) -> RulesSpec {
        RulesSpec {
            pits: Some(r.pits() as u32),
            seeds: Some(r.seeds() as u32),
            empty_capture: Some(r.empty_capture()),
            sweep: Some(r.sweep()),
        }
    }
}

/// Games per pairing when `--games` is not given.
pub const DEFAULT_GAMES: u64 = 2;

/// Random sowings of each opening when neither a number nor an openings file is given: so
/// that deterministic engines play different games.
pub const DEFAULT_OPENING_PLIES: u32 = 4;

/// A fresh tournament id: 12 random hexadecimal digits.
pub fn new_tournament_id() -> String {
    format!("{:012x}", rand::random::<u64>() >> 16)
}

/// One engine of a resolved configuration, in its three stages.
#[derive(Clone, Debug)]
pub struct EngineEntry {
    /// As given (after `--each`), for `tournament.toml`; never changed.
    pub spec: EngineSpec,
    /// What the run starts.
    pub resolved: ResolvedEngine,
    /// Who it is: its given name, until the start-up checks settle it from its handshake.
    pub identity: Identity,
}

impl EngineEntry {
    /// The engine `spec` gives, resolved and checked.
    pub fn new(spec: EngineSpec) -> Result<EngineEntry, SpecError> {
        Ok(EngineEntry {
            resolved: spec.resolve()?,
            identity: Identity::named(spec.default_name()),
            spec,
        })
    }

    /// The user chose the name (otherwise the engine's `hello` name may replace it).
    pub fn explicit_name(&self) -> bool {
        self.spec.name.is_some()
    }
}

/// The most openings `balanced_openings` makes.
pub const MAX_BALANCED_OPENINGS: u64 = 200;

/// A validated tournament configuration.
#[derive(Clone, Debug)]
pub struct TournamentConfig {
    pub id: String,
    pub engines: Vec<EngineEntry>,
    pub schedule: Schedule,
    /// The default time control (an engine's own `tc` wins).
    pub tc: TimeControl,
    pub margin: Duration,
    pub seed: u64,
    pub opening_plies: u32,
    pub restart: Restart,
    pub adjudication: Adjudication,
    pub startup_timeout: Duration,
    /// The longest line an engine may send, in bytes.
    pub line_limit: usize,
    pub depth: Option<i64>,
    pub nodes: Option<i64>,
    /// The title of the leaderboard.
    pub title: Option<String>,
}

impl TournamentConfig {
    pub fn rules(&self) -> Rules {
        self.schedule.rules
    }

    /// The time control of engine `i`.
    pub fn tc_of(&self, i: usize) -> TimeControl {
        self.engines[i].resolved.tc.unwrap_or(self.tc)
    }

    /// Engine names, in order.
    pub fn names(&self) -> Vec<String> {
        self.engines
            .iter()
            .map(|e| e.identity.name.clone())
            .collect()
    }

    /// The game id of game `number`.
    pub fn game_id(&self, number: u64) -> String {
        format!("{}-{number}", self.id)
    }

    /// The whole configuration as saved in `tournament.toml` (every field filled, engines
    /// under their final names with their full command lines).
    pub fn to_file(&self) -> ConfigFile {
        let engines = self
            .engines
            .iter()
            .map(|e| {
                let mut spec = e.spec.clone();
                spec.name = Some(e.identity.name.clone());
                spec.version = e.identity.version.clone();
                spec.author = e.identity.author.clone();
                let command = &e.resolved.command;
                if spec.cmd.is_some() {
                    spec.cmd = Some(command.program.clone());
                    // Absolute, so that a resume runs the engine where this run did (a
                    // file's engine without `dir` runs in the file's folder).
                    let dir = spec.dir.clone().unwrap_or_else(|| PathBuf::from("."));
                    spec.dir = Some(std::path::absolute(&dir).unwrap_or(dir));
                }
                // Resolved, so that a resume from another folder finds them.
                spec.write = e.resolved.write.clone();
                // A seat that runs no program (a person) keeps what its spec says it is.
                if spec.cmd.is_some() || spec.builtin.is_some() {
                    let mut line = vec![command.program.display().to_string()];
                    line.extend(command.args.iter().cloned());
                    spec.command = Some(line.join(" "));
                }
                spec
            })
            .collect();
        let opening_list = match &self.schedule.openings {
            Openings::List(list) => Some(list.iter().map(|o| o.to_string()).collect()),
            Openings::Start | Openings::Distinct(_) => None,
        };
        ConfigFile {
            id: Some(self.id.clone()),
            title: self.title.clone(),
            schedule: Some(self.schedule.kind),
            games: Some(2 * self.schedule.pairs_per_pairing),
            rules: Some(RulesSpec::from(self.schedule.rules)),
            tc: Some(self.tc),
            time_margin: Some(format_duration(self.margin)),
            // A run of the default book keeps no sowings, so that a resume takes the book
            // again (sowings given replace it).
            opening_plies: match &self.schedule.openings {
                Openings::Distinct(d) if d.book().is_some() => None,
                _ => Some(self.opening_plies),
            },
            opening_list,
            seed: Some(self.seed),
            shard: self.schedule.shard.map(|s| s.to_string()),
            restart: Some(self.restart),
            adjudicate: Some(self.adjudication),
            startup_timeout: Some(format_duration(self.startup_timeout)),
            line_limit: Some(self.line_limit as u64),
            depth: self.depth,
            nodes: self.nodes,
            engines,
            // Every field is named, so that a new setting is a decision here: kept, or
            // (as these) written in another shape or not kept at all.
            // In `tc`:
            move_time: None,
            clock: None,
            // In `opening_list`:
            openings: None,
            balanced_openings: None,
            // Taken from the command line of each run, not kept: they may change on resume
            // (`run_tournament` adds the `concurrency` in use).
            concurrency: None,
            report_every: None,
            events: None,
            out: None,
            // The orchestration says the kind of run.
            run: None,
            // Applied to each engine above.
            each: None,
            // The sandbox policy of each run is its own (`--strict`).
            sandbox: None,
            origins: Origins::default(),
        }
    }
}

#[cfg(test)]
mod tests;
