//! What docs/reference/engines.md and protocol.md promise of the engines' sandbox, each tried by a hostile
//! engine (`fake_engine escape`): as the user running the tests and, when that is root,
//! again as an unprivileged user. Where this system cannot give the full sandbox, the
//! tests check that the warning says so instead.

use crate::common::{assert_no_survivors, csv_rows, fake_engine, marker, text};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// An unprivileged user for the tests run as root (no account is needed for a uid).
const UNPRIVILEGED: u32 = 4242;

/// The users to run the referee as: the tests' own, and an unprivileged one when that is
/// root.
fn users() -> Vec<Option<u32>> {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } == 0 {
        vec![None, Some(UNPRIVILEGED)]
    } else {
        vec![None]
    }
}

/// A scratch folder the referee's user owns.
struct Scratch {
    _dir: tempfile::TempDir,
    root: PathBuf,
    user: Option<u32>,
}

impl Scratch {
    fn new(user: Option<u32>) -> Scratch {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o755)).unwrap();
        let s = Scratch {
            _dir: dir,
            root,
            user,
        };
        s.own(&s.root);
        s
    }

    /// A folder in the scratch folder, owned by the referee's user.
    fn folder(&self, name: &str) -> PathBuf {
        let p = self.root.join(name);
        std::fs::create_dir_all(&p).unwrap();
        let mut at = p.clone();
        while at != self.root {
            self.own(&at);
            at.pop();
        }
        p
    }

    fn own(&self, p: &Path) {
        if let Some(u) = self.user {
            std::os::unix::fs::chown(p, Some(u), Some(u)).unwrap();
        }
    }

    /// `kalaha ARGS` as the referee's user, in `cwd`, with `HOME` in the scratch folder.
    fn kalaha(&self, args: &[String], cwd: &Path, env: &[(&str, &str)]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_kalaha"));
        c.args(args)
            .current_dir(cwd)
            .env("HOME", self.folder("home"))
            .env_remove("KALAHA_NO_NAMESPACES")
            .envs(env.iter().copied());
        if let Some(u) = self.user {
            c.uid(u).gid(u);
        }
        c
    }
}

