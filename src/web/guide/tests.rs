use super::*;

const ALL: [Variant; 6] = [
    Variant {
        empty_capture: false,
        sweep: Sweep::Owner,
    },
    Variant {
        empty_capture: true,
        sweep: Sweep::Owner,
    },
    Variant {
        empty_capture: false,
        sweep: Sweep::EmptySide,
    },
    Variant {
        empty_capture: true,
        sweep: Sweep::EmptySide,
    },
    Variant {
        empty_capture: false,
        sweep: Sweep::None,
    },
    Variant {
        empty_capture: true,
        sweep: Sweep::None,
    },
];

fn std() -> Variant {
    ALL[0]
}

#[test]
fn each_step_has_a_way_to_its_goal_and_a_way_to_miss_it() {
    for v in ALL {
        let p = play("sow", &[3], v).unwrap();
        assert!(p.done && p.over, "{p:?}");
        let p = play("sow", &[1], v).unwrap();
        assert!(!p.done && p.over, "{p:?}");
        assert!(p.verdict.starts_with("Not yet"), "{}", p.verdict);
        let p = play("extra", &[2], v).unwrap();
        assert!(p.done && p.sowings[0].extra_turn, "{p:?}");
        for wrong in [1, 3] {
            assert!(!play("extra", &[wrong], v).unwrap().done);
        }
        let p = play("capture", &[2], v).unwrap();
        assert!(p.done, "{p:?}");
        assert_eq!(p.sowings[0].captured, 6);
        assert_eq!(p.position.south.store, 9);
        // Pit 1 gives an extra turn, not a capture: the step goes on.
        let p = play("capture", &[1], v).unwrap();
        assert!(!p.done && !p.over, "{p:?}");
        assert_eq!(p.verdict, "You move again: go on.");
        for order in [&[3, 2, 3][..], &[2, 3]] {
            let p = play("end", order, v).unwrap();
            assert!(p.done && p.over, "{order:?} {p:?}");
            assert!(p.sowings.last().unwrap().game_over);
        }
        let cards: Vec<_> = [("card-ordinary", 5), ("card-extra", 4), ("card-capture", 1)]
            .iter()
            .map(|&(id, pit)| play(id, &[pit], v).unwrap())
            .collect();
        let outcomes: Vec<_> = cards.iter().map(|p| p.sowings[0].outcome).collect();
        assert_eq!(outcomes, ["ordinary", "extra_turn", "capture"]);
        assert!(cards.iter().all(|p| p.done));
        // The same position on the three cards.
        let lessons: serde_json::Value = serde_json::from_str(&lessons_json(v).unwrap()).unwrap();
        let cards = lessons["cards"].as_array().unwrap();
        assert_eq!(cards.len(), 3);
        assert!(cards.iter().all(|c| c["position"] == cards[0]["position"]));
        assert_eq!(lessons["steps"].as_array().unwrap().len(), 4);
        for s in lessons["steps"].as_array().unwrap() {
            assert_eq!(s["rules"]["pits"], 3);
            assert_eq!(s["rules"]["empty_capture"], v.empty_capture);
        }
    }
}

