//! A game as the page shows it: one [`Frame`] per sowing, with the position after it and
//! what the sowing did in words (an extra turn, a capture, the end of the game and where
//! the sweep sent the seeds left). The rules decide everything: this module only asks
//! [`crate::rules`] and describes the answer.

use crate::record::{GameRecord, MoveRecord};
use crate::rules::{BoardView, Position, Rules, Side, Sweep};
use serde::Serialize;

/// One sowing and the position after it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct Frame {
    pub side: Side,
    pub pit: u8,
    /// Played by the referee before the engines took over.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub opening: bool,
    /// The mover's thinking time, in milliseconds (none in the opening).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_ms: Option<u64>,
    /// The last search depth and score the engine reported for this move.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub depth: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<i64>,
    pub extra_turn: bool,
    /// Seeds the capture took to the mover's store (the last seed included), 0 if none.
    pub captured: u16,
    pub game_over: bool,
    /// What happened, in words: "extra turn", "captures 6 seeds", "game over: ...".
    pub note: String,
    pub position: BoardView,
}

/// Plays `mv` on `before` and describes it; `None` when the rules refuse it (a record that
/// does not replay).
pub(crate) fn frame(before: &Position, mv: &MoveRecord) -> Option<(Frame, Position)> {
    let (after, effect) = before.play_traced(i64::from(mv.pit)).ok()?;
    let mut notes = Vec::new();
    if effect.extra_turn {
        notes.push("extra turn".to_string());
    }
    if effect.captured > 0 {
        notes.push(format!("captures {}", seeds(effect.captured as u32)));
    }
    if effect.game_over {
        notes.push(sweep_note(before, mv.pit, &after));
    }
    let info = mv.info.last();
    let frame = Frame {
        side: mv.side,
        pit: mv.pit,
        opening: mv.opening,
        time_ms: (!mv.opening).then_some(mv.time_ms),
        depth: info.and_then(|i| i.depth),
        score: info.and_then(|i| i.score),
        extra_turn: effect.extra_turn,
        captured: effect.captured,
        game_over: effect.game_over,
        note: notes.join("; "),
        position: after.view(),
    };
    Some((frame, after))
}

/// Every sowing of `moves` from `start`, as far as they replay, and the position reached.
pub(crate) fn frames(start: Position, moves: &[MoveRecord]) -> (Vec<Frame>, Position) {
    let mut pos = start;
    let mut out = Vec::with_capacity(moves.len());
    for mv in moves {
        let Some((f, next)) = frame(&pos, mv) else {
            break;
        };
        out.push(f);
        pos = next;
    }
    (out, pos)
}

/// The frames of a recorded game.
pub(crate) fn record_frames(record: &GameRecord) -> Vec<Frame> {
    let start = record
        .start_position()
        .unwrap_or_else(|_| Position::start(record.rules));
    frames(start, &record.moves).0
}

fn seeds(n: u32) -> String {
    if n == 1 {
        "1 seed".to_string()
    } else {
        format!("{n} seeds")
    }
}

/// The position after sowing `pit` from `before` under the same rules but for the sweep at
/// the end, which is `sweep`: what the sweep changed, seen by comparing.
pub(crate) fn played_with_sweep(before: &Position, pit: u8, sweep: Sweep) -> Option<Position> {
    let r = before.rules();
    let rules = Rules::new(r.pits() as u32, r.seeds() as u32, r.empty_capture(), sweep).ok()?;
    Position::from_parts(
        rules,
        &before.row(Side::South),
        &before.row(Side::North),
        before.to_move(),
    )
    .ok()?
    .play(i64::from(pit))
    .ok()
}

