//! Attacks on the referee by hostile engines and careless operators: nothing may crash or
//! hang the referee, escape the engine's isolation, interfere with another engine, or make
//! the results untrue. Each test is one attack and what must happen instead.

use crate::common::{
    assert_no_survivors, csv_rows, engine, fake_engine, kalaha, marker, run, text,
};
use std::path::Path;
use std::time::{Duration, Instant};

fn tournament(args: &[String], out: &Path) -> std::process::Output {
    let mut all = vec!["tournament".to_string()];
    all.extend(args.iter().cloned());
    all.extend(["--quiet", "--out"].map(String::from));
    all.push(out.display().to_string());
    run(&all)
}

fn strings(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

/// Every cell and line of the results, standings and leaderboards of `out`, for checks
/// of what reached them.
fn everything_written(out: &Path) -> String {
    let mut all = String::new();
    for f in [
        "games.csv",
        "games.jsonl",
        "standings.csv",
        "h2h.csv",
        "leaderboard.md",
        "leaderboard.html",
    ] {
        all.push_str(&std::fs::read_to_string(out.join(f)).unwrap_or_default());
    }
    all
}

#[test]
fn a_70_kb_name_with_escape_codes_is_cut_and_cleaned_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let mark = marker("long-name");
    let mut args = vec![
        "--engine".to_string(),
        format!("cmd={}", fake_engine().display()),
        "arg=long-name".into(),
        format!("arg={mark}"),
    ];
    args.extend(strings(&["--engine", "builtin=first", "--games", "4"]));
    let o = tournament(&args, &out);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let rows = csv_rows(&out);
    assert_eq!(rows.len(), 4);
    let name = rows
        .iter()
        .map(|r| r["south"].clone())
        .find(|n| n != "first")
        .unwrap();
    // The title-setting sequence goes whole, not just its escape byte.
    assert_eq!(name, "n".repeat(64));
    assert!(
        text(&o).contains(&format!("its hello name was cut or cleaned to \"{name}\"")),
        "{}",
        text(&o)
    );
    let written = everything_written(&out);
    assert!(!written.contains('\u{1b}') && !written.contains('\u{7}'));
    // Resume and ratings read the names back whole.
    let o = run(&strings(&[
        "tournament",
        "--quiet",
        "--resume",
        out.to_str().unwrap(),
    ]));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = run(&strings(&["ratings", out.to_str().unwrap()]));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(!String::from_utf8_lossy(&o.stdout).contains('\u{1b}'));
    assert_no_survivors(None, Some(&mark));
}

#[test]
fn an_engine_whose_hello_name_cannot_be_shown_is_named_after_its_program_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let args = strings(&[
        "--engine",
        &format!("cmd={}", fake_engine().display()),
        "arg=unshowable-name",
        "--engine",
        "builtin=first",
        "--games",
        "2",
    ]);
    let o = tournament(&args, &out);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let names: Vec<String> = csv_rows(&out).iter().map(|r| r["south"].clone()).collect();
    assert!(names.contains(&"fake_engine".to_string()), "{names:?}");
    assert!(
        text(&o).contains(
            "engine fake_engine: its hello name \"\\u{1b}[31m\\u{202e}\" holds nothing \
             that can be shown; it is named after its program"
        ),
        "{}",
        text(&o)
    );
    assert!(!everything_written(&out).contains('\u{1b}'));
}

/// Run from a terminal, an engine has none: it cannot open `/dev/tty` to write past the
/// cleaning of its text or push keystrokes into the user's shell. `script` gives the run a
/// pseudo-terminal; a shell under it opens `/dev/tty`, so the test has one to take away.
#[test]
fn an_engine_has_no_controlling_terminal() {
    let under_terminal = |command: &str| {
        let o = std::process::Command::new("script")
            .args(["-qec", command, "/dev/null"])
            .stdin(std::process::Stdio::null())
            .output()
            .expect("`script` (util-linux) runs commands under a pseudo-terminal");
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    };
    let shell = under_terminal("sh -c 'exec 3>/dev/tty && echo TTY-OK'");
    assert!(shell.contains("TTY-OK"), "{shell}");

    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let run = under_terminal(&format!(
        "{} match --engine 'cmd={} arg=tty-probe' --engine builtin=first --games 2 \
         --move-time 50ms --out {}",
        env!("CARGO_BIN_EXE_kalaha"),
        fake_engine().display(),
        out.display()
    ));
    let names: Vec<String> = csv_rows(&out).iter().map(|r| r["south"].clone()).collect();
    assert!(
        names.contains(&"fake-tty-none".to_string()),
        "{names:?} {run}"
    );
}

#[test]
fn absurd_times_and_counts_are_refused_before_any_game() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let two = strings(&["--engine", "builtin=first", "--engine", "builtin=random"]);
    let huge = "500000000000years";
    for (extra, needle) in [
        (vec!["--move-time", huge], "--move-time"),
        (vec!["--clock", "1s+500000000000years"], "--clock"),
        (vec!["--clock", "500000000000years+1s"], "--clock"),
        (vec!["--startup-timeout", huge], "--startup-timeout"),
        (vec!["--time-margin", huge], "--time-margin"),
        (vec!["--games", "18446744073709551615"], "--games"),
    ] {
        let args = [two.clone(), strings(&extra)].concat();
        let o = tournament(&args, &out);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(needle), "{extra:?}: {err}");
        assert!(!out.join("games.csv").exists());
    }
    // Three engines and a count that would wrap around.
    let three = [
        two.clone(),
        strings(&[
            "--engine",
            "builtin=greedy",
            "--games",
            "12297829382473034411",
        ]),
    ]
    .concat();
    let o = tournament(&three, &out);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("more than"));
    // A configuration file's time margin too.
    let cfg = dir.path().join("t.toml");
    std::fs::write(&cfg, "time_margin = \"500000000000years\"\n").unwrap();
    let args = [two, strings(&["--config", cfg.to_str().unwrap()])].concat();
    let o = tournament(&args, &out);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("t.toml, time_margin: "));
    // And the checker's own times.
    let o = run(&strings(&["check", "--quit-grace", huge, "builtin=first"]));
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

