use super::*;
use crate::rules::Position;
use std::time::Duration;

fn round_trip_to(msg: ToEngine) {
    let line = msg.to_line();
    assert_eq!(ToEngine::parse(&line).unwrap(), msg, "{line}");
}

fn round_trip_from(msg: FromEngine) {
    let line = msg.to_line();
    assert_eq!(FromEngine::parse(&line).unwrap(), msg, "{line}");
}

#[test]
fn a_type_given_twice_is_named_as_such() {
    let e = FromEngine::parse(r#"{"type":"log","type":"move","pit":3}"#).unwrap_err();
    assert_eq!(e.to_string(), r#"bad message: more than one "type" field"#);
    let e = FromEngine::parse(r#"{"type":"move","pit":3,"pit":4}"#).unwrap_err();
    assert_eq!(
        e.to_string(),
        r#"bad "move" message: duplicate field `pit`"#
    );
}

#[test]
fn malformed_fields_are_named_in_json_words() {
    let error = |line: &str| FromEngine::parse(line).unwrap_err().to_string();
    let e = error(r#"{"type":"move","pit":"3"}"#);
    assert!(e.contains(r#"string "3", expected an integer"#), "{e}");
    let e = error(r#"{"type":"pong","id":-1}"#);
    assert!(e.contains("expected an integer of at least 0"), "{e}");
    let e = error(r#"{"type":"hello","protocol":1,"name":"x","options":{}}"#);
    assert!(e.contains("invalid type: object, expected an array"), "{e}");
    for line in [
        r#"{"type":"move","pit":3.5}"#,
        r#"{"type":"hello","protocol":"1","name":"x"}"#,
        r#"{"type":"info","depth":true}"#,
        r#"{"type":"move","pit":[1]}"#,
    ] {
        let e = error(line);
        for rust in ["i64", "u32", "u64", "sequence", "map"] {
            assert!(!e.contains(rust), "{line}: {e}");
        }
    }
}

#[test]
fn every_referee_message_round_trips() {
    let pos = Position::start(Rules::default());
    round_trip_to(ToEngine::Hello { protocol: 1 });
    round_trip_to(ToEngine::Option {
        name: "depth".into(),
        value: serde_json::json!(8),
    });
    round_trip_to(ToEngine::Ping { id: 7 });
    round_trip_to(ToEngine::NewGame {
        start: None,
        game: "g1".into(),
        rules: Rules::default(),
        side: Side::North,
    });
    round_trip_to(ToEngine::NewGame {
        start: Some(pos.play(1).unwrap().play(1).unwrap().view()),
        game: "g1".into(),
        rules: Rules::default(),
        side: Side::North,
    });
    for time in [
        TimeLimit::MoveTime(Duration::from_millis(1000)),
        TimeLimit::Clock {
            remaining: Duration::from_millis(60000),
            increment: Duration::from_millis(100),
            opponent_remaining: Some(Duration::from_millis(59000)),
        },
        TimeLimit::Clock {
            remaining: Duration::from_millis(5),
            increment: Duration::ZERO,
            opponent_remaining: None,
        },
    ] {
        round_trip_to(ToEngine::Go {
            position: pos.view(),
            legal: pos.legal_moves().collect(),
            moves: vec![Move {
                side: Side::South,
                pit: 3,
            }],
            time,
        });
    }
    round_trip_to(ToEngine::GameOver {
        game: "g1".into(),
        result: SideResult::Draw,
        south: 24,
        north: 24,
        termination: Termination::Normal,
    });
    round_trip_to(ToEngine::Quit);
}

#[test]
fn every_engine_message_round_trips() {
    round_trip_from(FromEngine::Hello(HelloReply {
        protocol: 1,
        name: "x".into(),
        version: "1.0".into(),
        author: "a".into(),
        options: vec![
            EngineOption {
                name: "depth".into(),
                kind: OptionKind::Int {
                    default: 4,
                    min: 1,
                    max: 20,
                },
            },
            EngineOption {
                name: "style".into(),
                kind: OptionKind::Choice {
                    default: "a".into(),
                    values: vec!["a".into(), "b".into()],
                },
            },
        ],
    }));
    round_trip_from(FromEngine::Pong { id: 3 });
    round_trip_from(FromEngine::Info(SearchInfo::default()));
    round_trip_from(FromEngine::Info(SearchInfo {
        depth: Some(3),
        score: Some(-2),
        nodes: Some(100),
        time_ms: Some(5),
        pv: vec![3, 6],
    }));
    round_trip_from(FromEngine::Move { pit: 3 });
    round_trip_from(FromEngine::Log {
        level: "warn".into(),
        message: "hi".into(),
    });
}

#[test]
fn unknown_fields_are_ignored_however_deep() {
    let deep = format!("{}1{}", "[".repeat(300), "]".repeat(300));
    let m = FromEngine::parse(&format!(r#"{{"type":"move","x":{deep},"pit":4}}"#));
    assert_eq!(m.unwrap(), FromEngine::Move { pit: 4 });
    // A known field that deep is still wrong.
    let e = FromEngine::parse(&format!(r#"{{"type":"move","pit":{deep}}}"#)).unwrap_err();
    assert!(matches!(e, ParseError::Malformed { .. }), "{e}");
}

#[test]
fn unknown_fields_are_ignored() {
    let m = FromEngine::parse(r#"{"type":"move","pit":4,"ponder":2,"x":{"y":[1]}}"#).unwrap();
    assert_eq!(m, FromEngine::Move { pit: 4 });
    let m = ToEngine::parse(r#"{"type":"ping","id":1,"extra":true}"#).unwrap();
    assert_eq!(m, ToEngine::Ping { id: 1 });
    let m = FromEngine::parse(r#"{"type":"hello","protocol":1,"name":"n"}"#).unwrap();
    assert!(matches!(m, FromEngine::Hello(h) if h.options.is_empty()));
}

#[test]
fn unknown_type_is_distinct_from_malformed() {
    let e = FromEngine::parse(r#"{"type":"ready"}"#).unwrap_err();
    assert!(e.is_unknown_type());
    assert!(matches!(
        FromEngine::parse("move 3").unwrap_err(),
        ParseError::NotJson(_)
    ));
    assert!(matches!(
        FromEngine::parse("[1,2]").unwrap_err(),
        ParseError::NotJson(_)
    ));
    assert!(matches!(
        FromEngine::parse(r#"{"pit":3}"#).unwrap_err(),
        ParseError::MissingType
    ));
    let e = FromEngine::parse(r#"{"type":"move","pit":"3"}"#).unwrap_err();
    assert!(matches!(e, ParseError::Malformed { ref kind, .. } if kind == "move"));
    assert!(!e.is_unknown_type());
    assert!(matches!(
        FromEngine::parse(r#"{"type":7}"#).unwrap_err(),
        ParseError::MissingType
    ));
    assert!(matches!(
        FromEngine::parse(r#"{"type":"mo\u0076e","pit":2}"#).unwrap(),
        FromEngine::Move { pit: 2 }
    ));
    assert!(matches!(
        FromEngine::parse(r#"{"type":"move","pit":2"#).unwrap_err(),
        ParseError::NotJson(_)
    ));
    assert!(matches!(
        FromEngine::parse("\"move\"").unwrap_err(),
        ParseError::NotJson(_)
    ));
}

#[test]
fn a_go_without_a_usable_time_is_malformed() {
    let e = ToEngine::parse(r#"{"type":"go","position":{"to_move":"south","south":{"pits":[1],"store":0},"north":{"pits":[1],"store":0}},"legal":[1],"moves":[],"time":{}}"#)
        .unwrap_err()
        .to_string();
    assert!(e.contains("move_ms"), "{e}");
}

#[test]
fn wire_shapes_match_the_spec() {
    assert_eq!(ToEngine::Quit.to_line(), r#"{"type":"quit"}"#);
    assert_eq!(
        ToEngine::NewGame {
            start: None,
            game: "g".into(),
            rules: Rules::default(),
            side: Side::South
        }
        .to_line(),
        r#"{"type":"new_game","game":"g","rules":{"pits":6,"seeds":4,"empty_capture":false,"sweep":"owner"},"side":"south"}"#
    );
}

/// An unknown field holding an escaped half of a surrogate pair (what Python's json.dumps
/// writes for such a string) is ignored like any unknown field.
#[test]
fn a_lone_surrogate_in_an_unknown_field_is_not_a_fault() {
    for line in [
        r#"{"type":"move","pit":2,"x":"\ud800"}"#,
        r#"{"type":"move","x":"\udc00\ud800","pit":2}"#,
    ] {
        match FromEngine::parse(line) {
            Ok(FromEngine::Move { pit }) => assert_eq!(pit, 2),
            other => panic!("{line}: {other:?}"),
        }
    }
    // In the type itself, the line is still read, and the type is unknown.
    assert!(matches!(
        FromEngine::parse(r#"{"type":"mo\ud800ve","pit":2}"#),
        Err(ParseError::UnknownType(_))
    ));
}
