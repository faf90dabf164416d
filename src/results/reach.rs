//! What of kalaha's results an engine may reach: the folder hidden from it (its run's
//! results folder, or the shared folder of a test whose worker the run is), and the
//! `write=` folders it may not be given (those that hold results, or lie inside them).
//!
//! A folder holds results when it holds the files of a run ([`Files::hold_a_run`]) or is
//! the shared folder of a test played by several workers ([`Files::is_shared_test`]).
//! Below a `write=` folder they are looked for with a bounded walk
//! ([`WALK_DEPTH`], [`WALK_ENTRIES`]); a folder too big to be walked whole is refused as
//! well, since kalaha cannot tell that it holds none.

use super::Files;
use crate::record::shown_path;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};

/// Folders below a `write=` folder looked into for results: this many levels deep.
pub const WALK_DEPTH: usize = 8;
/// Entries (files and folders) below a `write=` folder looked at, at most.
pub const WALK_ENTRIES: usize = 20_000;

/// Whether kalaha's results are in `dir` itself: a run's files or a shared test's.
fn holds_results(dir: &Path) -> bool {
    let files = Files::of(dir);
    files.hold_a_run() || files.is_shared_test()
}

/// The folders to hide from an engine of the run in `run`, widest first: the shared
/// folder of the test when the run is one of its workers (`DIR` of `DIR/worker-K`, whose
/// other workers' games and logs, and every engine's `env.*` in `sprt-workers.toml`, are
/// there), then the run's folder. The sandbox covers the first that the engine does not
/// live in (see `sandbox::folder_to_hide`).
pub fn hidden_from_engines(run: &Path) -> Vec<PathBuf> {
    let mut hidden = Vec::new();
    if let Some(parent) = run.parent()
        && Files::of(parent).is_shared_test()
    {
        hidden.push(parent.to_path_buf());
    }
    hidden.push(run.to_path_buf());
    hidden
}

/// What a walk of a folder found below it.
#[derive(Debug, PartialEq, Eq)]
enum Below {
    /// Nothing: the walk saw every folder.
    Nothing,
    /// The first folder found that holds results.
    Results(PathBuf),
    /// The walk stopped at a bound before it saw everything, without finding results.
    Cut,
    /// A folder of kalaha's own user that it cannot look into: the engine, run as that
    /// user, could open it again and change what it holds.
    Closed(PathBuf),
}

/// Looks for a folder that holds results in `dir` or below it, breadth first, at most
/// `depth` levels deep and `entries` entries in all. Links are not followed (a write
/// through one is not a write into the folder). A folder that cannot be looked into is
/// passed over when another user owns it (the engine cannot open it either), and ends
/// the walk when kalaha's own user does.
fn results_below(dir: &Path, depth: usize, entries: usize) -> Below {
    let mut queue = VecDeque::from([(dir.to_path_buf(), 0)]);
    let mut seen = 0usize;
    let mut cut = false;
    while let Some((folder, level)) = queue.pop_front() {
        if holds_results(&folder) {
            return Below::Results(folder);
        }
        // Listing needs the folder readable, and seeing what it holds searchable.
        let list = std::fs::read_dir(&folder)
            .and_then(|list| std::fs::metadata(folder.join(".")).map(|_| list));
        let Ok(list) = list else {
            let own = std::fs::symlink_metadata(&folder).is_ok_and(|m| {
                std::os::unix::fs::MetadataExt::uid(&m) == crate::sys::sandbox::uid()
            });
            if own {
                return Below::Closed(folder);
            }
            continue;
        };
        for entry in list.flatten() {
            seen += 1;
            if seen > entries {
                return Below::Cut;
            }
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                if level < depth {
                    queue.push_back((entry.path(), level + 1));
                } else {
                    cut = true;
                }
            }
        }
    }
    if cut { Below::Cut } else { Below::Nothing }
}

