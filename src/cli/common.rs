//! The flags shared by `kalaha tournament`, `kalaha match` and `kalaha sprt`, and their
//! conversion to a configuration file (merged over `--config`).

use super::CliError;
use super::rules_args::SweepArg;
use crate::referee::Adjudication;
use crate::results::Files;
use crate::rules::Sweep;
use crate::tournament::config::settings;
use crate::tournament::config::{
    ConfigError, ConfigFile, Origin, Origins, Restart, RulesSpec, TournamentConfig,
};
use crate::tournament::spec::EngineSpec;
use std::path::{Path, PathBuf};

/// The `--engine KEY=VALUE...` groups, one per engine (clap's derive cannot collect
/// groups of values, so this one argument is declared by hand).
#[derive(Debug, Clone, Default)]
pub struct EngineArgs(pub Vec<Vec<String>>);

impl clap::FromArgMatches for EngineArgs {
    fn from_arg_matches(m: &clap::ArgMatches) -> Result<Self, clap::Error> {
        let groups = m
            .get_occurrences::<String>("engine")
            .map(|occ| occ.map(|words| words.cloned().collect()).collect())
            .unwrap_or_default();
        Ok(EngineArgs(groups))
    }

    fn update_from_arg_matches(&mut self, m: &clap::ArgMatches) -> Result<(), clap::Error> {
        *self = EngineArgs::from_arg_matches(m)?;
        Ok(())
    }
}

impl clap::Args for EngineArgs {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        cmd.arg(
            clap::Arg::new("engine")
                .long("engine")
                .value_name("KEY=VALUE")
                .num_args(1..)
                .action(clap::ArgAction::Append)
                .help(
                    "An engine, as KEY=VALUE words: cmd=PROGRAM or builtin=NAME, then any of \
                     name=NAME, arg=ARG (repeatable), dir=DIR, env.VAR=VALUE, \
                     option.NAME=VALUE, tc=100ms or tc=10s+100ms (its own time control), \
                     limit.memory=2G, limit.processes=N, limit.cpu=10m, write=DIR \
                     (repeatable: a folder it may write), network=true (it keeps the \
                     machine's network), protocol=kgp",
                ),
        )
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        EngineArgs::augment_args(cmd)
    }
}

