//! The runs of one tournament id among the inputs. Shards of one run share every setting
//! that changes what is played (the configuration and the seed), so their game ids name
//! one schedule's games; folders of one id whose settings differ are different
//! tournaments under one id, warned of naming each setting that differs with its values.
//! Their games are still pooled (a game id both hold counts once: see [`super::ids`]).

use crate::report::SettingsSection;
use crate::report::settings::EngineInfo;
use crate::tournament::config::settings::setting;
use std::path::{Path, PathBuf};

/// The first folder read of a tournament id, with what it played.
struct Run {
    dir: PathBuf,
    id: String,
    kind: Option<String>,
    table: toml::Table,
    engines: Vec<String>,
}

/// The runs read so far, by tournament id, and the warnings about them.
#[derive(Default)]
pub(super) struct Runs {
    first: Vec<Run>,
    warnings: Vec<String>,
}

/// Keys of `tournament.toml` that are no setting of what is played, or compared apart.
const NOT_COMPARED: [&str; 6] = ["id", "title", "shard", "run", "engine", "rules"];

impl Runs {
    /// Reads the run in `dir` (its `tournament.toml`, and its engines as `section` says),
    /// and warns if an earlier folder of the same tournament id played other settings.
    pub(super) fn add(&mut self, dir: &Path, section: Option<&SettingsSection>) {
        let Some(table) = crate::input::read_text_limited(
            &crate::results::Files::of(dir).tournament_toml(),
            crate::input::CONFIG_LIMIT,
        )
        .ok()
        .and_then(|t| t.parse::<toml::Table>().ok()) else {
            return;
        };
        let Some(id) = table.get("id").and_then(|v| v.as_str()).map(str::to_string) else {
            return;
        };
        let run = Run {
            dir: dir.to_path_buf(),
            kind: table
                .get("run")
                .and_then(|v| v.as_str())
                .map(str::to_string),
            engines: section
                .map_or_else(Vec::new, |s| s.engines.iter().map(engine_words).collect()),
            id,
            table,
        };
        match self
            .first
            .iter()
            .find(|f| f.id == run.id && f.kind == run.kind)
        {
            Some(first) => {
                let differences = differences(first, &run);
                if !differences.is_empty() {
                    self.warnings.push(warning(first, &run, &differences));
                }
            }
            None => self.first.push(run),
        }
    }

    pub(super) fn warnings(&self) -> &[String] {
        &self.warnings
    }
}

/// An engine as the warning compares it: its name and what it is (never a local path).
fn engine_words(e: &EngineInfo) -> String {
    let mut words: Vec<String> = e.program.iter().cloned().collect();
    words.extend(e.version.as_ref().map(|v| format!("version {v}")));
    words.extend(e.time_control.clone());
    words.extend(e.options.iter().cloned());
    match words.is_empty() {
        true => e.name.clone(),
        false => format!("{} ({})", e.name, words.join(", ")),
    }
}

/// Each setting that differs between the runs `a` and `b`: its name (the flag that sets
/// it) and its value in each.
fn differences(a: &Run, b: &Run) -> Vec<(String, String, String)> {
    let mut v = Vec::new();
    let value = |t: &toml::Table, k: &str| t.get(k).map_or("unset".to_string(), show);
    let plain = |t: &toml::Table| -> Vec<String> {
        t.keys()
            .filter(|k| !NOT_COMPARED.contains(&k.as_str()))
            .cloned()
            .collect()
    };
    let mut keys = plain(&a.table);
    keys.extend(
        plain(&b.table)
            .into_iter()
            .filter(|k| !a.table.contains_key(k)),
    );
    for k in keys {
        let described = setting(&k);
        if described.is_some_and(|s| !s.plays) {
            continue;
        }
        let (x, y) = (value(&a.table, &k), value(&b.table, &k));
        if x != y {
            v.push((described.map_or(k, |s| s.flag.to_string()), x, y));
        }
    }
    let empty = toml::Table::new();
    let rules = |t: &toml::Table| -> toml::Table {
        t.get("rules")
            .and_then(|r| r.as_table())
            .unwrap_or(&empty)
            .clone()
    };
    let (ra, rb) = (rules(&a.table), rules(&b.table));
    let mut keys: Vec<&String> = ra.keys().collect();
    keys.extend(rb.keys().filter(|k| !ra.contains_key(*k)));
    for k in keys {
        let (x, y) = (value(&ra, k), value(&rb, k));
        if x != y {
            let name = setting(&format!("rules.{k}")).map_or(k.to_string(), |s| s.flag.to_string());
            v.push((name, x, y));
        }
    }
    if a.engines != b.engines {
        v.push((
            "the engines".to_string(),
            a.engines.join(", "),
            b.engines.join(", "),
        ));
    }
    v
}

/// A value of `tournament.toml` as the warning shows it.
fn show(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn warning(first: &Run, later: &Run, differences: &[(String, String, String)]) -> String {
    let (a, b) = (
        crate::record::shown_path(&first.dir),
        crate::record::shown_path(&later.dir),
    );
    let list: Vec<String> = differences
        .iter()
        .map(|(name, x, y)| {
            format!(
                "{name} {} in {b}, {} in {a}",
                crate::record::clean_text(y),
                crate::record::clean_text(x)
            )
        })
        .collect();
    format!(
        "{b} and {a} both hold games of tournament {} but with other settings ({}): they \
         are not shards of one run, but their games are rated together. Shards of one \
         tournament need the same configuration and seed; give a run with other settings an \
         id of its own (--id)",
        crate::record::clean_text(&first.id),
        list.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(dir: &str, toml: &str) -> Run {
        let table: toml::Table = toml.parse().unwrap();
        Run {
            dir: PathBuf::from(dir),
            id: table["id"].as_str().unwrap().to_string(),
            kind: None,
            engines: vec!["a".to_string(), "b".to_string()],
            table,
        }
    }

    #[test]
    fn only_settings_that_change_the_games_are_compared() {
        let a = run(
            "sh1",
            "id = \"wk\"\nseed = 3\ngames = 6\nconcurrency = 2\nshard = \"1/2\"\n[rules]\npits = 6\n",
        );
        let same = run(
            "sh2",
            "id = \"wk\"\nseed = 3\ngames = 6\nconcurrency = 8\nshard = \"2/2\"\n[rules]\npits = 6\n",
        );
        assert!(differences(&a, &same).is_empty());
        let other = run(
            "sh3",
            "id = \"wk\"\nseed = 4\ngames = 8\nconcurrency = 2\nshard = \"2/2\"\n[rules]\npits = 5\n",
        );
        let d = differences(&a, &other);
        let names: Vec<&str> = d.iter().map(|(n, _, _)| n.as_str()).collect();
        assert_eq!(names, ["--games", "--seed", "--pits"], "{d:?}");
        let w = warning(&a, &other, &d);
        assert!(
            w.starts_with("sh3 and sh1 both hold games of tournament wk but with other settings (--games 8 in sh3, 6 in sh1; --seed 4 in sh3, 3 in sh1; --pits 5 in sh3, 6 in sh1)"),
            "{w}"
        );
    }
}
