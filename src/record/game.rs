//! The record of a finished game: one line of `games.jsonl`, and the source of its
//! `games.csv` row.

use super::{Board, GameResult, Opening, Termination};
use crate::rules::{Position, Rules, Side};
use serde::{Deserialize, Serialize};

/// What an engine reports about its search in an `info` line; every field is optional.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchInfo {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth: Option<u32>,
    /// The expected final store difference in seeds, from the mover's point of view.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_ms: Option<u64>,
    /// The expected line of play, as pit numbers of the successive movers (the first
    /// `MAX_PV`, 64, are kept).
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "first_pits"
    )]
    pub pv: Vec<u8>,
}

/// The longest principal variation kept from an `info` line.
pub const MAX_PV: usize = 64;

/// Reads a list of pits, keeping the first [`MAX_PV`] (the rest is read and dropped, so
/// that a huge `pv` costs no memory).
fn first_pits<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
    struct Pits;
    impl<'de> serde::de::Visitor<'de> for Pits {
        type Value = Vec<u8>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a list of pit numbers")
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<u8>, A::Error> {
            let mut pits = Vec::new();
            while let Some(p) = seq.next_element::<u8>()? {
                if pits.len() < MAX_PV {
                    pits.push(p);
                }
            }
            Ok(pits)
        }
    }
    d.deserialize_seq(Pits)
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One sowing of a game.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MoveRecord {
    pub side: Side,
    pub pit: u8,
    /// A sowing of the opening, played by the referee before the engines took over.
    #[serde(default, skip_serializing_if = "is_false")]
    pub opening: bool,
    /// Time the engine used, in milliseconds on the referee's clock (0 in the opening).
    #[serde(default)]
    pub time_ms: u64,
    /// The engine's latest `info` reports before the move.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub info: Vec<SearchInfo>,
    /// `info` reports received for this move but not kept.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub info_dropped: u64,
}

impl MoveRecord {
    /// A sowing of the opening.
    pub fn opening(side: Side, pit: u8) -> MoveRecord {
        MoveRecord {
            side,
            pit,
            opening: true,
            time_ms: 0,
            info: Vec::new(),
            info_dropped: 0,
        }
    }
}

/// A finished game: where it stands in its tournament, who played, every sowing, how it
/// ended. Written as one line of `games.jsonl`; its `games.csv` row is [`GameRecord::row`]
/// plus the columns the results writer adds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GameRecord {
    /// The game id: `<tournament id>-<number>`.
    pub game: String,
    pub number: u64,
    pub round: u64,
    /// The game pair (the two games of one opening, seats swapped).
    pub pair: u64,
    /// Engine names; south moved first.
    pub south: String,
    pub north: String,
    pub rules: Rules,
    /// The start position when it is not the rules' own (absent in older records: the
    /// rules' start).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<Board>,
    /// The opening's pits (also the first entries of `moves`).
    pub opening: Vec<u8>,
    /// Every sowing from the start position, the opening's first.
    pub moves: Vec<MoveRecord>,
    pub final_position: Position,
    pub result: GameResult,
    /// The final stores (after the sweep; for an adjudicated game, as the adjudication
    /// says).
    pub south_score: u16,
    pub north_score: u16,
    pub termination: Termination,
    /// The side whose engine committed the fault, for a fault.
    #[serde(default)]
    pub loser: Option<Side>,
    /// What happened, for anything but a normal end.
    #[serde(default)]
    pub detail: String,
    /// The offending line of a fault, when a line was to blame.
    #[serde(default)]
    pub line: Option<String>,
    /// The id of an earlier game of the run that this one repeats move for move, with the
    /// same engines in the same seats from the same start: it adds no evidence, and is left
    /// out of the Elo and the SPRT (absent in older records: not a repeat).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeats: Option<String>,
    pub duration_ms: u64,
}

impl GameRecord {
    /// Sowings in the game, the opening included.
    pub fn plies(&self) -> usize {
        self.moves.len()
    }

