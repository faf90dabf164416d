//! `protocol.md` matches the code: every example message in it parses, every message type
//! has an example, and every `go` example is consistent with its game.

use kalaha::protocol::{FromEngine, ToEngine};
use kalaha::rules::{Position, Rules};
use std::collections::HashSet;

/// The lines of every ```json block of protocol.md, with their line numbers.
fn example_lines() -> Vec<(usize, String)> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/protocol.md");
    let text = std::fs::read_to_string(path).expect("protocol.md");
    let mut lines = Vec::new();
    let mut in_json = false;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if in_json {
            if t.starts_with("```") {
                in_json = false;
            } else if !t.is_empty() {
                lines.push((i + 1, t.to_string()));
            }
        } else if t == "```json" {
            in_json = true;
        }
    }
    assert!(!in_json, "protocol.md: a ```json block is not closed");
    lines
}

#[test]
fn every_example_message_parses() {
    let lines = example_lines();
    assert!(lines.len() > 20, "only {} example lines", lines.len());
    let mut to_seen = HashSet::new();
    let mut from_seen = HashSet::new();
    let mut rules: Option<Rules> = None;
    let mut start: Option<Position> = None;
    for (n, line) in &lines {
        let to = ToEngine::parse(line);
        let from = FromEngine::parse(line);
        assert!(
            to.is_ok() || from.is_ok(),
            "protocol.md line {n} is not a message: {line}\n  as referee message: {:?}\n  as engine message: {:?}",
            to.err(),
            from.err()
        );
        if let Ok(m) = &from {
            from_seen.insert(m.kind());
        }
        match to {
            Ok(ToEngine::NewGame {
                rules: r, start: s, ..
            }) => {
                rules = Some(r);
                start = s.map(|view| {
                    Position::from_view(r, &view).unwrap_or_else(|e| panic!("line {n}: start: {e}"))
                });
                to_seen.insert("new_game");
            }
            Ok(ToEngine::Go {
                position,
                legal,
                moves,
                ..
            }) => {
                let rules = rules.unwrap_or_else(|| panic!("line {n}: a go before any new_game"));
                let mut pos = start.unwrap_or_else(|| Position::start(rules));
                for m in &moves {
                    pos = pos
                        .play_move(*m)
                        .unwrap_or_else(|e| panic!("line {n}: move {m:?}: {e}"))
                        .0;
                }
                assert_eq!(
                    pos.view(),
                    position,
                    "line {n}: position differs from the moves"
                );
                assert_eq!(
                    pos.legal_moves().collect::<Vec<_>>(),
                    legal,
                    "line {n}: legal"
                );
                to_seen.insert("go");
            }
            Ok(m) => {
                to_seen.insert(m.kind());
            }
            Err(_) => {}
        }
    }
    for t in ToEngine::TYPES {
        assert!(to_seen.contains(t), "no example of the referee's {t:?}");
    }
    for t in FromEngine::TYPES {
        assert!(from_seen.contains(t), "no example of the engine's {t:?}");
    }
}

