//! Endgame tables on disk: the folder they are kept in, their file format, loading with a
//! check of the rules and a checksum, saving, and "load it, or build and save it".
//!
//! A table file is a 256-byte text header followed by the table's bytes in rank order:
//!
//! ```text
//! kalaha endgame table 1 pits=6 empty_capture=false sweep=owner k=23 entries=834451800 checksum=0123456789abcdef
//! ```
//!
//! (the line ends with `\n`, the rest of the header is spaces). The folder is the one
//! given (`--tables DIR`), else `$XDG_CACHE_HOME/kalaha`, else `$HOME/.cache/kalaha`. A
//! file whose header does not match its name, its size or its checksum is damaged:
//! [`TableStore::open_or_build`] deletes and rebuilds it. Files are written under a
//! temporary name and renamed into place, so a build that is interrupted leaves no table.
//! A file is mapped into memory, not read: processes using the same table share it.

use super::endgame::{Bytes, EndgameTable, TableRules, max_seeds_within, table_len};
use crate::rules::{Rules, Sweep};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

const HEADER_LEN: usize = 256;

/// Tables up to this size are built in memory when they are needed (in well under a
/// second) and never written to disk.
pub const IN_MEMORY_BYTES: u64 = 16 << 20;

/// The `k` of the endgame table worth using for games under `rules` within `max_bytes`:
/// the largest that fits, but at most half the seeds of the game (past that the search
/// alone is quick, and the table would cost more than it saves). `None` when no table
/// fits or the game is too small to need one.
pub fn planned_seeds(rules: &Rules, max_bytes: u64) -> Option<u32> {
    let k = max_seeds_within(TableRules::of(rules), max_bytes)?;
    let k = k.min(rules.total_seeds() / 2);
    (k >= 2).then_some(k)
}
const FORMAT: u32 = 1;
const MAGIC: &str = "kalaha endgame table";

/// Why a table could not be read, written or found.
#[derive(Debug, thiserror::Error)]
pub enum TableError {
    // `error`, not `source`: the message holds it, so an error chain must not repeat it.
    #[error("failed to {action} {}: {error}", crate::text::shown_path(path))]
    Io {
        action: &'static str,
        path: PathBuf,
        error: std::io::Error,
    },
    #[error(
        "endgame table {} is damaged ({reason}); delete it or run `kalaha tables build` to rebuild it",
        crate::text::shown_path(path)
    )]
    Damaged { path: PathBuf, reason: String },
    #[error(
        "no folder for endgame tables: neither XDG_CACHE_HOME nor HOME is set; give one with --tables DIR"
    )]
    NoFolder,
    #[error("an endgame table for {rules} with k={k} would have more than 2^64 entries")]
    TooLarge { rules: TableRules, k: u32 },
    #[error("the build of the endgame table for {rules} with k={k} was interrupted")]
    Interrupted { rules: TableRules, k: u32 },
}

fn io_err(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> TableError {
    let path = path.to_path_buf();
    move |error| TableError::Io {
        action,
        path,
        error,
    }
}

/// A 64-bit checksum of a table's bytes (four interleaved multiply-xor lanes, so that it
/// runs at memory speed).
pub fn checksum(data: &[u8]) -> u64 {
    const M: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut lanes = [
        0x243f_6a88_85a3_08d3u64,
        0x1319_8a2e_0370_7344,
        0xa409_3822_299f_31d0,
        0x082e_fa98_ec4e_6c89,
    ];
    let mut chunks = data.chunks_exact(32);
    for c in &mut chunks {
        for (l, w) in lanes.iter_mut().zip(c.chunks_exact(8)) {
            let w = u64::from_le_bytes(w.try_into().expect("8 bytes"));
            *l = (*l ^ w).wrapping_mul(M).rotate_left(29);
        }
    }
    let mut h = data.len() as u64;
    for l in lanes {
        h = (h ^ l).wrapping_mul(M).rotate_left(31);
    }
    for &b in chunks.remainder() {
        h = (h ^ b as u64).wrapping_mul(M).rotate_left(17);
    }
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^ (h >> 33)
}

/// A read-only memory mapping of a whole table file.
pub(super) struct Mapping {
    ptr: *mut libc::c_void,
    len: usize,
}

// SAFETY: the mapping is read-only and owned; it is unmapped only on drop.
unsafe impl Send for Mapping {}
unsafe impl Sync for Mapping {}

impl Mapping {
    fn map(file: &File, len: usize) -> std::io::Result<Mapping> {
        use std::os::fd::AsRawFd;
        // SAFETY: a fresh private read-only mapping of an open file; checked for failure.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE,
                file.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Mapping { ptr, len })
    }

    fn all(&self) -> &[u8] {
        // SAFETY: `ptr` maps `len` readable bytes for the life of `self`.
        unsafe { std::slice::from_raw_parts(self.ptr as *const u8, self.len) }
    }

    /// The table's bytes, after the header.
    pub(super) fn data(&self) -> &[u8] {
        &self.all()[HEADER_LEN..]
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly what `map` mapped.
        unsafe {
            libc::munmap(self.ptr, self.len);
        }
    }
}