#[test]
fn an_engines_daemon_dies_with_it_in_tournaments_and_checks() {
    let dir = tempfile::tempdir().unwrap();
    let mark = marker("daemon");
    let mut args = engine("daemon", "d", &mark);
    args.extend(strings(&["--engine", "builtin=first", "--games", "2"]));
    let o = tournament(&args, &dir.path().join("r"));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_no_survivors(None, Some(&mark));
    let mark = marker("daemon-check");
    let o = run(&[
        "check".to_string(),
        "--".into(),
        fake_engine().display().to_string(),
        "daemon".into(),
        mark.clone(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_no_survivors(None, Some(&mark));
}

#[test]
fn everything_an_engine_started_dies_with_a_killed_referee() {
    let dir = tempfile::tempdir().unwrap();
    let mark = marker("daemon-orphan");
    let mut args = vec!["tournament".to_string(), "--quiet".into()];
    args.extend(engine("daemon", "d", &mark));
    args.extend(engine("hang", "h", &mark));
    args.extend(strings(&["--move-time", "20s", "--games", "2", "--out"]));
    args.push(dir.path().join("r").display().to_string());
    let mut referee = kalaha()
        .args(&args)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait for the daemon (its own session, not the engine's process group).
    let end = Instant::now() + Duration::from_secs(10);
    while !crate::common::live_processes(None, Some(&mark))
        .iter()
        .any(|(_, cmd)| cmd.contains("grandchild-sleeper"))
    {
        assert!(Instant::now() < end, "the daemon never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    referee.kill().unwrap();
    referee.wait().unwrap();
    assert_no_survivors(None, Some(&mark));
}

#[test]
fn an_engine_cannot_stop_the_referee_or_kill_its_opponent() {
    let dir = tempfile::tempdir().unwrap();
    let mark = marker("interfere");
    let mut args = engine("stop-parent", "stopper", &mark);
    args.extend(engine("kill-others", "killer", &mark));
    args.extend(engine("good", "victim", &mark));
    args.extend(strings(&["--games", "2", "--move-time", "200ms"]));
    let t = Instant::now();
    let o = tournament(&args, &dir.path().join("r"));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(t.elapsed() < Duration::from_secs(60), "{:?}", t.elapsed());
    for r in csv_rows(&dir.path().join("r")) {
        assert_eq!(r["termination"], "normal", "{r:?}");
    }
    assert_no_survivors(None, Some(&mark));
}

#[test]
fn logs_are_never_written_through_a_planted_link() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    std::fs::create_dir_all(out.join("logs")).unwrap();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "keep me").unwrap();
    for n in 1..=3 {
        std::os::unix::fs::symlink(&victim, out.join(format!("logs/first.{n}.log"))).unwrap();
    }
    let args = strings(&["--engine", "builtin=first", "--engine", "builtin=random"]);
    let o = tournament(&args, &out);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
    assert!(out.join("logs/first.4.log").exists());
}

#[test]
fn unrequested_answers_are_faults_of_their_engine_in_their_game() {
    let dir = tempfile::tempdir().unwrap();
    let mark = marker("unrequested");
    let mut caught_early = 0;
    for mode in ["double-move", "early-move", "stray-pong"] {
        let out = dir.path().join(mode);
        let mut args = engine(mode, "bad", &mark);
        args.extend(strings(&["--engine", "builtin=first", "--games", "4"]));
        let o = tournament(&args, &out);
        assert_eq!(o.status.code(), Some(0), "{mode}: {}", text(&o));
        for r in csv_rows(&out) {
            let bad_side = if r["south"] == "bad" {
                "south"
            } else {
                "north"
            };
            assert_eq!(r["loser"], bad_side, "{mode}: {r:?}");
            // A line already in the pipe before a request is caught as unrequested; one
            // that arrives just after the request was sent is read as the answer to it,
            // and judged as such (a wrong message, an empty pit). Either way the fault is
            // the sender's, in the game it was sent in, and nothing shifts.
            let t = r["termination"].as_str();
            assert!(
                t == "protocol_error" || t == "illegal_move",
                "{mode}: {r:?}"
            );
            if r["detail"].contains("when no answer was asked for") {
                caught_early += 1;
            }
        }
    }
    assert!(
        caught_early > 0,
        "no unrequested line was caught before a request"
    );
    assert_no_survivors(None, Some(&mark));
}

#[test]
fn deeply_nested_unknown_fields_are_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let mark = marker("nested");
    let mut args = engine("nested-unknown", "nested", &mark);
    args.extend(strings(&["--engine", "builtin=first", "--games", "2"]));
    let o = tournament(&args, &out);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    for r in csv_rows(&out) {
        assert_eq!(r["termination"], "normal", "{r:?}");
    }
}

/// A short tournament of `first` against `random` in `out`.
fn small_run(out: &Path, extra: &[&str]) -> std::process::Output {
    let args = [
        strings(&["--engine", "builtin=first", "--engine", "builtin=random"]),
        strings(extra),
    ]
    .concat();
    tournament(&args, out)
}

#[test]
fn a_deleted_or_emptied_games_csv_is_rebuilt_on_resume_and_no_game_replayed() {
    for damage in ["delete", "empty", "header"] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("r");
        let o = small_run(&out, &["--games", "6"]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        let jsonl = std::fs::read_to_string(out.join("games.jsonl")).unwrap();
        let csv = out.join("games.csv");
        match damage {
            "delete" => std::fs::remove_file(&csv).unwrap(),
            "empty" => std::fs::write(&csv, "").unwrap(),
            _ => {
                let text = std::fs::read_to_string(&csv).unwrap();
                std::fs::write(&csv, text.lines().next().unwrap().to_string() + "\n").unwrap();
            }
        }
        let o = run(&strings(&["tournament", "--resume", out.to_str().unwrap()]));
        assert_eq!(o.status.code(), Some(0), "{damage}: {}", text(&o));
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert!(
            stdout.contains("rebuilt 6 games.csv row"),
            "{damage}: {stdout}"
        );
        assert_eq!(csv_rows(&out).len(), 6, "{damage}");
        // No game was played again: the records are the same lines.
        assert_eq!(
            std::fs::read_to_string(out.join("games.jsonl")).unwrap(),
            jsonl,
            "{damage}"
        );
    }
}

#[test]
fn two_runs_on_one_folder_are_refused_while_one_holds_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let mark = marker("lock");
    let mut args = vec!["tournament".to_string(), "--quiet".into()];
    args.extend(engine("hang", "h", &mark));
    args.extend(strings(&[
        "--engine",
        "builtin=first",
        "--move-time",
        "20s",
        "--out",
    ]));
    args.push(out.display().to_string());
    let mut first = kalaha().args(&args).spawn().unwrap();
    let end = Instant::now() + Duration::from_secs(10);
    while !out.join("tournament.toml").exists() {
        assert!(Instant::now() < end, "the first run never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    let o = small_run(&out, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("in use by another run") && err.contains("pid"),
        "{err}"
    );
    let o = run(&strings(&["tournament", "--resume", out.to_str().unwrap()]));
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    // Refused before its header could say it was resuming.
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(!stdout.contains("resuming"), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("in use by another run"));
    first.kill().unwrap();
    first.wait().unwrap();
    assert_no_survivors(None, Some(&mark));
}

#[test]
fn formula_like_names_are_one_engine_after_a_resume() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let o = small_run(&out, &["--games", "4", "--each", "name=x"]);
    // --each cannot name engines: refused.
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let args = strings(&[
        "--engine",
        "builtin=first",
        "name==SUM(1)",
        "--engine",
        "builtin=random",
        "name=-x",
        "--games",
        "4",
    ]);
    let o = tournament(&args, &out);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let csv = std::fs::read_to_string(out.join("games.csv")).unwrap();
    assert!(csv.contains(",'=SUM(1),") && csv.contains(",'-x,"), "{csv}");
    // Interrupt-free resume of a finished run still reads the names back as given.
    let o = run(&strings(&["tournament", "--resume", out.to_str().unwrap()]));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let standings = std::fs::read_to_string(out.join("standings.csv")).unwrap();
    assert_eq!(standings.lines().count(), 3, "{standings}");
}

#[test]
fn bad_output_places_and_broken_pipes_are_clear() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("afile");
    std::fs::write(&file, "x").unwrap();
    let o = small_run(&file, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("is a file"));
    // A garbage row in games.csv: counted and named, not a failure.
    let out = dir.path().join("r");
    let o = small_run(&out, &["--games", "2"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let mut csv = std::fs::read_to_string(out.join("games.csv")).unwrap();
    csv.push_str("garbage,row\n");
    std::fs::write(out.join("games.csv"), csv).unwrap();
    let o = run(&strings(&["ratings", out.to_str().unwrap()]));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("1 unreadable row"));
    // A closed pipe ends the output quietly.
    let mut child = kalaha()
        .args(["ratings", out.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn a_log_cap_holds_across_restarts() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let mark = marker("flood");
    let mut args = engine("flood-stderr", "flood", &mark);
    args.extend(strings(&[
        "--engine",
        "builtin=first",
        "--games",
        "4",
        "--restart",
        "always",
        "--startup-timeout",
        "30s",
    ]));
    let o = tournament(&args, &out);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let total: u64 = std::fs::read_dir(out.join("logs"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("flood."))
        .map(|e| e.metadata().unwrap().len())
        .sum();
    assert!(total < (10 << 20) + 4096, "{total} bytes of logs");
    assert_no_survivors(None, Some(&mark));
}

#[test]
fn sprt_refuses_bounds_it_cannot_test() {
    let dir = tempfile::tempdir().unwrap();
    let two = strings(&["--engine", "builtin=first", "--engine", "builtin=random"]);
    for (extra, needle) in [
        (vec!["--elo0", "-1e308", "--elo1", "1e308"], "--elo0"),
        (vec!["--elo0", "0", "--elo1", "2000"], "--elo1 2000"),
        (vec!["--elo0", "-300", "--elo1", "0"], "--elo0 -300"),
        (vec!["--max-games", "0"], "--max-games"),
    ] {
        let mut args = vec!["sprt".to_string()];
        args.extend(two.clone());
        args.extend(strings(&extra));
        args.extend(strings(&["--out", dir.path().join("s").to_str().unwrap()]));
        let o = run(&args);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(
            String::from_utf8_lossy(&o.stderr).contains(needle),
            "{}",
            text(&o)
        );
    }
}

/// Random and mutated protocol lines for a bounded time: the referee neither panics nor
/// hangs, and every fault is the fuzzing engine's.
#[test]
fn fuzzed_engines_are_contained_and_blamed() {
    let dir = tempfile::tempdir().unwrap();
    let mark = marker("fuzz");
    let seconds: u64 = std::env::var("KALAHA_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(8);
    let end = Instant::now() + Duration::from_secs(seconds);
    let mut games = 0;
    let mut seed = 1u64;
    while Instant::now() < end {
        let out = dir.path().join(format!("r{seed}"));
        let args = vec![
            "--engine".to_string(),
            format!("cmd={}", fake_engine().display()),
            "arg=fuzz".into(),
            format!("arg={seed}"),
            format!("arg={mark}"),
            "name=fuzz".into(),
            "--engine".into(),
            "builtin=first".into(),
            "--games".into(),
            "10".into(),
            "--move-time".into(),
            "100ms".into(),
            "--startup-timeout".into(),
            "2s".into(),
        ];
        let t = Instant::now();
        let o = tournament(&args, &out);
        assert!(t.elapsed() < Duration::from_secs(60), "seed {seed} hung");
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(!stderr.contains("panicked"), "seed {seed}: {stderr}");
        match o.status.code() {
            Some(0) => {
                for r in csv_rows(&out) {
                    games += 1;
                    if r["termination"] != "normal" {
                        let bad = if r["south"] == "fuzz" {
                            "south"
                        } else {
                            "north"
                        };
                        assert_eq!(r["loser"], bad, "seed {seed}: {r:?}");
                    }
                }
            }
            // The fuzzer may fail its start-up check: refused, cleanly.
            Some(2) => assert!(stderr.contains("engine fuzz"), "seed {seed}: {stderr}"),
            other => panic!("seed {seed}: exit {other:?}: {}", text(&o)),
        }
        seed += 1;
    }
    assert!(games > 0, "no fuzzed game was played in {seconds} s");
    // The fuzzer's raw bytes reached no file a person reads.
    for entry in std::fs::read_dir(dir.path()).unwrap().flatten() {
        let written = everything_written(&entry.path());
        assert!(!written.contains('\u{1b}') && !written.contains('\u{0}'));
    }
    assert_no_survivors(None, Some(&mark));
}

#[test]
fn resource_limits_end_an_engine_as_its_fault_and_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let mark = marker("limits");
    for (mode, limit, needle) in [
        ("spin", "limit.cpu=1s", "SIGXCPU"),
        ("hog", "limit.memory=256M", "memory 256M"),
    ] {
        let out = dir.path().join(mode);
        let mut args = engine(mode, "greedy-for-resources", &mark);
        args.push(limit.into());
        args.extend(strings(&[
            "--engine",
            "builtin=first",
            "--games",
            "2",
            "--move-time",
            "20s",
        ]));
        let t = Instant::now();
        let o = tournament(&args, &out);
        assert_eq!(o.status.code(), Some(0), "{mode}: {}", text(&o));
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "{mode}: {:?}",
            t.elapsed()
        );
        for r in csv_rows(&out) {
            let bad = if r["south"] == "first" {
                "north"
            } else {
                "south"
            };
            assert_eq!(
                (r["termination"].as_str(), r["loser"].as_str()),
                ("crash", bad),
                "{mode}: {r:?}"
            );
            assert!(r["detail"].contains(needle), "{mode}: {r:?}");
        }
    }
    assert_no_survivors(None, Some(&mark));
}

#[test]
fn an_engines_log_messages_are_kept_in_its_log() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let mark = marker("chatty");
    let mut args = engine("chatty", "chatty", &mark);
    args.extend(strings(&["--engine", "builtin=first", "--games", "2"]));
    let o = tournament(&args, &out);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let log = std::fs::read_to_string(out.join("logs/chatty.1.log")).unwrap();
    assert!(log.contains("[info] thinking about go 1"), "{log}");
}

/// Whether engines run in namespaces here (else nothing can be hidden from them).
fn namespaces() -> bool {
    crate::common::use_kalaha_as_sandbox_helper();
    kalaha::sandbox::Layers::detect().namespaces != kalaha::sandbox::Namespaces::None
}

/// The text of every file in `out/logs` whose name starts with `stem.`.
fn logs_of(out: &Path, stem: &str) -> String {
    let mut all = String::new();
    for e in std::fs::read_dir(out.join("logs")).unwrap().flatten() {
        if e.file_name()
            .to_string_lossy()
            .starts_with(&format!("{stem}."))
        {
            all.push_str(&std::fs::read_to_string(e.path()).unwrap_or_default());
        }
    }
    all
}

#[test]
fn no_descriptor_of_the_referee_reaches_an_engine() {
    // A descriptor opened without close-on-exec, as a library might leave one.
    let dir = tempfile::tempdir().unwrap();
    let leaky = dir.path().join("leaky");
    std::fs::write(&leaky, "referee data").unwrap();
    let path = std::ffi::CString::new(leaky.to_str().unwrap()).unwrap();
    // SAFETY: open with a valid path; the descriptor is closed below.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY) };
    assert!(fd > 2);
    let mark = marker("fds");
    let cmd = kalaha::supervisor::EngineCommand::new(fake_engine(), ["list-fds", &mark]);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let name = runtime.block_on(async {
        let settings = kalaha::supervisor::Settings::default();
        let engine = kalaha::supervisor::Engine::start(&cmd, &settings)
            .await
            .unwrap();
        let name = engine.hello().name.clone();
        engine.shutdown().await;
        name
    });
    // SAFETY: closes the descriptor opened above.
    unsafe { libc::close(fd) };
    assert_eq!(name, "fds-0-1-2");
    // And in a tournament, beside the results files and the other engine's pipes.
    let out = dir.path().join("r");
    let args = vec![
        "--engine".to_string(),
        format!("cmd={}", fake_engine().display()),
        "arg=list-fds".into(),
        format!("arg={mark}"),
        "--engine".into(),
        "builtin=first".into(),
        "--games".into(),
        "2".into(),
    ];
    let o = tournament(&args, &out);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let rows = csv_rows(&out);
    assert!(
        rows.iter()
            .all(|r| r["south"] == "fds-0-1-2" || r["north"] == "fds-0-1-2"),
        "{rows:?}; {}",
        logs_of(&out, "fds-0-1-2")
    );
    assert_no_survivors(None, Some(&mark));
}

#[test]
fn an_engine_can_neither_read_nor_change_the_results_folder() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let mark = marker("peek");
    let mut args = engine("peek-results", "peek", &mark);
    args.push(format!("arg={}", out.display()));
    args.extend(strings(&["--engine", "builtin=first", "--games", "2"]));
    let o = tournament(&args, &out);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let csv = std::fs::read_to_string(out.join("games.csv")).unwrap();
    // Resumed: games.csv is there to be read now.
    let o = run(&strings(&[
        "tournament",
        "--quiet",
        "--resume",
        out.to_str().unwrap(),
    ]));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_no_survivors(None, Some(&mark));
    let said = logs_of(&out, "peek");
    assert!(said.matches("peek: ").count() >= 2, "{said}");
    if !namespaces() {
        return;
    }
    // Not even an engine run by root can take away what covers the folder.
    assert!(!said.contains("unmounted: true"), "{said}");
    assert!(!said.contains("read games.csv: true"), "{said}");
    assert!(!said.contains("appended: true") && !said.contains("created: true"));
    assert!(said.contains("listed 0 entries"), "{said}");
    assert!(!out.join("planted-by-engine").exists());
    assert_eq!(std::fs::read_to_string(out.join("games.csv")).unwrap(), csv);
}

#[test]
fn debug_transcripts_are_capped() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let mark = marker("flood-log");
    // Named by its hello, after its transcript is opened under another name; several
    // instances at once share the cap.
    let mut args = engine("flood-log", "flood", &mark);
    args.pop();
    args.extend(strings(&[
        "--engine",
        "builtin=first",
        "--games",
        "8",
        "-j",
        "4",
        "--debug",
    ]));
    let o = tournament(&args, &out);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let mut total = 0;
    let mut cut = false;
    for e in std::fs::read_dir(out.join("logs")).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.starts_with("first.") && name.ends_with(".transcript") {
            total += e.metadata().unwrap().len();
            let t = std::fs::read_to_string(e.path()).unwrap();
            cut |= t
                .trim_end()
                .ends_with(kalaha::supervisor::transcript::TRANSCRIPT_CUT);
        }
    }
    assert!(total < (10 << 20) + 4096, "{total} bytes of transcripts");
    assert!(cut, "no transcript says it was cut");
    assert_no_survivors(None, Some(&mark));
}

