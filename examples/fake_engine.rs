//! A test-only engine that misbehaves on purpose, chosen by its first argument (further
//! arguments are ignored, so tests can mark their processes):
//!
//! - `good`: plays the lowest legal pit, correctly;
//! - `crash-at-start`: exits with status 3 before reading anything;
//! - `crash-mid-game`: plays one move, then kills itself (SIGKILL) at the second `go`;
//! - `hang`: answers `hello` and `ping`, never answers `go`;
//! - `exit-after-hello`: answers `hello`, then exits with status 0;
//! - `non-json`: answers `go` with a line that is not JSON;
//! - `raw-escape`: answers `go` with a line that is not JSON and holds raw terminal escape
//!   sequences (a window title, a colour);
//! - `long-line`: answers `go` with 64 MiB and no newline, then waits;
//! - `illegal-move`: answers `go` with an empty or out-of-range pit;
//! - `pit-as-string`: answers `go` with `{"type":"move","pit":"3"}`;
//! - `flood-stderr`: writes 100 MB to stderr before answering `hello`, then plays `good`;
//! - `flood-info`: sends 100 000 `info` lines before each legal move;
//! - `ignore-quit`: plays `good`, but ignores `quit`, the end of its input and SIGTERM;
//! - `grandchild`: starts a child that holds stdout open, then exits at once;
//! - `silent`: never answers anything;
//! - `slow-hello`: plays `good`, but reads nothing for its first second;
//! - `bad-log-info`: plays `good`, but sends malformed `log` and `info` lines (and a `log`
//!   line that is not UTF-8) before each answer (`hello`, `pong`, `move`);
//! - `info-before`: plays `good`, with a well-formed `info` line sent just before the
//!   answer its third argument names: `hello`, or a ping's id (`3`: before pong 3);
//! - `env-name`: plays `good`, named by its `hello` after the value of the environment
//!   variable its third argument names (`fake-env-unset` when it is not set);
//! - `minimal-hello`: plays `good` with a `hello` of only `protocol` and `name`;
//! - `with-options`: plays `good`, declaring an int option `depth` (default 3, 1 to 9);
//! - `option-breaks`: plays `with-options`, but answers `depth` set to 1 with a line that is
//!   not JSON;
//! - `empty-name`: plays `good` with an empty `name` in its `hello`;
//! - `long-name`: plays `good` with a 70 000-byte `hello` name that starts with an escape
//!   sequence;
//! - `unshowable-name`: plays `good` with a `hello` name of only an escape sequence and a
//!   bidirectional override;
//! - `tty-probe`: plays `good`, named `fake-tty-open` if it can open `/dev/tty`, else
//!   `fake-tty-none`;
//! - `double-move`: answers every `go` with two `move` lines;
//! - `early-move`: sends a `move` right after each `pong`, before any `go`;
//! - `stray-pong`: sends a second, unasked `pong` after each one;
//! - `daemon`: starts a daemon of its own (a double fork into a new session) at start,
//!   then plays `good`;
//! - `daemon-hang`, `daemon-ignore-quit`: start a daemon as `daemon` does and ignore
//!   SIGTERM, then play as `hang` and `ignore-quit` do;
//! - `chain-hang`: starts a chain of 700 processes, each the parent of the next and each
//!   in a session of its own, ignoring SIGTERM and SIGHUP, then plays as `hang` does;
//! - `set-id`: plays `good`, after trying at start to make set-user-ID and set-group-ID
//!   files in the folder of its third argument (`chmod` 4755 and 2755, `g+s` on a
//!   folder, `fchmod`, `fchmodat`, `fchmodat2`, files created with 04755 by `open`,
//!   `creat`, `mknodat` and `O_TMPFILE`, `openat2`, `io_uring_setup`, an x32 `chmod`),
//!   and a plain `chmod` 755 there; says on stderr, one `set-id: WHAT: RESULT` line each,
//!   what each call returned (`ok` or the error's number);
//! - `stop-parent`: sends SIGSTOP to its parent at its first `go`, then plays `good`;
//! - `kill-others`: SIGKILLs every other `fake_engine` it can find in `/proc` at its first
//!   `go`, then plays `good`;
//! - `nested-unknown`: plays `good`, each `move` with an unknown field nested 200 deep;
//! - `spin`: burns CPU forever at its first `go`;
//! - `hog`: allocates and touches memory without end at its first `go`;
//! - `chatty`: plays `good`, with a `log` line before each move;
//! - `escape-level`: plays `good`, with a `log` line whose level holds an escape sequence
//!   before each move;
//! - `fuzz`: answers with lines drawn from mutations of valid ones (seeded by its second
//!   argument), so that anything may come;
//! - `list-fds`: plays `good`, named `fds-0-1-2` after the descriptors it has open at
//!   start (each other one is described on stderr);
//! - `peek-results`: plays `good`, after trying at start to list the folder given as its
//!   third argument, read its `games.csv`, append to it and create a file in it, and to
//!   read or list each path of its further arguments; says on stderr what worked;
//! - `version-file`: plays `good`, with the `hello` version read from the file given as
//!   its third argument;
//! - `flood-log`: plays `good`, with 1 500 `log` lines of 10 kB before each of its first
//!   three moves;
//! - `exit-after-game-over`: plays `good` and exits with status 0 at each `game_over` (a
//!   one-game-per-process engine);
//! - `move-after-game-over`: plays `good`, with a stray `move` after each `game_over`;
//! - `hang-after-game-over`: plays `good`, but sleeps 6 s after its first `game_over`;
//! - `slow-move`: plays `good`, but takes 220 ms over each move;
//! - `escape`: plays `good`, after trying at start what a hostile engine would to get out
//!   of its sandbox: write its marker (the second argument) to every terminal it can
//!   open and read from them, create a file named after the marker in each folder of its
//!   third argument (`:`-separated), in `/tmp`, `$TMPDIR` and its working folder, and find
//!   `SECRET_TOKEN` in any process's command line or environment, find the SysV segment
//!   of the key in `ESCAPE_IPC_KEY` and a session key named after the marker, and list
//!   `/run`, connect to the port of `ESCAPE_PORT` on 127.0.0.1, find it in
//!   `/proc/net/tcp` and use a port of its own; says on stderr, one
//!   `escape: ...` line each, what worked.

