//! The guides and reference pages run as written: every ```sh run block of `docs/*.md`,
//! `docs/reference/*.md` and `docs/cluster/*.md` is run, line by line, against the built
//! `kalaha`, in a temporary folder of its page (so a page's later commands see what its
//! earlier ones wrote). The ```LANG file=NAME blocks of a page (an engine's source, a
//! configuration file) are written to that folder first. A command passes when it exits
//! as its `# exit N` comment says (0 without one); a line ending in `\` goes on on the
//! next.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// A command of a page: its line number and text, and the exit status it should have.
struct Step {
    line: usize,
    command: String,
    exit: i32,
}

/// What a ```text block right after a ```sh run block shows: lines of what its commands
/// print (standard output and error together), at `line` of the page.
struct Excerpt {
    line: usize,
    /// The steps of the run block: `steps[first..end]`.
    first: usize,
    end: usize,
    lines: Vec<String>,
}

/// What a page holds for the test: its files, its commands, in order, and the excerpts of
/// what they print.
#[derive(Default)]
struct Page {
    files: Vec<(String, String)>,
    steps: Vec<Step>,
    excerpts: Vec<Excerpt>,
}

fn parse(text: &str) -> Page {
    let mut page = Page::default();
    let mut lines = text.lines().enumerate();
    // The steps of the last run block, while only blank lines follow it.
    let mut last_run: Option<(usize, usize)> = None;
    while let Some((i, line)) = lines.next() {
        let info = line.trim_start();
        let Some(info) = info.strip_prefix("```") else {
            if !info.is_empty() {
                last_run = None;
            }
            continue;
        };
        let after_run = last_run.take();
        let words: Vec<&str> = info.split_whitespace().collect();
        let file = words.iter().find_map(|w| w.strip_prefix("file="));
        let run = words.len() >= 2 && words[0] == "sh" && words[1] == "run";
        let mut body = Vec::new();
        for (i, l) in lines.by_ref() {
            if l.trim_start().starts_with("```") {
                break;
            }
            body.push((i + 1, l));
        }
        if let Some(name) = file {
            let text: Vec<&str> = body.iter().map(|(_, l)| *l).collect();
            page.files.push((name.to_string(), text.join("\n") + "\n"));
        } else if let (Some((first, end)), ["text"]) = (after_run, &words[..]) {
            page.excerpts.push(Excerpt {
                line: i + 1,
                first,
                end,
                lines: body.iter().map(|(_, l)| l.to_string()).collect(),
            });
        } else if run {
            let first = page.steps.len();
            let mut pending: Option<(usize, String)> = None;
            for (n, l) in body {
                let (start, mut command) = pending.take().unwrap_or((n, String::new()));
                if let Some(rest) = l.strip_suffix('\\') {
                    command.push_str(rest);
                    pending = Some((start, command));
                    continue;
                }
                command.push_str(l);
                let trimmed = command.trim();
                if trimmed.is_empty() || trimmed.starts_with('#') {
                    continue;
                }
                let exit = trimmed
                    .rsplit_once("# exit ")
                    .and_then(|(_, n)| n.trim().parse().ok())
                    .unwrap_or(0);
                page.steps.push(Step {
                    line: start,
                    command: trimmed.to_string(),
                    exit,
                });
            }
            last_run = Some((first, page.steps.len()));
        }
    }
    page
}

