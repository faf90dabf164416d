//! `kalaha solve` and `kalaha engine` from the outside: output format, values, exit codes.

use kalaha::rules::{Position, Rules, Side, Sweep};
use kalaha::solver::Solver;
use std::process::{Command, Output};

/// Runs kalaha with no cache folder: small tables are built in memory and need none, and
/// nothing here may touch the user's cache (tests that keep tables give `--tables`).
fn kalaha(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kalaha"))
        .args(args)
        .env_remove("XDG_CACHE_HOME")
        .env_remove("HOME")
        .output()
        .expect("run kalaha")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

/// The value on the last line, checking that it is the last line.
fn last_value(out: &str) -> i32 {
    let last = out.lines().last().expect("some output");
    let v = last
        .strip_prefix("value ")
        .unwrap_or_else(|| panic!("last line is not `value N`: {last:?}"));
    v.parse().unwrap()
}

/// The principal variation lines `N. SIDE PIT [extra turn] [captures K] [game over]`.
fn pv_moves(out: &str) -> Vec<(Side, i64, String)> {
    out.lines()
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            let n = words.next()?;
            n.strip_suffix('.')?.parse::<u32>().ok()?;
            let side: Side = words.next()?.parse().ok()?;
            let pit: i64 = words.next()?.parse().ok()?;
            Some((side, pit, words.collect::<Vec<_>>().join(" ")))
        })
        .collect()
}

/// Replays the printed line and checks the notes and the final margin against the value.
fn check_output(out: &str, start: &Position) {
    let value = last_value(out);
    let mut pos = *start;
    for (side, pit, note) in pv_moves(out) {
        assert_eq!(side, pos.to_move(), "{out}");
        let (next, effect) = pos.play_traced(pit).unwrap();
        assert_eq!(note.contains("extra turn"), effect.extra_turn, "{out}");
        assert_eq!(note.contains("captures"), effect.captured > 0, "{out}");
        assert_eq!(note.contains("game over"), effect.game_over, "{out}");
        pos = next;
    }
    assert!(pos.is_over(), "the line does not end the game:\n{out}");
    assert_eq!(pos.store_margin(start.to_move()), value, "{out}");
    assert!(out.contains(&format!(
        "final south {} north {}",
        pos.store(Side::South),
        pos.store(Side::North)
    )));
}

#[test]
fn solve_prints_a_replayable_line_and_the_value_last_for_every_variant() {
    for sweep in ["owner", "empty_side", "none"] {
        for empty_capture in [false, true] {
            let mut args = vec!["solve", "--pits", "3", "--seeds", "3", "--sweep", sweep];
            if empty_capture {
                args.push("--empty-capture");
            }
            let o = kalaha(&args);
            assert!(o.status.success(), "{o:?}");
            let out = stdout(&o);
            let rules = Rules::new(3, 3, empty_capture, sweep.parse::<Sweep>().unwrap()).unwrap();
            let start = Position::start(rules);
            check_output(&out, &start);
            assert_eq!(last_value(&out), Solver::new(4).solve(&start).value);
        }
    }
}

#[test]
fn solve_takes_a_position_and_answers_for_the_side_to_move() {
    let rules = Rules::new(4, 3, false, Sweep::Owner).unwrap();
    let text = "0,4,4,1:2/3,0,5,2:3/n";
    let pos = Position::from_compact(text, rules).unwrap();
    let o = kalaha(&["solve", "--pits", "4", "--seeds", "3", "--position", text]);
    assert!(o.status.success(), "{o:?}");
    let out = stdout(&o);
    check_output(&out, &pos);
    assert_eq!(last_value(&out), Solver::new(4).solve(&pos).value);
    assert!(out.contains(&format!("position {text}")));
}

