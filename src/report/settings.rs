//! What a leaderboard says about the runs behind its games, read tolerantly from each
//! results folder: `tournament.toml` (the resolved configuration), and in the folder of an
//! SPRT also `sprt.toml` (the test) and `sprt-result.toml` (its verdict).
//!
//! Settings are shown grouped, under labels people read (`Time control`, not `tc`), with
//! values in words where a bare value would need the documentation (`100ms per move`). An
//! engine's `version` and `author` are shown when its `[[engine]]` table has them (the runner
//! writes what the engine's `hello` said). Keys this version does not know are kept under
//! "Other" rather than dropped; local paths (commands, working folders) are never shown.

use crate::record::TimeControl;
use crate::tournament::config::settings::{Group, SETTINGS, label};
use std::path::Path;

pub(crate) use crate::results::RunKind;

/// Labelled settings of one topic (rules, time...).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct SettingsGroup {
    pub name: &'static str,
    pub entries: Vec<(String, String)>,
}

/// One engine as the configuration (and its `hello`) describe it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct EngineInfo {
    pub name: String,
    pub version: Option<String>,
    pub author: Option<String>,
    /// `built-in hard`, or the program's file name (never its folder).
    pub program: Option<String>,
    /// Its time control in words, set only when the engines' time controls differ (odds).
    pub time_control: Option<String>,
    /// Protocol options and resource limits, `key=value`.
    pub options: Vec<String>,
}

/// The settings of one run (all the shards of one tournament are one run).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct SettingsSection {
    pub id: Option<String>,
    /// A title given to the run (`title` in `tournament.toml`).
    pub title: Option<String>,
    pub kind: RunKind,
    /// The shards (`K/N`) whose games were read, if the run was sharded.
    pub shards: Vec<String>,
    pub groups: Vec<SettingsGroup>,
    pub engines: Vec<EngineInfo>,
}

impl SettingsSection {
    /// The section's heading: the run's title, else its kind and id.
    pub(crate) fn heading(&self) -> String {
        if let Some(t) = &self.title {
            return t.clone();
        }
        let kind = self.kind.title();
        match &self.id {
            Some(id) => format!("{kind} {id}"),
            None => kind.to_string(),
        }
    }

    /// The groups to show: [`Self::groups`] with the run's id first and the shards read
    /// last in the first group.
    pub(crate) fn display_groups(&self) -> Vec<SettingsGroup> {
        let mut groups = self.groups.clone();
        if let Some(first) = groups.first_mut() {
            if let Some(id) = &self.id {
                let label = format!("{} id", self.kind.title());
                first.entries.insert(0, (label, id.clone()));
            }
            if !self.shards.is_empty() {
                first
                    .entries
                    .push(("Shards read".to_string(), self.shards.join(", ")));
            }
        }
        groups
    }

    /// Whether the engines play with different time controls (time odds).
    pub(crate) fn has_time_odds(&self) -> bool {
        self.engines.iter().any(|e| e.time_control.is_some())
    }
}

/// Adds `section` to `list`, merging it into a section of the same run (the shards of one
/// tournament differ only in their shard).
pub(crate) fn merge_settings(list: &mut Vec<SettingsSection>, mut section: SettingsSection) {
    let same = |s: &SettingsSection| {
        s.id == section.id
            && s.kind == section.kind
            && s.groups == section.groups
            && s.engines == section.engines
    };
    match list.iter_mut().find(|s| same(s)) {
        Some(existing) => {
            for shard in section.shards.drain(..) {
                if !existing.shards.contains(&shard) {
                    existing.shards.push(shard);
                }
            }
            existing.shards.sort_by_key(|s| shard_order(s));
        }
        None => list.push(section),
    }
}

fn shard_order(shard: &str) -> (u64, String) {
    let k = shard.split('/').next().and_then(|k| k.parse().ok());
    (k.unwrap_or(u64::MAX), shard.to_string())
}

