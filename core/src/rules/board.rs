//! Positions, moves, sowing and the outcome.
//!
//! A position keeps the board in one ring of cells in sowing order: south's pits, south's
//! store, north's pits, north's store. Pit numbers seen by people and engines are
//! 1..=pits from the owner's left, which is exactly sowing order on the owner's side.

use super::variant::{MAX_PITS, MAX_SEEDS, Rules, Side, Sweep};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Cells in the ring for the largest board: both rows and both stores.
pub const MAX_CELLS: usize = 2 * MAX_PITS as usize + 2;

/// The most seeds a position may hold: the start total of the largest board, far below
/// what a `u16` cell can hold, so no pit or store can overflow.
pub const MAX_TOTAL_SEEDS: u32 = 2 * MAX_PITS as u32 * MAX_SEEDS as u32;

/// A position: the rule variant, every pit and store, and the side to move.
///
/// A position in which either row is empty is over; positions produced by [`Position::play`]
/// have already been swept (see [`Sweep`]).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Position {
    rules: Rules,
    to_move: Side,
    /// South pits at `0..p`, south store at `p`, north pits at `p+1..=2p`, north store at
    /// `2p+1`; cells past `2p+1` stay zero.
    cells: [u16; MAX_CELLS],
}

/// A move as recorded in a game: who sowed, and from which of their pits (1-based).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Move {
    pub side: Side,
    pub pit: u8,
}

/// What a legal move did, beyond the new position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct MoveEffect {
    /// The last seed landed in the mover's store and the game goes on: the mover moves again.
    pub extra_turn: bool,
    /// Seeds moved to the mover's store by a capture (the last seed included), 0 if none.
    pub captured: u16,
    /// The move emptied a row and ended the game (the sweep has been applied).
    pub game_over: bool,
}

/// Why a move was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IllegalReason {
    /// The pit number is not in 1..=pits.
    OutOfRange,
    /// The chosen pit holds no seeds.
    EmptyPit,
    /// The move names the side that is not to move (a pit of the opponent).
    OpponentsPit,
    /// The game is already over.
    GameOver,
}

/// A refused move. The position it was tried on is unchanged (positions are values).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.describe())]
pub struct IllegalMove {
    pub side: Side,
    /// The pit as given (may be out of range).
    pub pit: i64,
    pub pits: u8,
    pub reason: IllegalReason,
}

impl IllegalMove {
    fn describe(&self) -> String {
        match self.reason {
            IllegalReason::OutOfRange => format!(
                "illegal move: pit {} is out of range, {} pits are numbered 1 to {}",
                self.pit, self.side, self.pits
            ),
            IllegalReason::EmptyPit => {
                format!("illegal move: {} pit {} is empty", self.side, self.pit)
            }
            IllegalReason::OpponentsPit => format!(
                "illegal move: {} pit {} belongs to the side not to move ({} is to move)",
                self.side,
                self.pit,
                self.side.opponent()
            ),
            IllegalReason::GameOver => {
                format!("illegal move: pit {}: the game is over", self.pit)
            }
        }
    }
}

/// The end of a game: both final stores and the winner (`None` for a draw).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcome {
    pub winner: Option<Side>,
    pub south: u16,
    pub north: u16,
}

/// Why a position could not be built from its parts.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PositionError {
    #[error("{side} row has {got} pits but the rules have {expected}")]
    RowLength {
        side: Side,
        got: usize,
        expected: usize,
    },
    #[error("the two rows have different lengths ({south} and {north})")]
    RowsDiffer { south: usize, north: usize },
    #[error("the position holds {got} seeds, more than the {max} supported")]
    TooManySeeds { got: u32, max: u32 },
    #[error(transparent)]
    Rules(#[from] super::variant::RulesError),
}

/// One side's pits (1..=pits from the owner's left) and store, as engines see it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Row {
    pub pits: Vec<u16>,
    pub store: u16,
}

/// A position without its rules: the shape of `position` in the protocol's `go` message.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BoardView {
    pub to_move: Side,
    pub south: Row,
    pub north: Row,
}

impl Position {
    /// The start position: every pit holds `rules.seeds()` seeds, stores are empty, south moves.
    pub fn start(rules: Rules) -> Position {
        let p = rules.pits();
        let mut cells = [0u16; MAX_CELLS];
        for i in 0..p {
            cells[i] = rules.seeds() as u16;
            cells[p + 1 + i] = rules.seeds() as u16;
        }
        Position {
            rules,
            to_move: Side::South,
            cells,
        }
    }

