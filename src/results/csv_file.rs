//! `games.csv`: the row of a game, and a streaming reader of any `games.csv`.
//!
//! Columns are found by the header's names (more columns are allowed, in any order), or by
//! position in the standard order when the first row is not a header. A row that cannot be
//! read (too few fields, an unknown result or termination, an empty name, a torn last line)
//! is skipped and counted, with the first few reasons kept for a warning.

use crate::record::{GameRecord, GameResult, GameRow, Termination, clean_text, format_pits};
use crate::rules::Side;
use std::borrow::Cow;
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

/// The longest offending line kept in the `detail` column, in bytes (`games.jsonl` keeps
/// more).
const DETAIL_LINE_BYTES: usize = 200;

/// Characters that make a spreadsheet read a cell as a formula, and the guard itself.
fn needs_guard(s: &str) -> bool {
    matches!(
        s.chars().next(),
        Some('=' | '+' | '-' | '@' | '\t' | '\r' | '\'')
    )
}

/// A text cell that a spreadsheet will not run as a formula: text starting with `=`, `+`,
/// `-`, `@`, a tab, a carriage return or `'` gets a leading `'`.
pub fn text_cell(s: &str) -> Cow<'_, str> {
    if needs_guard(s) {
        Cow::Owned(format!("'{s}"))
    } else {
        Cow::Borrowed(s)
    }
}

/// The text a [`text_cell`] was written from (the inverse of [`text_cell`] on every text).
pub fn from_text_cell(cell: &str) -> &str {
    match cell.strip_prefix('\'') {
        Some(rest) if needs_guard(rest) => rest,
        _ => cell,
    }
}

/// Cuts `s` to at most `max` bytes on a character boundary, marking the cut.
fn shorten(s: &str, max: usize) -> Cow<'_, str> {
    if s.len() <= max {
        return Cow::Borrowed(s);
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(format!("{}... ({} bytes)", &s[..end], s.len()))
}

/// A game's row of `games.csv`, one field a column (the fields are [`CSV_COLUMNS`], in
/// order): the one definition of what `games.csv` says of a game. [`csv_row`] writes it
/// as a line of the file (text cells guarded against spreadsheets); serialised with serde
/// (the `game_finished` event of `--events`) it is a JSON object of the same fields, text
/// unguarded, numbers as numbers, and `loser` null when no side lost by a fault.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct CsvRow<'a> {
    pub game: &'a str,
    pub round: u64,
    pub pair: u64,
    pub south: &'a str,
    pub north: &'a str,
    /// The opening's sowings, pit numbers separated by spaces.
    pub opening: String,
    /// `1-0`, `1/2-1/2` or `0-1`.
    pub result: &'static str,
    pub south_score: u16,
    pub north_score: u16,
    pub plies: usize,
    pub termination: &'static str,
    pub loser: Option<&'static str>,
    /// The detail, cleaned to be shown, with the offending line (cut to 200 bytes) when
    /// the detail does not quote it.
    pub detail: String,
    pub duration_ms: u64,
}

