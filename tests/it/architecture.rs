//! The layers of ARCHITECTURE.md hold: no `crate::` path of the library's code (tests aside)
//! makes a cycle between its top-level modules.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The `.rs` files below `dir`, test files left out.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs")
            && path.file_name().is_some_and(|n| n != "tests.rs")
        {
            out.push(path);
        }
    }
}

/// The code of a file without its comments (their lines left empty) and its `#[cfg(test)] mod tests { .. }` (of any
/// visibility).
fn code(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let end = lines
        .windows(2)
        .position(|w| {
            let declared = w[1].trim_start();
            let declared = declared
                .strip_prefix("pub(crate) ")
                .or_else(|| declared.strip_prefix("pub "))
                .unwrap_or(declared);
            w[0].trim() == "#[cfg(test)]" && declared.starts_with("mod tests {")
        })
        .unwrap_or(lines.len());
    // A comment's line is kept empty, so that lines keep their numbers.
    lines[..end]
        .iter()
        .map(|l| {
            if l.trim_start().starts_with("//") {
                ""
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn ident(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// The top-level modules a piece of code names by `crate::` paths, also in `use crate::{..}`.
fn named_modules(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = code[at + "crate::".len()..].trim_start();
        if let Some(group) = rest.strip_prefix('{') {
            // The names at the top level of the group.
            let mut depth = 0;
            let mut start = true;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => start = true,
                    c if start && depth == 0 && !c.is_whitespace() => {
                        start = false;
                        out.insert(ident(&group[i..]).to_string());
                    }
                    _ => {}
                }
            }
        } else {
            out.insert(ident(rest).to_string());
        }
    }
    out
}

/// The edges between top-level modules of `src/`.
fn module_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    sources(src, &mut files);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        let rel = file.strip_prefix(src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let top = first.trim_end_matches(".rs").to_string();
        if top == "lib" || top == "main" {
            continue;
        }
        let named = named_modules(&code(&std::fs::read_to_string(&file).unwrap()));
        let edges = graph.entry(top.clone()).or_default();
        edges.extend(named.into_iter().filter(|m| *m != top));
    }
    let modules: BTreeSet<String> = graph.keys().cloned().collect();
    for edges in graph.values_mut() {
        edges.retain(|m| modules.contains(m));
    }
    graph
}

/// A cycle of the graph, if it has one, as the path of modules that returns to its start.
fn cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        m: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|p| p == m) {
            let mut c = path[at..].to_vec();
            c.push(m.to_string());
            return Some(c);
        }
        if done.contains(m) {
            return None;
        }
        path.push(m.to_string());
        for next in &graph[m] {
            if let Some(c) = visit(next, graph, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(m.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|m| visit(m, graph, &mut Vec::new(), &mut done))
}

#[test]
fn the_modules_form_layers_without_a_cycle() {
    let graph = module_graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    assert!(
        graph.len() > 10,
        "the modules of src/ were not found: {graph:?}"
    );
    assert!(graph["cli"].contains("tournament"), "{graph:?}");
    if let Some(c) = cycle(&graph) {
        panic!(
            "the modules make a cycle by their crate:: paths: {}",
            c.join(" -> ")
        );
    }
}

#[test]
fn a_cycle_is_found_and_named() {
    let code = "use crate::{record, rules::Side};\nfn f() { crate::referee::truncate(); }";
    let named = named_modules(code);
    assert_eq!(
        named,
        ["record", "referee", "rules"].map(String::from).into()
    );
    let mut graph = BTreeMap::new();
    graph.insert(
        "record".to_string(),
        BTreeSet::from(["referee".to_string()]),
    );
    graph.insert(
        "referee".to_string(),
        BTreeSet::from(["record".to_string()]),
    );
    assert_eq!(cycle(&graph).unwrap(), ["record", "referee", "record"]);
    graph.get_mut("record").unwrap().clear();
    assert_eq!(cycle(&graph), None);
}

/// `unsafe` is written in `src/sys/` alone: `lib.rs` denies it, and nothing else lifts the
/// denial.
#[test]
fn unsafe_code_lives_in_sys_alone() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    assert!(
        lib.contains("#![deny(unsafe_code)]"),
        "lib.rs no longer denies unsafe code"
    );
    // Every `.rs` file, tests included.
    fn all(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                all(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    all(&src, &mut files);
    let sys = src.join("sys");
    let lifted: Vec<_> = files
        .iter()
        .filter(|f| !f.starts_with(&sys))
        .filter(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            text.contains("allow(unsafe_code)") || text.contains("expect(unsafe_code)")
        })
        .collect();
    assert!(
        lifted.is_empty(),
        "unsafe code allowed outside src/sys: {lifted:?}"
    );
}

/// The files of a results folder are named in `src/results/files.rs` alone: no other code
/// of the library (tests aside) spells the name of one (as a string of its own, or a path
/// made from it), nor uses the results module's constants for them.
#[test]
fn only_the_results_module_names_the_files_of_a_results_folder() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let owner = src.join("results").join("files.rs");
    let mut found = Vec::new();
    for f in files.iter().filter(|f| **f != owner) {
        let code = code(&std::fs::read_to_string(f).unwrap());
        for (i, line) in code.lines().enumerate() {
            let spelled = results_file_names(line);
            // The constants are the results module's own.
            let constant = !f.starts_with(src.join("results"))
                && [
                    "GAMES_JSONL",
                    "GAMES_CSV",
                    "TOURNAMENT_TOML",
                    "SPRT_RESULT_TOML",
                ]
                .iter()
                .any(|c| line.contains(&format!("results::{c}")));
            if !spelled.is_empty() || constant {
                found.push(format!("{}:{}: {}", f.display(), i + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "names of the files of a results folder spelled outside results::Files:\n{}",
        found.join("\n")
    );
}

/// The names of the files of a results folder that `line` spells as a string of their
/// own (`"games.csv"`, `"analysis_games.csv"`, any `"analysis*.csv"`), not words of a
/// longer text.
fn results_file_names(line: &str) -> Vec<String> {
    const NAMES: [&str; 14] = [
        "games.jsonl",
        "games.csv",
        "tournament.toml",
        ".played.toml",
        "sprt.toml",
        "sprt.csv",
        "sprt-result.toml",
        "logs",
        "standings.csv",
        "h2h.csv",
        "leaderboard.md",
        "leaderboard.html",
        "match.csv",
        "analysis.csv",
    ];
    // The strings of the line: the text between each pair of quotes.
    line.split('"')
        .skip(1)
        .step_by(2)
        .filter(|s| NAMES.contains(s) || (s.starts_with("analysis") && s.ends_with(".csv")))
        .map(str::to_string)
        .collect()
}

#[test]
fn a_file_name_is_found_as_a_string_of_its_own() {
    let spelled = |line: &str| results_file_names(line);
    assert_eq!(spelled(r#"let p = dir.join("games.csv");"#), ["games.csv"]);
    assert_eq!(
        spelled(r#"["h2h.csv", "leaderboard.md"]"#),
        ["h2h.csv", "leaderboard.md"]
    );
    assert_eq!(
        spelled(r#"const A: &str = "analysis_engines.csv";"#),
        ["analysis_engines.csv"]
    );
    assert_eq!(spelled(r#"const M: &str = "match.csv";"#), ["match.csv"]);
    // Words of a message are not a name spelled.
    assert!(spelled(r#"format!("{} has no games.csv row", p)"#).is_empty());
    assert!(spelled(r#"let s = "logs of {name}";"#).is_empty());
}
