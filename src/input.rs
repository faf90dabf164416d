//! Opening the files kalaha reads and appends to: as regular files only (a FIFO would
//! block the run for ever, a device never end), and reading whole files within a size
//! limit that the error names.
//!
//! The limits: a configuration file (`--config`, `tournament.toml`, `sprt.toml`) holds
//! at most [`CONFIG_LIMIT`] bytes; an openings file or a book at most
//! [`OPENINGS_LIMIT`]. Game files are read line by line, each line within its own limit.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// The largest configuration file kalaha reads: 16 MiB (a `tournament.toml` keeps its
/// openings list).
pub(crate) const CONFIG_LIMIT: u64 = 16 << 20;
/// The largest openings file or book kalaha reads: 8 MiB. A run keeps its openings in its
/// `tournament.toml`, which must stay within [`CONFIG_LIMIT`] for a resume to read it.
pub(crate) const OPENINGS_LIMIT: u64 = 8 << 20;

/// `path` opened with `options` when it is a regular file; a FIFO, socket or device is
/// refused (`InvalidData`, saying what it is; the caller names the path) without
/// blocking on it.
pub(crate) fn open_regular_with(path: &Path, options: &mut OpenOptions) -> io::Result<File> {
    // Non-blocking, so that opening a FIFO with no writer does not wait for one.
    open_checked(path, options.custom_flags(libc::O_NONBLOCK))
}

/// `path` opened with `options` (non-blocking among its flags), checked to be a regular
/// file, then made blocking.
fn open_checked(path: &Path, options: &OpenOptions) -> io::Result<File> {
    let file = options.open(path)?;
    let kind = file.metadata()?.file_type();
    if !kind.is_file() {
        let what = if kind.is_fifo() {
            "a FIFO"
        } else if kind.is_socket() {
            "a socket"
        } else if kind.is_char_device() || kind.is_block_device() {
            "a device"
        } else if kind.is_dir() {
            "a folder"
        } else {
            "not a regular file"
        };
        // Bad input, as the callers treat bad data (exit 2), not a failure to write.
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("it is {what}, not a regular file"),
        ));
    }
    crate::sys::set_nonblocking(&file, false)?;
    Ok(file)
}

/// A file of a results folder opened with `options` to be written (see
/// [`open_regular_with`]), never through a symbolic link: a link put in the folder (by
/// another user of a shared folder) would send what kalaha writes, perhaps as root, to a
/// file elsewhere. A link is refused (`InvalidData`).
pub(crate) fn open_to_write(path: &Path, options: &mut OpenOptions) -> io::Result<File> {
    match open_checked(
        path,
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW),
    ) {
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "it is a symbolic link: kalaha writes only the files of the folder itself; \
             remove the link",
        )),
        other => other,
    }
}

/// `path` opened for reading when it is a regular file (see [`open_regular_with`]).
pub(crate) fn open_regular(path: &Path) -> io::Result<File> {
    open_regular_with(path, OpenOptions::new().read(true))
}

/// The whole of the regular file `path`, refused when it is longer than `limit` bytes.
pub(crate) fn read_limited(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    open_regular(path)?
        .take(limit + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "it is longer than the {} MiB kalaha reads of such a file",
                limit >> 20
            ),
        ));
    }
    Ok(bytes)
}

/// [`read_limited`] as UTF-8 text.
pub(crate) fn read_text_limited(path: &Path, limit: u64) -> io::Result<String> {
    String::from_utf8(read_limited(path, limit)?)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "it is not UTF-8 text"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_or_device_is_refused_at_once_and_a_long_file_by_its_limit() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("games.csv");
        crate::sys::make_fifo(&fifo).unwrap();
        let e = open_regular(&fifo).unwrap_err();
        assert!(
            e.to_string().contains("is a FIFO, not a regular file"),
            "{e}"
        );
        let e = read_limited(Path::new("/dev/zero"), 10).unwrap_err();
        assert!(e.to_string().contains("is a device"), "{e}");
        let long = dir.path().join("long");
        std::fs::write(&long, vec![b'x'; 2 << 20]).unwrap();
        let e = read_limited(&long, 1 << 20).unwrap_err();
        assert!(e.to_string().contains("longer than the 1 MiB"), "{e}");
        assert_eq!(read_limited(&long, 2 << 20).unwrap().len(), 2 << 20);
    }
}
