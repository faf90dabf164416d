//! Real tournaments with the test engines, each in its own temporary directory: faults,
//! seats, determinism, resume after SIGKILL and Ctrl-C, bad input, and no process left.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::common::{csv_rows, engine, kalaha, run, text};

/// An engine that exits after its hello fails the start-up ping; with no option sent, the
/// error does not speak of options.
#[test]
fn an_engine_that_exits_after_its_hello_fails_at_the_ping() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let mark = crate::common::marker("exit-after-hello");
    let mut args: Vec<String> = vec!["match".into()];
    args.extend(engine("exit-after-hello", "quitter", &mark));
    args.extend(["--engine".into(), "builtin=random".into()]);
    args.extend(["--games".into(), "2".into(), "--out".into()]);
    args.push(out.display().to_string());
    let o = run(&args);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("engine quitter: failed at the ping after its hello"),
        "{err}"
    );
    assert!(!err.contains("options"), "{err}");
}

#[test]
fn faults_end_as_the_right_termination_for_the_right_engine() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let mark = crate::common::marker("faults");
    let mut args: Vec<String> = Vec::new();
    for (mode, name) in [
        ("good", "good"),
        ("illegal-move", "illegal"),
        ("crash-mid-game", "crashy"),
        ("non-json", "garbled"),
        ("hang", "hangs"),
        ("crash-at-start", "dead"),
    ] {
        args.extend(engine(mode, name, &mark));
    }
    // An engine that crashes at start fails the start-up check: exit 2, with its last
    // stderr lines in the error and its log kept in the folder.
    args.insert(0, "tournament".into());
    let o = run(&[
        args.clone(),
        vec!["--out".into(), out.display().to_string()],
    ]
    .concat());
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("dead") && err.contains("cannot load weights.bin"),
        "{err}"
    );
    assert!(err.contains("logs/dead.1.log"), "{err}");
    let log = std::fs::read_to_string(out.join("logs/dead.1.log")).unwrap();
    assert!(log.contains("cannot load weights.bin"), "{log}");
    assert!(!out.join("games.csv").exists());
    args.truncate(args.len() - 5);
    let o = run(&[
        args,
        [
            "--games",
            "2",
            "--move-time",
            "50ms",
            "--time-margin",
            "30ms",
            "-j",
            "2",
            "--quiet",
        ]
        .map(String::from)
        .to_vec(),
        vec!["--out".into(), out.display().to_string()],
    ]
    .concat());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let rows = csv_rows(&out);
    // 5 engines, 10 pairings, 2 games each: the tournament goes on after every fault.
    assert_eq!(rows.len(), 20);
    let expected: BTreeMap<&str, &str> = [
        ("illegal", "illegal_move"),
        ("crashy", "crash"),
        ("garbled", "protocol_error"),
        ("hangs", "timeout"),
    ]
    .into();
    for r in &rows {
        let players = [r["south"].as_str(), r["north"].as_str()];
        let faulty: Vec<&str> = players
            .iter()
            .copied()
            .filter(|p| expected.contains_key(p))
            .collect();
        if faulty.is_empty() {
            panic!("good plays only faulty engines here: {r:?}");
        }
        // The first faulty engine to move in the game loses it, by its own fault.
        let loser_is_south = r["loser"] == "south";
        let loser = if loser_is_south {
            r["south"].as_str()
        } else {
            r["north"].as_str()
        };
        assert!(faulty.contains(&loser), "{r:?}");
        assert_eq!(r["termination"], expected[loser], "{r:?}");
        assert_eq!(
            r["result"],
            if loser_is_south { "0-1" } else { "1-0" },
            "{r:?}"
        );
        assert!(!r["detail"].is_empty());
    }
    // The illegal move's line is in the record.
    let illegal = rows
        .iter()
        .find(|r| r["termination"] == "illegal_move")
        .unwrap();
    assert!(illegal["detail"].contains("\"pit\""), "{illegal:?}");
    crate::common::assert_no_survivors(None, Some(&mark));
}

#[test]
fn seats_alternate_within_pairs_and_the_schedule_is_deterministic() {
    let dir = tempfile::tempdir().unwrap();
    let mark = crate::common::marker("det");
    let mut results = Vec::new();
    for run_no in 0..2 {
        let out = dir.path().join(format!("r{run_no}"));
        let mut args = vec!["tournament".to_string()];
        for name in ["a", "b", "c"] {
            args.extend(engine("good", name, &mark));
        }
        args.extend(
            [
                "--games",
                "4",
                "--opening-plies",
                "4",
                "--seed",
                "11",
                "--id",
                "fixed",
                "--time-margin",
                "5s",
                "-j",
                "2",
                "--quiet",
                "--out",
            ]
            .map(String::from),
        );
        args.push(out.display().to_string());
        let o = run(&args);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        let mut rows = csv_rows(&out);
        rows.sort_by_key(|r| r["game"].split('-').nth(1).unwrap().parse::<u64>().unwrap());
        for r in rows.iter_mut() {
            r.remove("duration_ms");
        }
        results.push(rows);
    }
    assert_eq!(results[0], results[1]);
    let rows = &results[0];
    assert_eq!(rows.len(), 12);
    let ids: Vec<&str> = rows.iter().map(|r| r["game"].as_str()).collect();
    assert_eq!(ids[0], "fixed-1");
    assert_eq!(ids[11], "fixed-12");
    for pair in rows.chunks(2) {
        assert_eq!(pair[0]["pair"], pair[1]["pair"]);
        assert_eq!(pair[0]["south"], pair[1]["north"]);
        assert_eq!(pair[0]["north"], pair[1]["south"]);
        assert_eq!(pair[0]["opening"], pair[1]["opening"]);
        assert_eq!(pair[0]["opening"].split(' ').count(), 4);
    }
    crate::common::assert_no_survivors(None, Some(&mark));
}

