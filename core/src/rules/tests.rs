//! Unit tests of each rule and variant, and the worked examples of RULES.md.

use super::*;

fn rules(pits: u32, seeds: u32) -> Rules {
    Rules::new(pits, seeds, false, Sweep::Owner).unwrap()
}

fn variant(pits: u32, seeds: u32, empty_capture: bool, sweep: Sweep) -> Rules {
    Rules::new(pits, seeds, empty_capture, sweep).unwrap()
}

fn pos(text: &str, rules: Rules) -> Position {
    Position::from_compact(text, rules).unwrap()
}

#[test]
fn worked_example_extra_turn() {
    let start = Position::start(Rules::default());
    let (next, effect) = start.play_traced(3).unwrap();
    assert_eq!(next.pits(Side::South), &[4, 4, 0, 5, 5, 5]);
    assert_eq!(next.store(Side::South), 1);
    assert_eq!(next.pits(Side::North), &[4; 6]);
    assert_eq!(next.store(Side::North), 0);
    assert_eq!(next.to_move(), Side::South);
    assert!(effect.extra_turn);
    assert_eq!(next.total_seeds(), 48);
}

#[test]
fn worked_example_capture() {
    // Seed 000's diagram on the 3-pit board: 18 seeds in all.
    let before = pos("2,1,0:3/5,1,1:3/s", rules(3, 3));
    let (after, effect) = before.play_traced(2).unwrap();
    assert_eq!(effect.captured, 6);
    assert!(!effect.extra_turn);
    assert_eq!(after.store(Side::South), 9);
    assert_eq!(after.pits(Side::South), &[2, 0, 0]);
    assert_eq!(after.pits(Side::North), &[0, 1, 1]);
    assert_eq!(after.to_move(), Side::North);
}

#[test]
fn sowing_passes_own_store_into_opponent_pits() {
    let after = Position::start(Rules::default()).play(5).unwrap();
    assert_eq!(after.to_compact(), "4,4,4,4,0,5:1/5,5,4,4,4,4:0/n");
}

#[test]
fn sowing_skips_the_opponent_store() {
    // South pit 6 with 8 seeds: own store, north 1..6, skip north's store, south pit 1.
    let before = pos("1,0,0,0,0,8:0/4,4,4,4,4,4:15/s", Rules::default());
    let after = before.play(6).unwrap();
    assert_eq!(after.to_compact(), "2,0,0,0,0,0:1/5,5,5,5,5,5:15/n");
    // North sowing skips south's store the same way.
    let before = pos("4,4,4,4,4,4:15/1,0,0,0,0,8:0/n", Rules::default());
    let after = before.play(6).unwrap();
    assert_eq!(after.to_compact(), "5,5,5,5,5,5:15/2,0,0,0,0,0:1/s");
}

#[test]
fn a_full_lap_ending_in_the_emptied_start_pit_captures() {
    // 13 seeds = 2*6+1: one in every cell but north's store, the last back in pit 1.
    let before = pos("13,0,0,0,0,0:0/1,1,1,1,1,3:24/s", Rules::default());
    let (after, effect) = before.play_traced(1).unwrap();
    // North pit 6 faces south pit 1: it held 3, gained 1, and is captured with the seed.
    assert_eq!(effect.captured, 5);
    assert_eq!(after.to_compact(), "0,1,1,1,1,1:6/2,2,2,2,2,0:24/n");
    assert_eq!(after.total_seeds(), before.total_seeds());
}

#[test]
fn a_lap_of_more_than_13_seeds_fills_the_start_pit() {
    let before = pos("14,0,0,0,0,0:0/1,1,1,1,1,3:23/s", Rules::default());
    let (after, effect) = before.play_traced(1).unwrap();
    assert_eq!(effect.captured, 0, "pit 2 held a seed from the lap");
    assert_eq!(after.to_compact(), "1,2,1,1,1,1:1/2,2,2,2,2,4:23/n");
    // 26 seeds: exactly two laps, the last seed in the start pit, which now holds 2.
    let before = pos("26,0,0,0,0,0:0/1,1,1,1,1,1:16/s", Rules::default());
    let (after, effect) = before.play_traced(1).unwrap();
    assert_eq!(effect.captured, 0);
    assert_eq!(after.to_compact(), "2,2,2,2,2,2:2/3,3,3,3,3,3:16/n");
}

