//! The engine supervisor against the fake engines: every fault gives the right error in
//! time, memory stays bounded and no process is left behind.

use crate::common::{
    GRACE, assert_no_survivors, fake_engine, marker, peak_rss, short_settings as settings,
};
use kalaha::record::{SideResult, Termination, TimeLimit};
use kalaha::rules::{Move, Position, Rules, Side};
use kalaha::supervisor::{
    Engine, EngineCommand, EngineError, LogPlace, MALFORMED, Settings, Stopped,
};
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

fn fake(mode: &str) -> (EngineCommand, String) {
    let mark = marker(mode);
    (
        EngineCommand::new(fake_engine(), [mode, mark.as_str()]),
        mark,
    )
}

async fn started(mode: &str) -> (Engine, String) {
    let (cmd, mark) = fake(mode);
    let mut engine = Engine::start(&cmd, &settings()).await.expect("handshake");
    assert_eq!(engine.hello().name, format!("fake-{mode}"));
    engine
        .new_game("g1", Rules::default(), None, Side::South)
        .await
        .expect("new_game");
    (engine, mark)
}

const MOVE_TIME: TimeLimit = TimeLimit::MoveTime(Duration::from_millis(100));

/// Logs in `dir`, `budget` bytes in all.
fn logs(dir: &std::path::Path, budget: u64) -> Option<LogPlace> {
    Some(LogPlace {
        dir: dir.to_path_buf(),
        stem: "fake".into(),
        budget: Arc::new(AtomicU64::new(budget)),
    })
}

async fn go_start(engine: &mut Engine, deadline: Duration) -> Result<i64, EngineError> {
    let pos = Position::start(Rules::default());
    engine
        .go(&pos, &[], MOVE_TIME, deadline)
        .await
        .map(|r| r.pit)
}

/// Runs one `go` that must fail, checks the time it took, shuts down, checks for survivors.
async fn go_fails(mode: &str, deadline: Duration) -> EngineError {
    let (mut engine, mark) = started(mode).await;
    let pgid = engine.pid();
    let t = Instant::now();
    let err = go_start(&mut engine, deadline)
        .await
        .expect_err("the move must fail");
    assert!(
        t.elapsed() < deadline + Duration::from_millis(500),
        "{mode}: took {:?}",
        t.elapsed()
    );
    let t = Instant::now();
    engine.shutdown().await;
    assert!(t.elapsed() < 2 * GRACE + Duration::from_millis(500));
    assert_no_survivors(Some(pgid), Some(&mark));
    err
}