    /// The positions of the game from the start, `moves.len() + 1` of them, checked
    /// against the rules: each sowing by the side to move and legal, and a game that ended
    /// normally over, with the stores and the result recorded. The error names the first
    /// thing that does not hold: the record was edited or damaged, and nothing that reads
    /// it (a replay, an analysis) should show a game that was not played.
    pub fn replay(&self) -> Result<Vec<Position>, String> {
        self.check_summary()?;
        let mut pos = self.start_position()?;
        let mut out = Vec::with_capacity(self.moves.len() + 1);
        out.push(pos);
        for (i, m) in self.moves.iter().enumerate() {
            if pos.is_over() {
                return Err(format!("sowing {} comes after the game is over", i + 1));
            }
            if pos.to_move() != m.side {
                return Err(format!(
                    "sowing {} is by {} but {} is to move",
                    i + 1,
                    m.side,
                    pos.to_move()
                ));
            }
            pos = pos
                .play(i64::from(m.pit))
                .map_err(|e| format!("sowing {}: {e}", i + 1))?;
            out.push(pos);
        }
        if self.termination == Termination::Normal {
            let Some(end) = pos.outcome() else {
                return Err(format!(
                    "it ended normally but the game is not over after its {} sowings",
                    self.moves.len()
                ));
            };
            if (end.south, end.north) != (self.south_score, self.north_score) {
                return Err(format!(
                    "its sowings end {}-{} but it records {}-{}",
                    end.south, end.north, self.south_score, self.north_score
                ));
            }
            if GameResult::from_winner(end.winner) != self.result {
                return Err(format!(
                    "its sowings end {}-{} but it records the result {}",
                    end.south, end.north, self.result
                ));
            }
        }
        Ok(out)
    }

    /// The parts of the record that do not need a replay: stores within the seeds of the
    /// game, a loser exactly when a fault ended it (and then the other side's win), and
    /// the opening the same as the sowings marked as the opening's, which come first.
    fn check_summary(&self) -> Result<(), String> {
        // kalaha never writes a name or an id that needs cleaning to be shown.
        for (what, text) in [
            ("south", &self.south),
            ("north", &self.north),
            ("id", &self.game),
        ] {
            if super::clean_text(text) != text.as_str() {
                return Err(format!(
                    "its {what} {} holds control characters",
                    super::shown_line(text)
                ));
            }
        }
        let seeds = 2 * self.rules.pits() as u32 * self.rules.seeds() as u32;
        if u32::from(self.south_score) + u32::from(self.north_score) > seeds {
            return Err(format!(
                "its stores {}-{} hold more than the {seeds} seeds of the game",
                self.south_score, self.north_score
            ));
        }
        let how = match self.termination {
            Termination::Resigned => "a resignation",
            _ => "a fault",
        };
        match (self.termination.names_loser(), self.loser) {
            (true, Some(loser)) => {
                if self.result != GameResult::from_winner(Some(loser.opponent())) {
                    return Err(format!(
                        "{loser} lost by {how} but it records the result {}",
                        self.result
                    ));
                }
            }
            (true, None) => return Err(format!("it ended by {how} but names no loser")),
            (false, Some(loser)) => {
                return Err(format!(
                    "it names {loser} as the loser of a fault it does not record"
                ));
            }
            (false, None) => {}
        }
        let marked = self.moves.iter().take_while(|m| m.opening).count();
        if self.moves[marked..].iter().any(|m| m.opening) {
            return Err("a sowing of the opening comes after an engine's".to_string());
        }
        if !self.moves[..marked]
            .iter()
            .map(|m| m.pit)
            .eq(self.opening.iter().copied())
        {
            return Err(format!(
                "its opening {} is not its first sowings {}",
                format_pits(&self.opening),
                format_pits(
                    &self.moves[..marked]
                        .iter()
                        .map(|m| m.pit)
                        .collect::<Vec<_>>()
                )
            ));
        }
        Ok(())
    }

