//! The rows of a CSV file read one at a time, each within a limit, as `games.jsonl`'s lines
//! are: a row longer than the limit is read to its end (quoted line breaks and all) and
//! refused, and no more than the limit of it is ever held in memory.

use std::io::{self, BufRead};

/// What [`CsvRows::read`] found: a row, or one longer than the limit (skipped to its end).
/// Each says the line the row starts on (1 for the first line of the file).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Row {
    Read { line: u64 },
    TooLong { line: u64 },
}

/// A reader of the rows of CSV text (commas, double quotes, any line ending), each at most
/// `limit` bytes long, its line ending included.
pub(crate) struct CsvRows<R> {
    input: R,
    core: csv_core::Reader,
    limit: usize,
    /// The row's fields, one after the other, and where each ends.
    fields: Vec<u8>,
    ends: Vec<usize>,
    /// The row as it is in the file, when kept.
    keep_raw: bool,
    raw: Vec<u8>,
    /// The last row read ended with its line ending (not with the end of the file).
    ended: bool,
    done: bool,
}

impl<R: BufRead> CsvRows<R> {
    /// The rows of `input`, each within `limit` bytes.
    pub(crate) fn new(input: R, limit: usize) -> CsvRows<R> {
        CsvRows {
            input,
            core: csv_core::Reader::new(),
            limit,
            fields: vec![0; 1024.min(limit + 1)],
            ends: vec![0; 64],
            keep_raw: false,
            raw: Vec::new(),
            ended: false,
            done: false,
        }
    }

    /// Keeps the bytes of each row as they are in the file ([`CsvRows::raw`]).
    pub(crate) fn keeping_raw(mut self) -> CsvRows<R> {
        self.keep_raw = true;
        self
    }

    /// The bytes of the last row read, its line ending included (with
    /// [`CsvRows::keeping_raw`]; empty for a row too long).
    pub(crate) fn raw(&self) -> &[u8] {
        &self.raw
    }

    /// Whether the last row read ended with its line ending: a row cut short by the end of
    /// the file (a torn write) did not.
    pub(crate) fn ended(&self) -> bool {
        self.ended
    }

