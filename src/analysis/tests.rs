use super::*;
use crate::rules::{Position, Rules, Side, Sweep};
use crate::solver::Solver;
use std::collections::HashMap;

/// The value of `pos` for its side to move by plain memoised minimax over the rules: a
/// check of the solver that shares none of its code.
pub(crate) fn minimax(pos: &Position, memo: &mut HashMap<(Vec<u16>, Side), i32>) -> i32 {
    let me = pos.to_move();
    if pos.is_over() {
        return pos.store_margin(me);
    }
    let key = (pos.cells().to_vec(), me);
    if let Some(&v) = memo.get(&key) {
        return v;
    }
    let best = pos
        .legal_moves()
        .map(|pit| {
            let next = pos.play(pit as i64).unwrap();
            if next.is_over() {
                next.store_margin(me)
            } else if next.to_move() == me {
                minimax(&next, memo)
            } else {
                -minimax(&next, memo)
            }
        })
        .max()
        .unwrap();
    memo.insert(key, best);
    best
}

pub(crate) use crate::record::game_of as record;

/// Plays from the start: `choose` picks each pit from the position and its legal pits.
fn play(rules: Rules, mut choose: impl FnMut(&Position) -> u8) -> Vec<u8> {
    let mut pos = Position::start(rules);
    let mut pits = Vec::new();
    while !pos.is_over() {
        let p = choose(&pos);
        pits.push(p);
        pos = pos.play(p as i64).unwrap();
    }
    pits
}

#[test]
fn perfect_play_loses_nothing_and_values_match_minimax() {
    let rules = Rules::new(3, 3, false, Sweep::Owner).unwrap();
    let mut solver = Solver::new(16);
    let pits = play(rules, |pos| solver.solve(pos).best_move().unwrap());
    let g = record(rules, &pits, 1);
    let rows = analyse_game(&g, 16, None).unwrap();
    let mut memo = HashMap::new();
    let start = minimax(&Position::start(rules), &mut memo);
    assert_eq!(rows.len(), pits.len());
    assert_eq!(rows[0].value_before, Some(start));
    assert_eq!(rows[0].engine, "", "the opening's sowing has no engine");
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r.ply, i as u32 + 1);
        assert_eq!(r.loss(), Some(0), "{r:?}");
    }
    // The last sowing's value after is the final store difference for its side.
    let last = rows.last().unwrap();
    assert_eq!(
        last.value_after,
        Some(g.final_position.store_margin(last.side))
    );
}

#[test]
fn a_bad_move_shows_its_exact_loss() {
    let rules = Rules::new(3, 3, false, Sweep::Owner).unwrap();
    let mut memo = HashMap::new();
    // The first sowing whose worst choice loses 2 or more is that worst choice; every other
    // sowing is perfect.
    let mut n = 0;
    let mut bad = None;
    let pits = play(rules, |pos| {
        let me = pos.to_move();
        let value = |pit: u8, memo: &mut HashMap<_, _>| {
            let next = pos.play(pit as i64).unwrap();
            if next.is_over() {
                next.store_margin(me)
            } else if next.to_move() == me {
                minimax(&next, memo)
            } else {
                -minimax(&next, memo)
            }
        };
        let legal: Vec<u8> = pos.legal_moves().collect();
        let by_value: Vec<(i32, u8)> = legal.iter().map(|&p| (value(p, &mut memo), p)).collect();
        let worst = *by_value.iter().min().unwrap();
        let best = *by_value.iter().max().unwrap();
        n += 1;
        if bad.is_none() && best.0 - worst.0 >= 2 {
            bad = Some((n, minimax(pos, &mut memo), worst.0));
            worst.1
        } else {
            by_value.iter().max().unwrap().1
        }
    });
    let (ply, before, after) = bad.unwrap();
    let g = record(rules, &pits, 0);
    let rows = analyse_game(&g, 16, None).unwrap();
    for r in &rows {
        let expected = if r.ply == ply { before - after } else { 0 };
        assert_eq!(r.loss(), Some(expected), "{r:?}");
    }
    let r = &rows[ply as usize - 1];
    assert_eq!((r.value_before, r.value_after), (Some(before), Some(after)));
    let t = accuracy(&rows);
    let s = t.get(r.engine.as_str()).unwrap();
    assert_eq!((s.blunders, s.seeds_lost), (1, (before - after) as u64));
}

#[test]
fn a_budget_too_small_leaves_values_empty() {
    let rules = Rules::new(6, 4, false, Sweep::Owner).unwrap();
    let mut pos = Position::start(rules);
    let mut solver = Solver::new(16);
    let budget = Some(std::time::Duration::ZERO);
    assert_eq!(value_within(&mut solver, &pos, budget, None), None);
    while !pos.is_over() {
        let first = pos.legal_moves().next().unwrap();
        pos = pos.play(first as i64).unwrap();
    }
    assert_eq!(
        value_within(&mut solver, &pos, budget, None),
        Some(pos.store_margin(pos.to_move()))
    );
}

#[test]
fn positions_out_of_budget_get_marked_estimates_that_depend_on_the_position_alone() {
    let rules = Rules::new(6, 3, false, Sweep::Owner).unwrap();
    let pits = play(rules, |pos| pos.legal_moves().last().unwrap());
    let g = record(rules, &pits, 0);
    let zero = Some(std::time::Duration::ZERO);
    let rows = analyse_game(&g, 16, zero).unwrap();
    assert_eq!(rows.len(), pits.len());
    // Only positions whose value needs no search are solved in no time: the others are
    // estimated, and say how.
    assert!(rows.iter().all(|r| r.loss().is_some()));
    assert_eq!(rows[0].estimate_depth, Some(ESTIMATE_DEPTH));
    let estimated = rows.iter().filter(|r| r.estimated()).count();
    assert!(estimated > rows.len() / 2, "{rows:?}");
    // The same game again, after another game has been through the same analyser: the
    // same estimates.
    let mut a = Analyser::new(16, 1, zero);
    let other = record(
        rules,
        &play(rules, |pos| pos.legal_moves().next().unwrap()),
        1,
    );
    a.analyse(&other).unwrap();
    assert_eq!(a.analyse(&g).unwrap(), rows);
    // Without estimates, the values stay empty; with a budget, all are exact.
    a.set_estimates(false);
    let bare = a.analyse(&g).unwrap();
    for (r, e) in bare.iter().zip(&rows) {
        assert_eq!(r.loss().is_none(), e.estimated(), "{r:?}");
        assert!(!r.estimated());
    }
    let exact = analyse_game(&g, 16, None).unwrap();
    assert!(exact.iter().all(|r| !r.estimated() && r.loss().is_some()));
    // The summaries count the two kinds apart.
    let i = rows
        .iter()
        .rposition(|r| r.estimated() && r.by_engine())
        .unwrap();
    let mut mixed = exact.clone();
    mixed[i] = rows[i].clone();
    let t = accuracy(&mixed);
    let engine = &rows[i].engine;
    let (m, e): (u64, u64) = t
        .iter()
        .map(|(_, a)| (a.moves, a.estimated))
        .fold((0, 0), |x, y| (x.0 + y.0, x.1 + y.1));
    assert_eq!(
        (m, e),
        (exact.iter().filter(|r| r.by_engine()).count() as u64 - 1, 1)
    );
    assert_eq!(t.get(engine).unwrap().estimated, 1);
}