#[test]
fn the_end_is_counted_by_the_variant() {
    let text = |v: Variant, order: &[i64]| {
        let p = play("end", order, v).unwrap();
        (p.sowings.last().unwrap().text.clone(), p.position)
    };
    // The order matters under the owner sweep: 3, 2, 3 wins, 2, 3 loses.
    let (t, pos) = text(std(), &[3, 2, 3]);
    assert!(t.contains("The count: you 12, north 11: you win."), "{t}");
    assert!(t.contains("Your row is empty: the game ends at once. The 5 seeds left in north's pits go to north's store."), "{t}");
    assert_eq!((pos.south.store, pos.north.store), (12, 11));
    let (t, _) = text(std(), &[2, 3]);
    assert!(t.contains("you 11, north 12: north wins"), "{t}");
    let side = Variant {
        empty_capture: false,
        sweep: Sweep::EmptySide,
    };
    let (t, pos) = text(side, &[2, 3]);
    assert!(
        t.contains(
            "The 6 seeds left in north's pits go to your store, the side whose row ran empty."
        ),
        "{t}"
    );
    assert_eq!((pos.south.store, pos.north.store), (17, 6));
    let none = Variant {
        empty_capture: false,
        sweep: Sweep::None,
    };
    let (t, pos) = text(none, &[2, 3]);
    assert!(
        t.contains("The 6 seeds left in north's pits count for no one."),
        "{t}"
    );
    assert_eq!((pos.south.store, pos.north.store), (11, 6));
    // And the step's explanation says so.
    for (v, words) in [
        (std(), "to their owner"),
        (side, "whose row ran empty"),
        (none, "count for no one"),
    ] {
        let json = lessons_json(v).unwrap();
        assert!(json.contains(words), "{words}: {json}");
    }
    let ec = Variant {
        empty_capture: true,
        sweep: Sweep::Owner,
    };
    assert!(
        lessons_json(ec)
            .unwrap()
            .contains("the lone seed is captured")
    );
    assert!(
        lessons_json(std())
            .unwrap()
            .contains("must hold at least one seed")
    );
}

#[test]
fn sowings_are_described_from_the_rules() {
    let p = play("sow", &[3], std()).unwrap();
    let s = &p.sowings[0];
    assert_eq!(
        s.text,
        "Pit 3's 5 seeds went one by one to your store, north's pits 1, 2 and 3, then \
         (skipping north's store) your pit 1. The last seed landed in your pit 1, which held \
         2 seeds: an ordinary move. The turn passes to north."
    );
    let p = play("capture", &[2], std()).unwrap();
    assert!(
        p.sowings[0]
            .text
            .contains("opposite north's pit 1 with 5 seeds: you capture 1 + 5 = 6 seeds"),
        "{}",
        p.sowings[0].text
    );
    let p = play("extra", &[2], std()).unwrap();
    assert!(
        p.sowings[0]
            .text
            .ends_with("your store: an extra turn, you move again."),
        "{}",
        p.sowings[0].text
    );
}

/// The path the page draws is the rules' sowing: the seeds it drops, added to the
/// position before (its pit emptied), give the position after wherever nothing was
/// captured or swept; and its last cell is the store exactly on an extra turn.
fn add(v: &mut BoardView, c: Cell, n: i32) {
    let row = if c.side == Side::South {
        &mut v.south
    } else {
        &mut v.north
    };
    let cell = match c.pit {
        Some(p) => &mut row.pits[usize::from(p) - 1],
        None => &mut row.store,
    };
    *cell = u16::try_from(i32::from(*cell) + n).unwrap();
}

#[test]
fn the_path_agrees_with_the_rules() {
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let mut next = |n: u64| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng % n
    };
    let mut checked = 0;
    for _ in 0..20_000 {
        let pits = 1 + next(6) as u32;
        let rules = Rules::new(pits, 4, next(2) == 0, Sweep::Owner).unwrap();
        let row = |next: &mut dyn FnMut(u64) -> u64| Row {
            pits: (0..pits).map(|_| next(16) as u16).collect(),
            store: next(10) as u16,
        };
        let (s, n) = (row(&mut next), row(&mut next));
        let side = if next(2) == 0 {
            Side::South
        } else {
            Side::North
        };
        let Ok(pos) = Position::from_parts(rules, &s, &n, side) else {
            continue;
        };
        for pit in pos.legal_moves().collect::<Vec<_>>() {
            let (after, effect) = pos.play_traced(i64::from(pit)).unwrap();
            let path = sowing_path(&pos, pit);
            assert_eq!(path.len(), usize::from(pos.pit(side, usize::from(pit))));
            assert!(!path.contains(&Cell {
                side: side.opponent(),
                pit: None
            }));
            let last_in_store = path.last().unwrap().pit.is_none();
            if !effect.game_over {
                assert_eq!(effect.extra_turn, last_in_store, "{pos:?} {pit}");
            }
            if effect.captured == 0 && !effect.game_over {
                let mut cells = pos.view();
                let seeds = i32::from(pos.pit(side, usize::from(pit)));
                add(
                    &mut cells,
                    Cell {
                        side,
                        pit: Some(pit),
                    },
                    -seeds,
                );
                for c in &path {
                    add(&mut cells, *c, 1);
                }
                cells.to_move = after.to_move();
                assert_eq!(cells, after.view(), "{pos:?} {pit}");
                checked += 1;
            }
        }
    }
    assert!(checked > 10_000, "{checked}");
}

