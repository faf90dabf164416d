//! Reading `games.csv` files (the tournament's result format) into a [`Tally`], one row at a
//! time.
//!
//! Columns are found by the header's names when the first row is a header (`game, round,
//! pair, south, north, opening, result, south_score, north_score, plies, termination, loser,
//! detail, duration_ms`, more allowed), by position otherwise. Rows that cannot be read (too
//! few fields, an unknown result, a torn last line) are counted and skipped.

use crate::stats::{Added, GameRow, Outcome, Tally};
use std::path::{Path, PathBuf};

/// Failure to read a results file.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("failed to open {path}: {source}")]
    Open {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("failed to read {path}: {source}")]
    Read { path: PathBuf, source: csv::Error },
    #[error("failed to read {path}: no column named {column:?} in its header")]
    MissingColumn { path: PathBuf, column: &'static str },
}

/// Counts of one file's rows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReadSummary {
    pub rows: u64,
    pub counted: u64,
    pub duplicates: u64,
    pub ignored: u64,
    pub malformed: u64,
}

impl ReadSummary {
    pub fn add(&mut self, o: ReadSummary) {
        self.rows += o.rows;
        self.counted += o.counted;
        self.duplicates += o.duplicates;
        self.ignored += o.ignored;
        self.malformed += o.malformed;
    }
}

/// The results file of an input: a directory means its `games.csv`.
pub fn games_csv_path(input: &Path) -> PathBuf {
    if input.is_dir() {
        input.join("games.csv")
    } else {
        input.to_path_buf()
    }
}

const COLUMNS: [&str; 9] = [
    "game",
    "pair",
    "south",
    "north",
    "result",
    "south_score",
    "north_score",
    "termination",
    "loser",
];
/// Positions of [`COLUMNS`] in the standard column order.
const POSITIONS: [usize; 9] = [0, 2, 3, 4, 6, 7, 8, 10, 11];
const REQUIRED: usize = 5;

/// Reads one `games.csv` into `tally`.
pub fn read_games_csv(path: &Path, tally: &mut Tally) -> Result<ReadSummary, ReadError> {
    let file = std::fs::File::open(path).map_err(|source| ReadError::Open {
        path: path.to_path_buf(),
        source,
    })?;
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .buffer_capacity(1 << 16)
        .from_reader(file);
    let mut record = csv::ByteRecord::new();
    let mut cols: [Option<usize>; 9] = POSITIONS.map(Some);
    let mut summary = ReadSummary::default();
    let mut first = true;
    loop {
        match reader.read_byte_record(&mut record) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) if matches!(e.kind(), csv::ErrorKind::Io(_)) => {
                return Err(ReadError::Read {
                    path: path.to_path_buf(),
                    source: e,
                });
            }
            Err(_) => {
                summary.rows += 1;
                summary.malformed += 1;
                continue;
            }
        }
        if first {
            first = false;
            if record.get(0).map(|f| f.trim_ascii()) == Some(b"game") {
                for (k, name) in COLUMNS.iter().enumerate() {
                    cols[k] = record
                        .iter()
                        .position(|f| f.trim_ascii() == name.as_bytes());
                    if k < REQUIRED && cols[k].is_none() && *name != "pair" {
                        return Err(ReadError::MissingColumn {
                            path: path.to_path_buf(),
                            column: name,
                        });
                    }
                }
                continue;
            }
        }
        summary.rows += 1;
        let field = |k: usize| -> Option<&str> {
            cols[k]
                .and_then(|i| record.get(i))
                .and_then(|b| std::str::from_utf8(b).ok())
        };
        let (Some(game), Some(south), Some(north), Some(result)) =
            (field(0), field(2), field(3), field(4))
        else {
            summary.malformed += 1;
            continue;
        };
        let Some(result) = Outcome::parse(result) else {
            summary.malformed += 1;
            continue;
        };
        let (game, south, north) = (game.trim(), south.trim(), north.trim());
        if game.is_empty() || south.is_empty() || north.is_empty() {
            summary.malformed += 1;
            continue;
        }
        let score = |k| field(k).and_then(|s| s.trim().parse::<i64>().ok());
        let row = GameRow {
            game,
            pair: field(1).unwrap_or(""),
            south,
            north,
            result,
            south_score: score(5),
            north_score: score(6),
            termination: field(7).unwrap_or("").trim(),
            loser: field(8).unwrap_or("").trim(),
        };
        match tally.add(&row) {
            Added::Counted => summary.counted += 1,
            Added::Duplicate => summary.duplicates += 1,
            Added::Ignored => summary.ignored += 1,
        }
    }
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_with_and_without_header() {
        let dir = tempfile::tempdir().unwrap();
        let with = dir.path().join("games.csv");
        std::fs::write(
            &with,
            "game,round,pair,south,north,opening,result,south_score,north_score,plies,termination,loser,detail,duration_ms,extra\n\
             x-1,1,1,a,b,,1-0,40,32,50,normal,,,12,z\n\
             x-2,1,1,b,a,,0-1,30,42,51,normal,,,12,z\n\
             x-3,1,2,a,b,,1/2-1/2,36,36,40,timeout,b,\"slow, very\",5,z\n\
             x-4,1,2,b,a,,1-",
        )
        .unwrap();
        let mut t = Tally::new();
        let s = read_games_csv(&games_csv_path(dir.path()), &mut t).unwrap();
        assert_eq!(s.rows, 4);
        assert_eq!(s.counted, 3);
        assert_eq!(s.malformed, 1);
        let a = t.engine_index("a").unwrap();
        assert_eq!(t.engines()[a].wdl, crate::stats::Wdl::new(2, 1, 0));
        assert_eq!(t.engines()[a].penta.0, [0, 0, 0, 0, 1]);
        assert_eq!(t.engines()[t.engine_index("b").unwrap()].faults.timeouts, 1);

        // Same games without a header, plus one new: duplicates are ignored.
        let without = dir.path().join("more.csv");
        std::fs::write(
            &without,
            "x-1,1,1,a,b,,1-0,40,32,50,normal,,,12\nx-9,3,9,a,b,,0-1,20,52,50,normal,,,12\n",
        )
        .unwrap();
        let s = read_games_csv(&without, &mut t).unwrap();
        assert_eq!((s.counted, s.duplicates), (1, 1));
        assert_eq!(t.games(), 4);
    }

    #[test]
    fn missing_required_column() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("g.csv");
        std::fs::write(&p, "game,south,north\nx-1,a,b\n").unwrap();
        let err = read_games_csv(&p, &mut Tally::new()).unwrap_err();
        assert!(err.to_string().contains("result"), "{err}");
    }
}
