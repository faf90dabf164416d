//! The owner of a results folder for the length of a run: where it is, its lock, what kind
//! of run plays in it, and the checks made before anything is written into it.
//!
//! Every command that plays games claims its folder here ([`ResultsFolder::claim`]): a new
//! run takes a new or empty folder, a resume takes a folder that holds a run, a play
//! session takes a folder of its own. A folder that holds other files (say `--out .`) is
//! refused rather than filled with results, and a folder another run holds is refused
//! with the name of that run.

use super::RunKind;
use super::lock::{FolderLock, LOCK_FILE, LockError};
use super::{Files, LOGS, SPRT_CSV, SPRT_TOML, TOURNAMENT_TOML};
use crate::record::shell::shell_path;
use crate::record::{shown_line, shown_path};
use std::io;
use std::path::{Path, PathBuf};

/// What a run expects of its folder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Claim {
    /// A new run: a new or empty folder (or one with only a lock or logs).
    New,
    /// The run in the folder goes on (`--resume`).
    Resume,
    /// A play session: a folder of its own, without games.
    Session,
}

/// Why a folder cannot take the run: bad input, said for the user (exit 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ClaimError(pub String);

/// A results folder, locked by this run until it is dropped.
#[derive(Debug)]
pub struct ResultsFolder {
    path: PathBuf,
    _lock: FolderLock,
}

impl ResultsFolder {
    /// Checks that `path` can take a run as `claim` says, creates it (with `logs/`), and
    /// locks it.
    pub fn claim(path: &Path, claim: Claim) -> Result<ResultsFolder, ClaimError> {
        check(path, claim)?;
        std::fs::create_dir_all(path.join(LOGS)).map_err(|e| {
            ClaimError(format!(
                "cannot create the results folder {}: {e}",
                shown_path(path)
            ))
        })?;
        // The engines' logs go into it, as root perhaps: a link there (put by another user
        // of a shared folder) would send them to a folder elsewhere.
        let logs = path.join(LOGS);
        if std::fs::symlink_metadata(&logs).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(ClaimError(format!(
                "{} is a symbolic link: kalaha writes the engines' logs only into a folder of \
                 the results folder itself; remove the link",
                shown_path(&logs)
            )));
        }
        let lock = FolderLock::acquire(path).map_err(|e| ClaimError(e.to_string()))?;
        // Checked again under the lock: a run that started meanwhile may have written games.
        if claim != Claim::Resume && holds_games(path) {
            return Err(ClaimError(holds_games_message(path, claim)));
        }
        Ok(ResultsFolder {
            path: path.to_path_buf(),
            _lock: lock,
        })
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The paths of the folder's files.
    pub fn files(&self) -> Files {
        Files::of(&self.path)
    }

    /// The engines' logs.
    pub fn logs(&self) -> PathBuf {
        self.files().logs()
    }

    /// Replaces the file `file` of the folder (e.g. [`Files::tournament_toml`]) whole and
    /// durably.
    pub fn write(&self, file: fn(&Files) -> PathBuf, bytes: &[u8]) -> io::Result<()> {
        super::write_file(&file(&self.files()), bytes)
    }
}

/// Whether `path` holds recorded games.
fn holds_games(path: &Path) -> bool {
    Files::of(path).hold_games()
}

fn holds_games_message(path: &Path, claim: Claim) -> String {
    match claim {
        Claim::Session => format!(
            "{} already holds games: choose another --out (each session has its own folder; \
             `kalaha ratings DIR...` rates several together)",
            shown_path(path)
        ),
        // The command that continues the folder's run, as it can be pasted.
        _ => {
            let (held, command) = match super::run_kind(path) {
                RunKind::Tournament => ("a tournament", "tournament"),
                RunKind::Match => ("a match", "match"),
                RunKind::Sprt => ("an SPRT", "sprt"),
                RunKind::Play => {
                    return format!(
                        "{} already holds the games of a play session: choose another --out \
                         (`kalaha ratings {}` rates them)",
                        shown_path(path),
                        shell_path(path)
                    );
                }
            };
            format!(
                "{} already holds {held}: continue it with `kalaha {command} --resume {}`, or \
                 choose another --out",
                shown_path(path),
                shell_path(path)
            )
        }
    }
}

