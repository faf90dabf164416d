//! Every setting of a run, given wrong once by flag and once in a configuration file: the
//! error names exactly what the user gave (`--pits 99: ...`, `t.toml, [rules] pits: ...`),
//! never a flag or file they did not use. The list of settings is the one declaration
//! (`SETTINGS`, `RULES`): a new setting without a case here fails the test.

use crate::common::kalaha;
use kalaha::tournament::config::settings::{RULES, SETTINGS};

/// Each setting's wrong value on the command line and the first line of the error, exactly
/// (`None`: no value of the flag is wrong).
const BY_FLAG: &[(&str, Option<(&str, &str)>)] = &[
    (
        "id",
        Some((
            "a/b",
            "error: --id a/b: use letters, digits, '_', '.' and '-'",
        )),
    ),
    // Any text is a title.
    ("title", None),
    ("games", Some(("0", "error: --games 0: must be at least 1"))),
    (
        "move_time",
        Some((
            "5x",
            "error: --move-time 5x: invalid time \"5x\": unknown time unit \"x\", supported \
             units: ns, us/µs, ms, sec, min, hours, days, weeks, months, years (and few \
             variations): write a number with its unit, e.g. 100ms or 2s (a clock: 10s+100ms)",
        )),
    ),
    (
        "clock",
        Some((
            "0s+1s",
            "error: --clock 0s+1s: invalid time \"0s+1s\": the clock must start above zero",
        )),
    ),
    (
        "time_margin",
        Some((
            "100h",
            "error: --time-margin 100h: invalid time \"100h\": longer than the maximum of 1day",
        )),
    ),
    (
        "opening_plies",
        Some((
            "x",
            "error: invalid value 'x' for '--opening-plies <K>': invalid digit found in string",
        )),
    ),
    (
        "openings",
        Some((
            "nope.txt",
            "error: --openings nope.txt: failed to read nope.txt: No such file or directory \
             (os error 2)",
        )),
    ),
    (
        "seed",
        Some((
            "x",
            "error: invalid value 'x' for '--seed <N>': invalid digit found in string",
        )),
    ),
    (
        "shard",
        Some((
            "3/2",
            "error: --shard 3/2: invalid shard \"3/2\": expected K/N with 1 <= K <= N",
        )),
    ),
    (
        "restart",
        Some((
            "sometimes",
            "error: invalid value 'sometimes' for '--restart <RESTART>'",
        )),
    ),
    (
        "adjudicate",
        Some((
            "maybe",
            "error: invalid value 'maybe' for '--adjudicate <ADJUDICATE>'",
        )),
    ),
    (
        "balanced_openings",
        Some((
            "x",
            "error: invalid value 'x' for '--balanced-openings <V>': invalid digit found in \
             string",
        )),
    ),
    (
        "startup_timeout",
        Some((
            "0s",
            "error: --startup-timeout 0s: must be above zero (an engine needs time to answer \
             hello)",
        )),
    ),
    (
        "line_limit",
        Some(("0", "error: --line-limit 0: it must be at least 1 byte")),
    ),
    ("depth", Some(("0", "error: --depth 0: must be at least 1"))),
    ("nodes", Some(("0", "error: --nodes 0: must be at least 1"))),
    (
        "concurrency",
        Some((
            "0",
            "error: invalid value '0' for '--concurrency <N>': must be at least 1",
        )),
    ),
    (
        "report_every",
        Some((
            "0",
            "error: --report-every 0: must be at least 1 (games between two rewrites of the \
             leaderboards)",
        )),
    ),
    (
        "events",
        Some((
            "nodir/e.jsonl",
            "error: --events nodir/e.jsonl: failed to create nodir/e.jsonl: No such file or \
             directory (os error 2)",
        )),
    ),
    (
        "out",
        Some((
            "f.txt",
            "error: --out f.txt: f.txt is a file, not a folder: give a new or empty folder for \
             the results",
        )),
    ),
    (
        "rules.pits",
        Some((
            "99",
            "error: --pits 99: unsupported number of pits 99: it must be between 1 and 16",
        )),
    ),
    (
        "rules.seeds",
        Some((
            "0",
            "error: --seeds 0: unsupported number of seeds per pit 0: it must be between 1 and \
             100",
        )),
    ),
    (
        "rules.empty_capture",
        Some((
            "maybe",
            "error: unexpected value 'maybe' for '--empty-capture' found; no more were expected",
        )),
    ),
    (
        "rules.sweep",
        Some(("x", "error: invalid value 'x' for '--sweep <SWEEP>'")),
    ),
];

