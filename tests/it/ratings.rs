//! `kalaha ratings` end to end: reading results folders, merging shards, the written files,
//! and the leaderboard rendered by a real browser.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

#[path = "ratings/browser.rs"]
mod browser;

const HEADER: &str = "game,round,pair,south,north,opening,result,south_score,north_score,plies,termination,loser,detail,duration_ms";

const ENGINES: [&str; 4] = [
    "alpha",
    "<i>beta</i> & \"co\"",
    "=HYPERLINK(\"x\")",
    "delta",
];

/// Writes a small deterministic round-robin (engine i is stronger than engine j > i) as
/// `count` shards: game k goes to shard k mod count (pairs stay together).
fn write_tournament(dir: &Path, shards: usize) -> Vec<PathBuf> {
    let mut files = vec![String::from(HEADER) + "\n"; shards];
    let mut game = 0;
    let mut pair = 0;
    for (i, a) in ENGINES.iter().enumerate() {
        for (j, b) in ENGINES.iter().enumerate().skip(i + 1) {
            for p in 0..6 {
                pair += 1;
                for (south, north) in [(a, b), (b, a)] {
                    game += 1;
                    // The stronger engine (a) wins as south; as north it wins, draws or
                    // loses depending on the pair.
                    let a_south = south == a;
                    let (result, ss, ns) = match (a_south, (p + i + j) % 3) {
                        (true, _) | (false, 0) => {
                            if a_south {
                                ("1-0", 40, 32)
                            } else {
                                ("0-1", 30, 42)
                            }
                        }
                        (false, 1) => ("1/2-1/2", 36, 36),
                        _ => ("1-0", 38, 34),
                    };
                    let (term, loser, detail) = if game == 7 {
                        ("illegal_move", *north, "pit 9, \"<script>\"")
                    } else {
                        ("normal", "", "")
                    };
                    let q = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
                    files[pair % shards].push_str(&format!(
                        "T1-{game},1,{pair},{},{},1 2,{result},{ss},{ns},40,{term},{},{},12\n",
                        q(south),
                        q(north),
                        q(loser),
                        q(detail)
                    ));
                }
            }
        }
    }
    files
        .into_iter()
        .enumerate()
        .map(|(k, text)| {
            let d = dir.join(format!("shard-{k}"));
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("games.csv"), text).unwrap();
            let shard = if shards > 1 {
                format!("shard = \"{}/{shards}\"\n", k + 1)
            } else {
                String::new()
            };
            std::fs::write(
                d.join("tournament.toml"),
                TOURNAMENT_TOML.replace("#shard\n", &shard),
            )
            .unwrap();
            d
        })
        .collect()
}

/// The settings of the tournament [`write_tournament`] writes (`#shard` is replaced by the
/// shard's line): engines with versions from their `hello`, time odds, a private path.
const TOURNAMENT_TOML: &str = r#"id = "T1"
seed = 7
games = 12
tc = "100ms"
#shard
[rules]
pits = 6
seeds = 4

[[engine]]
name = "alpha"
builtin = "hard"
version = "3.1"
author = "Ada"

[[engine]]
name = "delta"
cmd = "/home/private/bots/delta"
tc = "20ms"
"#;

fn kalaha(args: &[&std::ffi::OsStr]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_kalaha"))
        .args(args)
        .output()
        .expect("run kalaha")
}

fn ratings(inputs: &[PathBuf], out: &Path, extra: &[&str]) -> std::process::Output {
    let mut args: Vec<&std::ffi::OsStr> = vec!["ratings".as_ref()];
    args.extend(inputs.iter().map(|p| p.as_os_str()));
    args.push("--out".as_ref());
    args.push(out.as_os_str());
    args.extend(extra.iter().map(std::ffi::OsStr::new));
    kalaha(&args)
}