    /// A position from both rows (pits from the owner's left), both stores and the side to
    /// move. Any seed total up to [`MAX_TOTAL_SEEDS`] is accepted (tutorial diagrams and
    /// analysis positions need not hold the start total); play conserves whatever total
    /// the position has. If a row is empty the game is over and the sweep is applied.
    pub fn from_parts(
        rules: Rules,
        south: &Row,
        north: &Row,
        to_move: Side,
    ) -> Result<Position, PositionError> {
        let p = rules.pits();
        for (side, row) in [(Side::South, south), (Side::North, north)] {
            if row.pits.len() != p {
                return Err(PositionError::RowLength {
                    side,
                    got: row.pits.len(),
                    expected: p,
                });
            }
        }
        let got: u32 = south
            .pits
            .iter()
            .chain(&north.pits)
            .map(|&s| s as u32)
            .sum::<u32>()
            + south.store as u32
            + north.store as u32;
        if got > MAX_TOTAL_SEEDS {
            return Err(PositionError::TooManySeeds {
                got,
                max: MAX_TOTAL_SEEDS,
            });
        }
        let mut cells = [0u16; MAX_CELLS];
        cells[..p].copy_from_slice(&south.pits);
        cells[p] = south.store;
        cells[p + 1..=2 * p].copy_from_slice(&north.pits);
        cells[2 * p + 1] = north.store;
        let mut pos = Position {
            rules,
            to_move,
            cells,
        };
        if pos.row_sum(Side::South) == 0 || pos.row_sum(Side::North) == 0 {
            pos.sweep();
        }
        Ok(pos)
    }

    /// A position from the protocol's board view and the rules of the game.
    pub fn from_view(rules: Rules, view: &BoardView) -> Result<Position, PositionError> {
        Position::from_parts(rules, &view.south, &view.north, view.to_move)
    }

    /// The protocol's board view of this position.
    pub fn view(&self) -> BoardView {
        BoardView {
            to_move: self.to_move,
            south: self.row(Side::South),
            north: self.row(Side::North),
        }
    }

    /// One side's pits and store.
    pub fn row(&self, side: Side) -> Row {
        Row {
            pits: self.pits(side).to_vec(),
            store: self.store(side),
        }
    }

    #[inline]
    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// The side to move (after the game is over: the side that would have moved).
    #[inline]
    pub fn to_move(&self) -> Side {
        self.to_move
    }

    #[inline]
    fn base(&self, side: Side) -> usize {
        match side {
            Side::South => 0,
            Side::North => self.rules.pits() + 1,
        }
    }

    #[inline]
    fn store_index(&self, side: Side) -> usize {
        self.base(side) + self.rules.pits()
    }

    /// A side's pits, index 0 being pit 1.
    #[inline]
    pub fn pits(&self, side: Side) -> &[u16] {
        let b = self.base(side);
        &self.cells[b..b + self.rules.pits()]
    }

    /// Seeds in pit `pit` (1-based) of `side`. Panics if `pit` is out of range.
    #[inline]
    pub fn pit(&self, side: Side, pit: usize) -> u16 {
        assert!(
            (1..=self.rules.pits()).contains(&pit),
            "pit {pit} out of range"
        );
        self.cells[self.base(side) + pit - 1]
    }

    /// Seeds in a side's store.
    #[inline]
    pub fn store(&self, side: Side) -> u16 {
        self.cells[self.store_index(side)]
    }

    /// Seeds left in a side's pits.
    #[inline]
    pub fn row_sum(&self, side: Side) -> u32 {
        self.pits(side).iter().map(|&s| s as u32).sum()
    }

    /// Whether a side's pits are all empty.
    #[inline]
    fn row_empty(&self, side: Side) -> bool {
        self.pits(side).iter().all(|&s| s == 0)
    }

    /// All seeds on the board, stores included.
    pub fn total_seeds(&self) -> u32 {
        self.cells.iter().map(|&s| s as u32).sum()
    }

    /// Whether the game is over (a row is empty).
    #[inline]
    pub fn is_over(&self) -> bool {
        self.row_empty(Side::South) || self.row_empty(Side::North)
    }