#[test]
fn the_transcript_game_ends_as_stated() {
    // The last go of the transcript and its move end the game 8 to 4.
    let lines = example_lines();
    let (_, go) = lines
        .iter()
        .rev()
        .find(|(_, l)| l.contains("\"type\":\"go\""))
        .unwrap();
    let Ok(ToEngine::Go { moves, .. }) = ToEngine::parse(go) else {
        panic!("not a go");
    };
    let rules: Rules =
        serde_json::from_str(r#"{"pits":2,"seeds":3,"empty_capture":false,"sweep":"owner"}"#)
            .unwrap();
    let mut pos = Position::start(rules);
    for m in moves {
        pos = pos.play_move(m).unwrap().0;
    }
    let end = pos.play(2).unwrap();
    let outcome = end.outcome().expect("the game is over");
    assert_eq!((outcome.south, outcome.north), (8, 4));
}

/// Every line of the ```moves blocks of RULES.md: a position, a sowing, the position after
/// it, and what the sowing did.
#[test]
fn every_example_of_the_rules_holds() {
    let shown = check_moves_blocks("RULES.md");
    assert!(shown.len() >= 9, "only {} examples", shown.len());
}

/// The examples of the rules section of protocol.md hold too, and show each rule: an extra
/// turn, a capture, the end, a sowing by north past south's store, and every variant.
#[test]
fn every_example_of_the_protocols_rules_holds() {
    use kalaha::rules::Sweep;
    let shown = check_moves_blocks("protocol.md");
    assert!(shown.len() >= 9, "only {} examples", shown.len());
    let any = |f: &dyn Fn(&Example) -> bool| shown.iter().any(f);
    assert!(any(&|e| e.extra_turn), "no extra turn");
    assert!(any(&|e| e.captured > 0 && !e.empty_capture), "no capture");
    assert!(any(&|e| e.over), "no end");
    assert!(
        any(&|e| e.empty_capture && e.captured == 1),
        "no lone seed captured"
    );
    assert!(
        any(&|e| !e.empty_capture && e.captured == 0 && e.last_in_empty_own_pit),
        "no last seed left in an empty pit"
    );
    assert!(
        any(&|e| e.north_passed_south_store),
        "no sowing past south's store"
    );
    for sweep in Sweep::ALL {
        assert!(
            any(&|e| e.over && e.sweep == sweep),
            "no end under sweep {sweep}"
        );
    }
}

/// One line of a ```moves block, and what it shows.
struct Example {
    empty_capture: bool,
    sweep: kalaha::rules::Sweep,
    extra_turn: bool,
    captured: u16,
    over: bool,
    /// The last seed fell into an empty pit of the mover (captured or not).
    last_in_empty_own_pit: bool,
    /// North sowed round past south's store, which is skipped.
    north_passed_south_store: bool,
}

/// Plays every line of the ```moves blocks of `file` (of the repository) under the variant
/// its block names, and checks the position after it and what the sowing did.
fn check_moves_blocks(file: &str) -> Vec<Example> {
    use kalaha::rules::{Side, Sweep};
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
    let text = std::fs::read_to_string(&path).expect(file);
    let mut variant: Option<(bool, Sweep)> = None;
    let mut shown = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if let Some(info) = t.strip_prefix("```moves") {
            let sweep = if info.contains("sweep=empty_side") {
                Sweep::EmptySide
            } else if info.contains("sweep=none") {
                Sweep::None
            } else {
                Sweep::Owner
            };
            variant = Some((info.contains("empty_capture"), sweep));
            continue;
        }
        if t.starts_with("```") {
            variant = None;
            continue;
        }
        let Some((empty_capture, sweep)) = variant else {
            continue;
        };
        if t.is_empty() {
            continue;
        }
        let (before, rest) = t.split_once("  sow ").expect("POSITION  sow N  =>  ...");
        let (pit, rest) = rest.split_once("  =>  ").expect("=>");
        let mut words = rest.split_whitespace();
        let after = words.next().expect("the position after");
        let notes: Vec<&str> = words.collect();
        let south_pits = before.split(':').next().unwrap();
        let pits = south_pits.split(',').count() as u32;
        let rules = Rules::new(pits, 4, empty_capture, sweep).unwrap();
        let pos = Position::from_compact(before, rules).unwrap();
        let (next, effect) = pos.play_traced(pit.trim().parse().unwrap()).unwrap();
        let n = i + 1;
        assert_eq!(next.to_compact(), after, "{file}:{n}");
        assert_eq!(effect.extra_turn, notes.contains(&"extra"), "{file}:{n}");
        assert_eq!(next.is_over(), notes.contains(&"over"), "{file}:{n}");
        let captured = notes
            .iter()
            .position(|w| *w == "capture")
            .map_or(0, |k| notes[k + 1].parse::<u16>().unwrap());
        assert_eq!(effect.captured, captured, "{file}:{n}");
        let p = pits as usize;
        let pit: usize = pit.trim().parse().unwrap();
        let mover = pos.to_move();
        let seeds = pos.pit(mover, pit) as usize;
        // Cells from the mover's pit 1 in sowing order: its pits, its store, the other's pits.
        let last = (pit - 1 + seeds) % (2 * p + 1);
        let in_own_pit = seeds <= 2 * p && last < p;
        shown.push(Example {
            empty_capture,
            sweep,
            extra_turn: effect.extra_turn,
            captured: effect.captured,
            over: next.is_over(),
            last_in_empty_own_pit: in_own_pit && pos.pit(mover, last + 1) == 0,
            north_passed_south_store: mover == Side::North && pit + seeds > 2 * p + 1,
        });
    }
    shown
}

