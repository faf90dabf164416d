//! Rule variants (`Rules`) and the two sides.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Largest supported number of pits per side.
pub const MAX_PITS: u8 = 16;
/// Largest supported number of seeds per pit at the start. With `MAX_PITS` this keeps the
/// seed total (2 * 16 * 100 = 3200) far below what a `u16` pit or store can hold.
pub const MAX_SEEDS: u8 = 100;

/// A player's seat. South moves first from the initial position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    South,
    North,
}

impl Side {
    /// The other side.
    #[inline]
    pub fn opponent(self) -> Side {
        match self {
            Side::South => Side::North,
            Side::North => Side::South,
        }
    }

    /// 0 for south, 1 for north.
    #[inline]
    pub fn index(self) -> usize {
        match self {
            Side::South => 0,
            Side::North => 1,
        }
    }

    /// The stable lowercase name used in files and in the protocol.
    pub fn as_str(self) -> &'static str {
        match self {
            Side::South => "south",
            Side::North => "north",
        }
    }
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Side {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "south" | "s" | "S" => Ok(Side::South),
            "north" | "n" | "N" => Ok(Side::North),
            other => Err(format!("unknown side {other:?}: expected south or north")),
        }
    }
}

/// Where the seeds still in the pits go when the game ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Sweep {
    /// Each player's remaining seeds go to that player's own store.
    #[default]
    Owner,
    /// All remaining seeds go to the store of the player whose pits ran empty.
    EmptySide,
    /// Remaining seeds are not counted for anyone.
    None,
}

impl Sweep {
    pub const ALL: [Sweep; 3] = [Sweep::Owner, Sweep::EmptySide, Sweep::None];

    /// The stable name used on the command line, in files and in the protocol.
    pub fn as_str(self) -> &'static str {
        match self {
            Sweep::Owner => "owner",
            Sweep::EmptySide => "empty_side",
            Sweep::None => "none",
        }
    }
}

impl fmt::Display for Sweep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Sweep {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "owner" => Ok(Sweep::Owner),
            "empty_side" | "empty-side" => Ok(Sweep::EmptySide),
            "none" => Ok(Sweep::None),
            other => Err(format!(
                "unknown sweep {other:?}: expected owner, empty_side or none"
            )),
        }
    }
}

/// A rule variant. Build it with [`Rules::new`] (validated) or start from
/// [`Rules::default`] (6 pits, 4 seeds, no empty capture, owner sweep).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "RulesRepr", into = "RulesRepr")]
pub struct Rules {
    pits: u8,
    seeds: u8,
    empty_capture: bool,
    sweep: Sweep,
}

/// Why a rule variant cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RulesError {
    #[error("unsupported number of pits {0}: it must be between 1 and {MAX_PITS}")]
    Pits(u32),
    #[error("unsupported number of seeds per pit {0}: it must be between 1 and {MAX_SEEDS}")]
    Seeds(u32),
}

impl Default for Rules {
    fn default() -> Self {
        Rules {
            pits: 6,
            seeds: 4,
            empty_capture: false,
            sweep: Sweep::Owner,
        }
    }
}

impl Rules {
    /// A validated rule variant: `pits` in 1..=`MAX_PITS`, `seeds` in 1..=`MAX_SEEDS`.
    pub fn new(
        pits: u32,
        seeds: u32,
        empty_capture: bool,
        sweep: Sweep,
    ) -> Result<Rules, RulesError> {
        if !(1..=MAX_PITS as u32).contains(&pits) {
            return Err(RulesError::Pits(pits));
        }
        if !(1..=MAX_SEEDS as u32).contains(&seeds) {
            return Err(RulesError::Seeds(seeds));
        }
        Ok(Rules {
            pits: pits as u8,
            seeds: seeds as u8,
            empty_capture,
            sweep,
        })
    }

    /// Pits per side.
    #[inline]
    pub fn pits(&self) -> usize {
        self.pits as usize
    }

    /// Seeds per pit at the start.
    #[inline]
    pub fn seeds(&self) -> usize {
        self.seeds as usize
    }

    /// Whether a last seed in an empty own pit goes to the store even when the opposite pit
    /// is empty.
    #[inline]
    pub fn empty_capture(&self) -> bool {
        self.empty_capture
    }

    #[inline]
    pub fn sweep(&self) -> Sweep {
        self.sweep
    }

    /// All seeds on the board at the start.
    pub fn total_seeds(&self) -> u32 {
        2 * self.pits as u32 * self.seeds as u32
    }

    /// A short human-readable name, e.g. `6x4` or `6x4 empty_capture sweep=none`.
    pub fn describe(&self) -> String {
        let mut s = format!("{}x{}", self.pits, self.seeds);
        if self.empty_capture {
            s.push_str(" empty_capture");
        }
        if self.sweep != Sweep::Owner {
            s.push_str(" sweep=");
            s.push_str(self.sweep.as_str());
        }
        s
    }
}

impl fmt::Display for Rules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
    }
}

/// The serialized form of [`Rules`], as in the protocol's `new_game` message.
#[derive(Serialize, Deserialize)]
struct RulesRepr {
    pits: u32,
    seeds: u32,
    #[serde(default)]
    empty_capture: bool,
    #[serde(default)]
    sweep: Sweep,
}

impl TryFrom<RulesRepr> for Rules {
    type Error = RulesError;
    fn try_from(r: RulesRepr) -> Result<Self, Self::Error> {
        Rules::new(r.pits, r.seeds, r.empty_capture, r.sweep)
    }
}

impl From<Rules> for RulesRepr {
    fn from(r: Rules) -> Self {
        RulesRepr {
            pits: r.pits as u32,
            seeds: r.seeds as u32,
            empty_capture: r.empty_capture,
            sweep: r.sweep,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_enforced_and_named() {
        assert!(Rules::new(1, 1, false, Sweep::Owner).is_ok());
        assert!(Rules::new(16, 100, true, Sweep::None).is_ok());
        let e = Rules::new(0, 4, false, Sweep::Owner).unwrap_err();
        assert_eq!(e, RulesError::Pits(0));
        assert!(e.to_string().contains("between 1 and 16"));
        assert_eq!(
            Rules::new(17, 4, false, Sweep::Owner).unwrap_err(),
            RulesError::Pits(17)
        );
        assert_eq!(
            Rules::new(6, 0, false, Sweep::Owner).unwrap_err(),
            RulesError::Seeds(0)
        );
        assert_eq!(
            Rules::new(6, 101, false, Sweep::Owner).unwrap_err(),
            RulesError::Seeds(101)
        );
    }

    #[test]
    fn serde_round_trip_and_validation() {
        let r = Rules::new(4, 3, true, Sweep::EmptySide).unwrap();
        let json = serde_json::to_string(&r).unwrap();
        assert_eq!(
            json,
            r#"{"pits":4,"seeds":3,"empty_capture":true,"sweep":"empty_side"}"#
        );
        assert_eq!(serde_json::from_str::<Rules>(&json).unwrap(), r);
        assert!(serde_json::from_str::<Rules>(r#"{"pits":40,"seeds":3}"#).is_err());
        assert_eq!(
            serde_json::from_str::<Rules>(r#"{"pits":6,"seeds":4}"#).unwrap(),
            Rules::default()
        );
    }

    #[test]
    fn names_parse() {
        for s in Sweep::ALL {
            assert_eq!(s.as_str().parse::<Sweep>().unwrap(), s);
        }
        assert!(
            "both"
                .parse::<Sweep>()
                .unwrap_err()
                .contains("owner, empty_side or none")
        );
        assert_eq!("north".parse::<Side>().unwrap(), Side::North);
    }
}
