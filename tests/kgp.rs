//! Kalah Game Protocol agents as engines, against the test agent written from the KGP
//! specification (`examples/kgp_agent.rs`, `examples/kgp_agent.py`): anytime moves, yield,
//! late moves after `stop`, agents that never connect, send garbage or disconnect mid-game,
//! tournaments against the built-in engines, `kalaha check --protocol kgp`, and no process
//! left behind.

mod common;

use common::{assert_no_survivors, live_processes, marker};
use kalaha::kgp::{KgpEngine, KgpError, state_time};
use kalaha::record::{FaultKind, TimeLimit};
use kalaha::rules::{Position, Rules};
use kalaha::supervisor::{EngineCommand, LogPlace, Settings, Stopped};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

const GRACE: Duration = Duration::from_millis(300);

/// The test agent (`examples/kgp_agent.rs`), built by `cargo test`.
fn agent_exe() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let dir = exe.parent().and_then(|d| d.parent()).expect("target dir");
    let path = dir.join("examples").join("kgp_agent");
    if !path.exists() {
        // A filtered run (`cargo test --test kgp`) does not build the examples.
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
        let mut cmd = Command::new(cargo);
        cmd.args(["build", "--quiet", "--example", "kgp_agent"]);
        if !cfg!(debug_assertions) {
            cmd.arg("--release");
        }
        let _ = cmd.status();
    }
    assert!(path.exists(), "{} is missing", path.display());
    path
}

fn settings() -> Settings {
    Settings {
        startup_timeout: Duration::from_secs(5),
        ping_timeout: Duration::from_secs(2),
        quit_grace: GRACE,
        term_grace: GRACE,
        ..Settings::default()
    }
}

fn agent(mode: &str) -> (EngineCommand, String) {
    let mark = marker(mode);
    (EngineCommand::new(agent_exe(), [mode, mark.as_str()]), mark)
}

async fn started(mode: &str, s: &Settings) -> (KgpEngine, String) {
    let (cmd, mark) = agent(mode);
    let mut a = KgpEngine::start(&cmd, s).await.expect("handshake");
    assert_eq!(a.info().name, format!("kgp-{mode}"));
    assert_eq!(a.info().authors, "the kalaha tests");
    a.new_game("g1").await.expect("new game");
    (a, mark)
}

fn start() -> Position {
    Position::start(Rules::default())
}

const MS: fn(u64) -> Duration = Duration::from_millis;

/// One `go` that must fail; the agent is shut down and nothing of it may be left.
async fn go_fails(mode: &str, deadline: Duration) -> KgpError {
    let (mut a, mark) = started(mode, &settings()).await;
    let pgid = a.pid();
    let t = Instant::now();
    let err = a
        .go(&start(), TimeLimit::MoveTime(deadline), deadline)
        .await
        .expect_err("the move must fail");
    assert!(
        t.elapsed() < deadline + MS(1000),
        "{mode}: {:?}",
        t.elapsed()
    );
    a.shutdown().await;
    assert_no_survivors(Some(pgid), Some(&mark));
    err
}

#[tokio::test]
async fn anytime_moves_improve_until_stop_and_the_last_one_counts() {
    let (mut a, mark) = started("anytime", &settings()).await;
    let pgid = a.pid();
    let t = Instant::now();
    let reply = a
        .go(&start(), TimeLimit::MoveTime(MS(300)), MS(1300))
        .await
        .unwrap();
    let took = t.elapsed();
    assert!(took >= MS(300) && took < MS(800), "{took:?}");
    // Stopped by kalaha: the move took the time it was given.
    assert_eq!(reply.elapsed, MS(300));
    assert!(
        reply.infos.len() >= 3,
        "one report per move: {:?}",
        reply.infos
    );
    assert_eq!(reply.infos.last().unwrap().pv, [reply.pit as u8]);
    assert!(start().check(reply.pit).is_ok());
    assert!(reply.line.contains(" move "), "{}", reply.line);
    // A second state after the stop is played as well.
    let next = start().play(reply.pit).unwrap();
    let reply = a
        .go(&next, TimeLimit::MoveTime(MS(100)), MS(1100))
        .await
        .unwrap();
    assert!(next.check(reply.pit).is_ok());
    a.ping().await.unwrap();
    let stopped = a.shutdown().await;
    assert!(
        matches!(stopped, Stopped::Exited(e) if e.code == Some(0)),
        "goodbye ends the test agent: {stopped:?}"
    );
    assert_no_survivors(Some(pgid), Some(&mark));
}