#[test]
fn without_a_guess_solve_starts_from_a_heuristic_one_and_says_so() {
    let start = Position::start(Rules::new(4, 3, false, Sweep::Owner).unwrap());
    let o = kalaha(&["solve", "--pits", "4", "--seeds", "3", "--table-mb", "0"]);
    assert!(o.status.success(), "{o:?}");
    let out = stdout(&o);
    let line = out
        .lines()
        .find(|l| l.starts_with("first guess "))
        .unwrap_or_else(|| panic!("no first guess:\n{out}"));
    let (guess, how) = line["first guess ".len()..].split_once(' ').unwrap();
    let guess: i32 = guess.parse().unwrap();
    assert!(how.starts_with("(heuristic search to depth "), "{line}");
    // 24 seeds: the guess is even, like every final margin.
    assert_eq!(guess % 2, 0, "{line}");
    check_output(&out, &start);
    assert_eq!(last_value(&out), Solver::new(4).solve(&start).value);
    // A guess given is used as it is.
    let o = kalaha(&[
        "solve",
        "--pits",
        "4",
        "--seeds",
        "3",
        "--table-mb",
        "0",
        "--guess",
        "-20",
    ]);
    assert!(o.status.success(), "{o:?}");
    let out = stdout(&o);
    assert!(!out.contains("first guess"), "{out}");
    assert_eq!(last_value(&out), Solver::new(4).solve(&start).value);
}

#[test]
fn a_finished_position_has_an_empty_line_and_its_store_margin() {
    let o = kalaha(&["solve", "--seeds", "2", "--position", "0,0,0:7/1,2,0:2/s"]);
    assert!(o.status.success(), "{o:?}");
    assert_eq!(last_value(&stdout(&o)), 2);
}

