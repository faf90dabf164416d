//! `docs/reference/cli.md` is the command line's `--help`, every subcommand's, rendered from
//! the one declaration of the flags (clap's); this test fails when the committed page
//! differs, and writes it anew with `KALAHA_UPDATE_DOCS=1`.

use clap::CommandFactory;
use std::fmt::Write;

const PAGE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/reference/cli.md");

/// The page: the top-level help, then each subcommand's (and theirs), in declaration order.
fn render() -> String {
    let mut cmd = kalaha::cli::Cli::command();
    cmd.build();
    let mut page = String::from(
        "# The command line\n\n\
         Every command's `--help`, as `kalaha` prints it. This page is generated from the \
         declaration of the flags by `tests/it/cli_doc.rs`, which fails when it is out of \
         date; `KALAHA_UPDATE_DOCS=1 cargo test --release --test it cli_doc::` writes it \
         anew.\n\n",
    );
    let mut sections = Vec::new();
    collect(&cmd, "kalaha", &mut sections);
    page.push_str("Commands:");
    for (path, _) in &sections[1..] {
        let anchor = path.replace(' ', "-");
        let _ = write!(page, " [`{path}`](#{anchor})");
    }
    page.push('\n');
    for (path, help) in sections {
        let _ = write!(page, "\n## {path}\n\n```text\n{}\n```\n", help.trim_end());
    }
    page
}

fn collect(cmd: &clap::Command, path: &str, out: &mut Vec<(String, String)>) {
    let mut c = cmd.clone().bin_name(path);
    let help = c.render_long_help().to_string();
    // Trailing spaces are not part of what is read, and editors strip them.
    let help: Vec<&str> = help.lines().map(str::trim_end).collect();
    out.push((path.to_string(), help.join("\n")));
    for sub in cmd.get_subcommands() {
        if sub.is_hide_set() || sub.get_name() == "help" {
            continue;
        }
        collect(sub, &format!("{path} {}", sub.get_name()), out);
    }
}

#[test]
fn the_command_line_reference_is_up_to_date() {
    let page = render();
    let committed = std::fs::read_to_string(PAGE).unwrap_or_default();
    if page == committed {
        return;
    }
    if std::env::var_os("KALAHA_UPDATE_DOCS").is_some() {
        std::fs::write(PAGE, &page).expect("write docs/reference/cli.md");
        return;
    }
    let line = page
        .lines()
        .zip(committed.lines())
        .position(|(a, b)| a != b)
        .map_or(page.lines().count().min(committed.lines().count()), |i| i);
    panic!(
        "docs/reference/cli.md is out of date with the flags (first difference at line {}: \
         {:?}); write it anew with\n  KALAHA_UPDATE_DOCS=1 cargo test --release --test it \
         cli_doc::\nand commit it",
        line + 1,
        page.lines().nth(line).unwrap_or("(end of page)")
    );
}

/// Every subcommand has its section, so none can be left out of the page.
#[test]
fn every_subcommand_has_a_section() {
    let page = render();
    let cmd = kalaha::cli::Cli::command();
    let names: Vec<&str> = cmd
        .get_subcommands()
        .map(|s| s.get_name())
        .filter(|n| *n != "help")
        .collect();
    assert!(names.len() >= 13, "{names:?}");
    for n in names {
        assert!(
            page.contains(&format!("\n## kalaha {n}\n")),
            "no section for {n}"
        );
    }
}
