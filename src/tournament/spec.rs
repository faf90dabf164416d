//! Engine specifications: `--engine cmd=PROG name=.. arg=.. dir=.. option.X=V` on the
//! command line, `[[engine]]` tables in a config file, and their resolution to a command.

use super::program::find_program;
use crate::record::{TimeControl, check_name, clean_text, fit_width};
use crate::supervisor::{EngineCommand, ResourceLimits};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One engine of a tournament, as given by the user and as written to `tournament.toml`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineSpec {
    /// The name used in results; defaults to the built-in's name or the program's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// A built-in engine (`random`, `greedy`, `hard`, ...), run as `kalaha engine NAME`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub builtin: Option<String>,
    /// The program to run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cmd: Option<PathBuf>,
    /// Arguments, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Working directory of the engine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dir: Option<PathBuf>,
    /// Extra environment variables.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Protocol options, sent after the handshake (values are converted to the type the
    /// engine declares).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub options: BTreeMap<String, OptionValue>,
    /// This engine's own time control (odds matches): `100ms` or `10s+100ms`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tc: Option<TimeControl>,
    /// Resource limits: `memory` (`512M`, `2G`), `processes` (a number), `cpu` (`10m`).
    #[serde(default, skip_serializing_if = "LimitSpec::is_empty")]
    pub limit: LimitSpec,
    /// Folders the engine may write, besides its private temporary folder (`write=DIR`,
    /// repeatable): everything else it sees is read-only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub write: Vec<PathBuf>,
    /// `network=true`: the engine keeps the machine's network (it may connect to any port
    /// and see the machine's connections) instead of a network namespace of its own with
    /// only its loopback interface. KGP agents always keep it (they connect to kalaha).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<bool>,
    /// The protocol the program speaks: `kalaha` (the default) or `kgp`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<EngineProtocol>,
    /// The full command line as run: written to `tournament.toml` for people to read,
    /// ignored when read back (a person's seat, which runs no program, says what it is).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// The version and author the engine gave in its `hello` (its [`Identity`]): written
    /// to `tournament.toml` for the leaderboard; read back, only to warn when a resumed
    /// engine's version changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
}

/// The protocol an engine speaks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum EngineProtocol {
    /// kalaha's own protocol (`protocol.md`), over stdin and stdout.
    #[default]
    Kalaha,
    /// The Kalah Game Protocol: the program connects to `KGP_HOST`:`KGP_PORT`
    /// (`docs/kgp.md`).
    Kgp,
}

impl std::str::FromStr for EngineProtocol {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "kalaha" => Ok(EngineProtocol::Kalaha),
            "kgp" => Ok(EngineProtocol::Kgp),
            _ => Err("expected kalaha or kgp".to_string()),
        }
    }
}

/// Resource limits as written by the user (`limit.memory=2G` or `limit = { memory = "2G" }`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitSpec {
    /// Address space of each of the engine's processes: bytes, or with K, M, G or T.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<String>,
    /// Processes and threads the engine may have at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub processes: Option<u64>,
    /// CPU time of each of the engine's processes, e.g. `10m`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<String>,
}

impl LimitSpec {
    pub fn is_empty(&self) -> bool {
        *self == LimitSpec::default()
    }

    /// The limits, checked.
    pub fn resolve(&self) -> Result<ResourceLimits, SpecError> {
        let bad = |key: &str, value: &str, reason: String| SpecError::BadValue {
            key: format!("limit.{key}"),
            value: value.to_string(),
            reason,
        };
        let memory = match &self.memory {
            Some(m) => Some(parse_size(m).map_err(|r| bad("memory", m, r))?),
            None => None,
        };
        if self.processes == Some(0) {
            return Err(bad("processes", "0", "at least 1 is needed".into()));
        }
        let cpu = match &self.cpu {
            Some(c) => Some(
                crate::record::parse_duration(c)
                    .map_err(|e| bad("cpu", c, e.to_string()))
                    .and_then(|d| {
                        if d.as_secs() == 0 {
                            Err(bad("cpu", c, "at least 1s is needed".into()))
                        } else {
                            Ok(d)
                        }
                    })?,
            ),
            None => None,
        };
        Ok(ResourceLimits {
            memory,
            processes: self.processes,
            cpu,
        })
    }
}

