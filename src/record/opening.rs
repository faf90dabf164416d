//! An opening: where a game stands when the engines take over. A start position (the
//! rules' own, or a [`Board`] given in the Kalah Game Protocol's notation) and the sowings
//! the referee plays from it. The schedule hands openings out, the referee plays them,
//! `games.jsonl` records them (`start` and `opening`), and everything that replays a game
//! starts from them.

use crate::rules::{Position, Row, Rules, Side};
use std::fmt;

/// A start position in the board notation of the Kalah Game Protocol, south to move:
/// `<pits,south store,north store,south pits...,north pits...>`, each row from its owner's
/// left (`<6,0,0,4,4,4,4,4,4,4,4,4,4,4,4>` is the start of Kalah(6,4)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Board {
    south: Row,
    north: Row,
}

/// Why a board was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BoardError {
    #[error(
        "{0:?} is not a board: write <pits,south store,north store,south pits...,north \
         pits...>, e.g. <6,0,0,4,4,4,4,4,4,4,4,4,4,4,4> for the start of Kalah(6,4)"
    )]
    Syntax(String),
    #[error("the board has {got} pits a side but the rules have {expected}")]
    Pits { got: usize, expected: usize },
    #[error(
        "the board holds {got} seeds but the rules start with {expected} ({pits} pits of \
         {seeds} seeds a side)"
    )]
    Seeds {
        got: u32,
        expected: u32,
        pits: usize,
        seeds: usize,
    },
    #[error("the game is over on this board: {0}'s pits are empty")]
    Over(Side),
}

impl Board {
    /// The board of `pos`, which must have south to move (the notation has no side to
    /// move).
    pub fn of(pos: &Position) -> Board {
        debug_assert_eq!(pos.to_move(), Side::South, "a board has south to move");
        Board {
            south: pos.row(Side::South),
            north: pos.row(Side::North),
        }
    }

    /// Pits a side.
    pub fn pits(&self) -> usize {
        self.south.pits.len()
    }

    /// The position under `rules`, south to move: the pits a side and the seeds in all
    /// must be those of the rules' start, and neither row may be empty.
    pub fn position(&self, rules: Rules) -> Result<Position, BoardError> {
        if self.pits() != rules.pits() {
            return Err(BoardError::Pits {
                got: self.pits(),
                expected: rules.pits(),
            });
        }
        let got: u32 = [&self.south, &self.north]
            .iter()
            .map(|r| r.store as u32 + r.pits.iter().map(|&s| s as u32).sum::<u32>())
            .sum();
        let expected = Position::start(rules).total_seeds();
        if got != expected {
            return Err(BoardError::Seeds {
                got,
                expected,
                pits: rules.pits(),
                seeds: rules.seeds(),
            });
        }
        for (side, row) in [(Side::South, &self.south), (Side::North, &self.north)] {
            if row.pits.iter().all(|&s| s == 0) {
                return Err(BoardError::Over(side));
            }
        }
        let pos = Position::from_parts(rules, &self.south, &self.north, Side::South)
            .map_err(|_| BoardError::Syntax(self.to_string()))?;
        Ok(pos)
    }
}

impl fmt::Display for Board {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "<{},{},{}",
            self.pits(),
            self.south.store,
            self.north.store
        )?;
        for s in self.south.pits.iter().chain(&self.north.pits) {
            write!(f, ",{s}")?;
        }
        f.write_str(">")
    }
}

impl std::str::FromStr for Board {
    type Err = BoardError;
    fn from_str(text: &str) -> Result<Board, BoardError> {
        let bad = || BoardError::Syntax(text.to_string());
        let inner = text
            .trim()
            .strip_prefix('<')
            .and_then(|t| t.strip_suffix('>'))
            .ok_or_else(bad)?;
        let numbers: Vec<u16> = inner
            .split(',')
            .map(|w| w.trim().parse::<u16>().map_err(|_| bad()))
            .collect::<Result<_, _>>()?;
        let (&pits, rest) = numbers.split_first().ok_or_else(bad)?;
        let pits = usize::from(pits);
        if pits == 0 || rest.len() != 2 + 2 * pits {
            return Err(bad());
        }
        Ok(Board {
            south: Row {
                pits: rest[2..2 + pits].to_vec(),
                store: rest[0],
            },
            north: Row {
                pits: rest[2 + pits..].to_vec(),
                store: rest[1],
            },
        })
    }
}

impl serde::Serialize for Board {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Board {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Board, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// Where a game starts: a start position (`None`: the rules' own) and the sowings the
/// referee plays from it before the engines take over.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Opening {
    pub start: Option<Board>,
    pub pits: Vec<u8>,
}

/// Why an opening cannot be played under a game's rules.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OpeningError {
    #[error(transparent)]
    Board(#[from] BoardError),
    #[error("sowing {ply} ({pit}): {reason}")]
    Sowing { ply: usize, pit: u8, reason: String },
    #[error("the opening ends the game")]
    Over,
}

impl Opening {
    /// Sowings from the rules' start position.
    pub fn line(pits: Vec<u8>) -> Opening {
        Opening { start: None, pits }
    }

