//! `--events FILE`: real runs' streams against `docs/events.md` (every event and field it
//! documents, none it does not), against `games.csv`, `sprt.csv` and `sprt-result.toml`;
//! standard output of `--events -`; a resume; a reader that goes away; an early error.

use crate::common::{kalaha, text};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Output, Stdio};

fn run(args: &[&str]) -> Output {
    kalaha().args(args).output().expect("kalaha runs")
}

/// The lines of a stream, each parsed, checked to be an object of version 1 with a known
/// event.
fn parse(text: &str) -> Vec<Value> {
    text.lines()
        .map(|line| {
            let v: Value =
                serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}"));
            assert_eq!(v["v"], 1, "{line}");
            let name = v["event"]
                .as_str()
                .unwrap_or_else(|| panic!("no event: {line}"));
            assert!(kalaha::events::NAMES.contains(&name), "{line}");
            v
        })
        .collect()
}

fn read(path: &Path) -> Vec<Value> {
    parse(&std::fs::read_to_string(path).unwrap())
}

fn of<'a>(lines: &'a [Value], event: &str) -> Vec<&'a Value> {
    lines.iter().filter(|l| l["event"] == event).collect()
}

/// The events `docs/events.md` documents, each with the fields of its tables.
fn documented() -> BTreeMap<String, BTreeSet<String>> {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/events.md")).unwrap();
    let mut events: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut current = None;
    for line in doc.lines() {
        if let Some(name) = line.strip_prefix("### `").and_then(|l| l.strip_suffix('`')) {
            events.insert(name.to_string(), BTreeSet::new());
            current = Some(name.to_string());
        } else if let (Some(name), Some(field)) = (
            &current,
            line.strip_prefix("| `").and_then(|l| l.split_once("` |")),
        ) {
            events.get_mut(name).unwrap().insert(field.0.to_string());
        }
    }
    events
}

/// The fields of `event` that `docs/events.md` says may be absent ("absent ..." in their
/// description).
fn optional_fields(event: &str) -> BTreeSet<String> {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/events.md")).unwrap();
    let section = doc
        .split(&format!("### `{event}`"))
        .nth(1)
        .and_then(|rest| rest.split("\n### ").next())
        .unwrap_or("");
    section
        .lines()
        .filter_map(|l| l.strip_prefix("| `")?.split_once("` |"))
        .filter(|(_, rest)| rest.contains("absent"))
        .map(|(field, _)| field.to_string())
        .collect()
}

/// The example line of each event in `docs/events.md`.
fn documented_examples() -> Vec<Value> {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/events.md")).unwrap();
    let lines: Vec<&str> = doc
        .split("```json\n")
        .skip(1)
        .map(|block| block.split("```").next().unwrap().trim_end())
        .collect();
    parse(&lines.join("\n"))
}

/// The fields of a line, without `v` and `event`, with those of a standings row.
fn fields(line: &Value) -> BTreeSet<String> {
    let mut keys: BTreeSet<String> = line.as_object().unwrap().keys().cloned().collect();
    keys.remove("v");
    keys.remove("event");
    if let Some(row) = line["rows"].get(0) {
        keys.extend(row.as_object().unwrap().keys().cloned());
    }
    keys
}

/// Checks `lines` against the documentation: each field of each event is documented
/// under it; returns the fields seen, by event.
fn check_documented(lines: &[Value]) -> BTreeMap<String, BTreeSet<String>> {
    let doc = documented();
    let mut seen: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in lines {
        let name = line["event"].as_str().unwrap();
        let fields = fields(line);
        let undocumented: Vec<_> = fields.difference(&doc[name]).collect();
        assert!(
            undocumented.is_empty(),
            "{name}: {undocumented:?} not in docs/events.md: {line}"
        );
        seen.entry(name.to_string()).or_default().extend(fields);
    }
    seen
}

#[test]
fn the_documented_events_are_the_events_and_each_example_is_one() {
    let doc = documented();
    let names: BTreeSet<&str> = doc.keys().map(String::as_str).collect();
    let ours: BTreeSet<&str> = kalaha::events::NAMES.into_iter().collect();
    assert_eq!(names, ours, "docs/events.md against the events written");
    let examples = documented_examples();
    let mut shown: Vec<&str> = examples
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    shown.sort_unstable();
    let mut all = kalaha::events::NAMES.to_vec();
    all.sort_unstable();
    assert_eq!(shown, all, "one example line for each event");
    check_documented(&examples);
}

