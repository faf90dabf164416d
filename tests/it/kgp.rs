//! Kalah Game Protocol agents as engines, against the test agent written from the KGP
//! specification (`examples/kgp_agent.rs`): anytime moves, yield, late moves after `stop`,
//! agents that never connect, send garbage or disconnect mid-game, and no process left
//! behind. Through the command line: `tests/kgp_cli.rs`.

use crate::common::{
    GRACE, assert_no_survivors, live_processes, marker, short_settings as settings,
};
use crate::kgp_common::agent_exe;
use kalaha::kgp::{KgpEngine, KgpError, state_time};
use kalaha::record::{FaultKind, TimeLimit};
use kalaha::rules::{Position, Rules};
use kalaha::supervisor::{EngineCommand, LogPlace, Settings, Stopped};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

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
    // The agent and its three children run (a child just started may still be taking
    // its command line, so give it a moment on a busy machine).
    let deadline = Instant::now() + Duration::from_secs(5);
    while live_processes(None, Some(&mark)).len() < 4 && Instant::now() < deadline {
        tokio::time::sleep(MS(50)).await;
    }
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

/// A local program that connects to an agent's port before the agent does is refused,
/// and the agent, connecting later, plays normally (the intruder's empty pit is never
/// charged to it).
#[tokio::test]
async fn another_program_cannot_take_an_agents_connection() {
    use kalaha::kgp::Launch;
    use std::io::BufRead;
    let mark = marker("wait-file");
    // Under the target folder: engines may get a private /tmp.
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let go = dir.path().join("go");
    let go_arg = go.to_string_lossy().into_owned();
    let cmd = EngineCommand::new(agent_exe(), ["wait-file", mark.as_str(), go_arg.as_str()]);
    let s = Settings {
        startup_timeout: Duration::from_secs(30),
        ..settings()
    };
    let end = tokio::time::Instant::now() + s.startup_timeout;
    let launch = Launch::spawn(&cmd, &s).await.unwrap();
    // An intruder cannot even join the agent's process group: the agent runs in a session
    // of its own, and only a process of the same session may join one of its groups.
    let joined = std::process::Command::new(agent_exe())
        .arg("hijack")
        .env("KGP_HIJACK_PORT", launch.address().port().to_string())
        .env("KGP_HIJACK_PGID", launch.pid().to_string())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert_eq!(
        joined.code(),
        Some(5),
        "joining the agent's group is refused"
    );
    // One intruder plainly.
    let intruders: Vec<std::process::Child> = [None::<u32>]
        .into_iter()
        .map(|group| {
            let mut c = std::process::Command::new(agent_exe());
            c.arg("hijack")
                .env("KGP_HIJACK_PORT", launch.address().port().to_string())
                .stdout(std::process::Stdio::piped());
            if let Some(g) = group {
                c.env("KGP_HIJACK_PGID", g.to_string());
            }
            let mut intruder = c.spawn().unwrap();
            let mut out = std::io::BufReader::new(intruder.stdout.take().unwrap());
            let mut line = String::new();
            out.read_line(&mut line).unwrap();
            assert_eq!(line.trim(), "connected", "the intruder must connect first");
            intruder
        })
        .collect();
    std::fs::write(&go, "").unwrap();
    let mut a = launch
        .accept(end)
        .await
        .expect("the agent's own connection");
    a.handshake(end).await.expect("handshake");
    assert_eq!(a.info().name, "kgp-wait-file");
    a.new_game("g1").await.unwrap();
    let r = a
        .go(&start(), TimeLimit::MoveTime(MS(500)), MS(3000))
        .await
        .expect("the agent's own move");
    assert_eq!(r.pit, 1);
    for mut intruder in intruders {
        let status = tokio::task::spawn_blocking(move || intruder.wait().unwrap())
            .await
            .unwrap();
        assert_eq!(status.code(), Some(4), "an intruder must not be served");
    }
    a.shutdown().await;
}

/// Terminal control sequences an agent sends at start-up are not shown raw.
#[tokio::test]
async fn control_bytes_in_a_startup_answer_are_not_shown_raw() {
    let (cmd, _mark) = agent("escape");
    let err = KgpEngine::start(&cmd, &settings())
        .await
        .err()
        .expect("no mode");
    let shown = err.to_string();
    assert!(
        !shown.contains('\u{1b}') && !shown.contains('\u{7}'),
        "{shown:?}"
    );
    assert!(shown.contains("pwned"), "{shown:?}");
}