    /// The opening: the start position and the sowings the referee played from it.
    pub fn opening(&self) -> Opening {
        Opening {
            start: self.start.clone(),
            pits: self.opening.clone(),
        }
    }

    /// The position the game started from, checked against its rules.
    pub fn start_position(&self) -> Result<Position, String> {
        Opening {
            start: self.start.clone(),
            pits: Vec::new(),
        }
        .start_position(self.rules)
        .map_err(|e| format!("its start position: {e}"))
    }

    /// Sowings chosen by the engines.
    pub fn engine_moves(&self) -> impl Iterator<Item = &MoveRecord> {
        self.moves.iter().filter(|m| !m.opening)
    }

    /// The name of the engine playing `side`.
    pub fn name(&self, side: Side) -> &str {
        match side {
            Side::South => &self.south,
            Side::North => &self.north,
        }
    }

    /// The faulting engine's name, if any.
    pub fn loser_name(&self) -> Option<&str> {
        self.loser.map(|s| self.name(s))
    }

    /// What the statistics need of this game.
    pub fn row(&self) -> GameRow<'_> {
        GameRow {
            game: &self.game,
            pair: Some(self.pair),
            south: &self.south,
            north: &self.north,
            result: self.result,
            south_score: Some(self.south_score),
            north_score: Some(self.north_score),
            termination: self.termination,
            loser: self.loser,
            repeat: self.repeats.is_some(),
        }
    }

    /// What makes two games the same game: the engines in their seats, the start and every
    /// sowing (the opening's too: a game whose opening is where another game went by its
    /// engines' moves is that game again when the same sowings follow).
    pub fn repeat_key(&self) -> (&str, &str, Option<String>, Vec<u8>) {
        // A start given as a board that is the rules' own start is no other start.
        let own = Position::start(self.rules);
        (
            &self.south,
            &self.north,
            self.start
                .as_ref()
                .filter(|b| b.position(self.rules).ok() != Some(own))
                .map(|b| b.to_string()),
            self.moves.iter().map(|m| m.pit).collect(),
        )
    }
}

/// The part of a game record the statistics use, borrowed from a [`GameRecord`] or from a
/// `games.csv` row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GameRow<'a> {
    pub game: &'a str,
    /// The game pair; `None` when unknown (a results file without the column).
    pub pair: Option<u64>,
    pub south: &'a str,
    pub north: &'a str,
    pub result: GameResult,
    pub south_score: Option<u16>,
    pub north_score: Option<u16>,
    pub termination: Termination,
    pub loser: Option<Side>,
    /// The game repeats an earlier one move for move (see [`GameRecord::repeats`]).
    pub repeat: bool,
}

impl GameRow<'_> {
    /// The name of the engine playing `side`.
    pub fn name(&self, side: Side) -> &str {
        match side {
            Side::South => self.south,
            Side::North => self.north,
        }
    }
}

