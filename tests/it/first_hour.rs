//! What a new user meets in the first hour: engines from a configuration file run in its
//! folder, logs under the engines' names, quoted engine specs, names given twice, the
//! results folder's lock, times written in two words, the SPRT header, suggested commands
//! that run as written, start-up errors that show what the engine said, the end of a run.

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
    // The engine's program is an argument, so that the sandbox keeps it in view wherever
    // the build is (a build under /tmp is out of an engine's sight otherwise).
    std::fs::write(conf.join("eng.sh"), format!("exec \"$1\" good {mark}\n")).unwrap();
    std::fs::write(
        conf.join("t.toml"),
        format!(
            "games = 2\nmove_time = \"200ms\"\n\n[[engine]]\nname = \"scripted\"\ncmd = \"sh\"\n\
             args = [\"eng.sh\", {:?}]\n\n[[engine]]\nbuiltin = \"first\"\n",
            fake_engine().display().to_string()
        ),
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
    // The game limit is not a plan: no "games to play", no progress towards the limit,
    // and the end counts the games played, not a fraction of the limit.
    assert!(
        stdout.contains("game pairs until the test decides (0 done)"),
        "{}",
        text(&o)
    );
    // The limit is said once, in the header.
    assert_eq!(stdout.matches("at most").count(), 1, "{}", text(&o));
    assert!(!stdout.contains("to play"), "{}", text(&o));
    assert!(
        !stdout.contains("/2]") && !stdout.contains("2/2 done"),
        "{}",
        text(&o)
    );
    assert!(stdout.contains(", 2 games done"), "{}", text(&o));
}

/// The SPRT of the task table: engines given by command without `name=` go by their `hello` names,
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
    // Two records edited by hand: one names an engine not in the tournament, one an
    // engine against itself. games.csv is written again from them.
    let jsonl = tmp.path().join("r/games.jsonl");
    let edited: String = std::fs::read_to_string(&jsonl)
        .unwrap()
        .lines()
        .map(|l| {
            let mut rec: serde_json::Value = serde_json::from_str(l).unwrap();
            let game = rec["game"].as_str().unwrap().to_string();
            if game.ends_with("-2") {
                rec["south"] = "nobody".into();
            } else if game.ends_with("-3") {
                rec["north"] = rec["south"].clone();
            }
            format!("{rec}\n")
        })
        .collect();
    std::fs::write(&jsonl, edited).unwrap();
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
    // A games.csv row without a record is not a recorded game: it is taken out of
    // games.csv and its game is played again.
    let csv = tmp.path().join("r/games.csv");
    let kept: String = std::fs::read_to_string(&jsonl)
        .unwrap()
        .lines()
        .filter(|l| !l.contains("-4\","))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&jsonl, kept).unwrap();
    assert!(std::fs::read_to_string(&csv).unwrap().contains("-4,"));
    let o = run_in(tmp.path(), &strings(&["tournament", "--resume", "r"]));
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("1 row(s) of games.csv have no record in games.jsonl"),
        "{}",
        text(&o)
    );
    assert!(text(&o).contains("1 game to play"), "{}", text(&o));
    let rows = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(rows.matches("-4,").count(), 1, "{rows}");
}

/// A command kalaha suggests runs as written: an existing results folder names the command
/// that continues it, and `kalaha match --resume DIR` continues a match.
#[test]
fn the_command_suggested_for_a_used_folder_continues_it() {
    let tmp = tempfile::tempdir().unwrap();
    let play = |out: &str| {
        run_in(
            tmp.path(),
            &strings(&[
                "match", "first", "random", "--pits", "3", "--seeds", "2", "--games", "2", "-q",
                "--out", out,
            ]),
        )
    };
    let o = play("r/m1");
    assert!(o.status.success(), "{}", text(&o));
    let o = play("r/m1");
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    let resume = err
        .split("--resume ")
        .nth(1)
        .and_then(|rest| rest.split([',', ' ', '`']).next())
        .unwrap_or_else(|| panic!("no --resume suggested: {err}"));
    assert_eq!(resume, "r/m1", "{err}");
    // As the user reads it: the command that failed, with --resume in place of the rest.
    let o = run_in(tmp.path(), &strings(&["match", "--resume", resume, "-q"]));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(csv_rows(&tmp.path().join("r/m1")).len(), 2);
    // Engines or settings with --resume are refused, as for a tournament.
    let o = run_in(
        tmp.path(),
        &strings(&["match", "--resume", "r/m1", "--games", "4"]),
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--games cannot be given with --resume"),
        "{}",
        text(&o)
    );
}

