//! The simple engines: `random`, `first`, `greedy` and `easy` (a greedy player that
//! sometimes overlooks captures).

use super::Player;
use super::options::{int_option, parse_int, unknown_option};
use crate::protocol::EngineOption;
use crate::record::{SearchInfo, TimeLimit};
use crate::rules::{Move, Position, Rules, Side};
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};

/// How many extra turns in a row the greedy look at a turn follows exhaustively; past
/// that it takes the first continuation (chains that long are rare and already won).
const CHAIN_LIMIT: u32 = 8;

/// The largest margin gain the side to move can make in this turn: one sowing plus, after
/// an extra turn, the best continuation of the same turn. Captures and the end-of-game
/// sweep count (the gain is in store margin, the mover's store minus the other's).
pub fn turn_gain(pos: &Position) -> i32 {
    turn_gain_limited(pos, CHAIN_LIMIT)
}

fn turn_gain_limited(pos: &Position, chain: u32) -> i32 {
    let me = pos.to_move();
    let margin = pos.store_margin(me);
    let mut best = i32::MIN;
    for pit in pos.legal_moves() {
        let mut child = *pos;
        let effect = child.sow(pit as usize);
        let mut gain = child.store_margin(me) - margin;
        if effect.extra_turn && chain > 0 {
            gain += turn_gain_limited(&child, chain - 1);
        }
        best = best.max(gain);
        if chain == 0 {
            break;
        }
    }
    if best == i32::MIN { 0 } else { best }
}

/// The gain of each legal move for this turn: `(pit, gain, captured)`, where the gain
/// follows any extra turn to the best end of the turn.
fn move_gains(pos: &Position) -> Vec<(u8, i32, i32)> {
    let me = pos.to_move();
    let margin = pos.store_margin(me);
    pos.legal_moves()
        .map(|pit| {
            let mut child = *pos;
            let effect = child.sow(pit as usize);
            let mut gain = child.store_margin(me) - margin;
            if effect.extra_turn {
                gain += turn_gain(&child);
            }
            (pit, gain, effect.captured as i32)
        })
        .collect()
}

fn seed_option() -> EngineOption {
    int_option("seed", 0, 0, i64::MAX)
}

