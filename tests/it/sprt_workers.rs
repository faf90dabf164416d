//! `kalaha sprt --workers N --worker K --shared DIR`: workers that pool their games reach
//! the verdict of one machine playing the pairs in order, whatever their timing; a killed
//! worker loses no recorded game and resumes its pairs; a worker with other settings is
//! refused; `--report DIR` recomputes the verdict.

use crate::common::{kalaha, text};
use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

/// A quick test of deterministic engines (a fixed depth, far more time than it needs):
/// hard decides against greedy in some twenty pairs.
fn test_flags() -> Vec<String> {
    [
        "sprt",
        "--engine",
        "builtin=hard",
        "option.depth=3",
        "--engine",
        "builtin=greedy",
        "--elo0",
        "0",
        "--elo1",
        "50",
        "--move-time",
        "5s",
        "-j",
        "1",
        "-q",
    ]
    .map(String::from)
    .to_vec()
}

fn worker_args(shared: &Path, k: u64, n: u64, extra: &[&str]) -> Vec<String> {
    let mut args = test_flags();
    args.extend(
        [
            "--workers".to_string(),
            n.to_string(),
            "--worker".to_string(),
            k.to_string(),
            "--shared".to_string(),
            shared.display().to_string(),
        ]
        .into_iter()
        .chain(extra.iter().map(|s| s.to_string())),
    );
    args
}

fn start(args: &[String]) -> Child {
    kalaha()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kalaha starts")
}

/// A value of `sprt-result.toml` in `dir`.
fn result(dir: &Path) -> toml::Table {
    std::fs::read_to_string(dir.join("sprt-result.toml"))
        .unwrap()
        .parse()
        .unwrap()
}

/// The verdict of the same test on one machine, one game at a time (the pairs in order).
fn one_machine(dir: &Path) -> toml::Table {
    let out = dir.join("one");
    let mut args = test_flags();
    args.extend(["--out".to_string(), out.display().to_string()]);
    let o = kalaha().args(&args).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    result(&out)
}

/// The complete lines of `games.jsonl` in `dir`.
fn lines(dir: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(dir.join("games.jsonl")).unwrap_or_default();
    let complete = match text.rfind('\n') {
        Some(i) => &text[..=i],
        None => "",
    };
    complete.lines().map(String::from).collect()
}

/// The game numbers of the records in `dir`.
fn numbers(dir: &Path) -> Vec<u64> {
    lines(dir)
        .iter()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["number"].as_u64().unwrap()
        })
        .collect()
}

/// Checks that the verdict of the workers in `shared` is the one machine's, and that
/// `--report` recomputes it.
fn check_verdict(shared: &Path, outputs: &[Output], one: &toml::Table) {
    let written = result(shared);
    for key in ["verdict", "exit_code", "pairs", "games", "llr"] {
        assert_eq!(written[key], one[key], "{key}");
    }
    let verdict = written["verdict"].as_str().unwrap();
    for o in outputs {
        assert_eq!(o.status.code(), Some(0), "{}", text(o));
        assert!(
            String::from_utf8_lossy(&o.stdout).contains(verdict),
            "{}",
            text(o)
        );
    }
    let report = kalaha()
        .args(["sprt", "--report"])
        .arg(shared)
        .output()
        .unwrap();
    assert_eq!(report.status.code(), Some(0), "{}", text(&report));
    let said = String::from_utf8_lossy(&report.stdout);
    assert!(said.contains(&format!("\n{verdict}\n")), "{said}");
    assert!(
        said.contains("sprt-result.toml: the same verdict"),
        "{said}"
    );
}