/// Pit numbers as the openings file and the `opening` column of `games.csv` write them:
/// separated by spaces (`3 1 6`).
pub fn format_pits(pits: &[u8]) -> String {
    let words: Vec<String> = pits.iter().map(|p| p.to_string()).collect();
    words.join(" ")
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn a_long_pv_is_cut_and_a_bad_one_refused() {
        let pv: Vec<String> = (0..100_000).map(|i| (i % 6 + 1).to_string()).collect();
        let line = format!(r#"{{"depth":3,"pv":[{}]}}"#, pv.join(","));
        let info: SearchInfo = serde_json::from_str(&line).unwrap();
        assert_eq!(info.pv.len(), MAX_PV);
        assert_eq!(info.pv[..3], [1, 2, 3]);
        assert!(serde_json::from_str::<SearchInfo>(r#"{"pv":[1,300]}"#).is_err());
    }

    /// A game of `first` against `first` (the lowest legal pit each time), played out.
    pub(crate) fn played() -> GameRecord {
        let mut pos = Position::start(Rules::default());
        let mut pits = Vec::new();
        while !pos.is_over() {
            let pit = pos.legal_moves().next().unwrap();
            pits.push(pit);
            pos = pos.play(i64::from(pit)).unwrap();
        }
        game_of(Rules::default(), &pits, 0)
    }

    /// A finished game of `pits` played from the start, the first `opening` of them marked as
    /// the opening's, between engines `s` and `n`.
    pub(crate) fn game_of(rules: Rules, pits: &[u8], opening: usize) -> GameRecord {
        let mut pos = Position::start(rules);
        let mut moves = Vec::new();
        for (i, &p) in pits.iter().enumerate() {
            let mut m = MoveRecord::opening(pos.to_move(), p);
            m.opening = i < opening;
            moves.push(m);
            pos = pos.play(p as i64).unwrap();
        }
        assert!(pos.is_over());
        let o = pos.outcome().unwrap();
        GameRecord {
            game: "t-1".into(),
            number: 1,
            round: 1,
            pair: 1,
            south: "s".into(),
            north: "n".into(),
            rules,
            start: None,
            opening: pits[..opening].to_vec(),
            moves,
            final_position: pos,
            result: GameResult::from_winner(o.winner),
            south_score: pos.store(Side::South),
            north_score: pos.store(Side::North),
            termination: Termination::Normal,
            loser: None,
            detail: String::new(),
            line: None,
            repeats: None,
            duration_ms: 1,
        }
    }

    #[test]
    fn only_a_game_the_rules_allow_replays() {
        let good = played();
        assert_eq!(good.replay().unwrap().len(), good.moves.len() + 1);
        let edit = |f: &dyn Fn(&mut GameRecord)| {
            let mut g = good.clone();
            f(&mut g);
            g.replay().unwrap_err()
        };
        let e = edit(&|g| g.moves[1].side = g.moves[1].side.opponent());
        assert!(e.contains("sowing 2 is by"), "{e}");
        let e = edit(&|g| g.moves[0].pit = 9);
        assert!(e.starts_with("sowing 1:"), "{e}");
        let e = edit(&|g| {
            g.moves.pop();
        });
        assert!(e.contains("not over"), "{e}");
        let e = edit(&|g| g.north_score -= 1);
        assert!(e.contains("records"), "{e}");
        let e = edit(&|g| {
            g.result = match g.result {
                GameResult::SouthWins => GameResult::NorthWins,
                _ => GameResult::SouthWins,
            }
        });
        assert!(e.contains("the result"), "{e}");
        let e = edit(&|g| {
            let mut m = MoveRecord::opening(Side::South, 1);
            m.opening = false;
            g.moves.push(m);
        });
        assert!(e.contains("after the game is over"), "{e}");
        let e = edit(&|g| g.moves.push(MoveRecord::opening(Side::South, 1)));
        assert!(e.contains("opening comes after"), "{e}");
        let e = edit(&|g| g.south = "x\u{1b}[2J".into());
        assert!(
            e.contains("control characters") && !e.contains('\u{1b}'),
            "{e}"
        );
        let e = edit(&|g| g.north_score = 99);
        assert!(e.contains("more than the 48 seeds"), "{e}");
        let e = edit(&|g| g.opening = vec![1]);
        assert!(e.contains("opening"), "{e}");
        // A game cut short by a fault ends anywhere, with any stores, and the loser's
        // opponent wins.
        let mut fault = good.clone();
        fault.moves.truncate(3);
        fault.termination = Termination::Fault(super::super::FaultKind::Timeout);
        fault.loser = Some(Side::North);
        fault.result = GameResult::SouthWins;
        fault.south_score = 0;
        assert_eq!(fault.replay().unwrap().len(), 4);
        let mut both = fault.clone();
        both.result = GameResult::NorthWins;
        assert!(both.replay().unwrap_err().contains("lost by a fault"));
        both.loser = None;
        assert!(both.replay().unwrap_err().contains("no loser"));
        let mut stray = good.clone();
        stray.loser = Some(Side::South);
        assert!(stray.replay().unwrap_err().contains("does not record"));
    }
}
