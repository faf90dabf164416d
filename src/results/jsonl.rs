//! `games.jsonl`: one [`GameRecord`] per line.

use crate::record::GameRecord;
use std::fs::File;
use std::io::{self, BufRead, BufReader};
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
pub fn read_jsonl(
    path: &Path,
    mut visit: impl FnMut(GameRecord, &[u8]),
) -> io::Result<JsonlSummary> {
    let f = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(JsonlSummary::default()),
        Err(e) => return Err(e),
    };
    let mut summary = JsonlSummary::default();
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
        summary.lines += 1;
        match serde_json::from_slice::<GameRecord>(&line) {
            Ok(record) => visit(record, &line),
            Err(_) => summary.unreadable += 1,
        }
    }
    Ok(summary)
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
