//! What a new user meets in the first hour: engines from a configuration file run in its
//! folder, logs under the engines' names, quoted engine specs, names given twice, the
//! results folder's lock, times written in two words, the SPRT header.

use crate::common::{assert_no_survivors, csv_rows, fake_engine, kalaha, marker, text};
use std::path::Path;

fn strings(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

fn run_in(dir: &Path, args: &[String]) -> std::process::Output {
    kalaha()
        .current_dir(dir)
        .args(args)
        .output()
        .expect("kalaha runs")
}

#[test]
fn a_config_file_engine_runs_in_the_file_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let conf = tmp.path().join("conf");
    let elsewhere = tmp.path().join("elsewhere");
    std::fs::create_dir_all(&conf).unwrap();
    std::fs::create_dir_all(&elsewhere).unwrap();
    let mark = marker("config-dir");
    std::fs::write(
        conf.join("eng.sh"),
        format!("exec '{}' good {mark}\n", fake_engine().display()),
    )
    .unwrap();
    std::fs::write(
        conf.join("t.toml"),
        "games = 2\nmove_time = \"200ms\"\n\n[[engine]]\nname = \"scripted\"\ncmd = \"sh\"\n\
         args = [\"eng.sh\"]\n\n[[engine]]\nbuiltin = \"first\"\n",
    )
    .unwrap();
    let o = run_in(
        &elsewhere,
        &strings(&[
            "tournament",
            "--config",
            "../conf/t.toml",
            "--out",
            "out",
            "-q",
        ]),
    );
    assert!(o.status.success(), "{}", text(&o));
    let rows = csv_rows(&elsewhere.join("out"));
    assert_eq!(rows.len(), 2);
    assert!(
        rows.iter().all(|r| r["termination"] == "normal"),
        "{rows:?}"
    );
    // A bare file name: its folder is the current one.
    let args = strings(&["tournament", "--config", "t.toml", "--out", "out", "-q"]);
    let o = run_in(&conf, &args);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(csv_rows(&conf.join("out")).len(), 2);
    assert_no_survivors(None, Some(&mark));
}

