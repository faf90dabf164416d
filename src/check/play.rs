//! The games the checker plays: positions reached by fixed patterns of play, and a whole
//! game on a small board for the `game-over` step.

use super::{Failure, MOVE_SLACK, fail};
use crate::record::{SideResult, TimeLimit};
use crate::rules::{Move, Position, Rules, Side, Sweep};
use crate::supervisor::Engine;
use std::time::Duration;

/// A game from the start, both sides playing a fixed pattern, stopped at the first position
/// where `stop` holds (and `side` is to move, if given). Several patterns are tried. Returns
/// the position and the moves.
pub(crate) fn play_until(
    rules: Rules,
    side: Option<Side>,
    stop: impl Fn(&Position) -> bool,
) -> Option<(Position, Vec<Move>)> {
    (0..50usize).find_map(|pattern| {
        let mut pos = Position::start(rules);
        let mut moves = Vec::new();
        for ply in 0..10_000usize {
            if pos.is_over() {
                return None;
            }
            if stop(&pos) && side.is_none_or(|s| s == pos.to_move()) {
                return Some((pos, moves));
            }
            let legal: Vec<u8> = pos.legal_moves().collect();
            let pit = legal[(ply * (pattern + 1) + pattern / 3) % legal.len()];
            moves.push(Move {
                side: pos.to_move(),
                pit,
            });
            pos = pos.play(pit as i64).expect("legal");
        }
        None
    })
}

/// Few seeds left in the pits: the end of the game is near.
pub(crate) fn few_seeds_left(p: &Position) -> bool {
    p.pits(Side::South)
        .iter()
        .chain(p.pits(Side::North))
        .sum::<u16>()
        <= 8
}

/// The game id of the `game-over` step's whole game.
pub(super) const WHOLE_GAME: &str = "check-whole-game";

/// Plays a whole game on a small board (3 pits, 2 seeds), the engine south and the checker
/// north (its lowest legal pit), and returns the engine's result and the final stores, as
/// the `game_over` that follows must say them.
pub(super) async fn play_whole_game(
    e: &mut Engine,
) -> Result<(SideResult, u16, u16), (Failure, bool)> {
    let rules = Rules::new(3, 2, false, Sweep::Owner).expect("rules");
    let time = TimeLimit::MoveTime(Duration::from_millis(1000));
    let max = Duration::from_millis(1000) + MOVE_SLACK;
    e.new_game(WHOLE_GAME, rules, None, Side::South)
        .await
        .map_err(fail)?;
    let mut pos = Position::start(rules);
    let mut moves = Vec::new();
    while !pos.is_over() {
        let side = pos.to_move();
        let pit = if side == Side::South {
            let reply = e.go(&pos, &moves, time, max).await.map_err(fail)?;
            pos.check(reply.pit)
                .map_err(|err| (Failure::with_line(err.to_string(), &reply.line), false))?;
            reply.pit as u8
        } else {
            pos.legal_moves().next().expect("a legal move")
        };
        moves.push(Move { side, pit });
        pos = pos.play(pit as i64).expect("legal");
    }
    let outcome = pos.outcome().expect("over");
    let result = match outcome.winner {
        None => SideResult::Draw,
        Some(Side::South) => SideResult::Win,
        Some(Side::North) => SideResult::Loss,
    };
    Ok((result, outcome.south, outcome.north))
}