impl<'a> CsvRow<'a> {
    /// The row of game `g`.
    pub fn of(g: &'a GameRecord) -> CsvRow<'a> {
        let mut detail = clean_text(&g.detail).into_owned();
        // The detail of a line's fault usually quotes the line already, made safe to show.
        if let Some(line) = &g.line
            && !detail.contains(clean_text(line).as_ref())
        {
            detail.push_str(" | line: ");
            detail.push_str(&clean_text(&shorten(line, DETAIL_LINE_BYTES)));
        }
        CsvRow {
            game: &g.game,
            round: g.round,
            pair: g.pair,
            south: &g.south,
            north: &g.north,
            opening: format_pits(&g.opening),
            result: g.result.as_str(),
            south_score: g.south_score,
            north_score: g.north_score,
            plies: g.plies(),
            termination: g.termination.as_str(),
            loser: g.loser.map(Side::as_str),
            detail,
            duration_ms: g.duration_ms,
        }
    }

    /// The row's cells as `games.csv` writes them, in the order of [`CSV_COLUMNS`].
    pub fn cells(&self) -> [Cow<'_, str>; 14] {
        [
            text_cell(self.game),
            self.round.to_string().into(),
            self.pair.to_string().into(),
            text_cell(self.south),
            text_cell(self.north),
            self.opening.as_str().into(),
            self.result.into(),
            self.south_score.to_string().into(),
            self.north_score.to_string().into(),
            self.plies.to_string().into(),
            self.termination.into(),
            self.loser.unwrap_or("").into(),
            text_cell(&self.detail),
            self.duration_ms.to_string().into(),
        ]
    }
}

/// The `games.csv` row of a game, with its newline.
pub fn csv_row(g: &GameRecord) -> Vec<u8> {
    let row = CsvRow::of(g);
    let mut w = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(Vec::with_capacity(128));
    w.write_record(row.cells().iter().map(|c| c.as_bytes()))
        .expect("writing to memory");
    w.into_inner().expect("writing to memory")
}

/// The header line of `games.csv`, with its newline.
pub(crate) fn header_line() -> String {
    let mut s = CSV_COLUMNS.join(",");
    s.push('\n');
    s
}

/// The results file of an input: a directory means its `games.csv`.
pub fn games_csv_path(input: &Path) -> PathBuf {
    if input.is_dir() {
        input.join(super::GAMES_CSV)
    } else {
        input.to_path_buf()
    }
}

/// The longest row of `games.csv` read, its line ending included: as long as the longest
/// line of `games.jsonl` read (a row says less of a game than its record), so a longer one
/// is damage.
pub(crate) const MAX_ROW_BYTES: usize = super::jsonl::MAX_RECORD_BYTES;

/// Why a row of `games.csv` longer than [`MAX_ROW_BYTES`] is refused, and what to do.
pub(crate) fn row_too_long() -> String {
    format!(
        "a row longer than {} MiB, which kalaha never writes: the file is damaged; delete \
         that line (a run's games.csv is rebuilt from its games.jsonl when the run is \
         resumed)",
        MAX_ROW_BYTES >> 20
    )
}

/// Failure to read a results file.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("failed to open {path}: {source}")]
    Open {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("failed to read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("failed to read {path}: its header has no column named {column:?}")]
    MissingColumn { path: PathBuf, column: &'static str },
}

/// What reading a file found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReadSummary {
    /// Rows after the header.
    pub rows: u64,
    /// Rows that could not be read (skipped).
    pub malformed: u64,
    /// The first few reasons, with their line numbers.
    pub problems: Vec<String>,
}

/// How many reasons a [`ReadSummary`] keeps.
const PROBLEMS_KEPT: usize = 3;

impl ReadSummary {
    pub fn add(&mut self, other: ReadSummary) {
        self.rows += other.rows;
        self.malformed += other.malformed;
        for p in other.problems {
            if self.problems.len() < PROBLEMS_KEPT {
                self.problems.push(p);
            }
        }
    }

    /// Counts a row skipped, keeping its reason (on `path`'s line `line`) if few are kept.
    pub(crate) fn skip(&mut self, path: &Path, line: u64, reason: impl std::fmt::Display) {
        self.malformed += 1;
        if self.problems.len() < PROBLEMS_KEPT {
            self.problems.push(format!(
                "{}:{line}: {reason}",
                crate::record::shown_path(path)
            ));
        }
    }

    /// A one-line warning when rows were skipped.
    pub fn warning(&self) -> Option<String> {
        (self.malformed > 0).then(|| {
            format!(
                "warning: {} unreadable row{} skipped ({})",
                self.malformed,
                if self.malformed == 1 { "" } else { "s" },
                self.problems.join("; ")
            )
        })
    }
}

/// The columns the reader uses, by name; the first four must be present.
const READ_COLUMNS: [&str; 10] = [
    "game",
    "south",
    "north",
    "result",
    "pair",
    "south_score",
    "north_score",
    "termination",
    "loser",
    "plies",
];
/// Their positions in the standard column order (for files without a header).
const STANDARD_POSITIONS: [usize; 10] = [0, 3, 4, 6, 2, 7, 8, 10, 11, 9];
/// The place of `loser` in [`READ_COLUMNS`].
const LOSER: usize = 8;
const REQUIRED: usize = 4;

/// A pair id that is not a number (a foreign file) still pairs its two games: hash it.
fn pair_number(cell: &str) -> Option<u64> {
    let cell = cell.trim();
    if cell.is_empty() {
        return None;
    }
    Some(cell.parse::<u64>().unwrap_or_else(|_| {
        use std::hash::{Hash, Hasher};
        let mut h = std::hash::DefaultHasher::new();
        cell.hash(&mut h);
        h.finish() | (1 << 63)
    }))
}

/// Reads one `games.csv`, handing every readable row to `visit`.
pub fn read_games_csv(
    path: &Path,
    visit: impl FnMut(&GameRow<'_>),
) -> Result<ReadSummary, ReadError> {
    let file = crate::input::open_regular(path).map_err(|source| ReadError::Open {
        path: path.to_path_buf(),
        source,
    })?;
    read_games_from(path, file, visit)
}

/// Reads `games.csv` text from `file` (opened from `path`, which messages name), as
/// [`read_games_csv`] does: for readers that count the bytes (progress) or come from
/// elsewhere.
pub fn read_games_from(
    path: &Path,
    file: impl std::io::Read,
    mut visit: impl FnMut(&GameRow<'_>),
) -> Result<ReadSummary, ReadError> {
    let mut rows = super::CsvRows::new(
        std::io::BufReader::with_capacity(1 << 16, file),
        MAX_ROW_BYTES,
    );
    let mut record = csv::ByteRecord::new();
    let mut cols: [Option<usize>; 10] = STANDARD_POSITIONS.map(Some);
    let mut summary = ReadSummary::default();
    let mut first = true;
    // The header's width: every row has as many columns.
    let mut width = None;
    loop {
        let line = match rows.read(&mut record) {
            Ok(Some(super::Row::Read { line })) => line,
            Ok(Some(super::Row::TooLong { line })) => {
                first = false;
                summary.rows += 1;
                summary.skip(path, line, row_too_long());
                continue;
            }
            Ok(None) => break,
            Err(source) => {
                return Err(ReadError::Read {
                    path: path.to_path_buf(),
                    source,
                });
            }
        };
        if first {
            first = false;
            if record.get(0).map(|f| f.trim_ascii()) == Some(b"game") {
                for (k, name) in READ_COLUMNS.iter().enumerate() {
                    cols[k] = record
                        .iter()
                        .position(|f| f.trim_ascii() == name.as_bytes());
                    if k < REQUIRED && cols[k].is_none() {
                        return Err(ReadError::MissingColumn {
                            path: path.to_path_buf(),
                            column: name,
                        });
                    }
                }
                width = Some(record.len());
                continue;
            }
        }
        summary.rows += 1;
        if let Some(w) = width
            && record.len() != w
        {
            summary.skip(
                path,
                line,
                format!("{} columns where the header has {w}", record.len()),
            );
            continue;
        }
        match parse_row(&record, &cols) {
            Ok(row) => visit(&row),
            Err(reason) => summary.skip(path, line, reason),
        }
    }
    Ok(summary)
}

/// One row as a [`GameRow`], or why it cannot be read.
fn parse_row<'r>(
    record: &'r csv::ByteRecord,
    cols: &[Option<usize>; 10],
) -> Result<GameRow<'r>, String> {
    let field = |k: usize| -> Result<Option<&'r str>, String> {
        match cols[k].and_then(|i| record.get(i)) {
            None => Ok(None),
            Some(b) => std::str::from_utf8(b)
                .map(|s| Some(s.trim()))
                .map_err(|_| format!("the {} column is not UTF-8", READ_COLUMNS[k])),
        }
    };
    let required = |k: usize| -> Result<&'r str, String> {
        match field(k)? {
            Some(s) if !s.is_empty() => Ok(s),
            _ => Err(format!("no {}", READ_COLUMNS[k])),
        }
    };
    let game = from_text_cell(required(0)?);
    let south = from_text_cell(required(1)?);
    let north = from_text_cell(required(2)?);
    // kalaha writes only names that can be shown; any other is a damaged or forged row.
    for (side, name) in [("south", south), ("north", north)] {
        crate::record::check_name(name).map_err(|e| format!("{side} engine: {e}"))?;
    }
    let result: GameResult = required(3)?.parse()?;
    let score = |k: usize| -> Result<Option<u16>, String> {
        match field(k)? {
            None | Some("") => Ok(None),
            Some(s) => s
                .parse()
                .map(Some)
                .map_err(|_| format!("{} {s:?} is not a number", READ_COLUMNS[k])),
        }
    };
    let termination = match field(7)? {
        None | Some("") => Termination::Normal,
        Some(t) => t.parse()?,
    };
    let loser_cell = field(LOSER)?;
    let loser = match loser_cell.map(from_text_cell) {
        None | Some("") => None,
        Some("south") => Some(Side::South),
        Some("north") => Some(Side::North),
        // Older files name the engine.
        Some(name) if name == south => Some(Side::South),
        Some(name) if name == north => Some(Side::North),
        Some(other) => return Err(format!("loser {other:?} is neither side")),
    };
    // Every games.csv kalaha wrote has a `loser` column, filled for every fault and
    // resignation; a file without the column (not kalaha's) has its loser read from the
    // result, which makes the loser lose.
    let loser = match (loser, loser_cell.is_some(), termination.names_loser()) {
        (None, true, true) => {
            return Err(format!("termination {termination} names no loser"));
        }
        (None, false, true) => match result {
            GameResult::SouthWins => Some(Side::North),
            GameResult::NorthWins => Some(Side::South),
            GameResult::Draw => {
                return Err(format!("termination {termination} with a drawn result"));
            }
        },
        (loser, _, _) => loser,
    };
    if let Some(plies) = field(9)?.filter(|s| !s.is_empty())
        && plies.parse::<u64>().is_err()
    {
        return Err(format!("plies {plies:?} is not a number of sowings"));
    }
    let (south_score, north_score) = (score(5)?, score(6)?);
    check_consistent(result, south_score, north_score, termination, loser)?;
    Ok(GameRow {
        game,
        pair: field(4)?.and_then(pair_number),
        south,
        north,
        result,
        south_score,
        north_score,
        termination,
        loser,
        // games.csv does not say it: read games.jsonl's `repeats` (`repeated_games`).
        repeat: false,
    })
}