use kalaha::protocol::{FromEngine, HelloReply, ToEngine};
use kalaha::rules::BoardView;
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
    if !before_start(&mode) {
        return;
    }
    // After its daemon or chain, a `daemon-` or `chain-` mode plays as the mode it names.
    let mode = match mode
        .strip_prefix("daemon-")
        .or_else(|| mode.strip_prefix("chain-"))
    {
        Some(then) => then.to_string(),
        None => mode,
    };
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    let mut gos = 0;
    let mut game_overs = 0;
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
            // A log line, a malformed info line and a line of an unknown type, each with a
            // Latin-1 byte: not UTF-8, still no fault.
            let _ = out.write_all(b"{\"type\":\"log\",\"message\":\"caf\xe9\"}\n");
            let _ = out.write_all(b"{\"type\":\"info\",\"depth\":\"caf\xe9\"}\n");
            let _ = out.write_all(b"{\"type\":\"chat\",\"text\":\"caf\xe9\"}\n");
            let _ = out.flush();
        }
        if mode == "info-before" {
            let before = match &msg {
                ToEngine::Hello { .. } => "hello".to_string(),
                ToEngine::Ping { id } => id.to_string(),
                _ => String::new(),
            };
            if before == third_arg() {
                let _ = writeln!(out, r#"{{"type":"info","depth":1}}"#);
                let _ = out.flush();
            }
        }
        match msg {
            ToEngine::Hello { .. } => {
                hello(&mut out, &mode);
                if mode == "exit-after-hello" {
                    return;
                }
            }
            ToEngine::Ping { id } => {
                send(&mut out, &FromEngine::Pong { id });
                match mode.as_str() {
                    "stray-pong" => send(&mut out, &FromEngine::Pong { id }),
                    "early-move" => send(&mut out, &FromEngine::Move { pit: 1 }),
                    _ => {}
                }
            }
            ToEngine::Go {
                position, legal, ..
            } => {
                gos += 1;
                if gos == 1 {
                    first_go(&mode);
                }
                let lowest = legal.first().copied().unwrap_or(1) as i64;
                answer_go(&mut out, &mode, gos, &position, lowest);
            }
            ToEngine::GameOver { .. } => {
                game_overs += 1;
                match mode.as_str() {
                    "exit-after-game-over" => return,
                    "move-after-game-over" => send(&mut out, &FromEngine::Move { pit: 1 }),
                    "hang-after-game-over" if game_overs == 1 => {
                        std::thread::sleep(Duration::from_secs(6))
                    }
                    _ => {}
                }
            }
            ToEngine::Option { value, .. } if mode == "option-breaks" && value == 1 => {
                let _ = writeln!(out, "not json");
                let _ = out.flush();
            }
            ToEngine::Quit if mode != "ignore-quit" => return,
            _ => {}
        }
    }
    if mode == "ignore-quit" {
        sleep_forever();
    }
}

