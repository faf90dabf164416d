//! One run per results folder: an exclusive lock held for the whole run.
//!
//! The lock is `flock` on `DIR/.lock`, so the kernel releases it when the holding process
//! ends in any way (even `kill -9`); the file also says who holds it, for the message a
//! second run prints. A run that ends normally deletes the file (while it still holds the
//! lock); one that crashed leaves it, unlocked, and the next run takes it over. A run that
//! locked a file another one deleted meanwhile tries again on the new file.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, Write};
use std::path::{Path, PathBuf};

/// The lock file's name inside a results folder.
pub const LOCK_FILE: &str = ".lock";

/// Why a folder could not be locked.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("{dir} is in use by another run ({holder}); wait for it to end, or use another folder")]
    Busy { dir: PathBuf, holder: String },
    #[error("failed to lock {path}: {error}")]
    Io { path: PathBuf, error: io::Error },
}

/// An exclusive lock on a results folder, released (and its file deleted) when dropped.
#[derive(Debug)]
pub struct FolderLock {
    file: File,
    path: PathBuf,
}

impl Drop for FolderLock {
    fn drop(&mut self) {
        // Deleted while locked: a run waiting on this file finds it gone and starts over.
        let _ = std::fs::remove_file(&self.path);
        let _ = self.file.unlock();
    }
}

/// Whether `file` is still the file at `path` (not deleted or replaced since it was opened).
fn still_there(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::symlink_metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

impl FolderLock {
    /// Locks `dir` (which must exist) for this process, or says who holds it.
    pub fn acquire(dir: &Path) -> Result<FolderLock, LockError> {
        for _ in 0..100 {
            if let Some(lock) = FolderLock::try_acquire(dir)? {
                return Ok(lock);
            }
        }
        Err(LockError::Io {
            path: dir.join(LOCK_FILE),
            error: io::Error::other("the lock file kept being replaced"),
        })
    }

    /// One attempt: `None` when the file locked was deleted meanwhile.
    fn try_acquire(dir: &Path) -> Result<Option<FolderLock>, LockError> {
        let path = dir.join(LOCK_FILE);
        let io_err = |error| LockError::Io {
            path: path.clone(),
            error,
        };
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io_err)?;
        // `flock` on Linux: released by the kernel when the process ends in any way.
        if let Err(e) = file.try_lock() {
            if let std::fs::TryLockError::Error(error) = e {
                return Err(io_err(error));
            }
            let mut holder = String::new();
            let _ = file.read_to_string(&mut holder);
            let holder = holder.trim();
            return Err(LockError::Busy {
                dir: dir.to_path_buf(),
                holder: if holder.is_empty() {
                    "a process that has not said which".to_string()
                } else {
                    holder.to_string()
                },
            });
        }
        // The program and its command only: the rest of the command line may hold an
        // engine's env.* values, and engines of other runs can read this file.
        let me = format!(
            "pid {}: {}",
            std::process::id(),
            std::env::args().take(2).collect::<Vec<_>>().join(" ")
        );
        if !still_there(&file, &path) {
            return Ok(None);
        }
        file.set_len(0).map_err(io_err)?;
        file.rewind().map_err(io_err)?;
        file.write_all(me.as_bytes()).map_err(io_err)?;
        Ok(Some(FolderLock { file, path }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_is_refused_and_names_the_holder() {
        let dir = tempfile::tempdir().unwrap();
        let held = FolderLock::acquire(dir.path()).unwrap();
        // flock locks belong to the open file: a second open conflicts even in-process.
        let e = FolderLock::acquire(dir.path()).unwrap_err().to_string();
        assert!(
            e.contains("in use by another run")
                && e.contains(&format!("pid {}", std::process::id())),
            "{e}"
        );
        drop(held);
        assert!(FolderLock::acquire(dir.path()).is_ok());
    }

    #[test]
    fn the_file_goes_with_the_lock_and_a_stale_one_is_taken_over() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(LOCK_FILE);
        drop(FolderLock::acquire(dir.path()).unwrap());
        assert!(!path.exists(), "a run that ends deletes its lock file");
        // A crashed run leaves its file, unlocked.
        std::fs::write(&path, "pid 1: kalaha tournament").unwrap();
        let lock = FolderLock::acquire(dir.path()).unwrap();
        assert!(FolderLock::acquire(dir.path()).is_err());
        drop(lock);
        assert!(!path.exists());
    }
}
