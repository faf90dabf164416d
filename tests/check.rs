//! `kalaha check`: passes for well-behaved engines, fails with a clear report for each fake.

mod common;

use common::{assert_no_survivors, fake_engine, marker};
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

/// Every line is a PASS or FAIL line, then the summary.
fn assert_report_shape(out: &str) {
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines.len() >= 3, "{out}");
    for l in &lines[..lines.len() - 1] {
        assert!(l.starts_with("PASS ") || l.starts_with("FAIL "), "{l}");
    }
    assert!(lines.last().unwrap().contains("steps passed"), "{out}");
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
    assert!(out.contains("PASS option extra_turn_bonus"), "{out}");
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
            "exited with status 3; its last stderr lines: Traceback (most recent call last): | OSError: cannot load weights.bin",
        ),
        (
            "crash-mid-game",
            "FAIL new-game",
            "killed by signal 9 (SIGKILL)",
        ),
        (
            "hang",
            "FAIL unknown-fields-ignored",
            "no move within the deadline",
        ),
        ("non-json", "FAIL go-start", "(received: move 3)"),
        (
            "long-line",
            "FAIL unknown-fields-ignored",
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
