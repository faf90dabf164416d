//! Tests of configuration files: defaults, validation, merging, paths and the saved file.

use super::*;

fn two_builtins() -> ConfigFile {
    ConfigFile {
        engines: vec![EngineSpec::builtin("first"), EngineSpec::builtin("random")],
        ..ConfigFile::default()
    }
}

#[test]
fn defaults_and_validation() {
    let c = two_builtins().resolve().unwrap();
    assert_eq!(c.schedule.pairs_per_pairing, 1);
    assert_eq!(c.margin, Duration::from_millis(50));
    assert_eq!(c.id.len(), 12);
    let mut f = two_builtins();
    f.games = Some(5);
    assert_eq!(f.resolve().unwrap().schedule.pairs_per_pairing, 3);
    f.engines.pop();
    assert!(f.resolve().unwrap_err().to_string().contains("two engines"));
    // No games at once is refused in a file as `-j 0` is on the command line.
    let mut f = two_builtins();
    f.concurrency = Some(0);
    let e = f.resolve().unwrap_err().to_string();
    assert!(e.contains("concurrency") && e.contains("at least 1"), "{e}");
    let mut f = two_builtins();
    f.shard = Some("3/2".into());
    assert!(f.resolve().is_err());
    let mut f = two_builtins();
    f.id = Some("bad id".into());
    assert!(f.resolve().is_err());
    f.id = Some("nightly-2026-01-02".into());
    assert_eq!(f.resolve().unwrap().game_id(3), "nightly-2026-01-02-3");
    let mut f = two_builtins();
    f.shard = Some("1/2".into());
    assert!(f.resolve().unwrap_err().to_string().contains("needs an id"));
    f.id = Some("x".into());
    assert!(f.resolve().is_ok());
    // An unreadable file is named once, its error not repeated as a source.
    f.openings = Some("/no/such/openings.txt".into());
    let e = f.resolve().unwrap_err();
    assert!(std::error::Error::source(&e).is_none());
    assert!(e.to_string().contains("No such file"), "{e}");
}

#[test]
fn the_saved_file_resolves_to_the_same_configuration() {
    let text = r#"
        games = 4
        tc = "10s+100ms"
        opening_plies = 3
        seed = 9
        [rules]
        pits = 5
        seeds = 3
        [each]
        options = { depth = 2 }
        [[engine]]
        builtin = "first"
        [[engine]]
        builtin = "hard"
        name = "h"
        tc = "200ms"
    "#;
    let f: ConfigFile = toml::from_str(text).unwrap();
    let c = f.resolve().unwrap();
    assert_eq!(c.rules().pits(), 5);
    assert_eq!(c.tc_of(0), "10s+100ms".parse().unwrap());
    assert_eq!(c.tc_of(1), "200ms".parse().unwrap());
    assert_eq!(
        c.engines[1].resolved.options,
        [("depth".into(), "2".into())]
    );
    let saved = toml::to_string(&c.to_file()).unwrap();
    let back: ConfigFile = toml::from_str(&saved).unwrap();
    let c2 = back.resolve().unwrap();
    assert_eq!(c2.id, c.id);
    assert_eq!(c2.names(), ["first", "h"]);
    let a: Vec<_> = c.schedule.games().collect();
    let b: Vec<_> = c2.schedule.games().collect();
    assert_eq!(a, b);
    assert!(saved.contains("command = "), "{saved}");
}

#[test]
fn engines_named_alike_are_refused() {
    let mut f = two_builtins();
    for e in &mut f.engines {
        e.name = Some("a".into());
    }
    let e = f.resolve().unwrap_err().to_string();
    assert!(e.contains("two engines are named \"a\""), "{e}");
    // Named alike by default only: numbered later, not refused.
    let f = ConfigFile {
        engines: vec![EngineSpec::builtin("first"), EngineSpec::builtin("first")],
        ..ConfigFile::default()
    };
    assert!(f.resolve().is_ok());
}