#[test]
fn merged_shards_equal_one_file_and_duplicates_are_ignored() {
    let tmp = tempfile::tempdir().unwrap();
    let single = write_tournament(&tmp.path().join("single"), 1);
    let shards = write_tournament(&tmp.path().join("sharded"), 4);
    let out1 = tmp.path().join("out1");
    let out4 = tmp.path().join("out4");
    let o = ratings(&single, &out1, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Every shard, plus one of them again: the duplicates must not count.
    let mut inputs = shards.clone();
    inputs.push(shards[1].join("games.csv"));
    let o = ratings(&inputs, &out4, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("72 games counted"), "{stdout}");
    for f in ["standings.csv", "h2h.csv"] {
        let a = std::fs::read_to_string(out1.join(f)).unwrap();
        let b = std::fs::read_to_string(out4.join(f)).unwrap();
        assert_eq!(
            a, b,
            "{f} differs between the single run and the merged shards"
        );
    }
    let standings = std::fs::read_to_string(out1.join("standings.csv")).unwrap();
    let mut reader = csv::Reader::from_reader(standings.as_bytes());
    let header = reader.headers().unwrap().clone();
    assert_eq!(
        &header.iter().take(9).collect::<Vec<_>>(),
        &[
            "rank",
            "engine",
            "games",
            "wins",
            "draws",
            "losses",
            "score",
            "elo",
            "elo_error"
        ]
    );
    let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
    let names: Vec<&str> = rows.iter().map(|r| &r[1]).collect();
    assert_eq!(names[0], "alpha");
    assert!(names.contains(&"'=HYPERLINK(\"x\")"), "{names:?}");
    let elo_sum: f64 = rows.iter().map(|r| r[7].parse::<f64>().unwrap()).sum();
    assert!(elo_sum.abs() < 0.05, "mean-centred: {elo_sum}");
    let illegal = header.iter().position(|h| h == "illegal_moves").unwrap();
    assert_eq!(
        rows.iter()
            .map(|r| r[illegal].parse::<u64>().unwrap())
            .sum::<u64>(),
        1
    );
    let h2h = std::fs::read_to_string(out1.join("h2h.csv")).unwrap();
    assert_eq!(h2h.lines().count(), 1 + 12);
    assert!(h2h.lines().next().unwrap().starts_with(
        "engine,opponent,games,wins,draws,losses,score,elo,elo_error,los,pairs,ll,ld,wl_dd,wd,ww"
    ));
    let md = std::fs::read_to_string(out1.join("leaderboard.md")).unwrap();
    assert!(
        md.contains("- Board: 6 pits a side, 4 seeds a pit") && md.contains("&lt;i&gt;beta"),
        "{md}"
    );
    // The merged shards are one run: its id is the title, its shards are listed once.
    let md = std::fs::read_to_string(out4.join("leaderboard.md")).unwrap();
    assert!(md.starts_with("# Tournament T1\n"), "{md}");
    assert!(md.contains("- Shards read: 1/4, 2/4, 3/4, 4/4\n"), "{md}");
    assert_eq!(md.matches("- Tournament id: T1").count(), 1, "{md}");
    // Versions and authors from the engines, time odds, no local path.
    assert!(
        md.contains("| alpha | 3.1 | Ada | built-in hard | 100ms per move |"),
        "{md}"
    );
    assert!(
        md.contains("| delta |  |  | delta | 20ms per move |"),
        "{md}"
    );
    assert!(
        md.contains("- Time control: each engine its own (time odds)"),
        "{md}"
    );
    assert!(!md.contains("/home/private"), "{md}");
}

#[test]
fn without_out_the_reports_go_into_the_single_input_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let dirs = write_tournament(&tmp.path().join("t"), 2);
    let cwd = tmp.path().join("cwd");
    std::fs::create_dir_all(&cwd).unwrap();
    let run = |inputs: &[&Path]| {
        Command::new(env!("CARGO_BIN_EXE_kalaha"))
            .arg("ratings")
            .args(inputs)
            .current_dir(&cwd)
            .output()
            .expect("run kalaha")
    };
    let o = run(&[&dirs[0]]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for f in [
        "standings.csv",
        "h2h.csv",
        "leaderboard.md",
        "leaderboard.html",
    ] {
        assert!(dirs[0].join(f).is_file(), "{f} not in the input folder");
        assert!(
            !cwd.join(f).exists(),
            "{f} written into the current directory"
        );
    }
    // Several inputs, or a file: --out is required.
    let csv = dirs[1].join("games.csv");
    for inputs in [vec![&dirs[0], &dirs[1]], vec![&csv]] {
        let inputs: Vec<&Path> = inputs.iter().map(|p| p.as_path()).collect();
        let o = run(&inputs);
        assert_eq!(o.status.code(), Some(2), "{inputs:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("--out"), "{err}");
    }
    assert!(!dirs[1].join("standings.csv").exists());
    assert_eq!(std::fs::read_dir(&cwd).unwrap().count(), 0);
}

#[test]
fn anchor_and_bad_input() {
    let tmp = tempfile::tempdir().unwrap();
    let dirs = write_tournament(tmp.path(), 1);
    let out = tmp.path().join("out");
    let o = ratings(&dirs, &out, &["--anchor", "delta=1000"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(out.join("standings.csv")).unwrap();
    let delta = text.lines().find(|l| l.contains(",delta,")).unwrap();
    assert!(delta.contains(",1000.00,0.00,"), "{delta}");
    let o = ratings(&dirs, &out, &["--anchor", "nobody=0"]);
    assert_eq!(o.status.code(), Some(2));
    let o = ratings(&[tmp.path().join("missing")], &out, &[]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn no_games_to_rate_exits_2_naming_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    std::fs::create_dir_all(&run).unwrap();
    let csv = run.join("games.csv");
    for text in [format!("{HEADER}\n"), format!("{HEADER}\nnot,a,game\n")] {
        std::fs::write(&csv, text).unwrap();
        let o = ratings(std::slice::from_ref(&run), &tmp.path().join("out"), &[]);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains(&csv.display().to_string())
                && stderr.contains("kalaha ratings results/"),
            "{stderr}"
        );
        assert!(!tmp.path().join("out").exists(), "no reports are written");
    }
    // With games elsewhere, an empty input is a warning.
    std::fs::write(&csv, format!("{HEADER}\n")).unwrap();
    let dirs = write_tournament(tmp.path(), 1);
    let o = ratings(&[dirs[0].clone(), run], &tmp.path().join("out"), &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("warning: "));
}

fn run_kalaha(args: &[String]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_kalaha"))
        .args(args)
        .output()
        .expect("run kalaha")
}

fn describe(o: &std::process::Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A real tournament of deterministic built-in engines, run once whole and once as four
/// shards in four processes at the same time: the merged standings are the same.
#[test]
fn four_shard_processes_merge_to_the_single_run() {
    let tmp = tempfile::tempdir().unwrap();
    let base = |out: &Path, shard: Option<&str>| {
        let mut a: Vec<String> = [
            "tournament",
            "--engine",
            "builtin=first",
            "--engine",
            "builtin=greedy",
            "--engine",
            "builtin=first",
            "name=first-again",
            "--games",
            "4",
            "--opening-plies",
            "3",
            "--seed",
            "5",
            "--id",
            "shared",
            "--move-time",
            "1s",
            "-j",
            "1",
            "--quiet",
            "--out",
        ]
        .map(String::from)
        .to_vec();
        a.push(out.display().to_string());
        if let Some(s) = shard {
            a.extend(["--shard".to_string(), s.to_string()]);
        }
        a
    };
    let single = tmp.path().join("single");
    let o = run_kalaha(&base(&single, None));
    assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
    let shards: Vec<PathBuf> = (1..=4)
        .map(|k| tmp.path().join(format!("shard-{k}")))
        .collect();
    let children: Vec<std::process::Child> = shards
        .iter()
        .enumerate()
        .map(|(k, dir)| {
            Command::new(env!("CARGO_BIN_EXE_kalaha"))
                .args(base(dir, Some(&format!("{}/4", k + 1))))
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("start a shard")
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
    }
    let one = tmp.path().join("one");
    let merged = tmp.path().join("merged");
    let o = ratings(std::slice::from_ref(&single), &one, &[]);
    assert!(o.status.success(), "{}", describe(&o));
    let o = ratings(&shards, &merged, &[]);
    assert!(o.status.success(), "{}", describe(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("12 games counted"),
        "{}",
        describe(&o)
    );
    for f in ["standings.csv", "h2h.csv"] {
        let a = std::fs::read_to_string(one.join(f)).unwrap();
        let b = std::fs::read_to_string(merged.join(f)).unwrap();
        assert_eq!(a, b, "{f}: the merged shards differ from the single run");
    }
}

fn sprt_args(out: &Path, engines: &[&str], extra: &[&str]) -> Vec<String> {
    let mut a = vec!["sprt".to_string()];
    for e in engines {
        a.push("--engine".into());
        a.extend(e.split(' ').map(String::from));
    }
    a.extend(extra.iter().map(|s| s.to_string()));
    a.extend(["-j", "2", "--quiet", "--out"].map(String::from));
    a.push(out.display().to_string());
    a
}

fn sprt_rows(out: &Path) -> Vec<csv::StringRecord> {
    let mut r = csv::Reader::from_path(out.join("sprt.csv")).unwrap();
    assert_eq!(
        r.headers().unwrap().iter().take(8).collect::<Vec<_>>(),
        ["pairs", "games", "ll", "ld", "wl_dd", "wd", "ww", "llr"]
    );
    r.records().map(|x| x.unwrap()).collect()
}

#[test]
fn sprt_accepts_h1_for_a_much_stronger_engine() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("sprt");
    let o = run_kalaha(&sprt_args(
        &out,
        &["builtin=hard option.depth=3", "builtin=random"],
        &["--elo0", "0", "--elo1", "5", "--move-time", "1s"],
    ));
    assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout
            .trim_end()
            .lines()
            .last()
            .unwrap()
            .starts_with("H1 accepted"),
        "{stdout}"
    );
    let rows = sprt_rows(&out);
    assert!(rows.len() < 400, "{} pairs", rows.len());
    let last: f64 = rows.last().unwrap()[7].parse().unwrap();
    assert!(last >= 2.944);
    // LLR after every pair, pairs numbered 1, 2, 3...
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r[0].parse::<usize>().unwrap(), i + 1);
    }
    // No game after the decision is recorded: the pairs of games.csv with both games are
    // the pairs the verdict counts, and their games its games (a game whose partner was
    // still being played at the decision is not among them).
    let result: toml::Table = std::fs::read_to_string(out.join("sprt-result.toml"))
        .unwrap()
        .parse()
        .unwrap();
    let mut games = csv::Reader::from_path(out.join("games.csv")).unwrap();
    let pair = games
        .headers()
        .unwrap()
        .iter()
        .position(|h| h == "pair")
        .unwrap();
    let mut by_pair = std::collections::HashMap::<String, i64>::new();
    for r in games.records() {
        *by_pair.entry(r.unwrap()[pair].to_string()).or_default() += 1;
    }
    let whole = by_pair.values().filter(|&&n| n == 2).count() as i64;
    assert!(by_pair.values().all(|&n| n <= 2), "{by_pair:?}");
    assert_eq!(result["pairs"].as_integer(), Some(rows.len() as i64));
    assert_eq!(result["pairs"].as_integer(), Some(whole));
    assert_eq!(result["games"].as_integer(), Some(2 * whole));
    // Every row of sprt.csv: two games a pair.
    for r in &rows {
        assert_eq!(
            r[1].parse::<u64>().unwrap(),
            2 * r[0].parse::<u64>().unwrap()
        );
    }
}

#[test]
fn sprt_of_an_engine_against_itself_does_not_accept_h1_and_resumes() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("sprt");
    let o = run_kalaha(&sprt_args(
        &out,
        &["builtin=greedy name=new", "builtin=greedy name=old"],
        &[
            "--max-games",
            "30",
            "--model",
            "logistic",
            "--elo0",
            "0",
            "--elo1",
            "10",
        ],
    ));
    let code = o.status.code();
    assert!(code == Some(3) || code == Some(4), "{}", describe(&o));
    let rows = sprt_rows(&out);
    if code == Some(4) {
        assert_eq!(rows.len(), 15);
    }
    // Resuming a finished test plays nothing more and gives the same verdict.
    let o = run_kalaha(&[
        "sprt".into(),
        "--resume".into(),
        out.display().to_string(),
        "--quiet".into(),
    ]);
    assert_eq!(o.status.code(), code, "{}", describe(&o));
    assert_eq!(sprt_rows(&out).len(), rows.len());
    // Bad parameters are input errors.
    let o = run_kalaha(&sprt_args(
        &tmp.path().join("bad"),
        &["builtin=greedy", "builtin=first"],
        &["--elo0", "5", "--elo1", "0"],
    ));
    assert_eq!(o.status.code(), Some(2), "{}", describe(&o));
}

/// A pool of 600 engines with known strengths, 20 games each against random opponents,
/// through `kalaha ratings`: every engine is rated, the ratings are centred, every interval
/// is finite, and the order of the ratings follows the true strengths.
#[test]
fn a_large_sparse_pool_is_rated_in_the_order_of_the_true_strengths() {
    use rand::{RngExt, SeedableRng};
    let n = 600;
    let mut rng = rand::rngs::ChaCha8Rng::seed_from_u64(11);
    // Strength of engine k: 2 Elo per index, so e599 is the strongest.
    let strength = |k: usize| 2.0 * k as f64;
    let mut csv = String::from(HEADER) + "\n";
    let mut order: Vec<usize> = (0..n).collect();
    let (mut game, mut pair) = (0, 0);
    for _ in 0..10 {
        for i in (1..n).rev() {
            order.swap(i, rng.random_range(0..=i));
        }
        for m in order.chunks_exact(2) {
            pair += 1;
            for (s, t) in [(m[0], m[1]), (m[1], m[0])] {
                game += 1;
                let p = 1.0 / (1.0 + 10f64.powf((strength(t) - strength(s)) / 400.0));
                let u: f64 = rng.random_range(0.0..1.0);
                let (result, ss, ns) = if u < 0.2 {
                    ("1/2-1/2", 24, 24)
                } else if u < 0.2 + 0.8 * p {
                    ("1-0", 27, 21)
                } else {
                    ("0-1", 21, 27)
                };
                csv.push_str(&format!(
                    "P-{game},1,{pair},e{s},e{t},1 2,{result},{ss},{ns},40,normal,,,5\n"
                ));
            }
        }
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("pool");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("games.csv"), csv).unwrap();
    let out = tmp.path().join("out");
    let o = ratings(std::slice::from_ref(&dir), &out, &[]);
    assert!(o.status.success(), "{}", describe(&o));
    let mut reader = csv::Reader::from_path(out.join("standings.csv")).unwrap();
    let rows: Vec<(usize, f64, f64)> = reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            (
                r[1].trim_start_matches('e').parse().unwrap(),
                r[7].parse().unwrap(),
                r[8].parse().unwrap(),
            )
        })
        .collect();
    assert_eq!(rows.len(), n);
    let sum: f64 = rows.iter().map(|r| r.1).sum();
    assert!(sum.abs() < 0.01 * n as f64, "not centred: {sum}");
    for &(k, elo, err) in &rows {
        assert!(
            elo.is_finite() && err.is_finite() && err > 0.0,
            "e{k}: {elo} ± {err}"
        );
    }
    // Spearman's rank correlation between the standings' order and the true order.
    let d2: f64 = rows
        .iter()
        .enumerate()
        .map(|(rank, &(k, _, _))| {
            let true_rank = (n - 1 - k) as f64;
            (rank as f64 - true_rank).powi(2)
        })
        .sum();
    let nf = n as f64;
    let rho = 1.0 - 6.0 * d2 / (nf * (nf * nf - 1.0));
    assert!(rho > 0.8, "rank correlation with the true strengths: {rho}");
}