/// A `--debug` transcript keeps the engine's line as it sent it, terminal escapes
/// included (docs/reference/engines.md says to read it with `less` or `cat -v`), while
/// the terminal and the log get it cleaned.
#[test]
fn a_transcript_keeps_the_engines_escapes_as_sent() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let mark = marker("raw-escape");
    let mut args = engine("raw-escape", "raw", &mark);
    args.extend(strings(&[
        "--engine",
        "builtin=first",
        "--games",
        "2",
        "--debug",
    ]));
    let o = tournament(&args, &out);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let sent = "\u{1b}]0;pwned\u{7}\u{1b}[31mred";
    let mut transcripts = String::new();
    for e in std::fs::read_dir(out.join("logs")).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with("raw.") && name.ends_with(".transcript") {
            transcripts.push_str(&std::fs::read_to_string(e.path()).unwrap());
        }
    }
    assert!(
        transcripts.contains(&format!(" < {sent}\n")),
        "{transcripts:?}"
    );
    assert!(!text(&o).contains('\u{1b}'), "{}", text(&o));
    for e in std::fs::read_dir(out.join("logs")).unwrap().flatten() {
        if e.file_name().to_string_lossy().ends_with(".log") {
            let log = std::fs::read_to_string(e.path()).unwrap();
            assert!(!log.contains('\u{1b}'), "{log:?}");
        }
    }
    assert!(!everything_written(&out).contains('\u{1b}'));
    assert_no_survivors(None, Some(&mark));
}