/// What a mode does before it reads anything; `false` when it is done already.
fn before_start(mode: &str) -> bool {
    match mode {
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
        "daemon" => start_daemon(),
        // Plays well, but takes a second to start.
        "slow-hello" => std::thread::sleep(std::time::Duration::from_secs(1)),
        "daemon-hang" | "daemon-ignore-quit" => {
            start_daemon();
            // SAFETY: setting a signal disposition to SIG_IGN has no preconditions.
            unsafe {
                libc::signal(libc::SIGTERM, libc::SIG_IGN);
            }
        }
        "chain-hang" => start_chain(700),
        "set-id" => try_set_id(),
        "fuzz" => {
            fuzz();
            return false;
        }
        "peek-results" => peek_results(),
        "escape" => try_to_escape(),
        "list-fds" | "version-file" | "flood-log" | "exit-after-hello" | "info-before"
        | "env-name" => {}
        "good"
        | "crash-mid-game"
        | "hang"
        | "non-json"
        | "raw-escape"
        | "long-line"
        | "illegal-move"
        | "pit-as-string"
        | "flood-info"
        | "bad-log-info"
        | "minimal-hello"
        | "empty-name"
        | "long-name"
        | "unshowable-name"
        | "double-move"
        | "slow-move"
        | "early-move"
        | "stray-pong"
        | "stop-parent"
        | "kill-others"
        | "nested-unknown"
        | "spin"
        | "hog"
        | "chatty"
        | "escape-level"
        | "with-options"
        | "option-breaks"
        | "tty-probe"
        | "exit-after-game-over"
        | "move-after-game-over"
        | "hang-after-game-over" => {}
        other => {
            eprintln!("fake_engine: unknown mode {other:?}");
            std::process::exit(2);
        }
    }
    true
}

/// The `hello` of a mode.
fn hello(out: &mut impl Write, mode: &str) {
    match mode {
        "with-options" | "option-breaks" => {
            let _ = writeln!(
                out,
                r#"{{"type":"hello","protocol":1,"name":"fake-with-options","version":"0","author":"tests","options":[{{"name":"depth","type":"int","default":3,"min":1,"max":9}}]}}"#
            );
            let _ = out.flush();
        }
        "minimal-hello" => {
            let _ = writeln!(
                out,
                r#"{{"type":"hello","protocol":1,"name":"fake-{mode}"}}"#
            );
            let _ = out.flush();
        }
        _ => send(
            out,
            &FromEngine::Hello(HelloReply {
                protocol: 1,
                name: match mode {
                    "empty-name" => String::new(),
                    "long-name" => format!("\u{1b}]0;pwned\u{7}{}", "n".repeat(70_000)),
                    "unshowable-name" => "\u{1b}[31m\u{202e}".into(),
                    "tty-probe" => match std::fs::OpenOptions::new().write(true).open("/dev/tty") {
                        Ok(_) => "fake-tty-open".into(),
                        Err(_) => "fake-tty-none".into(),
                    },
                    "list-fds" => open_fds(),
                    "env-name" => {
                        std::env::var(third_arg()).unwrap_or_else(|_| "fake-env-unset".into())
                    }
                    _ => format!("fake-{mode}"),
                },
                version: match mode {
                    "version-file" => std::fs::read_to_string(third_arg())
                        .unwrap_or_default()
                        .trim()
                        .to_string(),
                    _ => "0".into(),
                },
                author: "tests".into(),
                options: Vec::new(),
            }),
        ),
    }
}

