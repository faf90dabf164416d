//! Bringing a results folder back to a consistent state before a run continues it.
//!
//! `games.jsonl` is the record: a game is recorded once its line is complete there.
//! `games.csv` follows it. After a crash (or a user's mistake) the two can disagree; repair
//! cuts torn last lines, drops repeated lines of one game, appends the `games.csv` rows of
//! recorded games that lack one (so an emptied or deleted `games.csv` is rebuilt), and keeps
//! rows that have no record (their games count as played). Nothing recorded is dropped;
//! everything unusual is counted in [`Repaired`].

use super::csv_file::{MAX_ROW_BYTES, csv_row, header_line};
use super::jsonl::read_jsonl;
use super::{GAMES_CSV, GAMES_JSONL};
use crate::record::{GameRecord, clean_text};
use std::collections::HashSet;
use std::fs::OpenOptions;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::Path;

/// What [`repair`] found and did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Repaired {
    /// Ids of the games of this tournament that are done (recorded, or with a row).
    pub done: HashSet<String>,
    /// A torn last line was cut off `games.jsonl` / `games.csv`.
    pub torn_jsonl: bool,
    pub torn_csv: bool,
    /// Repeated lines of one game dropped from `games.jsonl` / `games.csv`.
    pub repeated_records: u64,
    pub repeated_rows: u64,
    /// Lines of `games.jsonl` that are not a game record (kept, not counted).
    pub unreadable_records: u64,
    /// `games.csv` rows written again from `games.jsonl`.
    pub rows_rebuilt: u64,
    /// `games.csv` rows that disagreed with their record and were written again from it
    /// (`games.jsonl` is the record; `games.csv` its view).
    pub rows_corrected: u64,
    /// `games.csv` rows of this tournament whose game has no line in `games.jsonl`: not
    /// games that were recorded, so taken out of `games.csv` and played again (in a folder
    /// without `games.jsonl` at all, written before it was kept, they count as played).
    pub rows_without_record: u64,
    /// Whether the folder keeps `games.jsonl` (the record), which then decides.
    pub has_record: bool,
    /// Games of another tournament id (kept in the files, not counted).
    pub foreign: u64,
    /// Records of this tournament that do not replay under their rules (edited or
    /// damaged): how many, and the first with the reason.
    pub unplayable: u64,
    pub first_unplayable: Option<String>,
    /// Their ids: done (not played again) but not counted.
    pub unplayable_games: HashSet<String>,
    /// Records of this tournament that replay but that its schedule could not have played
    /// (an engine not in it, an engine against itself, a number outside the schedule):
    /// done (not played again) but not counted, and no row of `games.csv`.
    pub misfits: u64,
    /// `games.csv` rows of records that do not replay or could not have been played, taken
    /// out of it (`games.csv` shows the games the run counts).
    pub rows_excluded: u64,
    /// The rules this tournament's records were played under (each once).
    pub rules_played: Vec<crate::rules::Rules>,
}

impl Repaired {
    /// One line per thing worth telling the user.
    pub fn notes(&self) -> Vec<String> {
        let mut v = Vec::new();
        if self.torn_jsonl || self.torn_csv {
            v.push("cut a line left incomplete by an interrupted write".to_string());
        }
        if self.repeated_records + self.repeated_rows > 0 {
            v.push(format!(
                "dropped {} repeated line(s) of games already recorded",
                self.repeated_records + self.repeated_rows
            ));
        }
        if self.rows_rebuilt > 0 {
            v.push(format!(
                "rebuilt {} games.csv row(s) from games.jsonl",
                self.rows_rebuilt
            ));
        }
        if self.rows_corrected > 0 {
            v.push(format!(
                "{} games.csv row(s) disagreed with their record in games.jsonl and were \
                 written again from it (games.jsonl is the record, games.csv its view)",
                self.rows_corrected
            ));
        }
        if self.rows_without_record > 0 && self.has_record {
            v.push(format!(
                "{} row(s) of games.csv have no record in games.jsonl: games.jsonl is the \
                 record, so they were taken out of games.csv and their games are played again",
                self.rows_without_record
            ));
        } else if self.rows_without_record > 0 {
            v.push(format!(
                "{} game(s) in games.csv have no record (the folder has no games.jsonl): they \
                 count, but `kalaha show` cannot replay them",
                self.rows_without_record
            ));
        }
        if self.unreadable_records > 0 {
            v.push(format!(
                "{} line(s) of games.jsonl are not game records (left in place, ignored)",
                self.unreadable_records
            ));
        }
        if let Some(first) = &self.first_unplayable {
            v.push(format!(
                "{} game(s) of games.jsonl do not replay under their rules, so the file was \
                 edited or damaged (the first: {first}): they are not counted (nor rated by \
                 `kalaha ratings`), and not played again unless their lines are deleted",
                self.unplayable
            ));
        }
        if self.foreign > 0 {
            v.push(format!(
                "{} game(s) of another tournament id are in the files (left in place, ignored)",
                self.foreign
            ));
        }
        v
    }
}