macro_rules! common_args {
    ($( $(#[doc = $doc:literal])* $key:ident : $ty:ty {
        flag: $flag:literal, arg: ($($arg:tt)*), plays: $plays:literal, show: $show:expr $(,)?
    }, )*) => {
        /// Flags shared by `kalaha tournament`, `kalaha match` and `kalaha sprt`: the plain
        /// settings (declared in [`crate::tournament::config::settings`]), then the rest.
        #[derive(Debug, Clone, clap::Args)]
        pub struct CommonArgs {
            #[command(flatten)]
            pub engines: EngineArgs,
            /// Settings for every engine (same keys as --engine; an engine's own keys win).
            #[arg(long, value_name = "KEY=VALUE", num_args = 1..)]
            pub each: Vec<String>,
            /// A TOML configuration file (command-line flags win over it).
            #[arg(long, value_name = "FILE")]
            pub config: Option<PathBuf>,
            $(
                $(#[doc = $doc])*
                #[arg(long = $flag, $($arg)*)]
                pub $key: Option<$ty>,
            )*
            /// Analyse every game exactly as it finishes (as `kalaha analyze` does):
            /// analysis.csv, and seeds lost per move in the standings and leaderboards.
            #[arg(long)]
            pub analyze: bool,
            /// No live display, no standings and no summary: only warnings and errors are
            /// printed (the results folder holds everything).
            #[arg(long, short)]
            pub quiet: bool,
            /// Refuse to run (exit 2) unless every layer of the engines' sandbox holds here
            /// (`sandbox = "required"` in a configuration file).
            #[arg(long)]
            pub strict: bool,
            /// Keep every engine's protocol transcript in DIR/logs/.
            #[arg(long)]
            pub debug: bool,
            /// Serve a live page of the run on 127.0.0.1: the games in progress, move by
            /// move, the standings, and every finished game to replay.
            #[arg(long)]
            pub live: bool,
            /// The port of the --live page [default: a free port].
            #[arg(long, value_name = "PORT", requires = "live")]
            pub port: Option<u16>,
            /// Open the --live page in a browser (with xdg-open).
            #[arg(long, requires = "live")]
            pub open: bool,
            #[command(flatten)]
            pub rules: TournamentRulesArgs,
        }

        impl CommonArgs {
            /// The plain settings given as flags, each with where it came from.
            fn plain_settings(&self) -> ConfigFile {
                let mut file = ConfigFile {
                    $($key: self.$key.clone(),)*
                    ..ConfigFile::default()
                };
                $(
                    if let Some(v) = &self.$key {
                        file.origins.set(stringify!($key), Origin::Flag {
                            flag: concat!("--", $flag).to_string(),
                            value: Some(Shown::shown(v)),
                        });
                    }
                )*
                file
            }

            /// The flags of plain settings that change what a tournament plays, with
            /// whether each was given.
            fn plays_given(&self) -> Vec<(&'static str, bool)> {
                let mut given = Vec::new();
                $(
                    if $plays {
                        given.push((concat!("--", $flag), self.$key.is_some()));
                    }
                )*
                given
            }
        }
    };
}
crate::tournament::config::settings::with_settings!(common_args);

/// A flag's value as the user typed it, quoted for a shell where needed.
trait Shown {
    fn shown(&self) -> String;
}

macro_rules! shown_as_text {
    ($($t:ty),*) => {
        $(impl Shown for $t {
            fn shown(&self) -> String {
                super::shell::shell_word(&self.to_string())
            }
        })*
    };
}
shown_as_text!(u32, u64, i64, usize, String);

impl Shown for PathBuf {
    fn shown(&self) -> String {
        super::shell::shell_path(self)
    }
}

macro_rules! shown_as_value {
    ($($t:ty),*) => {
        $(impl Shown for $t {
            fn shown(&self) -> String {
                clap::ValueEnum::to_possible_value(self)
                    .map_or_else(String::new, |v| v.get_name().to_string())
            }
        })*
    };
}
shown_as_value!(Restart, Adjudication, SweepArg);

/// The rules flags of a tournament: each one given overrides the same rule of `--config`'s
/// file (or of the defaults), one by one.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct TournamentRulesArgs {
    /// Pits per side (1 to 16) [default: 6].
    #[arg(long, value_name = "N")]
    pub pits: Option<u32>,
    /// Seeds per pit at the start (1 to 100) [default: 4].
    #[arg(long, value_name = "N")]
    pub seeds: Option<u32>,
    /// A last seed in an empty own pit goes to the store even when the opposite pit is empty.
    #[arg(long)]
    pub empty_capture: bool,
    /// Where seeds left in the pits go at the end of the game [default: owner].
    #[arg(long, value_enum, value_name = "SWEEP")]
    pub sweep: Option<SweepArg>,
}

impl TournamentRulesArgs {
    /// Whether any rules flag was given.
    pub(crate) fn any(&self) -> bool {
        self.pits.is_some() || self.seeds.is_some() || self.empty_capture || self.sweep.is_some()
    }

    /// Records where the rules given as flags came from.
    fn record(&self, origins: &mut Origins) {
        let flag = |flag: &str, value: Option<String>| Origin::Flag {
            flag: flag.to_string(),
            value,
        };
        if let Some(p) = self.pits {
            origins.set("rules.pits", flag("--pits", Some(p.shown())));
        }
        if let Some(n) = self.seeds {
            origins.set("rules.seeds", flag("--seeds", Some(n.shown())));
        }
        if self.empty_capture {
            origins.set("rules.empty_capture", flag("--empty-capture", None));
        }
        if let Some(s) = self.sweep {
            origins.set("rules.sweep", flag("--sweep", Some(s.shown())));
        }
    }

    /// The rules given on the command line over `under` (the file's), one by one.
    pub(crate) fn over(&self, under: Option<RulesSpec>) -> Option<RulesSpec> {
        if !self.any() {
            return under;
        }
        let flags = RulesSpec {
            pits: self.pits,
            seeds: self.seeds,
            empty_capture: self.empty_capture.then_some(true),
            sweep: self.sweep.map(Sweep::from),
        };
        Some(flags.over(under.unwrap_or_default()))
    }
}

