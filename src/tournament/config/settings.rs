//! Every plain setting of a run, declared once: its TOML key (the field name), its type,
//! its flag, its help, whether it changes what a tournament plays, and how the leaderboard
//! shows it. From this one list come the flags of `kalaha tournament`, `match` and `sprt`
//! (`CommonArgs`), the keys of a configuration file and of `tournament.toml` (`ConfigFile`),
//! the merge of flags over file over defaults (`ConfigFile::or`), the flags `--resume`
//! refuses, and the leaderboard's labels ([`SETTINGS`]).
//!
//! Settings with a shape of their own are declared beside their type instead: the engines
//! (`[[engine]]`, `--engine`), `[each]`, the `[rules]` (`RulesSpec`, with [`RULES`] here
//! for their flags and labels), the time control `tc` (also written as `move_time` or
//! `clock`), `schedule` (`--gauntlet`), `sandbox` (`--strict`) and `opening_list`.
//!
//! A consumer writes a `macro_rules!` that takes the list and passes its name to
//! [`with_settings`], which calls it with every entry:
//!
//! ```text
//! /// help (also the field's documentation)
//! key: Type { flag: "flag-name", arg: (more clap attributes), plays: bool, show: Option<(Group, label)> },
//! ```
//!
//! `plays`: the setting changes what a tournament plays, so `--resume` refuses its flag.
//! `show`: the leaderboard group and label of its value in `tournament.toml` (`None`: not
//! kept there, or shown by a group's own code).

use std::collections::BTreeMap;
use std::path::PathBuf;