/// A size in bytes: `1048576`, `512K`, `64M`, `2G`, `1T` (powers of 1024).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let (digits, unit) = match t.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => t.split_at(i),
        None => (t, ""),
    };
    let n: u64 = digits
        .parse()
        .map_err(|_| "expected a number of bytes, or one with K, M, G or T".to_string())?;
    let shift = match unit
        .trim()
        .to_ascii_uppercase()
        .trim_end_matches(['B', 'I'])
    {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        "T" => 40,
        _ => return Err(format!("unknown unit {unit:?}: use K, M, G or T")),
    };
    let bytes = n
        .checked_mul(1u64 << shift)
        .ok_or_else(|| "too large".to_string())?;
    if bytes < 1 << 20 {
        return Err("below 1M, no engine can start".to_string());
    }
    Ok(bytes)
}

/// An option value as written by the user: a TOML scalar or a command-line string.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum OptionValue {
    Bool(bool),
    Int(i64),
    Text(String),
}

impl OptionValue {
    /// The value as text, for conversion to the declared type.
    pub fn text(&self) -> String {
        match self {
            OptionValue::Bool(b) => b.to_string(),
            OptionValue::Int(i) => i.to_string(),
            OptionValue::Text(s) => s.clone(),
        }
    }
}

/// Why an engine specification was refused. Its message names the engine (`engine spec`,
/// or `engine NAME` once the spec has a name) and says what is wrong ([`SpecError::reason`]);
/// an error about an `[[engine]]` of a configuration file names the entry instead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SpecError {
    /// A word of `--engine` that is not `KEY=VALUE` nor a built-in's name.
    NotKeyValue(String),
    /// A bare word after `cmd=`: most likely the program's argument.
    BareArgument(String),
    /// A quoted spec whose first word is not `KEY=VALUE` (`"hard arg=1"`): the whole
    /// piece, up to its first `=`, reads as one key with a space in it.
    LooseWord(String),
    /// A word holding `,KEY=` (`builtin=hard,name=x`): commas where spaces go.
    Commas(String),
    UnknownKey(String),
    BadValue {
        key: String,
        value: String,
        reason: String,
    },
    UnknownBuiltin(String),
    /// `name` is already made safe to show (escaped once, not again here).
    BadName {
        name: String,
        reason: String,
    },
    NoCommand,
    BothCommands(PathBuf, String),
    /// `name` is `None` when the only name is the one a `cmd=` holding spaces would give
    /// (`cmd=node ne/engine.js` is no engine called `engine`).
    Program {
        name: Option<String>,
        program: PathBuf,
        reason: String,
    },
    Dir {
        name: Option<String>,
        dir: PathBuf,
    },
    WriteDir {
        name: Option<String>,
        dir: PathBuf,
        reason: String,
    },
    DuplicateName(String),
    CurrentExe(String),
}

impl SpecError {
    /// Who the message is about: `engine spec`, `engine spec "WORD"`, `engine NAME`, or
    /// nobody (an error about the engines together, or kalaha's own).
    fn subject(&self) -> Option<String> {
        match self {
            SpecError::NotKeyValue(word)
            | SpecError::BareArgument(word)
            | SpecError::LooseWord(word)
            | SpecError::Commas(word) => Some(format!("engine spec {word:?}")),
            SpecError::UnknownKey(_)
            | SpecError::BadValue { .. }
            | SpecError::UnknownBuiltin(_)
            | SpecError::NoCommand
            | SpecError::BothCommands(..) => Some("engine spec".to_string()),
            SpecError::BadName { name, .. } => Some(format!("engine name \"{name}\"")),
            SpecError::Program { name, .. }
            | SpecError::Dir { name, .. }
            | SpecError::WriteDir { name, .. } => Some(match name {
                Some(name) => format!("engine {name}"),
                None => "engine spec".to_string(),
            }),
            SpecError::DuplicateName(_) | SpecError::CurrentExe(_) => None,
        }
    }

