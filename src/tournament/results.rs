//! The results folder: `games.csv` (one row per finished game, appended and synced to disk
//! as each game ends), `games.jsonl` (each game's full record), and their repair on resume.
//!
//! Each game is written to `games.jsonl` first, then to `games.csv`: a row in `games.csv`
//! is what makes a game done. On resume a torn last line is cut off, and `games.jsonl` lines
//! without a `games.csv` row (or repeated) are dropped, so no game id appears twice.

use crate::referee::{GamePlay, GameResult, MoveRecord, Termination};
use crate::report::text_cell;
use crate::rules::{Position, Rules, Side};
use crate::tournament::schedule::format_opening;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// The columns of `games.csv`, in order.
pub const CSV_COLUMNS: [&str; 14] = [
    "game",
    "round",
    "pair",
    "south",
    "north",
    "opening",
    "result",
    "south_score",
    "north_score",
    "plies",
    "termination",
    "loser",
    "detail",
    "duration_ms",
];

/// A finished game with its place in the tournament: what every reporter receives.
#[derive(Clone, Debug)]
pub struct GameRecord {
    /// `<tournament id>-<number>`.
    pub id: String,
    pub number: u64,
    pub round: u64,
    pub pair: u64,
    /// Engine names; `south` moved first.
    pub south: String,
    pub north: String,
    pub play: GamePlay,
}

impl GameRecord {
    /// The faulting engine's name, if any.
    pub fn loser_name(&self) -> Option<&str> {
        self.play.loser.map(|s| match s {
            Side::South => self.south.as_str(),
            Side::North => self.north.as_str(),
        })
    }

    /// The `games.csv` row.
    pub fn csv_row(&self) -> CsvRow {
        let mut detail = self.play.detail.clone();
        if let Some(line) = self
            .play
            .line
            .as_ref()
            .filter(|l| !detail.contains(l.as_str()))
        {
            detail.push_str(" | line: ");
            detail.push_str(&crate::referee::truncate(line, 200));
        }
        CsvRow {
            game: self.id.clone(),
            round: self.round,
            pair: self.pair,
            south: text_cell(&self.south),
            north: text_cell(&self.north),
            opening: format_opening(&self.play.opening),
            result: self.play.result.as_str().to_string(),
            south_score: self.play.south_score,
            north_score: self.play.north_score,
            plies: self.play.plies() as u64,
            termination: self.play.termination.as_str().to_string(),
            loser: text_cell(self.loser_name().unwrap_or("")),
            detail: text_cell(&detail),
            duration_ms: self.play.duration.as_millis() as u64,
        }
    }

    /// The `games.jsonl` record.
    pub fn json(&self) -> JsonRecord {
        JsonRecord {
            game: self.id.clone(),
            number: self.number,
            round: self.round,
            pair: self.pair,
            south: self.south.clone(),
            north: self.north.clone(),
            rules: self.play.rules,
            opening: self.play.opening.clone(),
            moves: self.play.moves.clone(),
            final_position: self.play.final_position,
            result: self.play.result,
            south_score: self.play.south_score,
            north_score: self.play.north_score,
            termination: self.play.termination,
            loser: self.play.loser,
            loser_name: self.loser_name().map(str::to_string),
            detail: self.play.detail.clone(),
            line: self.play.line.clone(),
            duration_ms: self.play.duration.as_millis() as u64,
        }
    }
}

/// The name as given, from a `games.csv` name cell (written with the reports' formula
/// guard, [`text_cell`]).
fn unneutralise(cell: &mut String) {
    if cell.starts_with('\'') && text_cell(&cell[1..]) == *cell {
        cell.remove(0);
    }
}

/// One row of `games.csv`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CsvRow {
    pub game: String,
    pub round: u64,
    pub pair: u64,
    pub south: String,
    pub north: String,
    pub opening: String,
    pub result: String,
    pub south_score: u16,
    pub north_score: u16,
    pub plies: u64,
    pub termination: String,
    pub loser: String,
    pub detail: String,
    pub duration_ms: u64,
}

impl CsvRow {
    pub fn result(&self) -> Option<GameResult> {
        self.result.parse().ok()
    }
}

/// One line of `games.jsonl`: the whole game.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct JsonRecord {
    pub game: String,
    pub number: u64,
    pub round: u64,
    pub pair: u64,
    pub south: String,
    pub north: String,
    pub rules: Rules,
    pub opening: Vec<u8>,
    pub moves: Vec<MoveRecord>,
    pub final_position: Position,
    pub result: GameResult,
    pub south_score: u16,
    pub north_score: u16,
    pub termination: Termination,
    #[serde(default)]
    pub loser: Option<Side>,
    #[serde(default)]
    pub loser_name: Option<String>,
    #[serde(default)]
    pub detail: String,
    #[serde(default)]
    pub line: Option<String>,
    pub duration_ms: u64,
}