    /// A start position and no sowing.
    pub fn board(board: Board) -> Opening {
        Opening {
            start: Some(board),
            pits: Vec::new(),
        }
    }

    /// The position the game starts from (before the opening's sowings).
    pub fn start_position(&self, rules: Rules) -> Result<Position, BoardError> {
        match &self.start {
            None => Ok(Position::start(rules)),
            Some(b) => b.position(rules),
        }
    }

    /// The position the engines take over from: the start, then every sowing, each legal;
    /// the game must not be over.
    pub fn position(&self, rules: Rules) -> Result<Position, OpeningError> {
        let mut pos = self.start_position(rules)?;
        for (i, &pit) in self.pits.iter().enumerate() {
            pos = pos.play(i64::from(pit)).map_err(|e| OpeningError::Sowing {
                ply: i + 1,
                pit,
                reason: e.to_string(),
            })?;
        }
        if pos.is_over() {
            return Err(OpeningError::Over);
        }
        Ok(pos)
    }
}

/// As an openings file writes it: the board, then the pits, separated by a space (empty
/// for the rules' start and no sowing).
impl fmt::Display for Opening {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pits = super::format_pits(&self.pits);
        match (&self.start, pits.is_empty()) {
            (Some(b), true) => write!(f, "{b}"),
            (Some(b), false) => write!(f, "{b} {pits}"),
            (None, _) => f.write_str(&pits),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Sweep;

    #[test]
    fn boards_read_back_as_written_and_are_checked_against_the_rules() {
        let rules = Rules::default();
        let start: Board = "<6,0,0,4,4,4,4,4,4,4,4,4,4,4,4>".parse().unwrap();
        assert_eq!(start.position(rules).unwrap(), Position::start(rules));
        assert_eq!(start.to_string(), "<6,0,0,4,4,4,4,4,4,4,4,4,4,4,4>");
        assert_eq!(Board::of(&Position::start(rules)), start);
        // One seed moved from south's pit 1 to north's pit 6: a FairKalah-style board.
        let moved: Board = " < 6, 0,0, 3,4,4,4,4,4, 4,4,4,4,4,5 > ".parse().unwrap();
        let pos = moved.position(rules).unwrap();
        assert_eq!(pos.pits(Side::South), [3, 4, 4, 4, 4, 4]);
        assert_eq!(pos.pits(Side::North), [4, 4, 4, 4, 4, 5]);
        assert_eq!(pos.to_move(), Side::South);
        for bad in [
            "6,0,0,4",
            "<6,0,0,4,4>",
            "<0,0,0>",
            "<6,0,0,x,4,4,4,4,4,4,4,4,4,4,4>",
            "<>",
        ] {
            assert!(
                matches!(bad.parse::<Board>(), Err(BoardError::Syntax(_))),
                "{bad}"
            );
        }
        let small = Rules::new(4, 4, false, Sweep::Owner).unwrap();
        assert_eq!(
            start.position(small),
            Err(BoardError::Pits {
                got: 6,
                expected: 4
            })
        );
        let heavy: Board = "<6,1,0,4,4,4,4,4,4,4,4,4,4,4,4>".parse().unwrap();
        assert!(matches!(
            heavy.position(rules),
            Err(BoardError::Seeds {
                got: 49,
                expected: 48,
                ..
            })
        ));
        let over: Board = "<6,24,0,0,0,0,0,0,0,4,4,4,4,4,4>".parse().unwrap();
        assert_eq!(over.position(rules), Err(BoardError::Over(Side::South)));
    }

    #[test]
    fn an_opening_is_a_start_and_sowings() {
        let rules = Rules::default();
        let line = Opening::line(vec![3, 1]);
        assert_eq!(line.to_string(), "3 1");
        let after = line.position(rules).unwrap();
        assert_eq!(
            after,
            Position::start(rules).play(3).unwrap().play(1).unwrap()
        );
        let board = Opening::board("<6,0,0,3,4,4,4,4,4,4,4,4,4,4,5>".parse().unwrap());
        assert_eq!(board.to_string(), "<6,0,0,3,4,4,4,4,4,4,4,4,4,4,5>");
        assert_eq!(
            Opening::line(vec![3, 9]).position(rules),
            Err(OpeningError::Sowing {
                ply: 2,
                pit: 9,
                reason: Position::start(rules)
                    .play(3)
                    .unwrap()
                    .play(9)
                    .unwrap_err()
                    .to_string()
            })
        );
        assert_eq!(
            Opening::default().position(rules).unwrap(),
            Position::start(rules)
        );
    }
}