/// The generator for game `game` of an engine with option `seed`: a stable hash (64-bit
/// FNV-1a) of both, so that a game's moves depend neither on the games played before it
/// by the same process nor on the Rust version.
fn game_rng(seed: u64, game: &str) -> ChaCha8Rng {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in seed.to_le_bytes().iter().chain(game.as_bytes()) {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    ChaCha8Rng::seed_from_u64(h)
}

/// Plays a uniformly random legal move, from a ChaCha generator seeded by option `seed`
/// and, from each `new_game` on, the game id (the same seed and game id give the same
/// game).
pub struct RandomPlayer {
    seed: u64,
    rng: ChaCha8Rng,
}

impl RandomPlayer {
    pub fn new(seed: u64) -> RandomPlayer {
        RandomPlayer {
            seed,
            rng: ChaCha8Rng::seed_from_u64(seed),
        }
    }
}

impl Default for RandomPlayer {
    fn default() -> Self {
        RandomPlayer::new(0)
    }
}

impl Player for RandomPlayer {
    fn name(&self) -> &str {
        "random"
    }

    fn options(&self) -> Vec<EngineOption> {
        vec![seed_option()]
    }

    fn set_option(&mut self, name: &str, value: &serde_json::Value) -> Result<(), String> {
        match name {
            "seed" => {
                *self = RandomPlayer::new(parse_int(name, value, 0, i64::MAX)? as u64);
                Ok(())
            }
            _ => Err(unknown_option(self.name(), name, &self.options())),
        }
    }

    fn new_game(&mut self, game: &str, _rules: Rules, _side: Side) {
        self.rng = game_rng(self.seed, game);
    }

    fn choose_move(
        &mut self,
        pos: &Position,
        _history: &[Move],
        _time: Option<TimeLimit>,
        _info: &mut dyn FnMut(SearchInfo),
    ) -> u8 {
        let moves: Vec<u8> = pos.legal_moves().collect();
        moves[self.rng.random_range(0..moves.len())]
    }
}

impl RandomPlayer {
    /// The seed the generator was started from.
    pub fn seed(&self) -> u64 {
        self.seed
    }
}

/// Always plays the lowest-numbered legal pit: fully predictable, for tests.
#[derive(Default)]
pub struct FirstPlayer;

impl Player for FirstPlayer {
    fn name(&self) -> &str {
        "first"
    }

    fn options(&self) -> Vec<EngineOption> {
        Vec::new()
    }

    fn set_option(&mut self, name: &str, _value: &serde_json::Value) -> Result<(), String> {
        Err(unknown_option(self.name(), name, &[]))
    }

    fn choose_move(
        &mut self,
        pos: &Position,
        _history: &[Move],
        _time: Option<TimeLimit>,
        _info: &mut dyn FnMut(SearchInfo),
    ) -> u8 {
        pos.legal_moves().next().expect("the game is not over")
    }
}

/// Plays the move with the largest store gain this turn (extra turns followed, captures
/// counted); among equal gains, the pit nearest its store.
#[derive(Default)]
pub struct GreedyPlayer;

impl Player for GreedyPlayer {
    fn name(&self) -> &str {
        "greedy"
    }

    fn options(&self) -> Vec<EngineOption> {
        Vec::new()
    }

    fn set_option(&mut self, name: &str, _value: &serde_json::Value) -> Result<(), String> {
        Err(unknown_option(self.name(), name, &[]))
    }

    fn choose_move(
        &mut self,
        pos: &Position,
        _history: &[Move],
        _time: Option<TimeLimit>,
        info: &mut dyn FnMut(SearchInfo),
    ) -> u8 {
        let (pit, gain, _) = move_gains(pos)
            .into_iter()
            .max_by_key(|&(pit, gain, _)| (gain, pit))
            .expect("the game is not over");
        info(SearchInfo {
            depth: Some(1),
            score: Some(gain as i64),
            pv: vec![pit],
            ..SearchInfo::default()
        });
        pit
    }
}

/// A greedy player that overlooks each capture with probability `miss` percent (seeded by
/// option `seed` and, from each `new_game` on, the game id) and breaks ties at random: the
/// beginner level.
pub struct EasyPlayer {
    miss: u32,
    seed: u64,
    rng: ChaCha8Rng,
}

impl EasyPlayer {
    pub fn new(seed: u64, miss: u32) -> EasyPlayer {
        EasyPlayer {
            miss,
            seed,
            rng: ChaCha8Rng::seed_from_u64(seed),
        }
    }
}

impl Default for EasyPlayer {
    fn default() -> Self {
        EasyPlayer::new(0, 50)
    }
}

impl Player for EasyPlayer {
    fn name(&self) -> &str {
        "easy"
    }

    fn options(&self) -> Vec<EngineOption> {
        vec![seed_option(), int_option("miss", 50, 0, 100)]
    }

    fn set_option(&mut self, name: &str, value: &serde_json::Value) -> Result<(), String> {
        match name {
            "seed" => {
                *self = EasyPlayer::new(parse_int(name, value, 0, i64::MAX)? as u64, self.miss);
                Ok(())
            }
            "miss" => {
                self.miss = parse_int(name, value, 0, 100)? as u32;
                Ok(())
            }
            _ => Err(unknown_option(self.name(), name, &self.options())),
        }
    }

    fn new_game(&mut self, game: &str, _rules: Rules, _side: Side) {
        self.rng = game_rng(self.seed, game);
    }

    fn choose_move(
        &mut self,
        pos: &Position,
        _history: &[Move],
        _time: Option<TimeLimit>,
        _info: &mut dyn FnMut(SearchInfo),
    ) -> u8 {
        let mut scored: Vec<(u8, i32)> = move_gains(pos)
            .into_iter()
            .map(|(pit, gain, captured)| {
                let overlooked = captured > 0 && self.rng.random_ratio(self.miss, 100);
                (pit, if overlooked { gain - captured } else { gain })
            })
            .collect();
        let best = scored.iter().map(|s| s.1).max().expect("not over");
        scored.retain(|s| s.1 == best);
        scored[self.rng.random_range(0..scored.len())].0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Sweep;

    fn rules(pits: u32, seeds: u32) -> Rules {
        Rules::new(pits, seeds, false, Sweep::Owner).unwrap()
    }

    fn choose(p: &mut dyn Player, pos: &Position) -> u8 {
        p.choose_move(pos, &[], None, &mut |_| {})
    }

    #[test]
    fn greedy_takes_the_chain_of_extra_turns() {
        // Pit 4 (one seed) and pit 3 (two seeds) both reach the store and chain on; no
        // other first move does.
        let pos = Position::from_compact("3,0,2,1:0/3,3,3,3:6/s", rules(4, 3)).unwrap();
        assert!(turn_gain(&pos) >= 3);
        assert!([3, 4].contains(&choose(&mut GreedyPlayer, &pos)));
    }

    #[test]
    fn greedy_takes_the_capture() {
        // Pit 1 (one seed) lands in the empty pit 2, facing north's pit 2 with five seeds.
        let pos = Position::from_compact("1,0,4:0/1,5,1:0/s", rules(3, 2)).unwrap();
        assert_eq!(choose(&mut GreedyPlayer, &pos), 1);
        // Easy with miss=100 never sees it and takes the extra-turn-free best sowing.
        let mut easy = EasyPlayer::new(1, 100);
        assert_ne!(choose(&mut easy, &pos), 1);
        let mut sharp = EasyPlayer::new(1, 0);
        assert_eq!(choose(&mut sharp, &pos), 1);
    }

    #[test]
    fn first_and_random_play_legal_moves_and_random_is_reproducible() {
        let pos = Position::from_compact("0,0,3,1:2/4,4,0,0:2/s", rules(4, 2)).unwrap();
        assert_eq!(choose(&mut FirstPlayer, &pos), 3);
        let start = Position::start(Rules::default());
        let seq = |seed| {
            let mut r = RandomPlayer::new(seed);
            (0..20).map(|_| choose(&mut r, &start)).collect::<Vec<_>>()
        };
        assert_eq!(seq(5), seq(5));
        assert_ne!(seq(5), seq(6));
        let mut r = RandomPlayer::default();
        r.set_option("seed", &serde_json::json!(9)).unwrap();
        assert_eq!(r.seed(), 9);
        assert!(r.set_option("depth", &serde_json::json!(9)).is_err());
    }
}