/// A line as an excerpt is compared: its words, single-spaced, with every number (digits,
/// with their decimal points) written `#` and a duration (`359ms`, `7s`) a number: what a
/// run prints again in another form is the same line.
fn shape(line: &str) -> String {
    let mut words = Vec::new();
    for word in line.split_whitespace() {
        let chars: Vec<char> = word.chars().collect();
        let mut out = String::new();
        let mut i = 0;
        while i < chars.len() {
            // An id (a tournament's, a game's) is a number too: 8 or more hex digits.
            let hex = chars[i..]
                .iter()
                .take_while(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
                .count();
            if hex >= 8 && chars[i..i + hex].iter().any(char::is_ascii_digit) {
                out.push('#');
                i += hex;
            } else if "+-".contains(chars[i])
                && chars.get(i + 1).is_some_and(char::is_ascii_digit)
                && !out.ends_with(|c: char| c.is_alphanumeric() || c == '#')
            {
                // A number's sign is part of it (an Elo, a margin).
                i += 1;
            } else if chars[i].is_ascii_digit() {
                i += 1;
                while i < chars.len()
                    && (chars[i].is_ascii_digit()
                        || ((chars[i] == '.' || chars[i] == ',')
                            && chars.get(i + 1).is_some_and(char::is_ascii_digit)))
                {
                    i += 1;
                }
                out.push('#');
            } else {
                out.push(chars[i]);
                i += 1;
            }
        }
        // A duration is a number whatever its unit.
        if out.starts_with('#') && out.chars().all(|c| "#msh\u{b5}".contains(c)) {
            out = "#".to_string();
        }
        words.push(out);
    }
    words.join(" ")
}

/// Whether a printed line is the excerpt's line: the same shape, where `...` in the
/// excerpt stands for anything.
fn line_matches(excerpt: &str, printed: &str) -> bool {
    let (excerpt, printed) = (shape(excerpt), shape(printed));
    let pieces: Vec<&str> = excerpt.split("...").map(str::trim).collect();
    if pieces.len() == 1 {
        return excerpt == printed;
    }
    let (first, last) = (pieces[0], pieces[pieces.len() - 1]);
    let Some(mut rest) = printed.strip_prefix(first) else {
        return false;
    };
    for piece in &pieces[1..pieces.len() - 1] {
        match rest.find(piece) {
            Some(at) => rest = &rest[at + piece.len()..],
            None => return false,
        }
    }
    rest.trim_end().ends_with(last)
}

/// The lines of an excerpt that the printed text does not hold (a line of `...` alone
/// stands for lines left out).
fn missing_lines(excerpt: &[String], printed: &str) -> Vec<String> {
    excerpt
        .iter()
        .filter(|l| !l.trim().is_empty() && l.trim() != "...")
        .filter(|l| !printed.lines().any(|p| line_matches(l, p)))
        .cloned()
        .collect()
}

/// The pages: docs/*.md and docs/reference/*.md.
fn pages() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = Vec::new();
    for dir in ["docs", "docs/reference", "docs/cluster"] {
        for e in std::fs::read_dir(root.join(dir)).unwrap().flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "md") {
                pages.push(p);
            }
        }
    }
    pages.sort();
    pages
}

#[test]
fn every_runnable_command_of_the_docs_runs_as_written() {
    // `kalaha` on PATH is the one just built.
    let bin = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_kalaha"), bin.path().join("kalaha")).unwrap();
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (mut ran, mut checked, mut failures) = (0, 0, Vec::new());
    let started = Instant::now();
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let parsed = parse(&text);
        if parsed.steps.is_empty() {
            continue;
        }
        let shown = page.strip_prefix(root).unwrap().display().to_string();
        let work = tempfile::tempdir().unwrap();
        // The repository's example engine and agent, where the pages use them.
        for example in ["engines/python/example.py", "examples/kgp_agent.py"] {
            let to = work.path().join(example);
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(root.join(example), to).unwrap();
        }
        for (name, body) in &parsed.files {
            let file = work.path().join(name);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(&file, body).unwrap();
        }
        let mut printed = Vec::new();
        for step in &parsed.steps {
            // Standard error goes where standard output goes, in the order they are written,
            // as on a terminal.
            let o = Command::new("sh")
                .arg("-c")
                .arg(format!("exec 2>&1\n{}", step.command))
                .current_dir(work.path())
                .env("PATH", &path)
                .env("XDG_CACHE_HOME", work.path().join(".cache"))
                .env_remove("RUST_LOG")
                .output()
                .unwrap();
            ran += 1;
            printed.push(String::from_utf8_lossy(&o.stdout).into_owned());
            if o.status.code() != Some(step.exit) {
                failures.push(format!(
                    "{shown}:{}: `{}` exited with {:?}, not {}\n{}{}",
                    step.line,
                    step.command,
                    o.status.code(),
                    step.exit,
                    String::from_utf8_lossy(&o.stdout),
                    String::from_utf8_lossy(&o.stderr)
                ));
            }
        }
        for excerpt in &parsed.excerpts {
            let text = printed[excerpt.first..excerpt.end].concat();
            checked += 1;
            let missing = missing_lines(&excerpt.lines, &text);
            if !missing.is_empty() {
                failures.push(format!(
                    "{shown}:{}: the excerpt's lines\n{}\nare not in what the commands above \
                     it print:\n{text}",
                    excerpt.line,
                    missing.join("\n")
                ));
            }
        }
    }
    println!(
        "{ran} commands of the docs run in {:.1} s, {checked} excerpts of their output checked",
        started.elapsed().as_secs_f64()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(ran >= 30, "only {ran} runnable commands in the docs");
    assert!(checked >= 15, "only {checked} excerpts of output checked");
}

