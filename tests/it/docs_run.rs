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

/// What a page holds for the test: its files and its commands, in order.
#[derive(Default)]
struct Page {
    files: Vec<(String, String)>,
    steps: Vec<Step>,
}

fn parse(text: &str) -> Page {
    let mut page = Page::default();
    let mut lines = text.lines().enumerate();
    while let Some((_, line)) = lines.next() {
        let info = line.trim_start();
        let Some(info) = info.strip_prefix("```") else {
            continue;
        };
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
        } else if run {
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
        }
    }
    page
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
    let (mut ran, mut failures) = (0, Vec::new());
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
        for step in &parsed.steps {
            let o = Command::new("sh")
                .arg("-c")
                .arg(&step.command)
                .current_dir(work.path())
                .env("PATH", &path)
                .env("XDG_CACHE_HOME", work.path().join(".cache"))
                .env_remove("RUST_LOG")
                .output()
                .unwrap();
            ran += 1;
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
    }
    println!(
        "{ran} commands of the docs run in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(ran >= 30, "only {ran} runnable commands in the docs");
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
