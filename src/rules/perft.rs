//! perft: the number of sequences of exactly `depth` sowings from a position. An extra turn
//! is a sowing like any other; a finished game has no children. The last ply is counted in
//! bulk: a position that is not over has one child per non-empty pit of the mover.

use super::board::Position;

/// Counts the move sequences of exactly `depth` sowings from `pos`.
pub fn perft(pos: &Position, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    if pos.is_over() {
        return 0;
    }
    if depth == 1 {
        return pos.count_legal_moves() as u64;
    }
    let mut nodes = 0;
    let mover = pos.to_move();
    for (i, &seeds) in pos.pits(mover).iter().enumerate() {
        if seeds == 0 {
            continue;
        }
        let mut child = *pos;
        child.sow(i + 1);
        nodes += perft(&child, depth - 1);
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
