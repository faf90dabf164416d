//! The compact text form of a position, used by `kalaha solve --position` and in tests:
//!
//! ```text
//! SOUTH_PITS:SOUTH_STORE/NORTH_PITS:NORTH_STORE/TO_MOVE
//! 4,4,0,5,5,5:1/4,4,4,4,4,4:0/s
//! ```
//!
//! Pits are listed from each owner's pit 1 (their left) and separated by commas; `TO_MOVE`
//! is `s` or `n` (or `south`/`north`). The number of pits comes from the rows.

use super::board::{Position, PositionError, Row};
use super::variant::{Rules, RulesError, Side};

/// Why a compact position could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParsePositionError {
    #[error(
        "malformed position {0:?}: expected SOUTH_PITS:STORE/NORTH_PITS:STORE/SIDE, e.g. 4,4,0,5,5,5:1/4,4,4,4,4,4:0/s"
    )]
    Shape(String),
    #[error(
        "malformed number {0:?} in position: pits and stores are whole numbers from 0 to 65535"
    )]
    Number(String),
    #[error("unknown side to move {0:?} in position: expected s, n, south or north")]
    Side(String),
    // The messages hold the inner errors' text, so they are not exposed as `source()`
    // (a printed chain would repeat them).
    #[error("invalid position: {0}")]
    Position(PositionError),
    #[error("invalid position: {0}")]
    Rules(RulesError),
}

impl From<PositionError> for ParsePositionError {
    fn from(e: PositionError) -> Self {
        ParsePositionError::Position(e)
    }
}

impl From<RulesError> for ParsePositionError {
    fn from(e: RulesError) -> Self {
        ParsePositionError::Rules(e)
    }
}

fn parse_row(text: &str, whole: &str) -> Result<Row, ParsePositionError> {
    let (pits, store) = text
        .split_once(':')
        .ok_or_else(|| ParsePositionError::Shape(whole.to_string()))?;
    let num = |s: &str| {
        s.trim()
            .parse::<u16>()
            .map_err(|_| ParsePositionError::Number(s.to_string()))
    };
    Ok(Row {
        pits: pits.split(',').map(num).collect::<Result<_, _>>()?,
        store: num(store)?,
    })
}

impl Position {
    /// Reads the compact form. The rules give `seeds` (the start count), `empty_capture`
    /// and `sweep`; the number of pits is taken from the rows.
    pub fn from_compact(text: &str, rules: Rules) -> Result<Position, ParsePositionError> {
        let parts: Vec<&str> = text.trim().split('/').collect();
        let [south, north, side] = parts[..] else {
            return Err(ParsePositionError::Shape(text.to_string()));
        };
        let south = parse_row(south, text)?;
        let north = parse_row(north, text)?;
        let to_move: Side = side
            .trim()
            .parse()
            .map_err(|_| ParsePositionError::Side(side.to_string()))?;
        if south.pits.len() != north.pits.len() {
            return Err(PositionError::RowsDiffer {
                south: south.pits.len(),
                north: north.pits.len(),
            }
            .into());
        }
        let rules = Rules::new(
            south.pits.len() as u32,
            rules.seeds() as u32,
            rules.empty_capture(),
            rules.sweep(),
        )?;
        Ok(Position::from_parts(rules, &south, &north, to_move)?)
    }

    /// The compact form (see the module documentation).
    pub fn to_compact(&self) -> String {
        let row = |side| {
            let pits: Vec<String> = self.pits(side).iter().map(|s| s.to_string()).collect();
            format!("{}:{}", pits.join(","), self.store(side))
        };
        let side = match self.to_move() {
            Side::South => "s",
            Side::North => "n",
        };
        format!("{}/{}/{}", row(Side::South), row(Side::North), side)
    }
}