    /// The outcome once the game is over, `None` while it goes on.
    pub fn outcome(&self) -> Option<Outcome> {
        if !self.is_over() {
            return None;
        }
        let south = self.store(Side::South);
        let north = self.store(Side::North);
        let winner = match south.cmp(&north) {
            std::cmp::Ordering::Greater => Some(Side::South),
            std::cmp::Ordering::Less => Some(Side::North),
            std::cmp::Ordering::Equal => None,
        };
        Some(Outcome {
            winner,
            south,
            north,
        })
    }

    /// The legal moves of the side to move, as pit numbers in increasing order (none once
    /// the game is over).
    pub fn legal_moves(&self) -> impl Iterator<Item = u8> + '_ {
        let over = self.is_over();
        self.pits(self.to_move)
            .iter()
            .enumerate()
            .filter(move |(_, s)| !over && **s > 0)
            .map(|(i, _)| i as u8 + 1)
    }

    /// The number of legal moves (0 once the game is over).
    #[inline]
    pub fn count_legal_moves(&self) -> usize {
        if self.is_over() {
            0
        } else {
            self.pits(self.to_move).iter().filter(|&&s| s > 0).count()
        }
    }

    /// Checks a move of the side to move without playing it.
    pub fn check(&self, pit: i64) -> Result<(), IllegalMove> {
        let err = |reason| IllegalMove {
            side: self.to_move,
            pit,
            pits: self.rules.pits() as u8,
            reason,
        };
        if self.is_over() {
            return Err(err(IllegalReason::GameOver));
        }
        if pit < 1 || pit > self.rules.pits() as i64 {
            return Err(err(IllegalReason::OutOfRange));
        }
        if self.cells[self.base(self.to_move) + pit as usize - 1] == 0 {
            return Err(err(IllegalReason::EmptyPit));
        }
        Ok(())
    }

    /// Plays pit `pit` (1-based) of the side to move and returns the new position.
    pub fn play(&self, pit: i64) -> Result<Position, IllegalMove> {
        self.play_traced(pit).map(|(p, _)| p)
    }

    /// Plays a move that names its side: a move by the side not to move is refused as the
    /// opponent's pit.
    pub fn play_move(&self, mv: Move) -> Result<(Position, MoveEffect), IllegalMove> {
        if mv.side != self.to_move && !self.is_over() {
            return Err(IllegalMove {
                side: mv.side,
                pit: mv.pit as i64,
                pits: self.rules.pits() as u8,
                reason: IllegalReason::OpponentsPit,
            });
        }
        self.play_traced(mv.pit as i64)
    }

    /// Like [`Position::play`], also saying what the move did.
    pub fn play_traced(&self, pit: i64) -> Result<(Position, MoveEffect), IllegalMove> {
        self.check(pit)?;
        let mut next = *self;
        let effect = next.sow(pit as usize);
        Ok((next, effect))
    }

    /// Sows pit `pit` (1-based) of the side to move, in place, with no legality check.
    /// The caller guarantees the game is not over and the pit holds seeds.
    #[inline]
    pub fn sow(&mut self, pit: usize) -> MoveEffect {
        let p = self.rules.pits();
        let n = 2 * p + 2;
        let me = self.to_move;
        let own_store = self.store_index(me);
        let opp_store = self.store_index(me.opponent());
        let start = self.base(me) + pit - 1;
        let seeds = self.cells[start] as usize;
        debug_assert!(seeds > 0, "sow from an empty pit");
        self.cells[start] = 0;

        // Every full lap puts one seed in each of the 2p+1 cells the sowing visits (the
        // starting pit included); the rest go one by one after the starting pit.
        let lap = 2 * p + 1;
        let (laps, rest) = if seeds < lap {
            (0, seeds)
        } else {
            ((seeds / lap) as u16, seeds % lap)
        };
        if laps > 0 {
            for (i, c) in self.cells[..n].iter_mut().enumerate() {
                if i != opp_store {
                    *c += laps;
                }
            }
        }
        let mut last = start;
        for _ in 0..rest {
            last += 1;
            if last == n {
                last = 0;
            }
            if last == opp_store {
                last += 1;
                if last == n {
                    last = 0;
                }
            }
            self.cells[last] += 1;
        }

        let mut effect = MoveEffect::default();
        let own_base = self.base(me);
        if last == own_store {
            effect.extra_turn = true;
        } else if last >= own_base && last < own_store && self.cells[last] == 1 {
            // The last seed fell into an own pit that was empty before it.
            let opposite = 2 * p - last;
            let across = self.cells[opposite];
            if across > 0 || self.rules.empty_capture() {
                self.cells[own_store] += across + 1;
                self.cells[opposite] = 0;
                self.cells[last] = 0;
                effect.captured = across + 1;
            }
        }

        // Only the mover's row can have run empty by sowing; the opponent's only by a
        // capture.
        if self.row_empty(me) || (effect.captured > 0 && self.row_empty(me.opponent())) {
            self.sweep();
            effect.game_over = true;
            effect.extra_turn = false;
        }
        if !effect.extra_turn {
            self.to_move = me.opponent();
        }
        effect
    }

    /// Empties both rows according to the sweep rule; called once a row is empty.
    fn sweep(&mut self) {
        let p = self.rules.pits();
        let south = self.row_sum(Side::South) as u16;
        let north = self.row_sum(Side::North) as u16;
        match self.rules.sweep() {
            Sweep::Owner => {
                self.cells[p] += south;
                self.cells[2 * p + 1] += north;
            }
            Sweep::EmptySide => {
                // Only one row can still hold seeds: they go to the side whose row is empty.
                if south == 0 {
                    self.cells[p] += north;
                } else {
                    self.cells[2 * p + 1] += south;
                }
            }
            Sweep::None => {}
        }
        for i in 0..p {
            self.cells[i] = 0;
            self.cells[p + 1 + i] = 0;
        }
    }

    /// The store difference from `side`'s point of view.
    #[inline]
    pub fn store_margin(&self, side: Side) -> i32 {
        self.store(side) as i32 - self.store(side.opponent()) as i32
    }

    /// The raw cells in sowing order (south pits, south store, north pits, north store),
    /// for hashing and fast search.
    #[inline]
    pub fn cells(&self) -> &[u16] {
        &self.cells[..2 * self.rules.pits() + 2]
    }
}