/// The settings of several runs as a leaderboard shows them: the entries every run shares,
/// once, and each run's own (its id, the settings that differ, its engines). One run keeps
/// all its entries as its own.
pub(crate) fn shared_and_own(
    sections: &[SettingsSection],
) -> (Vec<SettingsGroup>, Vec<Vec<SettingsGroup>>) {
    let all: Vec<Vec<SettingsGroup>> = sections.iter().map(|s| s.display_groups()).collect();
    if all.len() < 2 {
        return (Vec::new(), all);
    }
    let in_every = |name: &str, entry: &(String, String)| {
        all.iter().all(|groups| {
            groups
                .iter()
                .any(|g| g.name == name && g.entries.contains(entry))
        })
    };
    let mut shared: Vec<SettingsGroup> = Vec::new();
    for g in &all[0] {
        let entries: Vec<_> = g
            .entries
            .iter()
            .filter(|e| in_every(g.name, e))
            .cloned()
            .collect();
        if !entries.is_empty() {
            shared.push(SettingsGroup {
                name: g.name,
                entries,
            });
        }
    }
    let own = all
        .into_iter()
        .map(|groups| {
            groups
                .into_iter()
                .map(|g| SettingsGroup {
                    entries: g
                        .entries
                        .into_iter()
                        .filter(|e| {
                            !shared
                                .iter()
                                .any(|s| s.name == g.name && s.entries.contains(e))
                        })
                        .collect(),
                    name: g.name,
                })
                .filter(|g| !g.entries.is_empty())
                .collect()
        })
        .collect();
    (shared, own)
}

/// Reads the settings of the results folder `dir`; `None` without a `tournament.toml`.
/// A file that cannot be parsed gives a section that says so: a leaderboard is still worth
/// writing.
pub(crate) fn read_settings(dir: &Path) -> Option<SettingsSection> {
    let files = crate::results::Files::of(dir);
    let read = |path: std::path::PathBuf| {
        crate::input::read_text_limited(&path, crate::input::CONFIG_LIMIT).ok()
    };
    let text = read(files.tournament_toml())?;
    let sprt = read(files.sprt_toml());
    let result = read(files.sprt_result_toml());
    Some(settings_from_files(
        &text,
        sprt.as_deref(),
        result.as_deref(),
    ))
}

/// The settings described by the text of `tournament.toml`, and of `sprt.toml` and
/// `sprt-result.toml` when the run was an SPRT.
pub(crate) fn settings_from_files(
    tournament: &str,
    sprt: Option<&str>,
    sprt_result: Option<&str>,
) -> SettingsSection {
    let mut table = match tournament.parse::<toml::Table>() {
        Ok(t) => t,
        Err(e) => {
            return SettingsSection {
                groups: vec![SettingsGroup {
                    name: "Other",
                    entries: vec![(
                        crate::results::Files::tournament_toml_name().to_string(),
                        format!("unreadable: {}", e.message()),
                    )],
                }],
                ..SettingsSection::default()
            };
        }
    };
    let mut take = |key: &str| table.remove(key);
    // What `tournament.toml` says; a folder written before it said so is an SPRT when
    // it holds `sprt.toml`.
    let kind = match take("run").and_then(|v| v.try_into::<RunKind>().ok()) {
        Some(kind) => kind,
        None if sprt.is_some() => RunKind::Sprt,
        None => RunKind::Tournament,
    };
    let id = take("id").map(|v| text(&v));
    let title = take("title").map(|v| text(&v));
    let shards: Vec<String> = take("shard").map(|v| text(&v)).into_iter().collect();
    let default_tc = take("tc").map(|v| text(&v));
    let mut engines = engines(take("engine"), default_tc.as_deref());
    let mut groups = Vec::new();
    let run = match (kind, sprt) {
        (RunKind::Sprt, Some(sprt)) => sprt_group(sprt, sprt_result, &engines, &mut take),
        _ => tournament_group(&mut take),
    };
    groups.push(run);
    groups.push(rules_group(take("rules")));
    groups.push(time_group(default_tc.as_deref(), &mut engines, &mut take));
    groups.push(openings_group(&mut take));
    groups.push(handling_group(&mut take));
    let mut other = SettingsGroup {
        name: "Other",
        entries: Vec::new(),
    };
    for (k, v) in &table {
        other.entries.push((k.clone(), text(v)));
    }
    groups.push(other);
    groups.retain(|g| !g.entries.is_empty());
    SettingsSection {
        id,
        title,
        kind,
        shards,
        groups,
        engines,
    }
}

type Take<'a> = dyn FnMut(&str) -> Option<toml::Value> + 'a;