#[test]
fn extra_turns_chain() {
    let r = rules(6, 1);
    let p0 = pos("0,0,0,0,2,1:0/1,1,1,1,1,1:3/s", r);
    let (p1, e1) = p0.play_traced(6).unwrap();
    assert!(e1.extra_turn);
    assert_eq!(p1.to_move(), Side::South);
    let (p2, e2) = p1.play_traced(5).unwrap();
    assert!(e2.extra_turn);
    assert_eq!(p2.to_compact(), "0,0,0,0,0,1:2/1,1,1,1,1,1:3/s");
    let (p3, e3) = p2.play_traced(6).unwrap();
    // The last sowing empties south's row: the game ends, so no extra turn.
    assert!(!e3.extra_turn && e3.game_over);
    assert_eq!(p3.outcome().unwrap().south, 3);
}

#[test]
fn no_capture_from_an_empty_opposite_pit() {
    let before = pos("1,0,0,0,0,1:0/1,1,1,1,0,1:40/s", Rules::default());
    let (after, effect) = before.play_traced(1).unwrap();
    assert_eq!(effect.captured, 0);
    assert_eq!(after.to_compact(), "0,1,0,0,0,1:0/1,1,1,1,0,1:40/n");
}

#[test]
fn empty_capture_takes_the_lone_last_seed() {
    let r = variant(6, 4, true, Sweep::Owner);
    let before = pos("1,0,0,0,0,1:0/1,1,1,1,0,1:40/s", r);
    let (after, effect) = before.play_traced(1).unwrap();
    assert_eq!(effect.captured, 1);
    assert_eq!(after.to_compact(), "0,0,0,0,0,1:1/1,1,1,1,0,1:40/n");
}

#[test]
fn capture_in_the_last_pit_before_the_store() {
    // South pit 6 faces north pit 1.
    let before = pos("0,0,0,0,1,0:0/7,1,1,1,1,1:36/s", Rules::default());
    let (after, effect) = before.play_traced(5).unwrap();
    assert_eq!(effect.captured, 8);
    assert_eq!(after.to_compact(), "0,0,0,0,0,0:8/0,0,0,0,0,0:41/n");
    // South's row is now empty: the game ended and north's 5 seeds went to north.
    assert!(effect.game_over);
}

#[test]
fn the_game_ends_when_the_mover_empties_the_opponent_row() {
    // South captures north's last seeds; north would move next but the game is over.
    let before = pos("0,1,0:5/5,0,0:7/s", rules(3, 3));
    let (after, effect) = before.play_traced(2).unwrap();
    assert!(effect.game_over);
    assert!(after.is_over());
    assert_eq!(after.legal_moves().count(), 0);
    let o = after.outcome().unwrap();
    assert_eq!((o.south, o.north, o.winner), (11, 7, Some(Side::South)));
}

#[test]
fn the_three_sweeps() {
    // South plays its last seed into its store, leaving north with 6 seeds in its pits.
    let text = "0,0,1:5/2,2,2:4/s";
    let expect = [
        (Sweep::Owner, 6, 10),
        (Sweep::EmptySide, 12, 4),
        (Sweep::None, 6, 4),
    ];
    for (sweep, south, north) in expect {
        let after = pos(text, variant(3, 3, false, sweep)).play(3).unwrap();
        let o = after.outcome().unwrap();
        assert_eq!((o.south, o.north), (south, north), "{sweep}");
        assert!(
            after
                .pits(Side::South)
                .iter()
                .chain(after.pits(Side::North))
                .all(|&s| s == 0)
        );
    }
}