/// A match: the stream begins with `run_started`, ends with `run_finished`, says every game
/// started and finished, with `game_finished` lines that are the rows of `games.csv`,
/// standings every `--report-every` games and at the end, and the warnings printed. With
/// the SPRT's stream below, it uses every field the documentation lists.
#[test]
fn a_matchs_events_are_its_games_csv_row_for_row() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let events = out.join("events.jsonl");
    // Deterministic engines from the start position: the second pair repeats the first,
    // which is warned of.
    let o = run(&[
        "match",
        "--engine",
        "first",
        "--engine",
        "greedy",
        "--games",
        "4",
        "--opening-plies",
        "0",
        "--move-time",
        "20ms",
        "-j",
        "1",
        "--report-every",
        "2",
        "--out",
        out.to_str().unwrap(),
        "--events",
        events.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let lines = read(&events);
    assert_eq!(lines[0]["event"], "run_started");
    assert_eq!(lines[0]["kind"], "match");
    assert_eq!(lines[0]["resumed"], false);
    assert_eq!(lines[0]["games_total"], 4);
    assert_eq!(lines[0]["engines"], serde_json::json!(["first", "greedy"]));
    assert_eq!(lines[0]["settings"]["games"], 4);
    let last = lines.last().unwrap();
    assert_eq!(last["event"], "run_finished", "{last}");
    assert_eq!(last["exit_code"], 0);
    assert_eq!(last["reason"], "complete");
    assert_eq!(last["games_played"], 4);
    // Every game_finished is a row of games.csv, in the file's order.
    let mut csv = csv::Reader::from_path(out.join("games.csv")).unwrap();
    let header: Vec<String> = csv.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(header, kalaha::results::CSV_COLUMNS);
    let rows: Vec<csv::StringRecord> = csv.records().map(Result::unwrap).collect();
    let finished = of(&lines, "game_finished");
    assert_eq!(finished.len(), rows.len());
    assert_eq!(rows.len(), 4);
    for (event, row) in finished.iter().zip(&rows) {
        assert_eq!(fields(event).len(), header.len(), "{event}");
        for (column, cell) in header.iter().zip(row.iter()) {
            let value = match &event[column.as_str()] {
                Value::String(s) => s.clone(),
                Value::Null => String::new(),
                other => other.to_string(),
            };
            assert_eq!(
                value,
                kalaha::results::from_text_cell(cell),
                "{column}: {event}"
            );
        }
    }
    // Each game started before it finished.
    let position = |event: &str, game: &Value| {
        lines
            .iter()
            .position(|l| l["event"] == event && l["game"] == *game)
            .unwrap_or_else(|| panic!("no {event} of {game}"))
    };
    for f in &finished {
        assert!(position("game_started", &f["game"]) < position("game_finished", &f["game"]));
    }
    let standings = of(&lines, "standings");
    let at_end: Vec<bool> = standings.iter().map(|s| s["at_end"] == true).collect();
    assert_eq!(
        at_end,
        [false, false, true],
        "every 2 games, and at the end"
    );
    // The repeated pair is left out of the statistics.
    assert_eq!(standings[2]["games"], 2);
    assert_eq!(standings[2]["rows"].as_array().unwrap().len(), 2);
    let warnings = of(&lines, "warning");
    assert!(
        warnings.iter().any(|w| w["message"]
            .as_str()
            .unwrap()
            .contains("repeated an earlier game")),
        "{warnings:?}"
    );
    // The warnings are those printed.
    let stderr = String::from_utf8_lossy(&o.stderr);
    for w in &warnings {
        let message = w["message"].as_str().unwrap();
        assert!(stderr.contains(&format!("warning: {message}")), "{message}");
    }
    let mut seen = check_documented(&lines);
    // An SPRT's stream adds its events and the `sprt` of `run_started`.
    let sprt = sprt_to_stdout(tmp.path());
    for (name, fields) in check_documented(&sprt) {
        seen.entry(name).or_default().extend(fields);
    }
    for (name, fields) in documented() {
        // An error's message and an engine's fault are not in these runs.
        // A field the docs say may be absent need not be in these runs (an SPRT's
        // estimates depend on how its games went).
        let optional = optional_fields(&name);
        let missing: Vec<_> = fields
            .difference(seen.get(&name).unwrap_or(&BTreeSet::new()))
            .filter(|f| !optional.contains(*f))
            .cloned()
            .collect();
        assert!(
            missing.is_empty(),
            "{name}: documented fields {missing:?} never written"
        );
    }
}

/// `kalaha sprt --events -`, checked: standard output holds JSON lines alone, the text for
/// people is on standard error; a `sprt_status` a line of `sprt.csv`, the verdict that of
/// `sprt-result.toml`. Returns the lines.
fn sprt_to_stdout(dir: &Path) -> Vec<Value> {
    let out = dir.join("sprt");
    let o = run(&[
        "sprt",
        "--engine",
        "greedy",
        "--engine",
        "random",
        "--elo0",
        "0",
        "--elo1",
        "50",
        "--model",
        "logistic",
        "--move-time",
        "10ms",
        "--out",
        out.to_str().unwrap(),
        "--events",
        "-",
    ]);
    let stdout = String::from_utf8(o.stdout.clone()).unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let lines = parse(&stdout);
    assert!(stderr.contains("starting SPRT of greedy (new)"), "{stderr}");
    assert!(stderr.contains("H1 accepted"), "{stderr}");
    assert_eq!(lines[0]["event"], "run_started");
    assert_eq!(lines[0]["sprt"]["elo1"], 50.0);
    let csv = std::fs::read_to_string(out.join("sprt.csv")).unwrap();
    let pairs: Vec<&str> = csv.lines().skip(1).collect();
    let status = of(&lines, "sprt_status");
    assert_eq!(status.len(), pairs.len());
    for (s, line) in status.iter().zip(&pairs) {
        let cells: Vec<&str> = line.split(',').collect();
        assert_eq!(s["pairs"].to_string(), cells[0]);
        assert_eq!(s["games"].to_string(), cells[1]);
        // The games of the pairs counted.
        assert_eq!(s["games"], 2 * s["pairs"].as_u64().unwrap(), "{s}");
        let penta: Vec<String> = (0..5).map(|i| s["penta"][i].to_string()).collect();
        assert_eq!(penta, cells[2..7]);
        assert_eq!(format!("{:.4}", s["llr"].as_f64().unwrap()), cells[7]);
    }
    // Each pair's status follows the game that completed it.
    for (i, line) in lines.iter().enumerate() {
        if line["event"] == "sprt_status" {
            let finished = of(&lines[..i], "game_finished").len() as u64;
            assert!(finished >= line["games"].as_u64().unwrap(), "{line}");
        }
    }
    let last = status.last().unwrap();
    assert_eq!(
        (last["ended"].clone(), last["accepted"].clone()),
        (true.into(), "H1".into())
    );
    let verdict = of(&lines, "verdict");
    assert_eq!(verdict.len(), 1);
    let saved: toml::Table = std::fs::read_to_string(out.join("sprt-result.toml"))
        .unwrap()
        .parse()
        .unwrap();
    for (key, value) in &saved {
        let json = serde_json::to_value(value).unwrap();
        assert_eq!(verdict[0][key.as_str()], json, "{key}");
    }
    assert_eq!(verdict[0]["accepted"], "H1");
    let end = lines.last().unwrap();
    assert_eq!(end["event"], "run_finished");
    assert_eq!(
        (end["exit_code"].clone(), end["reason"].clone()),
        (0.into(), "h1_accepted".into())
    );
    // Resumed after its verdict, the test plays nothing: its verdict again, and the end.
    let again = dir.join("again.jsonl");
    let o = run(&[
        "sprt",
        "--resume",
        out.to_str().unwrap(),
        "-q",
        "--events",
        again.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let resumed = read(&again);
    let names: Vec<&str> = resumed
        .iter()
        .map(|l| l["event"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["verdict", "run_finished"], "{resumed:?}");
    assert_eq!(resumed[0]["verdict"], verdict[0]["verdict"]);
    lines
}

/// A resumed run says so, with the games already done, and its events are the games it
/// plays.
#[test]
fn a_resumed_run_says_how_many_games_were_done() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let o = run(&[
        "match",
        "--engine",
        "first",
        "--engine",
        "random",
        "--games",
        "6",
        "--move-time",
        "10ms",
        "-q",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // Two games of six kept, as if the run had stopped there.
    let keep = |name: &str, lines: usize| {
        let path = out.join(name);
        let text = std::fs::read_to_string(&path).unwrap();
        let kept: Vec<&str> = text.lines().take(lines).collect();
        std::fs::write(&path, kept.join("\n") + "\n").unwrap();
    };
    keep("games.jsonl", 2);
    keep("games.csv", 3);
    let events = out.join("resumed.jsonl");
    let o = run(&[
        "tournament",
        "--resume",
        out.to_str().unwrap(),
        "-q",
        "--events",
        events.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let lines = read(&events);
    let start = &lines[0];
    assert_eq!(start["event"], "run_started");
    assert_eq!(start["resumed"], true);
    assert_eq!(start["kind"], "match");
    assert_eq!(start["games_done"], 2);
    assert_eq!(start["games_total"], 6);
    assert_eq!(of(&lines, "game_finished").len(), 4);
    assert_eq!(lines.last().unwrap()["games_played"], 4);
    assert_eq!(of(&lines, "standings").last().unwrap()["games"], 6);
}

/// A reader that closes its end of `--events -` stops the run, which says why and exits 1;
/// the events came as they happened (the first while the run went on).
#[test]
fn a_closed_events_pipe_stops_the_run_and_says_so() {
    use std::io::BufRead;
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let mut child = kalaha()
        .args([
            "match", "--engine", "hard", "--engine", "medium", "--games", "20",
        ])
        .args(["--move-time", "50ms", "-j", "1", "--events", "-", "--out"])
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(
        first.starts_with(r#"{"v":1,"event":"run_started","#),
        "{first}"
    );
    assert!(child.try_wait().unwrap().is_none(), "the run goes on");
    // The reading end is closed here.
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(
            "failed to write the events to standard output: Broken pipe (os error 32) (the \
             program reading them closed its end of the pipe)"
        ),
        "{err}"
    );
    assert!(err.contains("`kalaha match --resume"), "{err}");
    assert!(out.join("games.jsonl").exists());
}

/// A command that fails before its games start (an engine that exits before its `hello`)
/// ends its stream with the error.
#[test]
fn an_error_before_the_games_is_the_streams_last_line() {
    let tmp = tempfile::tempdir().unwrap();
    let events = tmp.path().join("e.jsonl");
    let o = run(&[
        "match",
        "--engine",
        "cmd=/bin/false",
        "--engine",
        "random",
        "--out",
        tmp.path().join("r").to_str().unwrap(),
        "--events",
        events.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let lines = read(&events);
    let end = lines.last().unwrap();
    assert_eq!(end["event"], "run_finished");
    assert_eq!(end["exit_code"], 2);
    assert_eq!(end["reason"], "error");
    assert_eq!(end["games_played"], Value::Null);
    let message = end["message"].as_str().unwrap();
    assert!(
        message.contains("failed to start `/bin/false`"),
        "{message}"
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains(&format!("error: {message}")), "{stderr}");
    assert!(of(&lines, "run_started").is_empty());
}

/// A play session (two engines watched) writes its games too; Ctrl-C ends it, and its
/// stream with it.
#[test]
fn a_play_session_writes_its_games() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("p");
    let events = tmp.path().join("play.jsonl");
    let child = kalaha()
        .args([
            "play", "--engine", "greedy", "--engine", "random", "--pace", "0ms",
        ])
        .args(["--move-time", "10ms", "--out"])
        .arg(&out)
        .arg("--events")
        .arg(&events)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !std::fs::read_to_string(&events).is_ok_and(|t| t.contains("\"game_finished\"")) {
        assert!(std::time::Instant::now() < deadline, "no game finished");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // SAFETY: signals the child this test started and has not reaped.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let lines = read(&events);
    assert_eq!(lines[0]["event"], "run_started");
    assert_eq!(lines[0]["kind"], "play");
    let finished = of(&lines, "game_finished");
    let end = lines.last().unwrap();
    assert_eq!(end["event"], "run_finished");
    assert_eq!(end["games_played"], finished.len());
    assert_eq!(
        crate::common::csv_rows(&out).len(),
        finished.len(),
        "every game recorded is in the stream"
    );
}

/// A stream that cannot be written (a full disk: `/dev/full`) stops the run, which says
/// why, once, and exits 1; the run can be resumed.
#[test]
fn a_full_disk_under_the_stream_stops_the_run_and_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let o = run(&[
        "match",
        "--engine",
        "greedy",
        "--engine",
        "random",
        "--games",
        "4",
        "--move-time",
        "10ms",
        "-q",
        "--events",
        "/dev/full",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    let said = "failed to write the events to /dev/full: the disk is full (No space left on \
                device (os error 28))";
    assert_eq!(err.matches(said).count(), 1, "{err}");
    assert!(err.contains("`kalaha match --resume"), "{err}");
}

/// Each worker of a test that several play writes its stream: the pooled test's status
/// after each pair judged in order, the verdict, and how it ended.
#[test]
fn each_worker_of_a_shared_test_streams_the_pooled_test() {
    let tmp = tempfile::tempdir().unwrap();
    let shared = tmp.path().join("shared");
    let workers: Vec<_> = (1..=2)
        .map(|k| {
            let events = tmp.path().join(format!("w{k}.jsonl"));
            let child = kalaha()
                .args([
                    "sprt",
                    "--engine",
                    "hard",
                    "--engine",
                    "first",
                    "--elo0",
                    "0",
                    "--elo1",
                    "50",
                    "--move-time",
                    "10ms",
                    "-j",
                    "1",
                    "-q",
                    "--workers",
                    "2",
                ])
                .arg("--worker")
                .arg(k.to_string())
                .arg("--shared")
                .arg(&shared)
                .arg("--events")
                .arg(&events)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            (child, events)
        })
        .collect();
    let mut verdicts = Vec::new();
    for (child, events) in workers {
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        let lines = parse(&std::fs::read_to_string(&events).unwrap());
        assert_eq!(lines[0]["event"], "run_started");
        assert_eq!(lines.last().unwrap()["event"], "run_finished");
        let status = of(&lines, "sprt_status");
        assert!(!status.is_empty(), "{lines:?}");
        // The pairs in order, the last one the decision.
        for (i, s) in status.iter().enumerate() {
            assert_eq!(s["pairs"], i as u64 + 1, "{s}");
        }
        assert_eq!(status.last().unwrap()["accepted"], "H1");
        let verdict = of(&lines, "verdict");
        assert_eq!(verdict.len(), 1, "{lines:?}");
        verdicts.push(verdict[0]["verdict"].clone());
    }
    assert_eq!(verdicts[0], verdicts[1]);
}

/// A reader that keeps `--events -` open but stops reading: the lines it does not take do
/// not pile up without end, and the run stops, says why and exits 1, rather than hang.
#[test]
fn a_reader_that_stops_reading_the_events_stops_the_run_and_it_ends() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let mut child = kalaha()
        .args(["match", "--engine", "first", "--engine", "greedy"])
        .args([
            "--opening-plies",
            "0",
            "--games",
            "40000",
            "--pits",
            "4",
            "--seeds",
            "3",
        ])
        .args(["-q", "--events", "-", "--out"])
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The pipe is kept open and never read.
    let stdout = child.stdout.take().unwrap();
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > std::time::Duration::from_secs(120) {
            let _ = child.kill();
            panic!("the run did not end with a reader that stopped reading");
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    drop(stdout);
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(1), "{err}");
    assert!(err.contains("stopped reading"), "{err}");
    assert!(out.join("games.jsonl").exists());
}

/// A pipe that holds one page (4 KiB): kalaha's standard output for a reader that never
/// reads, which it fills within a few games (the run stops it, at 10,000 lines untaken,
/// some seconds later). The test keeps the reading end.
fn small_pipe() -> (std::io::PipeReader, std::io::PipeWriter) {
    use std::os::fd::AsRawFd;
    let (reader, writer) = std::io::pipe().unwrap();
    // SAFETY: F_SETPIPE_SZ on a pipe this test owns.
    let size = unsafe { libc::fcntl(reader.as_raw_fd(), libc::F_SETPIPE_SZ, 4096) };
    assert_eq!(size, 4096, "{}", std::io::Error::last_os_error());
    (reader, writer)
}

/// Bytes written into `pipe` and not read.
fn unread(pipe: &std::io::PipeReader) -> usize {
    use std::os::fd::AsRawFd;
    let mut n: libc::c_int = 0;
    // SAFETY: FIONREAD writes one int, into `n`.
    assert_eq!(
        unsafe { libc::ioctl(pipe.as_raw_fd(), libc::FIONREAD, &mut n) },
        0
    );
    n as usize
}

/// Waits for `child` (60 s at most); its status, and how long it took from `from`.
fn wait_for(
    child: &mut std::process::Child,
    from: std::time::Instant,
) -> (std::process::ExitStatus, std::time::Duration) {
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return (status, from.elapsed());
        }
        if from.elapsed() > std::time::Duration::from_secs(60) {
            let _ = child.kill();
            panic!("kalaha did not end");
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// What a run printed on standard error, without the warnings the machine's load and the
/// opening-less games cause.
fn said(stderr: impl std::io::Read) -> Vec<String> {
    std::io::read_to_string(stderr)
        .unwrap()
        .lines()
        .filter(|l| {
            let load = l.starts_with("warning: the load average");
            let repeats = l.starts_with("warning: ") && l.contains("repeated an earlier game");
            !load && !repeats
        })
        .map(str::to_string)
        .collect()
}

/// A match of `games` fast games into `out`, its events on standard output (`stdout`), its
/// standard error piped.
fn fast_match(out: &Path, games: u64, stdout: impl Into<Stdio>) -> std::process::Child {
    kalaha()
        .args(["match", "--engine", "first", "--engine", "greedy"])
        .args(["--opening-plies", "0", "--pits", "4", "--seeds", "3"])
        .args(["-q", "--events", "-", "--games"])
        .arg(games.to_string())
        .arg("--out")
        .arg(out)
        .stdout(stdout)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Ctrl-C (or SIGTERM) with `--events -` and a reader that keeps the pipe open but has
/// stopped reading: the run ends as interrupted at once (exit 130, the command that
/// resumes it), not after waiting for the reader; the end waits for it
/// `INTERRUPTED_END_WAIT` and says the stream lost its last lines. The folder resumes.
fn a_signal_with_a_stalled_reader_interrupts_the_run_at_once(signal: libc::c_int) {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let (pipe, stdout) = small_pipe();
    let mut child = fast_match(&out, 100000, stdout);
    // The pipe fills: the writer waits, with a line that does not fit (lines are written
    // whole), until the reader takes one.
    let started = std::time::Instant::now();
    let mut last = (0, started);
    while last.0 < 3072 || last.1.elapsed() < std::time::Duration::from_millis(200) {
        let now = unread(&pipe);
        if now != last.0 {
            last = (now, std::time::Instant::now());
        }
        if started.elapsed() > std::time::Duration::from_secs(60)
            || child.try_wait().is_ok_and(|s| s.is_some())
        {
            let _ = child.kill();
            panic!(
                "kalaha did not fill the pipe: {:?}",
                said(child.stderr.take().unwrap())
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let sent = std::time::Instant::now();
    // SAFETY: signals the child this test started and has not reaped.
    unsafe { libc::kill(child.id() as i32, signal) };
    let (status, took) = wait_for(&mut child, sent);
    let err = said(child.stderr.take().unwrap());
    assert_eq!(status.code(), Some(130), "{err:?}");
    // Stopping the engines takes a moment; the reader is waited for 0.5 s, not 5.
    assert!(
        took < kalaha::events::stream::END_WAIT,
        "{took:?} after the signal: {err:?}"
    );
    assert_eq!(err.len(), 3, "{err:?}");
    assert!(
        err[0].starts_with("interrupted: ")
            && err[0].ends_with(" stopped and not recorded. Resume with:"),
        "{err:?}"
    );
    assert_eq!(err[1], format!("  kalaha match --resume {}", out.display()));
    assert_eq!(
        err[2],
        "warning: the program reading the events took none of the last ones within 500ms: it \
         stopped reading; the event stream ends without its last lines"
    );
    drop(pipe);
    // The folder resumes: the resumed run counts the games recorded.
    let recorded = crate::common::csv_rows(&out).len();
    assert!(recorded > 0);
    let events = tmp.path().join("resumed.jsonl");
    let mut resumed = kalaha()
        .args(["match", "-q", "--resume"])
        .arg(&out)
        .arg("--events")
        .arg(&events)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while !std::fs::read_to_string(&events).is_ok_and(|t| t.contains("\"run_started\"")) {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "the resume did not start"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    // SAFETY: as above.
    unsafe { libc::kill(resumed.id() as i32, libc::SIGINT) };
    let (status, _) = wait_for(&mut resumed, std::time::Instant::now());
    let err = said(resumed.stderr.take().unwrap());
    assert_eq!(status.code(), Some(130), "{err:?}");
    let lines = read(&events);
    assert_eq!(lines[0]["event"], "run_started");
    assert_eq!(lines[0]["resumed"], true);
    assert_eq!(lines[0]["games_done"], recorded, "{}", lines[0]);
    assert_eq!(lines.last().unwrap()["reason"], "interrupted");
}

#[test]
fn ctrl_c_with_a_stalled_events_reader_interrupts_the_run_at_once() {
    a_signal_with_a_stalled_reader_interrupts_the_run_at_once(libc::SIGINT);
}

#[test]
fn sigterm_with_a_stalled_events_reader_interrupts_the_run_at_once() {
    a_signal_with_a_stalled_reader_interrupts_the_run_at_once(libc::SIGTERM);
}

/// A reader that stops reading at the end of a run, after the last game: every game is
/// played and recorded, the leaderboards are written, and the error says that only the
/// stream was cut (nothing to resume), once the end has waited `END_WAIT` for the reader;
/// the command fails (exit 1). The lines the reader may still take are whole.
#[test]
fn a_reader_that_stops_reading_at_the_end_cuts_only_the_stream() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let (pipe, stdout) = small_pipe();
    let mut child = fast_match(&out, 40, stdout);
    let (status, _) = wait_for(&mut child, std::time::Instant::now());
    let err = said(child.stderr.take().unwrap());
    assert_eq!(status.code(), Some(1), "{err:?}");
    assert_eq!(
        err,
        [
            "error: the program reading the events took none of the last ones within 5s: it \
          stopped reading; only the event stream was cut: the run ended as it would have, and \
          its results are complete (nothing is left to resume)"
        ]
    );
    assert_eq!(crate::common::csv_rows(&out).len(), 40);
    for file in [
        "standings.csv",
        "h2h.csv",
        "leaderboard.md",
        "leaderboard.html",
    ] {
        assert!(out.join(file).exists(), "{file}");
    }
    let taken = std::io::read_to_string(pipe).unwrap();
    assert!(taken.ends_with('\n'), "{taken}");
    let lines = parse(&taken);
    assert_eq!(lines[0]["event"], "run_started");
    assert!(of(&lines, "run_finished").is_empty());
}

/// Ctrl-C while the end of a run waits for a reader that stopped reading cuts the wait
/// short (0.5 s after it): the run ended on its own, so the command says, as without it,
/// that only the stream was cut (exit 1).
#[test]
fn ctrl_c_cuts_the_end_short_when_the_reader_stopped_reading() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let (_pipe, stdout) = small_pipe();
    let mut child = fast_match(&out, 40, stdout);
    // The leaderboards are written when the run ends, before the stream's end waits.
    let started = std::time::Instant::now();
    while !out.join("leaderboard.html").exists() {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "the run did not end"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    std::thread::sleep(std::time::Duration::from_millis(200));
    let sent = std::time::Instant::now();
    // SAFETY: signals the child this test started and has not reaped.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let (status, took) = wait_for(&mut child, sent);
    let err = said(child.stderr.take().unwrap());
    assert_eq!(status.code(), Some(1), "{err:?}");
    assert!(
        took < kalaha::events::stream::END_WAIT - std::time::Duration::from_secs(1),
        "{took:?} after Ctrl-C: {err:?}"
    );
    assert_eq!(err.len(), 1, "{err:?}");
    let (waited, rest) = err[0]
        .strip_prefix("error: the program reading the events took none of the last ones within ")
        .and_then(|e| e.split_once(": "))
        .unwrap_or_else(|| panic!("{err:?}"));
    assert_ne!(waited, "5s", "{err:?}");
    assert_eq!(
        rest,
        "it stopped reading; only the event stream was cut: the run ended as it would have, \
         and its results are complete (nothing is left to resume)"
    );
    assert_eq!(crate::common::csv_rows(&out).len(), 40);
}

/// A reader that the same Ctrl-C ends (`kalaha ... --events - | reader`, both stopped by
/// the terminal), once kalaha has taken the signal: the run ends as interrupted (exit
/// 130) and says how to resume; the stream's failure, if kalaha wrote after the reader
/// was gone, is a warning.
#[test]
fn ctrl_c_that_ends_the_reader_too_interrupts_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r");
    let mut child = fast_match(&out, 100000, Stdio::piped());
    let mut stdout = child.stdout.take().unwrap();
    let mut taken = 0;
    let mut buf = [0u8; 4096];
    while taken < 64 * 1024 {
        let n = std::io::Read::read(&mut stdout, &mut buf).unwrap();
        assert!(
            n > 0,
            "the stream ended: {:?}",
            said(child.stderr.take().unwrap())
        );
        taken += n;
    }
    let sent = std::time::Instant::now();
    // SAFETY: signals the child this test started and has not reaped.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    // The reader ends once kalaha has taken the signal (it is no longer pending), as a
    // terminal's Ctrl-C ends both at once and the reader takes a while to go.
    let status_file = format!("/proc/{}/status", child.id());
    let pending = || {
        let status = std::fs::read_to_string(&status_file).unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("ShdPnd:"))
            .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
            .is_some_and(|mask| mask & (1 << (libc::SIGINT - 1)) != 0)
    };
    while pending() {
        assert!(
            sent.elapsed() < std::time::Duration::from_secs(60),
            "SIGINT stays pending"
        );
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    drop(stdout);
    let (status, _) = wait_for(&mut child, sent);
    let err = said(child.stderr.take().unwrap());
    assert_eq!(status.code(), Some(130), "{err:?}");
    assert!(err.len() == 2 || err.len() == 3, "{err:?}");
    assert!(err[0].starts_with("interrupted: "), "{err:?}");
    assert_eq!(err[1], format!("  kalaha match --resume {}", out.display()));
    if let Some(warning) = err.get(2) {
        assert_eq!(
            warning,
            "warning: failed to write the events to standard output: Broken pipe (os error \
             32) (the program reading them closed its end of the pipe); the event stream ends \
             without its last lines"
        );
    }
}

/// An SPRT whose reader stops reading at its end saves and prints its verdict
/// (`sprt-result.toml`, its leaderboards) before the command fails for the stream.
#[test]
fn an_sprt_whose_reader_stops_reading_at_the_end_keeps_its_verdict() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("s");
    let (_pipe, stdout) = small_pipe();
    let mut child = kalaha()
        .args(["sprt", "--engine", "greedy", "--engine", "random"])
        .args(["--elo0", "0", "--elo1", "50", "--pits", "4", "--seeds", "3"])
        .args([
            "--move-time",
            "10ms",
            "--seed",
            "1",
            "-q",
            "--events",
            "-",
            "--out",
        ])
        .arg(&out)
        .stdout(stdout)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (status, _) = wait_for(&mut child, std::time::Instant::now());
    let err = said(child.stderr.take().unwrap());
    assert_eq!(status.code(), Some(1), "{err:?}");
    let result: toml::Value =
        toml::from_str(&std::fs::read_to_string(out.join("sprt-result.toml")).unwrap()).unwrap();
    // What the run prints for people goes to standard error with `--events -`.
    assert_eq!(
        err,
        [
            result["verdict"].as_str().unwrap(),
            "error: the program reading the events took none of the last ones within 5s: it \
             stopped reading; only the event stream was cut: the run ended as it would have, \
             and its results are complete (nothing is left to resume)"
        ]
    );
    assert!(out.join("leaderboard.md").exists());
}