#[tokio::test]
async fn yield_ends_the_move_before_its_time() {
    let (mut a, _mark) = started("first", &settings()).await;
    let t = Instant::now();
    let reply = a
        .go(&start(), TimeLimit::MoveTime(MS(5000)), MS(5050))
        .await
        .unwrap();
    assert!(t.elapsed() < MS(1000), "{:?}", t.elapsed());
    assert!(reply.elapsed < MS(1000));
    assert_eq!(reply.pit, 1);
    assert!(reply.line.ends_with(" move 1"), "{}", reply.line);
    a.shutdown().await;
}

#[tokio::test]
async fn an_agent_with_nagle_on_is_not_charged_for_delayed_acknowledgements() {
    // `move` and `yield` are two writes: with Nagle's algorithm the `yield` waits for the
    // acknowledgement of the `move`, which kalaha must not delay.
    let (mut a, _mark) = started("nagle", &settings()).await;
    let mut pos = start();
    let mut times = Vec::new();
    for _ in 0..9 {
        let r = a
            .go(&pos, TimeLimit::MoveTime(MS(2000)), MS(2050))
            .await
            .unwrap();
        times.push(r.elapsed);
        pos = pos.play(r.pit).unwrap();
        if pos.is_over() {
            break;
        }
    }
    times.sort();
    assert!(times[times.len() / 2] < MS(20), "{times:?}");
    a.shutdown().await;
}

#[tokio::test]
async fn late_moves_after_stop_are_ignored() {
    let (mut a, _mark) = started("late", &settings()).await;
    let pos = start();
    let reply = a
        .go(&pos, TimeLimit::MoveTime(MS(200)), MS(1200))
        .await
        .unwrap();
    assert_eq!(reply.pit, 1);
    // After the stop the agent sends `move 99`, `move 1` and `yield` for the old state:
    // none of them is taken for the next one, and none is a fault.
    let next = pos.play(1).unwrap();
    let reply = a
        .go(&next, TimeLimit::MoveTime(MS(200)), MS(1200))
        .await
        .unwrap();
    assert!(next.check(reply.pit).is_ok());
    a.ping().await.unwrap();
    assert!(a.late_commands() >= 3, "{}", a.late_commands());
    a.game_over().await.unwrap();
    a.shutdown().await;
}

#[tokio::test]
async fn an_agent_that_never_connects_stalls_with_a_hint() {
    let (cmd, mark) = agent("never-connect");
    let s = Settings {
        startup_timeout: MS(800),
        ..settings()
    };
    let t = Instant::now();
    let err = KgpEngine::start(&cmd, &s)
        .await
        .err()
        .expect("no connection");
    assert!(
        t.elapsed() < MS(800) + 3 * GRACE + MS(500),
        "{:?}",
        t.elapsed()
    );
    assert!(matches!(err, KgpError::NeverConnected { .. }), "{err}");
    let fault = err.fault();
    assert_eq!(fault.kind, FaultKind::Stall);
    assert!(
        fault.detail.contains("KGP_HOST:KGP_PORT"),
        "{}",
        fault.detail
    );
    assert_no_survivors(None, Some(&mark));
}

#[tokio::test]
async fn an_agent_that_exits_before_connecting_crashed() {
    let (cmd, mark) = agent("exit-at-start");
    let err = KgpEngine::start(&cmd, &settings()).await.err().unwrap();
    let fault = err.fault();
    assert_eq!(fault.kind, FaultKind::Crash);
    assert!(
        fault.detail.contains("status 3") && fault.detail.contains("opening book"),
        "{}",
        fault.detail
    );
    assert_no_survivors(None, Some(&mark));
}

