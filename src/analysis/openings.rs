//! Balanced openings: distinct lines of K random sowings from the start whose exact value
//! for south lies in [-V, V], so that the two games of a pair start from a position that is
//! even (or nearly) under perfect play.

use super::game::value_within;
use crate::record::counted;
use crate::rules::{Position, Rules, Side};
use crate::solver::{EndgameTable, Solver};
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

/// What to generate.
#[derive(Clone, Copy, Debug)]
pub struct OpeningsSpec {
    /// Sowings in each opening.
    pub plies: u32,
    pub count: usize,
    /// The largest exact value for south allowed, either way.
    pub max_value: i32,
    /// The seed of the random lines.
    pub seed: u64,
    /// Time for each position; one not solved in it is not used.
    pub budget: Option<Duration>,
    pub threads: usize,
    /// Memory of each thread's transposition table, in MiB.
    pub hash_mb: usize,
}

/// An opening and its exact value for south.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BalancedOpening {
    pub pits: Vec<u8>,
    pub value: i32,
}

/// Random lines tried per opening wanted before giving up.
const TRIES_PER_OPENING: usize = 200;

/// The exact value for south of the position after `pits`, if solved within the budget.
fn south_value(
    solver: &mut Solver,
    rules: Rules,
    pits: &[u8],
    budget: Option<Duration>,
) -> Option<i32> {
    let mut pos = Position::start(rules);
    for &p in pits {
        pos = pos.play(p as i64).ok()?;
    }
    let v = value_within(solver, &pos, budget, None)?;
    Some(if pos.to_move() == Side::South { v } else { -v })
}

/// Distinct candidate lines, in a fixed order for a seed: each of `spec.plies` sowings
/// that does not end the game, and each reaching a position no earlier line reached.
struct Candidates {
    rules: Rules,
    spec: OpeningsSpec,
    next: u64,
    seen: HashSet<(Vec<u16>, Side)>,
}

impl Candidates {
    fn take(&mut self, n: usize, limit: u64) -> Vec<Vec<u8>> {
        let mut out = Vec::with_capacity(n);
        while out.len() < n && self.next < limit {
            let line = random_opening(self.rules, self.spec.plies, self.spec.seed, self.next);
            self.next += 1;
            if line.len() != self.spec.plies as usize {
                continue;
            }
            let mut pos = Position::start(self.rules);
            for &p in &line {
                pos = pos.play(p as i64).expect("a legal line");
            }
            if self.seen.insert((pos.cells().to_vec(), pos.to_move())) {
                out.push(line);
            }
        }
        out
    }
}

