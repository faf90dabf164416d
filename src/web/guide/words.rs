//! The guide's sentences: what a sowing did, how the game ended, and whether a step's
//! goal was reached.

use super::*;

pub(super) fn seeds(n: u32) -> String {
    if n == 1 {
        "1 seed".to_string()
    } else {
        format!("{n} seeds")
    }
}

/// "pits 1, 2 and 3"
pub(super) fn numbers(list: &[u8]) -> String {
    let words: Vec<String> = list.iter().map(|n| n.to_string()).collect();
    match words.as_slice() {
        [] => String::new(),
        [one] => format!("pit {one}"),
        [rest @ .., last] => format!("pits {} and {last}", rest.join(", ")),
    }
}

/// Whose: the person is south.
pub(super) fn owner(side: Side) -> &'static str {
    match side {
        Side::South => "your",
        Side::North => "north's",
    }
}

/// What a sowing did, in words, from what the rules answered.
pub(super) fn describe(
    before: &Position,
    pit: u8,
    path: &[Cell],
    after: &Position,
    effect: crate::rules::MoveEffect,
) -> String {
    let me = before.to_move();
    // The path in runs: "your pits 2 and 3", "your store", "north's pits 1, 2 and 3".
    let mut runs: Vec<String> = Vec::new();
    let mut i = 0;
    while i < path.len() {
        let c = path[i];
        match c.pit {
            None => {
                runs.push(format!("{} store", owner(c.side)));
                i += 1;
            }
            Some(_) => {
                let mut list = Vec::new();
                while i < path.len() && path[i].side == c.side && path[i].pit.is_some() {
                    list.extend(path[i].pit);
                    i += 1;
                }
                let skipped =
                    c.side == me && runs.iter().any(|r| r.starts_with(owner(me.opponent())));
                let mut run = format!("{} {}", owner(c.side), numbers(&list));
                if skipped && list.first() == Some(&1) {
                    run = format!("(skipping north's store) {run}");
                }
                runs.push(run);
            }
        }
    }
    let n = path.len() as u32;
    let mut text = format!(
        "Pit {pit}'s {} went one by one to {}.",
        seeds(n),
        join(&runs)
    );
    let Some(&last) = path.last() else {
        return text;
    };
    // How many seeds the last cell held before the last seed (the sown pit was emptied).
    let mut held = match last.pit {
        Some(p) if last.side == me && p == pit => 0,
        Some(p) => u32::from(before.pit(last.side, usize::from(p))),
        None => u32::from(before.store(last.side)),
    };
    held += path[..path.len() - 1]
        .iter()
        .filter(|c| **c == last)
        .count() as u32;
    let opposite = |p: u8| before.rules().pits() as u8 + 1 - p;
    let landing = match last.pit {
        None => " The last seed landed in your store".to_string(),
        Some(p) if last.side == me && held == 0 => {
            let across = opposite(p);
            let there = u32::from(before.pit(me.opponent(), usize::from(across)))
                + path
                    .iter()
                    .filter(|c| c.side == me.opponent() && c.pit == Some(across))
                    .count() as u32;
            if effect.captured > 0 && there > 0 {
                format!(
                    " The last seed landed in your pit {p}, which was empty, opposite north's \
                     pit {across} with {}: you capture 1 + {there} = {} into your store",
                    seeds(there),
                    seeds(there + 1)
                )
            } else if effect.captured > 0 {
                format!(
                    " The last seed landed in your pit {p}, which was empty, opposite north's \
                     empty pit {across}: under these rules (empty capture) the lone seed goes \
                     to your store"
                )
            } else {
                format!(
                    " The last seed landed in your pit {p}, which was empty, but north's pit \
                     {across} opposite is empty: nothing is captured and the seed stays"
                )
            }
        }
        Some(p) if last.side == me => format!(
            " The last seed landed in your pit {p}, which held {}: an ordinary move",
            seeds(held)
        ),
        Some(p) => {
            format!(" The last seed landed on north's side, in its pit {p}: an ordinary move")
        }
    };
    text.push_str(&landing);
    if effect.game_over {
        text.push_str(&format!(". {}", end_words(before, pit, after)));
    } else if effect.extra_turn {
        text.push_str(": an extra turn, you move again.");
    } else {
        text.push_str(". The turn passes to north.");
    }
    text
}

