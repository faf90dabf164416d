//! The referee's own cost per engine move, against the floor of any referee: the CPU one
//! round trip of a line through a pipe to another process and back costs.
//!
//! `cargo bench --bench referee` plays `first` against `first` (engines that answer at
//! once) through the whole tournament path (processes, protocol, referee, results written
//! and synced, scoreboard) and prints this process's own CPU time (all its threads, not
//! the engines') per engine move; then it times a bare ping-pong of one line with `cat`.
//! It does both in turn several times, spread over all CPUs and then pinned to one, and
//! prints the medians of each. Set `KALAHA_BENCH_GAMES` for
//! more games a round (default 400) and `KALAHA_BENCH_ROUNDS` for more rounds (default 5).
//!
//! Then the cost of the sandbox: the time from starting an engine to its `hello`, started
//! bare (no sandbox at all), in the sandbox without namespaces and in the full sandbox;
//! and a match of 500 games of `first` against `first` with `--restart always` (a new
//! engine process every game), with and without namespaces (`KALAHA_BENCH_RESTART_GAMES`
//! changes the count).

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

/// The median of some figures (the upper one of an even count).
fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// Restricts this thread, and the threads and processes it starts from now on, to the
/// first CPU (`true`) or lets them run on all (`false`).
fn pin_to_one_cpu(pin: bool) {
    // SAFETY: the set is zeroed and filled by the libc macros; the call reads it only.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        let cpus = if pin { 1 } else { libc::CPU_SETSIZE as usize };
        for cpu in 0..cpus {
            libc::CPU_SET(cpu, &mut set);
        }
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

/// Median referee CPU per engine move and median floor, in microseconds, over `rounds`
/// rounds that alternate the two measures so that both see the same state of a shared
/// machine; the medians set aside a round disturbed by something else.
fn measure(games: u64, rounds: u64, dir: &std::path::Path, label: &str) -> (f64, f64) {
    let (mut per_move, mut floors) = (Vec::new(), Vec::new());
    for round in 1..=rounds {
        let run = dir.join(format!("{label}-round{round}"));
        let ((user, system), moves, wall) = referee(games, &run);
        let us = |d: Duration| d.as_secs_f64() * 1e6 / moves as f64;
        let cost = us(user + system);
        let floor = ping_pong(10_000).as_secs_f64() * 1e6;
        println!(
            "{label} round {round}: {games} games, {moves} engine moves in {:.2} s; referee {cost:.1} us per move ({:.1} user, {:.1} system); floor {floor:.1} us",
            wall.as_secs_f64(),
            us(user),
            us(system)
        );
        per_move.push(cost);
        floors.push(floor);
    }
    (median(per_move), median(floors))
}

/// Median time from spawning `kalaha engine first` to reading its `hello`: bare, or
/// through the sandbox (as this process finds it).
fn startup(bare: bool, n: usize) -> Duration {
    let mut times = Vec::with_capacity(n);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    for _ in 0..n {
        let t = Instant::now();
        if bare {
            let mut child = Command::new(env!("CARGO_BIN_EXE_kalaha"))
                .args(["engine", "first"])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .expect("spawn");
            let mut stdin = child.stdin.take().expect("stdin");
            writeln!(stdin, r#"{{"type":"hello","protocol":1}}"#).expect("write");
            let mut line = String::new();
            BufReader::new(child.stdout.take().expect("stdout"))
                .read_line(&mut line)
                .expect("hello");
            times.push(t.elapsed());
            drop(stdin);
            let _ = child.wait();
        } else {
            let cmd = kalaha::supervisor::EngineCommand::new(
                env!("CARGO_BIN_EXE_kalaha"),
                ["engine", "first"],
            );
            runtime.block_on(async {
                let e = kalaha::supervisor::Engine::start(&cmd, &Default::default())
                    .await
                    .expect("engine starts");
                times.push(t.elapsed());
                e.shutdown().await;
            });
        }
    }
    times.sort();
    times[n / 2]
}

/// The sandbox's part: start-up times, and a match with a new engine every game.
fn sandbox_cost() {
    if std::env::var_os("KALAHA_BENCH_STARTUP_ONLY").is_some() {
        let layers = kalaha::sandbox::Layers::detect();
        println!("{:.2}", startup(false, 100).as_secs_f64() * 1e3);
        eprintln!("{layers:?}");
        return;
    }
    let in_child = |no_ns: bool| -> String {
        let mut c = Command::new(std::env::current_exe().expect("own path"));
        c.env("KALAHA_BENCH_STARTUP_ONLY", "1");
        if no_ns {
            c.env("KALAHA_NO_NAMESPACES", "1");
        }
        let o = c.output().expect("bench runs");
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    };
    let bare = startup(true, 100).as_secs_f64() * 1e3;
    println!(
        "engine start-up to hello (median of 100): bare {bare:.2} ms, sandbox without namespaces {} ms, full sandbox {} ms",
        in_child(true),
        in_child(false)
    );
    let games = std::env::var("KALAHA_BENCH_RESTART_GAMES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(500u64);
    let dir = tempfile::tempdir().expect("temp dir");
    let mut times = Vec::new();
    for (i, no_ns) in [true, false].into_iter().enumerate() {
        let mut c = Command::new(env!("CARGO_BIN_EXE_kalaha"));
        c.args([
            "match",
            "--quiet",
            "--restart",
            "always",
            "--move-time",
            "1s",
        ])
        .args(["--engine", "builtin=first", "--engine", "builtin=first"])
        .args(["--games", &games.to_string(), "--out"])
        .arg(dir.path().join(format!("r{i}")));
        if no_ns {
            c.env("KALAHA_NO_NAMESPACES", "1");
        }
        let t = Instant::now();
        let o = c.output().expect("match runs");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        times.push(t.elapsed().as_secs_f64());
    }
    println!(
        "{games} games with --restart always: {:.2} s without namespaces, {:.2} s in the full sandbox ({:.2}x)",
        times[0],
        times[1],
        times[1] / times[0]
    );
}

fn main() {
    kalaha::sandbox::set_helper(env!("CARGO_BIN_EXE_kalaha"));
    if std::env::var_os("KALAHA_BENCH_STARTUP_ONLY").is_some() {
        return sandbox_cost();
    }
    let var = |name: &str, default: u64| {
        std::env::var(name)
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(default)
    };
    let games = var("KALAHA_BENCH_GAMES", 400).max(2);
    let rounds = var("KALAHA_BENCH_ROUNDS", 5).max(1);
    let dir = tempfile::tempdir().expect("temp dir");
    // Spread over the CPUs a wake-up often crosses to another CPU, which costs far more
    // CPU time on some machines (virtual ones above all) than the work itself; on one CPU
    // every wake-up stays local, so the ratio there is the referee's own software cost.
    let mut results = Vec::new();
    for (label, pin) in [("all CPUs", false), ("one CPU", true)] {
        pin_to_one_cpu(pin);
        results.push((label, measure(games, rounds, dir.path(), label)));
    }
    pin_to_one_cpu(false);
    for (label, (cost, floor)) in results {
        println!(
            "{label}: referee median {cost:.1} us of CPU per engine move, floor median {floor:.1} us per pipe round trip: {:.1}x the floor",
            cost / floor
        );
    }
    sandbox_cost();
}