fn strings(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

/// A match of the escape engine against `first`, who is given a secret in its
/// environment; `targets` are the folders the escape engine tries to write.
fn escape_match(out: &Path, mark: &str, targets: &[&Path], extra: &[String]) -> Vec<String> {
    let targets: Vec<String> = targets.iter().map(|p| p.display().to_string()).collect();
    let mut args = strings(&["match", "--quiet", "--games", "2", "--move-time", "100ms"]);
    args.extend([
        "--engine".into(),
        format!("cmd={}", fake_engine().display()),
        "arg=escape".into(),
        format!("arg={mark}"),
        format!("arg={}", targets.join(":")),
        "name=escape".into(),
    ]);
    args.extend(extra.iter().cloned());
    args.extend(strings(&[
        "--engine",
        "builtin=first",
        "env.SECRET_TOKEN=hunter2",
        "--out",
    ]));
    args.push(out.display().to_string());
    args
}

/// The `escape: ...` lines of the escape engine's logs.
fn said(out: &Path) -> String {
    let lines = log_lines(out, "escape", "escape: ");
    assert!(!lines.is_empty(), "the escape engine said nothing");
    lines.iter().map(|l| format!("{l}\n")).collect()
}

fn full_sandbox() -> bool {
    crate::common::use_kalaha_as_sandbox_helper();
    kalaha::sandbox::Layers::detect().is_full()
}

/// Runs `command` under a pseudo-terminal (util-linux `script`); what reached the
/// terminal.
fn under_terminal(command: &Command) -> (Output, String) {
    let dir = tempfile::tempdir().unwrap();
    let typescript = dir.path().join("typescript");
    let mut line = vec![command.get_program().to_string_lossy().into_owned()];
    line.extend(
        command
            .get_args()
            .map(|a| format!("'{}'", a.to_string_lossy())),
    );
    let mut script = Command::new("script");
    script
        .args(["-qfec", &line.join(" ")])
        .arg(&typescript)
        .stdin(std::process::Stdio::null());
    if let Some(d) = command.get_current_dir() {
        script.current_dir(d);
    }
    for (k, v) in command.get_envs() {
        match v {
            Some(v) => script.env(k, v),
            None => script.env_remove(k),
        };
    }
    let o = script
        .output()
        .expect("`script` (util-linux) runs commands under a pseudo-terminal");
    let seen = std::fs::read(&typescript).unwrap_or_default();
    (o, String::from_utf8_lossy(&seen).into_owned())
}

#[test]
fn an_engine_can_neither_write_to_nor_read_the_users_terminal() {
    for user in users() {
        let s = Scratch::new(user);
        let out = s.root.join("r");
        let mark = marker("tty");
        let args = escape_match(&out, &mark, &[], &[]);
        // `script` runs as the tests' user; the referee under it, as `user`.
        let command = match user {
            None => s.kalaha(&args, &s.root, &[]),
            Some(u) => {
                let mut c = Command::new("setpriv");
                c.args([
                    format!("--reuid={u}"),
                    format!("--regid={u}"),
                    "--clear-groups".into(),
                    env!("CARGO_BIN_EXE_kalaha").into(),
                ])
                .args(&args)
                .current_dir(&s.root)
                .env("HOME", s.folder("home"));
                c
            }
        };
        let (o, terminal) = under_terminal(&command);
        assert_eq!(o.status.code(), Some(0), "{user:?}: {}", text(&o));
        assert_eq!(csv_rows(&out).len(), 2, "{user:?}");
        let said = said(&out);
        assert!(
            !terminal.contains("typed into your terminal")
                && !terminal.contains(&format!("]0;{mark}")),
            "{user:?}: the engine wrote to the terminal: {terminal}"
        );
        if full_sandbox() {
            assert!(said.contains("terminals written: []"), "{user:?}: {said}");
            assert!(
                said.contains("terminals opened to read: []"),
                "{user:?}: {said}"
            );
        }
        assert_no_survivors(None, Some(&mark));
    }
}

#[test]
fn an_engine_writes_only_its_temporary_folder_and_its_write_folders() {
    for user in users() {
        let s = Scratch::new(user);
        // The one-machine layout of docs/cluster/gnu-parallel.sh: shards side by side.
        let nightly = s.folder("nightly");
        let sibling = s.folder("nightly/shard-1");
        std::fs::write(sibling.join("games.csv"), "id,result\n").unwrap();
        s.own(&sibling.join("games.csv"));
        let out = nightly.join("shard-2");
        let cache = s.folder("engine-cache");
        let work = s.folder("work");
        let home = s.folder("home");
        let mark = marker("write");
        let args = escape_match(
            &out,
            &mark,
            &[&sibling, &nightly, &home, &work, &cache],
            &[format!("write={}", cache.display())],
        );
        let o = s.kalaha(&args, &work, &[]).output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{user:?}: {}", text(&o));
        let said = said(&out);
        // Its private temporary folder and its write= folder work, and read back.
        assert!(
            said.contains(&format!("wrote {}: true; read back: true", cache.display())),
            "{user:?}: {said}"
        );
        assert!(
            said.contains("wrote /tmp: true; read back: true"),
            "{user:?}: {said}"
        );
        let tmpdir = said
            .lines()
            .filter(|l| l.contains("escape: wrote /") && !l.contains(&*s.root.to_string_lossy()))
            .count();
        assert!(tmpdir >= 2, "{user:?}: /tmp and $TMPDIR: {said}");
        assert_eq!(
            std::fs::read_to_string(cache.join(format!("{mark}.planted"))).unwrap(),
            mark
        );
        if !full_sandbox() {
            continue;
        }
        for dir in [&sibling, &nightly, &home, &work] {
            assert!(
                said.contains(&format!("wrote {}: false", dir.display())),
                "{user:?} {}: {said}",
                dir.display()
            );
        }
        // Nothing planted outside the allowlist, and the private /tmp is gone with it.
        let planted: Vec<PathBuf> = walk(&s.root)
            .into_iter()
            .filter(|p| p.to_string_lossy().ends_with(".planted") && !p.starts_with(&cache))
            .collect();
        assert!(planted.is_empty(), "{user:?}: {planted:?}");
        assert!(!Path::new("/tmp").join(format!("{mark}.planted")).exists());
        assert_eq!(
            std::fs::read_to_string(sibling.join("games.csv")).unwrap(),
            "id,result\n"
        );
    }
}

/// Every path under `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut all = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            all.extend(walk(&p));
        }
        all.push(p);
    }
    all
}