    /// What is wrong, without naming the engine.
    pub fn reason(&self) -> String {
        let builtins = crate::engines::BUILTIN_NAMES.join(", ");
        match self {
            SpecError::NotKeyValue(word) => match nearest_builtin(word) {
                Some(near) => format!(
                    "there is no built-in engine {word:?}: did you mean builtin={near}? \
                     (built-ins: {builtins})"
                ),
                // A path is most likely the engine's program.
                None if word.contains('/') || Path::new(word).is_file() => format!(
                    "expected KEY=VALUE: a program is given as cmd=PROGRAM, write \
                     cmd={word} (its arguments as arg=, one each)"
                ),
                // A plain word is most likely meant as a built-in's name.
                None if word
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '-' || c == '_') =>
                {
                    format!(
                        "expected KEY=VALUE: there is no built-in engine {word:?} (built-ins: \
                         {builtins}), and a program is given as cmd=PROGRAM"
                    )
                }
                None => format!(
                    "expected KEY=VALUE, e.g. cmd=PROGRAM for a program or builtin=NAME for a \
                     built-in engine ({builtins})"
                ),
            },
            SpecError::BareArgument(word) => format!(
                "{word:?} is not KEY=VALUE: a program's arguments are given with arg=, one \
                 each: write arg={word}"
            ),
            SpecError::LooseWord(word) => {
                let (first, rest) = word.split_once(char::is_whitespace).unwrap_or((word, ""));
                let fix = match nearest_builtin(first) {
                    Some(b) => format!("builtin={b}"),
                    None => format!("cmd={first}"),
                };
                format!(
                    "{first:?} is not KEY=VALUE, and a spec quoted as one word is split only \
                     before a KEY=: write \"{fix} {}\"",
                    rest.trim_start()
                )
            }
            SpecError::Commas(word) => format!(
                "engine spec words are separated by spaces, not commas: write \"{}\"",
                uncomma(word)
            ),
            SpecError::UnknownKey(key) => format!(
                "unknown key {key:?} (keys: cmd, builtin, name, arg, dir, write, network, \
                 env.NAME, option.NAME, tc, move_time, clock, limit.memory, limit.processes, \
                 limit.cpu, protocol)"
            ),
            SpecError::BadValue { key, value, reason } => format!("{key}={value:?}: {reason}"),
            SpecError::UnknownBuiltin(b) => match nearest_builtin(b) {
                Some(near) => format!(
                    "unknown built-in engine {b:?}: did you mean builtin={near}? (built-ins: \
                     {builtins})"
                ),
                None => format!("unknown built-in engine {b:?} (built-ins: {builtins})"),
            },
            SpecError::BadName { reason, .. } => reason.clone(),
            SpecError::NoCommand => "give either cmd=PROGRAM or builtin=NAME".to_string(),
            SpecError::BothCommands(c, b) => format!("both cmd={c:?} and builtin={b:?} given"),
            SpecError::Program {
                program, reason, ..
            } => format!("the program {program:?} {reason}"),
            SpecError::Dir { dir, .. } => {
                format!("the working directory {dir:?} does not exist")
            }
            SpecError::WriteDir { dir, reason, .. } => {
                format!("write={dir:?} {reason}: give a folder that exists")
            }
            SpecError::DuplicateName(name) => {
                format!("two engines are named {name:?}: give one of them another name=")
            }
            SpecError::CurrentExe(e) => {
                format!("failed to find the kalaha executable for built-in engines: {e}")
            }
        }
    }
}

