//! Helpers shared by the integration tests: the fake engine and process scans.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// The test-only misbehaving engine (`examples/fake_engine.rs`), built by `cargo test`.
pub fn fake_engine() -> PathBuf {
    use_kalaha_as_sandbox_helper();
    let exe = std::env::current_exe().expect("test executable path");
    let dir = exe.parent().and_then(|d| d.parent()).expect("target dir");
    let path = dir.join("examples").join("fake_engine");
    if !path.exists() {
        // A filtered run (`cargo test --test it`) does not build the examples.
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
        let mut cmd = std::process::Command::new(cargo);
        cmd.args(["build", "--quiet", "--example", "fake_engine"]);
        if !cfg!(debug_assertions) {
            cmd.arg("--release");
        }
        let _ = cmd.status();
    }
    assert!(
        path.exists(),
        "{} is missing: run the tests with cargo test, which builds the examples",
        path.display()
    );
    path
}

/// A marker unique to this test process and call, to find a test's processes by command line.
/// Engines started through the library run in a sandbox built by the `kalaha`
/// executable: this test binary is not one.
pub fn use_kalaha_as_sandbox_helper() {
    kalaha::sandbox::set_helper(env!("CARGO_BIN_EXE_kalaha"));
}

pub fn marker(name: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    format!(
        "mark-{name}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// Live (not zombie) processes whose process group is `pgid` or whose command line
/// contains `needle`.
pub fn live_processes(pgid: Option<i32>, needle: Option<&str>) -> Vec<(i32, String)> {
    let mut found = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in dir.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // pid (comm) state ppid pgrp ...: comm may hold spaces, so split after the last ')'.
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.first() == Some(&"Z") || fields.first() == Some(&"X") {
            continue;
        }
        let pgrp: i32 = fields.get(2).and_then(|f| f.parse().ok()).unwrap_or(-1);
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline"))
            .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
            .unwrap_or_default();
        let by_group = pgid.is_some_and(|g| g > 1 && g == pgrp);
        let by_name = needle.is_some_and(|n| cmdline.contains(n));
        if by_group || by_name {
            found.push((pid, cmdline));
        }
    }
    found
}

/// Waits briefly (processes die asynchronously after SIGKILL) and asserts that nothing of
/// the engine is left.
pub fn assert_no_survivors(pgid: Option<i32>, needle: Option<&str>) {
    let end = Instant::now() + Duration::from_secs(2);
    loop {
        let left = live_processes(pgid, needle);
        if left.is_empty() {
            return;
        }
        if Instant::now() > end {
            panic!("processes left behind: {left:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The peak resident memory of this process, in bytes.
pub fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

/// The `kalaha` binary under test.
pub fn kalaha() -> Command {
    Command::new(env!("CARGO_BIN_EXE_kalaha"))
}

pub fn engine(mode: &str, name: &str, mark: &str) -> Vec<String> {
    vec![
        "--engine".into(),
        format!("cmd={}", fake_engine().display()),
        format!("arg={mode}"),
        format!("arg={mark}"),
        format!("name={name}"),
    ]
}

/// How long the tests give an engine to quit, and then to end on SIGTERM.
pub const GRACE: std::time::Duration = std::time::Duration::from_millis(300);

/// Supervisor settings with short waits, for tests that start engines or agents directly.
pub fn short_settings() -> kalaha::supervisor::Settings {
    use_kalaha_as_sandbox_helper();
    kalaha::supervisor::Settings {
        startup_timeout: std::time::Duration::from_secs(5),
        ping_timeout: std::time::Duration::from_secs(2),
        quit_grace: GRACE,
        term_grace: GRACE,
        ..kalaha::supervisor::Settings::default()
    }
}

pub fn run(args: &[String]) -> Output {
    kalaha().args(args).output().expect("kalaha runs")
}

pub fn csv_rows(dir: &Path) -> Vec<BTreeMap<String, String>> {
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

pub fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}
