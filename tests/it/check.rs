//! `kalaha check`: passes for well-behaved engines, fails with a clear report for each fake.

use crate::common::{assert_no_survivors, fake_engine, marker};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn check(args: &[&str]) -> (i32, String, Duration) {
    let t = Instant::now();
    let Output { status, stdout, .. } = Command::new(env!("CARGO_BIN_EXE_kalaha"))
        .arg("check")
        .args(args)
        .output()
        .expect("run kalaha check");
    let out = String::from_utf8_lossy(&stdout).into_owned();
    (status.code().unwrap_or(-1), out, t.elapsed())
}

fn check_fake(mode: &str) -> (i32, String, Duration, String) {
    let fake = fake_engine();
    let mark = marker(mode);
    let (code, out, took) = check(&[
        "--startup-timeout",
        "1s",
        "--",
        fake.to_str().unwrap(),
        mode,
        &mark,
    ]);
    (code, out, took, mark)
}

/// The steps of every check of a kalaha engine, whatever it declares and however it fails.
const STEPS: usize = 27;

/// Every line is a PASS, FAIL or SKIP line, then the summary, which counts them: the same
/// number of steps for every engine.
fn assert_report_shape(out: &str) {
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines.len() >= 3, "{out}");
    let (mut passed, mut failed, mut skipped) = (0, 0, 0);
    for l in &lines[..lines.len() - 1] {
        let (kind, rest) = l.split_at(5);
        // The steps not run after the engine died: one line, "N steps more: not run ...".
        let steps = match rest.split_once(" more: ") {
            Some((n, _)) => n
                .trim_end_matches(['s', 't', 'e', 'p', ' '])
                .parse()
                .unwrap(),
            None => 1,
        };
        match kind {
            "PASS " => passed += steps,
            "FAIL " => failed += steps,
            "SKIP " => skipped += steps,
            _ => panic!("{l}"),
        }
    }
    assert_eq!(passed + failed + skipped, STEPS, "{out}");
    let mut summary = format!("{passed} of {STEPS} steps passed");
    if failed > 0 {
        summary.push_str(&format!(", {failed} failed or not run"));
    }
    if skipped > 0 {
        summary.push_str(&format!(", {skipped} skipped (they do not apply)"));
    }
    let last = lines.last().unwrap();
    assert!(last.starts_with(&format!("{summary}: ")), "{out}");
}

#[test]
fn the_good_fake_passes() {
    let (code, out, _, mark) = check_fake("good");
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains("FAIL"), "{out}");
    assert_report_shape(&out);
    assert_no_survivors(None, Some(&mark));
}

#[test]
fn the_python_example_passes() {
    if Command::new("python3").arg("--version").output().is_err() {
        eprintln!("python3 is not installed: skipped");
        return;
    }
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/engines/python/example.py");
    let (code, out, _) = check(&["--", "python3", script]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("PASS options\n"), "{out}");
    assert_report_shape(&out);
}

#[test]
fn builtin_engines_pass() {
    let probe = Command::new(env!("CARGO_BIN_EXE_kalaha"))
        .args(["engine", "first"])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run kalaha engine");
    // An engine reading the end of its input exits with 0.
    if !probe.status.success() {
        eprintln!("kalaha engine first is not available yet: skipped");
        return;
    }
    let names = [
        "random", "first", "greedy", "easy", "medium", "hard", "perfect",
    ];
    std::thread::scope(|s| {
        for name in names {
            s.spawn(move || {
                let (code, out, _) = check(&[&format!("builtin={name}")]);
                assert_eq!(code, 0, "builtin={name}:\n{out}");
                assert_report_shape(&out);
            });
        }
    });
}