/// Calls the macro `$then` with the list of plain settings. The order is that of `--help`,
/// of `tournament.toml` and of the leaderboard within a group.
macro_rules! with_settings {
    ($then:ident) => {
        $then! {
            /// The tournament id, prefix of every game id (shards of one tournament share
            /// it) [default: random].
            id: String { flag: "id", arg: (value_name = "ID"), plays: true, show: None },
            /// The title of the leaderboard, kept in tournament.toml [default: the
            /// tournament id].
            title: String { flag: "title", arg: (value_name = "TEXT"), plays: true, show: None },
            /// Games per pairing, rounded up to whole game pairs (default 2; 100 for `kalaha
            /// match`; 20 in the demo that `kalaha tournament` plays when given no engine).
            games: u64 {
                flag: "games",
                arg: (value_name = "N"),
                plays: true,
                show: Some((Run, "Games per pairing")),
            },
            /// A fixed time per move, e.g. 100ms (default 100ms; 20ms in the demo that
            /// `kalaha tournament` plays when given no engine).
            move_time: String {
                flag: "move-time",
                arg: (value_name = "TIME", conflicts_with = "clock"),
                plays: true,
                show: None,
            },
            /// A game clock: base plus increment per move, e.g. 10s+100ms.
            clock: String { flag: "clock", arg: (value_name = "BASE+INC"), plays: true, show: None },
            /// Tolerance on top of every time limit [default: 50ms]: on every move with a
            /// fixed move time; once per game with a clock (each overdraft uses it up).
            time_margin: String {
                flag: "time-margin",
                arg: (value_name = "TIME"),
                plays: true,
                show: Some((Time, "Tolerance on every time limit")),
            },
            /// Openings of K random legal sowings from the start, a distinct position for each
            /// round (after more sowings once they run out), instead of the board's book (0:
            /// every game from the start position, so deterministic engines repeat their
            /// games) [default: the board's book, on the boards of books/ (6x4, 6x3, 5x4, 4x4
            /// and 4x3, with or without empty captures), else 4].
            opening_plies: u32 {
                flag: "opening-plies",
                arg: (value_name = "K"),
                plays: true,
                show: None,
            },
            /// A file of openings, played in order (again from the first when the run needs
            /// more): one per line, pit numbers separated by spaces, or a start position
            /// <pits,south store,north store,south pits...,north pits...> (south to move),
            /// # comments.
            openings: std::path::PathBuf {
                flag: "openings",
                arg: (value_name = "FILE", conflicts_with = "opening_plies"),
                plays: true,
                show: None,
            },
            /// Seed of the random openings [default: 0].
            seed: u64 { flag: "seed", arg: (value_name = "N"), plays: true, show: Some((Run, "Seed")) },
            /// Play only the K-th of N disjoint slices of the schedule (whole game pairs).
            shard: String { flag: "shard", arg: (value_name = "K/N"), plays: true, show: None },
            /// When to restart engines [default: on-fault].
            restart: $crate::tournament::config::Restart {
                flag: "restart",
                arg: (value_enum),
                plays: true,
                show: Some((Handling, "Engine restarts")),
            },
            /// End games early: `decided` once a store holds more than half of all seeds;
            /// `exact` as soon as the solver proves the game's value within a small budget
            /// (the stores are then those perfect play from there reaches; on the standard
            /// board it uses the endgame table once built with `kalaha tables build`).
            adjudicate: $crate::referee::Adjudication {
                flag: "adjudicate",
                arg: (value_enum),
                plays: true,
                show: Some((Handling, "Adjudication")),
            },
            /// Openings of --opening-plies sowings (default 4) whose exact value for south
            /// lies in [-V, V], one per game pair (at most 200, then repeated), found by the
            /// solver as `kalaha openings` does and kept in tournament.toml.
            balanced_openings: u32 {
                flag: "balanced-openings",
                arg: (value_name = "V", conflicts_with = "openings"),
                plays: true,
                show: None,
            },
            /// Time an engine has to answer the first hello [default: 10s].
            startup_timeout: String {
                flag: "startup-timeout",
                arg: (value_name = "TIME"),
                plays: true,
                show: Some((Time, "Time to answer hello")),
            },
            /// The longest line an engine may send, in bytes; a longer one is a protocol
            /// error [default: 1048576].
            line_limit: u64 {
                flag: "line-limit",
                arg: (value_name = "BYTES"),
                plays: true,
                show: Some((Handling, "Longest line an engine may send")),
            },
            /// Search depth, passed to engines that declare a `depth` option.
            depth: i64 {
                flag: "depth",
                arg: (value_name = "N"),
                plays: true,
                show: Some((Handling, "Depth limit (engines with a depth option)")),
            },
            /// Node limit, passed to engines that declare a `nodes` option.
            nodes: i64 {
                flag: "nodes",
                arg: (value_name = "N"),
                plays: true,
                show: Some((Handling, "Node limit (engines with a nodes option)")),
            },
            /// Games at once [default: the number of cores]. `tournament.toml` keeps it, so
            /// that a resume runs as many as the run did (engines that use several threads
            /// may need 1).
            concurrency: usize {
                flag: "concurrency",
                arg: (short = 'j', value_name = "N", value_parser = $crate::tournament::config::settings::at_least_one),
                plays: false,
                show: None,
            },
            /// Also rewrite standings.csv, h2h.csv and the leaderboards every N games (they
            /// are always written at the end).
            report_every: u64 { flag: "report-every", arg: (value_name = "N"), plays: false, show: None },
            /// Write the run as JSON lines into FILE, one event a line, each line written as
            /// it happens: the run's start, every game started and finished, standings,
            /// an SPRT's status and verdict, warnings, and how the run ended (see
            /// docs/events.md). `-` is standard output; what is printed there for people
            /// then goes to standard error.
            events: std::path::PathBuf {
                flag: "events",
                arg: (value_name = "FILE"),
                plays: false,
                show: None,
            },
            /// The results folder [default: results/<UTC date-time>].
            out: std::path::PathBuf { flag: "out", arg: (value_name = "DIR"), plays: false, show: None },
        }
    };
}
pub(crate) use with_settings;

/// The leaderboard groups a setting may be shown in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Group {
    Run,
    Rules,
    Time,
    Handling,
}