/// A page's blocks are read as the runner reads them: continued lines, exit statuses and
/// files.
#[test]
fn the_runner_reads_commands_files_and_exit_statuses() {
    let page = parse(
        "text\n```sh run\nkalaha perft \\\n  --depth 2\n# a comment\n\nkalaha sprt x  # exit 3\n```\n\
         ```sh\nnot run\n```\n```python file=e/x.py\nprint(1)\n```\n",
    );
    let steps: Vec<(usize, &str, i32)> = page
        .steps
        .iter()
        .map(|s| (s.line, s.command.as_str(), s.exit))
        .collect();
    assert_eq!(
        steps,
        [
            (3, "kalaha perft   --depth 2", 0),
            (7, "kalaha sprt x  # exit 3", 3)
        ]
    );
    assert_eq!(
        page.files,
        [("e/x.py".to_string(), "print(1)\n".to_string())]
    );
}

/// An excerpt is the ```text block right after a run block; its lines are found in what
/// is printed whatever the numbers and durations, with `...` for what is left out, and a
/// line printed otherwise is missing.
#[test]
fn excerpts_are_matched_by_shape() {
    let page = parse(
        "```sh run\nkalaha a\nkalaha b\n```\n\n```text\nx 1\n```\n```sh run\nkalaha c\n```\nprose\n```text\nnot an excerpt\n```\n",
    );
    assert_eq!(page.excerpts.len(), 1);
    let e = &page.excerpts[0];
    assert_eq!(
        (e.line, e.first, e.end, e.lines.clone()),
        (6, 0, 2, vec!["x 1".to_string()])
    );
    assert_eq!(
        shape("[4/4] done in 359ms | c-engine +169±257  mine -169±257"),
        "[#/#] done in # | c-engine #±# mine #±#"
    );
    assert_eq!(
        shape("llr = 2.9528... in 1m05s and 3 games."),
        "llr = #... in # and # games."
    );
    let printed = "[200/200] done in 3s | hard +528±162  medium +272±133  easy +6±129\n\
                   verdict = \"H1 accepted (LLR 2.95 >= 2.94 after 23 pairs, Elo +1 ± 2)\"\n";
    let excerpt = [
        "[200/200] done in 7s | hard +405±136  medium +259±125  ...",
        "...",
        "verdict = \"H1 accepted (LLR 3.01 >= 2.94 after 7 pairs, ...)\"",
    ]
    .map(String::from);
    assert!(missing_lines(&excerpt, printed).is_empty());
    let changed = ["[200/200] done in 7s | medium +259±125  hard +405±136  ...".to_string()];
    assert_eq!(missing_lines(&changed, printed), changed);
    assert!(!line_matches(
        "H0 accepted (LLR -3.06 <= -2.94)",
        "H0 accepted (LLR -3.06 < -2.94)"
    ));
    assert!(line_matches(
        "1  mine  +191 ± 254  -6.00",
        "1  mine  -191 ± 254  3.00"
    ));
    assert_eq!(shape("b74c77d25261-1 0-1 6x4"), "#-# #-# #x#");
}