/// Asks the kernel for huge pages under a large buffer (fewer address-translation misses
/// for the random accesses of a build). Only a hint.
pub(super) fn advise_huge_pages<T>(buf: &[T]) {
    #[cfg(target_os = "linux")]
    {
        let page = 4096usize;
        let start = buf.as_ptr() as usize;
        let aligned = start.div_ceil(page) * page;
        let end = start + std::mem::size_of_val(buf);
        if end > aligned + page {
            // SAFETY: advice on pages inside `buf`; it changes no contents.
            unsafe {
                libc::madvise(
                    aligned as *mut libc::c_void,
                    (end - aligned) / page * page,
                    libc::MADV_HUGEPAGE,
                );
            }
        }
    }
}

/// What a table file says about itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableHeader {
    pub rules: TableRules,
    pub k: u32,
    pub entries: u64,
    pub checksum: u64,
}

impl TableHeader {
    fn to_text(&self) -> String {
        format!(
            "{MAGIC} {FORMAT} pits={} empty_capture={} sweep={} k={} entries={} checksum={:016x}\n",
            self.rules.pits,
            self.rules.empty_capture,
            self.rules.sweep.as_str(),
            self.k,
            self.entries,
            self.checksum
        )
    }

    fn parse(header: &[u8]) -> Result<TableHeader, String> {
        let text = std::str::from_utf8(header).map_err(|_| "the header is not text")?;
        let line = text.split('\n').next().unwrap_or("");
        let rest = line
            .strip_prefix(MAGIC)
            .ok_or("the header does not start with \"kalaha endgame table\"")?;
        let mut words = rest.split_whitespace();
        let format = words.next().ok_or("the header has no format number")?;
        if format != FORMAT.to_string() {
            return Err(format!(
                "format {format}, this version reads format {FORMAT}"
            ));
        }
        let mut fields = std::collections::HashMap::new();
        for w in words {
            let (k, v) = w
                .split_once('=')
                .ok_or_else(|| format!("malformed header field {w:?}"))?;
            fields.insert(k, v);
        }
        let get = |name: &str| {
            fields
                .get(name)
                .copied()
                .ok_or_else(|| format!("the header has no {name}"))
        };
        let num = |name: &str| -> Result<u64, String> {
            get(name)?
                .parse::<u64>()
                .map_err(|_| format!("the header's {name} is not a number"))
        };
        let pits = num("pits")?;
        let empty_capture = match get("empty_capture")? {
            "true" => true,
            "false" => false,
            other => return Err(format!("the header's empty_capture is {other:?}")),
        };
        let sweep: Sweep = get("sweep")?.parse()?;
        let checksum = u64::from_str_radix(get("checksum")?, 16)
            .map_err(|_| "the header's checksum is not hexadecimal")?;
        Ok(TableHeader {
            rules: TableRules {
                pits: u8::try_from(pits).map_err(|_| "the header's pits is too large")?,
                empty_capture,
                sweep,
            },
            k: num("k")? as u32,
            entries: num("entries")?,
            checksum,
        })
    }
}

/// A table file found in a folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableFile {
    pub path: PathBuf,
    pub rules: TableRules,
    pub k: u32,
    /// The file's size in bytes.
    pub size: u64,
}

