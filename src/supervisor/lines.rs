//! Line framing: cuts a stream of bytes from an engine into lines, with a hard limit on the
//! length of a line. Pure and synchronous, so it is tested on any byte stream.
//!
//! A line's length does not count its `\n` nor a `\r` just before it. Past the limit the
//! rest of the line is read and discarded (memory stays bounded whatever the engine
//! writes), and the line is reported once, as too long, with its first bytes.

use std::collections::VecDeque;

/// The longest piece of an unusable line kept to show what it was, in bytes.
pub(crate) const PREFIX_BYTES: usize = 200;

/// What the framing makes of the bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LineEvent {
    /// A whole line (without its line ending).
    Line(String),
    /// A line longer than the limit: its first bytes.
    TooLong { prefix: String },
    /// A line that is not UTF-8: its first bytes, made readable, and the whole line with
    /// each invalid byte replaced by U+FFFD.
    NotUtf8 { prefix: String, lossy: String },
}

/// A line that cannot be read as text: what an engine sent instead of a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum BadLine {
    /// Longer than the limit: its first bytes.
    TooLong { prefix: String },
    /// Not UTF-8: its first bytes, made readable, and the whole line with each invalid
    /// byte replaced by U+FFFD.
    NotUtf8 { prefix: String, lossy: String },
}

impl LineEvent {
    /// The line as text, after handing `record` what a transcript keeps of it (every
    /// event is recorded, a bad line by its first bytes).
    pub(crate) fn into_text(self, record: impl FnOnce(&str)) -> Result<String, BadLine> {
        match self {
            LineEvent::Line(line) => {
                record(&line);
                Ok(line)
            }
            LineEvent::TooLong { prefix } => {
                record(&format!("{prefix}... (line too long)"));
                Err(BadLine::TooLong { prefix })
            }
            LineEvent::NotUtf8 { prefix, lossy } => {
                record(&prefix);
                Err(BadLine::NotUtf8 { prefix, lossy })
            }
        }
    }
}

/// Bytes in, [`LineEvent`]s out.
#[derive(Debug)]
pub(crate) struct LineBuffer {
    limit: usize,
    line: Vec<u8>,
    discarding: bool,
    events: VecDeque<LineEvent>,
}

fn prefix_of(bytes: &[u8]) -> String {
    String::from_utf8_lossy(&bytes[..bytes.len().min(PREFIX_BYTES)]).into_owned()
}

impl LineBuffer {
    /// Lines of at most `limit` bytes.
    pub(crate) fn new(limit: usize) -> LineBuffer {
        LineBuffer {
            limit,
            line: Vec::new(),
            discarding: false,
            events: VecDeque::new(),
        }
    }

    /// Takes more bytes.
    pub(crate) fn push(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let newline = bytes.iter().position(|&b| b == b'\n');
            let piece = &bytes[..newline.unwrap_or(bytes.len())];
            if !self.discarding {
                // One byte more than the limit may be the `\r` of a `\r\n`.
                if self.line.len() + piece.len() > self.limit.saturating_add(1) {
                    let room = PREFIX_BYTES.saturating_sub(self.line.len());
                    self.line.extend_from_slice(&piece[..piece.len().min(room)]);
                    self.too_long();
                } else {
                    self.line.extend_from_slice(piece);
                }
            }
            match newline {
                Some(i) => {
                    self.end_line();
                    bytes = &bytes[i + 1..];
                }
                None => bytes = &[],
            }
        }
    }

    /// The end of the stream: a last line without its newline still counts.
    pub(crate) fn finish(&mut self) {
        if !self.line.is_empty() || self.discarding {
            self.end_line();
        }
    }

    fn too_long(&mut self) {
        let prefix = prefix_of(&self.line);
        self.line = Vec::new();
        self.discarding = true;
        self.events.push_back(LineEvent::TooLong { prefix });
    }

    fn end_line(&mut self) {
        if self.discarding {
            self.discarding = false;
            self.line.clear();
            return;
        }
        if self.line.last() == Some(&b'\r') {
            self.line.pop();
        }
        if self.line.len() > self.limit {
            self.too_long();
            self.discarding = false;
            return;
        }
        let event = match String::from_utf8(std::mem::take(&mut self.line)) {
            Ok(s) => LineEvent::Line(s),
            Err(e) => LineEvent::NotUtf8 {
                prefix: prefix_of(e.as_bytes()),
                lossy: String::from_utf8_lossy(e.as_bytes()).into_owned(),
            },
        };
        self.events.push_back(event);
    }

    /// The next event, oldest first.
    pub(crate) fn pop(&mut self) -> Option<LineEvent> {
        self.events.pop_front()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(limit: usize, chunks: &[&[u8]]) -> Vec<LineEvent> {
        let mut b = LineBuffer::new(limit);
        for c in chunks {
            b.push(c);
        }
        b.finish();
        std::iter::from_fn(|| b.pop()).collect()
    }

    fn line(s: &str) -> LineEvent {
        LineEvent::Line(s.to_string())
    }

    #[test]
    fn lines_are_cut_wherever_the_reads_end() {
        let want = [line("ab"), line(""), line("cd"), line("e")];
        assert_eq!(frame(10, &[b"ab\n\ncd\ne"]), want);
        assert_eq!(frame(10, &[b"a", b"b\n", b"\nc", b"d\ne"]), want);
        let bytes = b"ab\n\ncd\ne";
        let singles: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(frame(10, &singles), want);
    }

    #[test]
    fn the_limit_excludes_the_line_ending() {
        let at = "x".repeat(8);
        assert_eq!(frame(8, &[format!("{at}\r\n").as_bytes()]), [line(&at)]);
        assert_eq!(frame(8, &[format!("{at}\n").as_bytes()]), [line(&at)]);
        assert_eq!(frame(8, &[at.as_bytes(), b"\r", b"\n"]), [line(&at)]);
        // One byte over, with or without `\r`.
        let over = "x".repeat(9);
        for text in [
            format!("{over}\n"),
            format!("{over}\r\n"),
            format!("{at}y\r\n"),
        ] {
            let got = frame(8, &[text.as_bytes()]);
            assert!(
                matches!(&got[..], [LineEvent::TooLong { .. }]),
                "{text:?}: {got:?}"
            );
        }
    }

    #[test]
    fn a_long_line_is_reported_once_and_reading_goes_on() {
        let huge = vec![b'z'; 5 << 20];
        let got = frame(
            1000,
            &[b"ok\n", &huge[..3 << 20], &huge[3 << 20..], b"\nnext\n"],
        );
        assert_eq!(got.len(), 3);
        assert_eq!(got[0], line("ok"));
        match &got[1] {
            LineEvent::TooLong { prefix } => assert_eq!(prefix.len(), PREFIX_BYTES),
            e => panic!("{e:?}"),
        }
        assert_eq!(got[2], line("next"));
    }

    #[test]
    fn invalid_utf8_is_its_own_event() {
        let got = frame(100, &[b"\xff\xfeok\n", b"fine\n"]);
        assert!(
            matches!(&got[0], LineEvent::NotUtf8 { prefix, lossy } if prefix.contains("ok") && lossy.contains('\u{fffd}'))
        );
        assert_eq!(got[1], line("fine"));
    }

    #[test]
    fn a_too_long_last_line_without_newline_is_reported() {
        let got = frame(4, &[b"abcdefgh"]);
        assert!(matches!(&got[..], [LineEvent::TooLong { .. }]), "{got:?}");
    }
}