impl std::fmt::Display for SpecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.subject() {
            Some(subject) => write!(f, "{subject}: {}", self.reason()),
            None => f.write_str(&self.reason()),
        }
    }
}

impl std::error::Error for SpecError {}

/// The built-in engine whose name `word` most likely misspells (`hadr`, `medum`, `Hard`):
/// at most one edit (a letter added, dropped, changed, or two swapped) for every three
/// letters, and two at most. `None` when no built-in is that close.
pub fn nearest_builtin(word: &str) -> Option<&'static str> {
    let word = word.to_lowercase();
    let allowed = (word.chars().count() / 3).clamp(1, 2);
    crate::engines::BUILTIN_NAMES
        .iter()
        .map(|&b| (strsim::osa_distance(&word, b), b))
        .filter(|&(d, _)| d <= allowed)
        .min_by_key(|&(d, _)| d)
        .map(|(_, b)| b)
}

impl EngineSpec {
    /// A built-in engine under its own name.
    pub fn builtin(name: &str) -> EngineSpec {
        EngineSpec {
            builtin: Some(name.to_string()),
            ..EngineSpec::default()
        }
    }

    /// Parses the words of one `--engine`, each one `KEY=VALUE` (a value may hold spaces);
    /// later keys override earlier ones except `arg`, which adds an argument.
    pub fn parse<S: AsRef<str>>(words: &[S]) -> Result<EngineSpec, SpecError> {
        let mut spec = EngineSpec::default();
        spec.apply(words)?;
        Ok(spec)
    }

    /// Applies `KEY=VALUE` words on top of this spec (used for `--each` too). A word that
    /// holds several `KEY=VALUE` pieces (`"cmd=./x arg=y"`, quoted as one) is split before
    /// each key, as [`split_words`] says.
    pub fn apply<S: AsRef<str>>(&mut self, words: &[S]) -> Result<(), SpecError> {
        for word in split_words(words) {
            // A bare built-in name (`hard`) is `builtin=hard`, as `kalaha play` takes it.
            let bare = crate::engines::BUILTIN_NAMES.contains(&word)
                && self.builtin.is_none()
                && self.cmd.is_none();
            let (key, value) = if bare {
                ("builtin", word)
            } else {
                word.split_once('=').ok_or_else(|| match self.cmd {
                    Some(_) => SpecError::BareArgument(word.to_string()),
                    None => SpecError::NotKeyValue(word.to_string()),
                })?
            };
            let bad = |reason: String| SpecError::BadValue {
                key: key.to_string(),
                value: value.to_string(),
                reason,
            };
            if uncomma(word) != word {
                return Err(SpecError::Commas(word.to_string()));
            }
            match key {
                "cmd" if value.trim().is_empty() => {
                    return Err(bad(
                        "give the program, e.g. cmd=./my-engine, or cmd=python3 \
                         arg=engine.py for a script"
                            .to_string(),
                    ));
                }
                "cmd" => self.cmd = Some(PathBuf::from(value)),
                "builtin" => self.builtin = Some(value.to_string()),
                "name" => self.name = Some(value.to_string()),
                "arg" => self.args.push(value.to_string()),
                "dir" => self.dir = Some(PathBuf::from(value)),
                "write" => self.write.push(PathBuf::from(value)),
                "network" => {
                    self.network = Some(
                        value
                            .parse()
                            .map_err(|_| bad("expected true or false".to_string()))?,
                    )
                }
                "tc" => self.tc = Some(value.parse().map_err(|e| bad(format!("{e}")))?),
                "move_time" => {
                    self.tc =
                        Some(TimeControl::parse_move_time(value).map_err(|e| bad(format!("{e}")))?)
                }
                "clock" => {
                    self.tc =
                        Some(TimeControl::parse_clock(value).map_err(|e| bad(format!("{e}")))?)
                }
                "protocol" => self.protocol = Some(value.parse().map_err(bad)?),
                "limit.memory" => self.limit.memory = Some(value.to_string()),
                "limit.cpu" => self.limit.cpu = Some(value.to_string()),
                "limit.processes" => {
                    self.limit.processes = Some(
                        value
                            .parse()
                            .map_err(|_| bad("expected a number".to_string()))?,
                    )
                }
                _ => {
                    if let Some(opt) = key.strip_prefix("option.").filter(|o| !o.is_empty()) {
                        self.options
                            .insert(opt.to_string(), OptionValue::Text(value.to_string()));
                    } else if let Some(var) = key.strip_prefix("env.").filter(|v| !v.is_empty()) {
                        self.env.insert(var.to_string(), value.to_string());
                    } else if key.contains(char::is_whitespace) {
                        return Err(SpecError::LooseWord(word.to_string()));
                    } else {
                        return Err(SpecError::UnknownKey(key.to_string()));
                    }
                }
            }
        }
        Ok(())
    }