#[tokio::test]
async fn good_engine_plays_and_quits() {
    let (mut engine, mark) = started("good").await;
    let pgid = engine.pid();
    let pos = Position::start(Rules::default());
    let reply = engine
        .go(&pos, &[], MOVE_TIME, Duration::from_secs(2))
        .await
        .unwrap();
    assert_eq!(reply.pit, 1);
    assert_eq!(reply.line, r#"{"type":"move","pit":1}"#);
    let next = pos.play(1).unwrap();
    let moves = [Move {
        side: Side::South,
        pit: 1,
    }];
    let reply = engine
        .go(&next, &moves, MOVE_TIME, Duration::from_secs(2))
        .await
        .unwrap();
    assert_eq!(reply.pit, 1);
    engine.ping().await.unwrap();
    engine
        .game_over("g1", SideResult::Win, 30, 18, Termination::Normal)
        .await
        .unwrap();
    let stopped = engine.shutdown().await;
    assert!(
        matches!(stopped, Stopped::Exited(e) if e.code == Some(0)),
        "{stopped:?}"
    );
    assert_no_survivors(Some(pgid), Some(&mark));
}

#[tokio::test]
async fn crash_at_start_is_an_exit() {
    let (cmd, mark) = fake("crash-at-start");
    let t = Instant::now();
    let err = Engine::start(&cmd, &settings()).await.err().unwrap();
    assert!(
        matches!(err, EngineError::Exited { exit, .. } if exit.code == Some(3)),
        "{err}"
    );
    assert!(t.elapsed() < Duration::from_secs(2));
    assert_no_survivors(None, Some(&mark));
}

#[tokio::test]
async fn crash_mid_game_is_an_exit_by_signal() {
    let (mut engine, mark) = started("crash-mid-game").await;
    let pgid = engine.pid();
    assert_eq!(
        go_start(&mut engine, Duration::from_secs(2)).await.unwrap(),
        1
    );
    let t = Instant::now();
    let err = go_start(&mut engine, Duration::from_secs(5))
        .await
        .unwrap_err();
    assert!(t.elapsed() < Duration::from_secs(1));
    assert!(
        matches!(err, EngineError::Exited { exit, .. } if exit.signal == Some(9)),
        "{err}"
    );
    assert!(err.to_string().contains("SIGKILL"), "{err}");
    engine.shutdown().await;
    assert_no_survivors(Some(pgid), Some(&mark));
}

#[tokio::test]
async fn hang_is_a_timeout() {
    let err = go_fails("hang", Duration::from_millis(300)).await;
    assert!(matches!(err, EngineError::Timeout { .. }), "{err}");
}

#[tokio::test]
async fn non_json_is_reported_with_the_line() {
    let err = go_fails("non-json", Duration::from_secs(2)).await;
    assert!(
        matches!(&err, EngineError::NotJson { line, .. } if line == "move 3"),
        "{err}"
    );
}

#[tokio::test]
async fn a_64_mib_line_is_too_long_with_bounded_memory() {
    let err = go_fails("long-line", Duration::from_secs(5)).await;
    assert!(
        matches!(&err, EngineError::LineTooLong { limit, prefix } if *limit == 1 << 20 && prefix.starts_with("xxx")),
        "{err}"
    );
    let peak = peak_rss();
    assert!(peak < 60 << 20, "peak memory {peak} bytes");
}

#[tokio::test]
async fn an_illegal_pit_is_passed_on_for_the_referee_to_judge() {
    let (mut engine, mark) = started("illegal-move").await;
    let pgid = engine.pid();
    // From the start no pit is empty: the fake answers pits + 1.
    assert_eq!(
        go_start(&mut engine, Duration::from_secs(2)).await.unwrap(),
        7
    );
    engine.shutdown().await;
    assert_no_survivors(Some(pgid), Some(&mark));
}

#[tokio::test]
async fn pit_as_string_is_a_malformed_move() {
    let err = go_fails("pit-as-string", Duration::from_secs(2)).await;
    assert!(
        matches!(&err, EngineError::Malformed { kind, line, .. } if kind == "move" && line.contains("\"1\"")),
        "{err}"
    );
}

#[tokio::test]
async fn stderr_flood_is_drained_and_capped() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("fake.1.log");
    let (cmd, mark) = fake("flood-stderr");
    let s = Settings {
        logs: logs(dir.path(), 1 << 20),
        startup_timeout: Duration::from_secs(20),
        ..settings()
    };
    let t = Instant::now();
    let mut engine = Engine::start(&cmd, &s).await.expect("handshake");
    let startup = t.elapsed();
    let pgid = engine.pid();
    assert_eq!(
        go_start(&mut engine, Duration::from_secs(2)).await.unwrap(),
        1
    );
    engine.shutdown().await;
    let size = std::fs::metadata(&log).unwrap().len();
    assert!(
        (1 << 20..(1 << 20) + 200).contains(&size),
        "log size {size}"
    );
    if !cfg!(debug_assertions) {
        assert!(startup < Duration::from_secs(5), "startup took {startup:?}");
    }
    let peak = peak_rss();
    assert!(peak < 60 << 20, "peak memory {peak} bytes");
    assert_no_survivors(Some(pgid), Some(&mark));
}

