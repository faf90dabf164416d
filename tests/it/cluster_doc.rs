//! docs/cluster/README.md and the files beside it agree: a recipe's command in the page is
//! the one its file says to run, each test of a recipe runs the recipes its row names, CI
//! runs every test, and the tests share one preamble (`test-common.sh`).

use std::path::Path;

fn dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/cluster"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The `code` spans of a line of Markdown.
fn spans(line: &str) -> Vec<&str> {
    line.split('`').skip(1).step_by(2).collect()
}

/// The rows of the page's tables whose first cell links a file of the folder: the file
/// and the row.
fn rows(page: &str) -> Vec<(&str, &str)> {
    page.lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("| [`")?;
            let (file, _) = rest.split_once('`')?;
            Some((file, l))
        })
        .collect()
}

#[test]
fn the_cluster_page_and_its_recipes_and_tests_agree() {
    let page = read(&dir().join("README.md"));
    let ci = read(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.ci/run")));
    let rows = rows(&page);
    assert!(rows.len() >= 10, "{rows:?}");
    for (file, row) in &rows {
        let text = read(&dir().join(file));
        // A command the row gives for the file is the one the file's header says.
        for span in spans(row).iter().filter(|s| s.contains("docs/cluster/")) {
            assert!(
                text.contains(&format!("#   {span}")),
                "{file} does not give the command of its row in README.md: {span}"
            );
        }
        if !file.starts_with("test-") {
            continue;
        }
        // A test: run by CI, with the shared preamble, running the recipes of its row.
        assert!(
            ci.lines().any(|l| l == format!("bash docs/cluster/{file}")),
            ".ci/run does not run {file}"
        );
        assert!(
            text.contains("\nsource \"$(dirname \"$0\")/test-common.sh\"\n"),
            "{file} does not source test-common.sh"
        );
        for own in ["log() {", "skip() {", "fail() {", "KALAHA=${KALAHA:-"] {
            assert!(!text.contains(own), "{file} defines {own:?} again");
        }
        for recipe in spans(row)
            .iter()
            .filter(|s| !s.starts_with("test-") && !s.contains(' ') && dir().join(s).is_file())
        {
            assert!(
                text.contains(&format!("\"$HERE/{recipe}\"")),
                "{file} does not run {recipe}, which its row in README.md names"
            );
        }
    }
    // Every test of the folder has its row.
    for entry in std::fs::read_dir(dir()).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if name.starts_with("test-") && name != "test-common.sh" {
            assert!(
                rows.iter().any(|(f, _)| *f == name),
                "{name} has no row in README.md"
            );
        }
    }
}
