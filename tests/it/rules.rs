//! Rules tests from the outside: the perft vectors of `tests/data/perft.txt`, and property
//! tests against a deliberately simple second implementation of a move.

use kalaha::rules::{Position, Row, Rules, Side, Sweep, perft};
use proptest::prelude::*;

fn parse_rules(pits: &str, seeds: &str, empty_capture: &str, sweep: &str) -> Rules {
    Rules::new(
        pits.parse().unwrap(),
        seeds.parse().unwrap(),
        empty_capture == "1",
        sweep.parse().unwrap(),
    )
    .unwrap()
}

#[test]
fn perft_vectors() {
    // Debug builds count small trees only; release builds all but the largest rows, which
    // run with KALAHA_PERFT_ALL=1.
    let limit: u64 = if std::env::var_os("KALAHA_PERFT_ALL").is_some() {
        u64::MAX
    } else if cfg!(debug_assertions) {
        1_000_000
    } else {
        100_000_000
    };
    let data = include_str!("../data/perft.txt");
    let mut checked = 0;
    for line in data
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let f: Vec<&str> = line.split_whitespace().collect();
        let [pits, seeds, ec, sweep, depth, nodes] = f[..] else {
            panic!("malformed perft line {line:?}");
        };
        let nodes: u64 = nodes.parse().unwrap();
        if nodes > limit {
            continue;
        }
        let rules = parse_rules(pits, seeds, ec, sweep);
        let got = perft(&Position::start(rules), depth.parse().unwrap());
        assert_eq!(got, nodes, "perft {line}");
        checked += 1;
    }
    assert!(checked > 100, "only {checked} perft rows checked");
}

/// The second implementation: a board as two rows and two stores, sown one seed at a time
/// by walking around the board, exactly as a person at the table would.
#[derive(Debug, Clone, PartialEq)]
struct Simple {
    rows: [Vec<u16>; 2],
    stores: [u16; 2],
    mover: usize,
}

impl Simple {
    fn from(pos: &Position) -> Simple {
        Simple {
            rows: [
                pos.pits(Side::South).to_vec(),
                pos.pits(Side::North).to_vec(),
            ],
            stores: [pos.store(Side::South), pos.store(Side::North)],
            mover: pos.to_move().index(),
        }
    }

    fn play(&self, pit: usize, rules: &Rules) -> Simple {
        let p = rules.pits();
        let mut s = self.clone();
        let me = s.mover;
        let mut hand = s.rows[me][pit - 1];
        s.rows[me][pit - 1] = 0;
        // (side, place): place 0..p are pits, place p is that side's store.
        let (mut side, mut place) = (me, pit - 1);
        while hand > 0 {
            place += 1;
            if place > p || (place == p && side != me) {
                side = 1 - side;
                place = 0;
            }
            if place == p {
                s.stores[side] += 1;
            } else {
                s.rows[side][place] += 1;
            }
            hand -= 1;
        }
        let mut extra = side == me && place == p;
        if side == me && place < p && s.rows[me][place] == 1 {
            let opposite = p - 1 - place;
            let across = s.rows[1 - me][opposite];
            if across > 0 || rules.empty_capture() {
                s.stores[me] += across + 1;
                s.rows[1 - me][opposite] = 0;
                s.rows[me][place] = 0;
            }
        }
        let left: [u16; 2] = [s.rows[0].iter().sum(), s.rows[1].iter().sum()];
        if left[0] == 0 || left[1] == 0 {
            extra = false;
            match rules.sweep() {
                Sweep::Owner => {
                    s.stores[0] += left[0];
                    s.stores[1] += left[1];
                }
                Sweep::EmptySide => {
                    let empty = if left[0] == 0 { 0 } else { 1 };
                    s.stores[empty] += left[0] + left[1];
                }
                Sweep::None => {}
            }
            s.rows = [vec![0; p], vec![0; p]];
        }
        if !extra {
            s.mover = 1 - me;
        }
        s
    }
}

fn any_rules() -> impl Strategy<Value = Rules> {
    (
        1u32..=8,
        1u32..=8,
        any::<bool>(),
        prop::sample::select(Sweep::ALL.to_vec()),
    )
        .prop_map(|(p, s, ec, sweep)| Rules::new(p, s, ec, sweep).unwrap())
}

/// A position reached by random play from the start, or an arbitrary filling of the pits.
fn any_position() -> impl Strategy<Value = Position> {
    (
        any_rules(),
        prop::collection::vec(0usize..16, 0..60),
        any::<bool>(),
        any::<u64>(),
    )
        .prop_map(|(rules, choices, arbitrary, salt)| {
            let mut pos = Position::start(rules);
            if arbitrary {
                let p = rules.pits();
                let mut x = salt;
                let mut next = || {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    (x % 15) as u16
                };
                let south = Row {
                    pits: (0..p).map(|_| next()).collect(),
                    store: next(),
                };
                let north = Row {
                    pits: (0..p).map(|_| next()).collect(),
                    store: next(),
                };
                let side = if salt & 1 == 0 {
                    Side::South
                } else {
                    Side::North
                };
                pos = Position::from_parts(rules, &south, &north, side).unwrap();
            }
            for c in choices {
                let moves: Vec<u8> = pos.legal_moves().collect();
                if moves.is_empty() {
                    break;
                }
                pos = pos.play(moves[c % moves.len()] as i64).unwrap();
            }
            pos
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(if cfg!(debug_assertions) { 256 } else { 2048 }))]

    #[test]
    fn play_agrees_with_the_simple_implementation(pos in any_position()) {
        let rules = *pos.rules();
        for pit in pos.legal_moves().collect::<Vec<_>>() {
            let fast = pos.play(pit as i64).unwrap();
            let slow = Simple::from(&pos).play(pit as usize, &rules);
            prop_assert_eq!(Simple::from(&fast), slow, "pit {} from {:?}", pit, pos);
        }
    }

    #[test]
    fn seeds_are_conserved(pos in any_position()) {
        for pit in pos.legal_moves().collect::<Vec<_>>() {
            let next = pos.play(pit as i64).unwrap();
            if pos.rules().sweep() == Sweep::None && next.is_over() {
                prop_assert!(next.total_seeds() <= pos.total_seeds());
            } else {
                prop_assert_eq!(next.total_seeds(), pos.total_seeds());
            }
        }
    }

    #[test]
    fn every_random_game_ends(rules in any_rules(), choices in prop::collection::vec(any::<u32>(), 4096)) {
        let mut pos = Position::start(rules);
        let mut plies = 0;
        for c in &choices {
            let moves: Vec<u8> = pos.legal_moves().collect();
            if moves.is_empty() {
                break;
            }
            pos = pos.play(moves[*c as usize % moves.len()] as i64).unwrap();
            plies += 1;
        }
        prop_assert!(pos.is_over(), "not over after {} plies: {:?}", plies, pos);
        let o = pos.outcome().unwrap();
        if rules.sweep() != Sweep::None {
            prop_assert_eq!(o.south as u32 + o.north as u32, rules.total_seeds());
        }
    }

    #[test]
    fn illegal_moves_are_refused(pos in any_position(), pit in -3i64..20) {
        let legal: Vec<u8> = pos.legal_moves().collect();
        let result = pos.play(pit);
        prop_assert_eq!(result.is_ok(), legal.contains(&(pit.clamp(0, 255) as u8)) && pit >= 1);
    }
}
