//! KGP commands as text: one line is an optional id, an optional reference to an earlier
//! id, a name and arguments (integers, reals, words, quoted strings and board literals).
//! Pure and synchronous: parsing and printing are tested on any text.
//!
//! ```text
//! 4 state <6,0,0,4,4,4,4,4,4,4,4,4,4,4,4>
//! 7@4 move 3
//! 6@4 stop
//! 1 set "info:name" "my agent"
//! @4 yield
//! ```

use crate::rules::{Position, Side};
use std::fmt;

/// The protocol version kalaha speaks: `kgp 1 0 0`.
pub const VERSION: [u32; 3] = [1, 0, 0];

/// One argument of a command.
#[derive(Clone, Debug, PartialEq)]
pub enum Arg {
    /// `32`, `+0`, `-100`.
    Int(i64),
    /// `0.5`, `-.25`.
    Real(f64),
    /// `freeplay`, `info:name`: letters, digits, `-` and `:`.
    Word(String),
    /// `"with \"quotes\""`, unescaped.
    Str(String),
    /// `<3,0,0,3,3,3,3,3,3>`: the numbers.
    Board(Vec<u64>),
}

impl Arg {
    /// The text of a word or a string (KGP clients send either where text is expected).
    pub fn text(&self) -> Option<&str> {
        match self {
            Arg::Word(s) | Arg::Str(s) => Some(s),
            _ => None,
        }
    }

    /// A string argument, quoted.
    pub fn string(s: impl Into<String>) -> Arg {
        Arg::Str(s.into())
    }
}

impl fmt::Display for Arg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Arg::Int(n) => write!(f, "{n}"),
            Arg::Real(x) => write!(f, "{x:?}"),
            Arg::Word(w) => f.write_str(w),
            Arg::Str(s) => {
                f.write_str("\"")?;
                for c in s.chars() {
                    match c {
                        '"' | '\\' => write!(f, "\\{c}")?,
                        // A line break would end the command.
                        '\n' | '\r' => f.write_str(" ")?,
                        c => write!(f, "{c}")?,
                    }
                }
                f.write_str("\"")
            }
            Arg::Board(cells) => {
                f.write_str("<")?;
                for (i, n) in cells.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{n}")?;
                }
                f.write_str(">")
            }
        }
    }
}

/// One command.
#[derive(Clone, Debug, PartialEq)]
pub struct Command {
    pub id: Option<u64>,
    /// The id of the command this one answers (`@4`).
    pub reference: Option<u64>,
    /// The command name, in lower case.
    pub name: String,
    pub args: Vec<Arg>,
}

/// Why a line is not a KGP command.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("the line is empty")]
    Empty,
    #[error("no command name (a name is letters and digits)")]
    NoName,
    #[error("the id or reference {0:?} is not a number below 2^64")]
    BadId(String),
    #[error("a string argument has no closing quote")]
    UnclosedString,
    #[error("argument {0:?} is none of integer, real, word, string or board")]
    BadArg(String),
    #[error("the integer {0} does not fit in 64 bits")]
    IntRange(String),
}

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-' || c == ':'
}

impl Command {
    /// A command without id, reference or arguments.
    pub fn new(name: &str) -> Command {
        Command {
            id: None,
            reference: None,
            name: name.to_string(),
            args: Vec::new(),
        }
    }

    pub fn with_id(mut self, id: u64) -> Command {
        self.id = Some(id);
        self
    }

    pub fn with_ref(mut self, reference: u64) -> Command {
        self.reference = Some(reference);
        self
    }

    pub fn arg(mut self, arg: Arg) -> Command {
        self.args.push(arg);
        self
    }

