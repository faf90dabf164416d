//! `kalaha analyze` and `kalaha openings` from the outside: the files they write, the values
//! in them, and an analysis killed halfway that resumes to the same result.

use kalaha::rules::{Position, Rules, Side, Sweep};
use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn kalaha(args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_kalaha"))
        .args(args)
        .output()
        .expect("run kalaha");
    assert!(
        out.status.success(),
        "kalaha {args:?}: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn text(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The rows of a CSV file as maps from column to cell.
fn rows(path: &Path) -> Vec<HashMap<String, String>> {
    let mut r = csv::Reader::from_path(path).unwrap();
    let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    r.records()
        .map(|rec| {
            let rec = rec.unwrap();
            header
                .iter()
                .cloned()
                .zip(rec.iter().map(String::from))
                .collect()
        })
        .collect()
}

/// The value of `pos` for its side to move by plain memoised minimax over the rules.
fn minimax(pos: &Position, memo: &mut HashMap<(Vec<u16>, Side), i32>) -> i32 {
    let me = pos.to_move();
    if pos.is_over() {
        return pos.store_margin(me);
    }
    let key = (pos.cells().to_vec(), me);
    if let Some(&v) = memo.get(&key) {
        return v;
    }
    let mut best = i32::MIN;
    for pit in pos.legal_moves().collect::<Vec<_>>() {
        let next = pos.play(pit as i64).unwrap();
        let v = if next.is_over() {
            next.store_margin(me)
        } else if next.to_move() == me {
            minimax(&next, memo)
        } else {
            -minimax(&next, memo)
        };
        best = best.max(v);
    }
    memo.insert(key, best);
    best
}

#[test]
fn perfect_against_itself_loses_nothing_and_the_reports_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let tables = dir.path().join("tables");
    let (o, t) = (out.to_str().unwrap(), tables.to_str().unwrap());
    kalaha(&[
        "match",
        "--engine",
        "builtin=perfect",
        "--engine",
        "builtin=perfect",
        "--pits",
        "3",
        "--seeds",
        "3",
        "--games",
        "2",
        "--opening-plies",
        "0",
        "--move-time",
        "500ms",
        "--out",
        o,
        "-q",
    ]);
    let printed = kalaha(&["analyze", o, "--tables", t, "--threads", "2"]);
    let printed = String::from_utf8(printed.stdout).unwrap();
    assert!(printed.contains("unsolved 0 sowings"), "{printed}");
    // Nothing was estimated: the summary does not say why moves were.
    let exact = printed
        .lines()
        .find(|l| l.starts_with("exact "))
        .unwrap_or_else(|| panic!("{printed}"));
    assert!(
        exact.ends_with(" sowings, none estimated") && !exact.contains("did not finish"),
        "{exact}"
    );
    let csv = out.join("analysis.csv");
    assert!(
        text(&csv)
            .starts_with("game,ply,side,engine,pit,value_before,value_after,loss,kind,depth\n")
    );
    let analysed = rows(&csv);
    let games = text(&out.join("games.jsonl"));
    let plies: usize = games
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["moves"]
                .as_array()
                .unwrap()
                .len()
        })
        .sum();
    assert_eq!(analysed.len(), plies);
    for r in &analysed {
        assert_eq!(r["loss"], "0", "{r:?}");
        assert!(r["engine"].starts_with("perfect"), "{r:?}");
    }
    // The first sowing of each game is from the start: its value is the board's.
    let mut memo = HashMap::new();
    let start = minimax(
        &Position::start(Rules::new(3, 3, false, Sweep::Owner).unwrap()),
        &mut memo,
    );
    for r in analysed.iter().filter(|r| r["ply"] == "1") {
        assert_eq!(r["value_before"], start.to_string());
    }
    let standings = rows(&out.join("standings.csv"));
    for r in &standings {
        assert_eq!(
            (r["loss_per_move"].as_str(), r["accuracy"].as_str()),
            ("0.0000", "1.0000")
        );
        assert_eq!(r["loss_blunders"], "0");
    }
    let summary = rows(&out.join("analysis_games.csv"));
    assert_eq!(summary.len(), 4, "two games, two sides");
    let html = text(&out.join("leaderboard.html"));
    assert!(html.contains("id=\"accuracy-chart\"") && html.contains("Loss/move"));
    assert!(text(&out.join("leaderboard.md")).contains("Accuracy against perfect play"));
    // Rating the run again in its own folder keeps its analysis in the reports.
    let rated = kalaha(&["ratings", o]);
    assert!(rated.status.success(), "{rated:?}");
    for r in &rows(&out.join("standings.csv")) {
        assert_eq!(r["loss_per_move"], "0.0000", "{r:?}");
    }
    assert!(text(&out.join("leaderboard.md")).contains("Accuracy against perfect play"));
}