/// Where the sweep at the end sent the seeds left in the pits: what each store got beyond
/// what the same sowing gives under the same rules without a sweep.
fn sweep_note(before: &Position, pit: u8, after: &Position) -> String {
    let Some(unswept) = played_with_sweep(before, pit, Sweep::None) else {
        return "game over".to_string();
    };
    let gained = |side: Side| u32::from(after.store(side) - unswept.store(side));
    let (south, north) = (gained(Side::South), gained(Side::North));
    match before.rules().sweep() {
        Sweep::Owner => match (south, north) {
            (0, 0) => "game over: both rows are empty".to_string(),
            (0, n) => format!(
                "game over: south's pits are empty; north's {} left go to north's store",
                seeds(n)
            ),
            (s, _) => format!(
                "game over: north's pits are empty; south's {} left go to south's store",
                seeds(s)
            ),
        },
        Sweep::EmptySide => match (south, north) {
            (0, 0) => "game over: both rows are empty".to_string(),
            (s, 0) => format!(
                "game over: south's pits are empty; the {} left in north's pits go to south's store",
                seeds(s)
            ),
            (_, n) => format!(
                "game over: north's pits are empty; the {} left in south's pits go to north's store",
                seeds(n)
            ),
        },
        Sweep::None => {
            // Sowing keeps every seed on the board: what is missing was left in the pits.
            let lost = before.total_seeds() - after.total_seeds();
            if lost == 0 {
                "game over: both rows are empty".to_string()
            } else {
                format!(
                    "game over: a row is empty; the {} left in the pits count for no one",
                    seeds(lost)
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Row;

    fn pos(rules: Rules, south: &[u16], ss: u16, north: &[u16], ns: u16) -> Position {
        Position::from_parts(
            rules,
            &Row {
                pits: south.to_vec(),
                store: ss,
            },
            &Row {
                pits: north.to_vec(),
                store: ns,
            },
            Side::South,
        )
        .unwrap()
    }

    fn sow(p: &Position, pit: u8) -> Frame {
        let mv = MoveRecord {
            side: p.to_move(),
            pit,
            opening: false,
            time_ms: 7,
            info: Vec::new(),
            info_dropped: 0,
        };
        frame(p, &mv).unwrap().0
    }

    fn rules(pits: u32, sweep: Sweep, empty_capture: bool) -> Rules {
        Rules::new(pits, 4, empty_capture, sweep).unwrap()
    }

    #[test]
    fn extra_turns_and_captures_are_described() {
        let start = Position::start(Rules::default());
        let f = sow(&start, 3);
        assert!(f.extra_turn && f.note == "extra turn", "{f:?}");
        assert_eq!(f.position.south.store, 1);
        assert_eq!(f.time_ms, Some(7));
        // RULES.md: a capture on a 3-pit board.
        let p = pos(rules(3, Sweep::Owner, false), &[2, 1, 0], 3, &[5, 1, 1], 3);
        let f = sow(&p, 2);
        assert_eq!((f.captured, f.note.as_str()), (6, "captures 6 seeds"));
        assert_eq!(f.position.to_move, Side::North);
    }

    #[test]
    fn the_sweep_at_the_end_says_where_the_seeds_went() {
        let p = |sweep| pos(rules(2, sweep, false), &[0, 1], 0, &[1, 1], 0);
        let f = sow(&p(Sweep::Owner), 2);
        assert!(f.game_over && !f.extra_turn);
        assert_eq!(
            f.note,
            "game over: south's pits are empty; north's 2 seeds left go to north's store"
        );
        let f = sow(&p(Sweep::EmptySide), 2);
        assert_eq!(
            f.note,
            "game over: south's pits are empty; the 2 seeds left in north's pits go to south's store"
        );
        assert_eq!(f.position.south.store, 3);
        let f = sow(&p(Sweep::None), 2);
        assert_eq!(
            f.note,
            "game over: a row is empty; the 2 seeds left in the pits count for no one"
        );
        // A capture that empties both rows.
        let both = pos(rules(2, Sweep::Owner, false), &[1, 0], 5, &[1, 0], 5);
        let f = sow(&both, 1);
        assert_eq!(f.note, "captures 2 seeds; game over: both rows are empty");
        // The opponent's row emptied by a capture: the mover's seeds are swept.
        let p = pos(rules(3, Sweep::Owner, false), &[1, 0, 3], 0, &[0, 2, 0], 0);
        let f = sow(&p, 1);
        assert_eq!(
            f.note,
            "captures 3 seeds; game over: north's pits are empty; south's 3 seeds left go to south's store"
        );
    }

    #[test]
    fn recorded_games_replay_to_their_final_position() {
        let rules = Rules::default();
        let mut p = Position::start(rules);
        let mut moves = Vec::new();
        while !p.is_over() {
            let pit = p.legal_moves().last().unwrap();
            moves.push(MoveRecord::opening(p.to_move(), pit));
            p = p.play(pit as i64).unwrap();
        }
        let (f, end) = frames(Position::start(rules), &moves);
        assert_eq!(f.len(), moves.len());
        assert_eq!(end, p);
        assert_eq!(f.last().unwrap().position, p.view());
        assert!(f.last().unwrap().game_over);
        // An illegal sowing stops the replay there.
        moves.insert(1, MoveRecord::opening(Side::North, 99));
        assert_eq!(frames(Position::start(rules), &moves).0.len(), 1);
    }
}
