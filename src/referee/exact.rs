//! Tablebase adjudication: a game ends as soon as the solver proves its value within a
//! small budget, with the stores that perfect play from there reaches.

use crate::rules::{Position, Rules, Side};
use crate::solver::{
    Budget, EndgameTable, IN_MEMORY_BYTES, Solver, TableRules, TableStore, planned_seeds, table_len,
};
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, OnceLock};

/// Positions each null-window search of the solver may visit before a move of an
/// adjudicated game (an exact solve makes a few such searches): about a millisecond;
/// positions that need more are played on.
pub(crate) const EXACT_NODES: u64 = 5_000;

/// The largest endgame table used, in bytes (as `kalaha solve`'s default).
const TABLE_BYTES: u64 = 1024 << 20;

/// The transposition table of each thread's solver, in MiB.
const HASH_MB: usize = 32;

/// The endgame table used for `rules`: a small one is built in memory once, a larger one is
/// read from the table cache when it has been built (`kalaha tables build`); never built
/// here, which would stall the games for minutes.
pub(crate) fn shared_table(rules: &Rules) -> Option<Arc<EndgameTable>> {
    static TABLES: OnceLock<Mutex<HashMap<TableRules, Option<Arc<EndgameTable>>>>> =
        OnceLock::new();
    let tr = TableRules::of(rules);
    let mut map = TABLES
        .get_or_init(|| Mutex::new(HashMap::new()))
        .lock()
        .expect("not poisoned");
    map.entry(tr)
        .or_insert_with(|| {
            let budget = TABLE_BYTES;
            let k = planned_seeds(rules, budget)?;
            if table_len(tr, k)? <= IN_MEMORY_BYTES {
                return EndgameTable::build(tr, k, 1, &|_| {}, &AtomicBool::new(false))
                    .map(Arc::new);
            }
            let store = TableStore::at(None).ok()?;
            store.open_best(tr, budget).ok()?.0.map(Arc::new)
        })
        .clone()
}

/// Whether `rules` call for a table too large to build in memory that is not in the
/// table cache: without it, solving positions near the start takes very long.
pub(crate) fn saved_table_missing(rules: &Rules) -> bool {
    let tr = TableRules::of(rules);
    let large = planned_seeds(rules, TABLE_BYTES)
        .and_then(|k| table_len(tr, k))
        .is_some_and(|len| len > IN_MEMORY_BYTES);
    large && shared_table(rules).is_none()
}

thread_local! {
    static SOLVER: RefCell<Option<Solver>> = const { RefCell::new(None) };
}

/// The final stores (south, north) under perfect play from `pos` (not over), if the solver
/// proves them within `nodes` positions.
pub(crate) fn settle(pos: &Position, nodes: u64) -> Option<(u16, u16)> {
    SOLVER.with(|cell| {
        let mut slot = cell.borrow_mut();
        let solver = slot.get_or_insert_with(|| Solver::new(HASH_MB));
        let table = shared_table(pos.rules());
        if solver.endgame().map(Arc::as_ptr) != table.as_ref().map(Arc::as_ptr) {
            solver.set_endgame(table);
        }
        let budget = Budget {
            deadline: None,
            max_nodes: Some(nodes),
        };
        // Follow best play to the end; a line cut short is solved on from where it stops.
        let mut cur = *pos;
        for _ in 0..4 {
            let sol = solver.solve_within(&cur, budget)?;
            for m in &sol.pv {
                cur = cur.play(m.pit as i64).ok()?;
            }
            if cur.is_over() {
                return Some((cur.store(Side::South), cur.store(Side::North)));
            }
        }
        None
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Sweep;

    #[test]
    fn settled_stores_give_the_exact_value() {
        let rules = Rules::new(3, 3, false, Sweep::Owner).unwrap();
        let mut memo = std::collections::HashMap::new();
        let mut pos = Position::start(rules).play(1).unwrap();
        while !pos.is_over() {
            if let Some((s, n)) = settle(&pos, u64::MAX) {
                let v = crate::analysis::tests::minimax(&pos, &mut memo);
                let south = if pos.to_move() == Side::South { v } else { -v };
                assert_eq!(s as i32 - n as i32, south, "{pos}");
                assert_eq!(s as u32 + n as u32, rules.total_seeds());
            }
            let first = pos.legal_moves().last().unwrap();
            pos = pos.play(first as i64).unwrap();
        }
    }
}
