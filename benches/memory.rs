//! The referee's memory over a long run with a new engine process every game:
//! `cargo bench --bench memory` plays `first` against `random` with `--restart always`
//! (20 000 games; `KALAHA_BENCH_MEMORY_GAMES` changes it) and prints the referee's peak
//! resident memory (VmHWM) once 1 000 games are recorded and at the end. A run of any
//! length must stay in bounded memory: the two should differ by well under 2 MB.

use std::io::BufRead;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The peak resident memory of process `pid`, in KiB.
fn peak_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Games recorded so far in `dir/games.csv`.
fn recorded(dir: &std::path::Path) -> u64 {
    std::fs::File::open(dir.join("games.csv"))
        .map(|f| std::io::BufReader::new(f).lines().count().saturating_sub(1) as u64)
        .unwrap_or(0)
}

fn main() {
    let games: u64 = std::env::var("KALAHA_BENCH_MEMORY_GAMES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_000)
        .max(1_000);
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("r");
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_kalaha"))
        .args([
            "match",
            "--quiet",
            "--restart",
            "always",
            "--move-time",
            "1s",
        ])
        .args(["--engine", "builtin=first", "--engine", "builtin=random"])
        .args(["--games", &games.to_string(), "--out"])
        .arg(&out)
        .stdout(Stdio::null())
        .spawn()
        .expect("kalaha runs");
    let pid = child.id();
    let (mut at_1000, mut last) = (None, None);
    loop {
        if let Some(st) = child.try_wait().expect("wait") {
            assert!(st.success(), "the match failed: {st}");
            break;
        }
        last = peak_kib(pid).or(last);
        if at_1000.is_none() && recorded(&out) >= 1_000 {
            at_1000 = last;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let (a, b) = (at_1000.unwrap_or(0), last.unwrap_or(0));
    println!(
        "{games} games with --restart always in {:.0} s: peak resident memory {:.1} MB at 1000 games, {:.1} MB at the end ({:+.1} MB)",
        started.elapsed().as_secs_f64(),
        a as f64 / 1024.0,
        b as f64 / 1024.0,
        (b as f64 - a as f64) / 1024.0
    );
}