/// Appends finished games to `games.jsonl` and `games.csv`, syncing each to disk.
pub struct ResultsWriter {
    csv: File,
    jsonl: File,
}

impl ResultsWriter {
    /// Opens (creating if needed) the files in `dir`; writes the CSV header to a new file.
    pub fn open(dir: &Path) -> io::Result<ResultsWriter> {
        let csv_path = dir.join("games.csv");
        let mut csv = OpenOptions::new()
            .create(true)
            .append(true)
            .read(true)
            .open(&csv_path)?;
        if csv.metadata()?.len() == 0 {
            csv.write_all(header_line().as_bytes())?;
            csv.sync_data()?;
        }
        let jsonl = OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join("games.jsonl"))?;
        Ok(ResultsWriter { csv, jsonl })
    }

    /// Writes one game: its JSON line, then its CSV row, each synced.
    pub fn write(&mut self, game: &GameRecord) -> io::Result<()> {
        let mut line = serde_json::to_string(&game.json())?;
        line.push('\n');
        self.jsonl.write_all(line.as_bytes())?;
        self.jsonl.sync_data()?;
        let mut w = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(Vec::new());
        w.serialize(game.csv_row()).map_err(io::Error::other)?;
        let bytes = w
            .into_inner()
            .map_err(|e| io::Error::other(e.to_string()))?;
        self.csv.write_all(&bytes)?;
        self.csv.sync_data()
    }
}

fn header_line() -> String {
    let mut s = CSV_COLUMNS.join(",");
    s.push('\n');
    s
}

/// Reads `games.csv` (the rows of finished games). A missing file reads as empty.
pub fn read_csv(path: &Path) -> io::Result<Vec<CsvRow>> {
    if !path.exists() {
        return Ok(Vec::new());
    }
    let mut r = csv::ReaderBuilder::new()
        .flexible(true)
        .from_path(path)
        .map_err(io::Error::other)?;
    let mut rows = Vec::new();
    for row in r.deserialize() {
        let mut row: CsvRow = row.map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        unneutralise(&mut row.south);
        unneutralise(&mut row.north);
        unneutralise(&mut row.loser);
        rows.push(row);
    }
    Ok(rows)
}

/// Cuts a torn last line (one without its newline) off a file; returns whether it did.
pub fn repair_torn_tail(path: &Path) -> io::Result<bool> {
    let mut f = match OpenOptions::new().read(true).write(true).open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e),
    };
    let len = f.metadata()?.len();
    if len == 0 {
        return Ok(false);
    }
    // Look back for the last newline, a block at a time.
    let mut end = len;
    let mut buf = vec![0u8; 64 * 1024];
    let mut keep = 0u64;
    'search: while end > 0 {
        let start = end.saturating_sub(buf.len() as u64);
        let n = (end - start) as usize;
        f.seek(SeekFrom::Start(start))?;
        f.read_exact(&mut buf[..n])?;
        for i in (0..n).rev() {
            if buf[i] == b'\n' {
                keep = start + i as u64 + 1;
                break 'search;
            }
        }
        end = start;
    }
    if keep == len {
        return Ok(false);
    }
    f.set_len(keep)?;
    f.sync_all()?;
    Ok(true)
}

/// What a results folder already holds, after repair.
#[derive(Debug, Default)]
pub struct Existing {
    pub rows: Vec<CsvRow>,
    pub done: HashSet<String>,
    /// Lines dropped from `games.jsonl` and whether `games.csv` had a torn line.
    pub dropped_json: usize,
    pub torn_csv: bool,
}

/// Repairs a results folder for resuming and returns the games already done: cuts torn last
/// lines, ignores repeated CSV rows, and keeps in `games.jsonl` exactly one line for each game
/// in `games.csv`.
pub fn repair(dir: &Path) -> io::Result<Existing> {
    let csv_path = dir.join("games.csv");
    let torn_csv = repair_torn_tail(&csv_path)?;
    let all = read_csv(&csv_path)?;
    let mut done = HashSet::new();
    let mut rows = Vec::with_capacity(all.len());
    for row in all {
        if done.insert(row.game.clone()) {
            rows.push(row);
        }
    }
    let dropped_json = filter_jsonl(&dir.join("games.jsonl"), &done)?;
    Ok(Existing {
        rows,
        done,
        dropped_json,
        torn_csv,
    })
}