/// The origin of a switch or of a list of words, such as `--engine`.
fn switch(flag: &str) -> Origin {
    Origin::Flag {
        flag: flag.to_string(),
        value: None,
    }
}

/// A configuration error in the words the user gave: `--pits 99: ...`, `t.toml, [rules]
/// pits: ...`, or the key alone for a default.
pub(crate) fn explain(e: ConfigError, origins: &Origins) -> CliError {
    let (setting, message, with_value) = match e {
        ConfigError::Setting { setting, message } => (setting, message, true),
        ConfigError::Needs { setting, message } => (setting, message, false),
        e => return CliError::input(e),
    };
    if setting == "tc" {
        // The clash of several time controls, whatever their spelling.
        return CliError::input_msg(format!("time control: {message}"));
    }
    CliError::input_msg(format!("{}: {message}", origins.given(setting, with_value)))
}

/// A configuration error of a command whose every setting is a flag: the setting is named
/// by its declared flag.
pub(crate) fn flag_error(e: ConfigError) -> CliError {
    match e {
        ConfigError::Setting { setting, message } | ConfigError::Needs { setting, message } => {
            let flag = settings::setting(setting).map_or_else(
                || format!("--{}", setting.replace('_', "-")),
                |s| s.flag.into(),
            );
            CliError::input_msg(format!("{flag}: {message}"))
        }
        e => CliError::input(e),
    }
}

/// What the `--engine` flags (`given`) do to the engines of the configuration file at
/// `path` (`listed`): they replace the whole list, as every flag replaces its key of the
/// file, and nothing is added to it. Said, since cutechess and fastchess users may expect
/// the engines to be added. `None` when one of the two lists is empty.
fn engines_replaced(path: &Path, listed: &[EngineSpec], given: &[EngineSpec]) -> Option<String> {
    if listed.is_empty() || given.is_empty() {
        return None;
    }
    let names = |specs: &[EngineSpec]| {
        specs
            .iter()
            .map(|s| crate::record::clean_text(&s.default_name()).into_owned())
            .collect::<Vec<_>>()
            .join(", ")
    };
    Some(format!(
        "--engine replaces the engines of {}: this run plays {} ({}) instead of its {} ({}); \
         to add an engine to the file's, write it as another [[engine]] in the file, or give \
         every engine with --engine",
        crate::record::shown_path(path),
        crate::record::counted(given.len() as u64, "engine"),
        names(given),
        crate::record::counted(listed.len() as u64, "engine"),
        names(listed),
    ))
}

/// A flag `--resume` cannot take.
pub(crate) fn resume_flag(flag: &str) -> CliError {
    CliError::input_msg(format!(
        "{flag} cannot be given with --resume: the tournament keeps the settings in \
         DIR/tournament.toml; only --concurrency, --quiet, --debug, --report-every and \
         --events may be given with it"
    ))
}

/// How a run goes (not what it plays).
#[derive(Clone, Copy, Debug)]
pub(crate) struct RunFlags {
    pub concurrency: usize,
    pub report_every: Option<u64>,
    pub quiet: bool,
    pub debug: bool,
    /// `--strict`: refuse to run without the full sandbox.
    pub strict: bool,
    /// `--live`: the port of the page (0: a free one), and whether to open a browser.
    pub live: Option<(u16, bool)>,
    /// `--analyze`: analyse every game exactly as it finishes.
    pub analyze: bool,
}