/// The answer of a mode to its `gos`-th `go`, whose lowest legal pit is `lowest`.
fn answer_go(out: &mut impl Write, mode: &str, gos: u32, position: &BoardView, lowest: i64) {
    match mode {
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
        "raw-escape" => {
            let _ = writeln!(out, "\u{1b}]0;pwned\u{7}\u{1b}[31mred");
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
            send(out, &FromEngine::Move { pit });
        }
        "pit-as-string" => {
            let _ = writeln!(out, r#"{{"type":"move","pit":"{lowest}"}}"#);
            let _ = out.flush();
        }
        "flood-info" => {
            let mut buf = std::io::BufWriter::new(&mut *out);
            for d in 0..100_000u64 {
                let _ = writeln!(
                    buf,
                    r#"{{"type":"info","depth":{},"nodes":{d},"score":0,"pv":[{lowest}]}}"#,
                    d % 50
                );
            }
            let _ = buf.flush();
            drop(buf);
            send(out, &FromEngine::Move { pit: lowest });
        }
        "slow-move" => {
            std::thread::sleep(Duration::from_millis(220));
            send(out, &FromEngine::Move { pit: lowest });
        }
        "double-move" => {
            send(out, &FromEngine::Move { pit: lowest });
            send(out, &FromEngine::Move { pit: lowest });
        }
        "flood-log" if gos <= 3 => {
            let message = "l".repeat(10_000);
            let mut buf = std::io::BufWriter::new(&mut *out);
            for _ in 0..1_500 {
                let _ = writeln!(
                    buf,
                    r#"{{"type":"log","level":"debug","message":"{message}"}}"#
                );
            }
            let _ = buf.flush();
            drop(buf);
            send(out, &FromEngine::Move { pit: lowest });
        }
        "escape-level" => {
            let _ = writeln!(
                out,
                r#"{{"type":"log","level":"warn\u001b[31m","message":"red"}}"#
            );
            send(out, &FromEngine::Move { pit: lowest });
        }
        "chatty" => {
            let _ = writeln!(
                out,
                r#"{{"type":"log","level":"info","message":"thinking about go {gos}"}}"#
            );
            send(out, &FromEngine::Move { pit: lowest });
        }
        "nested-unknown" => {
            let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
            let _ = writeln!(out, r#"{{"type":"move","pit":{lowest},"x":{deep}}}"#);
            let _ = out.flush();
        }
        _ => send(out, &FromEngine::Move { pit: lowest }),
    }
}

/// The third argument (a path for the modes that take one).
fn third_arg() -> String {
    std::env::args().nth(3).unwrap_or_default()
}

/// `fds-0-1-2` for the descriptors open now; each beyond 2 is described on stderr.
fn open_fds() -> String {
    // Read first, then checked: the listing's own descriptor is closed by then.
    let listed: Vec<i32> = std::fs::read_dir("/proc/self/fd")
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().to_string_lossy().parse().ok())
                .collect()
        })
        .unwrap_or_default();
    let mut open: Vec<i32> = listed
        .into_iter()
        // SAFETY: F_GETFD only reads the descriptor's flags.
        .filter(|&fd| unsafe { libc::fcntl(fd, libc::F_GETFD) } != -1)
        .collect();
    open.sort_unstable();
    for fd in open.iter().filter(|&&fd| fd > 2) {
        let target = std::fs::read_link(format!("/proc/self/fd/{fd}")).unwrap_or_default();
        eprintln!("fd {fd} is open: {}", target.display());
    }
    let numbers: Vec<String> = open.iter().map(|fd| fd.to_string()).collect();
    format!("fds-{}", numbers.join("-"))
}