    /// Merges `each` (the `--each` spec) under this one: this spec's keys win, and `each`'s
    /// arguments follow the engine's own.
    pub fn with_defaults(&self, each: &EngineSpec) -> EngineSpec {
        let mut out = self.clone();
        out.name = self.name.clone().or_else(|| each.name.clone());
        out.dir = self.dir.clone().or_else(|| each.dir.clone());
        out.tc = self.tc.or(each.tc);
        out.protocol = self.protocol.or(each.protocol);
        out.network = self.network.or(each.network);
        out.limit = LimitSpec {
            memory: self
                .limit
                .memory
                .clone()
                .or_else(|| each.limit.memory.clone()),
            processes: self.limit.processes.or(each.limit.processes),
            cpu: self.limit.cpu.clone().or_else(|| each.limit.cpu.clone()),
        };
        out.args.extend(each.args.iter().cloned());
        out.write.extend(each.write.iter().cloned());
        for (k, v) in &each.env {
            out.env.entry(k.clone()).or_insert_with(|| v.clone());
        }
        for (k, v) in &each.options {
            out.options.entry(k.clone()).or_insert_with(|| v.clone());
        }
        out
    }

    /// The display name before any handshake: `name=`, the built-in's name, or the
    /// program's file name.
    pub fn default_name(&self) -> String {
        if let Some(n) = &self.name {
            return n.clone();
        }
        if let Some(b) = &self.builtin {
            return b.clone();
        }
        self.cmd
            .as_deref()
            .and_then(|p| p.file_stem())
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "engine".into())
    }

    /// Resolves the command to run: a built-in becomes `<this executable> engine NAME`, a
    /// program is looked up (in `PATH` when it has no `/`) and must be executable.
    pub fn resolve(&self) -> Result<ResolvedEngine, SpecError> {
        let name = self.default_name();
        // The name errors are about: none when it would be read off a command line put in
        // cmd= (`cmd=node ne/engine.js` would be "engine engine").
        let shown = (self.name.is_some()
            || self.builtin.is_some()
            || !self
                .cmd
                .as_ref()
                .is_some_and(|c| c.to_string_lossy().contains(char::is_whitespace)))
        .then(|| name.clone());
        if let Err(e) = check_name(&name) {
            return Err(SpecError::BadName {
                name: fit_width(&clean_text(&name), 80).into_owned(),
                reason: e.to_string(),
            });
        }
        if let Some(dir) = &self.dir
            && !dir.is_dir()
        {
            return Err(SpecError::Dir {
                name: shown,
                dir: dir.clone(),
            });
        }
        let mut write = Vec::with_capacity(self.write.len());
        for dir in &self.write {
            let refuse = |reason: &str| SpecError::WriteDir {
                name: shown.clone(),
                dir: dir.clone(),
                reason: reason.to_string(),
            };
            let real = std::fs::canonicalize(dir).map_err(|_| refuse("does not exist"))?;
            if !real.is_dir() {
                return Err(refuse("is not a folder"));
            }
            write.push(real);
        }
        let (program, mut args) = match (&self.cmd, &self.builtin) {
            (Some(c), Some(b)) => return Err(SpecError::BothCommands(c.clone(), b.clone())),
            (None, None) => return Err(SpecError::NoCommand),
            (None, Some(b)) if !crate::engines::BUILTIN_NAMES.contains(&b.as_str()) => {
                return Err(SpecError::UnknownBuiltin(b.clone()));
            }
            (None, Some(b)) => {
                let exe =
                    std::env::current_exe().map_err(|e| SpecError::CurrentExe(e.to_string()))?;
                (exe, vec!["engine".to_string(), b.clone()])
            }
            (Some(c), None) => {
                let program =
                    find_program(c, self.dir.as_deref()).map_err(|reason| SpecError::Program {
                        name: shown.clone(),
                        program: c.clone(),
                        reason,
                    })?;
                (program, Vec::new())
            }
        };
        args.extend(self.args.iter().cloned());
        let protocol = self.protocol.unwrap_or_default();
        if protocol == EngineProtocol::Kgp {
            let refuse = |key: String, value: String, reason: &str| SpecError::BadValue {
                key,
                value,
                reason: reason.to_string(),
            };
            if let Some(b) = &self.builtin {
                return Err(refuse(
                    "protocol".into(),
                    "kgp".into(),
                    &format!(
                        "the built-in engine {b:?} speaks the kalaha protocol; give a KGP agent with cmd="
                    ),
                ));
            }
            if self.network == Some(false) {
                return Err(refuse(
                    "network".into(),
                    "false".into(),
                    "a KGP agent connects to kalaha's port on 127.0.0.1: it keeps the machine's network",
                ));
            }
            if let Some((k, v)) = self.options.iter().next() {
                return Err(refuse(
                    format!("option.{k}"),
                    v.text(),
                    "a KGP agent takes no options (KGP has none): give them in its arguments or environment",
                ));
            }
        }
        Ok(ResolvedEngine {
            command: EngineCommand {
                program,
                args,
                dir: self.dir.clone(),
                env: self.env.clone().into_iter().collect(),
            },
            options: self
                .options
                .iter()
                .map(|(k, v)| (k.clone(), v.text()))
                .collect(),
            tc: self.tc,
            limits: self.limit.resolve()?,
            write,
            network: self.network.unwrap_or(false) || protocol == EngineProtocol::Kgp,
            protocol,
        })
    }
}