fn spawn(args: &[String]) -> Child {
    kalaha()
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn wait_for_rows(out: &Path, at_least: usize, limit: Duration) {
    let end = Instant::now() + limit;
    while Instant::now() < end {
        let n = std::fs::read_to_string(out.join("games.csv"))
            .map(|t| t.lines().count())
            .unwrap_or(0);
        if n > at_least {
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn resume_after_sigkill_plays_every_scheduled_game_exactly_once() {
    let games: usize = if cfg!(debug_assertions) { 60 } else { 300 };
    let dir = tempfile::tempdir().unwrap();
    let mark = crate::common::marker("resume");
    let base = |out: &Path| {
        let mut args = vec!["tournament".to_string()];
        args.extend(engine("good", "a", &mark));
        args.extend(engine("good", "b", &mark));
        args.extend(
            [
                "--opening-plies",
                "2",
                "--seed",
                "3",
                "--id",
                "kill",
                "--time-margin",
                "5s",
                "-j",
                "2",
                "--quiet",
            ]
            .map(String::from),
        );
        args.extend(["--games".into(), games.to_string()]);
        args.extend(["--out".into(), out.display().to_string()]);
        args
    };
    let killed = dir.path().join("killed");
    let whole = dir.path().join("whole");
    // Kill it twice at different moments, then let it finish.
    let mut child = spawn(&base(&killed));
    wait_for_rows(&killed, games / 5, Duration::from_secs(20));
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let after_kill = csv_rows(&killed).len();
    assert!(
        after_kill > 0 && after_kill < games,
        "killed after {after_kill} games"
    );
    // A torn row, as if the machine died mid-write.
    {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(killed.join("games.csv"))
            .unwrap();
        write!(f, "kill-999,1,1,a,b,,1-").unwrap();
    }
    let resume_args: Vec<String> = [
        "tournament",
        "--resume",
        &killed.display().to_string(),
        "-j",
        "2",
        "--quiet",
    ]
    .map(String::from)
    .to_vec();
    let mut child = kalaha()
        .args(&resume_args)
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_rows(&killed, games / 2, Duration::from_secs(20));
    child.kill().unwrap();
    child.wait().unwrap();
    let o = kalaha().args(&resume_args).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));

    let o = run(&base(&whole));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));

    let strip = |dir: &Path| {
        let mut rows = csv_rows(dir);
        for r in rows.iter_mut() {
            r.remove("duration_ms");
        }
        rows
    };
    let a = strip(&killed);
    let ids: Vec<&str> = a.iter().map(|r| r["game"].as_str()).collect();
    let unique: BTreeSet<&str> = ids.iter().copied().collect();
    assert_eq!(ids.len(), games, "every scheduled game once");
    assert_eq!(unique.len(), games, "no game id twice");
    let expected: BTreeSet<String> = (1..=games).map(|n| format!("kill-{n}")).collect();
    assert_eq!(
        unique,
        expected.iter().map(String::as_str).collect::<BTreeSet<_>>()
    );
    // The same games as an uninterrupted run (the engines are deterministic).
    let key = |rows: Vec<BTreeMap<String, String>>| -> BTreeSet<Vec<(String, String)>> {
        rows.into_iter().map(|r| r.into_iter().collect()).collect()
    };
    assert_eq!(key(a), key(strip(&whole)));
    // games.jsonl holds the same ids, once each.
    let jsonl = std::fs::read_to_string(killed.join("games.jsonl")).unwrap();
    let mut json_ids: Vec<String> = jsonl
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["game"].to_string())
        .collect();
    json_ids.sort();
    json_ids.dedup();
    assert_eq!(json_ids.len(), games);
    assert_eq!(jsonl.lines().count(), games);
    // Killed referees leave engines with a closed input: they exit by themselves.
    crate::common::assert_no_survivors(None, Some(&mark));
}

/// Ctrl-C, and SIGTERM from a cluster scheduler, stop the run cleanly.
fn stops_cleanly_on(signal: i32, name: &str) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let mark = crate::common::marker(name);
    let mut args = vec!["tournament".to_string()];
    args.extend(engine("good", "a", &mark));
    args.extend(engine("hang", "h", &mark));
    args.extend(
        [
            "--games",
            "40",
            "--move-time",
            "300ms",
            "-j",
            "2",
            "--quiet",
            "--out",
        ]
        .map(String::from),
    );
    args.push(out.display().to_string());
    let child = spawn(&args);
    std::thread::sleep(Duration::from_millis(800));
    // SAFETY: sending a signal to our own child has no memory-safety preconditions.
    unsafe {
        libc::kill(child.id() as i32, signal);
    }
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--resume"), "{err}");
    let rows = csv_rows(&out);
    assert!(rows.len() < 40);
    assert!(rows.iter().all(|r| r["termination"] != "interrupted"));
    crate::common::assert_no_survivors(None, Some(&mark));
}