/// The fakes that fail: the step that must fail and a piece of its report.
#[test]
fn each_fake_fails_with_a_clear_report() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "crash-at-start",
            "FAIL handshake",
            "exited with status 3; its stderr: Traceback (most recent call last): | OSError: cannot load weights.bin",
        ),
        (
            "crash-mid-game",
            // The moves are checked first: its second game is where it dies.
            "FAIL new-game pits=6 seeds=4 empty_capture=false sweep=owner side=north",
            "killed by signal 9 (SIGKILL)",
        ),
        (
            "hang",
            "FAIL new-game pits=6 seeds=4 empty_capture=false sweep=owner side=south",
            "no move within the deadline",
        ),
        ("non-json", "FAIL go-start", "(received: move 3)"),
        (
            "long-line",
            "FAIL new-game pits=6 seeds=4 empty_capture=false sweep=owner side=south",
            "longer than the limit of 1048576 bytes (received: xxxx",
        ),
        ("illegal-move", "FAIL go-start", "out of range"),
        (
            "pit-as-string",
            "FAIL go-start",
            r#"(received: {"type":"move","pit":"1"})"#,
        ),
        ("ignore-quit", "FAIL quit", "nor on SIGTERM"),
        ("grandchild", "FAIL handshake", "exited with status 0"),
        (
            "silent",
            "FAIL handshake",
            "no hello within the start-up timeout of 1s",
        ),
    ];
    std::thread::scope(|s| {
        for &(mode, step, text) in cases {
            s.spawn(move || {
                let (code, out, took, mark) = check_fake(mode);
                assert_eq!(code, 1, "{mode}:\n{out}");
                assert_report_shape(&out);
                let line = out
                    .lines()
                    .find(|l| l.starts_with(step))
                    .unwrap_or_else(|| panic!("{mode}: no {step:?} line:\n{out}"));
                assert!(line.contains(text), "{mode}: {line}");
                assert!(took < Duration::from_secs(10), "{mode}: took {took:?}");
                assert_no_survivors(None, Some(&mark));
            });
        }
    });
}

#[test]
fn a_hello_without_optional_fields_passes_with_a_warning() {
    let (code, out, _, mark) = check_fake("minimal-hello");
    assert_eq!(code, 0, "{out}");
    assert_report_shape(&out);
    assert!(
        out.lines().any(|l| l
            == "PASS hello-fields (warning: no version; no author; no options (use [] for none))"),
        "{out}"
    );
    assert_no_survivors(None, Some(&mark));
}

#[test]
fn an_empty_name_fails_hello_fields() {
    let (code, out, _, mark) = check_fake("empty-name");
    assert_eq!(code, 1, "{out}");
    assert_report_shape(&out);
    let line = out
        .lines()
        .find(|l| l.starts_with("FAIL hello-fields"))
        .unwrap_or_else(|| panic!("no FAIL hello-fields line:\n{out}"));
    assert!(line.contains("\"name\" is empty"), "{line}");
    // Only that step fails.
    assert_eq!(out.matches("FAIL").count(), 1, "{out}");
    assert_no_survivors(None, Some(&mark));
}

/// A declared option that breaks the engine fails the `options` step, named with its
/// value; the engine is started again for the next steps, and the count stays the same.
#[test]
fn an_option_that_breaks_the_engine_fails_the_options_step_by_name() {
    let (code, out, _, mark) = check_fake("option-breaks");
    assert_eq!(code, 1, "{out}");
    assert_report_shape(&out);
    let failed: Vec<&str> = out.lines().filter(|l| l.starts_with("FAIL")).collect();
    assert_eq!(failed.len(), 1, "{out}");
    assert!(
        failed[0]
            .starts_with("FAIL options: option depth set to 1: a line that is not a JSON object")
            && failed[0].ends_with(" (received: not json)"),
        "{out}"
    );
    assert!(
        out.lines()
            .last()
            .unwrap()
            .starts_with("24 of 27 steps passed, 1 failed or not run, 2 skipped"),
        "{out}"
    );
    assert_no_survivors(None, Some(&mark));
}

#[test]
fn malformed_log_and_info_lines_pass() {
    let (code, out, _, mark) = check_fake("bad-log-info");
    assert_eq!(code, 0, "{out}");
    assert_report_shape(&out);
    assert_no_survivors(None, Some(&mark));
}

#[test]
fn bad_usage_exits_2() {
    let (code, _, _) = check(&[]);
    assert_eq!(code, 2);
    let (code, _, _) = check(&["builtin="]);
    assert_eq!(code, 2);
}