#[test]
fn draws() {
    // 1 pit, 1 seed: south sows into its store and empties its row; north keeps its seed.
    let after = Position::start(rules(1, 1)).play(1).unwrap();
    let o = after.outcome().unwrap();
    assert_eq!((o.south, o.north, o.winner), (1, 1, None));
    let after = Position::start(variant(1, 1, false, Sweep::EmptySide))
        .play(1)
        .unwrap();
    assert_eq!(after.outcome().unwrap().winner, Some(Side::South));
}

#[test]
fn illegal_moves_are_refused_and_change_nothing() {
    let start = Position::start(Rules::default());
    let copy = start;
    for (pit, reason) in [
        (0, IllegalReason::OutOfRange),
        (7, IllegalReason::OutOfRange),
        (-3, IllegalReason::OutOfRange),
    ] {
        let e = start.play(pit).unwrap_err();
        assert_eq!(e.reason, reason);
        assert!(e.to_string().contains("numbered 1 to 6"), "{e}");
    }
    let after = start.play(3).unwrap();
    assert_eq!(after.play(3).unwrap_err().reason, IllegalReason::EmptyPit);
    let e = after
        .play_move(Move {
            side: Side::North,
            pit: 1,
        })
        .unwrap_err();
    assert_eq!(e.reason, IllegalReason::OpponentsPit);
    let over = Position::start(rules(1, 1)).play(1).unwrap();
    assert_eq!(over.play(1).unwrap_err().reason, IllegalReason::GameOver);
    assert_eq!(start, copy);
}

#[test]
fn positions_are_validated() {
    let r = Rules::default();
    assert!(matches!(
        Position::from_compact("4,4,4,4,4,4:0/4,4,4,4,4,4:3190/s", r),
        Err(ParsePositionError::Position(PositionError::TooManySeeds {
            got: 3238,
            max: 3200
        }))
    ));
    assert!(Position::from_compact("4,4,4,4,4,4:0/4,4,4,4,4,3:0/s", r).is_ok());
    assert!(Position::from_compact("4,4:0/4,4,4:0/s", r).is_err());
    assert!(Position::from_compact("4,x:0/4,4:0/s", r).is_err());
    assert!(Position::from_compact("4,4:0/4,4:0/w", rules(2, 4)).is_err());
    // A row given empty means the game is over: the sweep applies at once.
    let p = pos("0,0:3/2,3:0/s", rules(2, 2));
    assert_eq!(p.outcome().unwrap().north, 5);
}

#[test]
fn compact_and_serde_round_trips() {
    let p = Position::start(Rules::default()).play(3).unwrap();
    assert_eq!(
        Position::from_compact(&p.to_compact(), Rules::default()).unwrap(),
        p
    );
    let json = serde_json::to_string(&p).unwrap();
    assert_eq!(
        json,
        r#"{"rules":{"pits":6,"seeds":4,"empty_capture":false,"sweep":"owner"},"to_move":"south","south":{"pits":[4,4,0,5,5,5],"store":1},"north":{"pits":[4,4,4,4,4,4],"store":0}}"#
    );
    assert_eq!(serde_json::from_str::<Position>(&json).unwrap(), p);
}

#[test]
fn the_board_reads_as_seen_from_the_table() {
    let p = pos("1,2,3:4/5,6,0:0/s", rules(3, 3));
    let text = p.to_string();
    let expected = [
        "      N3  N2  N1",
        "     [ 0][ 6][ 5]",
        "[ 0]              [ 4]",
        "     [ 1][ 2][ 3]",
        "      S1  S2  S3",
        "south to move",
    ]
    .join("\n");
    assert_eq!(text, expected, "\n{text}");
    // Where the row has room, each store is named beside it.
    let start = Position::start(rules(6, 4)).to_string();
    let stores = start.lines().nth(2).unwrap();
    assert_eq!(stores, "[ 0] N store          S store [ 0]", "\n{start}");
}