#[tokio::test]
async fn handshake_faults() {
    let (cmd, mark) = agent("mode-simple");
    let err = KgpEngine::start(&cmd, &settings()).await.err().unwrap();
    assert!(matches!(err, KgpError::UnsupportedMode { .. }), "{err}");
    assert_eq!(err.fault().kind, FaultKind::ProtocolError);
    assert!(err.fault().line.unwrap().contains("mode"));
    assert_no_survivors(None, Some(&mark));
    let (cmd, mark) = agent("no-pong");
    let s = Settings {
        ping_timeout: MS(500),
        ..settings()
    };
    let err = KgpEngine::start(&cmd, &s).await.err().unwrap();
    assert!(matches!(err, KgpError::Stall { .. }), "{err}");
    assert_eq!(err.fault().kind, FaultKind::Stall);
    assert_no_survivors(None, Some(&mark));
    // No `mode`: what the agent said instead is shown.
    let (cmd, mark) = agent("refuse");
    let s = Settings {
        startup_timeout: MS(800),
        ..settings()
    };
    let err = KgpEngine::start(&cmd, &s).await.err().unwrap();
    assert!(matches!(err, KgpError::NoMode { .. }), "{err}");
    assert_eq!(err.fault().kind, FaultKind::Stall);
    assert!(err.to_string().contains("protocol not supported"), "{err}");
    assert_no_survivors(None, Some(&mark));
}