/// The keys of an engine spec that take no suffix.
const PLAIN_KEYS: [&str; 14] = [
    "cmd",
    "builtin",
    "name",
    "arg",
    "dir",
    "write",
    "network",
    "tc",
    "move_time",
    "clock",
    "protocol",
    "limit.memory",
    "limit.cpu",
    "limit.processes",
];

/// `word` with each comma that comes before a `KEY=` of an engine spec made a space:
/// `builtin=hard,name=x` is `builtin=hard name=x`. A word without one comes back as it is.
fn uncomma(word: &str) -> String {
    let mut out = String::with_capacity(word.len());
    for (i, c) in word.char_indices() {
        let before_key = c == ',' && i > 0 && starts_with_key(word[i + 1..].trim_start());
        out.push(if before_key { ' ' } else { c });
    }
    out
}

/// Whether `text` starts with `KEY=` for a key of an engine spec.
fn starts_with_key(text: &str) -> bool {
    let Some((key, _)) = text.split_once('=') else {
        return false;
    };
    PLAIN_KEYS.contains(&key)
        || ["option.", "env."].iter().any(|p| {
            key.strip_prefix(p)
                .is_some_and(|k| !k.is_empty() && !k.contains(char::is_whitespace))
        })
}

/// The words of an engine spec with each word that holds several `KEY=VALUE` pieces split
/// into them: a word is cut at a run of spaces followed by `KEY=` for a key of the spec, so
/// `"cmd=./x arg=--fast name=x"` reads as three words, while `"arg=a b"` (a value with a
/// space) stays one. A value that itself holds a space followed by `KEY=` can be written
/// in a configuration file (`args = ["..."]`).
pub fn split_words<S: AsRef<str>>(words: &[S]) -> Vec<&str> {
    let mut out = Vec::with_capacity(words.len());
    for word in words.iter().map(|w| w.as_ref()) {
        if !starts_with_key(word) {
            out.push(word);
            continue;
        }
        let mut start = 0;
        let mut cut = None;
        for (i, c) in word.char_indices() {
            if c.is_whitespace() {
                cut.get_or_insert(i);
            } else if let Some(end) = cut.take()
                && starts_with_key(&word[i..])
            {
                out.push(&word[start..end]);
                start = i;
            }
        }
        out.push(word[start..].trim_end());
    }
    out
}

