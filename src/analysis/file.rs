//! `analysis.csv`: one row per analysed sowing, appended a whole game at a time and synced,
//! so that an interrupted analysis resumes where it stopped; rewritten in the order of
//! `games.jsonl` when an analysis completes.

use super::game::PlyAnalysis;
use crate::results::{CsvRows, ReadSummary, Row, from_text_cell, text_cell};
use crate::rules::Side;
use std::collections::{HashMap, HashSet};
use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// The columns of `analysis.csv`, in order.
pub(crate) const ANALYSIS_COLUMNS: [&str; 10] = [
    "game",
    "ply",
    "side",
    "engine",
    "pit",
    "value_before",
    "value_after",
    "loss",
    "kind",
    "depth",
];

/// The `kind` of a row whose values are the solver's, and of one whose values are the
/// engines' search's estimates.
const EXACT: &str = "exact";
const ESTIMATED: &str = "estimated";

fn opt(v: Option<i32>) -> String {
    v.map_or(String::new(), |v| v.to_string())
}

/// The CSV text of `rows` (no header).
pub(crate) fn rows_text(rows: &[PlyAnalysis]) -> Vec<u8> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for r in rows {
        w.write_record([
            text_cell(&r.game).as_ref(),
            &r.ply.to_string(),
            r.side.as_str(),
            text_cell(&r.engine).as_ref(),
            &r.pit.to_string(),
            &opt(r.value_before),
            &opt(r.value_after),
            &opt(r.loss()),
            match (r.estimate_depth, r.loss()) {
                (Some(_), _) => ESTIMATED,
                (None, Some(_)) => EXACT,
                (None, None) => "",
            },
            &r.estimate_depth.map_or(String::new(), |d| d.to_string()),
        ])
        .expect("writing to memory");
    }
    w.into_inner().expect("writing to memory")
}

fn header_text() -> Vec<u8> {
    let mut line = ANALYSIS_COLUMNS.join(",");
    line.push('\n');
    line.into_bytes()
}

/// The longest row of `analysis.csv` read, its line ending included: a row kalaha writes
/// holds a game's id, an engine's name and some numbers, so a longer one is damage.
const MAX_ROW_BYTES: usize = 1 << 20;

/// Reads the rows of an `analysis.csv` (a missing file reads as none), a row at a time. A
/// torn last line (a write cut short) is skipped and counted in the summary's `malformed`;
/// a row that cannot be read, or is longer than any kalaha writes (never held in memory),
/// is skipped and counted with its reason (the file and line, and what becomes of it).
pub(crate) fn read_analysis(path: &Path) -> io::Result<(Vec<PlyAnalysis>, ReadSummary)> {
    let file = match crate::input::open_regular(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Ok((Vec::new(), ReadSummary::default()));
        }
        Err(e) => return Err(e),
    };
    let mut read = CsvRows::new(io::BufReader::with_capacity(1 << 16, file), MAX_ROW_BYTES);
    let mut record = csv::ByteRecord::new();
    let mut rows = Vec::new();
    let mut summary = ReadSummary::default();
    let mut header = true;
    while let Some(row) = read.read(&mut record)? {
        if std::mem::take(&mut header) {
            // A header cut short is a torn line too: the file is written anew.
            summary.malformed += u64::from(!read.ended());
            continue;
        }
        summary.rows += 1;
        match row {
            Row::TooLong { line } => summary.skip(
                path,
                line,
                format!(
                    "a row longer than {} MiB, which kalaha never writes: left out, and its \
                     game analysed again by `kalaha analyze`, which writes the file anew",
                    MAX_ROW_BYTES >> 20
                ),
            ),
            // A torn last line: its game is analysed again.
            Row::Read { .. } if !read.ended() => summary.malformed += 1,
            Row::Read { line } => {
                let text = csv::StringRecord::from_byte_record(std::mem::take(&mut record));
                match text.as_ref().ok().and_then(parse_row) {
                    Some(row) => rows.push(row),
                    None => summary.skip(
                        path,
                        line,
                        "not a row of an analysis: left out, and its game analysed again",
                    ),
                }
                record = match text {
                    Ok(r) => r.into_byte_record(),
                    Err(e) => e.into_byte_record(),
                };
            }
        }
    }
    Ok((rows, summary))
}