/// Whether `game` is an id of tournament `id` (`<id>-<number>`).
pub(crate) fn belongs_to(game: &str, id: &str) -> bool {
    game.strip_prefix(id)
        .and_then(|rest| rest.strip_prefix('-'))
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Whether tournament `id` of the engines `names` could have played the game of `row`:
/// two different engines of it, and an id `<id>-<n>` with `n` a game of its schedule
/// (`scheduled(n)`; any `n` without one: a session of `kalaha play` has no end planned). A recorded game that
/// fails this was edited in, or is of another run: neither a resume nor `kalaha ratings`
/// counts it.
pub fn could_have_played(
    row: &crate::record::GameRow<'_>,
    id: &str,
    names: &[String],
    scheduled: Option<&dyn Fn(u64) -> bool>,
) -> bool {
    let number = row
        .game
        .strip_prefix(id)
        .and_then(|rest| rest.strip_prefix('-'))
        .and_then(|n| n.parse::<u64>().ok());
    row.south != row.north
        && names.iter().any(|n| n == row.south)
        && names.iter().any(|n| n == row.north)
        && number.is_some_and(|n| scheduled.is_none_or(|has| has(n)))
}

/// Repairs the results folder `dir` of tournament `id` (see the module documentation) and
/// returns what it holds; `fits` says whether the run could have played a game (see
/// [`could_have_played`]). Fails with `InvalidData` when `games.csv` is not a games file.
pub fn repair(
    dir: &Path,
    id: &str,
    fits: &dyn Fn(&crate::record::GameRow<'_>) -> bool,
) -> io::Result<Repaired> {
    let mut r = Repaired::default();
    let jsonl_path = dir.join(GAMES_JSONL);
    let csv_path = dir.join(GAMES_CSV);
    r.has_record = jsonl_path.exists();
    r.torn_jsonl = cut_torn_tail(&jsonl_path)?;
    r.torn_csv = cut_torn_tail(&csv_path)?;

    // The records, first line of each game kept.
    let mut seen = HashSet::new();
    let mut unplayable: HashSet<String> = HashSet::new();
    // Records that make no row: those that do not replay, and those the run could not
    // have played.
    let mut excluded: HashSet<String> = HashSet::new();
    let mut records = Vec::new();
    let mut kept_lines: Vec<u8> = Vec::new();
    let summary = read_jsonl(&jsonl_path, |rec, line| {
        if !seen.insert(rec.game.clone()) {
            r.repeated_records += 1;
            return;
        }
        kept_lines.extend_from_slice(line);
        if belongs_to(&rec.game, id) {
            if !r.rules_played.contains(&rec.rules) {
                r.rules_played.push(rec.rules);
            }
            if let Err(e) = rec.replay() {
                r.unplayable += 1;
                if r.first_unplayable.is_none() {
                    r.first_unplayable = Some(format!("game {}: {e}", clean_text(&rec.game)));
                }
                // Not a game that could have been played: no row is made from it.
                unplayable.insert(rec.game.clone());
                excluded.insert(rec.game.clone());
            } else if !fits(&rec.row()) {
                r.misfits += 1;
                excluded.insert(rec.game.clone());
            }
            records.push(rec);
        } else {
            r.foreign += 1;
        }
    })?;
    r.unreadable_records = summary.unreadable;
    if r.repeated_records > 0 && r.unreadable_records == 0 {
        super::write_file(&jsonl_path, &kept_lines)?;
    }

    // The rows, as they are, first row of each game kept.
    let (header, rows) = read_rows(&csv_path)?;
    let by_id: std::collections::HashMap<&str, &GameRecord> =
        records.iter().map(|rec| (rec.game.as_str(), rec)).collect();
    let mut row_ids = HashSet::new();
    let mut kept_rows = Vec::new();
    for (game, mut raw) in rows {
        if !row_ids.insert(game.clone()) {
            r.repeated_rows += 1;
            continue;
        }
        if !belongs_to(&game, id) {
            if !seen.contains(&game) {
                r.foreign += 1;
            }
        } else {
            if !seen.contains(&game) {
                r.rows_without_record += 1;
                if r.has_record {
                    // Not a recorded game: out of games.csv, and played again.
                    continue;
                }
            }
            if excluded.contains(&game) {
                // The record makes no row: the row goes.
                r.rows_excluded += 1;
                r.done.insert(game);
                continue;
            }
            // A row is its record's view: one that says otherwise is written again.
            if let Some(rec) = by_id.get(game.as_str()) {
                let row = csv_row(rec);
                if row != raw {
                    r.rows_corrected += 1;
                    raw = row;
                }
            }
            r.done.insert(game);
        }
        kept_rows.push(raw);
    }
    let missing: Vec<_> = records
        .iter()
        .filter(|rec| !row_ids.contains(&rec.game) && !excluded.contains(&rec.game))
        .collect();
    r.rows_rebuilt = missing.len() as u64;
    r.done.extend(records.iter().map(|rec| rec.game.clone()));
    r.unplayable_games = unplayable;

    let dropped = r.has_record && r.rows_without_record > 0;
    if r.repeated_rows > 0 || r.rows_corrected > 0 || r.rows_excluded > 0 || dropped || !header {
        let mut text = header_line().into_bytes();
        for raw in &kept_rows {
            text.extend_from_slice(raw);
        }
        for rec in &missing {
            text.extend(csv_row(rec));
        }
        super::write_file(&csv_path, &text)?;
    } else if !missing.is_empty() {
        let mut f = crate::input::open_to_write(&csv_path, OpenOptions::new().append(true))
            .map_err(|e| named(&csv_path, e))?;
        for rec in &missing {
            f.write_all(&csv_row(rec))?;
        }
        f.sync_all()?;
    }
    Ok(r)
}

/// A row of `games.csv`: its game id, and its bytes with the newline.
type RawRow = (String, Vec<u8>);

/// The rows of `games.csv` as `(game id, the row's bytes with its newline)`, and whether
/// the file has its header (a missing or empty file has none). A file whose first line is
/// neither the header nor empty is refused, as is a row longer than any kalaha writes
/// ([`super::csv_file::MAX_ROW_BYTES`]), which is never held in memory.
fn read_rows(path: &Path) -> io::Result<(bool, Vec<RawRow>)> {
    let file = match crate::input::open_regular(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok((false, Vec::new())),
        Err(e) => return Err(named(path, e)),
    };
    let mut input = io::BufReader::with_capacity(1 << 16, file);
    let header = header_line();
    // The header is checked before any row is read.
    let start = io::BufRead::fill_buf(&mut input).map_err(|e| named(path, e))?;
    if start.is_empty() {
        return Ok((false, Vec::new()));
    }
    let known = start.len().min(header.len());
    if start[..known] != header.as_bytes()[..known] {
        return Err(not_games_csv(path));
    }
    let mut rows_read = super::CsvRows::new(input, MAX_ROW_BYTES).keeping_raw();
    let mut rows = Vec::new();
    let mut record = csv::ByteRecord::new();
    let mut first = true;
    while let Some(row) = rows_read.read(&mut record).map_err(|e| named(path, e))? {
        let line = match row {
            super::Row::Read { line } => line,
            super::Row::TooLong { line } => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "{}:{line}: {}",
                        crate::record::shown_path(path),
                        super::csv_file::row_too_long()
                    ),
                ));
            }
        };
        if first {
            first = false;
            if line != 1 || rows_read.raw() != header.as_bytes() {
                return Err(not_games_csv(path));
            }
            continue;
        }
        let game = String::from_utf8_lossy(record.get(0).unwrap_or_default()).into_owned();
        let game = super::from_text_cell(&game).to_string();
        rows.push((game, rows_read.raw().to_vec()));
    }
    Ok((true, rows))
}