impl CommonArgs {
    /// The first flag given that changes the tournament (everything but --concurrency,
    /// --quiet, --debug, --report-every, --out, --config and the engines).
    pub(crate) fn settings_given(&self) -> Option<&'static str> {
        let r = &self.rules;
        let mut given = vec![("--each", !self.each.is_empty())];
        given.extend(self.plays_given());
        given.extend([
            ("--pits", r.pits.is_some()),
            ("--seeds", r.seeds.is_some()),
            ("--empty-capture", r.empty_capture),
            ("--sweep", r.sweep.is_some()),
        ]);
        given
            .into_iter()
            .find(|(_, given)| *given)
            .map(|(flag, _)| flag)
    }

    /// The command line as a configuration, merged over `--config`'s file, with where
    /// each value came from.
    pub(crate) fn to_config_file(&self) -> Result<ConfigFile, CliError> {
        let mut cli = self.plain_settings();
        for words in &self.engines.0 {
            cli.engines
                .push(EngineSpec::parse(words).map_err(CliError::input)?);
        }
        if !cli.engines.is_empty() {
            cli.origins.set("engine", switch("--engine"));
        }
        if !self.each.is_empty() {
            cli.each = Some(EngineSpec::parse(&self.each).map_err(CliError::input)?);
            cli.origins.set("each", switch("--each"));
        }
        if self.strict {
            cli.sandbox = Some(crate::sandbox::Policy::Required);
            cli.origins.set("sandbox", switch("--strict"));
        }
        let mut file = match &self.config {
            Some(path) => {
                let file = ConfigFile::load(path).map_err(CliError::input)?;
                if let Some(note) = engines_replaced(path, &file.engines, &cli.engines) {
                    tracing::warn!("{note}");
                }
                cli.or(file)
            }
            None => cli,
        };
        file.rules = self.rules.over(file.rules);
        self.rules.record(&mut file.origins);
        Ok(file)
    }

    /// Resolves a configuration built from these flags; a refused setting is named as
    /// the user gave it (see [`explain`]).
    pub(crate) fn resolve(&self, file: &ConfigFile) -> Result<TournamentConfig, CliError> {
        file.resolve().map_err(|e| explain(e, &file.origins))
    }

    /// How to run a resumed run: the flags, else the games at once the run was started
    /// with (`saved`), else the defaults.
    pub(crate) fn resume_flags(&self, saved: Option<usize>) -> RunFlags {
        let mut flags = self.run_flags(None);
        if let (None, Some(n)) = (self.concurrency, saved) {
            flags.concurrency = n;
        }
        flags
    }

    /// Opens the `--events` stream of a run of `kind` in `out` when the flags or the
    /// configuration file (`file`, with the flags merged over it) give one: before anything
    /// is printed, since with `--events -` standard output is the stream's. `fresh`: `out`
    /// is the folder of a new run, not yet claimed.
    pub(crate) fn open_events(
        &self,
        file: Option<&ConfigFile>,
        kind: crate::results::RunKind,
        out: &Path,
        fresh: bool,
    ) -> Result<(), CliError> {
        let (target, given) = match file.and_then(|f| f.events.as_ref().map(|e| (e, f))) {
            Some((target, f)) => (target, f.origins.given("events", true)),
            None => match &self.events {
                Some(target) => (target, format!("--events {}", target.shown())),
                None => return Ok(()),
            },
        };
        crate::events::stream::open(target, kind, &given, fresh.then_some(out))
            .map_err(CliError::input_msg)
    }

    /// How to run: the flags, else the configuration file's keys (already merged into
    /// `file`), else the defaults.
    pub(crate) fn run_flags(&self, file: Option<&ConfigFile>) -> RunFlags {
        let concurrency = file
            .and_then(|f| f.concurrency)
            .or(self.concurrency)
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        RunFlags {
            concurrency,
            report_every: file.and_then(|f| f.report_every).or(self.report_every),
            quiet: self.quiet,
            debug: self.debug,
            strict: self.strict
                || file.and_then(|f| f.sandbox) == Some(crate::sandbox::Policy::Required),
            live: self.live.then(|| (self.port.unwrap_or(0), self.open)),
            analyze: self.analyze,
        }
    }
}

/// The results folder of a new run: `out` of `file` (a flag or a configuration file),
/// checked, with an error that names what the user gave; else a new default folder
/// `results/<PREFIX><UTC date-time>`.
pub(crate) fn new_results_folder(
    file: &crate::tournament::config::ConfigFile,
    prefix: &str,
) -> Result<PathBuf, CliError> {
    match &file.out {
        Some(out) => {
            crate::results::check_folder(out, crate::results::Claim::New).map_err(|e| {
                CliError::input_msg(format!("{}: {e}", file.origins.given("out", true)))
            })?;
            Ok(out.clone())
        }
        None => Ok(crate::results::claim_default_folder(prefix)?),
    }
}

/// Writes `text` to `path` durably and whole (see [`crate::results::write_file`]); the
/// error names the path.
pub(crate) fn write_atomically(path: &Path, text: &str) -> Result<(), String> {
    crate::results::write_file(path, text.as_bytes())
        .map_err(|e| format!("failed to write {}: {e}", crate::record::shown_path(path)))
}