#[test]
fn ctrl_c_stops_cleanly_and_prints_the_resume_command() {
    stops_cleanly_on(libc::SIGINT, "sigint");
}

#[test]
fn sigterm_stops_cleanly_like_ctrl_c() {
    stops_cleanly_on(libc::SIGTERM, "sigterm");
}

#[test]
fn bad_input_is_refused_before_any_game() {
    let dir = tempfile::tempdir().unwrap();
    let mark = crate::common::marker("bad");
    let out = dir.path().join("r");
    let out_args = vec!["--out".to_string(), out.display().to_string()];
    let good2 = [engine("good", "a", &mark), engine("good", "b", &mark)].concat();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec!["--engine".into(), "cmd=/no/such/engine".into()],
            "does not exist",
        ),
        (
            [
                good2.clone(),
                engine("good", "c", &mark),
                vec!["option.depth=3".into()],
            ]
            .concat(),
            "unknown option",
        ),
        (
            [good2.clone(), vec!["--pits".into(), "0".into()]].concat(),
            "pits",
        ),
        (
            [
                good2.clone(),
                vec![
                    "--openings".into(),
                    dir.path().join("o.txt").display().to_string(),
                ],
            ]
            .concat(),
            "line 2",
        ),
        (
            [good2.clone(), vec!["--engine".into(), "bogus=1".into()]].concat(),
            "unknown key",
        ),
        (
            [
                good2.clone(),
                vec!["--engine".into(), "builtin=nosuch".into()],
            ]
            .concat(),
            "built-ins: random, first",
        ),
        (
            [
                good2.clone(),
                vec![
                    "--engine".into(),
                    "cmd=./bad.py".into(),
                    "dir=/no/such/dir".into(),
                ],
            ]
            .concat(),
            "working directory \"/no/such/dir\" does not exist",
        ),
        (
            [
                good2.clone(),
                vec![
                    "--engine".into(),
                    "builtin=first".into(),
                    "name=a\nb".into(),
                ],
            ]
            .concat(),
            "cannot be shown safely",
        ),
        (
            [good2.clone(), vec!["--concurrency".into(), "0".into()]].concat(),
            "at least 1",
        ),
        (
            [good2.clone(), vec!["--shard".into(), "1/2".into()]].concat(),
            "--shard: needs an id",
        ),
    ];
    std::fs::write(dir.path().join("o.txt"), "3 1\n3 9\n").unwrap();
    for (args, needle) in cases {
        let o = run(&[vec!["tournament".to_string()], args, out_args.clone()].concat());
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(needle), "{needle:?} not in {err}");
        assert!(!out.join("games.csv").exists());
    }
    // --resume refuses, by name, the flags that would change the tournament.
    for flag in [&["--games", "20"][..], &["--pits", "4"], &["--gauntlet"]] {
        let o = run(&[
            &["tournament", "--resume", &out.display().to_string()][..],
            flag,
        ]
        .concat()
        .iter()
        .map(|s| s.to_string())
        .collect::<Vec<_>>());
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(flag[0]), "{flag:?} not in {err}");
    }
    crate::common::assert_no_survivors(None, Some(&mark));
}