/// A row kalaha could not have written is refused: a game played to its end whose result
/// is not its stores', a loser named where no side lost by a fault or a resignation, and
/// a fault whose result does not make its loser lose.
fn check_consistent(
    result: GameResult,
    south: Option<u16>,
    north: Option<u16>,
    termination: Termination,
    loser: Option<Side>,
) -> Result<(), String> {
    if let Some(side) = loser
        && !termination.names_loser()
    {
        return Err(match termination {
            Termination::Normal => format!("a game played to its end names a loser ({side})"),
            _ => format!("a game that ended {termination} names a loser ({side})"),
        });
    }
    if termination == Termination::Normal
        && let (Some(s), Some(n)) = (south, north)
    {
        let by_stores = match s.cmp(&n) {
            std::cmp::Ordering::Greater => GameResult::SouthWins,
            std::cmp::Ordering::Equal => GameResult::Draw,
            std::cmp::Ordering::Less => GameResult::NorthWins,
        };
        if by_stores != result {
            return Err(format!(
                "result {} does not match the stores {s}-{n} of a game played to its end",
                result.as_str()
            ));
        }
    }
    let lost = match loser {
        Some(Side::South) => Some(GameResult::NorthWins),
        Some(Side::North) => Some(GameResult::SouthWins),
        None => None,
    };
    if let Some(expected) = lost
        && expected != result
    {
        return Err(format!(
            "result {} does not make the {} loser lose",
            result.as_str(),
            loser.map_or("", |l| if l == Side::South { "south" } else { "north" })
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::FaultKind;

    #[test]
    fn the_row_serialises_to_the_columns_in_order() {
        let g = crate::results::sample_record("t", 3, "=a", "b");
        let json = serde_json::to_string(&CsvRow::of(&g)).unwrap();
        // serde_json keeps the fields in the struct's order.
        let keys: Vec<String> = json
            .trim_matches(|c| c == '{' || c == '}')
            .split(',')
            .filter_map(|kv| {
                kv.strip_prefix('"')?
                    .split_once("\":")
                    .map(|(k, _)| k.to_string())
            })
            .collect();
        assert_eq!(keys, CSV_COLUMNS, "{json}");
        // The file guards the text cell; the row keeps the text.
        assert!(json.contains(r#""south":"=a""#), "{json}");
        assert!(String::from_utf8(csv_row(&g)).unwrap().contains(",'=a,"));
    }

    #[test]
    fn formula_guards_round_trip() {
        for name in [
            "plain", "=x", "+1", "-minus", "@a", "'=x", "'plain", "''", "'",
        ] {
            let cell = text_cell(name);
            assert!(!matches!(cell.chars().next(), Some('=' | '+' | '-' | '@')));
            assert_eq!(from_text_cell(&cell), name, "{name:?} via {cell:?}");
        }
        // A cell no writer produced is read as it is.
        assert_eq!(from_text_cell("'abc"), "'abc");
    }

    fn read_all(path: &Path) -> (Vec<String>, ReadSummary) {
        let mut seen = Vec::new();
        let s = read_games_csv(path, |r| {
            seen.push(format!(
                "{} {:?} {} {} {} {:?} {:?}",
                r.game, r.pair, r.south, r.north, r.result, r.termination, r.loser
            ))
        })
        .unwrap();
        (seen, s)
    }

    /// A row longer than any kalaha writes is skipped (read to its end, never held whole)
    /// with the file, its line and what to do; the rows after it are read.
    #[test]
    fn a_row_too_long_is_refused_with_its_line_and_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("games.csv");
        let mut text = header_line();
        text.push_str("x-1,1,1,a,b,,1-0,40,32,50,normal,,,12\n");
        // A row kalaha would read, but for its length.
        let detail = "d".repeat(MAX_ROW_BYTES);
        text.push_str(&format!("x-2,1,1,b,a,,0-1,30,42,51,normal,,{detail},12\n"));
        text.push_str("x-3,1,2,a,b,,1-0,37,35,40,normal,,,5\n");
        std::fs::write(&path, text).unwrap();
        let (rows, s) = read_all(&path);
        assert_eq!(
            rows,
            [
                "x-1 Some(1) a b 1-0 Normal None",
                "x-3 Some(2) a b 1-0 Normal None"
            ]
        );
        assert_eq!((s.rows, s.malformed), (3, 1));
        assert_eq!(
            s.problems,
            [format!(
                "{}:3: a row longer than 16 MiB, which kalaha never writes: the file is \
                 damaged; delete that line (a run's games.csv is rebuilt from its games.jsonl \
                 when the run is resumed)",
                crate::record::shown_path(&path)
            )]
        );
    }

    #[test]
    fn rows_are_read_by_header_or_position_and_damage_is_counted() {
        let dir = tempfile::tempdir().unwrap();
        let with = dir.path().join("games.csv");
        std::fs::write(
            &with,
            "game,round,pair,south,north,opening,result,south_score,north_score,plies,termination,loser,detail,duration_ms,extra\n\
             x-1,1,1,a,'=b,,1-0,40,32,50,normal,,,12,z\n\
             x-2,1,1,'=b,a,,0-1,30,42,51,normal,,,12,z\n\
             x-3,1,2,a,'=b,,1-0,36,36,40,timeout,'=b,\"slow, very\",5,z\n\
             x-4,1,2,a,b,,2-0,36,36,40,normal,,,5,z\n\
             x-5,1,3,a,b,,1-0,36,36,40,conceded,,,5,z\n\
             x-6,1,2,b,a,,1-",
        )
        .unwrap();
        let (rows, s) = read_all(&games_csv_path(dir.path()));
        assert_eq!(s.rows, 6);
        assert_eq!(s.malformed, 3, "{s:?}");
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[0], "x-1 Some(1) a =b 1-0 Normal None");
        assert_eq!(
            rows[2],
            format!(
                "x-3 Some(2) a =b 1-0 {:?} Some(North)",
                Termination::Fault(FaultKind::Timeout)
            )
        );
        let w = s.warning().unwrap();
        assert!(
            w.contains("3 unreadable rows") && w.contains("games.csv:5"),
            "{w}"
        );

        let without = dir.path().join("more.csv");
        std::fs::write(&without, "x-1,1,1,a,b,,0-1,40,32,50,timeout,south,,12\n").unwrap();
        let (rows, s) = read_all(&without);
        assert_eq!((rows.len(), s.malformed), (1, 0));
        assert!(rows[0].ends_with("Some(South)"));
    }

    #[test]
    fn rows_kalaha_could_not_have_written_are_refused_and_counted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("games.csv");
        let header = header_line();
        let n = header.trim_end().split(',').count();
        let good = format!("t-1,1,1,a,b,,1-0,30,18{}", ",".repeat(n - 9));
        let lines = [
            header.trim_end().to_string(),
            good.clone(),
            // A draw with stores 30-10 played to its end.
            good.replacen("1-0,30,18", "1/2-1/2,30,10", 1),
            // Ten columns only.
            "t-3,1,2,a,b,,1-0,30,18,40".to_string(),
            // A fault that names no loser.
            "t-4,1,2,b,a,,1-0,30,18,40,timeout,,,5".to_string(),
            // A resignation that names no loser.
            "t-5,1,3,a,b,,0-1,30,18,40,resigned,,,5".to_string(),
            // Negative plies, and plies that are not a number.
            "t-6,1,3,b,a,,1-0,30,18,-40,normal,,,5".to_string(),
            "t-7,1,4,a,b,,1-0,30,18,4x,normal,,,5".to_string(),
            // A loser of a game adjudicated.
            "t-8,1,4,b,a,,1-0,30,18,40,adjudicated,north,,5".to_string(),
            // A fault that names its loser.
            "t-9,1,5,a,b,,0-1,30,18,40,crash,south,,5".to_string(),
        ];
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        let (games, summary) = read_all(&path);
        assert_eq!(games.len(), 2, "{games:?} {:?}", summary.warning());
        assert!(games[0].starts_with("t-1 "), "{games:?}");
        assert!(games[1].starts_with("t-9 "), "{games:?}");
        assert_eq!(summary.malformed, 7, "{summary:?}");
        let w = summary.warning().unwrap();
        assert!(w.contains("7 unreadable rows"), "{w}");
        // The first three reasons, with their lines.
        assert!(
            w.contains("games.csv:5: termination timeout names no loser"),
            "{w}"
        );
        let reasons = |lines: &[&str]| {
            std::fs::write(&path, lines.join("\n") + "\n").unwrap();
            read_all(&path).1.problems
        };
        let header = header_line();
        assert_eq!(
            reasons(&[
                header.trim_end(),
                lines[6].as_str(),
                lines[7].as_str(),
                lines[8].as_str()
            ]),
            [
                format!(
                    "{}:2: plies \"-40\" is not a number of sowings",
                    path.display()
                ),
                format!(
                    "{}:3: plies \"4x\" is not a number of sowings",
                    path.display()
                ),
                format!(
                    "{}:4: a game that ended adjudicated names a loser (north)",
                    path.display()
                ),
            ]
        );
    }

    /// A file without a `loser` column (kalaha's always have one) takes the loser of a
    /// fault from the result; a fault with a drawn result has none and is refused.
    #[test]
    fn without_a_loser_column_a_fault_loses_by_its_result() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("games.csv");
        std::fs::write(
            &path,
            "game,south,north,result,termination\n\
             t-1,a,b,0-1,timeout\n\
             t-2,b,a,0-1,stall\n\
             t-3,a,b,1/2-1/2,crash\n",
        )
        .unwrap();
        let (games, summary) = read_all(&path);
        assert_eq!(
            games,
            [
                format!(
                    "t-1 None a b 0-1 {:?} Some(South)",
                    Termination::Fault(FaultKind::Timeout)
                ),
                format!(
                    "t-2 None b a 0-1 {:?} Some(South)",
                    Termination::Fault(FaultKind::Stall)
                ),
            ]
        );
        assert_eq!(
            summary.problems,
            [format!(
                "{}:4: termination crash with a drawn result",
                path.display()
            )]
        );
    }

    #[test]
    fn a_header_without_a_required_column_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("g.csv");
        std::fs::write(&p, "game,south,north\nx-1,a,b\n").unwrap();
        let err = read_games_csv(&p, |_| {}).unwrap_err();
        assert!(err.to_string().contains("result"), "{err}");
    }

    #[test]
    fn a_written_row_reads_back() {
        let mut g = crate::results::sample_record("t", 3, "-a", "b");
        g.termination = Termination::Fault(FaultKind::IllegalMove);
        g.loser = Some(Side::South);
        g.detail = "illegal move, \"quoted\"".into();
        g.line = Some("{\"type\":\"move\",\"pit\":9}\u{0}\u{1b}]0;x".into());
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("games.csv");
        let mut bytes = header_line().into_bytes();
        bytes.extend(csv_row(&g));
        std::fs::write(&p, &bytes).unwrap();
        let text = String::from_utf8(bytes).unwrap();
        assert!(
            !text.contains('\u{0}') && !text.contains('\u{1b}'),
            "{text:?}"
        );
        assert!(text.contains(",'-a,"), "{text}");
        let mut n = 0;
        read_games_csv(&p, |r| {
            n += 1;
            assert_eq!(*r, g.row());
        })
        .unwrap();
        assert_eq!(n, 1);
    }

    #[test]
    fn a_line_the_detail_quotes_is_not_written_twice() {
        let mut g = crate::results::sample_record("t", 3, "a", "b");
        g.termination = Termination::Fault(FaultKind::ProtocolError);
        g.loser = Some(Side::South);
        let line = "{\"type\":\"move\",\"pit\":6}\u{0}";
        g.detail = format!("a line that is not a JSON object: {}", clean_text(line));
        g.line = Some(line.into());
        let row = String::from_utf8(csv_row(&g)).unwrap();
        assert!(!row.contains("| line:"), "{row}");
        assert_eq!(row.matches(r"\u{0}").count(), 1, "{row}");
        // A detail that does not quote the line gets it appended.
        g.detail = "illegal move".into();
        let row = String::from_utf8(csv_row(&g)).unwrap();
        assert!(
            row.contains(r#"illegal move | line: {""type"":""move"",""pit"":6}\u{0}"#),
            "{row}"
        );
    }
}