/// An engine gets the referee's environment, with its `env.*` over it; started without a
/// variable (`env -u`, `env -i`), kalaha gives the engine none of it.
#[test]
fn an_engine_gets_the_referees_environment_and_its_env_values() {
    let dir = tempfile::tempdir().unwrap();
    let name_of = |out: &str, spec: &[&str], env: Option<&str>, clear: bool| {
        let mut c = kalaha();
        c.current_dir(dir.path())
            .args(["match", "-q", "--games", "2", "--engine"])
            .arg(format!("cmd={}", fake_engine().display()))
            .args(["arg=env-name", "arg=x", "arg=KALAHA_TEST_REFEREE_VAR"])
            .args(spec)
            .args(["--engine", "builtin=first", "--out", out])
            .env_remove("KALAHA_TEST_REFEREE_VAR");
        if clear {
            c.env_clear().env("PATH", std::env::var("PATH").unwrap());
        }
        if let Some(v) = env {
            c.env("KALAHA_TEST_REFEREE_VAR", v);
        }
        let o = c.output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{out}: {}", text(&o));
        let rows = csv_rows(&dir.path().join(out));
        rows.iter()
            .map(|r| r["south"].clone())
            .find(|n| n != "first")
            .unwrap()
    };
    assert_eq!(
        name_of("seen", &[], Some("from-referee"), false),
        "from-referee"
    );
    assert_eq!(
        name_of(
            "spec",
            &["env.KALAHA_TEST_REFEREE_VAR=from-spec"],
            Some("from-referee"),
            false
        ),
        "from-spec"
    );
    assert_eq!(name_of("unset", &[], None, false), "fake-env-unset");
    assert_eq!(name_of("cleared", &[], None, true), "fake-env-unset");
}

#[test]
fn a_resume_warns_when_an_engines_version_changed() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let version = dir.path().join("version");
    std::fs::write(&version, "1.0").unwrap();
    let mark = marker("version");
    let mut args = engine("version-file", "v", &mark);
    args.push(format!("arg={}", version.display()));
    args.extend(strings(&["--engine", "builtin=first", "--games", "2"]));
    let o = tournament(&args, &out);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let resume = strings(&["tournament", "--resume", out.to_str().unwrap()]);
    let o = run(&resume);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(!text(&o).contains("version is now"), "{}", text(&o));
    std::fs::write(&version, "2.0").unwrap();
    let o = run(&resume);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let needle = "engine v: its hello version is now \"2.0\", but it was \"1.0\"";
    assert!(
        String::from_utf8_lossy(&o.stderr).contains(needle),
        "{}",
        text(&o)
    );
    assert!(
        String::from_utf8_lossy(&o.stdout).contains(needle),
        "{}",
        text(&o)
    );
    assert_no_survivors(None, Some(&mark));
}

#[test]
fn a_process_limit_that_cannot_hold_for_root_is_said_so() {
    let dir = tempfile::tempdir().unwrap();
    let mark = marker("nproc");
    let mut args = engine("good", "g", &mark);
    args.push("limit.processes=64".into());
    args.extend(strings(&["--engine", "builtin=first", "--games", "2"]));
    let o = tournament(&args, &dir.path().join("r"));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // SAFETY: geteuid cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    let warned = String::from_utf8_lossy(&o.stderr).contains("limit.processes=64 is not enforced");
    assert_eq!(warned, root, "{}", text(&o));
}

/// A fault between two games (after `game_over`, before the next `new_game`) is no
/// game's: the instance is replaced, the event is in its log and in the run's note.
#[test]
fn faults_between_games_are_charged_to_no_game() {
    for (mode, games, restarts) in [
        ("exit-after-game-over", "6", 5),
        ("move-after-game-over", "6", 5),
        ("hang-after-game-over", "2", 1),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("r");
        let mark = marker(mode);
        let mut args = engine(mode, "x", &mark);
        args.extend(strings(&["--engine", "builtin=first", "--games", games]));
        args.extend(strings(&["--concurrency", "1"]));
        let o = tournament(&args, &out);
        assert_eq!(o.status.code(), Some(0), "{mode}: {}", text(&o));
        let rows = csv_rows(&out);
        assert_eq!(rows.len(), games.parse::<usize>().unwrap(), "{mode}");
        for r in &rows {
            assert_eq!(r["termination"], "normal", "{mode}: {r:?}");
        }
        assert!(
            String::from_utf8_lossy(&o.stderr).contains(&format!(
                "note: {restarts} engine instance{} failed between two games",
                if restarts == 1 { "" } else { "s" }
            )),
            "{mode}: {}",
            text(&o)
        );
        assert!(
            logs_of(&out, "x").contains("between two games:"),
            "{mode}: {}",
            logs_of(&out, "x")
        );
        assert_no_survivors(None, Some(&mark));
    }
}