#[test]
fn show_prints_a_recorded_game() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let mark = crate::common::marker("show");
    let args = [
        vec!["match".to_string()],
        engine("good", "a", &mark),
        engine("good", "b", &mark),
        [
            "--quiet",
            "--games",
            "2",
            "--id",
            "s",
            "--time-margin",
            "5s",
            "--out",
        ]
        .map(String::from)
        .to_vec(),
        vec![out.display().to_string()],
    ]
    .concat();
    let o = run(&args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = kalaha()
        .args(["show", &out.display().to_string(), "s-2"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let s = String::from_utf8_lossy(&o.stdout);
    assert!(s.contains("b (south) vs a (north)"), "{s}");
    assert!(s.contains("south sows pit 1"), "{s}");
    assert!(s.contains("game over"), "{s}");
    let o = kalaha()
        .args(["show", &out.display().to_string(), "s-99"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    // The error says which games there are, so that the next try names one.
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("it holds 2 games, numbered 1 to 2 (ids s-1 to s-2)"),
        "{err}"
    );
    // Without a game, as its help says, the games are listed, one line each.
    let o = kalaha()
        .current_dir(dir.path())
        .args(["show", "r"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let listed = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<&str> = listed.lines().collect();
    assert_eq!(lines.len(), 4, "{listed}");
    let words = |l: &str| l.split_whitespace().map(String::from).collect::<Vec<_>>();
    assert_eq!(
        words(lines[0]),
        ["#", "game", "south", "north", "result", "end", "sowings"]
    );
    assert_eq!(words(lines[1])[..4], ["1", "s-1", "a", "b"]);
    assert_eq!(words(lines[2])[..4], ["2", "s-2", "b", "a"]);
    assert_eq!(
        lines[3],
        "2 games: `kalaha show r 1` replays one (by number or id), --serve browses them"
    );
    // Numbers with gaps (a shard's games) are listed, not given as a range.
    let jsonl = out.join("games.jsonl");
    let text_before = std::fs::read_to_string(&jsonl).unwrap();
    std::fs::write(
        &jsonl,
        text_before.replace("\"number\":2,", "\"number\":5,"),
    )
    .unwrap();
    let o = kalaha()
        .args(["show", &out.display().to_string(), "s-99"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("it holds 2 games, numbered 1, 5 (ids"),
        "{err}"
    );
    crate::common::assert_no_survivors(None, Some(&mark));
}

/// A game lost by a fault is shown ending with who lost and why, in that order.
#[test]
fn show_says_who_lost_a_game_by_a_fault_and_why() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let mark = crate::common::marker("show-fault");
    let args = [
        vec!["match".to_string()],
        engine("illegal-move", "cheat", &mark),
        engine("good", "fair", &mark),
        ["--quiet", "--games", "2", "--time-margin", "5s", "--out"]
            .map(String::from)
            .to_vec(),
        vec![out.display().to_string()],
    ]
    .concat();
    let o = run(&args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = kalaha()
        .args(["show", &out.display().to_string(), "1"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let s = String::from_utf8_lossy(&o.stdout);
    assert!(s.contains("\ncheat lost: illegal move"), "{s}");
    crate::common::assert_no_survivors(None, Some(&mark));
}

#[test]
fn a_folder_that_is_not_a_results_folder_is_named_for_what_it_is() {
    let dir = tempfile::tempdir().unwrap();
    // A name with an escape sequence: shown escaped, never sent to the terminal raw.
    let missing = dir.path().join("gone\x1b]0;owned\x07\nforged line");
    let file = dir.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let cases: [(&[&str], &std::path::Path, &[&str], &str); 5] = [
        (&["show"], &missing, &["1"], "does not exist"),
        (&["show"], &file, &["1"], "is not a folder"),
        (&["show"], &empty, &["--serve"], "holds no games.jsonl"),
        (&["analyze"], &missing, &[], "does not exist"),
        (
            &["tournament", "--resume"],
            &empty,
            &[],
            "holds no tournament.toml",
        ),
    ];
    for (command, folder, after, says) in cases {
        let o = kalaha()
            .args(command)
            .arg(folder)
            .args(after)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{command:?} {}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(says), "{command:?}: {err}");
        assert!(!err.contains('\x1b') && !err.contains('\x07'), "{err:?}");
        // A newline of a path cannot forge a line of its own.
        assert_eq!(err.trim_end().lines().count(), 1, "{err:?}");
    }
    let o = kalaha()
        .arg("show")
        .arg(&missing)
        .arg("1")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("gone\\u{1b}]0;owned\\u{7}"), "{err}");
}

#[test]
fn a_second_ctrl_c_exits_at_once_without_leaving_engines() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let mark = crate::common::marker("sigint2");
    let mut args = vec!["tournament".to_string()];
    // This engine ignores quit, the end of its input and SIGTERM: a polite stop takes
    // seconds, the second Ctrl-C must not wait for it.
    args.extend(engine("ignore-quit", "stubborn", &mark));
    args.extend(engine("hang", "h", &mark));
    args.extend(
        [
            "--games",
            "40",
            "--move-time",
            "2s",
            "-j",
            "2",
            "--quiet",
            "--out",
        ]
        .map(String::from),
    );
    args.push(out.display().to_string());
    let child = spawn(&args);
    std::thread::sleep(Duration::from_millis(600));
    let t = Instant::now();
    for _ in 0..2 {
        // SAFETY: sending a signal to our own child has no memory-safety preconditions.
        unsafe {
            libc::kill(child.id() as i32, libc::SIGINT);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", text(&o));
    assert!(
        t.elapsed() < Duration::from_millis(900),
        "took {:?}",
        t.elapsed()
    );
    crate::common::assert_no_survivors(None, Some(&mark));
}

#[test]
fn shards_together_play_the_whole_schedule() {
    let dir = tempfile::tempdir().unwrap();
    let mark = crate::common::marker("shard");
    let run_one = |name: &str, extra: &[&str]| {
        let out = dir.path().join(name);
        let mut args = vec!["tournament".to_string(), "--gauntlet".into()];
        for e in ["a", "b", "c"] {
            args.extend(engine("good", e, &mark));
        }
        args.extend(
            [
                "--games",
                "6",
                "--opening-plies",
                "3",
                "--id",
                "sh",
                "--time-margin",
                "5s",
                "--quiet",
            ]
            .map(String::from),
        );
        args.extend(extra.iter().map(|s| s.to_string()));
        args.extend(["--out".into(), out.display().to_string()]);
        let o = run(&args);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        let mut rows = csv_rows(&out);
        for r in rows.iter_mut() {
            r.remove("duration_ms");
        }
        rows
    };
    let whole = run_one("whole", &[]);
    // A gauntlet: engine a plays b and c, 6 games each.
    assert_eq!(whole.len(), 12);
    assert!(whole.iter().all(|r| r["south"] == "a" || r["north"] == "a"));
    let mut merged = Vec::new();
    for k in 1..=3 {
        let part = run_one(&format!("s{k}"), &["--shard", &format!("{k}/3")]);
        assert_eq!(part.len(), 4);
        merged.extend(part);
    }
    let set = |rows: Vec<BTreeMap<String, String>>| -> BTreeSet<Vec<(String, String)>> {
        rows.into_iter().map(|r| r.into_iter().collect()).collect()
    };
    assert_eq!(set(merged), set(whole));
    crate::common::assert_no_survivors(None, Some(&mark));
}

#[test]
fn clocks_per_engine_time_controls_and_restarts() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let mark = crate::common::marker("clock");
    let mut args = vec!["match".to_string()];
    args.extend(engine("good", "a", &mark));
    args.extend(engine("hang", "h", &mark));
    // The hanging engine gets its own, short clock; the other a long one.
    args.push("tc=200ms+0ms".into());
    args.extend(
        [
            "--clock",
            "60s+1s",
            "--time-margin",
            "20ms",
            "--games",
            "2",
            "--restart",
            "always",
            "--quiet",
            "--out",
        ]
        .map(String::from),
    );
    args.push(out.display().to_string());
    let t = Instant::now();
    let o = run(&args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(t.elapsed() < Duration::from_secs(10));
    let rows = csv_rows(&out);
    assert_eq!(rows.len(), 2);
    for r in &rows {
        let loser = if r["loser"] == "south" {
            &r["south"]
        } else {
            &r["north"]
        };
        assert_eq!(
            (r["termination"].as_str(), loser.as_str()),
            ("timeout", "h")
        );
        let ms: u64 = r["duration_ms"].parse().unwrap();
        assert!((200..3000).contains(&ms), "{r:?}");
    }
    // With --restart always every game has fresh instances: 2 checked at start-up, then
    // 2 per game (the start-up ones are used by the first game).
    let logs = std::fs::read_dir(out.join("logs")).unwrap().count();
    assert_eq!(logs, 4);
    let saved = std::fs::read_to_string(out.join("tournament.toml")).unwrap();
    assert!(saved.contains("tc = \"200ms+0ms\""), "{saved}");
    assert!(saved.contains("tc = \"1m+1s\""), "{saved}");
    crate::common::assert_no_survivors(None, Some(&mark));
}

#[test]
fn config_files_and_builtin_engines() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let config = dir.path().join("t.toml");
    std::fs::write(
        &config,
        r#"
games = 4
tc = "50ms"
opening_plies = 2
seed = 5
[rules]
pits = 5
seeds = 3
[[engine]]
builtin = "first"
[[engine]]
builtin = "random"
name = "rnd"
options = { seed = 7 }
"#,
    )
    .unwrap();
    let o = kalaha()
        .args(["tournament", "--config"])
        .arg(&config)
        .args(["--games", "2", "--time-margin", "5s", "--quiet", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let rows = csv_rows(&out);
    // The command line's --games wins over the file's.
    assert_eq!(rows.len(), 2);
    let names: BTreeSet<&str> = rows.iter().map(|r| r["south"].as_str()).collect();
    assert_eq!(names, BTreeSet::from(["first", "rnd"]));
    assert!(
        rows.iter().all(|r| r["termination"] == "normal"),
        "{rows:?}"
    );
    let saved = std::fs::read_to_string(out.join("tournament.toml")).unwrap();
    assert!(
        saved.contains("pits = 5") && saved.contains("seed = 7"),
        "{saved}"
    );
    let o = kalaha()
        .args([
            "match", "first", "first", "--games", "2", "--quiet", "--out",
        ])
        .arg(dir.path().join("m"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let rows = csv_rows(&dir.path().join("m"));
    let first_game = rows.iter().find(|r| r["game"].ends_with("-1")).unwrap();
    assert_eq!(first_game["south"], "first");
    assert_eq!(first_game["north"], "first-2");
}

#[test]
fn a_tournament_writes_its_ratings_and_leaderboards() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let mark = crate::common::marker("reports");
    let mut args: Vec<String> = vec!["tournament".into()];
    args.extend(engine("good", "alpha", &mark));
    args.extend([
        "--engine".into(),
        "builtin=random".into(),
        "name=beta".into(),
    ]);
    args.extend(
        [
            "--games",
            "6",
            "--move-time",
            "200ms",
            "--report-every",
            "2",
            "--seed",
            "3",
            "--opening-plies",
            "2",
            "--out",
        ]
        .map(String::from),
    );
    args.push(out.display().to_string());
    let o = run(&args);
    assert!(o.status.success(), "{}", text(&o));
    // The final table has an Elo column; the files are in the folder.
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains(" elo "), "{stdout}");
    for f in [
        "standings.csv",
        "h2h.csv",
        "leaderboard.md",
        "leaderboard.html",
    ] {
        assert!(out.join(f).exists(), "{f} missing");
    }
    let standings = std::fs::read_to_string(out.join("standings.csv")).unwrap();
    let mut lines = standings.lines();
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("rank,engine,games,wins,draws,losses,score,elo,elo_error")
    );
    let games: u64 = lines
        .map(|l| l.split(',').nth(2).unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(games, 12, "{standings}");
    crate::common::assert_no_survivors(None, Some(&mark));
}

#[test]
fn runs_started_together_get_their_own_default_folders() {
    let dir = tempfile::tempdir().unwrap();
    let start = |b: &str| {
        kalaha()
            .current_dir(dir.path())
            .args(["match", "first", b, "--games", "2", "--quiet"])
            .spawn()
            .unwrap()
    };
    let (mut a, mut b) = (start("greedy"), start("random"));
    assert!(a.wait().unwrap().success() && b.wait().unwrap().success());
    let folders: Vec<_> = std::fs::read_dir(dir.path().join("results"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(folders.len(), 2, "{folders:?}");
    for f in folders {
        assert_eq!(csv_rows(&f).len(), 2);
    }
}

#[test]
fn the_line_limit_is_configurable() {
    let dir = tempfile::tempdir().unwrap();
    let base = [
        "tournament",
        "--engine",
        "builtin=first",
        "--engine",
        "builtin=random",
        "-q",
        "--out",
    ];
    // The engines' hello lines are longer than 40 bytes: they fail their handshake.
    let mut args: Vec<String> = base.map(String::from).to_vec();
    args.extend([
        dir.path().join("a").display().to_string(),
        "--line-limit".into(),
        "40".into(),
    ]);
    let o = run(&args);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("limit of 40 bytes"),
        "{}",
        text(&o)
    );
    let mut args: Vec<String> = base.map(String::from).to_vec();
    args.extend([
        dir.path().join("b").display().to_string(),
        "--line-limit".into(),
        "100000".into(),
    ]);
    let o = run(&args);
    assert!(o.status.success(), "{}", text(&o));
    let saved = std::fs::read_to_string(dir.path().join("b/tournament.toml")).unwrap();
    assert!(saved.contains("line_limit = 100000"), "{saved}");
}

/// A resume runs as many games at once as its run did, unless `--concurrency` says
/// otherwise; two engines resumed are still called a match.
#[test]
fn a_resume_keeps_the_games_at_once_of_its_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r").display().to_string();
    let args = |list: &[&str]| -> Vec<String> { list.iter().map(|s| s.to_string()).collect() };
    let o = run(&args(&[
        "match", "--engine", "first", "--engine", "random", "--games", "4", "-j", "1", "--out",
        &out,
    ]));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = run(&args(&["tournament", "--resume", &out]));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("resuming match:"), "{stdout}");
    assert!(stdout.contains(", 1 at once;"), "{stdout}");
    let o = run(&args(&["tournament", "--resume", &out, "-j", "2"]));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains(", 2 at once;"), "{stdout}");
}

/// A run whose output is closed (`| head -1`) stops, keeps what it recorded and says how
/// to continue, without blaming its results folder.
#[test]
fn a_closed_output_stops_the_run_and_says_how_to_resume() {
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let mut child = kalaha()
        .args(["match", "--engine", "first", "--engine", "random"])
        .args(["--games", "4", "--move-time", "50ms", "--out"])
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.starts_with("starting match"), "{first}");
    // The reading end is closed here, as `head -1` closes it.
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("was its output closed?"), "{err}");
    assert!(
        err.contains(&format!("`kalaha match --resume {}`", out.display())),
        "{err}"
    );
    assert!(!err.contains("failed to write results"), "{err}");
    assert!(out.join("tournament.toml").exists());
}

/// What makes two records of `games.jsonl` the same game: the engines in their seats, the
/// start and every sowing.
fn same_game_key(g: &serde_json::Value) -> (String, String, String, Vec<u64>) {
    (
        g["south"].as_str().unwrap().to_string(),
        g["north"].as_str().unwrap().to_string(),
        g["start"].as_str().unwrap_or("").to_string(),
        g["moves"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["pit"].as_u64().unwrap())
            .collect(),
    )
}

/// An SPRT of two deterministic built-ins with the default openings plays no game twice
/// over 1,000 game pairs: the book's positions, then distinct random ones, never the same
/// opening position twice (with openings drawn at random each time, hundreds of games
/// repeat an earlier one move for move).
#[test]
fn an_sprt_of_deterministic_engines_never_plays_a_game_twice() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    // Bounds this close need far more pairs than the limit: the test plays all 1,000.
    let o = run(&[
        "sprt".into(),
        "--engine".into(),
        "builtin=medium".into(),
        "--engine".into(),
        "builtin=greedy".into(),
        "--elo0".into(),
        "0".into(),
        "--elo1".into(),
        "0.5".into(),
        "--max-games".into(),
        "2000".into(),
        "--move-time".into(),
        "20ms".into(),
        "--out".into(),
        out.display().to_string(),
    ]);
    let text_o = text(&o);
    assert!(
        text_o.contains("book kalah-6x4"),
        "the default book: {text_o}"
    );
    let games = std::fs::read_to_string(out.join("games.jsonl")).unwrap();
    let mut seen = BTreeMap::new();
    let mut openings = BTreeSet::new();
    let mut count = 0;
    for line in games.lines() {
        let g: serde_json::Value = serde_json::from_str(line).unwrap();
        let key = same_game_key(&g);
        let id = g["game"].as_str().unwrap().to_string();
        if let Some(earlier) = seen.insert(key, id.clone()) {
            panic!("game {id} repeats game {earlier} move for move");
        }
        openings.insert(g["opening"].to_string());
        count += 1;
    }
    assert_eq!(count, 2000, "{text_o}");
    assert_eq!(openings.len(), 1000, "one opening a pair");
}

/// On every board with a book in `books/` (with or without empty captures), a run plays
/// that book by default: its start line names the book, and each game pair's opening is a
/// line of it.
#[test]
fn a_run_on_a_board_with_a_book_plays_it_by_default() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("books");
    let mut boards = 0;
    for entry in std::fs::read_dir(&root).unwrap() {
        let path = entry.unwrap().path();
        let Some(name) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".openings"))
        else {
            continue;
        };
        let book = std::fs::read_to_string(&path).unwrap();
        let command = book
            .lines()
            .find(|l| l.starts_with("# kalaha openings "))
            .unwrap();
        let flag = |f: &str| {
            let after = command.split(&format!(" {f} ")).nth(1).unwrap();
            after.split(' ').next().unwrap().to_string()
        };
        let lines: BTreeSet<String> = book
            .lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| l.split('#').next().unwrap().trim().replace(' ', ","))
            .collect();
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("out");
        let mut args: Vec<String> = [
            "match",
            "random",
            "first",
            "--games",
            "4",
            "--move-time",
            "20ms",
            "-j",
            "1",
            "--pits",
            &flag("--pits"),
            "--seeds",
            &flag("--seeds"),
        ]
        .map(String::from)
        .to_vec();
        if command.contains(" --empty-capture ") {
            args.push("--empty-capture".into());
        }
        args.extend(["--out".into(), out.display().to_string()]);
        let o = run(&args);
        assert!(o.status.success(), "{name}: {}", text(&o));
        assert!(
            text(&o).contains(&format!("distinct positions of the book {name}, ")),
            "{name}: {}",
            text(&o)
        );
        let games = std::fs::read_to_string(out.join("games.jsonl")).unwrap();
        assert_eq!(games.lines().count(), 4, "{name}");
        for line in games.lines() {
            let g: serde_json::Value = serde_json::from_str(line).unwrap();
            let opening = g["opening"].to_string();
            let opening = opening.trim_start_matches('[').trim_end_matches(']');
            assert!(lines.contains(opening), "{name}: {opening}");
        }
        boards += 1;
    }
    assert!(boards >= 10, "{boards} books");
}