/// The words of a command line as a POSIX shell splits them (quotes and backslashes; no
/// expansion).
fn shell_words(line: &str) -> Vec<String> {
    let (mut words, mut word, mut in_word) = (Vec::new(), String::new(), false);
    let mut chars = line.chars();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '\\') => word.extend(chars.next()),
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, '\\') => {
                word.extend(chars.next());
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

/// Every `kalaha ...` command the pages show, with its line and whether it is in a ```sh
/// block (run or not) rather than a `code span` of the prose; those that hold `...` (a
/// command cut short) are left out.
fn shown_commands(text: &str) -> Vec<(usize, String, bool)> {
    let mut found = Vec::new();
    let mut in_sh = false;
    let mut in_fence = false;
    let mut pending = String::new();
    let mut start = 0;
    // The prose's paragraphs, joined, so that a span may go on over a line break.
    let mut paragraph: Option<(usize, String)> = None;
    let spans = |paragraph: &mut Option<(usize, String)>, found: &mut Vec<_>| {
        if let Some((start, text)) = paragraph.take() {
            for (k, span) in text.split('`').enumerate() {
                if k % 2 == 1 && span.starts_with("kalaha ") {
                    found.push((start, span.to_string(), false));
                }
            }
        }
    };
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        if t.starts_with("```") {
            spans(&mut paragraph, &mut found);
            in_sh = !in_fence && (t == "```sh" || t.starts_with("```sh "));
            in_fence = !in_fence;
            continue;
        }
        if in_sh {
            if pending.is_empty() {
                start = i + 1;
            }
            let l = format!("{pending}{t}");
            if let Some(rest) = l.strip_suffix('\\') {
                pending = rest.to_string();
                continue;
            }
            pending.clear();
            // Only the command, up to a comment or the next command of a pipeline.
            let l = l.split(" #").next().unwrap_or(&l);
            let l = l.split(" | ").next().unwrap_or(l).trim();
            if l.starts_with("kalaha ") {
                found.push((start, l.to_string(), true));
            }
        } else if in_fence {
        } else if t.is_empty() {
            spans(&mut paragraph, &mut found);
        } else {
            let p = paragraph.get_or_insert_with(|| (i + 1, String::new()));
            p.1.push(' ');
            p.1.push_str(t);
        }
    }
    spans(&mut paragraph, &mut found);
    found.retain(|(_, c, _)| !c.contains("...") && !c.contains('$'));
    found
}

