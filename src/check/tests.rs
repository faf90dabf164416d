use super::*;

#[test]
fn a_message_without_a_kind_is_not_named_by_an_empty_one() {
    let f = Failure::from(EngineError::Malformed {
        kind: String::new(),
        line: r#"{"type":"log","type":"move"}"#.into(),
        error: "more than one \"type\" field".into(),
    });
    assert_eq!(f.reason, r#"a bad message: more than one "type" field"#);
}

#[test]
fn test_positions_exist() {
    let rules = Rules::default();
    for side in [Side::South, Side::North] {
        let (pos, moves) = play_until(rules, Some(side), few_seeds_left).unwrap();
        assert_eq!(pos.to_move(), side);
        assert!(!moves.is_empty());
    }
    for rules in [
        Rules::new(4, 3, true, Sweep::EmptySide).unwrap(),
        Rules::new(3, 2, false, Sweep::None).unwrap(),
    ] {
        assert!(play_until(rules, Some(Side::North), |_| true).is_some());
    }
}

#[test]
fn results_print_as_specified() {
    let r = StepResult {
        name: "go-start".into(),
        outcome: Outcome::Failed(Failure::with_line("bad", "move 3")),
        warnings: Vec::new(),
        steps: 1,
    };
    assert_eq!(r.to_string(), "FAIL go-start: bad (received: move 3)");
    let stray = r#"{"type":"move","pit":1}"#;
    let r = StepResult {
        name: "go-clock".into(),
        outcome: Outcome::Failed(Failure::from(EngineError::Unrequested {
            kind: "move",
            line: stray.into(),
        })),
        warnings: Vec::new(),
        steps: 1,
    };
    assert_eq!(
        r.to_string(),
        format!("FAIL go-clock: sent move when no answer was asked for: {stray}")
    );
    let r = StepResult {
        name: "hello-fields".into(),
        outcome: Outcome::Passed,
        warnings: vec!["no version".into(), "no author".into()],
        steps: 1,
    };
    assert_eq!(
        r.to_string(),
        "PASS hello-fields (warning: no version; no author)"
    );
    let r = StepResult {
        name: "options".into(),
        outcome: Outcome::Skipped("the engine declares no option".into()),
        warnings: Vec::new(),
        steps: 1,
    };
    assert_eq!(r.to_string(), "SKIP options: the engine declares no option");
}
