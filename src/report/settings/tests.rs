use super::*;

const TOURNAMENT: &str = r#"
id = "fa6d0001f0c7"
schedule = "round_robin"
games = 4
tc = "100ms"
time_margin = "50ms"
opening_plies = 4
seed = 0
shard = "2/4"
restart = "on_fault"
adjudicate = "off"
startup_timeout = "10s"
line_limit = 1048576
future_key = "kept"

[rules]
pits = 6
seeds = 4
empty_capture = false
sweep = "owner"

[[engine]]
name = "greedy"
builtin = "greedy"
version = "2.1"
author = "Ada"
command = "/home/someone/kalaha engine greedy"

[[engine]]
name = "random"
builtin = "random"
tc = "20ms"
command = "/home/someone/kalaha engine random"

[[engine]]
name = "mine"
cmd = "/usr/bin/python3"
args = ["/home/someone/bots/mine.py", "--depth", "3", "--quiet"]
dir = "/home/someone/bots"
options = { depth = 3 }
"#;

fn value<'a>(s: &'a SettingsSection, label: &str) -> &'a str {
    s.groups
        .iter()
        .flat_map(|g| &g.entries)
        .find(|(k, _)| k == label)
        .map(|(_, v)| v.as_str())
        .unwrap_or_else(|| panic!("no {label:?} in {s:#?}"))
}

#[test]
fn groups_labels_and_time_odds() {
    let s = settings_from_files(TOURNAMENT, None, None);
    assert_eq!(s.heading(), "Tournament fa6d0001f0c7");
    let names: Vec<&str> = s.groups.iter().map(|g| g.name).collect();
    assert_eq!(
        names,
        [
            "Run",
            "Rules",
            "Time",
            "Openings",
            "Engine handling",
            "Other"
        ]
    );
    assert!(value(&s, "Schedule").starts_with("round robin"));
    assert!(value(&s, "Games per pairing").starts_with("4 (2 openings"));
    assert_eq!(value(&s, "Board"), "6 pits a side, 4 seeds a pit");
    // Odds: the default time control is not shown as everyone's.
    assert!(value(&s, "Time control").contains("time odds"));
    assert_eq!(s.engines[0].time_control.as_deref(), Some("100ms per move"));
    assert_eq!(s.engines[1].time_control.as_deref(), Some("20ms per move"));
    assert_eq!(value(&s, "Longest line an engine may send"), "1 MiB");
    assert_eq!(value(&s, "future_key"), "kept");
    assert_eq!(s.shards, ["2/4"]);
    let greedy = &s.engines[0];
    assert_eq!(greedy.version.as_deref(), Some("2.1"));
    assert_eq!(greedy.author.as_deref(), Some("Ada"));
    assert_eq!(greedy.program.as_deref(), Some("built-in greedy"));
    assert_eq!(
        s.engines[2].program.as_deref(),
        Some("python3 mine.py --depth 3 …")
    );
    assert_eq!(s.engines[2].options, ["depth=3"]);
    // No local path anywhere, no raw snake_case key of a known setting.
    let all = format!("{s:?}");
    assert!(!all.contains("/home/someone"), "{all}");
    assert!(
        !all.contains("time_margin") && !all.contains("\"tc\""),
        "{all}"
    );
}

#[test]
fn one_time_control_for_all_is_shown_once() {
    let text = TOURNAMENT.replace("tc = \"20ms\"\n", "");
    let s = settings_from_files(&text, None, None);
    assert_eq!(value(&s, "Time control"), "100ms per move");
    assert!(!s.has_time_odds());
    let clock = text.replace("tc = \"100ms\"", "tc = \"10s+100ms\"");
    let s = settings_from_files(&clock, None, None);
    assert_eq!(value(&s, "Time control"), "10s a game + 100ms a move");
    // Every engine with the same time control of its own: no odds either.
    let own = text.replace("builtin = \"", "tc = \"20ms\"\nbuiltin = \"");
    let own = own.replace("cmd = ", "tc = \"20ms\"\ncmd = ");
    let s = settings_from_files(&own, None, None);
    assert_eq!(value(&s, "Time control"), "20ms per move");
    assert!(!s.has_time_odds());
}