/// A SysV shared memory segment and a key in the session keyring of this process (which
/// the referee inherits), for the escape engine to look for; removed on drop.
struct Planted {
    /// The segment's key, for the engine's `ESCAPE_IPC_KEY`.
    ipc_key: libc::key_t,
    segment: i32,
    key: i64,
}

impl Planted {
    fn new(mark: &str) -> Planted {
        let desc = std::ffi::CString::new(format!("kalaha-{mark}")).unwrap();
        // SAFETY: shmget and add_key with valid arguments; both are undone on drop.
        unsafe {
            // A key of this process's own.
            let ipc_key = (std::process::id() as libc::key_t & 0xff_ffff) << 6
                | (mark.len() as libc::key_t & 0x3f);
            let segment = libc::shmget(ipc_key, 4096, libc::IPC_CREAT | 0o666);
            assert!(segment != -1, "{}", std::io::Error::last_os_error());
            const KEY_SPEC_SESSION_KEYRING: libc::c_long = -3;
            let key = libc::syscall(
                libc::SYS_add_key,
                c"user".as_ptr(),
                desc.as_ptr(),
                c"secret".as_ptr(),
                6 as libc::size_t,
                KEY_SPEC_SESSION_KEYRING,
            );
            Planted {
                ipc_key,
                segment,
                key,
            }
        }
    }
}

impl Drop for Planted {
    fn drop(&mut self) {
        // SAFETY: removes what `new` made.
        unsafe {
            libc::shmctl(self.segment, libc::IPC_RMID, std::ptr::null_mut());
            if self.key > 0 {
                const KEYCTL_UNLINK: libc::c_long = 9;
                const KEY_SPEC_SESSION_KEYRING: libc::c_long = -3;
                libc::syscall(
                    libc::SYS_keyctl,
                    KEYCTL_UNLINK,
                    self.key,
                    KEY_SPEC_SESSION_KEYRING,
                );
            }
        }
    }
}

#[test]
fn nothing_of_the_referee_or_the_other_engine_is_in_view() {
    for user in users() {
        let s = Scratch::new(user);
        let out = s.root.join("secret-results");
        let mark = marker("view");
        let planted = Planted::new(&mark);
        let o = s
            .kalaha(
                &escape_match(
                    &out,
                    &mark,
                    &[],
                    &[format!("env.ESCAPE_IPC_KEY={}", planted.ipc_key)],
                ),
                &s.root,
                &[],
            )
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{user:?}: {}", text(&o));
        let said = said(&out);
        if !full_sandbox() {
            continue;
        }
        assert!(said.contains("secret seen in: []"), "{user:?}: {said}");
        let init = said
            .lines()
            .find(|l| l.contains("/proc/1/cmdline"))
            .unwrap()
            .to_string();
        for referees in ["match", "secret-results", "hunter2", "--engine"] {
            assert!(!init.contains(referees), "{user:?}: {init}");
        }
        // The machine's IPC, the session's keys and the sockets of /run are out of reach.
        assert!(
            said.contains("machine's shared memory segment found: false"),
            "{user:?}: {said}"
        );
        if planted.key > 0 {
            assert!(
                said.contains("session key found: false"),
                "{user:?}: {said}"
            );
        }
        assert!(said.contains("/run holds 0 entries"), "{user:?}: {said}");
    }
}

