//! The result of a game: from south's point of view in the results files, from one
//! engine's point of view in the protocol's `game_over`.

use crate::rules::Side;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The result of a finished game from south's point of view (south moved first). The
/// results files write [`GameResult::as_str`]: `1-0`, `1/2-1/2` or `0-1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GameResult {
    SouthWins,
    Draw,
    NorthWins,
}

impl GameResult {
    /// `1-0`, `1/2-1/2` or `0-1`.
    pub fn as_str(self) -> &'static str {
        match self {
            GameResult::SouthWins => "1-0",
            GameResult::Draw => "1/2-1/2",
            GameResult::NorthWins => "0-1",
        }
    }

    /// A win for `winner`, a draw for `None`.
    pub fn from_winner(winner: Option<Side>) -> GameResult {
        match winner {
            Some(Side::South) => GameResult::SouthWins,
            Some(Side::North) => GameResult::NorthWins,
            None => GameResult::Draw,
        }
    }

    /// The winning side, `None` for a draw.
    pub fn winner(self) -> Option<Side> {
        match self {
            GameResult::SouthWins => Some(Side::South),
            GameResult::NorthWins => Some(Side::North),
            GameResult::Draw => None,
        }
    }

    /// The result for the engine playing `side`.
    pub fn for_side(self, side: Side) -> SideResult {
        match self.winner() {
            None => SideResult::Draw,
            Some(w) if w == side => SideResult::Win,
            Some(_) => SideResult::Loss,
        }
    }

    /// Half points for `side`: 2 for a win, 1 for a draw, 0 for a loss.
    pub fn half_points(self, side: Side) -> u8 {
        self.for_side(side).half_points()
    }
}

impl fmt::Display for GameResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for GameResult {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "1-0" => Ok(GameResult::SouthWins),
            "1/2-1/2" => Ok(GameResult::Draw),
            "0-1" => Ok(GameResult::NorthWins),
            other => Err(format!(
                "unknown result {other:?} (expected 1-0, 1/2-1/2 or 0-1)"
            )),
        }
    }
}

impl Serialize for GameResult {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for GameResult {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// The result of a game for one engine, as the protocol's `game_over` sends it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SideResult {
    Win,
    Draw,
    Loss,
}

impl SideResult {
    /// 2 for a win, 1 for a draw, 0 for a loss.
    pub fn half_points(self) -> u8 {
        match self {
            SideResult::Win => 2,
            SideResult::Draw => 1,
            SideResult::Loss => 0,
        }
    }

    /// `win`, `draw` or `loss`.
    pub fn as_str(self) -> &'static str {
        match self {
            SideResult::Win => "win",
            SideResult::Draw => "draw",
            SideResult::Loss => "loss",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_read_back_and_agree_between_views() {
        for r in [
            GameResult::SouthWins,
            GameResult::Draw,
            GameResult::NorthWins,
        ] {
            assert_eq!(r.as_str().parse::<GameResult>(), Ok(r));
            let json = serde_json::to_string(&r).unwrap();
            assert_eq!(serde_json::from_str::<GameResult>(&json).unwrap(), r);
            assert_eq!(
                r.half_points(Side::South) + r.half_points(Side::North),
                2,
                "{r}"
            );
            assert_eq!(GameResult::from_winner(r.winner()), r);
        }
        assert_eq!(
            GameResult::SouthWins.for_side(Side::North),
            SideResult::Loss
        );
        assert_eq!(GameResult::Draw.for_side(Side::North), SideResult::Draw);
        assert!("*".parse::<GameResult>().is_err());
        assert_eq!(
            serde_json::to_string(&SideResult::Loss).unwrap(),
            "\"loss\""
        );
    }
}
