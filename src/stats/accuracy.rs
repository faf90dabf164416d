//! How far engines are from perfect play, from the exact analysis of their sowings: seeds
//! lost per move, the share of perfect moves and the blunders, per engine.

use std::collections::BTreeMap;

/// A loss of at least this many seeds is a blunder.
pub const BLUNDER_SEEDS: u32 = 2;

/// The analysed moves of one engine (or one side of one game).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Accuracy {
    /// Moves whose loss is known.
    pub moves: u64,
    /// Seeds lost in them, in all.
    pub seeds_lost: u64,
    /// Moves that lost nothing.
    pub perfect: u64,
    /// Moves that lost [`BLUNDER_SEEDS`] or more.
    pub blunders: u64,
    /// Moves left unsolved within the budget (not in the other counts).
    pub unsolved: u64,
    /// Moves whose loss is an estimate of the engines' search at a fixed depth, where the
    /// solver did not finish (not in the other counts).
    pub estimated: u64,
    /// The estimated seeds lost in them (each move's estimate taken as 0 when negative).
    pub estimated_lost: u64,
}

impl Accuracy {
    /// Counts a move that lost `loss` seeds (`None`: not solved).
    pub fn add(&mut self, loss: Option<u32>) {
        let Some(loss) = loss else {
            self.unsolved += 1;
            return;
        };
        self.moves += 1;
        self.seeds_lost += loss as u64;
        self.perfect += u64::from(loss == 0);
        self.blunders += u64::from(loss >= BLUNDER_SEEDS);
    }

    /// Counts a move whose loss is an estimate of `loss` seeds (see
    /// [`Accuracy::estimated`]).
    pub fn add_estimated(&mut self, loss: i32) {
        self.estimated += 1;
        self.estimated_lost += loss.max(0) as u64;
    }

    /// Estimated seeds lost per move with an estimated loss (NaN without such moves).
    pub fn estimated_loss_per_move(&self) -> f64 {
        self.estimated_lost as f64 / self.estimated as f64
    }

    /// Seeds lost per move (NaN without moves).
    pub fn loss_per_move(&self) -> f64 {
        self.seeds_lost as f64 / self.moves as f64
    }

    /// The share of perfect moves, 0 to 1 (NaN without moves).
    pub fn perfect_share(&self) -> f64 {
        self.perfect as f64 / self.moves as f64
    }

    /// Blunders per move (NaN without moves).
    pub fn blunder_share(&self) -> f64 {
        self.blunders as f64 / self.moves as f64
    }
}

/// The accuracy of every engine, by name.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AccuracyTable {
    by_engine: BTreeMap<String, Accuracy>,
}

impl AccuracyTable {
    pub fn new() -> AccuracyTable {
        AccuracyTable::default()
    }

    /// Counts a move of `engine` that lost `loss` seeds (`None`: not solved).
    pub fn add(&mut self, engine: &str, loss: Option<u32>) {
        self.entry(engine).add(loss);
    }

    /// Counts a move of `engine` whose loss is an estimate of `loss` seeds.
    pub fn add_estimated(&mut self, engine: &str, loss: i32) {
        self.entry(engine).add_estimated(loss);
    }

    fn entry(&mut self, engine: &str) -> &mut Accuracy {
        if !self.by_engine.contains_key(engine) {
            self.by_engine
                .insert(engine.to_string(), Accuracy::default());
        }
        self.by_engine.get_mut(engine).expect("just inserted")
    }

    pub fn get(&self, engine: &str) -> Option<&Accuracy> {
        self.by_engine.get(engine)
    }

    /// Renames the engine `from` to `to`, if it is here.
    pub fn rename(&mut self, from: &str, to: &str) {
        if let Some(a) = self.by_engine.remove(from) {
            self.by_engine.insert(to.to_string(), a);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.by_engine.is_empty()
    }

    /// Every engine with its accuracy, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Accuracy)> {
        self.by_engine.iter().map(|(n, a)| (n.as_str(), a))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_losses_perfect_moves_and_blunders() {
        let mut t = AccuracyTable::new();
        for loss in [Some(0), Some(1), Some(3), None, Some(0)] {
            t.add("hard", loss);
        }
        let a = t.get("hard").unwrap();
        assert_eq!(
            (a.moves, a.seeds_lost, a.perfect, a.blunders, a.unsolved),
            (4, 4, 2, 1, 1)
        );
        assert_eq!(a.loss_per_move(), 1.0);
        // Estimates are counted apart and change nothing of the exact counts.
        t.add_estimated("hard", 3);
        t.add_estimated("hard", -1);
        let a = t.get("hard").unwrap();
        assert_eq!((a.moves, a.seeds_lost, a.unsolved), (4, 4, 1));
        assert_eq!((a.estimated, a.estimated_lost), (2, 3));
        assert_eq!(a.estimated_loss_per_move(), 1.5);
        assert_eq!(a.perfect_share(), 0.5);
        assert!(t.get("easy").is_none());
    }
}