/// A local program flooding an agent's port with connections (thousands, held open) does
/// not keep the agent out: its connection is accepted within the start-up timeout, the
/// refusals are counted in its log, and it plays. With no agent connecting, the error says
/// that others did.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_connections_does_not_keep_the_agent_out() {
    use kalaha::kgp::Launch;
    use std::collections::VecDeque;
    use std::sync::atomic::{AtomicBool, Ordering};
    let mark = marker("flooded");
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let go = dir.path().join("go");
    let go_arg = go.to_string_lossy().into_owned();
    let cmd = EngineCommand::new(agent_exe(), ["wait-file", mark.as_str(), go_arg.as_str()]);
    let s = Settings {
        startup_timeout: Duration::from_secs(10),
        logs: Some(LogPlace {
            dir: dir.path().to_path_buf(),
            stem: "agent".into(),
            budget: Arc::new(AtomicU64::new(1 << 20)),
        }),
        ..settings()
    };
    /// Threads connecting to `port` as fast as they can until `stop`, each holding its
    /// last 300 connections; how many they made.
    fn flood(
        port: u16,
        stop: Arc<AtomicBool>,
        made: Arc<AtomicU64>,
    ) -> Vec<std::thread::JoinHandle<()>> {
        let address = std::net::SocketAddr::from(([127, 0, 0, 1], port));
        (0..3)
            .map(|_| {
                let (stop, made) = (stop.clone(), made.clone());
                std::thread::spawn(move || {
                    let mut held = VecDeque::new();
                    while !stop.load(Ordering::Relaxed) {
                        if let Ok(c) = std::net::TcpStream::connect_timeout(&address, MS(100)) {
                            made.fetch_add(1, Ordering::Relaxed);
                            held.push_back(c);
                            if held.len() > 300 {
                                held.pop_front();
                            }
                        }
                    }
                })
            })
            .collect()
    }
    let end = tokio::time::Instant::now() + s.startup_timeout;
    let launch = Launch::spawn(&cmd, &s).await.unwrap();
    let (stop, made) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicU64::new(0)),
    );
    let flooders = flood(launch.address().port(), stop.clone(), made.clone());
    // The agent connects once the flood is under way.
    let release = {
        let (made, go) = (made.clone(), go.clone());
        std::thread::spawn(move || {
            let t = Instant::now();
            while made.load(Ordering::Relaxed) < 3000 && t.elapsed() < Duration::from_secs(3) {
                std::thread::sleep(MS(5));
            }
            std::fs::write(&go, "").unwrap();
        })
    };
    let accepted = launch.accept(end).await;
    let during = made.load(Ordering::Relaxed);
    stop.store(true, Ordering::Relaxed);
    for f in flooders {
        f.join().unwrap();
    }
    release.join().unwrap();
    let mut a = accepted.expect("the agent's own connection, in the flood");
    assert!(during >= 1000, "the flood made only {during} connections");
    a.handshake(end).await.expect("handshake");
    a.new_game("g1").await.unwrap();
    let r = a
        .go(&start(), TimeLimit::MoveTime(MS(300)), MS(2000))
        .await
        .expect("the agent's own move");
    assert_eq!(r.pit, 1);
    let log_path = a.log_path().unwrap().to_path_buf();
    a.shutdown().await;
    // The refusals beyond the first three are counted where the warning says.
    let log = std::fs::read_to_string(&log_path).unwrap();
    let counted = log
        .lines()
        .find_map(|l| {
            l.split("refused ")
                .nth(1)?
                .split(' ')
                .next()?
                .parse::<u64>()
                .ok()
        })
        .filter(|_| log.contains("before the agent's connection came"));
    assert!(
        counted.is_some_and(|n| n >= 1000),
        "{counted:?} of {during}: {log}"
    );
    assert_eq!(log.matches("refused a connection to").count(), 3, "{log}");

    // An agent that never connects, in a flood: the error says what came instead.
    let cmd = EngineCommand::new(agent_exe(), ["wait-file", mark.as_str(), "/nonexistent"]);
    let s = Settings {
        startup_timeout: Duration::from_millis(1500),
        ..settings()
    };
    let end = tokio::time::Instant::now() + s.startup_timeout;
    let launch = Launch::spawn(&cmd, &s).await.unwrap();
    stop.store(false, Ordering::Relaxed);
    let flooders = flood(launch.address().port(), stop.clone(), made.clone());
    let err = launch
        .accept(end)
        .await
        .err()
        .expect("no agent's connection");
    stop.store(true, Ordering::Relaxed);
    for f in flooders {
        f.join().unwrap();
    }
    assert!(matches!(err, KgpError::Crowded { .. }), "{err}");
    let shown = err.to_string();
    assert!(
        shown.contains("no connection of the agent's came to")
            && shown.contains("connections from other processes did and were refused")
            && !shown.contains("did not connect"),
        "{shown}"
    );
    assert_eq!(err.fault().kind, FaultKind::Stall);
    assert_no_survivors(None, Some(&mark));
}