#[test]
fn workers_reach_the_verdict_of_one_machine_playing_the_pairs_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let shared = dir.path().join("shared");
    let workers: Vec<Child> = (1..=3)
        .map(|k| start(&worker_args(&shared, k, 3, &[])))
        .collect();
    let outputs: Vec<Output> = workers
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect();
    let one = one_machine(dir.path());
    check_verdict(&shared, &outputs, &one);
    // Each worker played its own pairs and keeps a copy of the verdict with its pairs
    // after the decision, which are above the stopping point.
    let stop = one["pairs"].as_integer().unwrap() as u64;
    for k in 1..=3u64 {
        let folder = shared.join(format!("worker-{k}"));
        let pairs: BTreeSet<u64> = numbers(&folder).iter().map(|n| n.div_ceil(2)).collect();
        assert!(pairs.iter().all(|p| (p - 1) % 3 + 1 == k), "{pairs:?}");
        let own = result(&folder);
        assert_eq!(own["verdict"], one["verdict"]);
        assert_eq!(own["worker"].as_integer(), Some(k as i64));
        let after: BTreeSet<u64> = own["pairs_after_decision"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_integer().unwrap() as u64)
            .collect();
        assert_eq!(after, pairs.iter().copied().filter(|&p| p > stop).collect());
    }
    // A worker started again after the verdict plays nothing, and exits with it.
    let w1 = shared.join("worker-1");
    let (games, own) = (lines(&w1), result(&w1));
    std::fs::remove_file(w1.join("sprt-result.toml")).unwrap();
    let again = kalaha()
        .args(worker_args(&shared, 1, 3, &[]))
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
    assert_eq!((lines(&w1), result(&w1)), (games, own));
}

/// A worker says its game limit once as it starts, and it is its own: the games of its
/// pairs (here 3 of the test's 6 pairs), not the test's `--max-games`.
#[test]
fn a_worker_starts_by_saying_one_game_limit_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let shared = dir.path().join("shared");
    let workers: Vec<Child> = (1..=2)
        .map(|k| {
            let mut args = worker_args(&shared, k, 2, &["--max-games", "12", "--id", "lines"]);
            args.retain(|a| a != "-q");
            start(&args)
        })
        .collect();
    for (k, child) in (1..=2).zip(workers) {
        let o = child.wait_with_output().unwrap();
        assert!(
            matches!(o.status.code(), Some(0 | 3 | 4)),
            "worker {k}: {}",
            text(&o)
        );
        let stdout = String::from_utf8_lossy(&o.stdout);
        // The lines up to the first game.
        let start: Vec<&str> = stdout
            .lines()
            .take_while(|l| !l.starts_with("pooled "))
            .collect();
        assert!(
            start[0].starts_with(&format!(
                "worker {k} of 2 of the SPRT of hard (new) against greedy (base) in "
            )) && start[0].ends_with(&format!("; pairs {k}, {}, {}, ...", k + 2, k + 4)),
            "{stdout}"
        );
        assert!(
            start[1].starts_with("starting SPRT games: 2 engines, at most 6 games, 6x4, "),
            "{stdout}"
        );
        assert!(
            start.contains(&"tournament lines: game pairs until the test decides (0 done)"),
            "{stdout}"
        );
        let limits: Vec<&&str> = start.iter().filter(|l| l.contains("at most")).collect();
        assert_eq!(limits.len(), 1, "{stdout}");
    }
}