#[test]
fn a_missing_or_non_executable_program_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("engine.txt");
    std::fs::write(&plain, "not a program").unwrap();
    let missing = dir.path().join("nonexistent");
    for (program, text) in [
        (missing.to_str().unwrap(), "does not exist"),
        (plain.to_str().unwrap(), "is not executable"),
        ("kalaha-no-such-engine-x", "was not found in PATH"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_kalaha"))
            .args(["check", "--", program])
            .output()
            .expect("run kalaha check");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{program}: {stderr}");
        assert!(
            stderr.contains(program) && stderr.contains(text),
            "{stderr}"
        );
        assert!(out.stdout.is_empty(), "{program}: no steps are run");
    }
}

#[test]
fn line_limit_is_configurable() {
    let fake = fake_engine();
    let mark = marker("line-limit");
    // The fake's hello is about 90 bytes.
    let (code, out, _) = check(&[
        "--line-limit",
        "50",
        "--",
        fake.to_str().unwrap(),
        "good",
        &mark,
    ]);
    assert_eq!(code, 1, "{out}");
    let line = out
        .lines()
        .find(|l| l.starts_with("FAIL handshake"))
        .unwrap();
    assert!(line.contains("longer than the limit of 50 bytes"), "{line}");
    assert_no_survivors(None, Some(&mark));
    let (code, _, _) = check(&["--line-limit", "0", "builtin=first"]);
    assert_eq!(code, 2);
}