/// A program given with its arguments in `cmd=` gets the spec that runs it.
#[test]
fn a_program_and_its_arguments_in_cmd_get_the_spec_that_runs_them() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join("myengine")).unwrap();
    std::fs::write(tmp.path().join("myengine/engine.sh"), "exit 0\n").unwrap();
    let o = run_in(
        tmp.path(),
        &strings(&[
            "match",
            "--engine",
            "cmd=sh myengine/engine.sh",
            "--engine",
            "random",
            "--games",
            "2",
            "--out",
            "out",
        ]),
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("the program \"sh myengine/engine.sh\" does not exist")
            && err.contains("give `cmd=sh arg=myengine/engine.sh`"),
        "{err}"
    );
}

/// An engine that dies at start-up with a long stack (as Node.js prints a syntax error)
/// is shown with the first lines of its stderr, where the error is named, and the last.
#[test]
fn a_start_up_error_shows_the_first_lines_of_stderr_and_the_last() {
    let tmp = tempfile::tempdir().unwrap();
    let mut script = String::from(
        "echo '/work/myengine/engine.js:1' >&2\necho 'console.log(' >&2\necho >&2\n\
         echo 'SyntaxError: Unexpected end of input' >&2\n",
    );
    for i in 0..15 {
        script.push_str(&format!("echo '    at frame{i} (node:internal)' >&2\n"));
    }
    script.push_str("echo 'Node.js v20.20.2' >&2\nexit 1\n");
    std::fs::write(tmp.path().join("engine.sh"), script).unwrap();
    let o = run_in(
        tmp.path(),
        &strings(&[
            "match",
            "--engine",
            "cmd=sh arg=engine.sh name=broken",
            "--engine",
            "random",
            "--games",
            "2",
            "--out",
            "out",
        ]),
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(
            "its stderr: /work/myengine/engine.js:1 | console.log( | SyntaxError: Unexpected \
             end of input | ... |     at frame11 (node:internal) |"
        ) && err.contains("at frame14 (node:internal) | Node.js v20.20.2 (log: "),
        "{err}"
    );
}

/// The CPU figures of a run are for whoever measures kalaha: in the log (RUST_LOG=info),
/// not among the lines every run prints. A run's last progress line says when it was
/// done, not "ETA 0s".
#[test]
fn the_end_of_a_run_says_where_the_results_are_and_no_eta() {
    let tmp = tempfile::tempdir().unwrap();
    let args = strings(&[
        "match", "first", "random", "--pits", "3", "--seeds", "2", "--games", "4", "--out",
    ]);
    let mut a = args.clone();
    a.push("plain".into());
    let o = run_in(tmp.path(), &a);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(!text(&o).contains("referee CPU"), "{}", text(&o));
    assert_eq!(out.lines().last(), Some("results in plain"), "{out}");
    let last_progress = out.lines().rfind(|l| l.starts_with("[4/4] ")).unwrap();
    assert!(
        last_progress.starts_with("[4/4] done in ") && !out.contains("ETA 0"),
        "{out}"
    );
    let mut a = args;
    a.push("logged".into());
    let o = kalaha()
        .current_dir(tmp.path())
        .env("RUST_LOG", "info")
        .args(&a)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.lines()
            .any(|l| l.starts_with("info: referee CPU ") && l.contains(" us per move")),
        "{err}"
    );
}

/// `kalaha perft` says what its numbers are.
#[test]
fn perft_prints_a_header() {
    let o = kalaha().args(["perft", "--depth", "3"]).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<Vec<&str>> = out
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(lines.len(), 4, "{out}");
    assert_eq!(lines[0], ["depth", "nodes", "seconds", "nodes/s"]);
    assert_eq!(lines[1][..2], ["1", "6"]);
    assert_eq!(lines[2][..2], ["2", "35"]);
    assert_eq!(lines[3][..2], ["3", "185"]);
}

/// A built-in's name mistyped, bare, after `builtin=` or in a configuration file, gets the
/// built-in it most likely means; a word far from every built-in gets none.
#[test]
fn a_mistyped_built_in_name_gets_the_built_in_it_means() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("t.toml"),
        "[[engine]]\nbuiltin = \"first\"\n\n[[engine]]\nbuiltin = \"greddy\"\n",
    )
    .unwrap();
    for (args, meant) in [
        (&["--engine", "hadr", "--engine", "first"][..], "hard"),
        (&["--engine", "builtin=hadr", "--engine", "first"], "hard"),
        (&["--engine", "medum", "--engine", "first"], "medium"),
        (&["--engine", "Perfect", "--engine", "first"], "perfect"),
        (&["--config", "t.toml"], "greedy"),
    ] {
        let mut all = strings(&["tournament", "-q", "--out", "out"]);
        all.extend(strings(args));
        let o = run_in(tmp.path(), &all);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(&format!("did you mean builtin={meant}?")),
            "{args:?}: {err}"
        );
    }
    let o = run_in(
        tmp.path(),
        &strings(&["tournament", "--engine", "myengine", "--engine", "first"]),
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("expected KEY=VALUE: there is no built-in engine \"myengine\"")
            && !err.contains("did you mean"),
        "{err}"
    );
    assert!(!tmp.path().join("out").exists());
}