#[test]
fn without_namespaces_the_run_says_what_does_not_hold_and_strict_refuses() {
    for user in users() {
        let s = Scratch::new(user);
        let mark = marker("no-ns");
        let mut args = strings(&["tournament", "--quiet", "--games", "2", "--engine"]);
        args.extend([
            format!("cmd={}", fake_engine().display()),
            "arg=daemon".into(),
            format!("arg={mark}"),
        ]);
        args.extend(strings(&["--engine", "builtin=first", "--out"]));
        args.push(s.root.join("r").display().to_string());
        let no_ns = [("KALAHA_NO_NAMESPACES", "1")];
        let o = s.kalaha(&args, &s.root, &no_ns).output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{user:?}: {}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(
            err.matches("engines are not fully isolated (KALAHA_NO_NAMESPACES is set)")
                .count(),
            1,
            "{user:?}: {err}"
        );
        // The daemon the engine started ends with it all the same (not after kill -9 of
        // the referee: only namespaces make that hold).
        assert_no_survivors(None, Some(&mark));
        args.push("--strict".into());
        let at = args.iter().position(|a| a == "--out").unwrap();
        args[at + 1] = s.root.join("r-strict").display().to_string();
        let o = s.kalaha(&args, &s.root, &no_ns).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{user:?}: {}", text(&o));
        assert!(
            String::from_utf8_lossy(&o.stderr)
                .contains("the engines' sandbox is not complete here (no namespaces"),
            "{}",
            text(&o)
        );
        // With the full sandbox, --strict runs and nothing is said.
        if full_sandbox() {
            let mut args = args.clone();
            let at = args.iter().position(|a| a == "--out").unwrap();
            args[at + 1] = s.root.join("r2").display().to_string();
            let o = s.kalaha(&args, &s.root, &[]).output().unwrap();
            assert_eq!(o.status.code(), Some(0), "{user:?}: {}", text(&o));
            assert!(
                !String::from_utf8_lossy(&o.stderr).contains("not fully isolated"),
                "{}",
                text(&o)
            );
        }
    }
}