    /// Parses one line (without its line ending; surrounding white space is ignored).
    pub fn parse(line: &str) -> Result<Command, ParseError> {
        let line = line.trim();
        if line.is_empty() {
            return Err(ParseError::Empty);
        }
        let mut rest = line;
        let (mut id, mut reference) = (None, None);
        // `4 name`, `6@4 name` or `@4 name`: an id part is digits and `@` before white space.
        let head_end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let head = &rest[..head_end];
        let is_id_part = head.starts_with('@')
            || (head.contains('@') && head.chars().all(|c| c.is_ascii_digit() || c == '@'))
            || (head_end < rest.len() && head.chars().all(|c| c.is_ascii_digit()));
        if is_id_part {
            let (id_text, ref_text) = match head.split_once('@') {
                Some((i, r)) => (i, Some(r)),
                None => (head, None),
            };
            let number = |t: &str| {
                if !t.is_empty() && t.chars().all(|c| c.is_ascii_digit()) {
                    t.parse::<u64>()
                        .map_err(|_| ParseError::BadId(t.to_string()))
                } else {
                    Err(ParseError::BadId(t.to_string()))
                }
            };
            if !id_text.is_empty() {
                id = Some(number(id_text)?);
            }
            if let Some(r) = ref_text {
                reference = Some(number(r)?);
            }
            rest = rest[head_end..].trim_start();
        }
        let name_end = rest
            .find(|c: char| !c.is_ascii_alphanumeric())
            .unwrap_or(rest.len());
        if name_end == 0
            || !rest[name_end..]
                .chars()
                .next()
                .is_none_or(char::is_whitespace)
        {
            return Err(ParseError::NoName);
        }
        let name = rest[..name_end].to_ascii_lowercase();
        rest = rest[name_end..].trim_start();
        let mut args = Vec::new();
        while !rest.is_empty() {
            let (arg, used) = parse_arg(rest)?;
            args.push(arg);
            rest = rest[used..].trim_start();
        }
        Ok(Command {
            id,
            reference,
            name,
            args,
        })
    }

    /// The command as one line (without a line ending).
    pub fn to_line(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.id, self.reference) {
            (Some(i), Some(r)) => write!(f, "{i}@{r} ")?,
            (Some(i), None) => write!(f, "{i} ")?,
            (None, Some(r)) => write!(f, "@{r} ")?,
            (None, None) => {}
        }
        f.write_str(&self.name)?;
        for a in &self.args {
            write!(f, " {a}")?;
        }
        Ok(())
    }
}

/// One argument at the start of `text` (which starts with no white space), and the bytes
/// it used. An argument must end at white space or at the end of the line.
fn parse_arg(text: &str) -> Result<(Arg, usize), ParseError> {
    let token_end = |from: usize| {
        text[from..]
            .find(char::is_whitespace)
            .map_or(text.len(), |i| from + i)
    };
    let bad = |end: usize| ParseError::BadArg(crate::record::truncate(&text[..end], 40));
    if let Some(body) = text.strip_prefix('"') {
        let mut out = String::new();
        let mut chars = body.char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => {
                    let used = 1 + i + 1;
                    if !text[used..].chars().next().is_none_or(char::is_whitespace) {
                        return Err(bad(token_end(used)));
                    }
                    return Ok((Arg::Str(out), used));
                }
                '\\' => match chars.next() {
                    Some((_, e)) => out.push(e),
                    None => return Err(ParseError::UnclosedString),
                },
                c => out.push(c),
            }
        }
        return Err(ParseError::UnclosedString);
    }
    let end = token_end(0);
    let token = &text[..end];
    if let Some(inner) = token.strip_prefix('<').and_then(|t| t.strip_suffix('>')) {
        let cells: Option<Vec<u64>> = inner
            .split(',')
            .map(|n| {
                (!n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
                    .then(|| n.parse().ok())
                    .flatten()
            })
            .collect();
        return cells.map(|c| (Arg::Board(c), end)).ok_or_else(|| bad(end));
    }
    let unsigned = token.strip_prefix(['+', '-']).unwrap_or(token);
    if !unsigned.is_empty() && unsigned.chars().all(|c| c.is_ascii_digit()) {
        return token
            .strip_prefix('+')
            .unwrap_or(token)
            .parse::<i64>()
            .map(|n| (Arg::Int(n), end))
            .map_err(|_| ParseError::IntRange(token.to_string()));
    }
    if let Some((whole, frac)) = unsigned.split_once('.')
        && whole.chars().all(|c| c.is_ascii_digit())
        && !frac.is_empty()
        && frac.chars().all(|c| c.is_ascii_digit())
    {
        return token
            .parse::<f64>()
            .map(|x| (Arg::Real(x), end))
            .map_err(|_| bad(end));
    }
    if token.chars().all(is_word_char) {
        return Ok((Arg::Word(token.to_string()), end));
    }
    Err(bad(end))
}