#[tokio::test]
async fn garbage_and_bad_moves_are_protocol_errors_with_the_line() {
    let err = go_fails("garbage", MS(1000)).await;
    let fault = err.fault();
    assert_eq!(fault.kind, FaultKind::ProtocolError);
    assert_eq!(fault.line.as_deref(), Some(r#"{"type":"move","pit":3}"#));
    assert!(
        fault.detail.contains("not a KGP command"),
        "{}",
        fault.detail
    );

    let err = go_fails("bad-move", MS(1000)).await;
    assert!(matches!(err, KgpError::Malformed { .. }), "{err}");
    assert!(err.fault().line.unwrap().ends_with("move three"));

    let err = go_fails("future-ref", MS(1000)).await;
    assert!(matches!(err, KgpError::UnknownReference { .. }), "{err}");
    assert_eq!(err.fault().kind, FaultKind::ProtocolError);
}

#[tokio::test]
async fn no_move_is_a_timeout() {
    let t = Instant::now();
    let err = go_fails("silent", MS(300)).await;
    assert!(matches!(err, KgpError::Timeout { .. }), "{err}");
    assert_eq!(err.fault().kind, FaultKind::Timeout);
    assert!(t.elapsed() >= MS(300));
    let err = go_fails("yield-only", MS(1000)).await;
    assert!(matches!(err, KgpError::YieldWithoutMove { .. }), "{err}");
    assert_eq!(err.fault().kind, FaultKind::Timeout);
    assert!(err.fault().line.unwrap().ends_with("yield"));
}

#[tokio::test]
async fn an_illegal_move_is_left_to_the_referee() {
    let (mut a, _mark) = started("illegal", &settings()).await;
    let reply = a
        .go(&start(), TimeLimit::MoveTime(MS(500)), MS(1500))
        .await
        .unwrap();
    assert_eq!(reply.pit, 0);
    assert!(start().check(reply.pit).is_err());
    a.shutdown().await;
}

/// Two moves, then the third state ends the connection (or the process).
async fn third_state_fails(mode: &str) -> (KgpError, String) {
    let (mut a, mark) = started(mode, &settings()).await;
    let pgid = a.pid();
    let mut pos = start();
    for _ in 0..2 {
        let r = a
            .go(&pos, TimeLimit::MoveTime(MS(300)), MS(1300))
            .await
            .unwrap();
        pos = pos.play(r.pit).unwrap();
    }
    let t = Instant::now();
    let err = a
        .go(&pos, TimeLimit::MoveTime(MS(3000)), MS(3050))
        .await
        .expect_err("the third state fails");
    assert!(t.elapsed() < MS(1500), "noticed at once: {:?}", t.elapsed());
    a.shutdown().await;
    assert_no_survivors(Some(pgid), Some(&mark));
    (err, mark)
}

#[tokio::test]
async fn a_disconnect_mid_game_is_a_crash() {
    let (err, _) = third_state_fails("disconnect").await;
    assert!(matches!(err, KgpError::Disconnected { .. }), "{err}");
    let fault = err.fault();
    assert_eq!(fault.kind, FaultKind::Crash);
    assert!(
        fault.detail.contains("closed its connection") && fault.detail.contains("giving up"),
        "{}",
        fault.detail
    );
    let (err, _) = third_state_fails("exit-mid-game").await;
    let fault = err.fault();
    assert_eq!(fault.kind, FaultKind::Crash);
    assert!(fault.detail.contains("status 5"), "{}", fault.detail);
}

#[tokio::test]
async fn a_flood_of_moves_stays_bounded() {
    let (mut a, _mark) = started("flood", &settings()).await;
    let reply = a
        .go(&start(), TimeLimit::MoveTime(MS(3000)), MS(3050))
        .await
        .unwrap();
    assert_eq!(reply.pit, 1);
    let cap = settings().info_cap;
    assert_eq!(reply.infos.len(), cap);
    assert_eq!(reply.infos_dropped, 10_000 - cap as u64);
    a.shutdown().await;
}

#[tokio::test]
async fn children_die_with_the_agent_and_stubborn_agents_are_killed() {
    let (mut a, mark) = started("children", &settings()).await;
    let pgid = a.pid();
    let mut pos = start();
    for _ in 0..3 {
        let r = a
            .go(&pos, TimeLimit::MoveTime(MS(300)), MS(1300))
            .await
            .unwrap();
        pos = pos.play(r.pit).unwrap();
    }
    // The agent and its three children run.
    assert!(live_processes(None, Some(&mark)).len() >= 4);
    a.shutdown().await;
    assert_no_survivors(Some(pgid), Some(&mark));

    let (a, mark) = started("stay", &settings()).await;
    let pgid = a.pid();
    let t = Instant::now();
    assert_eq!(a.shutdown().await, Stopped::Killed);
    assert!(t.elapsed() < 3 * GRACE + MS(1000), "{:?}", t.elapsed());
    assert_no_survivors(Some(pgid), Some(&mark));
}

fn logs(dir: &Path) -> Settings {
    Settings {
        logs: Some(LogPlace {
            dir: dir.to_path_buf(),
            stem: "agent".into(),
            budget: Arc::new(AtomicU64::new(10 << 20)),
        }),
        transcript: true,
        ..settings()
    }
}

#[tokio::test]
async fn stdout_goes_to_the_log_and_the_transcript_has_every_line() {
    let dir = tempfile::tempdir().unwrap();
    let (mut a, _mark) = started("noisy", &logs(dir.path())).await;
    let clock = TimeLimit::Clock {
        remaining: Duration::from_secs(10),
        increment: MS(100),
        opponent_remaining: Some(Duration::from_secs(9)),
    };
    // 512 KiB of output per state: it must neither block the agent nor reach the protocol.
    for _ in 0..3 {
        let r = a
            .go(&start(), clock, Duration::from_secs(10))
            .await
            .unwrap();
        assert_eq!(r.pit, 1);
    }
    let log = a.log_path().unwrap().to_path_buf();
    a.shutdown().await;
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.len() >= 3 * (512 << 10), "{} bytes", text.len());
    let transcript = std::fs::read_to_string(dir.path().join("agent.1.transcript")).unwrap();
    for want in [
        "> kgp 1 0 0",
        r#"< 1 set "info:name" "kgp-noisy""#,
        "mode \"freeplay\"",
        r#"set game:id "g1""#,
        r#"set time:mode "absolute""#,
        "set time:clock 10",
        "set time:opclock 9",
        "state <6,0,0,4,4,4,4,4,4,4,4,4,4,4,4>",
        " yield",
        " stop",
        "> goodbye",
    ] {
        assert!(transcript.contains(want), "{want:?} in\n{transcript}");
    }
}

#[tokio::test]
async fn host_and_port_can_be_given_as_arguments() {
    let mark = marker("argv");
    let cmd = EngineCommand::new(agent_exe(), ["argv", "{host}", "{port}", mark.as_str()]);
    let mut a = KgpEngine::start(&cmd, &settings()).await.unwrap();
    let r = a
        .go(&start(), TimeLimit::MoveTime(MS(500)), MS(1500))
        .await
        .unwrap();
    assert_eq!(r.pit, 1);
    a.shutdown().await;
}

#[test]
fn a_state_is_stopped_at_the_move_time_or_a_slice_of_the_clock() {
    assert_eq!(state_time(TimeLimit::MoveTime(MS(100)), MS(150)), MS(100));
    let clock = TimeLimit::Clock {
        remaining: Duration::from_secs(10),
        increment: MS(100),
        opponent_remaining: None,
    };
    let t = state_time(clock, Duration::from_secs(10));
    assert!(t > MS(100) && t < Duration::from_secs(1), "{t:?}");
    // An exhausted clock still gives a moment, never past the deadline.
    let empty = TimeLimit::Clock {
        remaining: Duration::ZERO,
        increment: Duration::ZERO,
        opponent_remaining: None,
    };
    assert_eq!(state_time(empty, MS(50)), MS(10));
    assert_eq!(state_time(empty, MS(3)), MS(3));
}

// ---- through the command line ----------------------------------------------------------

fn kalaha() -> Command {
    Command::new(env!("CARGO_BIN_EXE_kalaha"))
}

fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// An `--engine` for the test agent in `mode`.
fn kgp_engine(mode: &str, mark: &str, extra: &[&str]) -> Vec<String> {
    let mut v = vec![
        "--engine".to_string(),
        format!("cmd={}", agent_exe().display()),
        "protocol=kgp".into(),
        format!("arg={mode}"),
        format!("arg={mark}"),
    ];
    v.extend(extra.iter().map(|s| s.to_string()));
    v
}

fn csv_rows(dir: &Path) -> Vec<BTreeMap<String, String>> {
    let mut r = csv::Reader::from_path(dir.join("games.csv")).unwrap();
    let headers = r.headers().unwrap().clone();
    r.records()
        .map(|rec| {
            let rec = rec.unwrap();
            headers
                .iter()
                .zip(rec.iter())
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect()
        })
        .collect()
}

#[test]
fn kgp_agents_play_a_tournament_against_the_built_in_engines() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let mark = marker("tournament");
    let mut args: Vec<String> = vec!["tournament".into()];
    args.extend(kgp_engine("greedy", &mark, &[]));
    args.extend(kgp_engine("anytime", &mark, &[]));
    args.extend(kgp_engine("first", &mark, &["name=kfirst"]));
    for b in ["greedy", "first"] {
        args.extend(["--engine".to_string(), format!("builtin={b}")]);
    }
    args.extend(
        [
            "--games",
            "2",
            "--move-time",
            "30ms",
            // The tests run side by side: a loaded machine may delay a first move.
            "--time-margin",
            "500ms",
            "--quiet",
            "--debug",
            "--out",
        ]
        .map(String::from),
    );
    args.push(out.display().to_string());
    let o = kalaha().args(&args).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let rows = csv_rows(&out);
    assert_eq!(rows.len(), 20);
    let names: std::collections::BTreeSet<&str> =
        rows.iter().map(|r| r["south"].as_str()).collect();
    // `set info:name` names an agent unless the spec gives name=.
    assert_eq!(
        names,
        ["first", "greedy", "kfirst", "kgp-anytime", "kgp-greedy"].into()
    );
    for r in &rows {
        assert_eq!(r["termination"], "normal", "{r:?}");
    }
    // The KGP greedy agent plays exactly as the built-in greedy engine (every pairing of a
    // round plays the same opening).
    let games = |s: &str, n: &str| {
        rows.iter()
            .filter(|r| r["south"] == s && r["north"] == n)
            .map(|r| {
                let score = (
                    r["result"].clone(),
                    r["plies"].clone(),
                    r["south_score"].clone(),
                );
                (r["opening"].clone(), score)
            })
            .collect::<BTreeMap<_, _>>()
    };
    assert!(!games("kgp-greedy", "first").is_empty());
    assert_eq!(games("kgp-greedy", "first"), games("greedy", "first"));
    assert_eq!(games("first", "kgp-greedy"), games("first", "greedy"));
    let toml = std::fs::read_to_string(out.join("tournament.toml")).unwrap();
    assert_eq!(toml.matches("protocol = \"kgp\"").count(), 3, "{toml}");
    let transcripts = std::fs::read_dir(out.join("logs"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".transcript"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .filter(|t| t.contains("> kgp 1 0 0"))
        .count();
    assert!(transcripts >= 3, "{transcripts} KGP transcripts");
    assert_no_survivors(None, Some(&mark));
}

#[test]
fn faulty_agents_lose_with_the_right_termination_and_are_restarted() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let mark = marker("faults");
    let mut args: Vec<String> = vec!["tournament".into()];
    args.extend(kgp_engine("first", &mark, &[]));
    for mode in ["garbage", "disconnect", "silent", "illegal", "children"] {
        args.extend(kgp_engine(mode, &mark, &[]));
    }
    args.extend(
        [
            "--gauntlet",
            "--games",
            "4",
            "--move-time",
            "50ms",
            "--time-margin",
            "500ms",
            "--quiet",
            "--out",
        ]
        .map(String::from),
    );
    args.push(out.display().to_string());
    let o = kalaha().args(&args).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let rows = csv_rows(&out);
    let by_loser = |name: &str| {
        rows.iter()
            .filter(|r| r["south"] == name || r["north"] == name)
            .collect::<Vec<_>>()
    };
    for (name, termination, detail) in [
        ("kgp-garbage", "protocol_error", "not a KGP command"),
        ("kgp-disconnect", "crash", "closed its connection"),
        ("kgp-silent", "timeout", "no move"),
        ("kgp-illegal", "illegal_move", "pit"),
    ] {
        let games = by_loser(name);
        assert_eq!(games.len(), 4, "{name}: {games:?}");
        for g in games {
            if name == "kgp-disconnect" && g["termination"] == "normal" {
                // A game of two moves or fewer for the agent ends before its third state.
                continue;
            }
            assert_eq!(g["termination"], termination, "{g:?}");
            let seat = if g["south"] == name { "south" } else { "north" };
            assert_eq!(g["loser"], seat, "{g:?}");
            assert!(g["detail"].contains(detail), "{g:?}");
            assert!(!g["detail"].contains("failed to start"), "restarted: {g:?}");
        }
    }
    // The children of the computing agent do not stop its games.
    for g in by_loser("kgp-children") {
        assert_eq!(g["termination"], "normal", "{g:?}");
    }
    // A faulty agent gets a fresh process for each game: one log per instance.
    let logs = std::fs::read_dir(out.join("logs")).unwrap().count();
    assert!(logs >= 4 * 4, "{logs} logs");
    assert_no_survivors(None, Some(&mark));
}

#[test]
fn an_agent_that_fails_its_handshake_stops_the_tournament_before_any_game() {
    let dir = tempfile::tempdir().unwrap();
    let mark = marker("startup");
    let mut args: Vec<String> = vec!["tournament".into()];
    args.extend(kgp_engine("mode-simple", &mark, &["name=simple"]));
    args.extend(["--engine".into(), "builtin=first".into()]);
    args.extend(["--quiet".into(), "--out".into()]);
    args.push(dir.path().join("r").display().to_string());
    let o = kalaha().args(&args).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("simple") && err.contains("freeplay"), "{err}");
    // A KGP agent takes no options.
    let mut args: Vec<String> = vec!["tournament".into()];
    args.extend(kgp_engine("first", &mark, &["option.depth=3"]));
    args.extend(["--engine".into(), "builtin=first".into()]);
    let o = kalaha().args(&args).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("no options"),
        "{}",
        text(&o)
    );
    assert_no_survivors(None, Some(&mark));
}

