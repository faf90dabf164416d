//! Kalah Game Protocol agents through the command line: tournaments against the built-in
//! engines (`examples/kgp_agent.rs`, `examples/kgp_agent.py`), faults and restarts, `kill
//! -9` of the referee, `kalaha check --protocol kgp`, and the measured cost of the bridge.

use crate::common::{assert_no_survivors, csv_rows, live_processes, marker};
use crate::kgp_common::agent_exe;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

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
    // Every log is under its engine's name in the results, the first instance's too
    // (started before the agent named itself).
    for entry in std::fs::read_dir(out.join("logs")).unwrap().flatten() {
        let file = entry.file_name().to_string_lossy().into_owned();
        assert!(
            names.iter().any(|n| file.starts_with(&format!("{n}."))),
            "{file} is not named after an engine of {names:?}"
        );
    }
    assert!(out.join("logs/kgp-anytime.1.transcript").exists());
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
        std::thread::sleep(Duration::from_millis(50));
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
#[ignore = "a measurement: cargo test --release --test it -- --ignored --nocapture kgp_cli::overhead"]
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
