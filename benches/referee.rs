//! The referee's own cost per engine move, against the floor of any referee: the CPU one
//! round trip of a line through a pipe to another process and back costs.
//!
//! `cargo bench --bench referee` plays `first` against `first` (engines that answer at
//! once) through the whole tournament path (processes, protocol, referee, results written
//! and synced, scoreboard) and prints this process's own CPU time (all its threads, not
//! the engines') per engine move; then it times a bare ping-pong of one line with `cat`.
//! Set `KALAHA_BENCH_GAMES` for more games (default 400).

use kalaha::tournament::config::ConfigFile;
use kalaha::tournament::events::{Control, Event, View};
use kalaha::tournament::spec::EngineSpec;
use kalaha::tournament::{RunOptions, run_tournament};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// User and system CPU time of this process, all threads.
fn cpu_split() -> (Duration, Duration) {
    // SAFETY: getrusage only writes into the struct we pass.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    (tv(u.ru_utime), tv(u.ru_stime))
}

/// User plus system CPU time of this process, all threads.
fn cpu() -> Duration {
    let (user, system) = cpu_split();
    user + system
}

struct Quiet;
impl View for Quiet {
    fn event(&mut self, _: &Event<'_>, _: &kalaha::stats::Tally) -> std::io::Result<Control> {
        Ok(Control::Continue)
    }
}

fn engine(name: &str) -> EngineSpec {
    let mut spec = EngineSpec::parse(&[
        format!("cmd={}", env!("CARGO_BIN_EXE_kalaha")),
        "arg=engine".into(),
        "arg=first".into(),
    ])
    .expect("spec");
    spec.name = Some(name.to_string());
    spec
}

/// The referee's CPU (user, system) over `games` games, the moves played and the time.
fn referee(games: u64, dir: &std::path::Path) -> ((Duration, Duration), u64, Duration) {
    let config = ConfigFile {
        engines: vec![engine("a"), engine("b")],
        games: Some(games),
        tc: Some("1s".parse().expect("time")),
        ..ConfigFile::default()
    }
    .resolve()
    .expect("config");
    let mut options = RunOptions::new(dir.join("run"));
    options.concurrency = 2;
    let (c0, t0) = (cpu_split(), Instant::now());
    let outcome = run_tournament(config, &options, &mut [&mut Quiet], None).expect("tournament");
    let c1 = cpu_split();
    let (cpu_used, wall) = ((c1.0 - c0.0, c1.1 - c0.1), t0.elapsed());
    assert_eq!(outcome.summary.played, games);
    (cpu_used, outcome.summary.moves, wall)
}

/// CPU per round trip of one line through `cat` and back, over `n` round trips.
fn ping_pong(n: u32) -> Duration {
    let mut child = Command::new("cat")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("cat");
    let mut to = child.stdin.take().expect("stdin");
    let mut from = BufReader::new(child.stdout.take().expect("stdout"));
    let line = "{\"type\":\"ping\",\"id\":1}\n";
    let mut back = String::new();
    let c0 = cpu();
    for _ in 0..n {
        to.write_all(line.as_bytes()).expect("write");
        to.flush().expect("flush");
        back.clear();
        from.read_line(&mut back).expect("read");
    }
    let used = cpu() - c0;
    drop(to);
    let _ = child.wait();
    used / n
}

fn main() {
    let games: u64 = std::env::var("KALAHA_BENCH_GAMES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(400);
    let dir = tempfile::tempdir().expect("temp dir");
    let ((user, system), moves, wall) = referee(games, dir.path());
    let us = |d: Duration| d.as_secs_f64() * 1e6 / moves as f64;
    let per_move = us(user + system);
    println!(
        "referee: {games} games, {moves} engine moves in {:.2} s; referee CPU {:.0} ms, {per_move:.1} us per move ({:.1} user, {:.1} system)",
        wall.as_secs_f64(),
        (user + system).as_secs_f64() * 1e3,
        us(user),
        us(system)
    );
    let floor = ping_pong(20_000).as_secs_f64() * 1e6;
    println!("floor: {floor:.1} us of CPU per pipe round trip with another process");
    println!("ratio: {:.1}x the floor", per_move / floor);
}