/// Keeps the first complete line of each game id in `done`; rewrites the file (temporary
/// file and rename) only if something must go.
fn filter_jsonl(path: &Path, done: &HashSet<String>) -> io::Result<usize> {
    let f = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e),
    };
    #[derive(Deserialize)]
    struct Id {
        game: String,
    }
    let mut kept: Vec<Vec<u8>> = Vec::new();
    let mut seen = HashSet::new();
    let mut dropped = 0;
    let mut reader = BufReader::new(f);
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = reader.read_until(b'\n', &mut line)?;
        if n == 0 {
            break;
        }
        let complete = line.ends_with(b"\n");
        let id = serde_json::from_slice::<Id>(&line).ok().map(|i| i.game);
        match id {
            Some(id) if complete && done.contains(&id) && seen.insert(id.clone()) => {
                kept.push(line.clone())
            }
            _ => dropped += 1,
        }
    }
    if dropped > 0 {
        let tmp: PathBuf = path.with_extension("jsonl.tmp");
        let mut out = File::create(&tmp)?;
        for l in &kept {
            out.write_all(l)?;
        }
        out.sync_all()?;
        std::fs::rename(&tmp, path)?;
        if let Some(parent) = path.parent()
            && let Ok(d) = File::open(parent)
        {
            let _ = d.sync_all();
        }
    }
    Ok(dropped)
}

/// Reads the full record of one game from `games.jsonl`: by id, or by number.
pub fn find_game(dir: &Path, game: &str) -> io::Result<Option<JsonRecord>> {
    let f = File::open(dir.join("games.jsonl"))?;
    for line in BufReader::new(f).lines() {
        let line = line?;
        let Ok(rec) = serde_json::from_str::<JsonRecord>(&line) else {
            continue;
        };
        if rec.game == game || rec.number.to_string() == game {
            return Ok(Some(rec));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn record(n: u64) -> GameRecord {
        let rules = Rules::default();
        let pos = Position::start(rules).play(3).unwrap();
        GameRecord {
            id: format!("t-{n}"),
            number: n,
            round: 1,
            pair: n.div_ceil(2),
            south: "a".into(),
            north: "=b".into(),
            play: GamePlay {
                rules,
                opening: vec![3],
                moves: vec![],
                final_position: pos,
                result: GameResult::NorthWins,
                south_score: 1,
                north_score: 0,
                termination: Termination::IllegalMove,
                loser: Some(Side::South),
                detail: "illegal move, \"quoted\"".into(),
                line: Some("{\"type\":\"move\",\"pit\":9}".into()),
                duration: Duration::from_millis(12),
                faulted: [true, false],
            },
        }
    }

    #[test]
    fn header_and_rows() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = ResultsWriter::open(dir.path()).unwrap();
        w.write(&record(1)).unwrap();
        w.write(&record(2)).unwrap();
        drop(w);
        let text = std::fs::read_to_string(dir.path().join("games.csv")).unwrap();
        assert!(text.starts_with(
            "game,round,pair,south,north,opening,result,south_score,north_score,plies,termination,loser,detail,duration_ms\n"
        ));
        let rows = read_csv(&dir.path().join("games.csv")).unwrap();
        assert_eq!(rows.len(), 2);
        // A name that a spreadsheet would run as a formula is written as text, and read
        // back as given.
        assert!(text.contains(",'=b,"), "{text}");
        assert_eq!(rows[0].north, "=b");
        assert_eq!(rows[0].loser, "a");
        assert_eq!(rows[0].termination, "illegal_move");
        assert!(rows[0].detail.contains("line: {\"type\""));
        assert_eq!(rows[0].result(), Some(GameResult::NorthWins));
        let rec = find_game(dir.path(), "t-2").unwrap().unwrap();
        assert_eq!(rec.number, 2);
        assert_eq!(rec.opening, [3]);
    }

    #[test]
    fn repair_cuts_torn_lines_and_orphans() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = ResultsWriter::open(dir.path()).unwrap();
        w.write(&record(1)).unwrap();
        w.write(&record(2)).unwrap();
        drop(w);
        // A game written to the JSON lines but not to the CSV, then a torn CSV row.
        let extra = serde_json::to_string(&record(3).json()).unwrap();
        let mut j = OpenOptions::new()
            .append(true)
            .open(dir.path().join("games.jsonl"))
            .unwrap();
        writeln!(j, "{extra}").unwrap();
        write!(j, "{{\"game\":\"t-4\",\"num").unwrap();
        let mut c = OpenOptions::new()
            .append(true)
            .open(dir.path().join("games.csv"))
            .unwrap();
        write!(c, "t-3,1,2,a,b,3,0-1").unwrap();
        let ex = repair(dir.path()).unwrap();
        assert!(ex.torn_csv);
        assert_eq!(ex.dropped_json, 2);
        assert_eq!(ex.rows.len(), 2);
        assert!(ex.done.contains("t-1") && ex.done.contains("t-2"));
        let j = std::fs::read_to_string(dir.path().join("games.jsonl")).unwrap();
        assert_eq!(j.lines().count(), 2);
        // Writing goes on after the repair, and the header is not repeated.
        let mut w = ResultsWriter::open(dir.path()).unwrap();
        w.write(&record(3)).unwrap();
        let rows = read_csv(&dir.path().join("games.csv")).unwrap();
        assert_eq!(
            rows.iter().map(|r| r.game.as_str()).collect::<Vec<_>>(),
            ["t-1", "t-2", "t-3"]
        );
        assert!(!repair(dir.path()).unwrap().torn_csv);
    }
}