#[test]
fn an_sprt_shows_its_test_not_a_schedule() {
    let text = TOURNAMENT.replace("games = 4", "games = 200000");
    let sprt = "elo0 = 0.0\nelo1 = 5.0\nalpha = 0.05\nbeta = 0.05\nmodel = \"normalized\"\n";
    let result = "verdict = \"H1 accepted: greedy is stronger than random\"\nexit_code = 0\n";
    let s = settings_from_files(&text, Some(sprt), Some(result));
    assert_eq!(s.kind, RunKind::Sprt);
    assert_eq!(s.heading(), "SPRT fa6d0001f0c7");
    let all = format!("{s:?}");
    assert!(!all.contains("round robin") && !all.contains("Games per pairing"));
    assert_eq!(value(&s, "Game limit"), "at most 200000");
    assert!(value(&s, "Verdict").starts_with("H1 accepted"));
    assert_eq!(
        value(&s, "Hypotheses"),
        "H0: normalized Elo difference 0; H1: 5"
    );
    assert!(value(&s, "Test").contains("greedy stronger than random"));
    let running = settings_from_files(&text, Some(sprt), None);
    assert!(value(&running, "Verdict").starts_with("none yet"));
}

#[test]
fn shards_of_one_run_merge_and_bad_files_say_so() {
    let mut list = Vec::new();
    for k in [3, 1, 2] {
        let text = TOURNAMENT.replace("shard = \"2/4\"", &format!("shard = \"{k}/4\""));
        merge_settings(&mut list, settings_from_files(&text, None, None));
    }
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].shards, ["1/4", "2/4", "3/4"]);
    let other = TOURNAMENT.replace("fa6d0001f0c7", "other");
    merge_settings(&mut list, settings_from_files(&other, None, None));
    assert_eq!(list.len(), 2);
    let shown = list[0].display_groups();
    assert!(
        shown[0]
            .entries
            .iter()
            .any(|(k, v)| k == "Shards read" && v == "1/4, 2/4, 3/4")
    );
    let bad = settings_from_files("this is = = not toml", None, None);
    assert!(bad.groups[0].entries[0].1.starts_with("unreadable"));
    let titled = settings_from_files(&format!("title = \"Spring cup\"\n{TOURNAMENT}"), None, None);
    assert_eq!(titled.heading(), "Spring cup");
}

/// Every plain setting the table of settings shows appears under its label, in its
/// group, when `tournament.toml` holds it: the labels come from the one declaration.
#[test]
fn every_shown_setting_has_its_declared_label_and_group() {
    use crate::tournament::config::settings::{Group, SETTINGS};
    let shown: Vec<_> = SETTINGS.iter().filter(|s| s.show.is_some()).collect();
    assert!(shown.len() >= 8, "{}", shown.len());
    let text: String = shown.iter().map(|s| format!("{} = 7\n", s.key)).collect();
    let section = settings_from_files(&text, None, None);
    for s in shown {
        let (group, label) = s.show.unwrap();
        let name = match group {
            Group::Run => "Run",
            Group::Rules => "Rules",
            Group::Time => "Time",
            Group::Handling => "Engine handling",
        };
        let g = section
            .groups
            .iter()
            .find(|g| g.name == name)
            .unwrap_or_else(|| panic!("no group {name} for {}", s.key));
        assert!(
            g.entries.iter().any(|(l, v)| l == label && v.contains('7')),
            "{} is not shown as {label:?} in {name}: {:?}",
            s.key,
            g.entries
        );
    }
    // Nothing the table shows is left to the "Other" group.
    assert!(
        section.groups.iter().all(|g| g.name != "Other"),
        "{:?}",
        section.groups
    );
}

/// Several runs on one leaderboard: what they share is shown once, each run keeps only
/// what is its own (its id, the settings that differ).
#[test]
fn several_runs_show_what_they_share_once() {
    let a = settings_from_files(TOURNAMENT, None, None);
    let b = settings_from_files(
        &TOURNAMENT
            .replace("fa6d0001f0c7", "other")
            .replace("seed = 0", "seed = 9"),
        None,
        None,
    );
    let (shared, own) = shared_and_own(&[a.clone(), b]);
    let has = |groups: &[SettingsGroup], label: &str| {
        groups
            .iter()
            .flat_map(|g| &g.entries)
            .filter(|(k, _)| k == label)
            .count()
    };
    // Shared once: the board, the time control, the restarts.
    for label in ["Board", "Time control", "Engine restarts"] {
        assert_eq!(has(&shared, label), 1, "{label}: {shared:?}");
        assert!(own.iter().all(|o| has(o, label) == 0), "{label}: {own:?}");
    }
    // Each run's own: its id and its seed.
    assert_eq!(has(&shared, "Seed"), 0);
    for o in &own {
        assert_eq!(has(o, "Seed"), 1, "{o:?}");
        assert_eq!(has(o, "Tournament id"), 1, "{o:?}");
    }
    // One run keeps everything as its own.
    let (shared, own) = shared_and_own(std::slice::from_ref(&a));
    assert!(shared.is_empty());
    assert_eq!(own[0], a.display_groups());
}