/// A two-engine match ends with what fastchess users read first: the Elo difference with
/// its interval, LOS, the draw ratio and the pentanomial counts, for the first engine given.
#[test]
fn a_match_ends_with_the_elo_difference_los_and_pentanomial_counts() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("m");
    let o = run_kalaha(&[
        "match".into(),
        "greedy".into(),
        "first".into(),
        "--games".into(),
        "8".into(),
        "--move-time".into(),
        "1s".into(),
        "--seed".into(),
        "3".into(),
        "--out".into(),
        out.display().to_string(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    let at = stdout
        .find("Results of greedy vs first: 8 games, 4 game pairs\n")
        .unwrap_or_else(|| panic!("no match summary:\n{}", describe(&o)));
    let summary: Vec<&str> = stdout[at..].lines().take(5).collect();
    assert!(summary[1].starts_with("Elo difference: "), "{stdout}");
    // An interval, or (a clean sweep) the reason there is none; never a dangling label.
    assert!(
        summary[1].contains(" (95%), nElo: ")
            || summary[1].contains(" (no interval: no spread in the results: "),
        "{stdout}"
    );
    assert!(
        summary[2].starts_with("LOS: ") && summary[2].contains("draw ratio: "),
        "{stdout}"
    );
    assert!(summary[3].starts_with("Games: W "), "{stdout}");
    assert!(
        summary[4].starts_with("Pentanomial [0, ½, 1, 1½, 2 points a pair]: ["),
        "{stdout}"
    );
    // The counts are those of h2h.csv.
    let h2h = std::fs::read_to_string(out.join("h2h.csv")).unwrap();
    let row = h2h
        .lines()
        .find(|l| l.starts_with("greedy,first,"))
        .unwrap();
    let cells: Vec<&str> = row.split(',').collect();
    let penta = format!("[{}]", cells[11..16].join(", "));
    assert!(summary[4].ends_with(&penta), "{} vs {row}", summary[4]);
}

/// Runs under different rules pooled into one rating are rated, with a warning that
/// names the rules of each.
#[test]
fn pooling_runs_of_different_boards_warns() {
    let dir = tempfile::tempdir().unwrap();
    let mut folders = Vec::new();
    for pits in ["3", "4"] {
        let out = dir.path().join(format!("p{pits}"));
        let args: Vec<String> = [
            "match", "--engine", "first", "--engine", "random", "--pits", pits, "--seeds", "2",
            "--games", "2", "--quiet", "--out",
        ]
        .map(String::from)
        .into_iter()
        .chain([out.display().to_string()])
        .collect();
        let o = run_kalaha(&args);
        assert!(o.status.success(), "{}", describe(&o));
        folders.push(out);
    }
    let o = ratings(&folders, &dir.path().join("board"), &[]);
    assert!(o.status.success(), "{}", describe(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("under 2 different rules"), "{err}");
    // Each rules name every run played under them.
    for f in &folders {
        assert!(
            err.contains(&f.join("games.csv").display().to_string()),
            "{err}"
        );
    }
    assert!(
        err.contains("3 pits a side") && err.contains("4 pits a side"),
        "{err}"
    );
    // The published leaderboards carry the warning too.
    for page in ["leaderboard.md", "leaderboard.html"] {
        let text = std::fs::read_to_string(dir.path().join("board").join(page)).unwrap();
        assert!(text.contains("Warning:"), "{page}: {text}");
        assert!(text.contains("under 2 different rules"), "{page}: {text}");
    }
    // One board: no warning, also when a hand-written tournament.toml leaves out the
    // rules that have their default values.
    let toml_path = folders[0].join("tournament.toml");
    let full = std::fs::read_to_string(&toml_path).unwrap();
    assert!(full.contains("empty_capture = false"), "{full}");
    let again = dir.path().join("again");
    std::fs::create_dir(&again).unwrap();
    std::fs::copy(folders[0].join("games.csv"), again.join("games.csv")).unwrap();
    let partial: String = full
        .lines()
        .filter(|l| !l.starts_with("empty_capture") && !l.starts_with("sweep"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(again.join("tournament.toml"), partial).unwrap();
    let o = ratings(&[folders[0].clone(), again], &dir.path().join("same"), &[]);
    assert!(o.status.success(), "{}", describe(&o));
    assert!(
        !String::from_utf8_lossy(&o.stderr).contains("different rules"),
        "{}",
        describe(&o)
    );
    let o = ratings(&folders[..1], &dir.path().join("one"), &[]);
    assert!(!String::from_utf8_lossy(&o.stderr).contains("different rules"));
    let md = std::fs::read_to_string(dir.path().join("one").join("leaderboard.md")).unwrap();
    assert!(!md.contains("Warning:"), "{md}");

    // Pooled reports are refused in the folder of one of the runs (its own reports would
    // no longer match its games), before anything is written there...
    let before = std::fs::read_to_string(folders[1].join("standings.csv")).unwrap();
    let o = ratings(&folders, &folders[1], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", describe(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("results folder of one of the runs rated"),
        "{err}"
    );
    let after = std::fs::read_to_string(folders[1].join("standings.csv")).unwrap();
    assert_eq!(before, after);
    // ...nor in the folder of a run not rated, even one whose games.csv is gone (a resume
    // rebuilds it from games.jsonl)...
    let other = dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    std::fs::copy(folders[1].join("games.jsonl"), other.join("games.jsonl")).unwrap();
    let o = ratings(&folders[..1], &other, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", describe(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("results folder of another run"), "{err}");
    assert!(!other.join("standings.csv").exists());
    // ...nor into a file.
    let o = ratings(&folders[..1], &folders[1].join("games.csv"), &[]);
    assert_eq!(o.status.code(), Some(2), "{}", describe(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("is a file, not a folder"));
    // ...while a run's own reports may be rewritten there, given as its folder (even
    // twice) or its file.
    let o = ratings(&folders[1..], &folders[1], &[]);
    assert!(o.status.success(), "{}", describe(&o));
    let twice = [folders[1].clone(), folders[1].join("games.csv")];
    let o = ratings(&twice, &folders[1], &[]);
    assert!(o.status.success(), "{}", describe(&o));
    let o = ratings(&[folders[1].join("games.csv")], &folders[1], &[]);
    assert!(o.status.success(), "{}", describe(&o));
}

/// The folder that holds the runs and a run's games.jsonl are each answered with what to
/// give instead.
#[test]
fn inputs_that_are_not_results_say_what_to_give() {
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("results");
    for name in ["2026-a", "2026-b"] {
        let args: Vec<String> = [
            "match", "--engine", "first", "--engine", "random", "--pits", "3", "--seeds", "2",
            "--games", "2", "--quiet", "--out",
        ]
        .map(String::from)
        .into_iter()
        .chain([runs.join(name).display().to_string()])
        .collect();
        let o = run_kalaha(&args);
        assert!(o.status.success(), "{}", describe(&o));
    }
    let error = |args: &[&str]| {
        let o = run_kalaha(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(o.status.code(), Some(2), "{}", describe(&o));
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let r = runs.display().to_string();
    let newest = runs.join("2026-b").display().to_string();
    let err = error(&["ratings", &r]);
    assert!(
        err.contains(&format!("but 2 folders in it do, e.g. {newest}")),
        "{err}"
    );
    let suggested = format!("kalaha ratings {r}/*/games.csv --out ");
    assert!(err.contains(&suggested), "{err}");
    // The suggestion works as printed (the shell expands the pattern to the runs only).
    std::fs::create_dir(runs.join("notes")).unwrap();
    let command = err.split('`').nth(1).unwrap().to_string();
    let o = std::process::Command::new("bash")
        .args([
            "-c",
            &command.replacen("kalaha", env!("CARGO_BIN_EXE_kalaha"), 1),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{command}: {}", describe(&o));
    let err = error(&["show", &r, "1"]);
    assert!(err.contains("but 2 folders in it do"), "{err}");
    let a = runs.join("2026-a");
    let jsonl = a.join("games.jsonl").display().to_string();
    let err = error(&["ratings", &jsonl]);
    assert!(
        err.contains("is the record of the games")
            && err.contains(&format!("`kalaha ratings {}`", a.display())),
        "{err}"
    );
    let err = error(&["ratings", &runs.join("nope").display().to_string()]);
    assert!(err.contains("nope does not exist"), "{err}");
}

/// One name for two different engines in pooled runs is warned of, in the terminal and on
/// the published leaderboard; the same engine in two runs is not.
#[test]
fn one_name_for_two_engines_in_pooled_runs_is_warned_of() {
    let dir = tempfile::tempdir().unwrap();
    let mut folders = Vec::new();
    for (k, mine) in ["first", "greedy", "greedy"].iter().enumerate() {
        let out = dir.path().join(format!("r{k}"));
        let args: Vec<String> = [
            "match",
            "--engine",
            &format!("builtin={mine}"),
            "name=mine",
            "--engine",
            "builtin=random",
            "--pits",
            "3",
            "--seeds",
            "2",
            "--games",
            "2",
            "--quiet",
            "--out",
        ]
        .map(String::from)
        .into_iter()
        .chain([out.display().to_string()])
        .collect();
        let o = run_kalaha(&args);
        assert!(o.status.success(), "{}", describe(&o));
        folders.push(out);
    }
    let o = ratings(&folders, &dir.path().join("all"), &[]);
    assert!(o.status.success(), "{}", describe(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("the name mine stands for 2 different engines"),
        "{err}"
    );
    assert!(
        err.contains("built-in first") && err.contains("built-in greedy"),
        "{err}"
    );
    let md = std::fs::read_to_string(dir.path().join("all").join("leaderboard.md")).unwrap();
    assert!(md.contains("stands for 2 different engines"), "{md}");
    let o = ratings(&folders[1..], &dir.path().join("same"), &[]);
    assert!(o.status.success(), "{}", describe(&o));
    assert!(
        !String::from_utf8_lossy(&o.stderr).contains("different engines"),
        "{}",
        describe(&o)
    );
}

/// A folder of other files is not written into, and a row whose engine name kalaha could
/// not have written is skipped as unreadable, not published.
#[test]
fn ratings_leave_other_files_alone_and_skip_impossible_names() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("games.csv");
    let long = "x".repeat(70_000);
    std::fs::write(
        &csv,
        format!(
            "game,round,pair,south,north,opening,result\n\
             g-1,1,1,a,b,,1-0\ng-2,1,1,b,a,,0-1\ng-3,2,2,{long},a,,1-0\n\
             g-4,2,2,a,\"b\u{1b}[2J\",,1-0\n"
        ),
    )
    .unwrap();
    let victim = dir.path().join("victim");
    std::fs::create_dir(&victim).unwrap();
    std::fs::write(victim.join("standings.csv"), "mine").unwrap();
    std::fs::write(victim.join("notes.txt"), "mine").unwrap();
    let o = ratings(std::slice::from_ref(&csv), &victim, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", describe(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("holds other files than reports"),
        "{}",
        describe(&o)
    );
    assert_eq!(
        std::fs::read_to_string(victim.join("standings.csv")).unwrap(),
        "mine"
    );
    // A folder of reports only is written into again.
    let board = dir.path().join("board");
    for _ in 0..2 {
        let o = ratings(std::slice::from_ref(&csv), &board, &[]);
        assert!(o.status.success(), "{}", describe(&o));
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(out.contains("2 games counted"), "{out}");
        assert!(out.contains("2 unreadable rows skipped"), "{out}");
    }
    let html = std::fs::read_to_string(board.join("leaderboard.html")).unwrap();
    assert!(html.len() < 60_000, "{} bytes", html.len());
}

/// Rows kalaha could not have written (a fault or a resignation that names no loser,
/// plies that are not a count of sowings) are skipped as unreadable, counted with the
/// reasons, and rate nothing.
#[test]
fn ratings_skip_faults_without_a_loser_and_negative_plies() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("games.csv");
    std::fs::write(
        &csv,
        "game,round,pair,south,north,opening,result,south_score,north_score,plies,termination,loser,detail,duration_ms\n\
         g-1,1,1,a,b,,1-0,30,18,40,normal,,,5\n\
         g-2,1,1,b,a,,0-1,18,30,40,normal,,,5\n\
         g-3,2,2,a,b,,0-1,0,0,12,timeout,,,5\n\
         g-4,2,2,b,a,,1-0,0,0,12,resigned,,,5\n\
         g-5,3,3,a,b,,1-0,30,18,-40,normal,,,5\n",
    )
    .unwrap();
    let board = dir.path().join("board");
    let o = ratings(std::slice::from_ref(&csv), &board, &[]);
    assert!(o.status.success(), "{}", describe(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("2 games counted"), "{out}");
    assert!(out.contains("3 unreadable rows skipped"), "{out}");
    let said = describe(&o);
    for reason in [
        "games.csv:4: termination timeout names no loser",
        "games.csv:5: termination resigned names no loser",
        "games.csv:6: plies \"-40\" is not a number of sowings",
    ] {
        assert!(said.contains(reason), "{reason}: {said}");
    }
    // No engine is charged a fault the file does not name.
    let standings = std::fs::read_to_string(board.join("standings.csv")).unwrap();
    let header: Vec<&str> = standings.lines().next().unwrap().split(',').collect();
    for row in standings.lines().skip(1) {
        let cells: Vec<&str> = row.split(',').collect();
        for kind in [
            "timeouts",
            "illegal_moves",
            "protocol_errors",
            "crashes",
            "stalls",
        ] {
            let k = header.iter().position(|c| *c == kind).expect(kind);
            assert_eq!(cells[k], "0", "{kind}: {standings}");
        }
    }
}

/// In a folder with games.jsonl, ratings rate the record: a result edited in games.csv,
/// a row added there and a record outside the tournament's schedule change nothing, and
/// each is warned about, naming the folder and the game.
#[test]
fn ratings_rate_the_record_not_an_edited_games_csv() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let args: Vec<String> = [
        "match", "--engine", "first", "--engine", "random", "--pits", "3", "--seeds", "2",
        "--games", "4", "--quiet", "--out",
    ]
    .map(String::from)
    .into_iter()
    .chain([run.display().to_string()])
    .collect();
    let o = run_kalaha(&args);
    assert!(o.status.success(), "{}", describe(&o));
    let o = ratings(std::slice::from_ref(&run), &dir.path().join("before"), &[]);
    assert!(o.status.success(), "{}", describe(&o));
    let before = std::fs::read_to_string(dir.path().join("before/standings.csv")).unwrap();

    // The first row's result turned around (its stores too, so that the row is one kalaha
    // could have written), and a game added that was never recorded.
    let csv_path = run.join("games.csv");
    let text = std::fs::read_to_string(&csv_path).unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    // The first decisive row (a draw cannot be turned around).
    let k = (1..lines.len())
        .find(|&k| matches!(lines[k].split(',').nth(6), Some("1-0" | "0-1")))
        .expect("a decisive game among the four");
    let mut cells: Vec<String> = lines[k].split(',').map(String::from).collect();
    let first_id = cells[0].clone();
    cells[6] = if cells[6] == "1-0" { "0-1" } else { "1-0" }.into();
    cells.swap(7, 8);
    lines[k] = cells.join(",");
    let tournament = first_id.rsplit_once('-').unwrap().0.to_string();
    let mut added: Vec<String> = lines[k].split(',').map(String::from).collect();
    added[0] = format!("{tournament}-77");
    lines.push(added.join(","));
    std::fs::write(&csv_path, lines.join("\n") + "\n").unwrap();
    // A record of a game number outside the 4-game schedule.
    let jsonl_path = run.join("games.jsonl");
    let jsonl = std::fs::read_to_string(&jsonl_path).unwrap();
    let mut extra: serde_json::Value = serde_json::from_str(jsonl.lines().next().unwrap()).unwrap();
    extra["game"] = serde_json::json!(format!("{tournament}-99"));
    extra["number"] = serde_json::json!(99);
    std::fs::write(&jsonl_path, format!("{jsonl}{extra}\n")).unwrap();

    let o = ratings(std::slice::from_ref(&run), &dir.path().join("after"), &[]);
    assert!(o.status.success(), "{}", describe(&o));
    let after = std::fs::read_to_string(dir.path().join("after/standings.csv")).unwrap();
    assert_eq!(before, after, "the edited games.csv changed the standings");
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("4 games counted"),
        "{}",
        describe(&o)
    );
    let err = String::from_utf8_lossy(&o.stderr);
    let folder = run.display().to_string();
    assert!(
        err.contains(&format!(
            "warning: {folder}: 1 row of games.csv disagrees with the record of its game"
        )) && err.contains(&format!("game {first_id}: result "))
            && err.contains("where the record says"),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "{folder}: 1 row of games.csv has no record in games.jsonl (the first: game \
             {tournament}-77)"
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "{folder}: 1 record of games.jsonl could not have been played by its tournament \
             (the first: game {tournament}-99"
        )),
        "{err}"
    );
}

/// `kalaha ratings results/*` rates the runs that played: a folder that a run left
/// without a game (it stopped at its start, keeping only its logs) is left out with a
/// warning. A FIFO where games.csv belongs is named as such.
#[test]
fn a_run_without_games_among_several_is_left_out_and_a_fifo_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let played_dir = write_tournament(&dir.path().join("played"), 1).remove(0);
    let failed = dir.path().join("failed");
    std::fs::create_dir_all(failed.join("logs")).unwrap();
    let out = dir.path().join("board");
    let o = ratings(&[played_dir.clone(), failed.clone()], &out, &[]);
    assert!(o.status.success(), "{}", describe(&o));
    assert!(describe(&o).contains("holds no games"), "{}", describe(&o));
    assert!(out.join("standings.csv").is_file());
    // Alone, the empty folder is an error that names it.
    let o = ratings(std::slice::from_ref(&failed), &out, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", describe(&o));
    // A FIFO as games.csv.
    let fifo_dir = dir.path().join("fifo");
    std::fs::create_dir(&fifo_dir).unwrap();
    assert!(
        Command::new("mkfifo")
            .arg(fifo_dir.join("games.csv"))
            .status()
            .unwrap()
            .success()
    );
    let o = ratings(std::slice::from_ref(&fifo_dir), &out, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", describe(&o));
    assert!(describe(&o).contains("FIFO"), "{}", describe(&o));
}

/// A small tournament of quick built-in engines into `out`, with `extra` arguments (4
/// games a pairing unless they say otherwise).
fn quick_tournament(out: &Path, extra: &[&str]) {
    let mut args: Vec<String> = [
        "tournament",
        "--engine",
        "first",
        "--engine",
        "greedy",
        "--engine",
        "random",
        "--move-time",
        "20ms",
        "--id",
        "wk",
        "-q",
        "--out",
    ]
    .map(String::from)
    .to_vec();
    args.push(out.display().to_string());
    args.extend(extra.iter().map(|s| s.to_string()));
    if !extra.contains(&"--games") {
        args.extend(["--games".to_string(), "4".to_string()]);
    }
    let o = run_kalaha(&args);
    assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
}

/// The `N games counted` of a ratings summary.
fn games_counted(o: &std::process::Output) -> u64 {
    let out = String::from_utf8_lossy(&o.stdout);
    out.lines()
        .find_map(|l| {
            l.split_once(" games counted")
                .map(|(n, _)| n.parse().unwrap())
        })
        .unwrap_or_else(|| panic!("no count: {}", describe(o)))
}

/// Shards of one tournament id merge quietly only when they played the same settings: a
/// shard re-run with another seed, or one of another game count, is warned of naming the
/// setting and both values, and a game id whose two games differ is a conflict, counted
/// from the folder read first and named with both folders. A folder given twice is only
/// duplicates, and another concurrency is no other tournament.
#[test]
fn shards_that_do_not_match_are_warned_of_and_a_conflicting_id_keeps_the_first() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = |name: &str| tmp.path().join(name);
    quick_tournament(&dir("sh1"), &["--seed", "3", "--shard", "1/2", "-j", "2"]);
    quick_tournament(&dir("sh2"), &["--seed", "3", "--shard", "2/2", "-j", "1"]);
    quick_tournament(&dir("sh3"), &["--seed", "4", "--shard", "2/2", "-j", "2"]);
    quick_tournament(
        &dir("g6"),
        &["--seed", "3", "--shard", "1/2", "--games", "6"],
    );
    let shown = |name: &str| dir(name).display().to_string();
    let stderr = |o: &std::process::Output| String::from_utf8_lossy(&o.stderr).into_owned();

    // Matching shards, and one of them twice: no warning, the repeat is duplicates only.
    let o = ratings(&[dir("sh1"), dir("sh2"), dir("sh2")], &dir("ok"), &[]);
    assert!(o.status.success(), "{}", describe(&o));
    assert!(!stderr(&o).contains("warning"), "{}", describe(&o));
    let alone = ratings(&[dir("sh2")], &dir("alone"), &[]);
    let sh2_games = games_counted(&alone);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains(&format!("{sh2_games} duplicate ids ignored")),
        "{}",
        describe(&o)
    );

    // Shard 2 re-run with another seed: its games under the same ids are other games.
    let o = ratings(&[dir("sh2"), dir("sh3")], &dir("m23"), &[]);
    assert!(o.status.success(), "{}", describe(&o));
    let err = stderr(&o);
    assert!(
        err.contains(&format!(
            "{} and {} both hold games of tournament wk but with other settings (--seed 4 in \
             {}, 3 in {})",
            shown("sh3"),
            shown("sh2"),
            shown("sh3"),
            shown("sh2")
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "{} holds {sh2_games} games under ids that {} gave to other games (the first: game wk-",
            shown("sh3"),
            shown("sh2")
        )) && err.contains(&format!(
            "the games of {}, read first, are counted and those of {} are not",
            shown("sh2"),
            shown("sh3")
        )),
        "{err}"
    );
    // No run of spaces left by a line broken inside a message.
    assert!(!err.contains("  "), "{err}");
    assert_eq!(games_counted(&o), sh2_games, "{}", describe(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains(&format!(
            "0 duplicate ids ignored, {sh2_games} conflicting games ignored"
        )),
        "{}",
        describe(&o)
    );
    let page = std::fs::read_to_string(dir("m23").join("leaderboard.md")).unwrap();
    assert!(
        page.contains("but with other settings (--seed 4 in"),
        "{page}"
    );

    // Disjoint shards of two seeds: no game conflicts, the seeds are still warned of.
    let o = ratings(&[dir("sh1"), dir("sh3")], &dir("m13"), &[]);
    assert!(o.status.success(), "{}", describe(&o));
    let err = stderr(&o);
    assert!(
        err.contains(&format!(
            "(--seed 4 in {}, 3 in {})",
            shown("sh3"),
            shown("sh1")
        )) && !err.contains("gave to other games"),
        "{err}"
    );

    // Another game count under the same id and seed.
    let o = ratings(&[dir("sh1"), dir("g6")], &dir("m16"), &[]);
    assert!(o.status.success(), "{}", describe(&o));
    let err = stderr(&o);
    assert!(
        err.contains(&format!(
            "(--games 6 in {}, 4 in {})",
            shown("g6"),
            shown("sh1")
        )),
        "{err}"
    );
}

/// A results folder that holds games.jsonl but no games.csv is rated from its record, as
/// one that holds both is.
#[test]
fn a_folder_with_a_record_and_no_games_csv_is_rated_from_it() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    quick_tournament(&run, &["--seed", "5"]);
    let o = ratings(std::slice::from_ref(&run), &dir.path().join("both"), &[]);
    assert!(o.status.success(), "{}", describe(&o));
    let counted = games_counted(&o);
    for f in [
        "games.csv",
        "standings.csv",
        "h2h.csv",
        "leaderboard.md",
        "leaderboard.html",
    ] {
        std::fs::remove_file(run.join(f)).unwrap();
    }
    let o = ratings(std::slice::from_ref(&run), &dir.path().join("record"), &[]);
    assert!(o.status.success(), "{}", describe(&o));
    assert_eq!(games_counted(&o), counted);
    for f in ["standings.csv", "h2h.csv"] {
        assert_eq!(
            std::fs::read_to_string(dir.path().join("both").join(f)).unwrap(),
            std::fs::read_to_string(dir.path().join("record").join(f)).unwrap(),
            "{f}"
        );
    }
    // Without --out, into the run's own folder.
    let o = kalaha(&["ratings".as_ref(), run.as_os_str()]);
    assert!(o.status.success(), "{}", describe(&o));
    assert!(run.join("standings.csv").is_file());
}

/// A folder a run holds (its lock) takes no reports: refused with exit 2, naming the
/// folder and the run, and nothing written; its games are still rated elsewhere.
#[test]
fn ratings_refuse_to_write_into_a_folder_a_run_holds() {
    let tmp = tempfile::tempdir().unwrap();
    let run = write_tournament(&tmp.path().join("live"), 1).remove(0);
    let held = kalaha::results::FolderLock::acquire(&run).unwrap();
    let o = kalaha(&["ratings".as_ref(), run.as_os_str()]);
    assert_eq!(o.status.code(), Some(2), "{}", describe(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!("{} is in use by another run", run.display()))
            && err.contains(&format!("pid {}", std::process::id())),
        "{err}"
    );
    assert!(
        !run.join("standings.csv").exists(),
        "reports written into a held folder"
    );
    // A reports folder held the same way.
    let board = tmp.path().join("board");
    std::fs::create_dir(&board).unwrap();
    let held_board = kalaha::results::FolderLock::acquire(&board).unwrap();
    let o = ratings(std::slice::from_ref(&run), &board, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", describe(&o));
    assert!(!board.join("standings.csv").exists());
    drop(held_board);
    // Elsewhere, the held run's games are rated.
    let o = ratings(std::slice::from_ref(&run), &board, &[]);
    assert!(o.status.success(), "{}", describe(&o));
    drop(held);
}

/// Games that repeat an earlier game move for move are counted as repeats in the summary,
/// not as interrupted or self-play games.
#[test]
fn repeated_games_are_named_as_repeats() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let args: Vec<String> = [
        "tournament",
        "--engine",
        "first",
        "--engine",
        "greedy",
        "--games",
        "6",
        "--opening-plies",
        "0",
        "--move-time",
        "20ms",
        "-q",
        "--out",
    ]
    .map(String::from)
    .into_iter()
    .chain([run.display().to_string()])
    .collect();
    let o = run_kalaha(&args);
    assert!(o.status.success(), "{}", describe(&o));
    // From the start position, deterministic engines play each seating's game again.
    let jsonl = std::fs::read_to_string(run.join("games.jsonl")).unwrap();
    assert_eq!(jsonl.matches("\"repeats\"").count(), 4, "{jsonl}");
    let o = ratings(std::slice::from_ref(&run), &tmp.path().join("board"), &[]);
    assert!(o.status.success(), "{}", describe(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("2 games counted")
            && out.contains("0 interrupted or self-play games ignored")
            && out.contains("4 repeated games ignored"),
        "{out}"
    );
}