/// What the leaderboard and the error messages need of a setting.
#[derive(Clone, Copy, Debug)]
pub struct Setting {
    /// Its key in a configuration file.
    pub key: &'static str,
    /// Its flag, `--games`.
    pub flag: &'static str,
    /// Whether it changes what a tournament plays (`--resume` refuses it).
    pub plays: bool,
    /// Its leaderboard group and label.
    pub show: Option<(Group, &'static str)>,
}

macro_rules! descriptors {
    ($( $(#[doc = $doc:literal])* $key:ident : $ty:ty {
        flag: $flag:literal, arg: ($($arg:tt)*), plays: $plays:literal, show: $show:expr $(,)?
    }, )*) => {
        /// Every plain setting, in the order of the list.
        pub const SETTINGS: &[Setting] = {
            use Group::*;
            &[$(Setting {
                key: stringify!($key),
                flag: concat!("--", $flag),
                plays: $plays,
                show: $show,
            },)*]
        };
    };
}
with_settings!(descriptors);

/// The rules of `[rules]`, as [`SETTINGS`] has the plain ones: key (`rules.KEY` in
/// [`Origins`]), flag, and label (pits and seeds are shown together as `Board`).
pub const RULES: &[Setting] = &[
    rule("pits", "--pits", "Pits a side"),
    rule("seeds", "--seeds", "Seeds a pit"),
    rule("empty_capture", "--empty-capture", "Empty capture"),
    rule("sweep", "--sweep", "Seeds left at the end"),
];

const fn rule(key: &'static str, flag: &'static str, label: &'static str) -> Setting {
    Setting {
        key,
        flag,
        plays: true,
        show: Some((Group::Rules, label)),
    }
}

impl Setting {
    /// The label of the leaderboard.
    pub fn label(&self) -> Option<&'static str> {
        self.show.map(|(_, label)| label)
    }
}

/// The declaration of the plain setting or rule `key` (`rules.pits` for a rule).
pub fn setting(key: &str) -> Option<&'static Setting> {
    match key.strip_prefix("rules.") {
        Some(rule) => RULES.iter().find(|s| s.key == rule),
        None => SETTINGS.iter().find(|s| s.key == key),
    }
}

/// The label of setting `key` on the leaderboard (declared in [`SETTINGS`] or [`RULES`]).
pub fn label(key: &str) -> &'static str {
    setting(key).and_then(Setting::label).unwrap_or("?")
}

/// A count of at least 1.
pub(crate) fn at_least_one(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

/// Where a value came from; a key with none came from the defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A flag of the command line, with its value as given (quoted for a shell), `None`
    /// for a switch or a list of words.
    Flag { flag: String, value: Option<String> },
    /// A key of this configuration file.
    File(PathBuf),
}

/// Where each value of a configuration came from, by key (`games`, `rules.pits`,
/// `engine`), recorded where flags, files and defaults are merged.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Origins(BTreeMap<String, Origin>);

impl Origins {
    pub fn set(&mut self, key: impl Into<String>, origin: Origin) {
        self.0.insert(key.into(), origin);
    }

    pub fn remove(&mut self, key: &str) {
        self.0.remove(key);
    }

    pub fn get(&self, key: &str) -> Option<&Origin> {
        self.0.get(key)
    }

    /// These origins, each key not here taken from `under`.
    pub fn over(mut self, under: Origins) -> Origins {
        for (k, v) in under.0 {
            self.0.entry(k).or_insert(v);
        }
        self
    }

    /// What the user gave for `key`, as they wrote it: `--pits 99`, `t.toml, [rules]
    /// pits`, or the key alone for a default. `with_value`: whether a flag's value is part
    /// of it (not when the error is about something missing beside it).
    pub fn given(&self, key: &str, with_value: bool) -> String {
        match self.get(key) {
            Some(Origin::Flag {
                flag,
                value: Some(v),
            }) if with_value => format!("{flag} {v}"),
            Some(Origin::Flag { flag, .. }) => flag.clone(),
            Some(Origin::File(path)) => {
                format!("{}, {}", crate::record::shown_path(path), key_words(key))
            }
            None => key_words(key),
        }
    }
}

/// A key as a configuration file writes it: `games`, `[rules] pits`.
pub fn key_words(key: &str) -> String {
    match key.split_once('.') {
        Some((table, key)) => format!("[{table}] {key}"),
        None => key.to_string(),
    }
}