/// The board literal of `pos` as its mover sees it, as south:
/// `<pits, mover's store, opponent's store, mover's pits..., opponent's pits...>`, pits
/// from their owner's left (KGP's pit 1 is kalaha's pit 1 of the mover).
pub fn board_of(pos: &Position) -> Arg {
    let me = pos.to_move();
    let you = me.opponent();
    let mut cells = Vec::with_capacity(3 + 2 * pos.rules().pits());
    cells.push(pos.rules().pits() as u64);
    cells.push(pos.store(me) as u64);
    cells.push(pos.store(you) as u64);
    cells.extend(pos.pits(me).iter().map(|&s| s as u64));
    cells.extend(pos.pits(you).iter().map(|&s| s as u64));
    Arg::Board(cells)
}

/// A board literal read back: each side's pits (from the owner's left) and store, south
/// being the side to move.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Board {
    pub south_store: u16,
    pub north_store: u16,
    pub south: Vec<u16>,
    pub north: Vec<u16>,
}

impl Board {
    /// Reads the numbers of a board literal; `None` when they do not describe a board.
    pub fn from_cells(cells: &[u64]) -> Option<Board> {
        let (&n, rest) = cells.split_first()?;
        let n = usize::try_from(n).ok().filter(|&n| n >= 1)?;
        if rest.len() != 2 + 2 * n {
            return None;
        }
        let small: Option<Vec<u16>> = rest.iter().map(|&c| u16::try_from(c).ok()).collect();
        let small = small?;
        Some(Board {
            south_store: small[0],
            north_store: small[1],
            south: small[2..2 + n].to_vec(),
            north: small[2 + n..].to_vec(),
        })
    }

    /// Each side's row, south first, as the rules see them.
    pub fn rows(&self) -> [crate::rules::Row; 2] {
        [
            crate::rules::Row {
                pits: self.south.clone(),
                store: self.south_store,
            },
            crate::rules::Row {
                pits: self.north.clone(),
                store: self.north_store,
            },
        ]
    }

    /// The side that moves in every KGP board.
    pub const TO_MOVE: Side = Side::South;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Rules;

    fn parse(s: &str) -> Command {
        Command::parse(s).unwrap_or_else(|e| panic!("{s:?}: {e}"))
    }

    #[test]
    fn ids_and_references() {
        let c = parse("6@4 stop");
        assert_eq!(
            (c.id, c.reference, c.name.as_str()),
            (Some(6), Some(4), "stop")
        );
        let c = parse("@8 yield");
        assert_eq!((c.id, c.reference), (None, Some(8)));
        let c = parse("4 state <3,0,0,3,3,3,3,3,3>");
        assert_eq!((c.id, c.reference), (Some(4), None));
        assert_eq!(c.args, [Arg::Board(vec![3, 0, 0, 3, 3, 3, 3, 3, 3])]);
        let c = parse("kgp 1 0 0");
        assert_eq!(c.id, None);
        assert_eq!(c.args, [Arg::Int(1), Arg::Int(0), Arg::Int(0)]);
        let c = parse("  3@4   MOVE   2  \r");
        assert_eq!(
            (c.id, c.reference, c.name.as_str()),
            (Some(3), Some(4), "move")
        );
        assert_eq!(c.args, [Arg::Int(2)]);
        // A bare number is a name (and an unknown command), not an id.
        assert_eq!(parse("42").name, "42");
    }