/// In a test played by several workers, the whole shared folder is hidden from every
/// engine: an engine of worker 2 reads neither `sprt-workers.toml` (every engine's
/// `env.*`) nor worker 1's folder (its games and logs).
#[test]
fn an_engine_of_a_worker_sees_nothing_of_the_shared_folder() {
    for user in users() {
        let s = Scratch::new(user);
        let shared = s.root.join("shared");
        let mark = marker("shared");
        let peeked = [
            shared.join("sprt-workers.toml"),
            shared.join("worker-1"),
            shared.join("worker-1/games.jsonl"),
        ];
        let worker = |k: u32| {
            let mut args = strings(&["sprt", "--engine"]);
            args.extend([
                format!("cmd={}", fake_engine().display()),
                "arg=peek-results".into(),
                format!("arg={mark}"),
                format!("arg={}", shared.display()),
            ]);
            args.extend(peeked.iter().map(|p| format!("arg={}", p.display())));
            args.extend(strings(&[
                "name=peek",
                "env.SECRET_TOKEN=hunter2",
                "--engine",
                "builtin=first",
                "--elo0",
                "0",
                "--elo1",
                "5",
                "--max-games",
                "4",
                "--workers",
                "2",
                "-j",
                "1",
                "-q",
                "--shared",
            ]));
            args.push(shared.display().to_string());
            args.extend(["--worker".to_string(), k.to_string()]);
            s.kalaha(&args, &s.root, &[]).spawn().unwrap()
        };
        // Worker 1 first, so that its folder and the test's file are there when worker 2
        // starts; each waits for the other's pairs.
        let first = worker(1);
        let start = std::time::Instant::now();
        while !shared.join("worker-1/games.jsonl").exists() && start.elapsed().as_secs() < 30 {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let second = worker(2);
        for (k, child) in [(1, first), (2, second)] {
            let o = child.wait_with_output().unwrap();
            // The two engines play alike: the game limit ends the test (exit 4).
            assert_eq!(
                o.status.code(),
                Some(4),
                "{user:?} worker {k}: {}",
                text(&o)
            );
        }
        assert!(shared.join("sprt-workers.toml").is_file());
        assert!(shared.join("worker-1/games.jsonl").is_file());
        let mut said = String::new();
        for e in std::fs::read_dir(shared.join("worker-2/logs"))
            .unwrap()
            .flatten()
        {
            if e.file_name().to_string_lossy().starts_with("peek.") {
                said.push_str(&std::fs::read_to_string(e.path()).unwrap());
            }
        }
        assert!(said.contains("peek: unmounted:"), "{user:?}: {said}");
        if !full_sandbox() {
            continue;
        }
        assert!(said.contains("listed 0 entries"), "{user:?}: {said}");
        for p in &peeked {
            assert!(
                said.contains(&format!("peek: {}: read: false; listed: None", p.display())),
                "{user:?} {}: {said}",
                p.display()
            );
        }
        assert_no_survivors(None, Some(&mark));
    }
}

/// A worker whose engine lives in the shared folder (started from inside it, or its
/// program there) is refused before any engine starts: the sandbox could cover only the
/// worker's own folder, and the engine would read the other workers' files.
#[test]
fn a_worker_whose_engine_lives_in_the_shared_folder_is_refused() {
    let s = Scratch::new(None);
    let (a, b) = (s.root.join("shared-a"), s.root.join("shared-b"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    let inside = b.join("engine");
    std::fs::copy(fake_engine(), &inside).unwrap();
    let mark = marker("inside");
    // From inside the shared folder, an engine without dir= runs there; or its program is
    // there.
    for (program, from, shared, shared_arg) in [
        (fake_engine(), a.clone(), a.clone(), ".".to_string()),
        (inside, s.root.clone(), b.clone(), b.display().to_string()),
    ] {
        let mut args = strings(&["sprt", "--engine"]);
        args.extend([
            format!("cmd={}", program.display()),
            "arg=good".into(),
            format!("arg={mark}"),
            "name=mine".into(),
        ]);
        args.extend(strings(&[
            "--engine",
            "builtin=first",
            "--elo0",
            "0",
            "--elo1",
            "5",
            "--max-games",
            "4",
            "--workers",
            "2",
            "--worker",
            "1",
            "-q",
            "--shared",
        ]));
        args.push(shared_arg);
        let o = s.kalaha(&args, &from, &[]).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("engine mine: its program or working folder is inside the shared folder"),
            "{err}"
        );
        assert!(!shared.join("worker-1/games.jsonl").exists());
    }
    assert_no_survivors(None, Some(&mark));
}

/// A folder closed to its owner (mode 000) in a `write=` folder may hide earlier results
/// from kalaha's look, but not from an engine of the same user, which could open it
/// again: kalaha refuses the `write=` folder, as root (which sees inside) and as a user
/// (which is told it cannot look into it).
#[test]
fn a_write_folder_with_a_closed_folder_of_its_own_user_is_refused() {
    for user in users() {
        let s = Scratch::new(user);
        let old = s.folder("w/old");
        std::fs::write(old.join("games.csv"), "game\n").unwrap();
        s.own(&old.join("games.csv"));
        std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o000)).unwrap();
        let mark = marker("closed");
        let args = escape_match(&s.root.join("r"), &mark, &[], &["write=w".into()]);
        let o = s.kalaha(&args, &s.root, &[]).output().unwrap();
        std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(o.status.code(), Some(2), "{user:?}: {}", text(&o));
        let said = text(&o);
        // SAFETY: geteuid cannot fail.
        let why = match user {
            None if unsafe { libc::geteuid() } == 0 => "/w holds the results folder ",
            _ => "/w/old, which kalaha cannot look into",
        };
        assert!(
            said.contains("engine escape: write=") && said.contains(why),
            "{user:?}: {said}"
        );
        assert!(!s.root.join("r/games.jsonl").exists(), "{user:?}");
        assert_no_survivors(None, Some(&mark));
    }
}

#[test]
fn a_write_folder_must_exist() {
    let s = Scratch::new(None);
    let mark = marker("no-write");
    let args = escape_match(
        &s.root.join("r"),
        &mark,
        &[],
        &["write=does-not-exist".into()],
    );
    let o = s.kalaha(&args, &s.root, &[]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains(
            "engine escape: write=\"does-not-exist\" does not exist: give a folder that exists"
        ),
        "{}",
        text(&o)
    );
}

#[test]
fn an_engine_kept_in_tmp_itself_still_runs_from_there() {
    // Its private /tmp replaces the machine's, but keeps what the engine needs.
    let mark = marker("in-tmp");
    let program = PathBuf::from("/tmp").join(format!("{mark}-engine"));
    std::fs::copy(fake_engine(), &program).unwrap();
    let out = tempfile::tempdir().unwrap();
    let mut args = strings(&["match", "--quiet", "--games", "2", "--engine"]);
    args.push(format!(
        "cmd=./{}",
        program.file_name().unwrap().to_string_lossy()
    ));
    args.extend(strings(&["arg=good", "--engine", "builtin=first", "--out"]));
    args.push(out.path().join("r").display().to_string());
    let o = Command::new(env!("CARGO_BIN_EXE_kalaha"))
        .args(&args)
        .current_dir("/tmp")
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&program);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(csv_rows(&out.path().join("r")).len(), 2);
}

