//! One run per results folder: an exclusive lock held for the whole run.
//!
//! The lock is `flock` on `DIR/.lock`, so the kernel releases it when the holding process
//! ends in any way (even `kill -9`); the file also says who holds it, for the message a
//! second run prints.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, Write};
use std::os::fd::AsRawFd;
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

/// An exclusive lock on a results folder, released when dropped.
#[derive(Debug)]
pub struct FolderLock {
    _file: File,
}

impl FolderLock {
    /// Locks `dir` (which must exist) for this process, or says who holds it.
    pub fn acquire(dir: &Path) -> Result<FolderLock, LockError> {
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
        // SAFETY: flock only reads the descriptor, which `file` keeps open.
        let locked = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if locked != 0 {
            let error = io::Error::last_os_error();
            if error.raw_os_error() != Some(libc::EWOULDBLOCK) {
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
        let me = format!(
            "pid {}: {}",
            std::process::id(),
            std::env::args().collect::<Vec<_>>().join(" ")
        );
        file.set_len(0).map_err(io_err)?;
        file.rewind().map_err(io_err)?;
        file.write_all(me.as_bytes()).map_err(io_err)?;
        Ok(FolderLock { _file: file })
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
}