impl fmt::Debug for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Position({} {})", self.rules, self.to_compact())
    }
}

/// The board as a person at the table sees it: north's row above, read right to left (pit
/// 1 of north is at the far right), south's row below from pit 1 on the left; north's store
/// on the left, south's on the right.
impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = self.rules.pits();
        let width = self
            .cells()
            .iter()
            .map(|c| c.to_string().len())
            .max()
            .unwrap_or(1)
            .max(2);
        let cell = |v: u16| format!("[{v:>width$}]");
        let label = |s: &str, i: usize| format!("{:>w$} ", format!("{s}{i}"), w = width + 1);
        let indent = " ".repeat(width + 3);
        let north_labels: String = (1..=p).rev().map(|i| label("N", i)).collect();
        let north_row: String = (1..=p)
            .rev()
            .map(|i| cell(self.pit(Side::North, i)))
            .collect();
        let south_row: String = (1..=p).map(|i| cell(self.pit(Side::South, i))).collect();
        let south_labels: String = (1..=p).map(|i| label("S", i)).collect();
        writeln!(f, "{indent}{}", north_labels.trim_end())?;
        writeln!(f, "{indent}{north_row}")?;
        // Each store named beside it, where the row has room for both names.
        let gap = (width + 2) * p + 2;
        let (north, south) = (" N store", "S store ");
        let between = match gap.checked_sub(north.len() + south.len() + 2) {
            Some(spaces) => format!("{north}{}{south}", " ".repeat(spaces + 2)),
            None => " ".repeat(gap),
        };
        writeln!(
            f,
            "{}{between}{}",
            cell(self.store(Side::North)),
            cell(self.store(Side::South))
        )?;
        writeln!(f, "{indent}{south_row}")?;
        writeln!(f, "{indent}{}", south_labels.trim_end())?;
        match self.outcome() {
            None => write!(f, "{} to move", self.to_move),
            Some(o) => match o.winner {
                Some(w) => write!(
                    f,
                    "game over: {w} wins, south {} north {}",
                    o.south, o.north
                ),
                None => write!(f, "game over: draw, south {} north {}", o.south, o.north),
            },
        }
    }
}

/// Serialized with its rules: `{"rules":{..},"to_move":..,"south":{..},"north":{..}}`.
#[derive(Serialize, Deserialize)]
struct PositionRepr {
    rules: Rules,
    #[serde(flatten)]
    board: BoardView,
}

impl Serialize for Position {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        PositionRepr {
            rules: self.rules,
            board: self.view(),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Position {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let repr = PositionRepr::deserialize(d)?;
        Position::from_view(repr.rules, &repr.board).map_err(serde::de::Error::custom)
    }
}
