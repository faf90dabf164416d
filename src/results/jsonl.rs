//! `games.jsonl`: one [`GameRecord`] per line.

use crate::record::GameRecord;
use std::collections::HashSet;
use std::fs::File;
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
    let mut f = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Ok((JsonlSummary::default(), offset));
        }
        Err(e) => return Err(e),
    };
    if offset > 0 {
        f.seek(SeekFrom::Start(offset))?;
    }
    let mut summary = JsonlSummary::default();
    let mut end = offset;
    let mut reader = BufReader::with_capacity(1 << 16, f);
    let mut line = Vec::new();
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        if !line.ends_with(b"\n") {
            summary.torn = true;
            break;
        }
        end += line.len() as u64;
        summary.lines += 1;
        match serde_json::from_slice::<GameRecord>(&line) {
            Ok(record) => visit(record, &line),
            Err(_) => summary.unreadable += 1,
        }
    }
    Ok((summary, end))
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

/// The record of one game of a results folder, by id or by number.
pub fn find_game(dir: &Path, game: &str) -> io::Result<Option<GameRecord>> {
    let mut found = None;
    read_jsonl(&dir.join(super::GAMES_JSONL), |rec, _| {
        if found.is_none() && (rec.game == game || rec.number.to_string() == game) {
            found = Some(rec);
        }
    })?;
    Ok(found)
}