#[test]
fn a_file_engine_runs_in_the_file_folder_unless_it_says_otherwise() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.toml");
    let text = "[[engine]]\ncmd = \"sh\"\nargs = [\"e.sh\"]\n\
                [[engine]]\ncmd = \"sh\"\ndir = \"sub\"\n\
                [[engine]]\nbuiltin = \"first\"\n";
    std::fs::write(&path, text).unwrap();
    let f = ConfigFile::load(&path).unwrap();
    let folder = std::path::absolute(dir.path()).unwrap();
    assert_eq!(f.engines[0].dir.as_deref(), Some(folder.as_path()));
    assert_eq!(f.engines[1].dir, Some(folder.join("sub")));
    assert_eq!(f.engines[2].dir, None);
    std::fs::write(&path, format!("{text}[each]\ndir = \"/tmp\"\n")).unwrap();
    let f = ConfigFile::load(&path).unwrap();
    assert_eq!(f.engines[0].dir, None, "each's dir applies");
}

#[test]
fn command_line_values_win_over_the_file() {
    let file = ConfigFile {
        games: Some(8),
        seed: Some(1),
        ..two_builtins()
    };
    let cli = ConfigFile {
        games: Some(2),
        ..ConfigFile::default()
    };
    let merged = cli.or(file);
    assert_eq!(merged.games, Some(2));
    assert_eq!(merged.seed, Some(1));
    assert_eq!(merged.engines.len(), 2);
}

/// On a board with a book the book is the default, and `tournament.toml` keeps it so (a
/// resume plays the same openings); sowings given replace it, and are kept.
#[test]
fn the_book_is_the_default_of_its_board_and_a_resume_keeps_it() {
    let mut f = two_builtins();
    f.games = Some(40);
    f.seed = Some(3);
    let c = f.resolve().unwrap();
    let Openings::Distinct(d) = &c.schedule.openings else {
        panic!("distinct openings")
    };
    assert_eq!(d.book().map(|(name, _)| name), Some("kalah-6x4"));
    let saved = toml::to_string(&c.to_file()).unwrap();
    assert!(!saved.contains("opening_plies"), "{saved}");
    let back: ConfigFile = toml::from_str(&saved).unwrap();
    let c2 = back.resolve().unwrap();
    let a: Vec<_> = c.schedule.games().collect();
    let b: Vec<_> = c2.schedule.games().collect();
    assert_eq!(a, b);
    let (_, book) = crate::analysis::default_book(c.rules()).unwrap();
    assert!(book.contains(&a[0].opening), "{:?}", a[0].opening);
    // Sowings chosen replace the book.
    f.opening_plies = Some(4);
    let c = f.resolve().unwrap();
    let Openings::Distinct(d) = &c.schedule.openings else {
        panic!("distinct openings")
    };
    assert_eq!(d.book(), None);
    assert!(
        toml::to_string(&c.to_file())
            .unwrap()
            .contains("opening_plies = 4")
    );
}

/// The most openings a file may give, kept in `tournament.toml`, stay within what a resume
/// reads of it: the limits on openings files agree with the limit on configuration files.
#[test]
fn the_most_openings_a_file_gives_fit_in_a_resumable_tournament_toml() {
    use crate::analysis::MAX_OPENINGS;
    let rules = crate::rules::Rules::default();
    // The shortest lines give the most openings: one pit each.
    let text = "1\n".repeat(MAX_OPENINGS);
    assert!((text.len() as u64) <= crate::input::OPENINGS_LIMIT);
    let list = crate::analysis::parse_openings(&text, rules).unwrap();
    assert_eq!(list.len(), MAX_OPENINGS);
    let file = ConfigFile {
        opening_list: Some(list.iter().map(|o| o.to_string()).collect()),
        ..ConfigFile::default()
    };
    let saved = toml::to_string(&file).unwrap();
    assert!(
        (saved.len() as u64) < crate::input::CONFIG_LIMIT,
        "{} bytes",
        saved.len()
    );
    // One more is refused, by name.
    let more = format!("{text}1\n");
    let e = crate::analysis::parse_openings(&more, rules).unwrap_err();
    assert!(e.to_string().contains("more than 1000000 openings"), "{e}");
    // And the longest file of long lines: its text, kept, within the limit too.
    let line = "1 2 3 4 5 6 1 2 3 4 5 6 1 2 3 4 5 6 1 2\n";
    let n = (crate::input::OPENINGS_LIMIT as usize / line.len()).min(MAX_OPENINGS);
    let file = ConfigFile {
        opening_list: Some(vec![line.trim().to_string(); n]),
        ..ConfigFile::default()
    };
    assert!((toml::to_string(&file).unwrap().len() as u64) < crate::input::CONFIG_LIMIT);
}