/// What a hostile engine would try on the results folder (the third argument): says on
/// stderr what worked.
fn peek_results() {
    let dir = std::path::PathBuf::from(third_arg());
    // First try to take away what covers the folder, as an engine run by root could.
    let path = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).unwrap_or_default();
    // SAFETY: umount2 reads the path only.
    let unmounted = unsafe { libc::umount2(path.as_ptr(), libc::MNT_DETACH) } == 0;
    let listed: Vec<String> = std::fs::read_dir(&dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    let read = std::fs::read(dir.join("games.csv")).is_ok();
    let appended = std::fs::OpenOptions::new()
        .append(true)
        .open(dir.join("games.csv"))
        .and_then(|mut f| f.write_all(b"planted,row\n"))
        .is_ok();
    let created = std::fs::write(dir.join("planted-by-engine"), "x").is_ok();
    eprintln!(
        "peek: unmounted: {unmounted}; listed {} entries {listed:?}; read games.csv: {read}; \
         appended: {appended}; created: {created}",
        listed.len()
    );
    for path in std::env::args().skip(4) {
        let read = std::fs::read(&path).is_ok();
        let listed = std::fs::read_dir(&path).map(|d| d.count()).ok();
        eprintln!("peek: {path}: read: {read}; listed: {listed:?}");
    }
}

