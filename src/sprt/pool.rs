//! The games of a test that several workers play ([`super::workers`]), pooled: every
//! worker's `games.jsonl`, followed as it grows, and the test judged over the game pairs
//! in the order of their numbers.
//!
//! The decision does not depend on which worker finished what first: the pairs are taken
//! in order, 1, 2, 3, ..., as far as every one of them is recorded (both its games), and
//! the test is judged after each, as [`Test::judge`] judges a test on one machine that
//! plays one game at a time. The first pair after which the test ends is its stopping
//! point; the pairs after it, recorded by workers that had not yet seen the decision, do
//! not count. Whoever pools the same games (a worker, `kalaha sprt --report`) so reaches
//! the same verdict, LLR and stopping point.
//!
//! A game counts when its line in a worker's `games.jsonl` is complete, is a game of
//! that worker's pairs of the test (its id, engines, rules and number), and replays under
//! the rules. A game that repeats an earlier one move for move (by game number) is left
//! out, as [`crate::tournament::repeats`] leaves it out of a run.

use super::{Judgement, SprtEnd, SprtSettings, Test};
use crate::record::{GameRecord, GameResult, GameRow, Termination};
use crate::results::{could_have_played, read_jsonl_from};
use crate::rules::Rules;
use crate::rules::Side;
use crate::stats::{Added, Tally};
use crate::tournament::repeats::Repeats;
use crate::tournament::schedule::{Schedule, Shard};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::io;
use std::path::{Path, PathBuf};

/// The folder of worker `k` (1-based) in the shared folder `dir`.
pub(crate) fn worker_folder(dir: &Path, k: u64) -> PathBuf {
    dir.join(format!("worker-{k}"))
}

/// One worker's `games.jsonl`, read as it grows.
#[derive(Debug)]
struct Follow {
    path: PathBuf,
    /// The end of the last complete line read.
    offset: u64,
    /// The file read (device, inode): a file replaced (a resumed worker's repair) is
    /// read again from its start.
    file: Option<(u64, u64)>,
    /// The worker's pairs of the test.
    stream: Schedule,
    /// Games of the test read from it.
    games: u64,
}

impl Follow {
    /// The file's (device, inode) and length; `None` when it does not exist.
    fn identity(path: &Path) -> io::Result<Option<((u64, u64), u64)>> {
        use std::os::unix::fs::MetadataExt;
        match std::fs::metadata(path) {
            Ok(m) => Ok(Some(((m.dev(), m.ino()), m.len()))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Reads the lines completed since the last read.
    fn read(&mut self, visit: impl FnMut(GameRecord, &[u8])) -> io::Result<()> {
        let Some((file, len)) = Follow::identity(&self.path)? else {
            // Not written yet (the worker has not started, or recorded no game).
            return Ok(());
        };
        if self.file != Some(file) || len < self.offset {
            self.offset = 0;
            self.file = Some(file);
        }
        let (_, end) = read_jsonl_from(&self.path, self.offset, visit)?;
        self.offset = end;
        // Replaced while it was read: read it whole next time (games already pooled are
        // pooled once).
        if Follow::identity(&self.path)?.map(|(f, _)| f) != Some(file) {
            self.file = None;
        }
        Ok(())
    }
}

/// What the test needs of a pooled game, kept small: a worker that falls behind leaves
/// the games of the others waiting here.
#[derive(Clone, Debug)]
struct Pooled {
    game: String,
    pair: u64,
    south: String,
    north: String,
    result: GameResult,
    south_score: u16,
    north_score: u16,
    termination: Termination,
    loser: Option<Side>,
    /// What makes it the same game as another ([`Repeats::key`]).
    key: Option<u128>,
}

impl Pooled {
    fn of(g: &GameRecord) -> Pooled {
        Pooled {
            game: g.game.clone(),
            pair: g.number.div_ceil(2),
            south: g.south.clone(),
            north: g.north.clone(),
            result: g.result,
            south_score: g.south_score,
            north_score: g.north_score,
            termination: g.termination,
            loser: g.loser,
            key: Repeats::key(g),
        }
    }

    fn row(&self, repeat: bool) -> GameRow<'_> {
        GameRow {
            game: &self.game,
            pair: Some(self.pair),
            south: &self.south,
            north: &self.north,
            result: self.result,
            south_score: Some(self.south_score),
            north_score: Some(self.north_score),
            termination: self.termination,
            loser: self.loser,
            repeat,
        }
    }
}

/// How a pooled test ended: at a bound (or stalled, or undefined: `end`), or with every
/// pair of the game limit played (`end` is `None`); `last` is the judgement after the
/// stopping point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Ended {
    pub end: Option<SprtEnd>,
    pub last: Judgement,
}

/// The pooled games of the workers of one test.
#[derive(Debug)]
pub(crate) struct Pool {
    workers: Vec<Follow>,
    id: String,
    /// The new engine's name and the base engine's.
    names: Vec<String>,
    rules: Rules,
    total_pairs: u64,
    test: Test,
    /// Game numbers pooled.
    seen: HashSet<u64>,
    /// Games pooled but not yet in the judged pairs, by number.
    waiting: HashMap<u64, Pooled>,
    /// Pairs 1 to `judged` are judged (their games taken from `waiting`).
    judged: u64,
    tally: Tally,
    repeats: Repeats,
    /// The judgement after every judged pair that counted (a pair with a repeat does not).
    judgements: Vec<Judgement>,
    last: Judgement,
    ended: Option<Ended>,
    /// Lines of the workers' files that are not games of the test, or do not replay.
    pub not_counted: u64,
}

impl Pool {
    /// The pool of the test `settings` (with its workers) of `new` against `base`, whose
    /// games are those of `schedule` (the whole test, not one worker's) with the
    /// tournament id `id`, played into the worker folders of `dir`.
    pub(crate) fn new(
        dir: &Path,
        settings: &SprtSettings,
        schedule: &Schedule,
        id: &str,
        new: &str,
        base: &str,
    ) -> Pool {
        let n = settings.workers.unwrap_or(1).max(1);
        let workers = (1..=n)
            .map(|k| Follow {
                path: crate::results::Files::of(worker_folder(dir, k)).games_jsonl(),
                offset: 0,
                file: None,
                stream: Schedule {
                    shard: Some(Shard { index: k, count: n }),
                    ..schedule.clone()
                },
                games: 0,
            })
            .collect();
        let test = Test::new(settings, new, base);
        let tally = Tally::new();
        let last = test.judge(&tally);
        Pool {
            workers,
            id: id.to_string(),
            names: vec![new.to_string(), base.to_string()],
            rules: schedule.rules,
            total_pairs: schedule.total_pairs(),
            test,
            seen: HashSet::new(),
            waiting: HashMap::new(),
            judged: 0,
            tally,
            repeats: Repeats::new(id, schedule),
            judgements: Vec::new(),
            last,
            ended: None,
            not_counted: 0,
        }
    }

