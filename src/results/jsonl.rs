//! `games.jsonl`: one [`GameRecord`] per line.

use crate::record::GameRecord;
use std::collections::HashSet;
use std::io::{self, BufRead, BufReader, Seek, SeekFrom};
use std::path::Path;

/// What reading `games.jsonl` found besides the records.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JsonlSummary {
    /// Complete lines read.
    pub lines: u64,
    /// Complete lines that are not a game record.
    pub unreadable: u64,
    /// The file ends in a line without its newline (a write cut short).
    pub torn: bool,
}

/// Reads every complete line of `games.jsonl`, handing each record and its line (with
/// the newline) to `visit`. A missing file reads as empty.
pub fn read_jsonl(path: &Path, visit: impl FnMut(GameRecord, &[u8])) -> io::Result<JsonlSummary> {
    read_jsonl_from(path, 0, visit).map(|(summary, _)| summary)
}

/// [`read_jsonl`] from byte `offset` (the end of a complete line), for a reader that
/// follows a file as it grows; also returns the offset after the last complete line. A
/// line still being written is left for the next read.
pub fn read_jsonl_from(
    path: &Path,
    offset: u64,
    mut visit: impl FnMut(GameRecord, &[u8]),
) -> io::Result<(JsonlSummary, u64)> {
    let with_path = |e: io::Error| {
        io::Error::new(
            e.kind(),
            format!("{}: {e}", crate::record::shown_path(path)),
        )
    };
    let mut f = match crate::input::open_regular(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Ok((JsonlSummary::default(), offset));
        }
        Err(e) => return Err(with_path(e)),
    };
    if offset > 0 {
        f.seek(SeekFrom::Start(offset)).map_err(with_path)?;
    }
    let mut summary = JsonlSummary::default();
    let mut end = offset;
    let mut reader = BufReader::with_capacity(1 << 16, f);
    let mut line = Vec::new();
    loop {
        line.clear();
        let (read, whole) =
            read_line_within(&mut reader, &mut line, MAX_RECORD_BYTES).map_err(with_path)?;
        if read == 0 {
            break;
        }
        if !line.ends_with(b"\n") && whole {
            summary.torn = true;
            break;
        }
        end += read as u64;
        summary.lines += 1;
        if !whole {
            // Longer than any game's record: not one, and not kept in memory.
            summary.unreadable += 1;
            continue;
        }
        match serde_json::from_slice::<GameRecord>(&line) {
            Ok(record) => visit(record, &line),
            Err(_) => summary.unreadable += 1,
        }
    }
    Ok((summary, end))
}

/// The longest line read as a game's record: a record is a few kilobytes (a game of
/// thousands of sowings some hundreds), so a longer line is damage.
pub(super) const MAX_RECORD_BYTES: usize = 16 << 20;

/// Reads one line (with its newline) into `line`, keeping at most `cap` bytes of it.
/// Returns the bytes consumed and whether the whole line was kept (`false`: it was longer
/// than `cap`, and consumed to its end).
fn read_line_within(
    reader: &mut impl BufRead,
    line: &mut Vec<u8>,
    cap: usize,
) -> io::Result<(usize, bool)> {
    let (mut read, mut whole) = (0, true);
    loop {
        let buf = match reader.fill_buf() {
            Ok(buf) => buf,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            return Ok((read, whole));
        }
        let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..=i], true),
            None => (buf, false),
        };
        if whole && line.len() + chunk.len() <= cap {
            line.extend_from_slice(chunk);
        } else {
            whole = false;
            line.clear();
        }
        let n = chunk.len();
        reader.consume(n);
        read += n;
        if done {
            return Ok((read, whole));
        }
    }
}

/// The games of a `games.jsonl`, each once (its first line; a game written twice, as a
/// crash between a write and its sync can leave, is counted in `repeated`).
#[derive(Clone, Debug, Default)]
pub struct Games {
    pub records: Vec<GameRecord>,
    pub summary: JsonlSummary,
    /// Lines of a game already read.
    pub repeated: u64,
}

impl Games {
    /// What was left out, for a warning: `None` when nothing was.
    pub fn skipped(&self) -> Option<String> {
        let mut parts = Vec::new();
        if self.summary.unreadable > 0 {
            parts.push(format!(
                "{} unreadable line{}",
                self.summary.unreadable,
                if self.summary.unreadable == 1 {
                    ""
                } else {
                    "s"
                }
            ));
        }
        if self.repeated > 0 {
            parts.push(format!(
                "{} repeated game{} (the first line of each is used)",
                self.repeated,
                if self.repeated == 1 { "" } else { "s" }
            ));
        }
        if self.summary.torn {
            parts.push("a last line cut short".to_string());
        }
        (!parts.is_empty()).then(|| parts.join(", "))
    }
}

/// Reads the games of `games.jsonl` ([`Games`]). A missing file reads as empty.
pub fn read_games(path: &Path) -> io::Result<Games> {
    let mut seen = HashSet::new();
    let mut games = Games::default();
    games.summary = read_jsonl(path, |rec, _| {
        if seen.insert(rec.game.clone()) {
            games.records.push(rec);
        } else {
            games.repeated += 1;
        }
    })?;
    Ok(games)
}

/// Whether `game` (an id, or a number) names the game of `rec`.
pub fn names_game(rec: &GameRecord, game: &str) -> bool {
    rec.game == game || rec.number.to_string() == game
}

/// The record of one game of a results folder, by id or by number.
pub fn find_game(dir: &Path, game: &str) -> io::Result<Option<GameRecord>> {
    let mut found = None;
    read_jsonl(&dir.join(super::GAMES_JSONL), |rec, _| {
        if found.is_none() && names_game(&rec, game) {
            found = Some(rec);
        }
    })?;
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line longer than any record is counted as unreadable without being held in
    /// memory, and the records after it are read; a folder in its place is refused by name.
    #[test]
    fn an_enormous_line_is_skipped_and_a_folder_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("games.jsonl");
        let record = serde_json::to_string(&crate::record::played_game()).unwrap();
        let mut text = "x".repeat(MAX_RECORD_BYTES + 10);
        text.push('\n');
        text.push_str(&record);
        text.push('\n');
        std::fs::write(&path, &text).unwrap();
        let mut seen = 0;
        let summary = read_jsonl(&path, |_, _| seen += 1).unwrap();
        assert_eq!((summary.lines, summary.unreadable, seen), (2, 1, 1));
        assert!(!summary.torn);

        let folder = dir.path().join("a-folder");
        std::fs::create_dir(&folder).unwrap();
        let e = read_jsonl(&folder, |_, _| {}).unwrap_err().to_string();
        assert!(
            e.contains("a-folder") && e.contains("it is a folder, not a regular file"),
            "{e}"
        );
    }

    #[test]
    fn lines_are_read_whole_within_the_cap() {
        let mut input: &[u8] = b"ab\ncdef\ngh";
        let mut line = Vec::new();
        assert_eq!(
            read_line_within(&mut input, &mut line, 3).unwrap(),
            (3, true)
        );
        assert_eq!(line, b"ab\n");
        line.clear();
        assert_eq!(
            read_line_within(&mut input, &mut line, 3).unwrap(),
            (5, false)
        );
        assert!(line.is_empty());
        assert_eq!(
            read_line_within(&mut input, &mut line, 3).unwrap(),
            (2, true)
        );
        assert_eq!(line, b"gh");
    }
}