/// The definition a run uses of an engine: what to start and how (its name is in its
/// [`Identity`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ResolvedEngine {
    pub command: EngineCommand,
    /// Options as text, converted to the declared type after the handshake.
    pub options: Vec<(String, String)>,
    pub tc: Option<TimeControl>,
    pub limits: ResourceLimits,
    /// The folders of `write=`, with their links resolved.
    pub write: Vec<PathBuf>,
    /// The engine keeps the machine's network (`network=true`, and every KGP agent).
    pub network: bool,
    pub protocol: EngineProtocol,
}

/// Who an engine is in the results. Until the start-up checks it is the name given
/// ([`EngineSpec::default_name`]) and nothing else; the checks replace it with what the
/// handshake settled: the final name (see [`dedupe_names`]), and the version and author
/// the engine gave, made safe to show.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Identity {
    pub name: String,
    pub version: Option<String>,
    pub author: Option<String>,
}

impl Identity {
    /// An engine known by its name only (before its handshake).
    pub fn named(name: impl Into<String>) -> Identity {
        Identity {
            name: name.into(),
            ..Identity::default()
        }
    }
}

/// How an engine got its name, strongest first: a name the user chose wins over a built-in
/// engine's own name, which wins over a name the engine gave itself in `hello`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum NameSource {
    /// `name=` of the engine spec.
    User,
    /// The built-in's name, or the program's file name.
    Given,
    /// The engine's `hello`.
    Hello,
}

/// Gives every engine a distinct name. Stronger names are settled first, so a name an
/// engine gives itself can never take a name the user chose (or a built-in's): a repeated
/// name gets `-2`, `-3`, ... in that order; two engines the user named alike are an error.
pub fn dedupe_names(names: &mut [String], sources: &[NameSource]) -> Result<(), SpecError> {
    for i in 0..names.len() {
        for j in 0..i {
            if names[i] == names[j]
                && sources[i] == NameSource::User
                && sources[j] == NameSource::User
            {
                return Err(SpecError::DuplicateName(names[i].clone()));
            }
        }
    }
    let mut order: Vec<usize> = (0..names.len()).collect();
    order.sort_by_key(|&i| (sources[i], i));
    let mut taken: Vec<String> = Vec::with_capacity(names.len());
    for i in order {
        if taken.contains(&names[i]) {
            // The base is cut so that the new name is still a valid one.
            let with = |k: usize| {
                let suffix = format!("-{k}");
                let keep = crate::record::MAX_NAME_CHARS.saturating_sub(suffix.chars().count());
                let base: String = names[i].chars().take(keep).collect();
                format!("{}{suffix}", base.trim_end())
            };
            let mut k = 2;
            while taken.contains(&with(k)) || names.contains(&with(k)) {
                k += 1;
            }
            names[i] = with(k);
        }
        taken.push(names[i].clone());
    }
    Ok(())
}

#[cfg(test)]
mod tests;