#[test]
fn bad_input_is_exit_2_with_the_reason() {
    let o = kalaha(&["solve", "--position", "4,4,4/4,4,4/s"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("SOUTH_PITS:STORE"));
    let o = kalaha(&["solve", "--position", "1,1:0/1,1,1:0/s"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("different lengths"));
    let o = kalaha(&["solve", "--pits", "3", "--hash-mb", "0"]);
    assert_eq!(o.status.code(), Some(2));
    let o = kalaha(&["solve", "--help"]);
    assert!(o.status.success());
    assert!(stdout(&o).contains("Example:"));
}

#[test]
fn an_unknown_engine_is_exit_2_with_the_names() {
    let o = kalaha(&["engine", "deep-blue"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    for name in kalaha::engines::BUILTIN_NAMES {
        assert!(err.contains(name), "{err}");
    }
    let o = kalaha(&["engine", "hard", "--speed", "3"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--depth, --hash_mb"));
}

#[test]
fn a_built_in_engine_speaks_the_protocol_and_takes_flag_options() {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_kalaha"))
        .args(["engine", "hard", "--depth", "3"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let go = r#"{"type":"go","position":{"to_move":"south","south":{"pits":[4,4,4,4,4,4],"store":0},"north":{"pits":[4,4,4,4,4,4],"store":0}},"legal":[1,2,3,4,5,6],"moves":[],"time":{"move_ms":200}}"#;
    let input = format!(
        "{}\n{}\n{}\n{go}\n{}\n",
        r#"{"type":"hello","protocol":1}"#,
        r#"{"type":"new_game","game":"g1","rules":{"pits":6,"seeds":4,"empty_capture":false,"sweep":"owner"},"side":"south"}"#,
        r#"{"type":"ping","id":1}"#,
        r#"{"type":"quit"}"#
    );
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let lines: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["type"], "hello");
    assert_eq!(lines[0]["name"], "hard");
    assert_eq!(lines[1]["type"], "pong");
    let infos: Vec<_> = lines.iter().filter(|l| l["type"] == "info").collect();
    // The depth option given on the command line limits the search.
    assert_eq!(infos.last().unwrap()["depth"], 3);
    let mv = lines.last().unwrap();
    assert_eq!(mv["type"], "move");
    assert!((1..=6).contains(&mv["pit"].as_i64().unwrap()));
}

#[test]
fn tables_are_built_listed_checked_rebuilt_and_cleared() {
    let dir = tempfile::tempdir().unwrap();
    // A folder not made yet is said to be so, with how it gets made.
    let missing = dir.path().join("not-yet");
    let o = kalaha(&["tables", "info", "--tables", missing.to_str().unwrap()]);
    assert!(o.status.success(), "{o:?}");
    assert!(
        stdout(&o).contains("not made yet: `kalaha tables build --tables "),
        "{}",
        stdout(&o)
    );
    assert!(!missing.exists(), "info must not make the folder");
    let d = dir.path().to_str().unwrap();
    let build = [
        "tables",
        "build",
        "--pits",
        "3",
        "--empty-capture",
        "--table-seeds",
        "12",
        "--tables",
        d,
    ];
    let o = kalaha(&build);
    assert!(o.status.success(), "{o:?}");
    assert!(stdout(&o).contains("k=12"), "{}", stdout(&o));
    let name = "endgame-p3-owner-ec-k12.tbl";
    let path = dir.path().join(name);
    assert!(path.exists());

    let o = kalaha(&["tables", "info", "--verify", "--tables", d]);
    assert!(o.status.success(), "{o:?}");
    let out = stdout(&o);
    assert!(out.contains(name) && out.contains("ok"), "{out}");

    // A damaged table is reported, and the next build replaces it.
    let mut raw = std::fs::read(&path).unwrap();
    let n = raw.len();
    raw[n - 3] ^= 0x40;
    std::fs::write(&path, &raw).unwrap();
    let o = kalaha(&["tables", "info", "--verify", "--tables", d]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("DAMAGED"), "{}", stdout(&o));
    let o = kalaha(&build);
    assert!(o.status.success(), "{o:?}");
    let o = kalaha(&["tables", "info", "--verify", "--tables", d]);
    assert!(o.status.success(), "{}", stdout(&o));

    let o = kalaha(&["tables", "clear", "--tables", d]);
    assert!(o.status.success(), "{o:?}");
    assert!(stdout(&o).contains("deleted 1 file ("), "{}", stdout(&o));
    assert!(!path.exists());
}

#[test]
fn solve_uses_tables_and_threads_and_help_says_what_tables_cost() {
    // A small board: its table is built in memory, never written.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let o = kalaha(&[
        "solve",
        "--pits",
        "4",
        "--seeds",
        "4",
        "--threads",
        "2",
        "--tables",
        d,
    ]);
    assert!(o.status.success(), "{o:?}");
    let out = stdout(&o);
    let rules = Rules::new(4, 4, false, Sweep::Owner).unwrap();
    let start = Position::start(rules);
    check_output(&out, &start);
    assert_eq!(last_value(&out), Solver::new(4).solve(&start).value);
    assert!(out.contains("endgame table k=16"), "{out}");
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());

    let o = kalaha(&["solve", "--pits", "4", "--seeds", "4", "--table-mb", "0"]);
    assert!(stdout(&o).contains("endgame table none"));
    assert_eq!(last_value(&stdout(&o)), last_value(&out));

    let o = kalaha(&["solve", "--help"]);
    let help = stdout(&o);
    assert!(help.contains("k=23: 796 MiB"), "{help}");
    let o = kalaha(&["solve", "--pits", "3", "--threads", "0"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn tables_book_writes_a_book_that_reads_back() {
    let o = kalaha(&[
        "tables", "book", "--pits", "3", "--seeds", "3", "--moves", "2",
    ]);
    assert!(o.status.success(), "{o:?}");
    let book = kalaha::solver::Book::parse(&stdout(&o)).unwrap();
    let rules = Rules::new(3, 3, false, Sweep::Owner).unwrap();
    assert_eq!(book.rules(), &rules);
    let start = Position::start(rules);
    assert_eq!(
        book.lookup(&start).unwrap().1,
        Solver::new(4).solve(&start).value
    );
}

/// Off a terminal (a log, a CI job) a table build says what it builds and how far it is,
/// in plain lines, so minutes of building do not look like a hang.
#[test]
fn a_table_build_off_a_terminal_prints_plain_progress() {
    let dir = tempfile::tempdir().unwrap();
    let tables = dir.path().to_str().unwrap();
    let o = kalaha(&[
        "tables",
        "build",
        "--pits",
        "4",
        "--table-seeds",
        "14",
        "--tables",
        tables,
    ]);
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.starts_with("building the endgame table k=14 for pits=4"),
        "{err}"
    );
    assert!(
        err.contains("% built\n") && err.contains("built in "),
        "{err}"
    );
    assert!(!err.contains('\u{1b}'), "no terminal codes: {err:?}");
}

/// The largest --hash-mb the help allows does not crash a small board: its table is sized
/// to the board before any memory is taken.
#[test]
fn the_largest_hash_solves_a_small_board() {
    let o = kalaha(&["solve", "--pits", "3", "--seeds", "3", "--hash-mb", "65536"]);
    assert!(o.status.success(), "{o:?}");
    assert!(stdout(&o).contains("value 2"), "{}", stdout(&o));
}