/// A FIFO or device where a file belongs is refused at once, by name: nothing waits on it.
#[test]
fn a_fifo_or_device_where_a_file_belongs_is_refused_not_waited_on() {
    let within = |args: &[String]| {
        let mut child = crate::common::kalaha()
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let end = Instant::now() + Duration::from_secs(20);
        while child.try_wait().unwrap().is_none() {
            if Instant::now() > end {
                let _ = child.kill();
                panic!("kalaha {args:?} hangs");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        child.wait_with_output().unwrap()
    };
    let mkfifo = |p: &Path| {
        let _ = std::fs::remove_file(p);
        let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo with a valid path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let o = small_run(&out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let dir_arg = out.display().to_string();
    mkfifo(&out.join("games.csv"));
    let o = within(&strings(&["tournament", "--quiet", "--resume", &dir_arg]));
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("is a FIFO, not a regular file"),
        "{}",
        text(&o)
    );
    let o = within(&strings(&["ratings", &dir_arg]));
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    std::fs::remove_file(out.join("games.csv")).unwrap();
    mkfifo(&out.join("games.jsonl"));
    // Bad input, said as such: exit 2, from every command that reads the record.
    for args in [
        vec!["analyze", &dir_arg],
        vec!["show", &dir_arg],
        vec!["show", &dir_arg, "1"],
    ] {
        let o = within(&strings(&args));
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(
            text(&o).contains("is a FIFO, not a regular file"),
            "{args:?}: {}",
            text(&o)
        );
    }
    // A record of nothing but unreadable lines is said so, not "no game yet".
    std::fs::remove_file(out.join("games.jsonl")).unwrap();
    std::fs::write(out.join("games.jsonl"), "not json\n").unwrap();
    let o = within(&strings(&["show", &dir_arg]));
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("1 line cannot be read"), "{}", text(&o));
    // An endless device as the openings file.
    let config = dir.path().join("t.toml");
    std::fs::write(
        &config,
        "openings = \"/dev/zero\"\n[[engine]]\nbuiltin = \"first\"\n[[engine]]\nbuiltin = \"random\"\n",
    )
    .unwrap();
    let o = within(&strings(&[
        "tournament",
        "--quiet",
        "--config",
        config.to_str().unwrap(),
        "--out",
        dir.path().join("z").to_str().unwrap(),
    ]));
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("/dev/zero: it is a device"),
        "{}",
        text(&o)
    );
}

#[test]
fn names_that_look_alike_are_warned_about_in_the_run_and_in_ratings() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    // A Cyrillic a in the second name.
    let args = strings(&[
        "--engine",
        "builtin=first",
        "name=hard",
        "--engine",
        "builtin=random",
        "name=h\u{430}rd",
        "--games",
        "2",
    ]);
    let o = tournament(&args, &out);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let said = "look alike but are different engines";
    assert!(
        text(&o).contains(said) && text(&o).contains("h\\u{430}rd"),
        "{}",
        text(&o)
    );
    let o = run(&strings(&["ratings", out.to_str().unwrap()]));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains(said), "{}", text(&o));
}

#[test]
fn a_results_folder_deleted_during_the_run_stops_it_and_is_not_made_again() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("del");
    let child = crate::common::kalaha()
        .args(strings(&[
            "match",
            "--quiet",
            "--engine",
            "builtin=first",
            "--engine",
            "builtin=random",
            "--games",
            "100000",
            "--out",
            out.to_str().unwrap(),
        ]))
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let end = Instant::now() + Duration::from_secs(30);
    while csv_rows_count(&out) < 10 {
        assert!(Instant::now() < end, "no game recorded");
        std::thread::sleep(Duration::from_millis(20));
    }
    // The run may add a file as the folder goes: try again.
    for _ in 0..10 {
        if std::fs::remove_dir_all(&out).is_ok() {
            break;
        }
    }
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("was deleted or replaced during the run"),
        "{}",
        text(&o)
    );
    assert!(!out.exists(), "the folder was made again");
}

fn csv_rows_count(out: &Path) -> usize {
    std::fs::read_to_string(out.join("games.csv"))
        .map(|t| t.lines().count().saturating_sub(1))
        .unwrap_or(0)
}

/// A full disk says so, and how to go on; the games recorded stay, and no temporary file
/// is left. The disk is a 300 KiB file system of a mount namespace of the test's own.
#[test]
fn a_full_disk_is_said_in_so_many_words_and_leaves_no_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let disk = dir.path().join("disk");
    std::fs::create_dir(&disk).unwrap();
    let out = disk.join("r");
    let script = format!(
        "mount -t tmpfs -o size=300k none {disk} && {kalaha} match --quiet --engine \
         builtin=first --engine builtin=random --games 5000 --out {out}; echo \"exit $?\"; \
         ls -a {out}; wc -l < {out}/games.csv",
        disk = disk.display(),
        kalaha = env!("CARGO_BIN_EXE_kalaha"),
        out = out.display()
    );
    let o = std::process::Command::new("unshare")
        .args(["-Urm", "sh", "-c", &script])
        .output()
        .expect("unshare (util-linux) runs");
    let said = text(&o);
    assert!(said.contains("exit 1"), "{said}");
    assert!(said.contains("the disk is full"), "{said}");
    assert!(said.contains("--resume"), "{said}");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(!stdout.lines().any(|l| l.ends_with(".tmp")), "{said}");
    let rows: u64 = String::from_utf8_lossy(&o.stdout)
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or(0);
    assert!(rows > 10, "{said}");
}

/// `kalaha ratings` and `kalaha analyze` say a full disk in the words a run says it with,
/// and what to do; no temporary file is left. The disk is a tmpfs of a mount namespace of
/// the test's own, filled but for one page (which the folder's lock file takes).
#[test]
fn ratings_and_analyze_say_a_full_disk_in_so_many_words() {
    let dir = tempfile::tempdir().unwrap();
    let played = dir.path().join("played");
    let o = run(&strings(&[
        "match",
        "--quiet",
        "--engine",
        "builtin=random",
        "--engine",
        "builtin=greedy",
        "--pits",
        "5",
        "--seeds",
        "3",
        "--games",
        "4",
        "--out",
        played.to_str().unwrap(),
    ]));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let disk = dir.path().join("disk");
    std::fs::create_dir(&disk).unwrap();
    let script = format!(
        "mount -t tmpfs -o size=256k none {disk} && cp -r {played} {disk}/run && \
         mkdir {disk}/board && head -c 4096 /dev/zero > {disk}/room && \
         {{ cat /dev/zero > {disk}/fill 2>/dev/null; rm {disk}/room; }} && \
         {{ {kalaha} ratings {played} --out {disk}/board; echo \"ratings exit $?\"; \
         {kalaha} analyze {disk}/run --threads 1 --budget none --table-mb 0 -q; \
         echo \"analyze exit $?\"; ls -a {disk}/board {disk}/run; }} 2>&1",
        disk = disk.display(),
        played = played.display(),
        kalaha = env!("CARGO_BIN_EXE_kalaha"),
    );
    let o = std::process::Command::new("unshare")
        .args(["-Urm", "sh", "-c", &script])
        .output()
        .expect("unshare (util-linux) runs");
    let said = String::from_utf8_lossy(&o.stdout);
    // Each error line whole, then the exit code.
    assert!(
        said.starts_with(&format!(
            "error: failed to write {}/board/standings.csv: the disk is full (No space left \
             on device (os error 28)): free some space and run the command again; each report \
             there is whole, the old one or the new\nratings exit 1\n",
            disk.display()
        )),
        "{said}"
    );
    assert!(
        said.contains(&format!(
            "error: failed to write the analysis in {run}: the disk is full (No space left on \
             device (os error 28)): every game analysed so far is kept; free some space, and \
             `kalaha analyze {run}` goes on where it stopped\nanalyze exit 1\n",
            run = disk.join("run").display()
        )),
        "{said}"
    );
    assert!(!said.lines().any(|l| l.ends_with(".tmp")), "{said}");
}