/// `spec.count` distinct openings of `spec.plies` sowings under `rules` whose exact value
/// for south lies in `[-max_value, max_value]`, in the order the seed draws them (the same
/// for the same seed, whatever the threads). `progress` hears the lines tried and the
/// openings found. An error says how many were found when the tries ran out.
pub fn balanced_openings(
    rules: Rules,
    spec: OpeningsSpec,
    table: Option<Arc<EndgameTable>>,
    progress: &mut dyn FnMut(u64, &[BalancedOpening]),
) -> Result<Vec<BalancedOpening>, String> {
    let threads = spec.threads.max(1);
    let mut solvers: Vec<Solver> = (0..threads)
        .map(|_| {
            let mut s = Solver::new(spec.hash_mb.max(1));
            s.set_endgame(table.clone());
            s
        })
        .collect();
    let limit = (spec.count.max(1) * TRIES_PER_OPENING) as u64;
    let mut cands = Candidates {
        rules,
        spec,
        next: 0,
        seen: HashSet::new(),
    };
    let mut found = Vec::new();
    let mut tried = 0u64;
    let mut unsolved = 0u64;
    while found.len() < spec.count {
        let batch = cands.take(threads * 2, limit);
        if batch.is_empty() {
            // A longer budget helps only if some line was left unsolved; more sowings give
            // more distinct lines to choose from.
            let budget = if unsolved > 0 {
                format!(
                    ", or a longer --budget ({} not solved within it)",
                    counted(unsolved, "line")
                )
            } else {
                String::new()
            };
            return Err(format!(
                "found only {} of {} distinct openings of {} sowings under {rules} with an exact \
                 value for south within ±{} after {} random lines: allow a larger --max-value, \
                 ask for fewer (--count) or use more sowings (--plies){budget}",
                found.len(),
                spec.count,
                spec.plies,
                spec.max_value,
                cands.next
            ));
        }
        let chunk = batch.len().div_ceil(threads);
        let values: Vec<Option<i32>> = std::thread::scope(|scope| {
            let handles: Vec<_> = solvers
                .iter_mut()
                .zip(batch.chunks(chunk))
                .map(|(solver, lines)| {
                    scope.spawn(move || {
                        lines
                            .iter()
                            .map(|l| south_value(solver, rules, l, spec.budget))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().expect("a solving thread panicked"))
                .collect()
        });
        for (pits, value) in batch.into_iter().zip(values) {
            tried += 1;
            match value {
                Some(v) if v.abs() <= spec.max_value && found.len() < spec.count => {
                    found.push(BalancedOpening { pits, value: v })
                }
                Some(_) => {}
                None => unsolved += 1,
            }
        }
        progress(tried, &found);
    }
    Ok(found)
}

/// The openings as an openings file: a comment saying what they are, then one line each
/// with the value as a comment.
pub fn openings_text(rules: Rules, spec: &OpeningsSpec, openings: &[BalancedOpening]) -> String {
    let mut s = format!(
        "# {} openings of {} sowings under {rules}, exact value for south within ±{} (seed {})\n\
         # kalaha openings --plies {} --count {} --max-value {} --seed {} --pits {} --seeds {}{} --sweep {}\n",
        openings.len(),
        spec.plies,
        spec.max_value,
        spec.seed,
        spec.plies,
        spec.count,
        spec.max_value,
        spec.seed,
        rules.pits(),
        rules.seeds(),
        if rules.empty_capture() {
            " --empty-capture"
        } else {
            ""
        },
        rules.sweep(),
    );
    for o in openings {
        s.push_str(&format!(
            "{}  # value {:+}\n",
            crate::record::format_pits(&o.pits),
            o.value
        ));
    }
    s
}

/// `plies` random legal sowings from the start that do not end the game. Deterministic in
/// `(seed, round)`: the generator is ChaCha8 seeded with `seed`, on stream `round`.
pub fn random_opening(rules: Rules, plies: u32, seed: u64, round: u64) -> Vec<u8> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(round);
    let mut best = Vec::new();
    for _attempt in 0..100 {
        let mut pos = Position::start(rules);
        let mut line = Vec::new();
        for _ in 0..plies {
            let legal: Vec<u8> = pos.legal_moves().collect();
            let pit = legal[rng.random_range(0..legal.len())];
            let next = pos.play(pit as i64).expect("a legal move");
            if next.is_over() {
                break;
            }
            pos = next;
            line.push(pit);
        }
        if line.len() == plies as usize {
            return line;
        }
        if line.len() > best.len() {
            best = line;
        }
    }
    best
}

/// Why an openings file was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OpeningsError {
    #[error("openings line {line}: {reason}")]
    Line { line: usize, reason: String },
    #[error("the openings file holds no opening")]
    Empty,
}

/// Reads an openings file: one opening per line, pit numbers separated by spaces (or
/// commas); `#` starts a comment; blank lines are skipped. Every opening must be legal under
/// `rules` and must not end the game.
pub fn parse_openings(text: &str, rules: Rules) -> Result<Vec<Vec<u8>>, OpeningsError> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let err = |reason: String| OpeningsError::Line {
            line: i + 1,
            reason,
        };
        let mut pos = Position::start(rules);
        let mut pits = Vec::new();
        for word in line.split(|c: char| c.is_whitespace() || c == ',') {
            if word.is_empty() {
                continue;
            }
            let pit: i64 = word
                .parse()
                .map_err(|_| err(format!("{word:?} is not a pit number")))?;
            pos = pos.play(pit).map_err(|e| err(e.to_string()))?;
            pits.push(pit as u8);
        }
        if pos.is_over() {
            return Err(err("the opening ends the game".into()));
        }
        out.push(pits);
    }
    if out.is_empty() {
        return Err(OpeningsError::Empty);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::tests::minimax;
    use crate::rules::Sweep;

    /// `openings --help`'s example finds its five openings; with fewer sowings there are
    /// too few lines, and the error does not suggest a longer budget when every line was
    /// solved.
    #[test]
    fn the_help_example_works_and_a_shortfall_names_only_what_can_help() {
        let rules = Rules::new(4, 3, false, Sweep::Owner).unwrap();
        let spec = OpeningsSpec {
            plies: 3,
            count: 5,
            max_value: 0,
            seed: 0,
            budget: None,
            threads: 1,
            hash_mb: 4,
        };
        let found = balanced_openings(rules, spec, None, &mut |_, _| {}).unwrap();
        assert_eq!(found.len(), 5);
        let short = OpeningsSpec { plies: 2, ..spec };
        let err = balanced_openings(rules, short, None, &mut |_, _| {}).unwrap_err();
        assert!(err.contains("--count") && err.contains("--plies"), "{err}");
        assert!(!err.contains("--budget"), "{err}");
    }

    #[test]
    fn openings_are_distinct_of_k_sowings_and_within_the_value() {
        let rules = Rules::new(3, 3, false, Sweep::Owner).unwrap();
        let spec = OpeningsSpec {
            plies: 2,
            count: 4,
            max_value: 2,
            seed: 7,
            budget: None,
            threads: 2,
            hash_mb: 4,
        };
        let found = balanced_openings(rules, spec, None, &mut |_, _| {}).unwrap();
        assert_eq!(found.len(), 4);
        let again = balanced_openings(
            rules,
            OpeningsSpec { threads: 1, ..spec },
            None,
            &mut |_, _| {},
        )
        .unwrap();
        assert_eq!(
            found, again,
            "the same for the same seed, whatever the threads"
        );
        let text = openings_text(rules, &spec, &found);
        let parsed = parse_openings(&text, rules).unwrap();
        assert_eq!(
            parsed,
            found.iter().map(|o| o.pits.clone()).collect::<Vec<_>>()
        );
        let mut memo = std::collections::HashMap::new();
        let mut positions = HashSet::new();
        for o in &found {
            assert_eq!(o.pits.len(), 2);
            let mut pos = Position::start(rules);
            for &p in &o.pits {
                pos = pos.play(p as i64).unwrap();
            }
            assert!(!pos.is_over());
            assert!(
                positions.insert((pos.cells().to_vec(), pos.to_move())),
                "distinct: {found:?}"
            );
            let v = minimax(&pos, &mut memo);
            let south = if pos.to_move() == Side::South { v } else { -v };
            assert_eq!(south, o.value);
            assert!(o.value.abs() <= 2);
        }
        // Asking for more than exist says so.
        let err = balanced_openings(
            rules,
            OpeningsSpec { count: 500, ..spec },
            None,
            &mut |_, _| {},
        )
        .unwrap_err();
        assert!(err.contains("found only"), "{err}");
    }
}