/// The `set-id` mode's attempts, each reported as `set-id: WHAT: RESULT` on stderr.
fn try_set_id() {
    use std::ffi::CString;
    let dir = std::path::PathBuf::from(std::env::args().nth(2).unwrap_or_default());
    let path = |name: &str| CString::new(dir.join(name).into_os_string().into_encoded_bytes());
    let path = |name: &str| path(name).expect("no NUL in the folder's name");
    let make = |name: &str| {
        let _ = std::fs::write(dir.join(name), b"#!/bin/sh\nid\n");
        path(name)
    };
    let said = |what: &str, r: libc::c_long| {
        let result = if r >= 0 {
            "ok".to_string()
        } else {
            std::io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(0)
                .to_string()
        };
        eprintln!("set-id: {what}: {result}");
    };
    // SAFETY: system calls on NUL-terminated paths this function holds and on
    // descriptors it opened; every descriptor is closed again.
    unsafe {
        let p = make("chmod-4755");
        said("chmod 4755", libc::chmod(p.as_ptr(), 0o4755).into());
        let p = make("chmod-2755");
        said("chmod 2755", libc::chmod(p.as_ptr(), 0o2755).into());
        let _ = std::fs::create_dir(dir.join("folder-g+s"));
        let p = path("folder-g+s");
        said("chmod g+s folder", libc::chmod(p.as_ptr(), 0o2775).into());
        let p = make("fchmod-6755");
        let fd = libc::open(p.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
        said("fchmod 6755", libc::fchmod(fd, 0o6755).into());
        libc::close(fd);
        let p = make("fchmodat-4755");
        let r = libc::syscall(libc::SYS_fchmodat, libc::AT_FDCWD, p.as_ptr(), 0o4755);
        said("fchmodat 4755", r);
        let p = make("fchmodat2-4755");
        let r = libc::syscall(452, libc::AT_FDCWD, p.as_ptr(), 0o4755, 0);
        said("fchmodat2 4755", r);
        let p = path("open-4755");
        let fd = libc::open(
            p.as_ptr(),
            libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC,
            0o4755,
        );
        said("open O_CREAT 4755", fd.into());
        libc::close(fd);
        let p = path("openat-2755");
        let flags = libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC;
        let r = libc::syscall(libc::SYS_openat, libc::AT_FDCWD, p.as_ptr(), flags, 0o2755);
        said("openat O_CREAT 2755", r);
        libc::close(r as i32);
        let p = path("mknodat-4755");
        let r = libc::syscall(
            libc::SYS_mknodat,
            libc::AT_FDCWD,
            p.as_ptr(),
            libc::S_IFREG | 0o4755,
            0,
        );
        said("mknodat 4755", r);
        let p = path("");
        let flags = libc::O_TMPFILE | libc::O_WRONLY | libc::O_CLOEXEC;
        let fd = libc::open(p.as_ptr(), flags, 0o4755);
        said("open O_TMPFILE 4755", fd.into());
        if fd >= 0 {
            let from = CString::new(format!("/proc/self/fd/{fd}")).unwrap();
            let to = path("tmpfile-4755");
            let r = libc::linkat(
                libc::AT_FDCWD,
                from.as_ptr(),
                libc::AT_FDCWD,
                to.as_ptr(),
                libc::AT_SYMLINK_FOLLOW,
            );
            said("link O_TMPFILE", r.into());
            libc::close(fd);
        }
        // struct open_how: flags, mode, resolve.
        let how: [u64; 3] = [(libc::O_CREAT | libc::O_WRONLY) as u64, 0o4755, 0];
        let p = path("openat2-4755");
        let r = libc::syscall(437, libc::AT_FDCWD, p.as_ptr(), how.as_ptr(), 24usize);
        said("openat2 4755", r);
        if r >= 0 {
            libc::close(r as i32);
        }
        // struct io_uring_params: 120 bytes, zero but the entries asked for.
        let params = [0u64; 15];
        let r = libc::syscall(425, 1u32, params.as_ptr());
        said("io_uring_setup", r);
        if r >= 0 {
            libc::close(r as i32);
        }
        #[cfg(target_arch = "x86_64")]
        {
            let p = path("creat-4755");
            let r = libc::syscall(libc::SYS_creat, p.as_ptr(), 0o4755);
            said("creat 4755", r);
            libc::close(r as i32);
            let p = make("chmod-raw-4755");
            said(
                "chmod (the call) 4755",
                libc::syscall(libc::SYS_chmod, p.as_ptr(), 0o4755),
            );
            let p = path("mknod-4755");
            let r = libc::syscall(libc::SYS_mknod, p.as_ptr(), libc::S_IFREG | 0o4755, 0);
            said("mknod 4755", r);
            let p = make("x32-chmod-4755");
            let r = libc::syscall(0x4000_0000 | libc::SYS_chmod, p.as_ptr(), 0o4755);
            said("x32 chmod 4755", r);
        }
        let p = make("chmod-755");
        said("chmod 755", libc::chmod(p.as_ptr(), 0o755).into());
    }
}

/// The `escape` mode's attempts, each reported as `escape: WHAT: RESULT` on stderr.
fn try_to_escape() {
    let mark = std::env::args().nth(2).unwrap_or_default();
    let mut terminals = vec!["/dev/tty".to_string(), "/dev/console".to_string()];
    for dir in ["/dev/pts", "/dev"] {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if (dir == "/dev/pts" && name.chars().all(|c| c.is_ascii_digit()))
                || name.starts_with("tty")
            {
                terminals.push(format!("{dir}/{name}"));
            }
        }
    }
    // Terminals the referee or its parents hold, reached through /proc.
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        for fd in 0..3 {
            let p = format!("{}/fd/{fd}", e.path().display());
            if std::fs::read_link(&p)
                .is_ok_and(|t| t.starts_with("/dev/pts") || t.starts_with("/dev/tty"))
            {
                terminals.push(p);
            }
        }
    }
    let (mut wrote, mut read) = (Vec::new(), Vec::new());
    for t in &terminals {
        use std::os::unix::fs::OpenOptionsExt;
        let flags = libc::O_NOCTTY | libc::O_NONBLOCK;
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(flags)
            .open(t)
            && f.write_all(
                format!("\u{1b}]0;{mark}\u{7}{mark} typed into your terminal\n").as_bytes(),
            )
            .is_ok()
        {
            wrote.push(t.clone());
        }
        if std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(flags)
            .open(t)
            .is_ok()
        {
            read.push(t.clone());
        }
    }
    eprintln!("escape: terminals written: {wrote:?}");
    eprintln!("escape: terminals opened to read: {read:?}");
    let mut folders: Vec<std::path::PathBuf> = third_arg()
        .split(':')
        .filter(|s| !s.is_empty())
        .map(Into::into)
        .collect();
    folders.push("/tmp".into());
    folders.push(".".into());
    if let Some(t) = std::env::var_os("TMPDIR") {
        folders.push(t.into());
    }
    for dir in folders {
        let file = dir.join(format!("{mark}.planted"));
        let written = std::fs::write(&file, &mark).is_ok();
        let back = std::fs::read_to_string(&file).is_ok_and(|t| t == mark);
        let err = std::fs::write(&file, &mark)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        eprintln!(
            "escape: wrote {}: {written}; read back: {back}; {err}",
            dir.display()
        );
    }
    let mut seen = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        for what in ["cmdline", "environ"] {
            let text = std::fs::read(e.path().join(what)).unwrap_or_default();
            if String::from_utf8_lossy(&text).contains("SECRET_TOKEN") {
                seen.push(format!("{}/{what}", e.path().display()));
            }
        }
    }
    eprintln!("escape: secret seen in: {seen:?}");
    // The machine's IPC and keys, planted by the test: a segment of the key in
    // ESCAPE_IPC_KEY, a session key named after the marker.
    let key: Option<libc::key_t> = std::env::var("ESCAPE_IPC_KEY")
        .ok()
        .and_then(|k| k.parse().ok());
    // SAFETY: shmget and syscall with integer arguments and a valid C string.
    let (segment, keyring) = unsafe {
        let segment = key.is_some_and(|k| libc::shmget(k, 0, 0) != -1);
        let desc = std::ffi::CString::new(format!("kalaha-{mark}")).unwrap_or_default();
        const KEYCTL_SEARCH: libc::c_long = 10;
        const KEY_SPEC_SESSION_KEYRING: libc::c_long = -3;
        let found = libc::syscall(
            libc::SYS_keyctl,
            KEYCTL_SEARCH,
            KEY_SPEC_SESSION_KEYRING,
            c"user".as_ptr(),
            desc.as_ptr(),
            0 as libc::c_long,
        ) != -1;
        (segment, found)
    };
    eprintln!("escape: machine's shared memory segment found: {segment}");
    eprintln!("escape: session key found: {keyring}");
    let run: Vec<String> = std::fs::read_dir("/run")
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    eprintln!("escape: /run holds {} entries", run.len());
    // A port of the machine's loopback the test listens on (ESCAPE_PORT): reached, and
    // seen among the machine's sockets?
    if let Some(port) = std::env::var("ESCAPE_PORT")
        .ok()
        .and_then(|p| p.parse::<u16>().ok())
    {
        let address = std::net::SocketAddr::from(([127, 0, 0, 1], port));
        let reached =
            std::net::TcpStream::connect_timeout(&address, Duration::from_millis(500)).is_ok();
        let hex = format!(":{port:04X} ");
        let listed = ["/proc/net/tcp", "/proc/net/tcp6"].iter().any(|t| {
            std::fs::read_to_string(t).is_ok_and(|text| text.lines().any(|l| l.contains(&hex)))
        });
        eprintln!("escape: connected to port {port}: {reached}");
        eprintln!("escape: port {port} listed in /proc/net: {listed}");
        // Its own loopback works: a port it listens on, reached.
        let own = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| {
                let a = l.local_addr()?;
                std::net::TcpStream::connect_timeout(&a, Duration::from_millis(500))
            })
            .map_err(|e| e.to_string());
        eprintln!("escape: own loopback works: {}", own.is_ok());
        if let Err(e) = own {
            eprintln!("escape: own loopback failed: {e}");
        }
    }
    let init = std::fs::read("/proc/1/cmdline").unwrap_or_default();
    eprintln!(
        "escape: /proc/1/cmdline: {:?}",
        String::from_utf8_lossy(&init).replace('\0', " ")
    );
}