/// `--engine` with `--config` plays the engines of the command line, not the file's, and
/// says so, naming both; one engine given gets the same words before the refusal.
#[test]
fn engines_given_with_a_config_file_replace_its_engines_and_say_so() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("t.toml"),
        "games = 2\n[rules]\npits = 3\nseeds = 2\n\n[[engine]]\nbuiltin = \"first\"\n\n\
         [[engine]]\nbuiltin = \"random\"\n\n[[engine]]\nbuiltin = \"easy\"\n",
    )
    .unwrap();
    let o = run_in(
        tmp.path(),
        &strings(&[
            "tournament",
            "--config",
            "t.toml",
            "--engine",
            "greedy",
            "--engine",
            "medium",
            "-q",
            "--out",
            "out",
        ]),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(
            "--engine replaces the engines of t.toml: this run plays 2 engines (greedy, \
             medium) instead of its 3 engines (first, random, easy)"
        ) && err.contains("write it as another [[engine]] in the file"),
        "{err}"
    );
    let rows = csv_rows(&tmp.path().join("out"));
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert!(
        rows.iter()
            .all(|r| ["greedy", "medium"].contains(&r["south"].as_str())),
        "{rows:?}"
    );
    let o = run_in(
        tmp.path(),
        &strings(&[
            "tournament",
            "--config",
            "t.toml",
            "--engine",
            "greedy",
            "-q",
            "--out",
            "one",
        ]),
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("this run plays 1 engine (greedy) instead of its 3 engines")
            && err.contains("a tournament needs at least two engines, 1 given"),
        "{err}"
    );
    // Without --engine the file's engines play, and nothing is said of them.
    let o = run_in(
        tmp.path(),
        &strings(&["tournament", "--config", "t.toml", "-q", "--out", "file"]),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(!text(&o).contains("replaces"), "{}", text(&o));
    assert_eq!(csv_rows(&tmp.path().join("file")).len(), 6);
}

/// An engine of a configuration file that is refused is named by the file, its place in
/// the list and its name, built-in or program, whatever is wrong with it.
#[test]
fn an_error_about_a_config_files_engine_names_the_file_and_the_entry() {
    let tmp = tempfile::tempdir().unwrap();
    let first = "[[engine]]\nbuiltin = \"first\"\n\n";
    for (entry, said) in [
        (
            "[[engine]]\nname = \"x\"\nbuiltin = \"nothing\"\n",
            "t.toml, [[engine]] 2 (name = \"x\"): unknown built-in engine \"nothing\"",
        ),
        (
            "[[engine]]\nname = \"mine\"\ncmd = \"./missing.sh\"\n",
            "t.toml, [[engine]] 2 (name = \"mine\"): the program",
        ),
        (
            "[[engine]]\ncmd = \"./missing.sh\"\ndir = \"nowhere\"\n",
            "missing.sh\"): the working directory",
        ),
        (
            "[[engine]]\nbuiltin = \"easy\"\ncmd = \"x\"\n",
            "t.toml, [[engine]] 2 (builtin = \"easy\"): both cmd=\"x\" and builtin=\"easy\"",
        ),
        (
            "[[engine]]\nbuiltin = \"easy\"\nbogus = 3\n",
            "t.toml, [[engine]] 2 (builtin = \"easy\"): unknown field `bogus`",
        ),
        (
            "[[engine]]\nbuiltin = \"easy\"\nprotocol = \"wat\"\n",
            "t.toml, [[engine]] 2 (builtin = \"easy\"): unknown variant `wat`",
        ),
        (
            "[[engine]]\nbuiltin = \"easy\"\nname = \"first\"\n\n[[engine]]\nbuiltin = \
             \"random\"\nname = \"first\"\n",
            "t.toml, [[engine]] 3 (name = \"first\"): two engines are named \"first\"",
        ),
    ] {
        std::fs::write(tmp.path().join("t.toml"), format!("{first}{entry}")).unwrap();
        let o = run_in(
            tmp.path(),
            &strings(&["tournament", "--config", "t.toml", "-q", "--out", "out"]),
        );
        assert_eq!(o.status.code(), Some(2), "{entry}: {}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(said), "{entry}: {err}");
        assert!(!err.contains("engine spec"), "{entry}: {err}");
    }
}

/// A results folder moved with the engines beside it (a project folder moved whole): the
/// resume names the engine not found and asks for its new place in tournament.toml; once
/// written there, the resume runs, says what moved, and another program is still refused.
#[test]
fn a_results_folder_moved_with_its_engines_resumes_once_told_where_they_are() {
    let tmp = tempfile::tempdir().unwrap();
    let (old, new) = (tmp.path().join("a"), tmp.path().join("b"));
    std::fs::create_dir(&old).unwrap();
    // The script beside the file runs the fake engine, given as its argument so that the
    // sandbox keeps it in view wherever the build is.
    let script = old.join("eng.sh");
    std::fs::write(&script, "#!/bin/sh\nexec \"$1\" good moved\n").unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::write(
        old.join("t.toml"),
        format!(
            "games = 2\nmove_time = \"200ms\"\n[rules]\npits = 3\nseeds = 2\n\n[[engine]]\n\
             name = \"scripted\"\ncmd = \"./eng.sh\"\nargs = [{:?}]\n\n[[engine]]\n\
             builtin = \"first\"\n",
            fake_engine().display().to_string()
        ),
    )
    .unwrap();
    let o = run_in(
        &old,
        &strings(&["tournament", "--config", "t.toml", "-q", "--out", "res"]),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    std::fs::rename(&old, &new).unwrap();
    let resume = strings(&["tournament", "--resume", "res", "-q"]);
    let o = run_in(&new, &resume);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(
            "res/tournament.toml, [[engine]] 1 (name = \"scripted\"): the working directory"
        ) && err.contains("write where it is now as cmd and dir")
            && err.contains("then resume again"),
        "{err}"
    );
    // As the error says: the new place in tournament.toml, and the same command again.
    let saved = new.join("res/tournament.toml");
    let toml = std::fs::read_to_string(&saved).unwrap();
    let moved = toml.replace(&old.display().to_string(), &new.display().to_string());
    assert_ne!(toml, moved);
    std::fs::write(&saved, &moved).unwrap();
    let o = run_in(&new, &resume);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    for (key, now, then) in [
        ("cmd", new.join("eng.sh"), old.join("eng.sh")),
        ("dir", new.clone(), old.clone()),
    ] {
        assert!(
            err.contains(&format!(
                "engine 1 (scripted): {key} is {} now; the run began with {}",
                now.display(),
                then.display()
            )),
            "{err}"
        );
    }
    assert_eq!(csv_rows(&new.join("res")).len(), 2);
    // Another program in its place is another engine: refused, as any changed setting.
    let cmd = format!("cmd = {:?}", new.join("eng.sh").display().to_string());
    assert!(moved.contains(&cmd), "{moved}");
    std::fs::write(&saved, moved.replace(&cmd, "cmd = \"/bin/true\"")).unwrap();
    let o = run_in(&new, &resume);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("engine 1, cmd: it says \"/bin/true\""),
        "{}",
        text(&o)
    );
}