#[tokio::test]
async fn info_flood_is_collected_with_bounded_memory() {
    let (mut engine, mark) = started("flood-info").await;
    let pgid = engine.pid();
    let pos = Position::start(Rules::default());
    let reply = engine
        .go(&pos, &[], MOVE_TIME, Duration::from_secs(20))
        .await
        .unwrap();
    assert_eq!(reply.pit, 1);
    assert_eq!(reply.infos.len(), 100);
    assert_eq!(reply.infos_dropped, 99_900);
    assert_eq!(reply.infos.last().unwrap().nodes, Some(99_999));
    if !cfg!(debug_assertions) {
        assert!(
            reply.elapsed < Duration::from_secs(3),
            "{:?}",
            reply.elapsed
        );
    }
    let peak = peak_rss();
    assert!(peak < 60 << 20, "peak memory {peak} bytes");
    engine.shutdown().await;
    assert_no_survivors(Some(pgid), Some(&mark));
}

#[tokio::test]
async fn ignoring_quit_and_sigterm_ends_in_sigkill() {
    let (mut engine, mark) = started("ignore-quit").await;
    let pgid = engine.pid();
    assert_eq!(
        go_start(&mut engine, Duration::from_secs(2)).await.unwrap(),
        1
    );
    let t = Instant::now();
    let stopped = engine.shutdown().await;
    assert_eq!(stopped, Stopped::Killed);
    assert!(t.elapsed() < 2 * GRACE + Duration::from_millis(500));
    assert_no_survivors(Some(pgid), Some(&mark));
}

#[tokio::test]
async fn a_grandchild_holding_stdout_is_killed_too() {
    let (cmd, mark) = fake("grandchild");
    let t = Instant::now();
    let err = Engine::start(&cmd, &settings()).await.err().unwrap();
    assert!(
        matches!(err, EngineError::Exited { exit, .. } if exit.code == Some(0)),
        "{err}"
    );
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    assert_no_survivors(None, Some(&mark));
}

#[tokio::test]
async fn a_silent_program_is_a_handshake_timeout() {
    let (cmd, mark) = fake("silent");
    let s = Settings {
        startup_timeout: Duration::from_millis(300),
        ..settings()
    };
    let t = Instant::now();
    let err = Engine::start(&cmd, &s).await.err().unwrap();
    assert!(matches!(err, EngineError::HandshakeTimeout { .. }), "{err}");
    assert!(t.elapsed() < Duration::from_millis(300) + 2 * GRACE + Duration::from_millis(500));
    assert_no_survivors(None, Some(&mark));
}

#[tokio::test]
async fn a_missing_program_is_a_spawn_error() {
    let cmd = EngineCommand::new("/nonexistent/engine", Vec::<String>::new());
    let err = Engine::start(&cmd, &settings()).await.err().unwrap();
    assert!(matches!(err, EngineError::Spawn { .. }), "{err}");
}

#[tokio::test]
async fn dropping_the_handle_kills_the_group() {
    let (engine, mark) = started("ignore-quit").await;
    let pgid = engine.pid();
    drop(engine);
    assert_no_survivors(Some(pgid), Some(&mark));
}