/// Whether `path` can take a run as `claim` says, checked before anything is printed or
/// written: not a file; a folder of other files (say `--out .` or a documents folder) is
/// refused rather than filled with results files; a folder with games only on a resume; a
/// folder another run holds, with the name of that run. A folder that holds only what a
/// run writes before its settings are saved whole (its logs, `.played.toml`: a run stopped
/// or failed in its first moments, with nothing to resume) takes a new run.
pub fn check(path: &Path, claim: Claim) -> Result<(), ClaimError> {
    if path.exists() && !path.is_dir() {
        return Err(ClaimError(format!(
            "{} is a file, not a folder: give a new or empty folder for the results",
            shown_path(path)
        )));
    }
    if path.join(LOCK_FILE).exists() {
        // Another run may hold it: trying the lock now says which, before the run's header
        // says it starts. A lock nobody held is released (and its file removed) at once.
        match FolderLock::acquire(path) {
            Ok(lock) => drop(lock),
            Err(busy @ LockError::Busy { .. }) => return Err(ClaimError(busy.to_string())),
            // Taking the lock for the run reports it.
            Err(_) => return Ok(()),
        }
    }
    let games = holds_games(path);
    if claim != Claim::Resume && games {
        return Err(ClaimError(holds_games_message(path, claim)));
    }
    let ours = games
        || [TOURNAMENT_TOML, SPRT_TOML, SPRT_CSV]
            .iter()
            .any(|f| path.join(f).exists());
    if !ours && let Ok(entries) = std::fs::read_dir(path) {
        let others: Vec<String> = entries
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|name| !super::files::written_as_a_run_begins(name))
            .collect();
        if let Some(first) = others.first() {
            let more = match others.len() {
                1 => String::new(),
                n => format!(" and {} more", n - 1),
            };
            return Err(ClaimError(format!(
                "{} already holds other files ({}{more}) and no kalaha results: give a new or \
                 empty folder for the results",
                shown_path(path),
                shown_line(first)
            )));
        }
    }
    Ok(())
}

/// The default results folder: `results/<PREFIX><UTC date-time>`, safe as a file name.
pub fn default_folder(prefix: &str) -> PathBuf {
    let now = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    PathBuf::from("results").join(format!("{prefix}{}", now.replace(':', "-")))
}

/// Creates and returns a fresh default results folder ([`default_folder`]), or with a
/// `-2`, `-3`... suffix when a run started in the same second took that name (the folder
/// is created exclusively, so two runs never share one).
pub fn claim_default_folder(prefix: &str) -> io::Result<PathBuf> {
    let base = default_folder(prefix);
    if let Some(parent) = base.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let mut n = 1u32;
    loop {
        let dir = if n == 1 {
            base.clone()
        } else {
            PathBuf::from(format!("{}-{n}", shown_path(&base)))
        };
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && n < 1000 => n += 1,
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_run_takes_an_empty_folder_and_locks_it() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("r");
        let folder = ResultsFolder::claim(&out, Claim::New).unwrap();
        assert!(out.join(LOGS).is_dir());
        let again = ResultsFolder::claim(&out, Claim::New).unwrap_err();
        assert!(again.0.contains("in use by another run"), "{again}");
        drop(folder);
        ResultsFolder::claim(&out, Claim::Resume).unwrap();
    }

    #[test]
    fn a_folder_with_games_is_taken_only_by_a_resume() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(Files::of(dir.path()).games_jsonl(), "").unwrap();
        let e = ResultsFolder::claim(dir.path(), Claim::New).unwrap_err();
        assert!(
            e.0.contains("continue it with `kalaha tournament --resume"),
            "{e}"
        );
        let e = ResultsFolder::claim(dir.path(), Claim::Session).unwrap_err();
        assert!(e.0.contains("each session has its own folder"), "{e}");
        ResultsFolder::claim(dir.path(), Claim::Resume).unwrap();
    }

    /// What a run writes before its settings are saved whole (a run killed, or stopped by
    /// a full disk, in its first moments) does not keep a new run out; a file of the user's
    /// beside it does.
    #[test]
    fn a_folder_of_a_run_stopped_before_its_settings_takes_a_new_run() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("r");
        std::fs::create_dir_all(out.join(LOGS)).unwrap();
        std::fs::write(out.join(LOGS).join("a.1.log"), "started").unwrap();
        std::fs::write(out.join(LOCK_FILE), "pid 1: kalaha tournament").unwrap();
        std::fs::write(Files::of(&out).played_toml(), "games = 2").unwrap();
        std::fs::write(out.join(".tournament.toml.tmp"), "games =").unwrap();
        check(&out, Claim::New).unwrap();
        drop(ResultsFolder::claim(&out, Claim::New).unwrap());
        std::fs::write(out.join(".notes.tmp"), "mine").unwrap();
        let e = check(&out, Claim::New).unwrap_err();
        assert!(
            e.0.contains("already holds other files (.notes.tmp)"),
            "{e}"
        );
    }

    #[test]
    fn a_folder_of_other_files_or_a_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.txt"), "mine").unwrap();
        let e = check(dir.path(), Claim::New).unwrap_err();
        assert!(e.0.contains("already holds other files (notes.txt)"), "{e}");
        let e = check(&dir.path().join("notes.txt"), Claim::New).unwrap_err();
        assert!(e.0.contains("is a file, not a folder"), "{e}");
    }
}