    /// Reads the next row into `record` (its fields; left empty for a row too long), or
    /// `None` at the end of the input.
    pub(crate) fn read(&mut self, record: &mut csv::ByteRecord) -> io::Result<Option<Row>> {
        use csv_core::ReadRecordResult as Result;
        record.clear();
        self.raw.clear();
        if self.done {
            return Ok(None);
        }
        let line = self.core.line();
        let (mut outlen, mut endlen, mut consumed) = (0usize, 0usize, 0usize);
        let mut too_long = false;
        // Where the fields of a row too long go while it is read to its end.
        let mut discard = [0u8; 4096];
        let mut discard_ends = [0usize; 64];
        loop {
            let input = loop {
                match self.input.fill_buf() {
                    Ok(input) => break input,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                }
            };
            // The parser is given no more of a row than the limit and one byte: the
            // fields it writes are never longer than what it was given.
            let input = match too_long {
                true => input,
                false => &input[..input.len().min(self.limit + 1 - consumed)],
            };
            let (result, nin, nout, nend) = match too_long {
                true => self
                    .core
                    .read_record(input, &mut discard, &mut discard_ends),
                false => self.core.read_record(
                    input,
                    &mut self.fields[outlen..],
                    &mut self.ends[endlen..],
                ),
            };
            if nin > 0 {
                self.ended = matches!(input[nin - 1], b'\n' | b'\r');
            }
            if self.keep_raw && !too_long {
                self.raw.extend_from_slice(&input[..nin]);
            }
            self.input.consume(nin);
            consumed += nin;
            if !too_long {
                (outlen, endlen) = (outlen + nout, endlen + nend);
                if consumed > self.limit {
                    too_long = true;
                    self.raw = Vec::new();
                }
            }
            match result {
                Result::InputEmpty => {}
                Result::OutputFull if !too_long => {
                    let grown = (self.fields.len() * 2).min(self.limit + 1);
                    self.fields.resize(grown.max(self.fields.len() + 1), 0);
                }
                Result::OutputEndsFull if !too_long => {
                    let grown = (self.ends.len() * 2).min(self.limit + 2);
                    self.ends.resize(grown.max(self.ends.len() + 1), 0);
                }
                Result::OutputFull | Result::OutputEndsFull => {}
                Result::Record if too_long => return Ok(Some(Row::TooLong { line })),
                Result::Record => {
                    let mut start = 0;
                    for &end in &self.ends[..endlen] {
                        record.push_field(&self.fields[start..end]);
                        start = end;
                    }
                    return Ok(Some(Row::Read { line }));
                }
                Result::End => {
                    self.done = true;
                    return Ok(None);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rows of `text`, read through a buffer of a few bytes (as a file is read, a
    /// buffer at a time); each with its fields, its bytes and whether it ended.
    fn rows(text: &[u8], limit: usize) -> Vec<(Row, Vec<String>, String, bool)> {
        let mut r = CsvRows::new(io::BufReader::with_capacity(7, text), limit).keeping_raw();
        let mut record = csv::ByteRecord::new();
        let mut out = Vec::new();
        while let Some(row) = r.read(&mut record).unwrap() {
            let fields = record
                .iter()
                .map(|f| String::from_utf8_lossy(f).into_owned())
                .collect();
            let raw = String::from_utf8_lossy(r.raw()).into_owned();
            out.push((row, fields, raw, r.ended()));
        }
        out
    }

    /// Rows read as the csv crate reads them: quoted commas and line breaks, lines counted
    /// from 1, a last row without its line ending read and said to be cut short.
    #[test]
    fn rows_are_read_with_their_lines_and_bytes() {
        let text = b"a,b\n\"x,1\",\"two\nlines\"\n\nlast,";
        let read = rows(text, 100);
        assert_eq!(
            read,
            [
                (
                    Row::Read { line: 1 },
                    vec!["a".into(), "b".into()],
                    "a,b\n".into(),
                    true
                ),
                (
                    Row::Read { line: 2 },
                    vec!["x,1".into(), "two\nlines".into()],
                    "\"x,1\",\"two\nlines\"\n".into(),
                    true
                ),
                (
                    Row::Read { line: 4 },
                    vec!["last".into(), "".into()],
                    "\nlast,".into(),
                    false
                ),
            ]
        );
        // The same fields and lines as the csv crate's reader.
        let mut theirs = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(&text[..]);
        let lines: Vec<u64> = theirs
            .byte_records()
            .map(|r| r.unwrap().position().unwrap().line())
            .collect();
        assert_eq!(lines, [1, 2, 4]);
    }

    /// A row longer than the limit, even one whose quotes hold line breaks, is skipped to
    /// its end without being kept, and the rows after it are read.
    #[test]
    fn a_row_too_long_is_skipped_to_its_end() {
        let long = format!("\"{}\n{}\",x\n", "y".repeat(5000), "z".repeat(5000));
        let text = format!("a,b\n{long}c,d\n");
        let read = rows(text.as_bytes(), 1000);
        let found: Vec<(Row, Vec<String>)> = read.into_iter().map(|(r, f, _, _)| (r, f)).collect();
        assert_eq!(
            found,
            [
                (Row::Read { line: 1 }, vec!["a".into(), "b".into()]),
                (Row::TooLong { line: 2 }, vec![]),
                (Row::Read { line: 4 }, vec!["c".into(), "d".into()]),
            ]
        );
        // The limit counts the line ending: a row of exactly the limit is read.
        let read = rows(b"abc\nde\n", 4);
        assert_eq!(read[0].0, Row::Read { line: 1 });
        let read = rows(b"abcd\nde\n", 4);
        assert_eq!(read[0].0, Row::TooLong { line: 1 });
        assert_eq!(read[1].1, ["de"]);
    }
}
