//! Table keys of positions and the cheap move order shared by the solver and the
//! engines' search.

use crate::rules::{MAX_PITS, Position, Rules, Side};

/// Bits per pit when both rows of a position under `rules` with `seeds` seeds in its pits
/// (or fewer; never fewer than the rules' start total) pack exactly into 64 bits, else 0
/// (keys are then hashed). Seeds in pits never increase in play, so what suffices for a
/// position suffices for all that follow it.
pub fn pack_bits(rules: &Rules, seeds: u32) -> u32 {
    let bits = 32 - rules.total_seeds().max(seeds).leading_zeros();
    if 2 * rules.pits() as u32 * bits <= 64 {
        bits
    } else {
        0
    }
}

/// A table key for the pits of `pos`: both rows, the mover's first, stores left out.
/// Exact when `pack_bits > 0` (see [`pack_bits`]), otherwise a 64-bit hash. Never 0 for a
/// position still being played.
#[inline]
pub fn pits_key(pos: &Position, pack_bits: u32) -> u64 {
    let cells = pos.cells();
    let p = pos.rules().pits();
    let (mine, theirs) = match pos.to_move() {
        Side::South => (&cells[..p], &cells[p + 1..2 * p + 1]),
        Side::North => (&cells[p + 1..2 * p + 1], &cells[..p]),
    };
    if pack_bits > 0 {
        let mut k = 0u64;
        for &c in mine.iter().chain(theirs) {
            k = (k << pack_bits) | c as u64;
        }
        k
    } else {
        let mut h = 0x9e37_79b9_7f4a_7c15u64;
        for &c in mine.iter().chain(theirs) {
            h = (h ^ c as u64).wrapping_mul(0x0100_0000_01b3);
            h = h.rotate_left(23);
        }
        h ^= h >> 29;
        h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
        h ^= h >> 32;
        h.max(1)
    }
}

/// Seeds still in both rows: the most the side to move can gain or lose from here.
#[inline]
pub fn seeds_in_pits(pos: &Position) -> i32 {
    (pos.row_sum(Side::South) + pos.row_sum(Side::North)) as i32
}

/// The legal moves of the side to move, best first by a cheap guess: the table's move,
/// then extra turns (nearest the store first, so the others stay in place), then captures
/// (largest first), then the rest (nearest the store first).
pub struct MoveList {
    moves: [u8; MAX_PITS as usize],
    len: usize,
}

impl MoveList {
    pub fn as_slice(&self) -> &[u8] {
        &self.moves[..self.len]
    }
}

#[inline]
pub fn ordered_moves(pos: &Position, first: u8) -> MoveList {
    let p = pos.rules().pits();
    let me = pos.to_move();
    let row = pos.pits(me);
    let opp = pos.pits(me.opponent());
    let lap = 2 * p + 1;
    let mut scored = [(0i32, 0u8); MAX_PITS as usize];
    let mut len = 0;
    for (i, &seeds) in row.iter().enumerate() {
        if seeds == 0 {
            continue;
        }
        let pit = i as u8 + 1;
        let n = seeds as usize;
        let to_store = p - i;
        let score = if pit == first {
            1_000_000
        } else if n % lap == to_store {
            100_000 + i as i32
        } else if n < to_store && row[i + n] == 0 {
            // Lands in an empty own pit without going round.
            let across = opp[p - 1 - (i + n)] as i32;
            if across > 0 || pos.rules().empty_capture() {
                10_000 + 10 * across
            } else {
                i as i32
            }
        } else {
            i as i32
        };
        scored[len] = (score, pit);
        len += 1;
    }
    scored[..len].sort_unstable_by_key(|s| std::cmp::Reverse(s.0));
    let mut moves = [0u8; MAX_PITS as usize];
    for (m, s) in moves.iter_mut().zip(&scored[..len]) {
        *m = s.1;
    }
    MoveList { moves, len }
}