    /// Reads what every worker recorded since the last refresh and judges the pairs that
    /// are now complete in order; returns how the test ended, once it has.
    pub(crate) fn refresh(&mut self) -> io::Result<Option<Ended>> {
        for w in &mut self.workers {
            let (seen, waiting, not_counted) =
                (&mut self.seen, &mut self.waiting, &mut self.not_counted);
            let (id, names, rules) = (&self.id, &self.names, self.rules);
            let stream = w.stream.clone();
            let mut games = 0;
            w.read(|g, _| {
                let own = g.game == format!("{id}-{}", g.number)
                    && g.rules == rules
                    && could_have_played(&g.row(), id, names, Some(&|n| stream.has_game(n)))
                    && g.replay().is_ok();
                if !own {
                    *not_counted += 1;
                } else if seen.insert(g.number) {
                    games += 1;
                    waiting.insert(g.number, Pooled::of(&g));
                }
            })?;
            w.games += games;
        }
        self.judge();
        Ok(self.ended)
    }

    /// Judges the pairs that are complete in order after those already judged, up to the
    /// stopping point.
    fn judge(&mut self) {
        while self.ended.is_none() && self.judged < self.total_pairs {
            let pair = self.judged + 1;
            let (a, b) = (2 * pair - 1, 2 * pair);
            if !(self.waiting.contains_key(&a) && self.waiting.contains_key(&b)) {
                return;
            }
            let mut completed = false;
            for number in [a, b] {
                let g = self.waiting.remove(&number).expect("checked above");
                let repeat = g
                    .key
                    .is_some_and(|k| self.repeats.repeated(k, number).is_some());
                completed = matches!(
                    self.tally.add(&g.row(repeat)),
                    Added::Counted {
                        completed_pair: true
                    }
                );
            }
            self.judged = pair;
            if completed {
                let j = self.test.judge(&self.tally);
                self.judgements.push(j);
                self.last = j;
                if j.end.is_some() {
                    self.ended = Some(Ended {
                        end: j.end,
                        last: j,
                    });
                }
            }
        }
        if self.ended.is_none() && self.judged == self.total_pairs {
            self.ended = Some(Ended {
                end: None,
                last: self.last,
            });
        }
    }

    /// How the test ended, once it has.
    #[cfg(test)]
    pub(crate) fn ended(&self) -> Option<Ended> {
        self.ended
    }

    /// The judgement after the last pair judged.
    pub(crate) fn last(&self) -> Judgement {
        self.last
    }

    /// The judgement after every pair judged that counted, in order.
    pub(crate) fn judgements(&self) -> &[Judgement] {
        &self.judgements
    }

    /// Pairs judged so far (1 to this number): the stopping point once the test ended.
    pub(crate) fn judged(&self) -> u64 {
        self.judged
    }

    /// The first pair not yet recorded whole, which the test waits for, and its worker
    /// (1-based); `None` once the test has ended.
    pub(crate) fn waiting_for(&self) -> Option<(u64, u64)> {
        if self.ended.is_some() {
            return None;
        }
        let n = self.workers.len() as u64;
        Some((self.judged + 1, self.judged % n + 1))
    }