/// Every command the README and the pages show parses: its subcommand and flags exist
/// and take the values given (the commands of the task table name engines and folders of
/// the reader's, so they are parsed, not run).
#[test]
fn every_command_shown_in_the_docs_parses() {
    use clap::Parser;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = pages();
    files.extend(
        ["README.md", "protocol.md", "engines/README.md"]
            .iter()
            .map(|f| root.join(f)),
    );
    let (mut parsed, mut failures) = (0, Vec::new());
    for file in files {
        if file.ends_with("docs/reference/cli.md") {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let shown = file.strip_prefix(root).unwrap().display().to_string();
        for (line, command, in_block) in shown_commands(&text) {
            let words = shell_words(&command);
            parsed += 1;
            if let Err(e) = kalaha::cli::Cli::try_parse_from(&words) {
                // A span of the prose such as `kalaha check`, `kalaha show --serve` or
                // `kalaha openings --plies K` names a command or its usage: what it leaves
                // out or holds a place for is not an error; a word that does not exist is.
                use clap::error::ErrorKind::*;
                let named = !in_block
                    && matches!(
                        e.kind(),
                        MissingRequiredArgument | InvalidValue | ValueValidation
                    );
                if e.use_stderr() && !named {
                    failures.push(format!("{shown}:{line}: `{command}`: {e}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    println!("{parsed} commands shown in the docs parse");
    assert!(parsed >= 60, "only {parsed} commands found");
}

/// Commands are found in the prose (a span may go over a line break) and in ```sh blocks,
/// and a flag that does not exist is refused.
#[test]
fn commands_are_found_in_spans_and_blocks() {
    use clap::Parser;
    let text = "Run `kalaha match --resume\n r/m1` or `kalaha check`.\n\n```sh\nkalaha perft \\\n  --depth 3  # a comment\n```\n";
    let found = shown_commands(text);
    assert_eq!(
        found,
        [
            (1, "kalaha match --resume r/m1".to_string(), false),
            (1, "kalaha check".to_string(), false),
            (5, "kalaha perft --depth 3".to_string(), true),
        ]
    );
    assert_eq!(
        shell_words(r#"kalaha match --engine "cmd=./x arg=-v" 'a b'"#),
        ["kalaha", "match", "--engine", "cmd=./x arg=-v", "a b"]
    );
    assert!(kalaha::cli::Cli::try_parse_from(shell_words("kalaha perft --depth 3")).is_ok());
    assert!(kalaha::cli::Cli::try_parse_from(shell_words("kalaha perft --dpeth 3")).is_err());
}

/// The paragraphs of a page's prose, with their first line: lines between blank lines
/// outside code blocks, a list item or a heading starting a new one, each cell of a table
/// one.
fn paragraphs(text: &str) -> Vec<(usize, String)> {
    let (mut out, mut current, mut fence) = (Vec::new(), None::<(usize, String)>, false);
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        let item = t.starts_with(['-', '*', '#'])
            || t.split_once(". ")
                .is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
        if t.starts_with("```") || t.is_empty() || fence || t.starts_with('|') || item {
            out.extend(current.take());
        }
        if t.starts_with("```") {
            fence = !fence;
        } else if t.starts_with('#') && !fence {
            out.push((i + 1, t.to_string()));
        } else if t.starts_with('|') && !fence {
            out.extend(
                t.trim_matches('|')
                    .split('|')
                    .map(|c| (i + 1, c.to_string())),
            );
        } else if !t.is_empty() && !fence {
            let p = current.get_or_insert_with(|| (i + 1, String::new()));
            p.1.push(' ');
            p.1.push_str(t);
        }
    }
    out.extend(current);
    out
}

/// README fits on a screen or two: its two set-up commands first, what the first one
/// prints (checked by running it).
#[test]
fn the_readme_is_short_and_its_first_command_prints_what_it_shows() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    assert!(readme.len() < 8000, "README.md is {} bytes", readme.len());
    let first_block: Vec<&str> = readme
        .split("```sh")
        .nth(1)
        .and_then(|b| b.split_once('\n'))
        .and_then(|(_, b)| b.split("```").next())
        .unwrap()
        .lines()
        .collect();
    assert_eq!(
        first_block,
        ["cargo run --release -- tournament", "cargo test --release"]
    );
    let excerpt: Vec<String> = readme
        .split("```text\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    // The first command, with the kalaha it builds.
    let work = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_kalaha"))
        .arg("tournament")
        .current_dir(work.path())
        .env_remove("RUST_LOG")
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    let printed = String::from_utf8_lossy(&o.stdout);
    let missing = missing_lines(&excerpt, &printed);
    assert!(
        missing.is_empty(),
        "README's excerpt lines\n{}\nare not in what `kalaha tournament` prints:\n{printed}",
        missing.join("\n")
    );
}

/// The Markdown pages of the repository (outside `target/`, hidden folders and the results
/// folders of runs, such as the one README's first command writes into `results/`), as
/// paths from its root with `/` between folders, sorted.
fn markdown_pages(root: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if name.starts_with('.') || path == root.join("target") {
                continue;
            }
            // A run's leaderboard is written by kalaha, not a page of the repository.
            let a_run = path.join("tournament.toml").exists() || path.join("games.csv").exists();
            if path.is_dir() && a_run {
                continue;
            }
            if path.is_dir() {
                walk(root, &path, out);
            } else if name.ends_with(".md") {
                let rel = path.strip_prefix(root).unwrap();
                let parts: Vec<_> = rel.iter().map(|p| p.to_string_lossy()).collect();
                out.push(parts.join("/"));
            }
        }
    }
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out.sort();
    out
}

/// The pages whose long paragraphs are not split yet, each with why. An entry that has
/// no paragraph over the limit any more fails the test, so the list only shrinks.
const LONG_PARAGRAPHS_ALLOWED: &[(&str, &str)] = &[];

/// No paragraph of any Markdown page of the repository (README, protocol.md, RULES.md,
/// ARCHITECTURE.md, docs/, engines/, books/, results/, ...) is over 80 words: a list, a
/// table or another paragraph reads faster.
#[test]
fn no_paragraph_of_any_page_is_over_80_words() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let pages = markdown_pages(root);
    for must in [
        "README.md",
        "protocol.md",
        "RULES.md",
        "ARCHITECTURE.md",
        "docs/engine.md",
        "docs/reference/results.md",
        "docs/cluster/README.md",
        "engines/README.md",
        "books/README.md",
        "results/README.md",
    ] {
        assert!(
            pages.iter().any(|p| p == must),
            "{must} not found in {pages:?}"
        );
    }
    assert!(!pages.iter().any(|p| p.starts_with("target/")), "{pages:?}");
    let (mut long, mut tightened) = (Vec::new(), Vec::new());
    for page in &pages {
        let text = std::fs::read_to_string(root.join(page)).unwrap();
        let over: Vec<String> = paragraphs(&text)
            .into_iter()
            .map(|(line, p)| (line, p.split_whitespace().count()))
            .filter(|&(_, words)| words > 80)
            .map(|(line, words)| format!("{page}:{line}: {words} words"))
            .collect();
        match LONG_PARAGRAPHS_ALLOWED.iter().find(|(p, _)| p == page) {
            Some(_) if over.is_empty() => tightened.push(page.clone()),
            Some(_) => {}
            None => long.extend(over),
        }
    }
    assert!(
        long.is_empty(),
        "paragraphs over 80 words (split them into shorter ones, a list or a table):\n{}",
        long.join("\n")
    );
    assert!(
        tightened.is_empty(),
        "no paragraph over 80 words is left in {tightened:?}: remove it from \
         LONG_PARAGRAPHS_ALLOWED"
    );
}

#[test]
fn paragraphs_are_split_at_blank_lines_items_and_cells() {
    let text = "a b\nc\n\n- d e\n- f\n1. g\n```\nh i j\n```\n| k l | m |\n# n\no\n";
    let found: Vec<(usize, usize)> = paragraphs(text)
        .iter()
        .map(|(line, p)| (*line, p.split_whitespace().count()))
        .collect();
    assert_eq!(
        found,
        [
            (1, 3),
            (4, 3),
            (5, 2),
            (6, 2),
            (10, 2),
            (10, 1),
            (11, 2),
            (12, 1)
        ]
    );
}

/// Every file a run writes, every column of its CSV files and every key of its SPRT
/// files is named in `docs/reference/results.md`: a tournament (with `--debug` and
/// `--analyze`), an SPRT and a merged leaderboard are run and their folders listed.
#[test]
fn the_results_reference_names_every_file_column_and_key() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/reference/results.md")).unwrap();
    let named: std::collections::HashSet<&str> = doc
        .split('`')
        .skip(1)
        .step_by(2)
        .flat_map(|span| span.split([',', ' ', '/']))
        .collect();
    let work = tempfile::tempdir().unwrap();
    let small = ["--pits", "3", "--seeds", "2", "-q"];
    let runs: [&[&str]; 3] = [
        &[
            "tournament",
            "--engine",
            "first",
            "--engine",
            "random",
            "--games",
            "2",
        ],
        &[
            "tournament",
            "--engine",
            "first",
            "--engine",
            "random",
            "--games",
            "2",
            "--debug",
            "--analyze",
        ],
        &[
            "sprt",
            "--engine",
            "greedy",
            "--engine",
            "random",
            "--elo0",
            "0",
            "--elo1",
            "50",
            "--max-games",
            "40",
        ],
    ];
    for (k, args) in runs.iter().enumerate() {
        let o = Command::new(env!("CARGO_BIN_EXE_kalaha"))
            .args(*args)
            .args(small)
            .args(["--out", &format!("r{k}")])
            .current_dir(work.path())
            .output()
            .unwrap();
        assert!(
            matches!(o.status.code(), Some(0 | 3 | 4)),
            "{args:?}: {o:?}"
        );
    }
    let o = Command::new(env!("CARGO_BIN_EXE_kalaha"))
        .args(["ratings", "r0", "r2", "--out", "r3"])
        .current_dir(work.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    let mut missing = std::collections::BTreeSet::new();
    for k in 0..4 {
        let dir = work.path().join(format!("r{k}"));
        let mut files = vec![];
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            files.push(e.file_name().to_string_lossy().into_owned());
        }
        for file in &files {
            // logs/ holds NAME.N.log and NAME.N.transcript, named in the doc so.
            if !named.contains(file.as_str()) {
                missing.insert(format!("file {file}"));
            }
            let text = std::fs::read_to_string(dir.join(file)).unwrap_or_default();
            let names: Vec<String> = if file.ends_with(".csv") {
                let header = text.lines().next().unwrap_or_default();
                header.split(',').map(String::from).collect()
            } else if file.starts_with("sprt") && file.ends_with(".toml") {
                text.lines()
                    .filter_map(|l| l.split_once(" = "))
                    .map(|(key, _)| key.trim().to_string())
                    .collect()
            } else {
                vec![]
            };
            for name in names {
                if !named.contains(name.as_str()) {
                    missing.insert(format!("{file}: {name}"));
                }
            }
        }
        if dir.join("logs").exists() {
            for e in std::fs::read_dir(dir.join("logs")).unwrap().flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                let kind = name.rsplit('.').next().unwrap_or_default().to_string();
                if !doc.contains(&format!("NAME.N.{kind}")) {
                    missing.insert(format!("logs/{name}"));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "not in docs/reference/results.md: {missing:?}"
    );
}

/// Every ```sh block of README, the pages, protocol.md and engines/README.md is either run
/// (```sh run) or says why not (```sh (not run: REASON)).
#[test]
fn every_sh_block_is_run_or_says_why_not() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = pages();
    files.extend(
        ["README.md", "protocol.md", "engines/README.md"]
            .iter()
            .map(|f| root.join(f)),
    );
    let mut silent = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let mut fence = false;
        for (i, line) in text.lines().enumerate() {
            let t = line.trim_start();
            if !t.starts_with("```") {
                continue;
            }
            if !fence && (t == "```sh" || t.starts_with("```sh ")) {
                let info = t["```sh".len()..].trim();
                if !(info == "run" || info.starts_with("(not run")) {
                    let shown = file.strip_prefix(root).unwrap().display();
                    silent.push(format!("{shown}:{}: {t}", i + 1));
                }
            }
            fence = !fence;
        }
    }
    assert!(
        silent.is_empty(),
        "```sh blocks neither run nor saying why:\n{}",
        silent.join("\n")
    );
}

/// The command play.md gives to rate oneself over all one's sessions runs as written on
/// several `results/play-*` folders (made here by matches: a session needs a browser).
#[test]
fn the_rating_command_of_play_md_runs_on_several_sessions() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let page = std::fs::read_to_string(root.join("docs/play.md")).unwrap();
    let command = page
        .lines()
        .find(|l| l.starts_with("kalaha ratings results/play-*"))
        .expect("play.md rates the sessions");
    let bin = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_kalaha"), bin.path().join("kalaha")).unwrap();
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let work = tempfile::tempdir().unwrap();
    for k in 1..=3 {
        let o = Command::new(env!("CARGO_BIN_EXE_kalaha"))
            .args(["match", "first", "random", "--pits", "3", "--seeds", "2"])
            .args(["--games", "2", "-q", "--out", &format!("results/play-{k}")])
            .current_dir(work.path())
            .output()
            .unwrap();
        assert!(o.status.success(), "{o:?}");
    }
    let o = Command::new("sh")
        .arg("-c")
        .arg(command)
        .current_dir(work.path())
        .env("PATH", &path)
        .output()
        .unwrap();
    assert!(o.status.success(), "`{command}`: {o:?}");
    assert!(work.path().join("me/leaderboard.html").exists());
}

/// The GitHub Actions job of sprt.md: its SPRT step, run as the job runs it (bash -e, as
/// GitHub's `run:` does) in a folder with `new/engine` and `old/engine`, passes when the
/// test accepts H1 and fails with the test's status when it accepts H0.
#[test]
fn the_ci_job_of_sprt_md_passes_and_fails_as_it_says() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let page = std::fs::read_to_string(root.join("docs/sprt.md")).unwrap();
    let job = page
        .split("```yaml\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("sprt.md holds a job file");
    for key in [
        "on: pull_request",
        "runs-on: ubuntu-latest",
        "actions/checkout@v4",
    ] {
        assert!(job.contains(key), "{key} not in the job");
    }
    // The step's script: the lines of `run: |` under `- name: SPRT`, unindented.
    let step = job.split("- name: SPRT\n").nth(1).expect("an SPRT step");
    let mut lines = step.lines();
    assert_eq!(lines.next().map(str::trim), Some("run: |"));
    let indent =
        step.lines().nth(1).unwrap().len() - step.lines().nth(1).unwrap().trim_start().len();
    let script: Vec<&str> = lines
        .take_while(|l| l.trim().is_empty() || l.len() - l.trim_start().len() >= indent)
        .map(|l| l.get(indent..).unwrap_or(""))
        .collect();
    let script = script.join("\n");
    assert!(
        script.contains("kalaha sprt") && script.contains("exit $status"),
        "{script}"
    );
    let bin = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_kalaha"), bin.path().join("kalaha")).unwrap();
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let me = env!("CARGO_BIN_EXE_kalaha");
    // (new engine, old engine, the step's exit status, what it prints): a stronger new
    // engine passes; no decision passes with a warning; an engine that does not start
    // fails the job with kalaha's status (as H0 accepted does, with 3).
    for (new, old, max_games, status, said) in [
        (
            "engine greedy",
            "engine random",
            4000,
            0,
            "new engine accepted",
        ),
        (
            "engine random",
            "engine greedy",
            40,
            0,
            "::warning::no decision",
        ),
        ("no-such-command", "engine random", 40, 2, ""),
    ] {
        let work = tempfile::tempdir().unwrap();
        // The engines' kalaha in their working folder: one built under /tmp would be out of
        // an engine's sandbox, which has a /tmp of its own.
        let kalaha = work.path().join("kalaha-engine");
        if std::fs::hard_link(me, &kalaha).is_err() {
            std::fs::copy(me, &kalaha).unwrap();
        }
        for (dir, engine) in [("new", new), ("old", old)] {
            std::fs::create_dir(work.path().join(dir)).unwrap();
            let file = work.path().join(dir).join("engine");
            std::fs::write(
                &file,
                format!("#!/bin/sh\nexec {} {engine}\n", kalaha.display()),
            )
            .unwrap();
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        // The job's bounds are 4 nElo apart: greedy is told stronger than random in some
        // 200 pairs, and a limit of 40 games gives "no decision".
        assert!(script.contains("--max-games 4000"), "{script}");
        let small = script.replace("--max-games 4000", &format!("--max-games {max_games}"));
        let o = Command::new("bash")
            .args(["-e", "-c", &small])
            .current_dir(work.path())
            .env("PATH", &path)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(status), "{new} vs {old}: {o:?}");
        assert!(
            String::from_utf8_lossy(&o.stdout).contains(said),
            "{new} vs {old}: {o:?}"
        );
    }
}

/// Each book of books/ gives the command that makes it again, complete: it parses as
/// kalaha's command line and writes the book itself (run from the repository's root), and
/// books/README.md has a row for it with its board and sowings. The books of boards of 4
/// pits, made in a second or two each, are made again here and must come out byte for
/// byte; the others take from seconds to minutes.
#[test]
fn each_book_gives_the_command_that_makes_it_again() {
    use clap::Parser;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("books/README.md")).unwrap();
    let (mut books, mut remade) = (0, 0);
    for entry in std::fs::read_dir(root.join("books")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "openings") {
            continue;
        }
        books += 1;
        let text = std::fs::read_to_string(&path).unwrap();
        let command = text
            .lines()
            .find_map(|l| {
                l.strip_prefix("# ")
                    .filter(|c| c.starts_with("kalaha openings "))
            })
            .unwrap_or_else(|| panic!("{}: no command", path.display()));
        let words = shell_words(command);
        if let Err(e) = kalaha::cli::Cli::try_parse_from(&words) {
            panic!("{}: `{command}`: {e}", path.display());
        }
        let name = path.file_name().unwrap().to_str().unwrap();
        assert!(
            command.ends_with(&format!(" --out books/{name}")),
            "{}: `{command}`",
            path.display()
        );
        // books/README.md has its row: the board and the sowings of the command.
        let flag = |f: &str| {
            let after = command.split(&format!(" {f} ")).nth(1).unwrap();
            after.split(' ').next().unwrap().to_string()
        };
        let ec = if command.contains(" --empty-capture ") {
            ", `--empty-capture`"
        } else {
            ""
        };
        let row = format!(
            "| `{name}` | {} pits, {} seeds{ec} | 1,000 | {} | within ±2 | ",
            flag("--pits"),
            flag("--seeds"),
            flag("--plies")
        );
        assert!(readme.contains(&row), "books/README.md: no row `{row}`");
        if !command.contains(" --pits 4 ") {
            continue;
        }
        let work = tempfile::tempdir().unwrap();
        std::fs::create_dir(work.path().join("books")).unwrap();
        let o = crate::common::kalaha()
            .args(&words[1..])
            .args(["--threads", "1"])
            .current_dir(work.path())
            .output()
            .unwrap();
        assert!(o.status.success(), "{name}: {o:?}");
        let again = std::fs::read_to_string(work.path().join("books").join(name)).unwrap();
        assert!(again == text, "{name}: made again, the book differs");
        remade += 1;
    }
    assert!(books >= 10, "{books} books");
    assert!(remade >= 4, "{remade} books made again");
}