#[test]
fn a_resume_refuses_a_tournament_toml_whose_rules_were_changed() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let o = small_run(&out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let toml = out.join("tournament.toml");
    let text_before = std::fs::read_to_string(&toml).unwrap();
    assert!(text_before.contains("pits = 6"), "{text_before}");
    std::fs::write(&toml, text_before.replace("pits = 6", "pits = 4")).unwrap();
    let o = run(&strings(&[
        "tournament",
        "--quiet",
        "--resume",
        out.to_str().unwrap(),
    ]));
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains(
            "tournament.toml, [rules] pits: it says 4, but the run's games are played with 6"
        ),
        "{}",
        text(&o)
    );
    // A folder that does not keep the settings it began with (written by an older
    // kalaha, whose tournament.toml did not say the kind of run): the records' own rules
    // refuse it.
    std::fs::remove_file(out.join(".played.toml")).unwrap();
    let edited = std::fs::read_to_string(&toml).unwrap();
    let older: String = edited
        .lines()
        .filter(|l| !l.starts_with("run = "))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&toml, older).unwrap();
    let o = run(&strings(&[
        "tournament",
        "--quiet",
        "--resume",
        out.to_str().unwrap(),
    ]));
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("but its games were played as 6x4: the file was changed"),
        "{}",
        text(&o)
    );
}

/// Settings the records do not hold (the time margin, an engine's options, the seed) are
/// checked against those the run began with: an edited `tournament.toml` is refused on
/// resume, naming the setting, and a file put back as it was resumes.
#[test]
fn a_resume_refuses_any_setting_changed_since_the_run_began() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let o = small_run(&out, &["--games", "4", "--seed", "3"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let toml = out.join("tournament.toml");
    let before = std::fs::read_to_string(&toml).unwrap();
    let resume = || {
        run(&strings(&[
            "tournament",
            "-q",
            "--resume",
            out.to_str().unwrap(),
        ]))
    };
    for (from, to, named) in [
        (
            "time_margin = \"50ms\"",
            "time_margin = \"2s\"",
            "tournament.toml, time_margin: it says \"2s\", but the run's games are played with \"50ms\"",
        ),
        (
            "seed = 3",
            "seed = 4",
            "tournament.toml, seed: it says 4, but the run's games are played with 3",
        ),
        (
            "games = 4",
            "games = 6",
            "tournament.toml, games: it says 6",
        ),
        (
            "builtin = \"first\"",
            "builtin = \"first\"\noptions = { depth = 9 }",
            "engine 1, options: it says { depth = 9 }, but the run's games are played with nothing",
        ),
        (
            "builtin = \"first\"",
            "builtin = \"first\"\nenv = { X = \"1\" }",
            "engine 1, env: it says",
        ),
    ] {
        assert!(before.contains(from), "{from} not in {before}");
        std::fs::write(&toml, before.replacen(from, to, 1)).unwrap();
        let o = resume();
        assert_eq!(o.status.code(), Some(2), "{to}: {}", text(&o));
        assert!(text(&o).contains(named), "{to}: {}", text(&o));
        assert!(text(&o).contains("put it back as it was"), "{}", text(&o));
    }
    // The kept settings deleted, or a FIFO in their place: refused, not skipped.
    let played = out.join(".played.toml");
    let kept = std::fs::read(&played).unwrap();
    std::fs::write(&toml, before.replacen("seed = 3", "seed = 4", 1)).unwrap();
    std::fs::remove_file(&played).unwrap();
    let o = resume();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains(".played.toml is missing"), "{}", text(&o));
    let fifo = std::process::Command::new("mkfifo")
        .arg(&played)
        .status()
        .unwrap();
    assert!(fifo.success());
    let o = resume();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("FIFO"), "{}", text(&o));
    std::fs::remove_file(&played).unwrap();
    std::fs::write(&played, kept).unwrap();
    // What may change between two runs of a tournament: the games at once, the title.
    std::fs::write(
        &toml,
        before.replacen("concurrency = ", "title = \"renamed\"\nconcurrency = ", 1),
    )
    .unwrap();
    let o = resume();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

/// The kept settings changed with `tournament.toml` (or a folder older than them): the
/// games recorded are compared with the schedule, so a resume cannot make pairs of games
/// from two openings.
#[test]
fn a_resume_refuses_a_schedule_that_gives_its_recorded_games_other_openings() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let o = small_run(&out, &["--games", "4", "--seed", "3"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    for file in ["tournament.toml", ".played.toml"] {
        let path = out.join(file);
        let before = std::fs::read_to_string(&path).unwrap();
        assert!(before.contains("seed = 3"), "{before}");
        std::fs::write(&path, before.replacen("seed = 3", "seed = 4", 1)).unwrap();
    }
    let o = run(&strings(&[
        "tournament",
        "-q",
        "--resume",
        out.to_str().unwrap(),
    ]));
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("tournament.toml gives game "),
        "{}",
        text(&o)
    );
    assert!(
        text(&o).contains(
            ": the seed or opening_plies changed after the run began; put them back as they were"
        ),
        "{}",
        text(&o)
    );
    // Put back, the run resumes.
    for file in ["tournament.toml", ".played.toml"] {
        let path = out.join(file);
        let now = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, now.replacen("seed = 4", "seed = 3", 1)).unwrap();
    }
    let o = run(&strings(&[
        "tournament",
        "-q",
        "--resume",
        out.to_str().unwrap(),
    ]));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

/// `games` lowered in `tournament.toml` and in the kept settings alike: the games
/// recorded past the end of the shorter schedule name the setting and the least it must
/// be. Raised, the games played are the first of the longer run, which goes on. The
/// engines reordered in both files give the games played other seats, which is refused.
#[test]
fn a_resume_refuses_games_lowered_or_engines_reordered_in_both_files() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let o = small_run(&out, &["--games", "6", "--pits", "3", "--seeds", "2"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let set_games = |from: &str, to: &str| {
        for file in ["tournament.toml", ".played.toml"] {
            let path = out.join(file);
            let before = std::fs::read_to_string(&path).unwrap();
            assert!(before.contains(from), "{before}");
            std::fs::write(&path, before.replacen(from, to, 1)).unwrap();
        }
    };
    let resume = || {
        run(&strings(&[
            "tournament",
            "-q",
            "--resume",
            out.to_str().unwrap(),
        ]))
    };
    set_games("games = 6", "games = 4");
    let o = resume();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let said = text(&o);
    assert!(
        said.contains("tournament.toml, games: it says 4, but game ")
            && said.contains(
                " was played, of round 3 (games = 6 at least): games was lowered after the \
                 run began; put it back as it was, or start a new run"
            ),
        "{said}"
    );
    set_games("games = 4", "games = 8");
    let o = resume();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(csv_rows(&out).len(), 8);
    for file in ["tournament.toml", ".played.toml"] {
        let path = out.join(file);
        let before = std::fs::read_to_string(&path).unwrap();
        let parts: Vec<&str> = before.split("[[engine]]").collect();
        assert_eq!(parts.len(), 3, "{before}");
        let swapped = format!("{}[[engine]]{}[[engine]]{}", parts[0], parts[2], parts[1]);
        std::fs::write(&path, swapped).unwrap();
    }
    let o = resume();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains(
            "the engines (their number or order) or the schedule were changed after the run \
             began"
        ),
        "{}",
        text(&o)
    );
}

#[test]
fn a_games_csv_row_that_disagrees_with_its_record_is_written_again_from_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let o = small_run(&out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let csv = out.join("games.csv");
    let before = std::fs::read_to_string(&csv).unwrap();
    // The first game's scores and result changed, as a hand edit would: to a win of
    // north, or of south if north already won (a draw turned around is still a draw).
    let mut lines: Vec<String> = before.lines().map(String::from).collect();
    let mut cells: Vec<String> = lines[1].split(',').map(String::from).collect();
    let (result, south, north) = if cells[6] == "0-1" {
        ("1-0", "40", "8")
    } else {
        ("0-1", "8", "40")
    };
    cells[6] = result.into();
    cells[7] = south.into();
    cells[8] = north.into();
    lines[1] = cells.join(",");
    std::fs::write(&csv, lines.join("\n") + "\n").unwrap();
    let o = run(&strings(&["tournament", "--resume", out.to_str().unwrap()]));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        text(&o).contains("1 games.csv row(s) disagreed with their record in games.jsonl"),
        "{}",
        text(&o)
    );
    assert_eq!(std::fs::read_to_string(&csv).unwrap(), before);
}