fn parse_row(r: &csv::StringRecord) -> Option<PlyAnalysis> {
    let value = |i: usize| -> Option<Option<i32>> {
        let cell = r.get(i)?.trim();
        if cell.is_empty() {
            Some(None)
        } else {
            cell.parse().ok().map(Some)
        }
    };
    Some(PlyAnalysis {
        game: from_text_cell(r.get(0)?).to_string(),
        ply: r.get(1)?.trim().parse().ok()?,
        side: r.get(2)?.trim().parse::<Side>().ok()?,
        engine: from_text_cell(r.get(3)?).to_string(),
        pit: r.get(4)?.trim().parse().ok()?,
        value_before: value(5)?,
        value_after: value(6)?,
        // Files written before estimates have neither column: their values are exact.
        estimate_depth: match r.get(8).map(str::trim) {
            Some(ESTIMATED) => Some(r.get(9)?.trim().parse().ok()?),
            _ => None,
        },
    })
}

/// The `analysis.csv` of a folder, open for appending whole games.
pub(crate) struct AnalysisFile {
    path: PathBuf,
    file: BufWriter<File>,
}

impl AnalysisFile {
    /// Opens `dir/analysis.csv` for an analysis of games with `plies` sowings each (by game
    /// id), keeping the rows of every game it already holds completely (those games are
    /// returned: they need no new analysis) and dropping the rest (a game cut short by an
    /// interruption, a game no longer in the results), and what reading the file left out
    /// (the rows skipped, with their reasons).
    pub(crate) fn open(
        dir: &Path,
        plies: &HashMap<String, usize>,
    ) -> io::Result<(AnalysisFile, Vec<PlyAnalysis>, ReadSummary)> {
        let path = crate::results::Files::of(dir).analysis_csv();
        let (rows, read) = read_analysis(&path)?;
        let mut count: HashMap<&str, usize> = HashMap::new();
        for r in &rows {
            *count.entry(r.game.as_str()).or_default() += 1;
        }
        let complete: HashSet<String> = count
            .iter()
            .filter(|(g, n)| plies.get(**g) == Some(n))
            .map(|(g, _)| g.to_string())
            .collect();
        let kept: Vec<PlyAnalysis> = rows
            .iter()
            .filter(|r| complete.contains(&r.game))
            .cloned()
            .collect();
        if kept.len() != rows.len() || read.malformed > 0 || !path.exists() {
            write_whole(&path, &kept)?;
        }
        let file = crate::input::open_to_write(&path, OpenOptions::new().append(true))
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
        Ok((
            AnalysisFile {
                path,
                file: BufWriter::new(file),
            },
            kept,
            read,
        ))
    }

    /// Appends the rows of one or more whole games and syncs them to disk.
    pub(crate) fn append(&mut self, rows: &[PlyAnalysis]) -> io::Result<()> {
        self.file.write_all(&rows_text(rows))?;
        self.file.flush()?;
        self.file.get_ref().sync_data()
    }

    /// Rewrites the file with `rows` (all of them, in the order wanted).
    pub(crate) fn rewrite(&mut self, rows: &[PlyAnalysis]) -> io::Result<()> {
        self.file.flush()?;
        write_whole(&self.path, rows)?;
        self.file = BufWriter::new(OpenOptions::new().append(true).open(&self.path)?);
        Ok(())
    }
}