/// Checks that an engine of the run in `run` may be given `write` as a `write=` folder:
/// it must not hold the run's folder (`write=.` with the results in `./results/`), lie
/// inside it or inside another folder of results, nor hold results below it (earlier
/// runs, which `kalaha ratings` reads as they are). The error says why, for the user.
pub fn check_write_folder(given: &Path, run_given: &Path) -> Result<(), String> {
    // Compared with their links resolved, and named as the user gave them; a folder that
    // does not exist is refused elsewhere.
    let (Ok(write), Ok(run)) = (
        std::fs::canonicalize(given),
        std::fs::canonicalize(run_given),
    ) else {
        return Ok(());
    };
    let shown = shown_path(given);
    if run.starts_with(&write) {
        return Err(format!(
            "write={shown} holds this run's results folder {}: the engine could change its \
             results and those of the runs beside it; give it a folder of its own to write in",
            shown_path(run_given)
        ));
    }
    if let Some(results) = write
        .ancestors()
        .find(|dir| *dir == run || holds_results(dir))
    {
        return Err(format!(
            "write={shown} lies inside the results folder {}: the engine could change those \
             results; give it a folder of its own to write in, outside any results folder",
            shown_path(results)
        ));
    }
    match results_below(&write, WALK_DEPTH, WALK_ENTRIES) {
        Below::Nothing => Ok(()),
        Below::Results(found) => Err(format!(
            "write={shown} holds the results folder {}: the engine could change those \
             results, which `kalaha ratings` would then read as they are; give it a folder of \
             its own to write in, which holds no results",
            shown_path(&given.join(found.strip_prefix(&write).unwrap_or(&found)))
        )),
        Below::Closed(folder) => Err(format!(
            "write={shown} holds {}, which kalaha cannot look into for results, but the \
             engine, run as the same user, could open and change; make it readable, or give \
             the engine a folder of its own to write in",
            shown_path(&given.join(folder.strip_prefix(&write).unwrap_or(&folder)))
        )),
        Below::Cut => Err(format!(
            "write={shown} is too big to check: kalaha looks at most {WALK_ENTRIES} entries \
             and {WALK_DEPTH} folders deep in a write= folder for results the engine could \
             change, and stopped before the end without finding any; give the engine a \
             smaller folder of its own to write in"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_in(dir: &Path) {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("games.jsonl"), "").unwrap();
    }

    #[test]
    fn a_walk_finds_results_below_and_says_when_it_was_cut() {
        let top = tempfile::tempdir().unwrap();
        let top = top.path();
        std::fs::create_dir_all(top.join("a/b/c")).unwrap();
        assert_eq!(results_below(top, 8, 100), Below::Nothing);
        // Three levels deep: found within 3, cut within 2.
        run_in(&top.join("a/b/c"));
        assert_eq!(
            results_below(top, 3, 100),
            Below::Results(top.join("a/b/c"))
        );
        assert_eq!(results_below(top, 2, 100), Below::Cut);
        // More entries than the bound, none a run.
        let wide = tempfile::tempdir().unwrap();
        for i in 0..5 {
            std::fs::write(wide.path().join(format!("f{i}")), "").unwrap();
        }
        assert_eq!(results_below(wide.path(), 8, 5), Below::Nothing);
        assert_eq!(results_below(wide.path(), 8, 4), Below::Cut);
        // A link to results is not followed.
        let linked = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(top.join("a"), linked.path().join("l")).unwrap();
        assert_eq!(results_below(linked.path(), 8, 100), Below::Nothing);
    }

    #[test]
    fn each_kind_of_results_file_marks_a_folder_of_results() {
        for file in [
            "games.jsonl",
            "games.csv",
            "tournament.toml",
            ".played.toml",
            "sprt-workers.toml",
        ] {
            let top = tempfile::tempdir().unwrap();
            let run = top.path().join("old");
            std::fs::create_dir(&run).unwrap();
            std::fs::write(run.join(file), "").unwrap();
            assert_eq!(
                results_below(top.path(), 8, 100),
                Below::Results(run),
                "{file}"
            );
        }
    }

    #[test]
    fn the_shared_folder_of_a_worker_is_hidden_first() {
        let top = tempfile::tempdir().unwrap();
        let shared = top.path().join("shared");
        let worker = shared.join("worker-2");
        std::fs::create_dir_all(&worker).unwrap();
        assert_eq!(hidden_from_engines(&worker), vec![worker.clone()]);
        std::fs::write(shared.join("sprt-workers.toml"), "").unwrap();
        assert_eq!(hidden_from_engines(&worker), vec![shared.clone(), worker]);
    }
}
