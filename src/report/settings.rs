//! The settings shown on a leaderboard, read tolerantly from a tournament's `tournament.toml`
//! (whatever keys it has: rules, time control, games, seed, date...).

use std::path::Path;

/// Key/value lines describing one tournament (or one source of games).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SettingsSection {
    /// What the settings describe (a folder name or a tournament id).
    pub label: String,
    pub entries: Vec<(String, String)>,
}

/// Reads `tournament.toml` next to a `games.csv`, if there is one. Unreadable files give a
/// section that says so rather than an error: a leaderboard is still worth writing.
pub fn read_tournament_toml(games_csv: &Path) -> Option<SettingsSection> {
    let dir = games_csv.parent()?;
    let path = dir.join("tournament.toml");
    let text = std::fs::read_to_string(&path).ok()?;
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let label = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| dir.display().to_string());
    Some(settings_from_toml(label, &text))
}

/// Flattens a TOML document into display lines: scalars as they are, tables as dotted keys
/// (two levels), arrays of scalars joined, arrays of tables as their `name`s.
pub fn settings_from_toml(label: String, text: &str) -> SettingsSection {
    let mut entries = Vec::new();
    match text.parse::<toml::Table>() {
        Ok(table) => flatten("", &table, 0, &mut entries),
        Err(e) => entries.push(("error".to_string(), format!("unreadable: {e}"))),
    }
    SettingsSection { label, entries }
}

fn flatten(prefix: &str, table: &toml::Table, depth: usize, out: &mut Vec<(String, String)>) {
    for (k, v) in table {
        let key = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        match v {
            toml::Value::Table(t) if depth < 2 => flatten(&key, t, depth + 1, out),
            v => out.push((key, display(v))),
        }
    }
}

fn display(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        toml::Value::Array(items) => items
            .iter()
            .map(|item| match item {
                toml::Value::Table(t) => match t.get("name") {
                    Some(toml::Value::String(s)) => s.clone(),
                    _ => "{…}".to_string(),
                },
                other => display(other),
            })
            .collect::<Vec<_>>()
            .join(", "),
        toml::Value::Table(_) => "{…}".to_string(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flattens_whatever_is_there() {
        let s = settings_from_toml(
            "t".into(),
            "id = \"abc\"\ngames = 10\n[rules]\npits = 6\nseeds = 4\n[[engines]]\nname = \"x\"\n[[engines]]\nname = \"y\"\n",
        );
        assert!(s.entries.contains(&("id".into(), "abc".into())));
        assert!(s.entries.contains(&("games".into(), "10".into())));
        assert!(s.entries.contains(&("rules.pits".into(), "6".into())));
        assert!(s.entries.contains(&("engines".into(), "x, y".into())));
        let bad = settings_from_toml("t".into(), "this is = = not toml");
        assert_eq!(bad.entries[0].0, "error");
    }
}