/// Each setting's wrong value in `t.toml` and the first line of the error, exactly; `{DIR}`
/// stands for the folder of the file.
const BY_FILE: &[(&str, &str, &str)] = &[
    (
        "id",
        "\"a/b\"",
        "error: t.toml, id: use letters, digits, '_', '.' and '-'",
    ),
    (
        "title",
        "5",
        "error: t.toml, title: invalid type: integer `5`, expected a string",
    ),
    ("games", "0", "error: t.toml, games: must be at least 1"),
    (
        "move_time",
        "\"5x\"",
        "error: t.toml, move_time: invalid time \"5x\": unknown time unit \"x\", supported \
         units: ns, us/µs, ms, sec, min, hours, days, weeks, months, years (and few \
         variations): write a number with its unit, e.g. 100ms or 2s (a clock: 10s+100ms)",
    ),
    (
        "clock",
        "\"0s+1s\"",
        "error: t.toml, clock: invalid time \"0s+1s\": the clock must start above zero",
    ),
    (
        "time_margin",
        "\"100h\"",
        "error: t.toml, time_margin: invalid time \"100h\": longer than the maximum of 1day",
    ),
    (
        "opening_plies",
        "-1",
        "error: t.toml, opening_plies: invalid value: integer `-1`, expected u32",
    ),
    (
        "openings",
        "\"nope.txt\"",
        "error: t.toml, openings: failed to read {DIR}/nope.txt: No such file or directory \
         (os error 2)",
    ),
    (
        "seed",
        "\"x\"",
        "error: t.toml, seed: invalid type: string \"x\", expected u64",
    ),
    (
        "shard",
        "\"3/2\"",
        "error: t.toml, shard: invalid shard \"3/2\": expected K/N with 1 <= K <= N",
    ),
    (
        "restart",
        "\"sometimes\"",
        "error: t.toml, restart: unknown variant `sometimes`, expected `on_fault` or `always`",
    ),
    (
        "adjudicate",
        "\"maybe\"",
        "error: t.toml, adjudicate: unknown variant `maybe`, expected one of `off`, `decided`, \
         `exact`",
    ),
    (
        "balanced_openings",
        "-1",
        "error: t.toml, balanced_openings: invalid value: integer `-1`, expected u32",
    ),
    (
        "startup_timeout",
        "\"0s\"",
        "error: t.toml, startup_timeout: must be above zero (an engine needs time to answer \
         hello)",
    ),
    (
        "line_limit",
        "0",
        "error: t.toml, line_limit: it must be at least 1 byte",
    ),
    ("depth", "0", "error: t.toml, depth: must be at least 1"),
    ("nodes", "0", "error: t.toml, nodes: must be at least 1"),
    (
        "concurrency",
        "0",
        "error: t.toml, concurrency: must be at least 1 (games at once)",
    ),
    (
        "report_every",
        "0",
        "error: t.toml, report_every: must be at least 1 (games between two rewrites of the \
         leaderboards)",
    ),
    (
        "events",
        "\"nodir/e.jsonl\"",
        "error: t.toml, events: failed to create {DIR}/nodir/e.jsonl: No such file or directory \
         (os error 2)",
    ),
    (
        "out",
        "\"f.txt\"",
        "error: t.toml, out: {DIR}/f.txt is a file, not a folder: give a new or empty folder \
         for the results",
    ),
    (
        "rules.pits",
        "99",
        "error: t.toml, [rules] pits: unsupported number of pits 99: it must be between 1 and \
         16",
    ),
    (
        "rules.seeds",
        "0",
        "error: t.toml, [rules] seeds: unsupported number of seeds per pit 0: it must be \
         between 1 and 100",
    ),
    (
        "rules.empty_capture",
        "\"maybe\"",
        "error: t.toml, [rules] empty_capture: invalid type: string \"maybe\", expected a \
         boolean",
    ),
    (
        "rules.sweep",
        "\"x\"",
        "error: t.toml, [rules] sweep: unknown variant `x`, expected one of `owner`, \
         `empty_side`, `none`",
    ),
];

/// Every declared setting, `rules.KEY` for a rule, with its flag.
fn declared() -> Vec<(String, &'static str)> {
    SETTINGS
        .iter()
        .map(|s| (s.key.to_string(), s.flag))
        .chain(RULES.iter().map(|s| (format!("rules.{}", s.key), s.flag)))
        .collect()
}

fn first_error_line(dir: &std::path::Path, args: &[&str]) -> (Option<i32>, String) {
    let o = kalaha()
        .current_dir(dir)
        .args([
            "tournament",
            "--engine",
            "first",
            "--engine",
            "random",
            "-q",
        ])
        .args(args)
        .output()
        .expect("kalaha runs");
    let stderr = String::from_utf8_lossy(&o.stderr);
    (
        o.status.code(),
        stderr.lines().next().unwrap_or_default().to_string(),
    )
}

#[test]
fn a_wrong_flag_is_named_as_given() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("f.txt"), "").unwrap();
    for (key, flag) in declared() {
        let case = BY_FLAG
            .iter()
            .find(|(k, _)| *k == key)
            .unwrap_or_else(|| panic!("no wrong value by flag for the setting {key}: add one"));
        let Some((value, expected)) = case.1 else {
            continue;
        };
        let given = format!("{flag}={value}");
        let (code, line) = first_error_line(tmp.path(), &[&given]);
        assert_eq!(code, Some(2), "{given}: {line}");
        assert_eq!(line, expected, "{given}");
    }
}

#[test]
fn a_wrong_key_of_a_file_is_named_as_given() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("f.txt"), "").unwrap();
    let dir = tmp.path().display().to_string();
    for (key, _) in declared() {
        let (_, value, expected) = BY_FILE
            .iter()
            .find(|(k, _, _)| *k == key)
            .unwrap_or_else(|| panic!("no wrong value in a file for the setting {key}: add one"));
        let text = match key.strip_prefix("rules.") {
            Some(rule) => format!("[rules]\n{rule} = {value}\n"),
            None => format!("{key} = {value}\n"),
        };
        std::fs::write(tmp.path().join("t.toml"), &text).unwrap();
        let (code, line) = first_error_line(tmp.path(), &["--config", "t.toml"]);
        assert_eq!(code, Some(2), "{text}: {line}");
        assert_eq!(line, expected.replace("{DIR}", &dir), "{text}");
    }
}