#[test]
fn logs_are_named_after_the_engine_and_the_lock_goes_with_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let mark = marker("log-names");
    // One quoted word holds the whole spec; the engine names itself fake-good.
    let spec = format!("cmd={} arg=good arg={mark}", fake_engine().display());
    let mut args = strings(&["match", "--engine", &spec, "--engine", "builtin=first"]);
    args.extend(strings(&[
        "--games", "2", "-j", "1", "--debug", "-q", "--out",
    ]));
    args.push(out.display().to_string());
    let o = run_in(tmp.path(), &args);
    assert!(o.status.success(), "{}", text(&o));
    let rows = csv_rows(&out);
    assert!(
        rows.iter()
            .all(|r| [&r["south"], &r["north"]].contains(&&"fake-good".to_string()))
    );
    let logs: Vec<String> = std::fs::read_dir(out.join("logs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    for f in ["fake-good.1.log", "fake-good.1.transcript", "first.1.log"] {
        assert!(logs.contains(&f.to_string()), "{f} not in {logs:?}");
    }
    assert!(
        !logs.iter().any(|f| f.starts_with("fake_engine")),
        "{logs:?}"
    );
    let transcript = std::fs::read_to_string(out.join("logs/fake-good.1.transcript")).unwrap();
    assert!(transcript.contains(r#"> {"type":"quit"}"#), "{transcript}");
    assert!(
        !out.join(".lock").exists(),
        "the lock file is deleted at the end"
    );
    assert_no_survivors(None, Some(&mark));
}

#[test]
fn engines_named_alike_are_refused_before_anything_starts() {
    let tmp = tempfile::tempdir().unwrap();
    let o = run_in(
        tmp.path(),
        &strings(&[
            "tournament",
            "--engine",
            "builtin=first",
            "name=a",
            "--engine",
            "builtin=random name=a",
            "--out",
            "out",
        ]),
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(o.stdout.is_empty(), "{}", text(&o));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("two engines are named \"a\""), "{stderr}");
}

#[test]
fn a_time_taken_for_an_engine_gets_the_flag_to_run() {
    let tmp = tempfile::tempdir().unwrap();
    for (args, hint) in [
        (
            &["match", "first", "random", "100", "ms"][..],
            "--move-time 100ms",
        ),
        (
            &["match", "first", "random", "100ms"][..],
            "--move-time 100ms",
        ),
        (
            &["match", "first", "random", "--move-time", "100", "ms"][..],
            "--move-time 100ms",
        ),
        (&["tournament", "--clock", "10", "s"][..], "--clock 10s"),
    ] {
        let o = run_in(tmp.path(), &strings(args));
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(hint), "{args:?}: {stderr}");
    }
    assert!(!tmp.path().join("results").exists(), "nothing was run");
}

#[test]
fn the_sprt_header_gives_its_game_limit() {
    let tmp = tempfile::tempdir().unwrap();
    let o = run_in(
        tmp.path(),
        &strings(&[
            "sprt",
            "--engine",
            "builtin=first",
            "--engine",
            "builtin=random",
            "--elo0",
            "0",
            "--elo1",
            "5",
            "--max-games",
            "2",
            "--move-time",
            "20ms",
            "--out",
            "out",
        ]),
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    let header = stdout
        .lines()
        .find(|l| l.starts_with("starting SPRT games"))
        .unwrap_or_else(|| panic!("no header: {}", text(&o)));
    assert!(
        header.contains(": 2 engines, at most 2 games, "),
        "{header}"
    );
    assert!(!header.contains("per pairing"), "{header}");
}

/// The README's SPRT: engines given by command without `name=` go by their `hello` names,
/// and the test counts their games under those names, decides, and resumes to the same
/// verdict.
#[test]
fn an_sprt_of_engines_named_by_hello_decides_and_resumes() {
    let tmp = tempfile::tempdir().unwrap();
    let me = env!("CARGO_BIN_EXE_kalaha");
    let args = strings(&[
        "sprt",
        "--engine",
        &format!("cmd={me}"),
        "arg=engine",
        "arg=hard",
        "option.depth=3",
        "--engine",
        &format!("cmd={me}"),
        "arg=engine",
        "arg=random",
        "--elo0",
        "0",
        "--elo1",
        "5",
        "--max-games",
        "400",
        "--move-time",
        "1s",
        "-j",
        "2",
        "--quiet",
        "--out",
        "out",
    ]);
    let o = run_in(tmp.path(), &args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    let verdict = stdout.trim_end().lines().last().unwrap_or_default();
    assert!(verdict.starts_with("H1 accepted"), "{}", text(&o));
    assert!(verdict.contains("hard"), "{verdict}");
    let result = std::fs::read_to_string(tmp.path().join("out/sprt-result.toml")).unwrap();
    assert!(!result.contains("after 0 pairs"), "{result}");
    // The published leaderboard carries the verdict, not "none yet".
    let board = std::fs::read_to_string(tmp.path().join("out/leaderboard.md")).unwrap();
    assert!(
        board.contains("H1 accepted") && !board.contains("none yet"),
        "{board}"
    );
    let o = run_in(
        tmp.path(),
        &strings(&["sprt", "--resume", "out", "--quiet"]),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let again = String::from_utf8_lossy(&o.stdout);
    assert!(again.contains("H1 accepted"), "{}", text(&o));
    // Resumed as a tournament it would play on without its stopping rule: refused.
    let o = run_in(tmp.path(), &strings(&["tournament", "--resume", "out"]));
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("kalaha sprt --resume out"),
        "{}",
        text(&o)
    );
    let o = run_in(tmp.path(), &strings(&["tournament", "--resume", "no-such"]));
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("no-such does not exist"),
        "{}",
        text(&o)
    );
    // And the other way round: an SPRT resume of a missing folder or of a tournament.
    let o = run_in(tmp.path(), &strings(&["sprt", "--resume", "no-such"]));
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("no-such does not exist"),
        "{}",
        text(&o)
    );
    let o = run_in(
        tmp.path(),
        &strings(&[
            "match", "--engine", "first", "--engine", "random", "--pits", "3", "--seeds", "2",
            "--games", "2", "--quiet", "--out", "plain",
        ]),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = run_in(tmp.path(), &strings(&["sprt", "--resume", "plain"]));
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("kalaha tournament --resume plain"),
        "{}",
        text(&o)
    );
    // Each folder's tournament.toml says what kind of run it holds; the kind is read from
    // there, not guessed from the files beside it.
    let kind =
        |dir: &str| std::fs::read_to_string(tmp.path().join(dir).join("tournament.toml")).unwrap();
    assert!(
        kind("plain").contains("run = \"match\""),
        "{}",
        kind("plain")
    );
    assert!(kind("out").contains("run = \"sprt\""), "{}", kind("out"));
    std::fs::remove_file(tmp.path().join("out/sprt.toml")).unwrap();
    let o = run_in(tmp.path(), &strings(&["tournament", "--resume", "out"]));
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("holds an SPRT"),
        "{}",
        text(&o)
    );
}