/// Writes the whole file through a temporary one renamed into place.
fn write_whole(path: &Path, rows: &[PlyAnalysis]) -> io::Result<()> {
    crate::results::write_with(path, |f| {
        f.write_all(&header_text())?;
        f.write_all(&rows_text(rows))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(game: &str, ply: u32, before: Option<i32>) -> PlyAnalysis {
        PlyAnalysis {
            game: game.into(),
            ply,
            side: Side::North,
            engine: "=odd, name".into(),
            pit: 3,
            value_before: before,
            value_after: Some(-2),
            estimate_depth: None,
        }
    }

    /// A row longer than any kalaha writes is skipped (read to its end, never held whole)
    /// with the file, its line and what becomes of it; the file is written anew without it
    /// and its game is no longer complete.
    #[test]
    fn a_row_too_long_is_skipped_with_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let plies: HashMap<String, usize> = [("a".to_string(), 2), ("b".to_string(), 1)].into();
        let (mut f, _, _) = AnalysisFile::open(dir.path(), &plies).unwrap();
        f.append(&[row("a", 1, Some(4)), row("a", 2, None)])
            .unwrap();
        f.append(&[row("b", 1, Some(0))]).unwrap();
        drop(f);
        let path = crate::results::Files::of(dir.path()).analysis_csv();
        let text = std::fs::read_to_string(&path).unwrap();
        // The second row of game a, its engine's name made longer than any.
        let long = text.replacen("=odd, name", &"n".repeat(MAX_ROW_BYTES), 2);
        let long = long.replacen(&"n".repeat(MAX_ROW_BYTES), "=odd, name", 1);
        std::fs::write(&path, &long).unwrap();
        let (read, summary) = read_analysis(&path).unwrap();
        assert_eq!(read, [row("a", 1, Some(4)), row("b", 1, Some(0))]);
        assert_eq!((summary.rows, summary.malformed), (3, 1));
        assert_eq!(
            summary.problems,
            [format!(
                "{}:3: a row longer than 1 MiB, which kalaha never writes: left out, and its \
                 game analysed again by `kalaha analyze`, which writes the file anew",
                crate::record::shown_path(&path)
            )]
        );
        let (_, kept, _) = AnalysisFile::open(dir.path(), &plies).unwrap();
        assert_eq!(kept, [row("b", 1, Some(0))], "game a is incomplete");
        assert!(std::fs::metadata(&path).unwrap().len() < 1000);
    }

    #[test]
    fn rows_round_trip_and_incomplete_games_are_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let plies: HashMap<String, usize> = [("a".to_string(), 3), ("b".to_string(), 2)].into();
        let (mut f, kept, _) = AnalysisFile::open(dir.path(), &plies).unwrap();
        assert!(kept.is_empty());
        let mut estimated = row("a", 2, Some(1));
        estimated.estimate_depth = Some(12);
        let a = vec![row("a", 1, Some(4)), row("a", 2, None), estimated];
        f.append(&a).unwrap();
        f.append(&[row("b", 1, Some(0))]).unwrap();
        drop(f);
        // A torn line at the end, as a crash would leave it.
        let path = crate::results::Files::of(dir.path()).analysis_csv();
        let mut text = std::fs::read(&path).unwrap();
        text.extend_from_slice(b"b,2,north,x,1,");
        std::fs::write(&path, &text).unwrap();

        let (read, summary) = read_analysis(&path).unwrap();
        assert_eq!((read.len(), summary.malformed), (4, 1));
        assert_eq!(read[..3], a);
        assert_eq!(a[0].loss(), Some(6));
        assert_eq!(a[1].loss(), None);
        let (_, kept, _) = AnalysisFile::open(dir.path(), &plies).unwrap();
        assert_eq!(kept, a, "game b was incomplete");
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.starts_with("game,ply,side,engine,pit,value_before,value_after,loss,kind,depth\n")
        );
        assert!(
            text.contains("a,1,north,\"'=odd, name\",3,4,-2,6,exact,\n"),
            "{text}"
        );
        assert!(
            text.contains("a,2,north,\"'=odd, name\",3,,-2,,,\n"),
            "{text}"
        );
        assert!(
            text.contains("a,2,north,\"'=odd, name\",3,1,-2,3,estimated,12\n"),
            "{text}"
        );
        // A file of the columns before estimates reads as exact values.
        let old = dir.path().join("old.csv");
        std::fs::write(
            &old,
            "game,ply,side,engine,pit,value_before,value_after,loss\nx,1,south,e,2,3,1,2\n",
        )
        .unwrap();
        let (read, _) = read_analysis(&old).unwrap();
        assert_eq!((read[0].loss(), read[0].estimated()), (Some(2), false));
    }
}
