//! The flags shared by `kalaha tournament`, `kalaha match` and `kalaha sprt`, and their
//! conversion to a configuration file (merged over `--config`).

use super::CliError;
use super::rules_args::SweepArg;
use crate::referee::Adjudication;
use crate::rules::Sweep;
use crate::tournament::config::{ConfigError, ConfigFile, Restart, RulesSpec, TournamentConfig};
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
                     limit.memory=2G, limit.processes=N, limit.cpu=10m, protocol=kgp",
                ),
        )
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        EngineArgs::augment_args(cmd)
    }
}

/// Flags shared by `kalaha tournament` and `kalaha match`.
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
    /// Games per pairing, rounded up to whole game pairs (default 2; 20 in the demo that
    /// `kalaha tournament` plays when given no engine).
    #[arg(long, value_name = "N")]
    pub games: Option<u64>,
    /// A fixed time per move, e.g. 100ms (default 100ms; 20ms in the demo that `kalaha
    /// tournament` plays when given no engine).
    #[arg(long, value_name = "TIME", conflicts_with = "clock")]
    pub move_time: Option<String>,
    /// A game clock: base plus increment per move, e.g. 10s+100ms.
    #[arg(long, value_name = "BASE+INC")]
    pub clock: Option<String>,
    /// Tolerance on top of every time limit [default: 50ms].
    #[arg(long, value_name = "TIME")]
    pub time_margin: Option<String>,
    /// Random legal sowings from the start for each round's opening (0: every game from
    /// the start position, so deterministic engines repeat their games); an opening stops
    /// early rather than end the game [default: 4].
    #[arg(long, value_name = "K")]
    pub opening_plies: Option<u32>,
    /// A file of openings: one per line, pit numbers separated by spaces, # comments.
    #[arg(long, value_name = "FILE", conflicts_with = "opening_plies")]
    pub openings: Option<PathBuf>,
    /// Seed of the random openings [default: 0].
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Play only the K-th of N disjoint slices of the schedule (whole game pairs).
    #[arg(long, value_name = "K/N")]
    pub shard: Option<String>,
    /// Games at once [default: the number of cores].
    #[arg(long, short = 'j', value_name = "N", value_parser = at_least_one)]
    pub concurrency: Option<usize>,
    /// When to restart engines [default: on-fault].
    #[arg(long, value_enum)]
    pub restart: Option<Restart>,
    /// End games early: `decided` once a store holds more than half of all seeds; `exact`
    /// as soon as the solver proves the game's value within a small budget (the stores are
    /// then those perfect play from there reaches; on the standard board it uses the endgame
    /// table once built with `kalaha tables build`).
    #[arg(long, value_enum)]
    pub adjudicate: Option<Adjudication>,
    /// Openings of --opening-plies sowings (default 4) whose exact value for south lies in
    /// [-V, V], one per game pair (at most 200, then repeated), found by the solver as
    /// `kalaha openings` does and kept in tournament.toml.
    #[arg(long, value_name = "V", conflicts_with = "openings")]
    pub balanced_openings: Option<u32>,
    /// Analyse every game exactly as it finishes (as `kalaha analyze` does): analysis.csv,
    /// and seeds lost per move in the standings and leaderboards.
    #[arg(long)]
    pub analyze: bool,
    /// Time an engine has to answer the first hello [default: 10s].
    #[arg(long, value_name = "TIME")]
    pub startup_timeout: Option<String>,
    /// The longest line an engine may send, in bytes; a longer one is a protocol error
    /// [default: 1048576].
    #[arg(long, value_name = "BYTES")]
    pub line_limit: Option<u64>,
    /// Search depth, passed to engines that declare a `depth` option.
    #[arg(long, value_name = "N")]
    pub depth: Option<i64>,
    /// Node limit, passed to engines that declare a `nodes` option.
    #[arg(long, value_name = "N")]
    pub nodes: Option<i64>,
    /// The results folder [default: results/<UTC date-time>].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// The tournament id, prefix of every game id (shards of one tournament share it)
    /// [default: random].
    #[arg(long, value_name = "ID")]
    pub id: Option<String>,
    /// The title of the leaderboard, kept in tournament.toml [default: the tournament id].
    #[arg(long, value_name = "TEXT")]
    pub title: Option<String>,
    /// No live display.
    #[arg(long, short)]
    pub quiet: bool,
    /// Refuse to run (exit 2) unless every layer of the engines' sandbox holds here
    /// (`sandbox = "required"` in a configuration file).
    #[arg(long)]
    pub strict: bool,
    /// Keep every engine's protocol transcript in DIR/logs/.
    #[arg(long)]
    pub debug: bool,
    /// Also rewrite standings.csv, h2h.csv and the leaderboards every N games (they are
    /// always written at the end).
    #[arg(long, value_name = "N")]
    pub report_every: Option<u64>,
    /// Serve a live page of the run on 127.0.0.1: the games in progress, move by move,
    /// the standings, and every finished game to replay.
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
    pub fn any(&self) -> bool {
        self.pits.is_some() || self.seeds.is_some() || self.empty_capture || self.sweep.is_some()
    }

    /// The rules given on the command line over `under` (the file's), one by one.
    pub fn over(&self, under: Option<RulesSpec>) -> Option<RulesSpec> {
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

/// A count of at least 1.
pub(crate) fn at_least_one(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

/// A flag `--resume` cannot take.
pub(crate) fn resume_flag(flag: &str) -> CliError {
    CliError::input_msg(format!(
        "{flag} cannot be given with --resume: the tournament keeps the settings in \
         DIR/tournament.toml; only --concurrency, --quiet, --debug and --report-every may \
         be given with it"
    ))
}

/// How a run goes (not what it plays).
#[derive(Clone, Copy, Debug)]
pub struct RunFlags {
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
    pub fn settings_given(&self) -> Option<&'static str> {
        let r = &self.rules;
        [
            ("--each", !self.each.is_empty()),
            ("--games", self.games.is_some()),
            ("--move-time", self.move_time.is_some()),
            ("--clock", self.clock.is_some()),
            ("--time-margin", self.time_margin.is_some()),
            ("--opening-plies", self.opening_plies.is_some()),
            ("--openings", self.openings.is_some()),
            ("--seed", self.seed.is_some()),
            ("--shard", self.shard.is_some()),
            ("--restart", self.restart.is_some()),
            ("--adjudicate", self.adjudicate.is_some()),
            ("--balanced-openings", self.balanced_openings.is_some()),
            ("--startup-timeout", self.startup_timeout.is_some()),
            ("--line-limit", self.line_limit.is_some()),
            ("--depth", self.depth.is_some()),
            ("--nodes", self.nodes.is_some()),
            ("--id", self.id.is_some()),
            ("--title", self.title.is_some()),
            ("--pits", r.pits.is_some()),
            ("--seeds", r.seeds.is_some()),
            ("--empty-capture", r.empty_capture),
            ("--sweep", r.sweep.is_some()),
        ]
        .into_iter()
        .find(|(_, given)| *given)
        .map(|(flag, _)| flag)
    }

    /// The command line as a configuration, merged over `--config`'s file.
    pub fn to_config_file(&self) -> Result<ConfigFile, CliError> {
        let mut engines = Vec::new();
        for words in &self.engines.0 {
            engines.push(EngineSpec::parse(words).map_err(CliError::input)?);
        }
        let each = if self.each.is_empty() {
            None
        } else {
            Some(EngineSpec::parse(&self.each).map_err(CliError::input)?)
        };
        let cli = ConfigFile {
            id: self.id.clone(),
            title: self.title.clone(),
            schedule: None,
            games: self.games,
            rules: None,
            tc: None,
            move_time: self.move_time.clone(),
            clock: self.clock.clone(),
            concurrency: self.concurrency,
            report_every: self.report_every,
            out: self.out.clone(),
            sandbox: self.strict.then_some(crate::sandbox::Policy::Required),
            time_margin: self.time_margin.clone(),
            opening_plies: self.opening_plies,
            openings: self.openings.clone(),
            opening_list: None,
            seed: self.seed,
            shard: self.shard.clone(),
            restart: self.restart,
            adjudicate: self.adjudicate,
            balanced_openings: self.balanced_openings,
            startup_timeout: self.startup_timeout.clone(),
            line_limit: self.line_limit,
            depth: self.depth,
            nodes: self.nodes,
            each,
            engines,
        };
        let mut file = match &self.config {
            Some(path) => cli.or(ConfigFile::load(path).map_err(CliError::input)?),
            None => cli,
        };
        file.rules = self.rules.over(file.rules);
        // A time control on the command line replaces the file's, whatever its spelling.
        if self.move_time.is_some() || self.clock.is_some() {
            file.tc = None;
            file.move_time.clone_from(&self.move_time);
            file.clock.clone_from(&self.clock);
        }
        Ok(file)
    }

    /// Resolves a configuration built from these flags; a refused setting is named as
    /// the user gave it: `--flag` when it came from the command line, the key and the
    /// file when it came from `--config`.
    pub fn resolve(&self, file: &ConfigFile) -> Result<TournamentConfig, CliError> {
        file.resolve().map_err(|e| self.config_error(e))
    }

    /// A configuration error in the words of the command line.
    pub fn config_error(&self, e: ConfigError) -> CliError {
        match e {
            ConfigError::Setting { setting, message } => {
                if setting == "tc" {
                    // No flag is called --tc: the clash is between time controls.
                    return CliError::input_msg(format!("time control: {message}"));
                }
                let flag = format!("--{}", setting.replace('_', "-"));
                match &self.config {
                    Some(path) if !self.flag_given(setting) => CliError::input_msg(format!(
                        "{setting} (in {}): {message}",
                        crate::record::shown_path(path)
                    )),
                    _ => CliError::input_msg(format!("{flag}: {message}")),
                }
            }
            e => CliError::input(e),
        }
    }

    /// Whether the command line gave the flag of configuration key `setting`.
    fn flag_given(&self, setting: &str) -> bool {
        match setting {
            "games" => self.games.is_some(),
            "move_time" => self.move_time.is_some(),
            "clock" => self.clock.is_some(),
            "time_margin" => self.time_margin.is_some(),
            "startup_timeout" => self.startup_timeout.is_some(),
            "line_limit" => self.line_limit.is_some(),
            "openings" => self.openings.is_some(),
            "opening_plies" => self.opening_plies.is_some(),
            "shard" => self.shard.is_some(),
            "id" => self.id.is_some(),
            "each" => !self.each.is_empty(),
            "engine" => !self.engines.0.is_empty(),
            _ => false,
        }
    }

    /// How to run a resumed run: the flags, else the games at once the run was started
    /// with (`saved`), else the defaults.
    pub fn resume_flags(&self, saved: Option<usize>) -> RunFlags {
        let mut flags = self.run_flags(None);
        if let (None, Some(n)) = (self.concurrency, saved) {
            flags.concurrency = n;
        }
        flags
    }

    /// How to run: the flags, else the configuration file's keys (already merged into
    /// `file`), else the defaults.
    pub fn run_flags(&self, file: Option<&ConfigFile>) -> RunFlags {
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

/// Writes `text` to `path` through a temporary file beside it, so a reader (or a crash)
/// never sees half a file.
pub(crate) fn write_atomically(path: &Path, text: &str) -> Result<(), String> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            format!("failed to write {}: {e}", crate::record::shown_path(path))
        })
}

/// `, but N folders in it do, e.g. DIR/x` when folders inside `dir` hold `file` (the user
/// gave the folder of the runs, not one run), else nothing.
pub(crate) fn runs_inside(dir: &Path, file: &str) -> String {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return String::new();
    };
    let mut runs: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join(file).is_file())
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
pub(crate) fn require_results_file(dir: &Path, file: &str, give: &str) -> Result<(), CliError> {
    let problem = if !dir.exists() {
        "does not exist"
    } else if !dir.is_dir() {
        "is not a folder"
    } else if !dir.join(file).exists() {
        return Err(CliError::input_msg(format!(
            "{} holds no {file}{}: {give}",
            crate::record::shown_path(dir),
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