    /// Games pooled from each worker, in order.
    pub(crate) fn games_by_worker(&self) -> Vec<u64> {
        self.workers.iter().map(|w| w.games).collect()
    }

    /// The pairs of worker `k` (1-based; all workers for `None`) with a game recorded
    /// after the stopping point: they do not count. Empty before the test ends.
    pub(crate) fn after_decision(&self, k: Option<u64>) -> BTreeSet<u64> {
        if self.ended.is_none() {
            return BTreeSet::new();
        }
        let n = self.workers.len() as u64;
        self.waiting
            .values()
            .map(|g| g.pair)
            .filter(|&p| k.is_none_or(|k| (p - 1) % n + 1 == k))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::sample_record;
    use crate::stats::SprtModel;
    use crate::tournament::schedule::{Openings, ScheduleKind};
    use std::io::Write;

    fn settings() -> SprtSettings {
        SprtSettings {
            elo0: 0.0,
            elo1: 50.0,
            alpha: 0.05,
            beta: 0.05,
            model: SprtModel::Normalized,
            max_games: Some(20),
            workers: Some(2),
        }
    }

    fn schedule() -> Schedule {
        Schedule {
            kind: ScheduleKind::RoundRobin,
            engines: 2,
            pairs_per_pairing: 10,
            rules: Rules::default(),
            openings: Openings::Start,
            shard: None,
        }
    }

    /// The line of game `n` of the test `t` (seats swapped in the second game of a pair).
    fn line(n: u64) -> String {
        let (south, north) = if n % 2 == 1 {
            ("new", "base")
        } else {
            ("base", "new")
        };
        format!(
            "{}\n",
            serde_json::to_string(&sample_record("t", n, south, north)).unwrap()
        )
    }

    fn append(dir: &Path, k: u64, text: &str) {
        let folder = worker_folder(dir, k);
        std::fs::create_dir_all(&folder).unwrap();
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(crate::results::Files::of(&folder).games_jsonl())
            .unwrap();
        f.write_all(text.as_bytes()).unwrap();
    }

    #[test]
    fn the_pool_follows_growing_files_and_takes_the_pairs_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        let mut pool = Pool::new(dir, &settings(), &schedule(), "t", "new", "base");
        // No worker has started.
        assert_eq!(pool.refresh().unwrap(), None);
        assert_eq!(pool.waiting_for(), Some((1, 1)));
        // Worker 2 (pairs 2, 4, ...) records pair 2, and is writing the first game of
        // pair 4: a line without its newline yet.
        let seventh = line(7);
        let (head, tail) = seventh.split_at(40);
        append(dir, 2, &format!("{}{}{head}", line(3), line(4)));
        pool.refresh().unwrap();
        assert_eq!((pool.judged(), pool.games_by_worker()), (0, vec![0, 2]));
        // Pair 1 arrives: pairs 1 and 2 are judged, in order.
        append(dir, 1, &format!("{}{}", line(1), line(2)));
        pool.refresh().unwrap();
        assert_eq!((pool.judged(), pool.games_by_worker()), (2, vec![2, 2]));
        assert_eq!(pool.waiting_for(), Some((3, 1)));
        // The line completed, and the second game of pair 4.
        append(dir, 2, &format!("{tail}{}", line(8)));
        pool.refresh().unwrap();
        assert_eq!((pool.judged(), pool.games_by_worker()), (2, vec![2, 4]));
        append(dir, 1, &format!("{}{}", line(5), line(6)));
        pool.refresh().unwrap();
        assert_eq!((pool.judged(), pool.games_by_worker()), (4, vec![4, 4]));
        // A file replaced whole (the repair of a worker started again) is read again, and
        // no game counts twice.
        let w2 = crate::results::Files::of(worker_folder(dir, 2)).games_jsonl();
        let text = std::fs::read(&w2).unwrap();
        crate::results::write_file(&w2, &text).unwrap();
        pool.refresh().unwrap();
        assert_eq!((pool.judged(), pool.games_by_worker()), (4, vec![4, 4]));
        // Not counted: a game of another worker's pairs, of another test, a game that does
        // not replay, and a line that is not a game.
        let mut other = sample_record("other", 9, "new", "base");
        append(dir, 1, &line(11));
        append(
            dir,
            1,
            &format!("{}\n", serde_json::to_string(&other).unwrap()),
        );
        other.game = "t-9".into();
        other.south_score += 1;
        append(
            dir,
            1,
            &format!("{}\nnot a game\n", serde_json::to_string(&other).unwrap()),
        );
        pool.refresh().unwrap();
        assert_eq!(pool.not_counted, 3);
        assert_eq!(pool.games_by_worker(), vec![4, 4]);
        // Nothing ended: the games limit is 10 pairs.
        assert_eq!(pool.ended(), None);
        assert!(pool.after_decision(None).is_empty());
    }
}