#[tokio::test]
async fn transcript_and_options() {
    let dir = tempfile::tempdir().unwrap();
    let transcript = dir.path().join("fake.1.transcript");
    let (cmd, _mark) = fake("good");
    let s = Settings {
        logs: logs(dir.path(), 1 << 20),
        transcript: true,
        ..settings()
    };
    let mut engine = Engine::start(&cmd, &s).await.unwrap();
    let err = engine
        .set_option("depth", serde_json::json!(3))
        .await
        .unwrap_err();
    assert!(matches!(err, EngineError::BadOption { .. }), "{err}");
    engine.send_raw(r#"{"type":"future","x":1}"#).await.unwrap();
    let long = format!(r#"{{"type":"future","pad":"{}"}}"#, "p".repeat(5000));
    engine.send_raw(&long).await.unwrap();
    engine.ping().await.unwrap();
    engine.shutdown().await;
    let text = std::fs::read_to_string(&transcript).unwrap();
    // Lines are kept whole, so a failing exchange can be replayed.
    assert!(text.contains(&format!("> {long}")), "the long line was cut");
    assert!(
        text.contains(r#"> {"type":"hello","protocol":1}"#),
        "{text}"
    );
    assert!(text.contains(r#"< {"type":"pong","id":1}"#), "{text}");
}

#[tokio::test]
async fn an_engine_that_stops_reading_is_a_stall() {
    let (cmd, mark) = fake("hang");
    let s = Settings {
        ping_timeout: Duration::from_millis(300),
        ..settings()
    };
    let mut engine = Engine::start(&cmd, &s).await.unwrap();
    let pgid = engine.pid();
    engine.ping().await.unwrap();
    let err = go_start(&mut engine, Duration::from_millis(200))
        .await
        .unwrap_err();
    assert!(matches!(err, EngineError::Timeout { .. }), "{err}");
    let t = Instant::now();
    let err = engine.ping().await.unwrap_err();
    assert!(matches!(err, EngineError::Stall { .. }), "{err}");
    assert!(t.elapsed() < Duration::from_millis(800));
    engine.shutdown().await;
    assert_no_survivors(Some(pgid), Some(&mark));
}

#[tokio::test]
async fn log_lines_and_unknown_types_are_recorded() {
    if std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_err()
    {
        return;
    }
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/engines/python/example.py");
    let cmd = EngineCommand::new("python3", [script]);
    let mut engine = Engine::start(&cmd, &settings()).await.unwrap();
    assert_eq!(engine.hello().name, "python-greedy");
    engine
        .set_option("extra_turn_bonus", serde_json::json!(3))
        .await
        .unwrap();
    // A value the declaration forbids is refused before it is sent...
    assert!(
        engine
            .set_option("extra_turn_bonus", serde_json::json!(11))
            .await
            .is_err()
    );
    // ...so send it raw: the engine answers with a log line, which is recorded.
    engine
        .send_raw(r#"{"type":"option","name":"extra_turn_bonus","value":"x"}"#)
        .await
        .unwrap();
    engine.ping().await.unwrap();
    let notes = engine.take_notes();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert_eq!(notes[0].level, "warn");
    assert!(notes[0].line.contains("bad option"), "{notes:?}");
    let pos = Position::start(Rules::default());
    let reply = engine
        .go(&pos, &[], MOVE_TIME, Duration::from_secs(2))
        .await
        .unwrap();
    // Greedy: pit 3 ends in the store (1 seed and an extra turn, bonus 3); the score is
    // the store difference it leads to.
    assert_eq!(reply.pit, 3);
    assert_eq!(reply.infos.len(), 1);
    assert_eq!(reply.infos[0].score, Some(1));
    let stopped = engine.shutdown().await;
    assert!(matches!(stopped, Stopped::Exited(e) if e.code == Some(0)));
}

#[tokio::test]
async fn malformed_log_and_info_lines_are_notes_not_faults() {
    // Before its hello, each pong and each move the fake sends 3 bad logs and 2 bad infos
    // (a log whose message is a number, an info whose pv holds 300, ...) and a log line,
    // an info line and a line of an unknown type that are not UTF-8.
    let (mut engine, mark) = started("bad-log-info").await;
    let pgid = engine.pid();
    let pos = Position::start(Rules::default());
    let reply = engine
        .go(&pos, &[], MOVE_TIME, Duration::from_secs(2))
        .await
        .expect("bad log and info lines are no fault");
    assert_eq!(reply.pit, 1);
    assert!(reply.infos.is_empty(), "{:?}", reply.infos);
    let notes = engine.take_notes();
    assert_eq!(notes.len(), 24, "{notes:?}");
    // The lines with a Latin-1 byte are kept, the byte replaced.
    let (latin1, malformed): (Vec<_>, Vec<_>) =
        notes.iter().partition(|n| n.line.contains("caf\u{fffd}"));
    assert_eq!(latin1.len(), 9, "{notes:?}");
    assert!(malformed.iter().all(|n| n.level == MALFORMED), "{notes:?}");
    assert!(
        notes
            .iter()
            .any(|n| n.line == r#"{"type":"log","message":5}"#),
        "{notes:?}"
    );
    assert!(notes.iter().any(|n| n.line.contains("300")), "{notes:?}");
    engine.shutdown().await;
    assert_no_survivors(Some(pgid), Some(&mark));
}

#[tokio::test]
async fn an_engine_can_be_driven_from_a_spawned_task() {
    // The handle and its futures are Send, so a referee can run each game in a task.
    let (cmd, mark) = fake("good");
    let task = tokio::spawn(async move {
        let mut engine = Engine::start(&cmd, &settings()).await?;
        engine
            .new_game("g", Rules::default(), None, Side::North)
            .await?;
        let pos = Position::start(Rules::default()).play(1)?;
        let moves = [Move {
            side: Side::South,
            pit: 1,
        }];
        let reply = engine
            .go(&pos, &moves, MOVE_TIME, Duration::from_secs(2))
            .await?;
        engine.shutdown().await;
        Ok::<i64, Box<dyn std::error::Error + Send + Sync>>(reply.pit)
    });
    assert_eq!(task.await.unwrap().unwrap(), 1);
    assert_no_survivors(None, Some(&mark));
}

/// A referee killed with SIGKILL cannot stop its engines itself; the kernel must, or an
/// engine that neither reads its input nor ends would run forever.
#[test]
fn engines_die_with_a_killed_referee() {
    let mark = crate::common::marker("orphan");
    let out = tempfile::tempdir().unwrap();
    let fake = crate::common::fake_engine();
    let mut referee = std::process::Command::new(env!("CARGO_BIN_EXE_kalaha"))
        .args([
            "tournament",
            "--quiet",
            "--games",
            "2",
            "--move-time",
            "20s",
            "--out",
        ])
        .arg(out.path().join("run"))
        .arg("--engine")
        .arg(format!("cmd={}", fake.display()))
        .args(["arg=hang", &format!("arg={mark}"), "name=hang"])
        .args(["--engine", "builtin=first"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait until the hanging engine runs, then kill the referee.
    let end = Instant::now() + Duration::from_secs(10);
    while crate::common::live_processes(None, Some(&mark)).is_empty() {
        assert!(Instant::now() < end, "the engine never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    referee.kill().unwrap();
    referee.wait().unwrap();
    crate::common::assert_no_survivors(None, Some(&mark));
}

/// The level of an engine's `log` line is its text too: it reaches the notes and the log
/// file cleaned of control bytes, as its message does.
#[tokio::test]
async fn a_log_level_with_an_escape_sequence_is_cleaned() {
    let dir = tempfile::tempdir().unwrap();
    let (cmd, mark) = fake("escape-level");
    let s = Settings {
        logs: logs(dir.path(), 1 << 20),
        ..settings()
    };
    let mut engine = Engine::start(&cmd, &s).await.expect("handshake");
    assert_eq!(
        go_start(&mut engine, Duration::from_secs(2)).await.unwrap(),
        1
    );
    engine.ping().await.unwrap();
    let notes = engine.take_notes();
    assert!(!notes.is_empty());
    assert!(
        notes.iter().all(|n| !n.level.contains('\u{1b}')),
        "{notes:?}"
    );
    engine.shutdown().await;
    let log = std::fs::read(dir.path().join("fake.1.log")).unwrap();
    assert!(!log.contains(&0x1b), "{}", String::from_utf8_lossy(&log));
    assert!(String::from_utf8_lossy(&log).contains("red"));
    assert_no_survivors(None, Some(&mark));
}