#[test]
fn an_engine_reaches_no_port_of_the_machine_unless_it_keeps_the_network() {
    // A port the test listens on, as kalaha does for a KGP agent.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    for user in users() {
        let s = Scratch::new(user);
        let run = |name: &str, extra: &[String]| {
            let out = s.root.join(name);
            let mut extra = extra.to_vec();
            extra.push(format!("env.ESCAPE_PORT={port}"));
            let args = escape_match(&out, &marker("net"), &[], &extra);
            let o = s.kalaha(&args, &s.root, &[]).output().unwrap();
            assert_eq!(o.status.code(), Some(0), "{user:?}: {}", text(&o));
            (said(&out), String::from_utf8_lossy(&o.stderr).into_owned())
        };
        let (said, err) = run("own", &[]);
        let layers = kalaha::sandbox::Layers::detect();
        if layers.namespaces == kalaha::sandbox::Namespaces::None || !layers.network {
            // What does not hold is said.
            assert!(
                err.contains("connect to every port of 127.0.0.1"),
                "{user:?}: {err}"
            );
        } else {
            for fact in [
                format!("connected to port {port}: false"),
                format!("port {port} listed in /proc/net: false"),
                "own loopback works: true".into(),
            ] {
                assert!(said.contains(&fact), "{user:?}: {fact}: {said}");
            }
        }
        // network=true: the machine's network, as before.
        let (said, _) = run("shared", &["network=true".into()]);
        for fact in [
            format!("connected to port {port}: true"),
            format!("port {port} listed in /proc/net: true"),
            "own loopback works: true".into(),
        ] {
            assert!(
                said.contains(&fact),
                "{user:?} network=true: {fact}: {said}"
            );
        }
    }
}