/// A value as text: strings without quotes, arrays joined, tables as `key=value` pairs.
fn text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        toml::Value::Float(x) if x.fract() == 0.0 && x.abs() < 1e15 => format!("{x:.0}"),
        toml::Value::Array(items) => items.iter().map(text).collect::<Vec<_>>().join(", "),
        toml::Value::Table(t) => t
            .iter()
            .map(|(k, v)| format!("{k}={}", text(v)))
            .collect::<Vec<_>>()
            .join(", "),
        other => other.to_string(),
    }
}

fn entry(label: &str, value: impl Into<String>) -> (String, String) {
    (label.to_string(), value.into())
}

fn tournament_group(take: &mut Take<'_>) -> SettingsGroup {
    let mut entries = Vec::new();
    if let Some(s) = take("schedule") {
        let s = text(&s);
        let words = match s.as_str() {
            "round_robin" => "round robin: every engine against every other".to_string(),
            "gauntlet" => "gauntlet: the first engine against each of the others".to_string(),
            other => other.to_string(),
        };
        entries.push(entry("Schedule", words));
    }
    entries.extend(declared(Group::Run, take));
    SettingsGroup {
        name: "Run",
        entries,
    }
}

/// A number of `sprt-result.toml` as the verdict writes it: `+98.1`.
fn signed(v: &toml::Value) -> String {
    v.as_float()
        .map_or_else(|| text(v), crate::stats::sprt::fmt_signed)
}

/// The test of an SPRT folder: its hypotheses, error rates, limit and verdict (the
/// schedule and game count of its `tournament.toml` are only the limit it ran under).
fn sprt_group(
    sprt: &str,
    result: Option<&str>,
    engines: &[EngineInfo],
    take: &mut Take<'_>,
) -> SettingsGroup {
    let _ = take("schedule");
    let limit = take("games");
    let sprt = sprt.parse::<toml::Table>().unwrap_or_default();
    let num = |k: &str| sprt.get(k).map(text).unwrap_or_else(|| "?".into());
    let mut entries = Vec::new();
    if let [new, base, ..] = engines {
        entries.push(entry(
            "Test",
            format!("is {} stronger than {}?", new.name, base.name),
        ));
    }
    let model = sprt.get("model").map(text).unwrap_or_else(|| "?".into());
    entries.push(entry(
        "Hypotheses",
        format!(
            "H0: {model} Elo difference {}; H1: {}",
            num("elo0"),
            num("elo1")
        ),
    ));
    entries.push(entry(
        "Error rates",
        format!(
            "α = {} (accepting H1 wrongly), β = {} (accepting H0 wrongly)",
            num("alpha"),
            num("beta")
        ),
    ));
    if let Some(limit) = sprt.get("max_games").or(limit.as_ref()) {
        entries.push(entry("Game limit", format!("at most {}", text(limit))));
    }
    match result.and_then(|r| r.parse::<toml::Table>().ok()) {
        Some(r) => {
            if let Some(v) = r.get("verdict") {
                entries.push(entry("Verdict", text(v)));
            }
            if let (Some(e), Some(lo), Some(hi)) = (
                r.get("median_unbiased_elo"),
                r.get("median_unbiased_elo_lower"),
                r.get("median_unbiased_elo_upper"),
            ) {
                let model = r
                    .get("median_unbiased_model")
                    .map_or("logistic".to_string(), text);
                entries.push(entry(
                    "Median-unbiased Elo",
                    format!(
                        "{} {model} Elo (95% interval {} to {}): the naive Elo of a stopped \
                         test is biased, as it stops early on lucky and unlucky runs",
                        match (e.as_float(), lo.as_float(), hi.as_float()) {
                            (Some(e), Some(lo), Some(hi)) =>
                                crate::stats::sprt::estimate_words(e, lo, hi),
                            _ => text(e),
                        },
                        signed(lo),
                        signed(hi)
                    ),
                ));
            }
        }
        None => entries.push(entry("Verdict", "none yet (the test was still running)")),
    }
    if let Some(seed) = take("seed") {
        entries.push(entry(label("seed"), value_words("seed", &seed)));
    }
    SettingsGroup {
        name: "Test",
        entries,
    }
}