/// The error of a `games.csv` that does not start with its header.
fn not_games_csv(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!(
            "{} does not start with the games.csv header: move it away and resume again \
             (it is rebuilt from games.jsonl)",
            crate::record::shown_path(path)
        ),
    )
}

/// `e`, with the file it is about.
fn named(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(
        e.kind(),
        format!("{}: {e}", crate::record::shown_path(path)),
    )
}

/// Cuts a torn last line (one without its newline) off a file; returns whether it did.
fn cut_torn_tail(path: &Path) -> io::Result<bool> {
    let mut f = match crate::input::open_to_write(path, OpenOptions::new().read(true).write(true)) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(named(path, e)),
    };
    let len = f.metadata()?.len();
    // Look back for the last newline, a block at a time.
    let mut end = len;
    let mut buf = vec![0u8; 64 * 1024];
    let mut keep = 0u64;
    'search: while end > 0 {
        let start = end.saturating_sub(buf.len() as u64);
        let n = (end - start) as usize;
        f.seek(SeekFrom::Start(start))?;
        f.read_exact(&mut buf[..n])?;
        if let Some(i) = buf[..n].iter().rposition(|&b| b == b'\n') {
            keep = start + i as u64 + 1;
            break 'search;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{ResultsWriter, sample_record};

    fn ids(dir: &Path) -> Vec<String> {
        let mut v = Vec::new();
        crate::results::read_games_csv(&dir.join(GAMES_CSV), |r| v.push(r.game.to_string()))
            .unwrap();
        v
    }

    fn write(dir: &Path, ns: &[u64]) {
        let mut w = ResultsWriter::open(dir).unwrap();
        let games: Vec<_> = ns
            .iter()
            .map(|&n| sample_record("t", n, "a", "b"))
            .collect();
        w.write(&games).unwrap();
        w.finish().unwrap();
    }

    #[test]
    fn ids_belong_to_their_tournament() {
        assert!(belongs_to("t-1", "t"));
        assert!(belongs_to("a-b-12", "a-b"));
        assert!(!belongs_to("t-x", "t"));
        assert!(!belongs_to("tt-1", "t"));
        assert!(!belongs_to("t-", "t"));
    }

    /// A row of games.csv longer than any kalaha writes is refused by its file and line,
    /// saying what to do, before anything is changed.
    #[test]
    fn a_row_too_long_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), &[1, 2]);
        let csv = dir.path().join(GAMES_CSV);
        let before = std::fs::read(&csv).unwrap();
        let mut long = csv_row(&sample_record("t", 3, "a", "b"));
        long.splice(0..0, vec![b'9'; MAX_ROW_BYTES]);
        let mut text = before.clone();
        text.extend_from_slice(&long);
        std::fs::write(&csv, &text).unwrap();
        let e = repair(dir.path(), "t", &|_| true).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        assert_eq!(
            e.to_string(),
            format!(
                "{}:4: {}",
                crate::record::shown_path(&csv),
                super::super::csv_file::row_too_long()
            )
        );
        assert_eq!(std::fs::read(&csv).unwrap(), text);
    }

    #[test]
    fn torn_lines_are_cut_and_missing_rows_rebuilt() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), &[1, 2]);
        // A game recorded but whose row was never written, then torn lines in both files.
        let extra = serde_json::to_string(&sample_record("t", 3, "a", "b")).unwrap();
        let mut j = OpenOptions::new()
            .append(true)
            .open(dir.path().join(GAMES_JSONL))
            .unwrap();
        writeln!(j, "{extra}").unwrap();
        write!(j, "{{\"game\":\"t-4\",\"num").unwrap();
        let mut c = OpenOptions::new()
            .append(true)
            .open(dir.path().join(GAMES_CSV))
            .unwrap();
        write!(c, "t-4,1,2,a,b,3,0-1").unwrap();
        let r = repair(dir.path(), "t", &|_| true).unwrap();
        assert!(r.torn_csv && r.torn_jsonl);
        assert_eq!(r.rows_rebuilt, 1);
        assert_eq!(r.done.len(), 3);
        assert_eq!(ids(dir.path()), ["t-1", "t-2", "t-3"]);
        // Nothing left to do the second time.
        let again = repair(dir.path(), "t", &|_| true).unwrap();
        assert_eq!(again.notes(), Vec::<String>::new());
        assert_eq!(again.done, r.done);
    }

    #[test]
    fn an_emptied_or_deleted_games_csv_is_rebuilt_not_replayed() {
        for damage in ["delete", "empty", "header only"] {
            let dir = tempfile::tempdir().unwrap();
            write(dir.path(), &[1, 2, 3]);
            let csv = dir.path().join(GAMES_CSV);
            match damage {
                "delete" => std::fs::remove_file(&csv).unwrap(),
                "empty" => std::fs::write(&csv, "").unwrap(),
                _ => std::fs::write(&csv, header_line()).unwrap(),
            }
            let r = repair(dir.path(), "t", &|_| true).unwrap();
            assert_eq!(r.rows_rebuilt, 3, "{damage}");
            assert_eq!(r.done.len(), 3, "{damage}");
            assert_eq!(ids(dir.path()), ["t-1", "t-2", "t-3"], "{damage}");
            let jsonl = std::fs::read_to_string(dir.path().join(GAMES_JSONL)).unwrap();
            assert_eq!(jsonl.lines().count(), 3, "{damage}");
        }
    }

    #[test]
    fn nothing_recorded_is_dropped_and_oddities_are_counted() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), &[1, 2]);
        // games.jsonl lost; a repeated row; a row of another tournament.
        std::fs::remove_file(dir.path().join(GAMES_JSONL)).unwrap();
        let csv = dir.path().join(GAMES_CSV);
        let mut text = std::fs::read_to_string(&csv).unwrap();
        let second = text.lines().nth(2).unwrap().to_string();
        text.push_str(&format!("{second}\n"));
        text.push_str(&String::from_utf8(csv_row(&sample_record("other", 9, "a", "b"))).unwrap());
        std::fs::write(&csv, text).unwrap();
        let r = repair(dir.path(), "t", &|_| true).unwrap();
        assert_eq!(r.rows_without_record, 2);
        assert_eq!(r.repeated_rows, 1);
        assert_eq!(r.foreign, 1);
        assert_eq!(r.done.len(), 2);
        assert_eq!(ids(dir.path()), ["t-1", "t-2", "other-9"]);
        assert_eq!(r.notes().len(), 3, "{:?}", r.notes());
    }

    /// In a folder that keeps its record, a `games.csv` row without one is not a recorded
    /// game: it is taken out of `games.csv`, not counted, and its game is played again.
    #[test]
    fn a_row_without_a_record_is_taken_out_where_the_record_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), &[1, 2]);
        let csv = dir.path().join(GAMES_CSV);
        let mut text = std::fs::read_to_string(&csv).unwrap();
        text.push_str(&String::from_utf8(csv_row(&sample_record("t", 3, "a", "b"))).unwrap());
        std::fs::write(&csv, text).unwrap();
        let r = repair(dir.path(), "t", &|_| true).unwrap();
        assert_eq!(r.rows_without_record, 1);
        assert!(!r.done.contains("t-3"), "{:?}", r.done);
        assert_eq!(r.done.len(), 2);
        assert_eq!(ids(dir.path()), ["t-1", "t-2"]);
        assert!(
            r.notes().iter().any(|n| n.contains("played again")),
            "{:?}",
            r.notes()
        );
    }

    /// A record edited so that it no longer replays is reported on resume (it still
    /// counts as recorded).
    #[test]
    fn an_edited_record_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), &[1, 2]);
        let path = dir.path().join(GAMES_JSONL);
        let text = std::fs::read_to_string(&path).unwrap();
        let mut lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        lines[1]["north_score"] = serde_json::json!(lines[1]["north_score"].as_u64().unwrap() - 2);
        let edited: String = lines.iter().map(|v| format!("{v}\n")).collect();
        std::fs::write(&path, edited).unwrap();
        let r = repair(dir.path(), "t", &|_| true).unwrap();
        assert_eq!(r.unplayable, 1);
        assert_eq!(r.done.len(), 2);
        let notes = r.notes().join("\n");
        assert!(
            notes.contains("1 game(s) of games.jsonl do not replay"),
            "{notes}"
        );
        assert!(notes.contains("game t-2: its sowings end"), "{notes}");
    }

    #[test]
    fn a_file_that_is_not_games_csv_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(GAMES_CSV), "name,score\nx,1\n").unwrap();
        let e = repair(dir.path(), "t", &|_| true).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        assert!(e.to_string().contains("move it away"), "{e}");
    }
}