/// A last seed in an empty pit of the mover's, opposite an empty pit: it stays under
/// the standard rules, and is captured alone under empty capture; the words say which.
#[test]
fn a_lone_last_seed_is_described_by_the_variant() {
    let text = |empty_capture: bool| {
        let rules = Rules::new(3, 4, empty_capture, Sweep::Owner).unwrap();
        let row = |pits: &[u16], store| Row {
            pits: pits.to_vec(),
            store,
        };
        let pos =
            Position::from_parts(rules, &row(&[1, 0, 2], 0), &row(&[3, 0, 1], 0), Side::South)
                .unwrap();
        let (after, effect) = pos.play_traced(1).unwrap();
        (
            describe(&pos, 1, &sowing_path(&pos, 1), &after, effect),
            effect.captured,
        )
    };
    let (t, captured) = text(false);
    assert_eq!(captured, 0);
    assert!(
        t.ends_with(
            "The last seed landed in your pit 2, which was empty, but north's pit 2 \
             opposite is empty: nothing is captured and the seed stays. The turn passes \
             to north."
        ),
        "{t}"
    );
    let (t, captured) = text(true);
    assert_eq!(captured, 1);
    assert!(
        t.contains("opposite north's empty pit 2: under these rules (empty capture) the lone seed goes to your store"),
        "{t}"
    );
}

#[test]
fn bad_requests_are_refused_not_played() {
    let v = std();
    assert_eq!(play("nope", &[1], v).unwrap_err().status, 404);
    assert_eq!(play("sow", &[], v).unwrap_err().status, 400);
    assert_eq!(play("sow", &[1; MAX_MOVES + 1], v).unwrap_err().status, 400);
    for pit in [0, 4, -1, i64::MAX, i64::MIN, 256 + 3] {
        let e = play("sow", &[pit], v).unwrap_err();
        assert_eq!(e.status, 422, "{pit}: {e:?}");
        assert!(e.why.contains("no pit"), "{}", e.why);
    }
    let e = play("capture", &[3], v).unwrap_err();
    assert_eq!(e.why, "pit 3 is empty: choose a pit with seeds");
    // After the turn passed, and after the goal.
    assert_eq!(play("sow", &[1, 2], v).unwrap_err().status, 422);
    assert_eq!(play("extra", &[2, 1], v).unwrap_err().status, 422);
    // Moves and variants as a request gives them.
    assert_eq!(parse_moves(Some("3, 2,1")).unwrap(), [3, 2, 1]);
    for bad in [
        None,
        Some(""),
        Some("x"),
        Some("1,,2"),
        Some("99999999999999999999"),
    ] {
        assert_eq!(parse_moves(bad).unwrap_err().status, 400, "{bad:?}");
    }
    let long = vec!["1"; MAX_MOVES + 1].join(",");
    assert!(parse_moves(Some(&long)).is_err());
    assert_eq!(Variant::parse(v, None, None).unwrap(), v);
    let other = Variant::parse(v, Some("true"), Some("empty_side")).unwrap();
    assert_eq!((other.empty_capture, other.sweep), (true, Sweep::EmptySide));
    assert!(Variant::parse(v, Some("yes"), None).is_err());
    assert!(Variant::parse(v, None, Some("<b>")).is_err());
}