fn rules_group(rules: Option<toml::Value>) -> SettingsGroup {
    let mut entries = Vec::new();
    let Some(toml::Value::Table(mut r)) = rules else {
        if let Some(v) = rules {
            entries.push(entry("Rules", text(&v)));
        }
        return SettingsGroup {
            name: "Rules",
            entries,
        };
    };
    match (r.remove("pits"), r.remove("seeds")) {
        (Some(p), Some(s)) => entries.push(entry(
            "Board",
            format!("{} pits a side, {} seeds a pit", text(&p), text(&s)),
        )),
        (p, s) => {
            entries.extend(p.map(|p| entry(label("rules.pits"), text(&p))));
            entries.extend(s.map(|s| entry(label("rules.seeds"), text(&s))));
        }
    }
    if let Some(v) = r.remove("empty_capture") {
        let words = match v.as_bool() {
            Some(true) => "yes: a last seed in an empty pit is captured alone when the \
                           opposite pit is empty"
                .to_string(),
            Some(false) => "no: a last seed in an empty pit captures only when the \
                            opposite pit holds seeds"
                .to_string(),
            None => text(&v),
        };
        entries.push(entry(label("rules.empty_capture"), words));
    }
    if let Some(v) = r.remove("sweep") {
        let t = text(&v);
        let words = match t.as_str() {
            "owner" => "to each player's own store".to_string(),
            "empty_side" => "to the player whose pits ran empty".to_string(),
            "none" => "to no one".to_string(),
            _ => t,
        };
        entries.push(entry(label("rules.sweep"), words));
    }
    for (k, v) in &r {
        entries.push((k.clone(), text(v)));
    }
    SettingsGroup {
        name: "Rules",
        entries,
    }
}

/// A time control in words: `100ms per move`, `10s a game + 100ms a move`.
pub(crate) fn time_control_words(tc: &str) -> String {
    match tc.parse::<TimeControl>() {
        Ok(TimeControl::MoveTime(_)) => format!("{tc} per move"),
        Ok(TimeControl::Clock { .. }) => match tc.split_once('+') {
            Some((base, inc)) => format!("{base} a game + {inc} a move"),
            None => format!("{tc} a game"),
        },
        Err(_) => tc.to_string(),
    }
}

/// The time group; `engines` keep their own time control only when they differ (odds).
fn time_group(
    default_tc: Option<&str>,
    engines: &mut [EngineInfo],
    take: &mut Take<'_>,
) -> SettingsGroup {
    let mut entries = Vec::new();
    let first = engines.first().and_then(|e| e.time_control.clone());
    if first.is_some() && engines.iter().all(|e| e.time_control == first) {
        // Every engine has the same time control of its own: no odds.
        for e in engines.iter_mut() {
            e.time_control = None;
        }
        entries.extend(first.map(|tc| entry("Time control", tc)));
    } else if engines.iter().any(|e| e.time_control.is_some()) {
        if let Some(tc) = default_tc {
            let tc = time_control_words(tc);
            for e in engines.iter_mut().filter(|e| e.time_control.is_none()) {
                e.time_control = Some(tc.clone());
            }
        }
        entries.push(entry(
            "Time control",
            "each engine its own (time odds): see Engines",
        ));
    } else if let Some(tc) = default_tc {
        entries.push(entry("Time control", time_control_words(tc)));
    }
    entries.extend(declared(Group::Time, take));
    SettingsGroup {
        name: "Time",
        entries,
    }
}

fn openings_group(take: &mut Take<'_>) -> SettingsGroup {
    let mut entries = Vec::new();
    let plies = take("opening_plies");
    let list = take("opening_list");
    let file = take("openings");
    match (&list, &file) {
        (Some(toml::Value::Array(items)), _) => entries.push(entry(
            "Openings",
            format!("{} from a list, each played by both sides", items.len()),
        )),
        (_, Some(f)) => {
            let t = text(f);
            let name = Path::new(&t)
                .file_name()
                .map_or(t.clone(), |n| n.to_string_lossy().into_owned());
            entries.push(entry("Openings", format!("from the file {name}")));
        }
        _ => match plies.as_ref().and_then(toml::Value::as_integer) {
            Some(0) => entries.push(entry("Openings", "the start position")),
            Some(n) => entries.push(entry(
                "Openings",
                format!("{n} random sowings from the start, each opening played by both sides"),
            )),
            None => entries.extend(plies.map(|p| entry("Opening sowings", text(&p)))),
        },
    }
    SettingsGroup {
        name: "Openings",
        entries,
    }
}

