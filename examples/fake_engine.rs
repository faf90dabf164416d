//! A test-only engine that misbehaves on purpose, chosen by its first argument (further
//! arguments are ignored, so tests can mark their processes):
//!
//! - `good`: plays the lowest legal pit, correctly;
//! - `crash-at-start`: exits with status 3 before reading anything;
//! - `crash-mid-game`: plays one move, then kills itself (SIGKILL) at the second `go`;
//! - `hang`: answers `hello` and `ping`, never answers `go`;
//! - `non-json`: answers `go` with a line that is not JSON;
//! - `long-line`: answers `go` with 64 MiB and no newline, then waits;
//! - `illegal-move`: answers `go` with an empty or out-of-range pit;
//! - `pit-as-string`: answers `go` with `{"type":"move","pit":"3"}`;
//! - `flood-stderr`: writes 100 MB to stderr before answering `hello`, then plays `good`;
//! - `flood-info`: sends 100 000 `info` lines before each legal move;
//! - `ignore-quit`: plays `good`, but ignores `quit`, the end of its input and SIGTERM;
//! - `grandchild`: starts a child that holds stdout open, then exits at once;
//! - `silent`: never answers anything;
//! - `bad-log-info`: plays `good`, but sends malformed `log` and `info` lines before each
//!   answer (`hello`, `pong`, `move`);
//! - `minimal-hello`: plays `good` with a `hello` of only `protocol` and `name`;
//! - `empty-name`: plays `good` with an empty `name` in its `hello`.

use kalaha::protocol::{FromEngine, HelloReply, ToEngine};
use std::io::{BufRead, Write};
use std::time::Duration;

/// The malformed `log` and `info` lines of the `bad-log-info` mode.
const BAD_LOG_INFO: [&str; 5] = [
    r#"{"type":"log","message":5}"#,
    r#"{"type":"log","level":3,"message":"x"}"#,
    r#"{"type":"log"}"#,
    r#"{"type":"info","depth":3,"pv":[4,300]}"#,
    r#"{"type":"info","depth":-1,"score":"high"}"#,
];

fn send(out: &mut impl Write, msg: &FromEngine) {
    let _ = writeln!(out, "{}", msg.to_line());
    let _ = out.flush();
}

fn sleep_forever() -> ! {
    loop {
        std::thread::sleep(Duration::from_secs(1000));
    }
}

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_default();
    match mode.as_str() {
        "crash-at-start" => {
            eprintln!("Traceback (most recent call last):\nOSError: cannot load weights.bin");
            std::process::exit(3)
        }
        "grandchild-sleeper" | "silent" => sleep_forever(),
        "grandchild" => {
            let exe = std::env::current_exe().expect("own path");
            // The child inherits stdout (and the process group) and outlives us.
            std::process::Command::new(exe)
                .arg("grandchild-sleeper")
                .args(std::env::args().skip(2))
                .stdin(std::process::Stdio::null())
                .spawn()
                .expect("spawn the grandchild");
            std::process::exit(0);
        }
        "flood-stderr" => {
            let chunk = vec![b'e'; 1 << 20];
            let mut err = std::io::stderr().lock();
            for _ in 0..100 {
                if err.write_all(&chunk).is_err() {
                    break;
                }
            }
        }
        "ignore-quit" => {
            // SAFETY: setting a signal disposition to SIG_IGN has no preconditions.
            unsafe {
                libc::signal(libc::SIGTERM, libc::SIG_IGN);
            }
        }
        "good" | "crash-mid-game" | "hang" | "non-json" | "long-line" | "illegal-move"
        | "pit-as-string" | "flood-info" | "bad-log-info" | "minimal-hello" | "empty-name" => {}
        other => {
            eprintln!("fake_engine: unknown mode {other:?}");
            std::process::exit(2);
        }
    }
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    let mut gos = 0;
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let Ok(msg) = ToEngine::parse(&line) else {
            continue;
        };
        if mode == "bad-log-info"
            && matches!(
                msg,
                ToEngine::Hello { .. } | ToEngine::Ping { .. } | ToEngine::Go { .. }
            )
        {
            for bad in BAD_LOG_INFO {
                let _ = writeln!(out, "{bad}");
            }
            let _ = out.flush();
        }
        match msg {
            ToEngine::Hello { .. } if mode == "minimal-hello" => {
                let _ = writeln!(
                    out,
                    r#"{{"type":"hello","protocol":1,"name":"fake-{mode}"}}"#
                );
                let _ = out.flush();
            }
            ToEngine::Hello { .. } => send(
                &mut out,
                &FromEngine::Hello(HelloReply {
                    protocol: 1,
                    name: if mode == "empty-name" {
                        String::new()
                    } else {
                        format!("fake-{mode}")
                    },
                    version: "0".into(),
                    author: "tests".into(),
                    options: Vec::new(),
                }),
            ),
            ToEngine::Ping { id } => send(&mut out, &FromEngine::Pong { id }),
            ToEngine::Go {
                position, legal, ..
            } => {
                gos += 1;
                let lowest = legal.first().copied().unwrap_or(1) as i64;
                match mode.as_str() {
                    "crash-mid-game" if gos >= 2 => {
                        // SAFETY: sending a signal to ourselves has no preconditions.
                        unsafe {
                            libc::kill(libc::getpid(), libc::SIGKILL);
                        }
                    }
                    "hang" => sleep_forever(),
                    "non-json" => {
                        let _ = writeln!(out, "move 3");
                        let _ = out.flush();
                    }
                    "long-line" => {
                        let chunk = vec![b'x'; 1 << 20];
                        for _ in 0..64 {
                            if out.write_all(&chunk).is_err() {
                                break;
                            }
                        }
                        let _ = out.flush();
                        sleep_forever();
                    }
                    "illegal-move" => {
                        let row = match position.to_move {
                            kalaha::rules::Side::South => &position.south.pits,
                            kalaha::rules::Side::North => &position.north.pits,
                        };
                        let pit = row
                            .iter()
                            .position(|&s| s == 0)
                            .map_or(row.len() as i64 + 1, |i| i as i64 + 1);
                        send(&mut out, &FromEngine::Move { pit });
                    }
                    "pit-as-string" => {
                        let _ = writeln!(out, r#"{{"type":"move","pit":"{lowest}"}}"#);
                        let _ = out.flush();
                    }
                    "flood-info" => {
                        let mut buf = std::io::BufWriter::new(&mut out);
                        for d in 0..100_000u64 {
                            let _ = writeln!(
                                buf,
                                r#"{{"type":"info","depth":{},"nodes":{d},"score":0,"pv":[{lowest}]}}"#,
                                d % 50
                            );
                        }
                        let _ = buf.flush();
                        drop(buf);
                        send(&mut out, &FromEngine::Move { pit: lowest });
                    }
                    _ => send(&mut out, &FromEngine::Move { pit: lowest }),
                }
            }
            ToEngine::Quit if mode != "ignore-quit" => return,
            _ => {}
        }
    }
    if mode == "ignore-quit" {
        sleep_forever();
    }
}