/// Distinct openings of more than one length: once the positions after one sowing run out,
/// those after two follow, and deterministic engines went through many of them in earlier
/// games. Every game with the moves of an earlier game (same seats, same start) is marked
/// as repeating the first such game, and no other game is.
#[test]
fn a_longer_opening_where_an_earlier_game_went_is_marked_a_repeat() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let o = run(&[
        "match".into(),
        "first".into(),
        "greedy".into(),
        "--opening-plies".into(),
        "1".into(),
        "--games".into(),
        "120".into(),
        "--move-time".into(),
        "50ms".into(),
        "-j".into(),
        "1".into(),
        "--out".into(),
        out.display().to_string(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let games = std::fs::read_to_string(out.join("games.jsonl")).unwrap();
    let mut first = BTreeMap::new();
    let (mut expected, mut marked) = (0, 0);
    for line in games.lines() {
        let g: serde_json::Value = serde_json::from_str(line).unwrap();
        let key = same_game_key(&g);
        let id = g["game"].as_str().unwrap().to_string();
        let earlier = first.get(&key).cloned();
        first.entry(key).or_insert(id.clone());
        assert_eq!(
            g["repeats"].as_str().map(str::to_string),
            earlier,
            "game {id}"
        );
        expected += usize::from(earlier.is_some());
        marked += usize::from(g["repeats"].is_string());
    }
    assert!(
        expected > 0,
        "no game repeated another: the test shows nothing"
    );
    assert_eq!(marked, expected);
    assert!(
        text(&o).contains("repeated an earlier game"),
        "{}",
        text(&o)
    );
}

/// An opening given as a start position: the games start from it, games.jsonl records it,
/// and show and analyze replay the games from it.
#[test]
fn an_opening_given_as_a_position_is_played_recorded_shown_and_analysed() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let openings = tmp.path().join("fair.txt");
    std::fs::write(
        &openings,
        "# a start with one seed moved\n<3,0,0,1,2,3,2,2,2>\n",
    )
    .unwrap();
    let dir = out.display().to_string();
    let o = run(&[
        "match".into(),
        "first".into(),
        "greedy".into(),
        "--pits".into(),
        "3".into(),
        "--seeds".into(),
        "2".into(),
        "--games".into(),
        "2".into(),
        "--openings".into(),
        openings.display().to_string(),
        "--id".into(),
        "p".into(),
        "--out".into(),
        dir.clone(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let games = std::fs::read_to_string(out.join("games.jsonl")).unwrap();
    for line in games.lines() {
        let g: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(g["start"], "<3,0,0,1,2,3,2,2,2>", "{line}");
        assert_eq!(g["opening"], serde_json::json!([]), "{line}");
    }
    let o = kalaha().args(["show", &dir, "p-1"]).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let s = String::from_utf8_lossy(&o.stdout);
    assert!(s.contains("start: <3,0,0,1,2,3,2,2,2>"), "{s}");
    // The board before the first sowing is the start given: south's pits 1 2 3.
    assert!(s.contains("[ 1][ 2][ 3]"), "{s}");
    let o = kalaha().args(["analyze", &dir]).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let rows = std::fs::read_to_string(out.join("analysis.csv")).unwrap();
    let plies: usize = games
        .lines()
        .map(|l| {
            let g: serde_json::Value = serde_json::from_str(l).unwrap();
            g["moves"].as_array().unwrap().len()
        })
        .sum();
    assert_eq!(rows.lines().count(), plies + 1, "{rows}");
}

/// docs/sprt.md shows, for a game limit reached with every pair drawn 1-1 (the same
/// deterministic engine under two names), the verdict the command prints, word for word;
/// and its sample of a stopped test's estimates has the form a decided test prints: the
/// naive Elo, then the median-unbiased one inside its 95% interval, in the test's model.
#[test]
fn the_sprt_guide_shows_the_verdicts_as_printed() {
    let guide = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/sprt.md"))
        .unwrap();
    let shown = |start: &str| -> String {
        guide
            .lines()
            .find(|l| l.starts_with(start))
            .unwrap_or_else(|| panic!("docs/sprt.md shows no line starting {start:?}"))
            .to_string()
    };
    let tmp = tempfile::tempdir().unwrap();
    let sprt = |extra: &[&str]| {
        let mut args: Vec<String> = ["sprt", "--move-time", "10ms", "-q", "--elo0", "0"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        args.extend(extra.iter().map(|s| s.to_string()));
        let o = run(&args);
        let out = String::from_utf8_lossy(&o.stdout).trim_end().to_string();
        (o.status.code(), out)
    };
    let limit = tmp.path().join("limit").display().to_string();
    let (code, out) = sprt(&[
        "--engine",
        "builtin=medium name=new",
        "--engine",
        "builtin=medium name=old",
        "--elo1",
        "5",
        "--max-games",
        "4",
        "--out",
        &limit,
    ]);
    assert_eq!(code, Some(4), "{out}");
    assert_eq!(out, shown("no decision: the game limit was reached"));
    let result = std::fs::read_to_string(Path::new(&limit).join("sprt-result.toml")).unwrap();
    assert!(result.contains("\nelo = 0.0\n"), "{result}");
    // The estimates of a decided test, printed and shown, read alike.
    let decided = tmp.path().join("decided").display().to_string();
    let (code, out) = sprt(&[
        "--engine",
        "builtin=medium option.depth=4 name=new",
        "--engine",
        "builtin=greedy name=old",
        "--elo1",
        "50",
        "--out",
        &decided,
    ]);
    assert_eq!(code, Some(0), "{out}");
    let estimates = |line: &str| -> (f64, f64, f64, f64) {
        let rest = line
            .split("naive nElo ")
            .nth(1)
            .unwrap_or_else(|| panic!("{line}"));
        let (naive, rest) = rest.split_once(" ± ").unwrap();
        let rest = rest.split("; median-unbiased nElo ").nth(1).unwrap();
        let (elo, rest) = rest.split_once(" [").unwrap();
        let (lower, rest) = rest.split_once(", ").unwrap();
        let upper = rest.split(']').next().unwrap();
        let n = |s: &str| {
            s.parse::<f64>()
                .unwrap_or_else(|_| panic!("{s:?} in {line}"))
        };
        (n(naive), n(elo), n(lower), n(upper))
    };
    // The leaderboard gives the same estimate in the same words (from sprt-result.toml,
    // which keeps two decimals: a last digit may differ by one).
    let (_, elo, lower, upper) = estimates(out.lines().last().unwrap());
    let board = std::fs::read_to_string(Path::new(&decided).join("leaderboard.md")).unwrap();
    let said = board
        .lines()
        .find_map(|l| l.split("Median-unbiased Elo: ").nth(1))
        .unwrap_or_else(|| panic!("{board}"));
    let (value, rest) = said.split_once(" normalized Elo (95% interval ").unwrap();
    let (lo, rest) = rest.split_once(" to ").unwrap();
    let hi = rest.split(')').next().unwrap();
    for (shown, printed) in [(value, elo), (lo, lower), (hi, upper)] {
        assert!(shown.starts_with('+') || shown.starts_with('-'), "{said}");
        let shown: f64 = shown.parse().unwrap();
        assert!((shown - printed).abs() <= 0.11, "{said} against {printed}");
    }
    for line in [
        out.lines().last().unwrap().to_string(),
        shown("H1 accepted: new (new) is stronger than old (base)"),
        shown("naive nElo "),
    ] {
        let (_, elo, lower, upper) = estimates(&line);
        assert!(lower < elo && elo < upper, "{line}");
    }
}