fn handling_group(take: &mut Take<'_>) -> SettingsGroup {
    SettingsGroup {
        name: "Engine handling",
        entries: declared(Group::Handling, take),
    }
}

/// The entries of the plain settings the table of settings shows in `group`, in its
/// order, under its labels: those `tournament.toml` holds.
fn declared(group: Group, take: &mut Take<'_>) -> Vec<(String, String)> {
    SETTINGS
        .iter()
        .filter_map(|s| match s.show {
            Some((g, label)) if g == group => {
                take(s.key).map(|v| entry(label, value_words(s.key, &v)))
            }
            _ => None,
        })
        .collect()
}

/// A plain setting's value in words.
fn value_words(key: &str, v: &toml::Value) -> String {
    let t = text(v);
    match (key, v.as_integer()) {
        ("games", Some(n)) if n >= 2 && n % 2 == 0 => format!(
            "{n} ({}, each played twice with the seats swapped)",
            crate::record::counted(n as u64 / 2, "opening")
        ),
        ("restart", _) => match t.as_str() {
            "on_fault" => "after a fault only".to_string(),
            "always" => "before every game".to_string(),
            _ => t,
        },
        ("adjudicate", _) => match t.as_str() {
            "off" => "none: every game is played to its end".to_string(),
            "decided" => "a game ends once a store holds more than half of the seeds".to_string(),
            _ => t,
        },
        ("line_limit", Some(n)) if n >= 1 << 20 && n % (1 << 20) == 0 => {
            format!("{} MiB", n >> 20)
        }
        ("line_limit", Some(n)) if n >= 1 << 10 && n % (1 << 10) == 0 => {
            format!("{} KiB", n >> 10)
        }
        ("line_limit", Some(n)) => format!("{n} bytes"),
        _ => t,
    }
}

/// The `[[engine]]` tables.
fn engines(value: Option<toml::Value>, default_tc: Option<&str>) -> Vec<EngineInfo> {
    let Some(toml::Value::Array(items)) = value else {
        return Vec::new();
    };
    let string = |t: &toml::Table, k: &str| {
        t.get(k)
            .map(text)
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
    };
    items
        .iter()
        .filter_map(toml::Value::as_table)
        .enumerate()
        .map(|(i, t)| {
            let program = match (string(t, "builtin"), string(t, "cmd")) {
                (Some(b), _) => Some(format!("built-in {b}")),
                (None, Some(cmd)) => Some(program_words(&cmd, t.get("args"))),
                (None, None) => None,
            };
            let own_tc = string(t, "tc").filter(|tc| Some(tc.as_str()) != default_tc);
            let mut options: Vec<String> = Vec::new();
            for key in ["options", "limit"] {
                if let Some(toml::Value::Table(o)) = t.get(key) {
                    let prefix = if key == "limit" { "limit." } else { "" };
                    options.extend(o.iter().map(|(k, v)| format!("{prefix}{k}={}", text(v))));
                }
            }
            EngineInfo {
                name: string(t, "name").unwrap_or_else(|| format!("engine {}", i + 1)),
                version: string(t, "version"),
                author: string(t, "author"),
                program,
                time_control: own_tc.map(|tc| time_control_words(&tc)),
                options,
            }
        })
        .collect()
}

/// A program as the leaderboard names it: its file name and its first arguments, each path
/// by its file name only (`python3 mine.py`, never a folder of the machine that ran it).
fn program_words(cmd: &str, args: Option<&toml::Value>) -> String {
    const MAX_ARGS: usize = 3;
    let file_name = |p: &str| {
        Path::new(p)
            .file_name()
            .map_or_else(|| p.to_string(), |n| n.to_string_lossy().into_owned())
    };
    let mut words = vec![file_name(cmd)];
    let args: Vec<&str> = args
        .and_then(toml::Value::as_array)
        .map(|a| a.iter().filter_map(toml::Value::as_str).collect())
        .unwrap_or_default();
    words.extend(args.iter().take(MAX_ARGS).map(|a| {
        if a.contains('/') {
            file_name(a)
        } else {
            a.to_string()
        }
    }));
    if args.len() > MAX_ARGS {
        words.push("…".to_string());
    }
    crate::record::truncate(&words.join(" "), 80)
}

#[cfg(test)]
mod tests;
