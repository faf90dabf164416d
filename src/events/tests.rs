//! The lines of each event.

use super::*;

#[test]
fn a_line_is_versioned_and_names_its_event_first() {
    let w = Event::Warning(Warning {
        message: "two \"quoted\"\nlines".into(),
    });
    assert_eq!(
        w.line(),
        "{\"v\":1,\"event\":\"warning\",\"message\":\"two \\\"quoted\\\"\\nlines\"}\n"
    );
    let g = crate::results::sample_record("t", 3, "a", "b");
    let line = Event::GameFinished(CsvRow::of(&g)).line();
    assert!(
        line.starts_with("{\"v\":1,\"event\":\"game_finished\",\"game\":\"t-3\",\"round\":"),
        "{line}"
    );
    assert_eq!(line.matches('\n').count(), 1);
}

#[test]
fn every_event_has_its_name() {
    let g = crate::results::sample_record("t", 1, "a", "b");
    let status = crate::stats::Sprt {
        elo0: 0.0,
        elo1: 5.0,
        alpha: 0.05,
        beta: 0.05,
        model: crate::stats::SprtModel::Normalized,
    }
    .status(crate::stats::Pentanomial([1, 2, 3, 2, 1]));
    let judgement = Judgement {
        status,
        penta: [1, 2, 3, 2, 1],
        end: None,
    };
    let events = [
        Event::RunStarted(Box::new(RunStarted {
            kind: RunKind::Match,
            folder: "r".into(),
            id: "t".into(),
            resumed: false,
            games_done: 0,
            games_total: 2,
            engines: vec!["a".into(), "b".into()],
            settings: None,
            sprt: None,
            notes: vec![],
        })),
        Event::GameStarted(GameStarted {
            game: "t-1",
            round: 1,
            pair: 1,
            south: "a",
            north: "b",
            opening: "3 1".into(),
        }),
        Event::GameFinished(CsvRow::of(&g)),
        Event::Standings(Standings {
            games: 0,
            at_end: true,
            rows: &[],
        }),
        Event::SprtStatus(SprtStatus::from(&judgement)),
        Event::Verdict(Verdict::new(
            crate::sprt::Verdict::NoDecision,
            VerdictRecord::new(4, "no decision", &status, None),
        )),
        Event::Warning(Warning {
            message: "w".into(),
        }),
        Event::RunFinished(RunFinished {
            exit_code: 0,
            reason: Reason::Complete,
            message: None,
            games_played: Some(2),
            games_interrupted: Some(0),
        }),
    ];
    let names: Vec<&str> = events.iter().map(Event::name).collect();
    assert_eq!(names, NAMES);
    for e in &events {
        let v: serde_json::Value = serde_json::from_str(&e.line()).unwrap();
        assert_eq!(v["v"], 1);
        assert_eq!(v["event"], e.name(), "{v}");
    }
}

/// A number read back from an event line is the number written: the `llr` of a verdict
/// (this one came from a run) must equal the one `sprt-result.toml` holds. serde_json's
/// default reader may be one unit in the last place off; `float_roundtrip` makes it exact.
#[test]
fn a_number_reads_back_as_written() {
    for x in [
        3.0725335782431014_f64,
        3.072533578243102,
        0.1 + 0.2,
        -2.9444389791664403,
    ] {
        let line = serde_json::to_string(&x).unwrap();
        let back: f64 = serde_json::from_str(&line).unwrap();
        assert_eq!(back.to_bits(), x.to_bits(), "{line}");
    }
}