#[test]
fn an_analysis_killed_halfway_resumes_to_the_same_result() {
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("whole");
    let cut = dir.path().join("cut");
    kalaha(&[
        "match",
        "--engine",
        "builtin=random",
        "--engine",
        "builtin=greedy",
        "--pits",
        "5",
        "--seeds",
        "3",
        "--games",
        "40",
        "--move-time",
        "50ms",
        "--out",
        whole.to_str().unwrap(),
        "-q",
    ]);
    std::fs::create_dir(&cut).unwrap();
    for f in ["games.jsonl", "games.csv", "tournament.toml"] {
        std::fs::copy(whole.join(f), cut.join(f)).unwrap();
    }
    let flags = [
        "--threads",
        "1",
        "--budget",
        "none",
        "--table-mb",
        "0",
        "-q",
    ];
    let mut args = vec!["analyze", whole.to_str().unwrap()];
    args.extend(flags);
    kalaha(&args);

    // Kill the second analysis once a few games are on disk.
    let mut args = vec!["analyze", cut.to_str().unwrap()];
    args.extend(flags);
    let mut child = Command::new(env!("CARGO_BIN_EXE_kalaha"))
        .args(&args)
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let csv = cut.join("analysis.csv");
    let started = Instant::now();
    let mut killed = false;
    while started.elapsed() < Duration::from_secs(60) {
        let lines = std::fs::read_to_string(&csv).map_or(0, |t| t.lines().count());
        if lines > 30 {
            killed = child.try_wait().unwrap().is_none();
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    child.wait().unwrap();
    assert!(killed, "the analysis ended before it could be killed");
    let partial = rows(&csv).len();
    let total = rows(&whole.join("analysis.csv")).len();
    assert!(partial < total, "killed with {partial} of {total} rows");
    assert!(!cut.join("analysis_games.csv").exists());

    let resumed = kalaha(
        &args
            .iter()
            .copied()
            .filter(|a| *a != "-q")
            .collect::<Vec<_>>(),
    );
    let printed = String::from_utf8(resumed.stdout).unwrap();
    assert!(printed.contains("analysed by an earlier run"), "{printed}");
    for f in ["analysis.csv", "analysis_games.csv", "standings.csv"] {
        assert_eq!(text(&cut.join(f)), text(&whole.join(f)), "{f}");
    }
}

#[test]
fn openings_are_distinct_of_k_sowings_and_as_even_as_asked() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("openings.txt");
    let made = kalaha(&[
        "openings",
        "--pits",
        "3",
        "--seeds",
        "3",
        "--plies",
        "2",
        "--count",
        "4",
        "--max-value",
        "2",
        "--seed",
        "7",
        "--out",
        file.to_str().unwrap(),
    ]);
    // Off a terminal, plain progress; the partial file is gone once all are found.
    let err = String::from_utf8_lossy(&made.stderr);
    assert!(err.contains("4 of 4 found"), "{err}");
    assert!(!dir.path().join("openings.txt.partial").exists());
    // The header gives the command that writes the same file again, its --out too.
    let command = text(&file)
        .lines()
        .find(|l| l.starts_with("# kalaha openings "))
        .unwrap()
        .to_string();
    assert!(
        command.contains("--seed 7 --budget 10s --pits 3 --seeds 3 --sweep owner --out "),
        "{command}"
    );
    assert!(command.ends_with("openings.txt"), "{command}");
    let rules = Rules::new(3, 3, false, Sweep::Owner).unwrap();
    let mut memo = HashMap::new();
    let mut seen = std::collections::HashSet::new();
    let lines: Vec<String> = text(&file)
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(String::from)
        .collect();
    assert_eq!(lines.len(), 4);
    for line in &lines {
        let (pits, comment) = line.split_once('#').unwrap();
        let mut pos = Position::start(rules);
        let pits: Vec<i64> = pits
            .split_whitespace()
            .map(|p| p.parse().unwrap())
            .collect();
        assert_eq!(pits.len(), 2, "{line}");
        for p in &pits {
            pos = pos.play(*p).unwrap();
        }
        assert!(!pos.is_over());
        assert!(seen.insert((pos.cells().to_vec(), pos.to_move())), "{line}");
        let v = minimax(&pos, &mut memo);
        let south = if pos.to_move() == Side::South { v } else { -v };
        assert!(south.abs() <= 2, "{line}");
        assert_eq!(comment.trim(), format!("value {south:+}"), "{line}");
    }
    // The file is an openings file a tournament reads.
    let out = dir.path().join("run");
    kalaha(&[
        "match",
        "--engine",
        "builtin=greedy",
        "--engine",
        "builtin=first",
        "--pits",
        "3",
        "--seeds",
        "3",
        "--games",
        "8",
        "--openings",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "-q",
    ]);
    let openings: std::collections::HashSet<String> = rows(&out.join("games.csv"))
        .iter()
        .map(|r| r["opening"].clone())
        .collect();
    assert_eq!(openings.len(), 4);
}

/// A hand-edited `games.jsonl`: a repeated line, a line that is not a game and a game whose
/// sowings do not give its recorded stores are each reported, never analysed or shown as
/// if played.
#[test]
fn edited_and_repeated_games_are_reported_not_analysed_or_shown() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let o = out.to_str().unwrap();
    let played = kalaha(&[
        "match",
        "--engine",
        "first",
        "--engine",
        "random",
        "--pits",
        "3",
        "--seeds",
        "2",
        "--games",
        "2",
        "--opening-plies",
        "0",
        "--id",
        "e",
        "--out",
        o,
        "-q",
    ]);
    assert!(played.status.success(), "{played:?}");
    let path = out.join("games.jsonl");
    let original = text(&path);
    let first = original.lines().next().unwrap();
    let mut edited: serde_json::Value = serde_json::from_str(first).unwrap();
    edited["game"] = "e-3".into();
    edited["number"] = 3.into();
    // One seed fewer in a store: within the seeds of the game, but not what was played.
    let store = if edited["south_score"].as_u64().unwrap() > 0 {
        "south_score"
    } else {
        "north_score"
    };
    edited[store] = (edited[store].as_u64().unwrap() - 1).into();
    std::fs::write(&path, format!("{original}{first}\nnot a game\n{edited}\n")).unwrap();

    let analysed = kalaha(&["analyze", o]);
    let err = String::from_utf8_lossy(&analysed.stderr);
    assert!(analysed.status.success(), "{err}");
    assert!(
        err.contains("1 unreadable line") && err.contains("1 repeated game"),
        "{err}"
    );
    assert!(
        err.contains("not analysed: game e-3") && err.contains("records"),
        "{err}"
    );
    let analysed_rows = rows(&out.join("analysis.csv")).len();
    let games: std::collections::HashSet<String> = rows(&out.join("analysis.csv"))
        .into_iter()
        .map(|r| r["game"].clone())
        .collect();
    assert_eq!(games, ["e-1", "e-2"].map(String::from).into());

    // Rules flags of another board select no game: refused, the analysis kept.
    let other = Command::new(env!("CARGO_BIN_EXE_kalaha"))
        .args(["analyze", o, "--pits", "6", "--seeds", "4"])
        .output()
        .unwrap();
    assert_eq!(other.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&other.stderr).contains("none of the"));
    assert_eq!(rows(&out.join("analysis.csv")).len(), analysed_rows);
    let shown = Command::new(env!("CARGO_BIN_EXE_kalaha"))
        .args(["show", o, "e-3"])
        .output()
        .unwrap();
    assert_eq!(shown.status.code(), Some(2));
    let err = String::from_utf8_lossy(&shown.stderr);
    assert!(err.contains("does not replay under its rules"), "{err}");
    assert!(kalaha(&["show", o, "e-1"]).status.success());
    // A game that is not there, in a file with a line that is not a game: both said.
    let missing = Command::new(env!("CARGO_BIN_EXE_kalaha"))
        .args(["show", o, "e-9"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2));
    let err = String::from_utf8_lossy(&missing.stderr);
    assert!(
        err.contains("no game \"e-9\"") && err.contains("1 of its lines are not game records"),
        "{err}"
    );
}