/// The command a used `--out` folder suggests runs as written, whichever command was given
/// and whichever kind of run the folder holds (a match suggested to an SPRT is a `kalaha
/// match --resume`, not an `sprt --resume` that is refused), also for a folder whose name
/// needs quoting.
#[test]
fn every_kind_of_used_folder_suggests_the_command_that_continues_it() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_kalaha"), bin.join("kalaha")).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let small = ["--pits", "3", "--seeds", "2", "-q"];
    let new_run = |kind: &str, out: &str| {
        let mut args = strings(&[kind, "--engine", "first", "--engine", "random"]);
        args.extend(strings(&small));
        args.extend(strings(match kind {
            "sprt" => &["--elo0", "0", "--elo1", "50", "--max-games", "4"][..],
            _ => &["--games", "2"][..],
        }));
        args.extend(strings(&["--out", out]));
        run_in(tmp.path(), &args)
    };
    for (kind, out) in [
        ("tournament", "r/a tournament"),
        ("match", "r/a match"),
        ("sprt", "r/an sprt"),
    ] {
        let o = new_run(kind, out);
        assert!(matches!(o.status.code(), Some(0 | 4)), "{}", text(&o));
        for other in ["tournament", "match", "sprt"] {
            let o = new_run(other, out);
            assert_eq!(o.status.code(), Some(2), "{other} on {out}: {}", text(&o));
            let err = String::from_utf8_lossy(&o.stderr);
            let suggested = err
                .split('`')
                .nth(1)
                .unwrap_or_else(|| panic!("{other} on {out}: no command suggested: {err}"));
            assert!(
                suggested.starts_with(&format!("kalaha {kind} --resume ")),
                "{other} on {out}: {err}"
            );
            let o = std::process::Command::new("sh")
                .arg("-c")
                .arg(suggested)
                .current_dir(tmp.path())
                .env("PATH", &path)
                .output()
                .unwrap();
            // A finished run resumes to its end: 0, or an SPRT's "no decision" (4).
            assert!(
                matches!(o.status.code(), Some(0 | 4)),
                "`{suggested}` (suggested to {other} on {out}): {}",
                text(&o)
            );
            assert!(
                !String::from_utf8_lossy(&o.stderr).contains("error"),
                "`{suggested}`: {}",
                text(&o)
            );
        }
    }
}