pub(super) fn join(runs: &[String]) -> String {
    match runs {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{}, then {last}", rest.join(", ")),
    }
}

/// The end: whose row ran empty, where the sweep sent the seeds left, and the count.
pub(super) fn end_words(before: &Position, pit: u8, after: &Position) -> String {
    // The same sowing with no sweep and with the owner's: the seeds left in each row.
    let play_with = |sweep: Sweep| crate::web::frames::played_with_sweep(before, pit, sweep);
    let mut text = String::new();
    if let (Some(none), Some(swept)) = (play_with(Sweep::None), play_with(Sweep::Owner)) {
        let left = |side: Side| u32::from(swept.store(side) - none.store(side));
        let (south, north) = (left(Side::South), left(Side::North));
        let empty = match (south, north) {
            (0, 0) => "Both rows are empty",
            (0, _) => "Your row is empty",
            _ => "North's row is empty",
        };
        text.push_str(&format!("{empty}: the game ends at once. "));
        // One row at most still holds seeds.
        let (holder, n) = if south > 0 {
            (Side::South, south)
        } else {
            (Side::North, north)
        };
        if n > 0 {
            let (whose, other) = (owner(holder), owner(holder.opponent()));
            text.push_str(&match before.rules().sweep() {
                Sweep::Owner => format!(
                    "The {} left in {whose} pits go to {whose} store. ",
                    seeds(n)
                ),
                Sweep::EmptySide => format!(
                    "The {} left in {whose} pits go to {other} store, the side whose row ran \
                     empty. ",
                    seeds(n)
                ),
                Sweep::None => format!("The {} left in {whose} pits count for no one. ", seeds(n)),
            });
        }
    } else {
        text.push_str("The game ends. ");
    }
    let (you, north) = (after.store(Side::South), after.store(Side::North));
    let who = match you.cmp(&north) {
        std::cmp::Ordering::Greater => "you win",
        std::cmp::Ordering::Less => "north wins",
        std::cmp::Ordering::Equal => "a draw",
    };
    text.push_str(&format!("The count: you {you}, north {north}: {who}."));
    text
}

/// The lesson's verdict after the person's sowings.
pub(super) fn verdict(l: &Lesson, done: bool, over: bool, last: &Sowing, pos: &Position) -> String {
    if done {
        return match l.goal {
            Goal::Store => "Done: seeds reached your store, where they stay and count for you. \
                            The opponent's store was skipped on the way."
                .to_string(),
            Goal::ExtraTurn => {
                "Done: the last seed landed in your store, so you move again.".to_string()
            }
            Goal::Capture => format!(
                "Done: you captured {} into your store, and the turn passes.",
                seeds(u32::from(last.captured))
            ),
            Goal::End => {
                let (you, north) = (pos.store(Side::South), pos.store(Side::North));
                let who = match you.cmp(&north) {
                    std::cmp::Ordering::Greater => "You win",
                    std::cmp::Ordering::Less => "North wins",
                    std::cmp::Ordering::Equal => "A draw",
                };
                format!(
                    "Done: the game is over. {who}, {you} to {north}. Start the step again and \
                     sow in another order to see whether the count changes."
                )
            }
            Goal::Ordinary => {
                "Done: the last seed landed on north's side, so the turn simply passes.".to_string()
            }
        };
    }
    if !over {
        return "You move again: go on.".to_string();
    }
    let why = if pos.is_over() {
        "the game ended"
    } else {
        "the turn passed to north"
    };
    let missed = match l.goal {
        Goal::Store => "no seed reached your store",
        Goal::ExtraTurn => "the last seed did not land in your store",
        Goal::Capture => "nothing was captured",
        Goal::End => "your row is not empty",
        Goal::Ordinary => "this was no ordinary move",
    };
    format!("Not yet: {missed}, and {why}. Start the step again and try another pit.")
}