#[test]
fn killing_the_referee_kills_the_agents_and_their_children() {
    let dir = tempfile::tempdir().unwrap();
    let mark = marker("kill9");
    let mut args: Vec<String> = vec!["tournament".into()];
    args.extend(kgp_engine("children", &mark, &[]));
    args.extend(kgp_engine("anytime", &mark, &[]));
    args.extend(["--games", "200", "--move-time", "200ms", "--quiet", "--out"].map(String::from));
    args.push(dir.path().join("r").display().to_string());
    let mut child = kalaha()
        .args(&args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let end = Instant::now() + Duration::from_secs(20);
    while live_processes(None, Some(&mark)).len() < 5 {
        assert!(Instant::now() < end, "the agents did not start");
        std::thread::sleep(MS(50));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert_no_survivors(None, Some(&mark));
}

fn check(args: &[&str]) -> (i32, String) {
    let o = kalaha().arg("check").args(args).output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
    )
}

fn check_agent(mode: &str) -> (i32, String, String) {
    let mark = marker(mode);
    let exe = agent_exe();
    let (code, out) = check(&[
        "--protocol",
        "kgp",
        "--startup-timeout",
        "1s",
        "--",
        exe.to_str().unwrap(),
        mode,
        &mark,
    ]);
    (code, out, mark)
}

#[test]
fn check_passes_good_agents_and_names_what_is_wrong_with_others() {
    for mode in ["first", "anytime", "late", "stay"] {
        let (code, out, mark) = check_agent(mode);
        assert_eq!(code, 0, "{mode}:\n{out}");
        for step in [
            "PASS connect",
            "PASS mode",
            "PASS ping",
            "PASS state-north-to-move",
            "PASS state-clock",
            "PASS stop-respected",
            "PASS goodbye",
        ] {
            assert!(out.contains(step), "{mode}: {step}\n{out}");
        }
        assert!(out.contains("16 of 16 steps passed"), "{out}");
        assert_no_survivors(None, Some(&mark));
    }
    // The same check through an engine spec.
    let mark = marker("spec");
    let (code, out) = check(&[
        &format!("cmd={}", agent_exe().display()),
        "arg=first",
        &format!("arg={mark}"),
        "protocol=kgp",
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("PASS stop-respected"), "{out}");
    assert_no_survivors(None, Some(&mark));
    let (_, out, _) = check_agent("late");
    assert!(out.contains("came after their state was stopped"), "{out}");
    let (_, out, _) = check_agent("stay");
    assert!(out.contains("PASS goodbye (warning:"), "{out}");
    for (mode, want) in [
        (
            "garbage",
            "FAIL state-start: a line that is not a KGP command",
        ),
        ("illegal", "FAIL state-start: illegal move"),
        ("never-connect", "FAIL connect: the agent did not connect"),
        (
            "mode-simple",
            "FAIL mode: the agent asked for mode \"simple\"",
        ),
        ("silent", "FAIL state-start: no move within"),
    ] {
        let (code, out, mark) = check_agent(mode);
        assert_eq!(code, 1, "{mode}:\n{out}");
        assert!(out.contains(want), "{mode}: {want}\n{out}");
        assert_no_survivors(None, Some(&mark));
    }
}

fn has_python() -> bool {
    Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn the_python_agent_computing_in_child_processes_plays_and_leaves_nothing() {
    if !has_python() {
        eprintln!("python3 is not installed: skipped");
        return;
    }
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/kgp_agent.py");
    let (code, out) = check(&["--protocol", "kgp", "--", "python3", script]);
    assert_eq!(code, 0, "{out}");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let o = kalaha()
        .args([
            "tournament",
            "--engine",
            "cmd=python3",
            &format!("arg={script}"),
            "protocol=kgp",
            "--engine",
            "builtin=greedy",
            "--games",
            "2",
            "--move-time",
            "100ms",
            "--time-margin",
            "1s",
            "--quiet",
            "--out",
            &out.display().to_string(),
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let rows = csv_rows(&out);
    assert_eq!(rows.len(), 2);
    for r in &rows {
        assert_eq!(r["termination"], "normal", "{r:?}");
        assert!(r["south"] == "py-kgp-agent" || r["north"] == "py-kgp-agent");
    }
    assert_no_survivors(None, Some(script));
}

// ---- the measurement of the bridge ------------------------------------------------------

/// User plus system CPU time of this process, all threads.
fn cpu() -> Duration {
    // SAFETY: getrusage only writes into the struct we pass.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(u.ru_utime) + tv(u.ru_stime)
}

struct Quiet;
impl kalaha::tournament::events::View for Quiet {
    fn event(
        &mut self,
        _: &kalaha::tournament::events::Event<'_>,
        _: &kalaha::stats::Tally,
    ) -> std::io::Result<kalaha::tournament::events::Control> {
        Ok(kalaha::tournament::events::Control::Continue)
    }
}

/// The referee's CPU and the wall time per engine move over `games` games of `first`
/// against `first` (which answers every state at once), both speaking `protocol`, through
/// the whole tournament path (as `benches/referee.rs`): (CPU us, wall us, moves).
fn referee_cpu_per_move(protocol: &str, games: u64, dir: &Path) -> (f64, f64, u64) {
    use kalaha::tournament::config::ConfigFile;
    use kalaha::tournament::spec::EngineSpec;
    let spec = |name: &str| {
        let words: Vec<String> = match protocol {
            "kgp" => vec![
                format!("cmd={}", agent_exe().display()),
                "arg=first".into(),
                "protocol=kgp".into(),
                format!("name={name}"),
            ],
            _ => vec![
                format!("cmd={}", env!("CARGO_BIN_EXE_kalaha")),
                "arg=engine".into(),
                "arg=first".into(),
                format!("name={name}"),
            ],
        };
        EngineSpec::parse(&words).expect("spec")
    };
    let config = ConfigFile {
        engines: vec![spec("a"), spec("b")],
        games: Some(games),
        tc: Some("1s".parse().expect("time")),
        ..ConfigFile::default()
    }
    .resolve()
    .expect("config");
    let mut options = kalaha::tournament::RunOptions::new(dir.join(protocol));
    options.concurrency = 2;
    let (c0, w0) = (cpu(), std::time::Instant::now());
    let outcome =
        kalaha::tournament::run_tournament(config, &options, &mut [&mut Quiet], None).expect("run");
    let (used, wall) = (cpu() - c0, w0.elapsed());
    assert_eq!(outcome.summary.played, games);
    let moves = outcome.summary.moves;
    let per_move = |d: Duration| d.as_secs_f64() * 1e6 / moves as f64;
    (per_move(used), per_move(wall), moves)
}

#[test]
#[ignore = "a measurement: cargo test --release --test kgp -- --ignored --nocapture overhead"]
fn overhead_of_the_kgp_bridge_per_move() {
    let games: u64 = std::env::var("KALAHA_BENCH_GAMES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(400);
    let dir = tempfile::tempdir().unwrap();
    // Alternated, three times each, so that a change of machine load hits both; the least
    // CPU of each is the one least disturbed by other work.
    let mut runs: BTreeMap<(&str, &str), Vec<f64>> = BTreeMap::new();
    for round in 0..3 {
        for protocol in ["kalaha", "kgp"] {
            let sub = dir.path().join(format!("{round}"));
            let (us, wall, moves) = referee_cpu_per_move(protocol, games, &sub);
            println!(
                "{protocol:>6}: {games} games, {moves} moves, referee CPU {us:.1} us and wall \
                 {wall:.1} us per move (2 games at once)"
            );
            runs.entry((protocol, "cpu")).or_default().push(us);
            runs.entry((protocol, "wall")).or_default().push(wall);
        }
    }
    let stats = |p: &str, what: &str| {
        let mut v = runs[&(p, what)].clone();
        v.sort_by(f64::total_cmp);
        (v[0], v[v.len() / 2])
    };
    for what in ["cpu", "wall"] {
        let ((kalaha, kalaha_median), (kgp, kgp_median)) =
            (stats("kalaha", what), stats("kgp", what));
        println!(
            "{what}, least of three: kalaha protocol {kalaha:.1} us, KGP {kgp:.1} us per move: \
             the bridge adds {:.1} us ({:.2}x); medians {kalaha_median:.1} and {kgp_median:.1} us",
            kgp - kalaha,
            kgp / kalaha
        );
    }
}