    #[test]
    fn argument_kinds() {
        let c = parse(r#"1 set "info:name" "a \"quoted\" \\ name" word-1:x +5 -7 0.5 -.25"#);
        assert_eq!(
            c.args,
            [
                Arg::Str("info:name".into()),
                Arg::Str(r#"a "quoted" \ name"#.into()),
                Arg::Word("word-1:x".into()),
                Arg::Int(5),
                Arg::Int(-7),
                Arg::Real(0.5),
                Arg::Real(-0.25),
            ]
        );
        assert_eq!(c.args[0].text(), Some("info:name"));
        assert_eq!(parse("mode freeplay").args[0].text(), Some("freeplay"));
    }

    #[test]
    fn garbage_is_refused_with_a_reason() {
        for (line, want) in [
            ("", ParseError::Empty),
            ("   ", ParseError::Empty),
            (r#"{"type":"move","pit":3}"#, ParseError::NoName),
            ("%%%", ParseError::NoName),
            ("move! 3", ParseError::NoName),
            ("1@x move 3", ParseError::NoName),
            (
                "99999999999999999999 move 3",
                ParseError::BadId("99999999999999999999".into()),
            ),
            (r#"set "open"#, ParseError::UnclosedString),
            (
                "move 99999999999999999999",
                ParseError::IntRange("99999999999999999999".into()),
            ),
        ] {
            assert_eq!(Command::parse(line), Err(want), "{line:?}");
        }
        for line in [
            "state <3,1,x>",
            "state <>",
            "move 3$",
            r#"set "a"b"#,
            "move 1.",
        ] {
            assert!(
                matches!(Command::parse(line), Err(ParseError::BadArg(_))),
                "{line:?}: {:?}",
                Command::parse(line)
            );
        }
    }

    #[test]
    fn printing_round_trips() {
        let c = Command::new("set")
            .with_id(2)
            .with_ref(7)
            .arg(Arg::string("game:id"))
            .arg(Arg::string("t-1 \"x\"\\"))
            .arg(Arg::Int(-3))
            .arg(Arg::Word("absolute".into()))
            .arg(Arg::Board(vec![1, 0, 0, 1, 1]));
        let line = c.to_line();
        assert_eq!(
            line,
            r#"2@7 set "game:id" "t-1 \"x\"\\" -3 absolute <1,0,0,1,1>"#
        );
        assert_eq!(parse(&line), c);
        assert_eq!(Command::new("yield").with_ref(4).to_line(), "@4 yield");
        // A line break in a string cannot end the command.
        let c = Command::new("error").arg(Arg::string("two\nlines"));
        assert_eq!(c.to_line(), r#"error "two lines""#);
    }

    #[test]
    fn boards_are_seen_by_the_mover_as_south() {
        let rules = Rules::default();
        let pos = Position::start(rules).play(3).unwrap(); // south moves again
        assert_eq!(
            board_of(&pos).to_string(),
            "<6,1,0,4,4,0,5,5,5,4,4,4,4,4,4>"
        );
        let pos = pos.play(1).unwrap(); // north to move
        assert_eq!(pos.to_move(), Side::North);
        let Arg::Board(cells) = board_of(&pos) else {
            unreachable!()
        };
        assert_eq!(cells, [6, 0, 1, 4, 4, 4, 4, 4, 4, 0, 5, 1, 6, 6, 5]);
        let b = Board::from_cells(&cells).unwrap();
        assert_eq!(b.south, pos.pits(Side::North));
        assert_eq!(b.north, pos.pits(Side::South));
        assert_eq!((b.south_store, b.north_store), (0, 1));
        assert_eq!(Board::from_cells(&[2, 0, 0, 1, 1, 1]), None);
        assert_eq!(Board::from_cells(&[0, 0, 0]), None);
        assert_eq!(Board::from_cells(&[1, 0, 0, 70_000, 1]), None);
    }
}