/// The `hello`, `ping`, `pong`, `new_game` and `quit` lines of a `--debug` transcript, in
/// order, each as its direction (`>` sent to the engine, `<` from it), its type and, for a
/// ping or pong, its id: `>ping1`.
fn handshakes(transcript: &str) -> Vec<String> {
    transcript
        .lines()
        .filter_map(|l| {
            let (time, rest) = l.trim_start().split_once(' ')?;
            assert!(time.parse::<u64>().is_ok(), "no time in {l:?}");
            let (dir, json) = rest.split_once(' ')?;
            let m: serde_json::Value = serde_json::from_str(json).ok()?;
            let kind = m["type"].as_str()?;
            match kind {
                "ping" | "pong" => Some(format!("{dir}{kind}{}", m["id"])),
                "hello" | "new_game" | "quit" => Some(format!("{dir}{kind}")),
                _ => None,
            }
        })
        .collect()
}

/// The transcripts of engine `name` in a results folder, each as [`handshakes`].
fn engine_handshakes(out: &std::path::Path, name: &str) -> Vec<Vec<String>> {
    let mut all = Vec::new();
    for e in std::fs::read_dir(out.join("logs")).unwrap().flatten() {
        let file = e.file_name().to_string_lossy().into_owned();
        if file.starts_with(&format!("{name}.")) && file.ends_with(".transcript") {
            all.push(handshakes(&std::fs::read_to_string(e.path()).unwrap()));
        }
    }
    all.sort();
    all
}

/// Section 2 of protocol.md: the set-up ping, a ping before every game but the first of a
/// process started for it, and a ping after every `new_game`; the session at the top of
/// protocol.md is what a match sends an engine up to its first `go`.
#[test]
fn a_match_pings_as_protocol_md_says() {
    let dir = tempfile::tempdir().unwrap();
    let run = |out: &str, games: &str, extra: &[&str]| {
        let out = dir.path().join(out);
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_kalaha"))
            .args(["match", "first", "random", "--pits", "3", "--seeds", "2"])
            .args([
                "--games",
                games,
                "--concurrency",
                "1",
                "-q",
                "--debug",
                "--out",
            ])
            .arg(&out)
            .args(extra)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        out
    };
    let words = |s: &str| -> Vec<String> { s.split_whitespace().map(String::from).collect() };

    // One process plays the four games: a ping before each.
    let reused = run("reused", "4", &[]);
    let mut want = words(">hello <hello >ping1 <pong1");
    for game in 0..4 {
        let id = 2 + 2 * game;
        want.extend(words(&format!(
            ">ping{id} <pong{id} >new_game >ping{} <pong{}",
            id + 1,
            id + 1
        )));
    }
    want.push(">quit".into());
    assert_eq!(engine_handshakes(&reused, "first"), [want.clone()]);

    // The session at the top of protocol.md, up to its go: the same lines.
    let doc: Vec<String> = example_lines()
        .into_iter()
        .map(|(_, l)| l)
        .take_while(|l| !l.contains(r#""type":"go""#))
        .collect();
    let doc = handshakes(
        &doc.iter()
            .map(|l| {
                // The engine's lines: its hello (which has a name) and its answers.
                let engine = FromEngine::parse(l).is_ok_and(|m| m.kind() != "hello")
                    || l.contains(r#""name""#);
                format!("0 {} {l}\n", if engine { '<' } else { '>' })
            })
            .collect::<String>(),
    );
    assert_eq!(doc, want[..doc.len()], "the session of protocol.md");
    assert_eq!(doc.len(), 9, "{doc:?}");

    // A process for every game: the first, started with the run, is pinged before its
    // game; the second, started for its game, is not.
    let fresh = run("fresh", "2", &["--restart", "always"]);
    let started_with_the_run =
        words(">hello <hello >ping1 <pong1 >ping2 <pong2 >new_game >ping3 <pong3 >quit");
    let started_for_its_game = words(">hello <hello >ping1 <pong1 >new_game >ping2 <pong2 >quit");
    let mut want = vec![started_with_the_run, started_for_its_game];
    want.sort();
    assert_eq!(engine_handshakes(&fresh, "first"), want);
}
