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
            Ok(ToEngine::NewGame { rules: r, .. }) => {
                rules = Some(r);
                to_seen.insert("new_game");
            }
            Ok(ToEngine::Go {
                position,
                legal,
                moves,
                ..
            }) => {
                let rules = rules.unwrap_or_else(|| panic!("line {n}: a go before any new_game"));
                let mut pos = Position::start(rules);
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