#[test]
fn debug_writes_a_transcript_and_stderr_goes_to_its_log() {
    let dir = tempfile::tempdir().unwrap();
    let transcript = dir.path().join("check.1.transcript");
    let stderr_log = dir.path().join("check.1.log");
    let fake = fake_engine();
    let (code, out, _) = check(&[
        "--debug",
        "--logs",
        dir.path().to_str().unwrap(),
        "--",
        fake.to_str().unwrap(),
        "flood-stderr",
    ]);
    assert_eq!(code, 0, "{out}");
    let text = std::fs::read_to_string(&transcript).unwrap();
    assert!(
        text.contains(r#"> {"type":"hello","protocol":1}"#),
        "{text}"
    );
    assert!(text.contains(r#"< {"type":"move","pit":"#), "{text}");
    assert!(text.contains(r#"> {"type":"quit"}"#), "{text}");
    // The default cap is 10 MiB, far below the 100 MB the fake writes.
    let size = std::fs::metadata(&stderr_log).unwrap().len();
    assert!(size > 10 << 20 && size < (10 << 20) + 200, "{size}");
}

/// The lines sent to the engine in a `--debug` transcript, as JSON.
fn sent(transcript: &std::path::Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(transcript)
        .unwrap()
        .lines()
        .filter_map(|l| l.split_once(" > ").map(|(_, j)| j))
        .map(|j| serde_json::from_str(j).unwrap())
        .collect()
}

#[test]
fn the_spec_options_are_set_and_set_again_after_the_option_steps() {
    let dir = tempfile::tempdir().unwrap();
    let fake = fake_engine();
    let mark = marker("spec-options");
    let (code, out, _) = check(&[
        "--debug",
        "--logs",
        dir.path().to_str().unwrap(),
        &format!("cmd={}", fake.display()),
        "arg=with-options",
        &format!("arg={mark}"),
        "option.depth=7",
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("PASS spec-options\n"), "{out}");
    assert!(out.contains("PASS options\n"), "{out}");
    assert!(out.contains("PASS spec-options-again\n"), "{out}");
    assert_report_shape(&out);
    let sent = sent(&dir.path().join("check.1.transcript"));
    let depth = |m: &serde_json::Value| {
        (m["type"] == "option" && m["name"] == "depth").then(|| m["value"].clone())
    };
    // Right after the handshake, before anything else is asked.
    let first = sent.iter().position(|m| m["type"] == "option").unwrap();
    assert_eq!(sent[first]["value"], 7, "{:?}", sent[first]);
    // The option step tried 1 and 3; the user's 7 is back before the first game.
    let first_game = sent.iter().position(|m| m["type"] == "new_game").unwrap();
    let values: Vec<_> = sent[..first_game].iter().filter_map(depth).collect();
    assert_eq!(values, [7, 1, 3, 7], "{values:?}");
    assert_no_survivors(None, Some(&mark));
    // An option the engine does not declare, or a value out of its range: bad usage.
    for (option, text) in [
        ("option.width=2", "unknown option \"width\""),
        ("option.depth=12", "option.depth=12"),
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_kalaha"))
            .args([
                "check",
                &format!("cmd={}", fake.display()),
                "arg=with-options",
            ])
            .args([format!("arg={mark}").as_str(), option])
            .output()
            .unwrap();
        let (stdout, stderr) = (
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr),
        );
        assert_eq!(o.status.code(), Some(2), "{stdout}{stderr}");
        assert!(!stdout.contains("FAIL"), "{stdout}");
        assert!(
            stderr.contains(text) && stderr.contains("declares"),
            "{stderr}"
        );
    }
    assert_no_survivors(None, Some(&mark));
}

#[test]
fn game_over_tells_the_result_of_the_game_played() {
    use kalaha::rules::{Position, Rules, Side, Sweep};
    let dir = tempfile::tempdir().unwrap();
    let fake = fake_engine();
    let (code, out, _) = check(&[
        "--debug",
        "--logs",
        dir.path().to_str().unwrap(),
        "--",
        fake.to_str().unwrap(),
        "good",
    ]);
    assert_eq!(code, 0, "{out}");
    let sent = sent(&dir.path().join("check.1.transcript"));
    let over = sent
        .iter()
        .find(|m| m["type"] == "game_over" && m["termination"] == "normal")
        .expect("a game_over of a whole game");
    // The fake (south) and the checker (north) both play their lowest legal pit.
    let mut pos = Position::start(Rules::new(3, 2, false, Sweep::Owner).unwrap());
    while !pos.is_over() {
        let pit = pos.legal_moves().next().unwrap();
        pos = pos.play(pit as i64).unwrap();
    }
    let o = pos.outcome().unwrap();
    let result = match o.winner {
        Some(Side::South) => "win",
        Some(Side::North) => "loss",
        None => "draw",
    };
    assert_eq!(over["south"], o.south, "{over}");
    assert_eq!(over["north"], o.north, "{over}");
    assert_eq!(over["result"], result, "{over}");
    // Every game_over names a game that a new_game started, with stores that add up to
    // at most the seeds of its rules.
    for m in sent.iter().filter(|m| m["type"] == "game_over") {
        let started = sent
            .iter()
            .rev()
            .find(|n| n["type"] == "new_game" && n["game"] == m["game"])
            .unwrap();
        let r = &started["rules"];
        let seeds = 2 * r["pits"].as_u64().unwrap() * r["seeds"].as_u64().unwrap();
        let stores = m["south"].as_u64().unwrap() + m["north"].as_u64().unwrap();
        assert!(stores <= seeds, "{m} after {started}");
    }
}

#[test]
fn a_script_in_this_folder_gets_the_command_to_run() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("myeng.py"), "print('hello')\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_kalaha"))
        .current_dir(dir.path())
        .args(["check", "myeng.py"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("give it as ./myeng.py"), "{stderr}");
    assert!(
        stderr.contains("chmod +x ./myeng.py") && stderr.contains("cmd=python3 arg=./myeng.py"),
        "{stderr}"
    );
}

/// An engine that answers a 100 ms move in 220 ms passes the step, whose bound allows a
/// busy machine more, but is told that a run would charge it a loss on time.
#[test]
fn a_move_later_than_a_runs_margin_is_warned_about() {
    let (code, out, _, mark) = check_fake("slow-move");
    assert_eq!(code, 0, "{out}");
    assert_report_shape(&out);
    let line = out
        .lines()
        .find(|l| l.starts_with("PASS go-short-time"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        line.contains("of 100 ms: a run allows 50 ms more by default (--time-margin), so this engine would lose on time"),
        "{line}"
    );
    assert_no_survivors(None, Some(&mark));
}