#[test]
fn network_is_kept_in_tournament_toml_and_a_resume_refuses_it_changed() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let kalaha = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_kalaha"))
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap()
    };
    let o = kalaha(&[
        "tournament",
        "-q",
        "--games",
        "2",
        "--move-time",
        "20ms",
        "--engine",
        "builtin=first",
        "network=true",
        "--engine",
        "builtin=random",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let toml = out.join("tournament.toml");
    let before = std::fs::read_to_string(&toml).unwrap();
    assert!(before.contains("network = true"), "{before}");
    let resume = || kalaha(&["tournament", "-q", "--resume", out.to_str().unwrap()]);
    let o = resume();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    std::fs::write(&toml, before.replacen("network = true\n", "", 1)).unwrap();
    let o = resume();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains(
            "engine 1, network: it says nothing, but the run's games are played with true"
        ),
        "{}",
        text(&o)
    );
    // A KGP agent cannot be cut off from kalaha's port.
    let o = kalaha(&[
        "match",
        "--engine",
        "cmd=sh",
        "protocol=kgp",
        "network=false",
        "--engine",
        "builtin=first",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("it keeps the machine's network"),
        "{}",
        text(&o)
    );
}

/// The lines of the logs in `out` of the engine named `name` that hold `prefix`, each
/// from `prefix` on.
fn log_lines(out: &Path, name: &str, prefix: &str) -> Vec<String> {
    let mut all = Vec::new();
    for e in std::fs::read_dir(out.join("logs")).unwrap().flatten() {
        if e.file_name()
            .to_string_lossy()
            .starts_with(&format!("{name}."))
        {
            let log = std::fs::read_to_string(e.path()).unwrap_or_default();
            all.extend(
                log.lines()
                    .filter_map(|l| l.find(prefix).map(|i| l[i..].to_string())),
            );
        }
    }
    all
}

#[test]
fn an_engine_makes_no_set_id_file_where_it_may_write() {
    crate::common::use_kalaha_as_sandbox_helper();
    let seccomp = kalaha::sandbox::Layers::detect().seccomp;
    for user in users() {
        for no_namespaces in [false, true] {
            let who = format!("{user:?}, KALAHA_NO_NAMESPACES {no_namespaces}");
            let s = Scratch::new(user);
            let plant = s.folder("plant");
            let out = s.root.join("r");
            let mut args = strings(&["match", "--quiet", "--games", "2", "--engine"]);
            args.extend([
                format!("cmd={}", fake_engine().display()),
                "arg=set-id".into(),
                format!("arg={}", plant.display()),
                format!("write={}", plant.display()),
                "name=plant".into(),
            ]);
            args.extend(strings(&["--engine", "builtin=first", "--out"]));
            args.push(out.display().to_string());
            let env: &[(&str, &str)] = if no_namespaces {
                &[("KALAHA_NO_NAMESPACES", "1")]
            } else {
                &[]
            };
            let o = s.kalaha(&args, &s.root, env).output().unwrap();
            assert_eq!(o.status.code(), Some(0), "{who}: {}", text(&o));
            let said = log_lines(&out, "plant", "set-id: ");
            // A plain mode still works.
            assert!(
                said.iter().any(|l| l == "set-id: chmod 755: ok"),
                "{who}: {said:?}"
            );
            let mode = |p: &Path| std::fs::symlink_metadata(p).unwrap().permissions().mode();
            assert_eq!(mode(&plant.join("chmod-755")) & 0o7777, 0o755, "{who}");
            if !seccomp {
                assert!(
                    String::from_utf8_lossy(&o.stderr)
                        .contains("they can make set-user-ID and set-group-ID files"),
                    "{who}: {}",
                    text(&o)
                );
                continue;
            }
            // Nothing set-id on disk: no file, no folder.
            let set_id: Vec<(PathBuf, u32)> = walk(&plant)
                .into_iter()
                .map(|p| {
                    let m = mode(&p);
                    (p, m)
                })
                .filter(|(_, m)| m & 0o6000 != 0)
                .collect();
            assert!(set_id.is_empty(), "{who}: {set_id:?}; {said:?}");
            // Each attempt refused: EPERM, or ENOSYS for openat2, io_uring and x32.
            for what in [
                "chmod 4755",
                "chmod 2755",
                "open O_CREAT 4755",
                "chmod g+s folder",
                "openat2 4755",
                "io_uring_setup",
            ] {
                assert!(
                    said.iter()
                        .any(|l| l.starts_with(&format!("set-id: {what}: "))),
                    "{who}: {what}: {said:?}"
                );
            }
            for l in said.iter().filter(|l| !l.ends_with("chmod 755: ok")) {
                let absent = ["openat2", "io_uring", "x32"].iter().any(|a| l.contains(a));
                let refused = if absent { libc::ENOSYS } else { libc::EPERM };
                assert!(l.ends_with(&format!(": {refused}")), "{who}: {l}; {said:?}");
            }
        }
    }
}

#[test]
fn without_namespaces_nothing_an_engine_started_outlives_its_kill() {
    for user in users() {
        let s = Scratch::new(user);
        // One engine is killed on its clock, the other after ignoring quit and SIGTERM;
        // each left a daemon in a session of its own first. The third left a chain of
        // 700 processes, which a kill of one generation a pass did not end.
        for (mode, termination) in [
            ("daemon-hang", "timeout"),
            ("daemon-ignore-quit", "normal"),
            ("chain-hang", "timeout"),
        ] {
            let who = format!("{user:?} {mode}");
            let mark = marker(mode);
            let out = s.root.join(mode);
            let mut args = strings(&["match", "--quiet", "--games", "2", "--move-time"]);
            args.extend(strings(&["100ms", "--engine"]));
            args.extend([
                format!("cmd={}", fake_engine().display()),
                format!("arg={mode}"),
                format!("arg={mark}"),
            ]);
            args.extend(strings(&["--engine", "builtin=first", "--out"]));
            args.push(out.display().to_string());
            let no_ns = [("KALAHA_NO_NAMESPACES", "1")];
            let o = s.kalaha(&args, &s.root, &no_ns).output().unwrap();
            assert_eq!(o.status.code(), Some(0), "{who}: {}", text(&o));
            let rows = csv_rows(&out);
            assert_eq!(rows.len(), 2, "{who}");
            for r in rows {
                assert_eq!(r["termination"], termination, "{who}: {r:?}");
            }
            assert_no_survivors(None, Some(&mark));
        }
    }
}