/// What the `stop-parent` and `kill-others` modes do at their first `go`.
fn first_go(mode: &str) {
    match mode {
        // SAFETY: sending a signal has no memory-safety preconditions.
        "stop-parent" => unsafe {
            libc::kill(libc::getppid(), libc::SIGSTOP);
        },
        "spin" => {
            let mut x = 0u64;
            loop {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
            }
        }
        "hog" => {
            let mut kept: Vec<Vec<u8>> = Vec::new();
            loop {
                kept.push(vec![1u8; 16 << 20]);
            }
        }
        "kill-others" => {
            let me = std::process::id();
            let Ok(dir) = std::fs::read_dir("/proc") else {
                return;
            };
            for entry in dir.flatten() {
                let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
                    continue;
                };
                let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                let cmdline = String::from_utf8_lossy(&cmdline);
                if pid != me && cmdline.contains("fake_engine") && !cmdline.contains("kill-others")
                {
                    // SAFETY: as above.
                    unsafe {
                        libc::kill(pid as i32, libc::SIGKILL);
                    }
                }
            }
        }
        _ => {}
    }
}

/// Starts a daemon: a grandchild in a new session that sleeps (marked with this process's
/// arguments), the way a careless engine might leave a helper behind.
fn start_daemon() {
    let exe = std::env::current_exe().expect("own path");
    // SAFETY: fork in a single-threaded process; the child only calls setsid, spawns and
    // exits.
    unsafe {
        match libc::fork() {
            0 => {
                libc::setsid();
                let _ = std::process::Command::new(exe)
                    .arg("grandchild-sleeper")
                    .args(std::env::args().skip(2))
                    .stdin(std::process::Stdio::null())
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null())
                    .spawn();
                libc::_exit(0);
            }
            -1 => {}
            child => {
                libc::waitpid(child, std::ptr::null_mut(), 0);
            }
        }
    }
}

