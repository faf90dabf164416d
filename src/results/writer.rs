//! Appending finished games to `games.jsonl` and `games.csv`.

use super::csv_file::{csv_row, header_line};
use super::{GAMES_CSV, GAMES_JSONL};
use crate::record::GameRecord;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Appends finished games to a results folder. [`ResultsWriter::write`] makes a batch of
/// games durable with one `fdatasync` of `games.jsonl`; their `games.csv` rows follow and
/// are synced by [`ResultsWriter::finish`] (after a crash, [`super::repair`] rebuilds rows
/// from `games.jsonl`).
pub struct ResultsWriter {
    csv: File,
    jsonl: File,
    /// Reused for each batch.
    buf: Vec<u8>,
    /// The folder, and the identity (device, inode) of it and of the two files as they
    /// were opened: a folder deleted or replaced under a run is noticed before the next
    /// batch, not written into deleted files until the end.
    dir: PathBuf,
    identities: [(u64, u64); 3],
}

fn identity(m: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (m.dev(), m.ino())
}

impl ResultsWriter {
    /// Opens (creating if needed) the files in `dir`; writes the header of a new
    /// `games.csv`.
    pub fn open(dir: &Path) -> io::Result<ResultsWriter> {
        let mut csv = crate::input::open_to_write(
            &dir.join(GAMES_CSV),
            OpenOptions::new().create(true).append(true),
        )?;
        if csv.metadata()?.len() == 0 {
            csv.write_all(header_line().as_bytes())?;
            csv.sync_data()?;
        }
        let jsonl = crate::input::open_to_write(
            &dir.join(GAMES_JSONL),
            OpenOptions::new().create(true).append(true),
        )?;
        let identities = [
            identity(&std::fs::metadata(dir)?),
            identity(&csv.metadata()?),
            identity(&jsonl.metadata()?),
        ];
        Ok(ResultsWriter {
            csv,
            jsonl,
            buf: Vec::with_capacity(1 << 16),
            dir: dir.to_path_buf(),
            identities,
        })
    }

    /// Whether the folder and its two game files are still the ones this writer opened.
    fn check_still_there(&self) -> io::Result<()> {
        let now = [
            std::fs::metadata(&self.dir).map(|m| identity(&m)),
            std::fs::metadata(self.dir.join(GAMES_CSV)).map(|m| identity(&m)),
            std::fs::metadata(self.dir.join(GAMES_JSONL)).map(|m| identity(&m)),
        ];
        let same = now
            .iter()
            .zip(&self.identities)
            .all(|(n, was)| n.as_ref().ok() == Some(was));
        if same {
            return Ok(());
        }
        Err(io::Error::other(format!(
            "the results folder {} (or its {GAMES_JSONL} or {GAMES_CSV}) was deleted or \
             replaced during the run: the games recorded until then went with it, and no \
             more are written; start the run again, in a folder that stays",
            crate::record::shown_path(&self.dir)
        )))
    }

    /// Writes a batch of games: their records, synced to disk (when this returns, the
    /// games are recorded), then their rows.
    pub fn write(&mut self, games: &[GameRecord]) -> io::Result<()> {
        if games.is_empty() {
            return Ok(());
        }
        self.check_still_there()?;
        self.buf.clear();
        for g in games {
            serde_json::to_writer(&mut self.buf, g)?;
            self.buf.push(b'\n');
        }
        self.jsonl.write_all(&self.buf)?;
        self.jsonl.sync_data()?;
        self.buf.clear();
        for g in games {
            self.buf.extend(csv_row(g));
        }
        self.csv.write_all(&self.buf)
    }

    /// Syncs `games.csv` to disk.
    pub fn finish(&mut self) -> io::Result<()> {
        self.csv.sync_data()?;
        self.check_still_there()
    }
}
