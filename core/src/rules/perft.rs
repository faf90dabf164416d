//! perft: the number of sequences of exactly `depth` sowings from a position. An extra turn
//! is a sowing like any other; a finished game has no children. The last ply is counted in
//! bulk: a position that is not over has one child per non-empty pit of the mover.

use super::board::Position;

/// Counts the move sequences of exactly `depth` sowings from `pos`.
pub fn perft(pos: &Position, depth: u32) -> u64 {
    if depth == 0 {
        1
    } else if pos.is_over() {
        0
    } else {
        perft_live(pos, depth)
    }
}

/// perft of a position that is not over, `depth >= 1`. Children that end the game are
/// known from the sowing itself, so no node is checked for the end twice.
fn perft_live(pos: &Position, depth: u32) -> u64 {
    let mover = pos.to_move();
    if depth == 1 {
        return pos.pits(mover).iter().filter(|&&s| s > 0).count() as u64;
    }
    let mut nodes = 0;
    for (i, &seeds) in pos.pits(mover).iter().enumerate() {
        if seeds == 0 {
            continue;
        }
        let mut child = *pos;
        if !child.sow(i + 1).game_over {
            nodes += perft_live(&child, depth - 1);
        }
    }
    nodes
}

/// perft split by first move: `(pit, nodes)` for every legal move, to find where two
/// implementations disagree.
pub fn perft_divide(pos: &Position, depth: u32) -> Vec<(u8, u64)> {
    if depth == 0 {
        return Vec::new();
    }
    pos.legal_moves()
        .map(|pit| {
            let child = pos.play(pit as i64).expect("legal move");
            (pit, perft(&child, depth - 1))
        })
        .collect()
}