/// Where the openings go is checked before any solving: a folder, or a file in a folder
/// that does not exist, is refused at once and leaves nothing behind.
#[test]
fn a_bad_openings_file_is_refused_before_the_search() {
    let dir = tempfile::tempdir().unwrap();
    for out in [dir.path().to_path_buf(), dir.path().join("no/such/x.txt")] {
        let o = Command::new(env!("CARGO_BIN_EXE_kalaha"))
            .args(["openings", "--pits", "4", "--seeds", "3", "--plies", "2"])
            .args(["--count", "3", "--max-value", "3", "--out"])
            .arg(&out)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{out:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!err.contains("found"), "searched first: {err}");
    }
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().collect();
    assert!(left.is_empty(), "{left:?}");
}

/// A search that cannot find as many openings as asked keeps those it found in
/// `FILE.partial`, an openings file of its own, and says so.
#[test]
fn openings_found_before_the_tries_run_out_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("few.txt");
    let o = Command::new(env!("CARGO_BIN_EXE_kalaha"))
        .args(["openings", "--pits", "3", "--seeds", "3", "--plies", "2"])
        .args(["--count", "100", "--max-value", "2", "--out"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    let partial = dir.path().join("few.txt.partial");
    assert!(
        err.contains("found only") && err.contains("few.txt.partial"),
        "{err}"
    );
    assert!(!file.exists());
    let kept: Vec<String> = text(&partial)
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(String::from)
        .collect();
    assert!(!kept.is_empty() && kept.len() < 100, "{kept:?}");
    assert!(
        kept.iter().all(|l| ["-2", "-1", "+0", "+1", "+2"]
            .iter()
            .any(|v| l.ends_with(&format!("# value {v}")))),
        "{kept:?}"
    );
}

/// A folder whose games.jsonl holds no game is refused, not "analysed" into empty files.
#[test]
fn a_folder_without_games_is_not_analysed() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("games.jsonl"), "").unwrap();
    let o = crate::common::kalaha()
        .args(["analyze", dir.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("holds no game to analyse yet"), "{err}");
    assert!(!dir.path().join("analysis.csv").exists());
}