/// Waits until `dir` holds at least `games` complete records.
fn wait_for_games(dir: &Path, games: usize) {
    let t0 = Instant::now();
    while lines(dir).len() < games {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "no games in {dir:?}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn killing_one_of_three_workers_loses_no_recorded_game_and_changes_no_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let shared = dir.path().join("shared");
    let w2 = shared.join("worker-2");
    // Workers 2 and 3 without worker 1: the test waits for pair 1, so they play on, and
    // worker 2 is killed (SIGKILL) while it plays.
    let mut victim = start(&worker_args(&shared, 2, 3, &[]));
    let third = start(&worker_args(&shared, 3, 3, &[]));
    wait_for_games(&w2, 5);
    victim.kill().unwrap();
    victim.wait().unwrap();
    let before = lines(&w2);
    assert!(before.len() >= 5);
    // Worker 1, and worker 2 again with the same command.
    let workers: Vec<Child> = [1, 2]
        .iter()
        .map(|&k| start(&worker_args(&shared, k, 3, &[])))
        .chain([third])
        .collect();
    let outputs: Vec<Output> = workers
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect();
    let after = lines(&w2);
    assert_eq!(
        after[..before.len()],
        before[..],
        "a recorded game was lost"
    );
    // Worker 2 went on with its own pairs, in order, each game once.
    // (The last pair may be half played: its second game was stopped by the verdict.)
    let got = numbers(&w2);
    let expected: Vec<u64> = (0..got.len() as u64)
        .flat_map(|i| {
            let p = 2 + 3 * i;
            [2 * p - 1, 2 * p]
        })
        .take(got.len())
        .collect();
    assert_eq!(got, expected);
    assert!(
        got.len() > before.len(),
        "the resumed worker played no game"
    );
    let one = one_machine(dir.path());
    check_verdict(&shared, &outputs, &one);
}

#[test]
fn a_worker_with_other_settings_is_refused_by_the_setting() {
    let dir = tempfile::tempdir().unwrap();
    let shared = dir.path().join("shared");
    // A test of one pair: worker 1 plays it and the game limit ends the test.
    let o = kalaha()
        .args(worker_args(&shared, 1, 2, &["--max-games", "2"]))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(4), "{}", text(&o));
    let refused = |extra: &[&str], k: u64, n: u64, says: &str| {
        let mut args = worker_args(&shared, k, n, &["--max-games", "2"]);
        args.extend(extra.iter().map(|s| s.to_string()));
        let o = kalaha().args(&args).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("this worker's settings differ from the test of"),
            "{err}"
        );
        assert!(err.contains(says), "{err}");
        assert!(!shared.join(format!("worker-{k}")).exists());
    };
    refused(
        &["--alpha", "0.1"],
        2,
        2,
        "alpha is 0.1 here but 0.05 in the test",
    );
    refused(&[], 2, 3, "workers is 3 here but 2 in the test");
    refused(&["--seed", "9"], 2, 2, "seed is 9 here but 0 in the test");
    refused(&["--each", "option.depth=4"], 2, 2, "engine 2, options is");
    // The same settings join, and find the test decided.
    let o = kalaha()
        .args(worker_args(&shared, 2, 2, &["--max-games", "2"]))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(4), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("no decision: the game limit was reached"),
        "{}",
        text(&o)
    );
}

#[test]
fn a_worker_folder_resumes_as_that_worker() {
    let dir = tempfile::tempdir().unwrap();
    let shared = dir.path().join("shared");
    let w1 = shared.join("worker-1");
    let mut first = start(&worker_args(&shared, 1, 2, &[]));
    wait_for_games(&w1, 2);
    first.kill().unwrap();
    first.wait().unwrap();
    let before = lines(&w1);
    let resumed = start(&[
        "sprt".to_string(),
        "--resume".to_string(),
        w1.display().to_string(),
        "-q".to_string(),
    ]);
    let other = start(&worker_args(&shared, 2, 2, &[]));
    let outputs = vec![
        resumed.wait_with_output().unwrap(),
        other.wait_with_output().unwrap(),
    ];
    assert_eq!(lines(&w1)[..before.len()], before[..]);
    let one = one_machine(dir.path());
    check_verdict(&shared, &outputs, &one);
    // It ended as worker 1 of the shared test.
    let result = result(&w1);
    assert_eq!(result["worker"].as_integer(), Some(1));
}

#[test]
fn a_worker_far_ahead_of_the_others_waits_for_them() {
    let dir = tempfile::tempdir().unwrap();
    let shared = dir.path().join("shared");
    let w2 = shared.join("worker-2");
    // Worker 2 of 3 alone, one game at a time: with no pair judged it may play 3 x (4 + 1)
    // pairs of the test ahead, its pairs 2, 5, 8, 11 and 14, and holds pair 17 back.
    let mut alone = start(&worker_args(&shared, 2, 3, &[]));
    wait_for_games(&w2, 10);
    std::thread::sleep(Duration::from_millis(800));
    assert_eq!(numbers(&w2), [3, 4, 9, 10, 15, 16, 21, 22, 27, 28]);
    assert!(alone.try_wait().unwrap().is_none(), "it waits");
    // The others come: the test goes on and decides.
    let workers: Vec<Child> = [1, 3]
        .iter()
        .map(|&k| start(&worker_args(&shared, k, 3, &[])))
        .collect();
    let mut outputs: Vec<Output> = workers
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect();
    // The one that waited stops too, with the verdict.
    outputs.push(alone.wait_with_output().unwrap());
    let one = one_machine(dir.path());
    check_verdict(&shared, &outputs, &one);
}