/// Starts a chain of `depth` processes below this one, each the parent of the next, each
/// in a session of its own and deaf to SIGTERM and SIGHUP, each waiting for ever: a
/// killer that kills one generation at a time meets a new orphan at every pass.
fn start_chain(depth: u32) {
    // SAFETY: fork in a single-threaded process; the children only call async-signal-safe
    // functions (setsid, signal, fork, pause).
    unsafe {
        if libc::fork() != 0 {
            return;
        }
        for _ in 0..depth {
            libc::setsid();
            libc::signal(libc::SIGTERM, libc::SIG_IGN);
            libc::signal(libc::SIGHUP, libc::SIG_IGN);
            if libc::fork() != 0 {
                break;
            }
        }
        loop {
            libc::pause();
        }
    }
}

/// Lines of every kind, valid or not, drawn from a small generator seeded by the second
/// argument: the engine answers each request with 0 to 3 of them.
fn fuzz() {
    let seed: u64 = std::env::args()
        .nth(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    const PIECES: [&str; 16] = [
        r#"{"type":"move","pit":1}"#,
        r#"{"type":"move","pit":3}"#,
        r#"{"type":"move","pit":-7}"#,
        r#"{"type":"move","pit":1e400}"#,
        r#"{"type":"pong","id":1}"#,
        r#"{"type":"info","depth":3,"pv":[1,2]}"#,
        r#"{"type":"log","message":"\u001b[2J"}"#,
        r#"{"type":"hello","protocol":1,"name":"x"}"#,
        r#"{"type":"movе","pit":1}"#,
        r#"{"type":"move","pit":"1"}"#,
        "not json",
        "",
        "\u{0}\u{1b}]0;t\u{7}",
        r#"{"type":"move","pit":2,"deep":[[[[[[[[]]]]]]]]}"#,
        "{",
        r#"[1,2,3]"#,
    ];
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let msg = ToEngine::parse(&line).ok();
        // Mostly answer properly, so that games get somewhere before the fuzz hits.
        let proper = next() % 4 != 0;
        match msg {
            Some(ToEngine::Hello { .. }) if proper => send(
                &mut out,
                &FromEngine::Hello(HelloReply {
                    protocol: 1,
                    name: "fake-fuzz".into(),
                    version: "0".into(),
                    author: "tests".into(),
                    options: Vec::new(),
                }),
            ),
            Some(ToEngine::Ping { id }) if proper => send(&mut out, &FromEngine::Pong { id }),
            Some(ToEngine::Go { legal, .. }) if proper => {
                let pit = legal[(next() as usize) % legal.len()] as i64;
                send(&mut out, &FromEngine::Move { pit });
            }
            Some(ToEngine::Quit) => return,
            Some(_) | None => {}
        }
        for _ in 0..next() % 3 {
            let piece = PIECES[(next() as usize) % PIECES.len()];
            let mut bytes = piece.as_bytes().to_vec();
            if next() % 3 == 0 && !bytes.is_empty() {
                let i = (next() as usize) % bytes.len();
                bytes[i] = (next() % 256) as u8;
            }
            bytes.push(b'\n');
            let _ = out.write_all(&bytes);
        }
        let _ = out.flush();
    }
}