/// The positions of each game of `dir/games.jsonl` from the start, by game id.
fn replayed(dir: &Path, rules: Rules) -> HashMap<String, Vec<Position>> {
    text(&dir.join("games.jsonl"))
        .lines()
        .map(|l| {
            let g: serde_json::Value = serde_json::from_str(l).unwrap();
            let mut pos = Position::start(rules);
            let mut line = vec![pos];
            for m in g["moves"].as_array().unwrap() {
                pos = pos.play(m["pit"].as_i64().unwrap()).unwrap();
                line.push(pos);
            }
            (g["game"].as_str().unwrap().to_string(), line)
        })
        .collect()
}

/// The `value N` line of `kalaha solve --position` for `pos`.
fn solved(pos: &Position, rules_flags: &[&str], tables: &str) -> i32 {
    let compact = pos.to_compact();
    let mut args = vec!["solve", "--position", &compact, "--tables", tables];
    args.extend(rules_flags);
    let out = String::from_utf8(kalaha(&args).stdout).unwrap();
    out.lines()
        .last()
        .and_then(|l| l.strip_prefix("value "))
        .unwrap_or_else(|| panic!("{out}"))
        .parse()
        .unwrap()
}

/// Every value the analysis writes, on a sample of the positions of several games under
/// both capture rules, is the value `kalaha solve --position` gives for that position; the
/// analysis is the same byte for byte with one thread and with two.
#[test]
fn analysed_values_are_those_of_solve_and_do_not_depend_on_threads() {
    let dir = tempfile::tempdir().unwrap();
    let tables = dir.path().join("tables");
    let t = tables.to_str().unwrap();
    let mut compared = 0;
    for (rules, flags) in [
        (Rules::new(4, 4, false, Sweep::Owner).unwrap(), vec![]),
        (
            Rules::new(4, 4, true, Sweep::Owner).unwrap(),
            vec!["--empty-capture"],
        ),
    ] {
        let one = dir.path().join(format!("one-{}", flags.len()));
        let two = dir.path().join(format!("two-{}", flags.len()));
        let mut args = vec![
            "match",
            "--engine",
            "builtin=random",
            "--engine",
            "builtin=easy",
            "--pits",
            "4",
            "--games",
            "6",
            "--move-time",
            "20ms",
            "--out",
            one.to_str().unwrap(),
            "-q",
        ];
        args.extend(&flags);
        kalaha(&args);
        std::fs::create_dir(&two).unwrap();
        for f in ["games.jsonl", "games.csv", "tournament.toml"] {
            std::fs::copy(one.join(f), two.join(f)).unwrap();
        }
        for (out, threads) in [(&one, "1"), (&two, "2")] {
            let o = out.to_str().unwrap();
            kalaha(&[
                "analyze",
                o,
                "--threads",
                threads,
                "--budget",
                "none",
                "--tables",
                t,
                "-q",
            ]);
        }
        let csv = text(&one.join("analysis.csv"));
        assert_eq!(csv, text(&two.join("analysis.csv")), "{flags:?}");
        let games = replayed(&one, rules);
        let analysed = rows(&one.join("analysis.csv"));
        assert_eq!(
            analysed.len() + games.len(),
            games.values().map(Vec::len).sum::<usize>()
        );
        for r in analysed.iter().step_by(5) {
            let ply: usize = r["ply"].parse().unwrap();
            let line = &games[&r["game"]];
            let before = &line[ply - 1];
            assert_eq!(
                r["value_before"],
                solved(before, &flags, t).to_string(),
                "{r:?}"
            );
            let after = &line[ply];
            let mover = before.to_move();
            let expected = if after.is_over() {
                after.store_margin(mover)
            } else if after.to_move() == mover {
                solved(after, &flags, t)
            } else {
                -solved(after, &flags, t)
            };
            assert_eq!(r["value_after"], expected.to_string(), "{r:?}");
            compared += 1;
        }
    }
    assert!(compared >= 20, "{compared}");
}