/// What [`TableStore::open_or_build`] is doing, for a progress display.
#[derive(Debug)]
pub enum TableEvent<'a> {
    /// Checking a table file before use.
    Loading { path: &'a Path },
    /// A file was damaged and is deleted; a new table will be built.
    Damaged { error: &'a TableError },
    /// Building starts: `entries` positions.
    Building {
        rules: TableRules,
        k: u32,
        entries: u64,
    },
    /// Positions built so far.
    Built { done: u64 },
    /// The table was written.
    Saved { path: &'a Path },
}

/// The folder holding endgame tables.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableStore {
    dir: PathBuf,
}

impl TableStore {
    /// Tables in `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> TableStore {
        TableStore { dir: dir.into() }
    }

    /// The default folder: `$XDG_CACHE_HOME/kalaha`, else `$HOME/.cache/kalaha`.
    pub fn default_dir() -> Result<PathBuf, TableError> {
        let non_empty = |v: &str| std::env::var_os(v).filter(|s| !s.is_empty());
        if let Some(x) = non_empty("XDG_CACHE_HOME") {
            return Ok(PathBuf::from(x).join("kalaha"));
        }
        if let Some(h) = non_empty("HOME") {
            return Ok(PathBuf::from(h).join(".cache").join("kalaha"));
        }
        Err(TableError::NoFolder)
    }

    /// `dir` if given, else the default folder.
    pub fn at(dir: Option<&Path>) -> Result<TableStore, TableError> {
        Ok(TableStore::new(match dir {
            Some(d) => d.to_path_buf(),
            None => TableStore::default_dir()?,
        }))
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file name of a table.
    pub fn file_name(rules: TableRules, k: u32) -> String {
        format!(
            "endgame-p{}-{}{}-k{k}.tbl",
            rules.pits,
            rules.sweep.as_str(),
            if rules.empty_capture { "-ec" } else { "" }
        )
    }

    pub fn path(&self, rules: TableRules, k: u32) -> PathBuf {
        self.dir.join(TableStore::file_name(rules, k))
    }

    /// Every table file in the folder (read from the names and sizes only), by rules and
    /// `k`. A missing folder holds none.
    pub fn list(&self) -> Result<Vec<TableFile>, TableError> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io_err("read the folder", &self.dir)(e)),
        };
        let mut files = Vec::new();
        for entry in entries {
            let entry = entry.map_err(io_err("read the folder", &self.dir))?;
            let name = entry.file_name();
            let Some((rules, k)) = name.to_str().and_then(parse_file_name) else {
                continue;
            };
            let size = entry.metadata().map(|m| m.len()).unwrap_or(0);
            files.push(TableFile {
                path: entry.path(),
                rules,
                k,
                size,
            });
        }
        files.sort_by_key(|f| {
            (
                f.rules.pits,
                f.rules.sweep.as_str(),
                f.rules.empty_capture,
                f.k,
            )
        });
        Ok(files)
    }

    /// Reads a table file's header and checks it against the file's name and size (not
    /// the checksum: see [`TableStore::load`]).
    pub fn header(&self, path: &Path) -> Result<TableHeader, TableError> {
        let file = File::open(path).map_err(io_err("open", path))?;
        let size = file.metadata().map_err(io_err("read", path))?.len();
        let mut head = vec![0u8; HEADER_LEN];
        use std::io::Read;
        let got = (&file)
            .take(HEADER_LEN as u64)
            .read(&mut head)
            .map_err(io_err("read", path))?;
        let damaged = |reason: String| TableError::Damaged {
            path: path.to_path_buf(),
            reason,
        };
        if got < HEADER_LEN.min(size as usize) || size < HEADER_LEN as u64 {
            return Err(damaged(format!("{size} bytes, shorter than a header")));
        }
        let header = TableHeader::parse(&head).map_err(damaged)?;
        let named = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(parse_file_name);
        if named != Some((header.rules, header.k)) {
            return Err(damaged(format!(
                "its header says {} k={}, which is not what its name says",
                header.rules, header.k
            )));
        }
        let expected = table_len(header.rules, header.k).ok_or(TableError::TooLarge {
            rules: header.rules,
            k: header.k,
        })?;
        if header.entries != expected {
            return Err(damaged(format!(
                "{} entries, a table of k={} has {expected}",
                header.entries, header.k
            )));
        }
        if size != HEADER_LEN as u64 + expected {
            return Err(damaged(format!(
                "{size} bytes, it should have {}",
                HEADER_LEN as u64 + expected
            )));
        }
        Ok(header)
    }

    /// Maps a table file and checks its header and checksum.
    pub fn load(&self, rules: TableRules, k: u32) -> Result<EndgameTable, TableError> {
        let path = self.path(rules, k);
        let header = self.header(&path)?;
        let file = File::open(&path).map_err(io_err("open", &path))?;
        let size = HEADER_LEN + header.entries as usize;
        let mapping = Mapping::map(&file, size).map_err(io_err("map", &path))?;
        let sum = checksum(mapping.data());
        if sum != header.checksum {
            return Err(TableError::Damaged {
                path,
                reason: format!(
                    "checksum {sum:016x}, the header says {:016x}",
                    header.checksum
                ),
            });
        }
        Ok(EndgameTable::from_bytes(rules, k, Bytes::Mapped(mapping)))
    }

    /// Makes sure a table can be saved here before minutes of building: the folder exists
    /// (or is made) and takes a file. Files of saves that were killed halfway (their
    /// process is gone) are deleted.
    fn prepare_folder(&self) -> Result<(), TableError> {
        std::fs::create_dir_all(&self.dir).map_err(io_err("create the folder", &self.dir))?;
        let probe = self.dir.join(format!(".probe.{}.tmp", std::process::id()));
        std::fs::write(&probe, b"").map_err(io_err("write a file in the folder", &self.dir))?;
        let _ = std::fs::remove_file(&probe);
        for (path, _) in self.unfinished()? {
            let _ = std::fs::remove_file(path);
        }
        Ok(())
    }

    /// Files (and their sizes) of table saves that were killed halfway: `.NAME.PID.tmp`
    /// whose process no longer runs (on Linux; elsewhere none are reported).
    pub fn unfinished(&self) -> Result<Vec<(PathBuf, u64)>, TableError> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io_err("read the folder", &self.dir)(e)),
        };
        let mut out = Vec::new();
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(pid) = name
                .strip_prefix(".endgame-")
                .and_then(|n| n.strip_suffix(".tmp"))
                .and_then(|n| n.rsplit('.').next())
                .and_then(|p| p.parse::<u32>().ok())
            else {
                continue;
            };
            let gone = cfg!(target_os = "linux")
                && pid != std::process::id()
                && !Path::new(&format!("/proc/{pid}")).exists();
            if gone {
                out.push((entry.path(), entry.metadata().map_or(0, |m| m.len())));
            }
        }
        Ok(out)
    }

    /// Writes a table (to a temporary file in the folder, renamed into place) and returns
    /// its path.
    pub fn save(&self, table: &EndgameTable) -> Result<PathBuf, TableError> {
        std::fs::create_dir_all(&self.dir).map_err(io_err("create the folder", &self.dir))?;
        let path = self.path(table.rules(), table.max_seeds());
        let tmp = self.dir.join(format!(
            ".{}.{}.tmp",
            TableStore::file_name(table.rules(), table.max_seeds()),
            std::process::id()
        ));
        let header = TableHeader {
            rules: table.rules(),
            k: table.max_seeds(),
            entries: table.len(),
            checksum: checksum(table.bytes()),
        };
        let mut head = header.to_text().into_bytes();
        assert!(head.len() <= HEADER_LEN, "header fits");
        head.resize(HEADER_LEN, b' ');
        let write = || -> std::io::Result<()> {
            let mut f = std::io::BufWriter::new(File::create(&tmp)?);
            f.write_all(&head)?;
            f.write_all(table.bytes())?;
            f.into_inner().map_err(|e| e.into_error())?.sync_all()
        };
        if let Err(e) = write() {
            let _ = std::fs::remove_file(&tmp);
            return Err(io_err("write", &tmp)(e));
        }
        std::fs::rename(&tmp, &path).map_err(io_err("rename into place", &path))?;
        Ok(path)
    }

    /// Deletes every table file (and leftovers of interrupted builds); returns how many
    /// files and bytes were deleted.
    pub fn clear(&self) -> Result<(usize, u64), TableError> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((0, 0)),
            Err(e) => return Err(io_err("read the folder", &self.dir)(e)),
        };
        let (mut files, mut bytes) = (0, 0);
        for entry in entries {
            let entry = entry.map_err(io_err("read the folder", &self.dir))?;
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            let table = parse_file_name(name).is_some();
            let leftover = name.starts_with(".endgame-") && name.ends_with(".tmp");
            if table || leftover {
                let size = entry.metadata().map(|m| m.len()).unwrap_or(0);
                std::fs::remove_file(entry.path()).map_err(io_err("delete", &entry.path()))?;
                files += 1;
                bytes += size;
            }
        }
        Ok((files, bytes))
    }

    /// The table for `rules` with `k`: loaded if its file is there and sound, otherwise
    /// built with `threads` threads and saved (a damaged file is deleted first). `events`
    /// hears what happens.
    pub fn open_or_build(
        &self,
        rules: TableRules,
        k: u32,
        threads: usize,
        events: &(dyn Fn(TableEvent) + Sync),
        stop: &AtomicBool,
    ) -> Result<EndgameTable, TableError> {
        let path = self.path(rules, k);
        if path.exists() {
            events(TableEvent::Loading { path: &path });
            match self.load(rules, k) {
                Ok(t) => return Ok(t),
                Err(e @ TableError::Damaged { .. }) => {
                    events(TableEvent::Damaged { error: &e });
                    std::fs::remove_file(&path).map_err(io_err("delete", &path))?;
                }
                Err(e) => return Err(e),
            }
        }
        let entries = table_len(rules, k).ok_or(TableError::TooLarge { rules, k })?;
        self.prepare_folder()?;
        events(TableEvent::Building { rules, k, entries });
        let table = EndgameTable::build(
            rules,
            k,
            threads,
            &|done| events(TableEvent::Built { done }),
            stop,
        )
        .ok_or(TableError::Interrupted { rules, k })?;
        let saved = self.save(&table)?;
        events(TableEvent::Saved { path: &saved });
        Ok(table)
    }

    /// The table a solve under `rules` should use within `max_bytes` (see
    /// [`planned_seeds`]): a small one is built in memory; a larger one is loaded from the
    /// folder (the largest there within the budget, if at least the planned size), or
    /// built and saved. `None` when the game needs none.
    pub fn obtain(
        &self,
        rules: &Rules,
        max_bytes: u64,
        threads: usize,
        events: &(dyn Fn(TableEvent) + Sync),
        stop: &AtomicBool,
    ) -> Result<Option<EndgameTable>, TableError> {
        let Some(k) = planned_seeds(rules, max_bytes) else {
            return Ok(None);
        };
        let tr = TableRules::of(rules);
        let len = table_len(tr, k).ok_or(TableError::TooLarge { rules: tr, k })?;
        if len <= IN_MEMORY_BYTES {
            return EndgameTable::build(tr, k, threads, &|_| {}, stop)
                .map(Some)
                .ok_or(TableError::Interrupted { rules: tr, k });
        }
        let larger = self.list()?.into_iter().filter(|f| {
            f.rules == tr && f.k > k && table_len(tr, f.k).is_some_and(|l| l <= max_bytes)
        });
        if let Some(f) = larger.max_by_key(|f| f.k) {
            events(TableEvent::Loading { path: &f.path });
            if let Ok(t) = self.load(tr, f.k) {
                return Ok(Some(t));
            }
        }
        self.open_or_build(tr, k, threads, events, stop).map(Some)
    }

    /// The best table already in the folder for `rules` within `max_bytes`: the largest
    /// `k` whose file fits, checked. Damaged files are skipped (and reported in the error
    /// list returned beside the table).
    pub fn open_best(
        &self,
        rules: TableRules,
        max_bytes: u64,
    ) -> Result<(Option<EndgameTable>, Vec<TableError>), TableError> {
        let mut found: Vec<TableFile> = self
            .list()?
            .into_iter()
            .filter(|f| f.rules == rules && table_len(rules, f.k).is_some_and(|l| l <= max_bytes))
            .collect();
        found.sort_by_key(|f| std::cmp::Reverse(f.k));
        let mut errors = Vec::new();
        for f in found {
            match self.load(rules, f.k) {
                Ok(t) => return Ok((Some(t), errors)),
                Err(e) => errors.push(e),
            }
        }
        Ok((None, errors))
    }
}

/// The rules and `k` of a table file name (see [`TableStore::file_name`]).
fn parse_file_name(name: &str) -> Option<(TableRules, u32)> {
    let rest = name.strip_prefix("endgame-p")?.strip_suffix(".tbl")?;
    let (pits, rest) = rest.split_once('-')?;
    let (rest, k) = rest.rsplit_once("-k")?;
    let (sweep, empty_capture) = match rest.strip_suffix("-ec") {
        Some(s) => (s, true),
        None => (rest, false),
    };
    let rules = TableRules {
        pits: pits.parse().ok()?,
        empty_capture,
        sweep: sweep.parse().ok()?,
    };
    let k: u32 = k.parse().ok()?;
    (TableStore::file_name(rules, k) == name).then_some((rules, k))
}

#[cfg(test)]
mod tests;