/// `, but N folders in it do, e.g. DIR/x` when folders inside `dir` hold `file` (the user
/// gave the folder of the runs, not one run), else nothing.
pub(crate) fn runs_inside(dir: &Path, file: fn(&Files) -> PathBuf) -> String {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return String::new();
    };
    let mut runs: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| file(&Files::of(p)).is_file())
        .collect();
    runs.sort();
    match runs.last() {
        // Run folders are named by their start time: the last is the newest.
        Some(newest) => format!(
            ", but {} in it {}, e.g. {}",
            crate::record::counted(runs.len() as u64, "folder"),
            if runs.len() == 1 { "does" } else { "do" },
            super::shell::shell_path(newest)
        ),
        None => String::new(),
    }
}

/// Checks that `dir` is a results folder holding `file`, with an error that says which of
/// the three it is not (missing, not a folder, without the file) and what to `give`.
/// Why the folder `dir`, given to `--resume`, holds no `tournament.toml`
/// to resume from, when it is a results folder that lost it or never had it whole: its
/// `.played.toml` keeps the settings (the command that puts it back), or the run stopped
/// before it saved them (killed, or a full disk, in its first moments): nothing was
/// played, so the command that began it, run again into the folder, starts it anew (a
/// folder like that takes a new run). `None` otherwise.
pub(crate) fn no_settings_to_resume(dir: &Path) -> Option<CliError> {
    let files = Files::of(dir);
    if !dir.is_dir() || files.tournament_toml().exists() {
        return None;
    }
    let shown = crate::record::shown_path(dir);
    if files.played_toml().is_file() {
        // Deleted while the run went on, or since: the settings are still in the folder.
        return Some(CliError::input_msg(format!(
            "{shown} holds no tournament.toml, but its .played.toml keeps the settings the run \
             began with: `cp {} {}` puts it back; then resume again",
            super::shell::shell_path(&files.played_toml()),
            super::shell::shell_path(&files.tournament_toml())
        )));
    }
    let begun = files.logs().is_dir() || files.sprt_toml().is_file();
    if files.hold_games() || !begun {
        return None;
    }
    Some(CliError::input_msg(format!(
        "{shown} holds no games and no tournament.toml: its run stopped before it saved its \
         settings, so there is nothing to resume; run the command that began it again, \
         with `--out {}` (a new run takes this folder), or remove the folder",
        super::shell::shell_path(dir)
    )))
}

pub(crate) fn require_results_file(
    dir: &Path,
    file: fn(&Files) -> PathBuf,
    give: &str,
) -> Result<(), CliError> {
    let path = file(&Files::of(dir));
    let problem = if !dir.exists() {
        "does not exist"
    } else if !dir.is_dir() {
        "is not a folder"
    } else if !path.exists() {
        return Err(CliError::input_msg(format!(
            "{} holds no {}{}: {give}",
            crate::record::shown_path(dir),
            crate::record::shown_path(Path::new(path.file_name().unwrap_or_default())),
            runs_inside(dir, file)
        )));
    } else {
        return Ok(());
    };
    Err(CliError::input_msg(format!(
        "{} {problem}: {give}",
        crate::record::shown_path(dir)
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_flags_override_the_file_one_by_one() {
        let file = RulesSpec::from(crate::rules::Rules::new(4, 3, true, Sweep::None).unwrap());
        let args = TournamentRulesArgs {
            seeds: Some(5),
            ..TournamentRulesArgs::default()
        };
        let r = args.over(Some(file)).unwrap().resolve().unwrap();
        assert_eq!((r.pits(), r.seeds(), r.empty_capture()), (4, 5, true));
        assert_eq!(r.sweep(), Sweep::None);
        let none = TournamentRulesArgs::default();
        assert_eq!(none.over(Some(file)), Some(file));
        assert_eq!(none.over(None), None);
        let pits = TournamentRulesArgs {
            pits: Some(6),
            ..TournamentRulesArgs::default()
        };
        let r = pits.over(Some(file)).unwrap().resolve().unwrap();
        assert_eq!(r.pits(), 6);
        // A flag alone fills the rest from the defaults.
        let r = pits.over(None).unwrap().resolve().unwrap();
        assert_eq!((r.pits(), r.seeds()), (6, 4));
    }
}