/// The demo's time control gives way to the user's, and no error names a flag the user
/// did not give.
#[test]
fn the_demo_takes_the_users_time_control() {
    for tc in [["--move-time", "20ms"], ["--clock", "3s+20ms"]] {
        let tmp = tempfile::tempdir().unwrap();
        let mut args = strings(&["tournament", "--games", "2", "-j", "2", "-q"]);
        args.extend(strings(&tc));
        args.extend(strings(&["--out", "out"]));
        let o = run_in(tmp.path(), &args);
        assert!(o.status.success(), "{tc:?}: {}", text(&o));
        assert!(!text(&o).contains("--tc"), "{}", text(&o));
    }
}

/// A folder of other files is not filled with results files, and the refusal comes before
/// the header says a run starts; an empty folder is taken.
#[test]
fn a_folder_of_other_files_is_refused_before_the_run_starts() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join("docs")).unwrap();
    std::fs::write(tmp.path().join("docs/notes.txt"), "mine").unwrap();
    std::fs::create_dir(tmp.path().join("empty")).unwrap();
    let run = |out: &str| {
        run_in(
            tmp.path(),
            &strings(&[
                "match", "--engine", "first", "--engine", "random", "--pits", "3", "--seeds", "2",
                "--games", "2", "--out", out,
            ]),
        )
    };
    let o = run("docs");
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(o.stdout.is_empty(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("holds other files (notes.txt"),
        "{}",
        text(&o)
    );
    let left: Vec<_> = std::fs::read_dir(tmp.path().join("docs"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(left, ["notes.txt"]);
    let o = run("empty");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

/// Balanced openings on a board whose endgame table is not built are refused at once with
/// the command that builds it, instead of minutes of silent solving.
#[test]
fn balanced_openings_without_their_table_say_how_to_build_it() {
    let tmp = tempfile::tempdir().unwrap();
    let started = std::time::Instant::now();
    let o = kalaha()
        .current_dir(tmp.path())
        .env("XDG_CACHE_HOME", tmp.path().join("cache"))
        .args(strings(&[
            "match",
            "--engine",
            "first",
            "--engine",
            "random",
            "--balanced-openings",
            "2",
            "--games",
            "2",
            "--out",
            "out",
        ]))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--balanced-openings")
            && err.contains("kalaha tables build --pits 6 --seeds 4"),
        "{err}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
}

/// More games at once than CPUs is warned of (the engines' clocks run while they wait for
/// a CPU), and the header counts only the games that can run at once.
#[test]
fn more_games_at_once_than_cpus_is_warned_of() {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let games = 2 * (cpus + 1);
    let tmp = tempfile::tempdir().unwrap();
    let o = run_in(
        tmp.path(),
        &strings(&[
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
            &games.to_string(),
            "-j",
            "100000",
            "--out",
            "out",
        ]),
    );
    assert!(o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!("warning: {games} games at once on {cpus} CPU")),
        "{err}"
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains(&format!(", {games} at once;")), "{out}");
    let o = run_in(
        tmp.path(),
        &strings(&[
            "match", "--engine", "first", "--engine", "random", "--pits", "3", "--seeds", "2",
            "--games", "2", "-j", "1", "--out", "out1",
        ]),
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        !String::from_utf8_lossy(&o.stderr).contains("at once"),
        "{}",
        text(&o)
    );
    // A resume of the first run, which is over, plays nothing at once: no warning.
    let o = run_in(
        tmp.path(),
        &strings(&["tournament", "--resume", "out", "--quiet"]),
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        !String::from_utf8_lossy(&o.stderr).contains("at once"),
        "{}",
        text(&o)
    );
}

/// A results folder named with escape bytes is printed escaped on every line that names
/// it, never sent to the terminal raw.
#[test]
fn a_folder_name_with_escape_bytes_is_printed_escaped() {
    let tmp = tempfile::tempdir().unwrap();
    let name = "r\u{1b}]0;owned\u{7}";
    let o = run_in(
        tmp.path(),
        &strings(&[
            "match", "--engine", "first", "--engine", "random", "--pits", "3", "--seeds", "2",
            "--games", "2", "--out", name,
        ]),
    );
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("results in r\\u{1b}]0;owned\\u{7}"), "{out}");
    for args in [vec!["ratings", name], vec!["tournament", "--resume", name]] {
        let o = run_in(tmp.path(), &strings(&args));
        assert!(o.status.success(), "{args:?}: {}", text(&o));
        let all = text(&o);
        assert!(
            !all.contains('\u{1b}') && !all.contains('\u{7}'),
            "{args:?}: {all:?}"
        );
    }
}

/// A resume does not count recorded games its tournament could not have played (an engine
/// not in it, self-play, a number outside the schedule), and says so.
#[test]
fn a_resume_does_not_count_games_that_are_not_of_its_tournament() {
    let tmp = tempfile::tempdir().unwrap();
    let o = run_in(
        tmp.path(),
        &strings(&[
            "match", "--engine", "first", "--engine", "random", "--pits", "3", "--seeds", "2",
            "--games", "4", "--quiet", "--out", "r",
        ]),
    );
    assert!(o.status.success(), "{}", text(&o));
    let csv = tmp.path().join("r/games.csv");
    let edited: String = std::fs::read_to_string(&csv)
        .unwrap()
        .lines()
        .map(|l| {
            let mut cells: Vec<String> = l.split(',').map(String::from).collect();
            if cells[0].ends_with("-2") {
                cells[4] = "nobody".into();
            } else if cells[0].ends_with("-3") {
                cells[4] = cells[3].clone();
            }
            cells.join(",") + "\n"
        })
        .collect();
    std::fs::write(&csv, edited).unwrap();
    // Rows with a record are written again from it: these two have none.
    let jsonl = tmp.path().join("r/games.jsonl");
    let kept: String = std::fs::read_to_string(&jsonl)
        .unwrap()
        .lines()
        .filter(|l| !l.contains("-2\",") && !l.contains("-3\","))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&jsonl, kept).unwrap();
    let o = run_in(tmp.path(), &strings(&["tournament", "--resume", "r"]));
    assert!(o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("2 recorded games in r cannot be of this tournament"),
        "{err}"
    );
    let standings = std::fs::read_to_string(tmp.path().join("r/standings.csv")).unwrap();
    assert!(!standings.contains("nobody"), "{standings}");
    assert_eq!(
        err.matches("cannot be of this tournament").count(),
        1,
        "{err}"
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("first vs random: 2 games"), "{out}");
    // Also with --quiet.
    let o = run_in(tmp.path(), &strings(&["tournament", "--resume", "r", "-q"]));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("cannot be of this tournament"), "{err}");
}