/// A crafted record whose rules are not those its sowings were played under (16 pits a
/// side, where building an endgame table would take hundreds of MiB): every record is
/// replayed before anything is solved, so no table is built for it and it is named.
#[test]
fn a_record_that_does_not_replay_builds_no_table() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let tables = dir.path().join("tables");
    let o = out.to_str().unwrap();
    let played = kalaha(&[
        "match", "--engine", "first", "--engine", "random", "--pits", "3", "--seeds", "2",
        "--games", "2", "--id", "c", "--out", o, "-q",
    ]);
    assert!(played.status.success(), "{played:?}");
    let path = out.join("games.jsonl");
    let crafted: String = text(&path)
        .lines()
        .map(|l| {
            let mut rec: serde_json::Value = serde_json::from_str(l).unwrap();
            rec["rules"]["pits"] = 16.into();
            format!("{rec}\n")
        })
        .collect();
    std::fs::write(&path, crafted).unwrap();
    let analysed = Command::new(env!("CARGO_BIN_EXE_kalaha"))
        .args(["analyze", o, "--tables", tables.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&analysed.stderr);
    assert_eq!(analysed.status.code(), Some(2), "{err}");
    assert!(err.contains("not analysed: game c-1"), "{err}");
    assert!(err.contains("none of the games"), "{err}");
    let built: Vec<_> = std::fs::read_dir(&tables)
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(built.is_empty(), "tables built: {built:?}");
}