/// An engine may not be given a `write=` folder that holds results or lies inside them:
/// this run's folder (the sandbox hides it, but not the runs beside it), earlier runs
/// below the folder (an engine rewrote a sibling run's games.jsonl and `kalaha ratings`
/// rated them), or a folder inside a run's.
#[test]
fn a_write_folder_that_holds_the_results_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let here = dir.path().canonicalize().unwrap();
    let refused = |write: &str, out: &str, why: &str| {
        let o = kalaha()
            .current_dir(&here)
            .args(["match", "--engine", "builtin=first"])
            .arg(format!("write={write}"))
            .args(["--engine", "builtin=random", "--games", "2", "-q", "--out"])
            .arg(out)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{write}: {}", text(&o));
        let given = match write {
            "." => here.clone(),
            _ => here.join(write),
        };
        let want = format!("engine first: write={} ", given.display());
        assert!(text(&o).contains(&want), "{write}: {want}\n{}", text(&o));
        assert!(text(&o).contains(why), "{write}: {why}\n{}", text(&o));
        assert!(!here.join(out).join("games.jsonl").exists(), "{write}");
    };
    for write in [".", "results"] {
        refused(
            write,
            "results/new",
            "holds this run's results folder results/new: the engine could change its results \
             and those of the runs beside it",
        );
    }
    // A finished run below the folder, however deep within the walk's bound.
    let o = kalaha()
        .current_dir(&here)
        .args([
            "match",
            "--engine",
            "builtin=first",
            "--engine",
            "builtin=random",
        ])
        .args(["--games", "2", "-q", "--out", "res/var/v1"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let v1 = format!(
        "holds the results folder {}:",
        here.join("res/var/v1").display()
    );
    refused("res/var", "results/other", &v1);
    refused("res", "results/other", &v1);
    // The run's folder itself, and a folder inside it (its logs).
    let inside = format!(
        "lies inside the results folder {}:",
        here.join("res/var/v1").display()
    );
    refused("res/var/v1", "results/other", &inside);
    refused("res/var/v1/logs", "results/other", &inside);
    // A folder too big to walk whole is refused, with what to do.
    let mut deep = here.join("big");
    for _ in 0..=kalaha::results::WALK_DEPTH {
        deep.push("d");
    }
    std::fs::create_dir_all(&deep).unwrap();
    refused(
        "big",
        "results/other",
        &format!(
            "is too big to check: kalaha looks at most {} entries and {} folders deep",
            kalaha::results::WALK_ENTRIES,
            kalaha::results::WALK_DEPTH
        ),
    );
    // A folder of its own is fine, also one holding folders to the walk's depth.
    deep.pop();
    std::fs::remove_dir(deep.join("d")).unwrap();
    for write in ["scratch", "big"] {
        std::fs::create_dir_all(here.join(write)).unwrap();
        let o = kalaha()
            .current_dir(&here)
            .args(["match", "--engine", "builtin=first"])
            .arg(format!("write={write}"))
            .args(["--engine", "builtin=random", "--games", "2", "-q", "--out"])
            .arg(format!("results/ok-{write}"))
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{write}: {}", text(&o));
    }
}

/// An `info` line is never a fault (protocol.md, section 5), also where the referee awaits
/// the answer to a `hello` or a `ping`: before the engine's `hello`, before the pong of the
/// set-up ping (1), of the ping before its first game (2) and of the ping after that
/// game's `new_game` (3). It is noted in the engine's log, as outside a search.
#[test]
fn an_info_line_before_a_hello_or_a_pong_is_no_fault() {
    for before in ["hello", "1", "2", "3"] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("r");
        let mark = marker("info-before");
        let mut args = engine("info-before", "early", &mark);
        args.push(format!("arg={before}"));
        args.extend(strings(&[
            "--engine",
            "builtin=first",
            "--games",
            "2",
            "-j",
            "1",
        ]));
        let o = tournament(&args, &out);
        assert_eq!(o.status.code(), Some(0), "{before}: {}", text(&o));
        let rows = csv_rows(&out);
        assert_eq!(rows.len(), 2, "{before}");
        assert!(
            rows.iter().all(|r| r["termination"] == "normal"),
            "{before}: {rows:?}"
        );
        let log = logs_of(&out, "early");
        assert_eq!(
            log.matches(r#"[info] {"type":"info","depth":1}"#).count(),
            1,
            "{before}: {log}"
        );
        assert_no_survivors(None, Some(&mark));
    }
}

/// A record edited so that it no longer replays (its result turned around) is counted
/// neither by a resume nor by `kalaha ratings`: the two agree on every folder.
#[test]
fn a_record_that_does_not_replay_is_counted_by_neither_resume_nor_ratings() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let o = small_run(&out, &["--games", "4", "--pits", "3", "--seeds", "2"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let jsonl = out.join("games.jsonl");
    let edited: String = std::fs::read_to_string(&jsonl)
        .unwrap()
        .lines()
        .enumerate()
        .map(|(i, l)| {
            let mut rec: serde_json::Value = serde_json::from_str(l).unwrap();
            if i == 0 {
                // Another result than its sowings give, whatever the game was (a draw's
                // scores turned around would still be a draw).
                let (result, south, north) = if rec["result"] == "0-1" {
                    ("1-0", 4, 2)
                } else {
                    ("0-1", 2, 4)
                };
                rec["result"] = result.into();
                rec["south_score"] = south.into();
                rec["north_score"] = north.into();
            }
            format!("{rec}\n")
        })
        .collect();
    std::fs::write(&jsonl, edited).unwrap();
    let o = run(&strings(&["tournament", "--resume", out.to_str().unwrap()]));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        text(&o).contains("do not replay under their rules"),
        "{}",
        text(&o)
    );
    let games_in = |csv: &Path| {
        let text = std::fs::read_to_string(csv).unwrap();
        let mut r = ::csv::Reader::from_reader(text.as_bytes());
        let headers = r.headers().unwrap().clone();
        let at = headers.iter().position(|h| h == "games").unwrap();
        r.records()
            .map(|row| row.unwrap()[at].parse::<u64>().unwrap())
            .sum::<u64>()
    };
    // Three games counted (each counts for both engines).
    assert_eq!(games_in(&out.join("standings.csv")), 6);
    let board = dir.path().join("board");
    let o = run(&strings(&[
        "ratings",
        out.to_str().unwrap(),
        "--out",
        board.to_str().unwrap(),
    ]));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(games_in(&board.join("standings.csv")), 6);
    // games.csv shows the games counted: no row of the record that does not replay.
    let ids = |csv: &Path| {
        let text = std::fs::read_to_string(csv).unwrap();
        let mut r = ::csv::Reader::from_reader(text.as_bytes());
        r.records()
            .map(|row| row.unwrap()[0].to_string())
            .collect::<Vec<_>>()
    };
    let first_id = {
        let line = std::fs::read_to_string(&jsonl).unwrap();
        let rec: serde_json::Value = serde_json::from_str(line.lines().next().unwrap()).unwrap();
        rec["game"].as_str().unwrap().to_string()
    };
    let rows = ids(&out.join("games.csv"));
    assert_eq!(rows.len(), 3, "{rows:?}");
    assert!(!rows.contains(&first_id), "{rows:?}");
}

/// Records the tournament could not have played (here copies of its games numbered past
/// its schedule) are not counted on resume, and make no row of games.csv.
#[test]
fn records_outside_the_schedule_make_no_row_of_games_csv() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let o = small_run(&out, &["--games", "4", "--pits", "3", "--seeds", "2"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let jsonl = out.join("games.jsonl");
    let text_before = std::fs::read_to_string(&jsonl).unwrap();
    let mut extra = String::new();
    for l in text_before.lines() {
        let mut rec: serde_json::Value = serde_json::from_str(l).unwrap();
        let n = rec["number"].as_u64().unwrap() + 4;
        let id = rec["game"]
            .as_str()
            .unwrap()
            .rsplit_once('-')
            .unwrap()
            .0
            .to_string();
        rec["number"] = n.into();
        rec["game"] = format!("{id}-{n}").into();
        extra.push_str(&format!("{rec}\n"));
    }
    std::fs::write(&jsonl, format!("{text_before}{extra}")).unwrap();
    let o = run(&strings(&["tournament", "--resume", out.to_str().unwrap()]));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        text(&o).contains("4 recorded games") && text(&o).contains("cannot be of this tournament"),
        "{}",
        text(&o)
    );
    let csv = std::fs::read_to_string(out.join("games.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 4, "{csv}");
}

/// Names that differ only by an accent or by a character that shows as nothing are warned
/// about, and the leaderboards show them escaped, as they do a Cyrillic look-alike; the
/// CSV files keep the names as given.
#[test]
fn names_that_differ_by_an_accent_or_an_invisible_character_look_alike() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let (accent, soft_hyphen, selector) = ("first\u{301}", "fir\u{ad}st", "eas\u{fe0f}y");
    let mut args = Vec::new();
    for (builtin, name) in [
        ("first", "first"),
        ("random", accent),
        ("random", soft_hyphen),
        ("easy", "easy"),
        ("greedy", selector),
    ] {
        args.extend(strings(&[
            "--engine",
            &format!("builtin={builtin}"),
            &format!("name={name}"),
        ]));
    }
    args.extend(strings(&["--games", "2", "--pits", "3", "--seeds", "2"]));
    let o = tournament(&args, &out);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let said = "look alike but are different engines";
    assert!(
        text(&o).contains(&format!(
            "\"first\" and \"first\\u{{301}}\" and \"fir\\u{{ad}}st\" {said}"
        )) && text(&o).contains(&format!("\"easy\" and \"eas\\u{{fe0f}}y\" {said}")),
        "{}",
        text(&o)
    );
    for page in ["leaderboard.md", "leaderboard.html"] {
        let shown = std::fs::read_to_string(out.join(page)).unwrap();
        for (name, escaped) in [
            (accent, "first\\u{301}"),
            (soft_hyphen, "fir\\u{ad}st"),
            (selector, "eas\\u{fe0f}y"),
        ] {
            assert!(!shown.contains(name), "{page} shows {name:?} as it is");
            // Markdown writes the backslash escaped.
            let md = escaped.replace('\\', "\\\\");
            assert!(
                shown.contains(escaped) || shown.contains(&md),
                "{page} does not show {escaped}"
            );
        }
    }
    let standings = std::fs::read_to_string(out.join("standings.csv")).unwrap();
    assert!(
        [accent, soft_hyphen, selector]
            .iter()
            .all(|n| standings.contains(n)),
        "{standings}"
    );
}

/// A symbolic link put in a results folder (by another user of a shared folder) where
/// kalaha writes (`games.jsonl`, `logs/`) is refused on resume, and the file or folder it
/// points to is left as it was.
#[test]
fn a_resume_writes_through_no_link_in_the_results_folder() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let o = small_run(&out, &["--games", "2", "--pits", "3", "--seeds", "2"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let victim = dir.path().join("victim.txt");
    std::fs::write(&victim, "line one\nline two without newline").unwrap();
    let jsonl = out.join("games.jsonl");
    let kept = std::fs::read(&jsonl).unwrap();
    std::fs::remove_file(&jsonl).unwrap();
    std::os::unix::fs::symlink(&victim, &jsonl).unwrap();
    let o = run(&strings(&["tournament", "--resume", out.to_str().unwrap()]));
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("symbolic link"), "{}", text(&o));
    assert_eq!(
        std::fs::read_to_string(&victim).unwrap(),
        "line one\nline two without newline"
    );
    // The logs folder as a link to a folder elsewhere.
    std::fs::remove_file(&jsonl).unwrap();
    std::fs::write(&jsonl, kept).unwrap();
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    std::fs::remove_dir_all(out.join("logs")).unwrap();
    std::os::unix::fs::symlink(&elsewhere, out.join("logs")).unwrap();
    let o = run(&strings(&["tournament", "--resume", out.to_str().unwrap()]));
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("symbolic link"), "{}", text(&o));
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
}

/// A run whose tournament.toml went missing (deleted while it ran) is told how to put it
/// back from .played.toml, and the command it is given works.
#[test]
fn a_missing_tournament_toml_is_put_back_from_the_played_settings() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let o = small_run(&out, &["--games", "2", "--pits", "3", "--seeds", "2"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    std::fs::remove_file(out.join("tournament.toml")).unwrap();
    let o = run(&strings(&["tournament", "--resume", out.to_str().unwrap()]));
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let said = text(&o);
    let cp = said
        .split('`')
        .find(|s| s.starts_with("cp "))
        .unwrap_or_else(|| panic!("no cp command: {said}"));
    let words: Vec<&str> = cp.split_whitespace().collect();
    std::fs::copy(words[1], words[2]).unwrap();
    let o = run(&strings(&["tournament", "--resume", out.to_str().unwrap()]));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

/// A run stopped in its first moments, before its settings are saved (here SIGTERM while
/// an engine starts; a full disk or `kill -9` leave the same folder), has nothing to
/// resume: the resume says so and what to run instead, and that command takes the folder.
#[test]
fn a_run_stopped_before_its_settings_are_saved_starts_again_in_its_folder() {
    for command in ["tournament", "sprt"] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("r");
        let mark = marker("first-moments");
        let mut args = vec![command.to_string(), "--quiet".into()];
        args.extend(engine("slow-hello", "slow", &mark));
        args.extend(strings(&[
            "--engine",
            "builtin=first",
            "--pits",
            "3",
            "--seeds",
            "2",
        ]));
        args.extend(strings(match command {
            "sprt" => &["--max-games", "2"],
            _ => &["--games", "2"],
        }));
        args.push("--out".into());
        args.push(out.display().to_string());
        let child = kalaha().args(&args).spawn().unwrap();
        let end = Instant::now() + Duration::from_secs(10);
        // The folder is claimed, and the engine takes a second to answer.
        while !out.join("logs").is_dir() {
            assert!(
                Instant::now() < end,
                "{command}: the run never claimed its folder"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        // SAFETY: sending a signal to our own child has no memory-safety preconditions.
        unsafe {
            libc::kill(child.id() as i32, libc::SIGTERM);
        }
        let o = child.wait_with_output().unwrap();
        assert_ne!(o.status.code(), Some(0), "{command}: {}", text(&o));
        assert!(!out.join("tournament.toml").exists(), "{command}");
        let resume = strings(&[command, "-q", "--resume", out.to_str().unwrap()]);
        let o = run(&resume);
        assert_eq!(o.status.code(), Some(2), "{command}: {}", text(&o));
        let said = text(&o);
        let again = format!(
            "run the command that began it again, with `--out {}` (a new run takes this \
             folder)",
            out.display()
        );
        assert!(
            said.contains("holds no games and no tournament.toml: its run stopped before it saved its settings")
                && said.contains(&again),
            "{command}: {said}"
        );
        // The command that began the run, run again.
        let o = run(&args);
        assert!(
            matches!(o.status.code(), Some(0 | 3 | 4)),
            "{command}: {}",
            text(&o)
        );
        assert_eq!(csv_rows(&out).len(), 2, "{command}");
        assert!(out.join("tournament.toml").is_file(), "{command}");
        assert_no_survivors(None, Some(&mark));
    }
}
