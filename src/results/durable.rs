//! The one way kalaha replaces a whole file (`tournament.toml`, `sprt-result.toml`, the
//! leaderboards, a rebuilt `games.csv`, a book): the new text goes to a hidden temporary
//! file beside it, is synced, renamed over the old file, and the folder is synced. A reader
//! or a crash sees the old file or the new one, never half of one, and no temporary file
//! is left behind when a write fails (a full disk, above all).

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The temporary file beside `path` that [`write_file`] writes first: `.NAME.tmp`, hidden
/// from a listing of the folder.
pub fn temporary_path(path: &Path) -> PathBuf {
    let mut name = std::ffi::OsString::from(".");
    name.push(path.file_name().unwrap_or_default());
    name.push(".tmp");
    path.with_file_name(name)
}

/// A new, empty temporary file at `tmp`. Whatever was left there (a stale temporary file,
/// or a symbolic link, FIFO or device someone put in its place) is removed, not opened: a
/// link would send the write out of the folder, and a FIFO would block it for ever. The
/// file is then created only if nothing is there (`O_EXCL`, which follows no link).
fn new_temporary(tmp: &Path) -> io::Result<File> {
    match std::fs::remove_file(tmp) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => {
            return Err(io::Error::new(
                e.kind(),
                format!("cannot remove what is at {}: {e}", tmp.display()),
            ));
        }
    }
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(tmp)
}

/// How every command says that a write failed for a full disk: "the disk is full", in so
/// many words, with the error; `None` for any other failure. The caller adds what is kept
/// and what to do.
pub fn full_disk(error: &io::Error) -> Option<String> {
    (error.kind() == io::ErrorKind::StorageFull).then(|| format!("the disk is full ({error})"))
}

/// Replaces `path` with `bytes` (see the module's doc). The error is the I/O error's own;
/// callers name the path.
pub fn write_file(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_with(path, |w| w.write_all(bytes))
}

/// Replaces `path` with what `fill` writes (buffered), as [`write_file`] does.
pub fn write_with(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let tmp = temporary_path(path);
    let written = (|| {
        let mut w = io::BufWriter::with_capacity(1 << 16, new_temporary(&tmp)?);
        fill(&mut w)?;
        let file = w.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    // The rename is durable once the folder is synced; a folder that cannot be opened for
    // that (rare, never on Linux) leaves it to the next sync of the file system.
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if let Ok(d) = File::open(folder) {
        d.sync_all()?;
    }
    Ok(())
}

/// Writes `bytes` as `path` unless `path` already exists, durably: the first of several
/// writers (processes on several machines that share the folder) wins, and the others
/// find its file. The bytes go first to `.NAME.TAG` beside it with [`write_file`] (`tag`
/// tells the writers apart), which is then linked as `path` (a link is never made over an
/// existing file) and removed. Returns whether this writer's file is `path`.
pub fn write_new_file(path: &Path, bytes: &[u8], tag: &str) -> io::Result<bool> {
    if path.exists() {
        return Ok(false);
    }
    let mut name = std::ffi::OsString::from(".");
    name.push(path.file_name().unwrap_or_default());
    name.push(format!(".{tag}"));
    let staged = path.with_file_name(name);
    write_file(&staged, bytes)?;
    let linked = std::fs::hard_link(&staged, path);
    let _ = std::fs::remove_file(&staged);
    match linked {
        Ok(()) => {
            let folder = match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p,
                _ => Path::new("."),
            };
            if let Ok(d) = File::open(folder) {
                d.sync_all()?;
            }
            Ok(true)
        }
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A link or a FIFO put where the temporary file goes is removed, not written
    /// through: the file outside stays as it was, and the write does not wait on the FIFO.
    #[test]
    fn a_link_or_fifo_in_place_of_the_temporary_file_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside.txt");
        std::fs::write(&outside, "precious").unwrap();
        let folder = dir.path().join("run");
        std::fs::create_dir(&folder).unwrap();
        let path = folder.join("standings.csv");
        std::os::unix::fs::symlink(&outside, temporary_path(&path)).unwrap();
        write_file(&path, b"rank,engine\n").unwrap();
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "precious");
        assert!(std::fs::symlink_metadata(&path).unwrap().is_file());
        assert_eq!(std::fs::read(&path).unwrap(), b"rank,engine\n");
        // A FIFO: the write would block until someone opened its other end.
        crate::sys::make_fifo(&temporary_path(&path)).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let p = path.clone();
        std::thread::spawn(move || tx.send(write_file(&p, b"again\n").map_err(|e| e.to_string())));
        let written = rx
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("the write waited on the FIFO");
        assert_eq!(written, Ok(()));
        assert_eq!(std::fs::read(&path).unwrap(), b"again\n");
        assert!(!temporary_path(&path).exists());
    }

    #[test]
    fn the_first_writer_of_a_new_file_wins() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("verdict.toml");
        assert!(write_new_file(&path, b"first", "1").unwrap());
        assert!(!write_new_file(&path, b"second", "2").unwrap());
        assert_eq!(std::fs::read(&path).unwrap(), b"first");
        // Racing writers: exactly one wins, and the file is whole.
        let path = dir.path().join("raced.toml");
        let won: Vec<bool> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|i| {
                    let path = &path;
                    s.spawn(move || {
                        write_new_file(path, format!("writer {i}").as_bytes(), &i.to_string())
                            .unwrap()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(won.iter().filter(|w| **w).count(), 1);
        let winner = won.iter().position(|w| *w).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            format!("writer {winner}")
        );
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
    }

    #[test]
    fn a_file_is_replaced_whole_and_no_temporary_file_stays() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.toml");
        write_file(&path, b"one").unwrap();
        write_file(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["a.toml"]);
    }

    #[test]
    fn a_full_disk_is_said_in_so_many_words_and_nothing_else_is() {
        let full = io::Error::new(io::ErrorKind::StorageFull, "no space");
        assert_eq!(
            full_disk(&full).as_deref(),
            Some("the disk is full (no space)")
        );
        let denied = io::Error::new(io::ErrorKind::PermissionDenied, "denied");
        assert_eq!(full_disk(&denied), None);
    }

    #[test]
    fn a_failed_write_keeps_the_old_file_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.csv");
        write_file(&path, b"old").unwrap();
        let e = write_with(&path, |w| {
            w.write_all(b"half")?;
            Err(io::Error::new(io::ErrorKind::StorageFull, "full"))
        })
        .unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::StorageFull);
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        assert!(!temporary_path(&path).exists());
        assert_eq!(temporary_path(&path), dir.path().join(".a.csv.tmp"));
    }
}
