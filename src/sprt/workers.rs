//! A test played by several workers (`kalaha sprt --workers N --worker K --shared DIR`):
//! processes anywhere that see the folder `DIR`, its only meeting point.
//!
//! - `DIR/sprt-workers.toml` holds the test every worker plays (the SPRT's settings with
//!   the number of workers, and the tournament's). The first worker writes it; a worker
//!   whose settings differ is refused, with the setting named ([`join`]).
//! - Worker K (1 to N) plays the game pairs K, K+N, K+2N, ... of the test (the shard K/N
//!   of its schedule: the same games, openings and seats as the test on one machine) into
//!   its own results folder `DIR/worker-K`, claimed and locked as any run's.
//! - After every game it records it pools the games of every worker ([`super::pool`])
//!   and judges the pairs in their order. The first worker to see the test end writes the
//!   verdict as `DIR/sprt-result.toml` ([`publish`]: the first writer wins, and the
//!   verdict is the same whoever writes it), with the LLR after every pair as
//!   `DIR/sprt.csv`. Every worker stops at the next game it records once the verdict is
//!   there ([`WorkerView`]).

use super::pool::{Ended, Pool};
use super::{SprtSettings, Verdict, files};
use crate::results;
use crate::stats::Tally;
use crate::tournament::events::{Control, Event, Hold, StartInfo, StopRule, View};
use crate::tournament::schedule::{Schedule, ScheduledGame};
use serde::{Deserialize, Serialize};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The keys of a worker's `tournament.toml` that are its own, not the test's: its pairs,
/// and how it runs them.
const OWN_KEYS: [&str; 5] = ["shard", "concurrency", "report_every", "out", "title"];

/// The test of a shared folder, as `sprt-workers.toml` holds it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct SharedTest {
    /// The SPRT, with its number of workers.
    pub sprt: SprtSettings,
    /// The tournament's settings (`tournament.toml` of one machine's test, without the
    /// worker's own keys).
    pub tournament: toml::Table,
}

impl SharedTest {
    /// The test `sprt` of the tournament `config` (a worker's `tournament.toml`, as a
    /// table): the worker's own keys and the command line of a built-in engine (the path
    /// of kalaha, which may differ between machines) are left out.
    pub(crate) fn new(sprt: SprtSettings, mut tournament: toml::Table) -> SharedTest {
        for key in OWN_KEYS {
            tournament.remove(key);
        }
        if let Some(toml::Value::Array(engines)) = tournament.get_mut("engine") {
            for e in engines.iter_mut().filter_map(|e| e.as_table_mut()) {
                if e.contains_key("builtin") {
                    e.remove("command");
                }
                // Where an engine runs may differ between machines; what it is may not.
                e.remove("dir");
            }
        }
        SharedTest { sprt, tournament }
    }

    /// The number of workers.
    pub(crate) fn workers(&self) -> u64 {
        self.sprt.workers.unwrap_or(1)
    }

    /// The tournament id.
    pub(crate) fn id(&self) -> Option<&str> {
        self.tournament.get("id").and_then(|v| v.as_str())
    }

    /// The first setting in which `self` (a worker's) differs from `test` (the shared
    /// folder's), as `name: value here, value in the test`. The engines' names are
    /// compared when `names` (a worker's settings from its flags; a worker that resumes
    /// keeps the names its games were played under, which may be the engines' own).
    pub(crate) fn difference(&self, test: &SharedTest, names: bool) -> Option<String> {
        let table = |s: &SprtSettings| toml::Table::try_from(s).unwrap_or_default();
        let (mine, theirs) = (table(&self.sprt), table(&test.sprt));
        let shown = |v: Option<&toml::Value>| match v {
            Some(v) => crate::record::shown_line(&v.to_string()),
            None => "nothing".to_string(),
        };
        if let Some(key) = mine
            .keys()
            .chain(theirs.keys())
            .find(|k| mine.get(*k) != theirs.get(*k))
        {
            return Some(format!(
                "{} is {} here but {} in the test",
                key.replace('_', "-"),
                shown(mine.get(key)),
                shown(theirs.get(key))
            ));
        }
        if let Some(d) = crate::tournament::played_difference(&self.tournament, &test.tournament) {
            return Some(format!(
                "{} is {} here but {} in the test",
                d.key,
                d.shown(&d.a),
                d.shown(&d.b)
            ));
        }
        if !names {
            return None;
        }
        let names = |t: &toml::Table| -> Vec<Option<toml::Value>> {
            match t.get("engine") {
                Some(toml::Value::Array(list)) => {
                    list.iter().map(|e| e.get("name").cloned()).collect()
                }
                _ => Vec::new(),
            }
        };
        let (a, b) = (names(&self.tournament), names(&test.tournament));
        let i = a.iter().zip(&b).position(|(x, y)| x != y)?;
        Some(format!(
            "engine {}, name is {} here but {} in the test",
            i + 1,
            shown(a[i].as_ref()),
            shown(b[i].as_ref())
        ))
    }
}

/// Reads the test of the shared folder `dir`; `None` when no worker has written it yet.
pub(crate) fn read_shared(dir: &Path) -> Result<Option<SharedTest>, String> {
    let path = crate::results::Files::of(dir).sprt_workers_toml();
    let shown = crate::record::shown_path(&path);
    if std::fs::symlink_metadata(&path).is_err() {
        return Ok(None);
    }
    let text = crate::input::read_text_limited(&path, crate::input::CONFIG_LIMIT)
        .map_err(|e| format!("failed to read {shown}: {e}"))?;
    let test: SharedTest = toml::from_str(&text).map_err(|e| format!("{shown}: {e}"))?;
    test.sprt.validate().map_err(|e| format!("{shown}: {e}"))?;
    Ok(Some(test))
}

/// Makes worker `k` of `mine` a worker of the test of the shared folder `dir`: writes the
/// test when it is the first, else checks that its settings are the test's (the engines'
/// names when `names`, see [`SharedTest::difference`]). The error names the setting that
/// differs.
pub(crate) fn join(
    dir: &Path,
    mine: &SharedTest,
    k: u64,
    names: bool,
) -> Result<SharedTest, String> {
    let shown = crate::record::shown_path(&crate::results::Files::of(dir).sprt_workers_toml());
    std::fs::create_dir_all(dir).map_err(|e| {
        format!(
            "cannot create the shared folder {}: {e}",
            crate::record::shown_path(dir)
        )
    })?;
    let text = format!(
        "# The SPRT that every worker of this folder plays (kalaha sprt --workers N --worker K \
         --shared DIR):\n# a worker whose settings differ is refused.\n{}",
        toml::to_string(mine).map_err(|e| e.to_string())?
    );
    let first = results::write_new_file(
        &crate::results::Files::of(dir).sprt_workers_toml(),
        text.as_bytes(),
        &format!("worker-{k}"),
    )
    .map_err(|e| format!("failed to write {shown}: {e}"))?;
    if first {
        return Ok(mine.clone());
    }
    let test = read_shared(dir)?.ok_or_else(|| format!("{shown} disappeared"))?;
    if let Some(d) = mine.difference(&test, names) {
        return Err(format!(
            "this worker's settings differ from the test of {shown}: {d}; every worker of a \
             test plays it with the same settings (give the same flags, or another --shared \
             folder for another test)"
        ));
    }
    Ok(test)
}

/// The verdict of a shared folder, as `DIR/sprt-result.toml` says it.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub(crate) struct Written {
    pub verdict: String,
    pub exit_code: u8,
    pub pairs: u64,
    pub games: u64,
    pub llr: f64,
}

/// Reads `dir/sprt-result.toml`; `None` when there is none yet.
pub(crate) fn read_verdict(dir: &Path) -> io::Result<Option<Written>> {
    let path = crate::results::Files::of(dir).sprt_result_toml();
    if std::fs::symlink_metadata(&path).is_err() {
        return Ok(None);
    }
    let text = crate::input::read_text_limited(&path, crate::input::CONFIG_LIMIT)?;
    toml::from_str(&text).map(Some).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{}: {e}", crate::record::shown_path(&path)),
        )
    })
}

/// The verdict of a pooled test that `ended`, with what `sprt-result.toml` says of it:
/// the exit code, the line, the status and the estimate.
pub(crate) fn verdict_of(
    ended: &Ended,
    settings: &SprtSettings,
    new: &str,
    base: &str,
    code_of: fn(Verdict) -> u8,
) -> (Written, Concluded) {
    let status = ended.last.status;
    let (verdict, text, estimate) =
        super::conclusion(settings, ended.end, status, ended.last.penta, new, base);
    let code = code_of(verdict);
    let written = Written {
        verdict: text.clone(),
        exit_code: code,
        pairs: status.pairs,
        games: status.games,
        llr: if status.llr.is_finite() {
            status.llr
        } else {
            0.0
        },
    };
    (
        written,
        Concluded {
            verdict,
            code,
            text,
            status,
            estimate,
        },
    )
}

/// What [`files::save_verdict`] writes.
#[derive(Clone, Debug)]
pub(crate) struct Concluded {
    pub verdict: Verdict,
    pub code: u8,
    pub text: String,
    pub status: crate::stats::SprtStatus,
    pub estimate: Option<crate::stats::sprt::StoppedEstimate>,
}

/// What [`publish`] did.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Published {
    /// The verdict in the shared folder (the first writer's).
    pub verdict: Written,
    /// This worker wrote it.
    pub first: bool,
    /// This worker's own verdict, when it differs from the folder's (a game that this
    /// worker pooled was lost by a crash of its machine before it reached the disk).
    pub differs: Option<Written>,
}

/// Writes the verdict of the pooled test that `pool` says ended into the shared folder
/// `dir`, with the LLR after every pair as `sprt.csv`, unless another worker wrote it
/// first; `k` is this worker.
pub(crate) fn publish(
    dir: &Path,
    pool: &Pool,
    ended: &Ended,
    settings: &SprtSettings,
    (new, base): (&str, &str),
    k: u64,
    code_of: fn(Verdict) -> u8,
) -> io::Result<Published> {
    let (mine, c) = verdict_of(ended, settings, new, base, code_of);
    // Written first as this worker's own `sprt-result.toml`, then offered to the folder
    // with the number of workers.
    let own = super::pool::worker_folder(dir, k);
    files::save_verdict(&own, c.code, &c.text, &c.status, c.estimate)?;
    let mut body = std::fs::read_to_string(crate::results::Files::of(&own).sprt_result_toml())?;
    body.push_str(&format!("workers = {}\n", settings.workers.unwrap_or(1)));
    let first = results::write_new_file(
        &crate::results::Files::of(dir).sprt_result_toml(),
        body.as_bytes(),
        &format!("worker-{k}"),
    )?;
    if first {
        let mut csv = String::from(files::SPRT_CSV_HEADER);
        for j in pool.judgements() {
            csv.push_str(&files::csv_line(j));
        }
        results::write_file(&crate::results::Files::of(dir).sprt_csv(), csv.as_bytes())?;
        return Ok(Published {
            verdict: mine,
            first,
            differs: None,
        });
    }
    let written = read_verdict(dir)?.ok_or_else(|| io::Error::other("the verdict disappeared"))?;
    let differs = (written.verdict != mine.verdict || written.pairs != mine.pairs).then_some(mine);
    Ok(Published {
        verdict: written,
        first,
        differs,
    })
}

/// What a worker needs to pool and judge the test.
#[derive(Clone, Debug)]
pub(crate) struct Worker {
    /// The shared folder.
    pub dir: PathBuf,
    /// This worker, 1-based.
    pub k: u64,
    pub settings: SprtSettings,
    /// The whole test's schedule (every worker's pairs).
    pub schedule: Schedule,
    pub id: String,
    pub code_of: fn(Verdict) -> u8,
}

/// The test as a view of a worker's run: after every game it records, it pools the
/// workers' games, writes the verdict when the test has ended, and stops the run once
/// the verdict is there. Prints the pooled test at most once a second unless quiet.
pub(crate) struct WorkerView {
    worker: Worker,
    quiet: bool,
    pool: Option<Pool>,
    names: (String, String),
    /// The verdict, once this worker wrote it or found it.
    pub published: Option<Published>,
    last_print: Option<Instant>,
    /// Judgements of the pool already told to `news`.
    told: usize,
    /// Told each pair of the pooled test judged in order, then its verdict (the command
    /// puts them in its event stream).
    news: Box<dyn FnMut(News<'_>) + Send>,
}

/// What a [`WorkerView`] tells of the pooled test as it learns it.
pub(crate) enum News<'a> {
    /// A pair judged, in order.
    Judged(&'a super::Judgement),
    /// The test's verdict, as this worker computes it from the pool.
    Verdict(&'a Concluded),
}

impl WorkerView {
    pub(crate) fn new(
        worker: Worker,
        quiet: bool,
        news: Box<dyn FnMut(News<'_>) + Send>,
    ) -> WorkerView {
        WorkerView {
            worker,
            quiet,
            pool: None,
            names: Default::default(),
            published: None,
            last_print: None,
            told: 0,
            news,
        }
    }

    /// Names the engines as their games do (a run tells the view when it starts).
    pub(crate) fn set_names(&mut self, new: &str, base: &str) {
        self.names = (new.to_string(), base.to_string());
    }

    /// The pool of the engines `new` and `base` (as their games name them).
    fn pool_of(&self, new: &str, base: &str) -> Pool {
        let w = &self.worker;
        Pool::new(&w.dir, &w.settings, &w.schedule, &w.id, new, base)
    }

    /// Reads the verdict, or pools the games and writes it if the test has ended; returns
    /// whether the verdict is known.
    pub(crate) fn check(&mut self) -> io::Result<bool> {
        if self.published.is_some() {
            return Ok(true);
        }
        if self.pool.is_none() {
            let (new, base) = self.names.clone();
            self.pool = Some(self.pool_of(&new, &base));
        }
        let pool = self.pool.as_mut().expect("made above");
        let w = &self.worker;
        let names = (self.names.0.as_str(), self.names.1.as_str());
        let found = read_verdict(&w.dir)?;
        let ended = pool.refresh()?;
        // The pairs judged since, then the verdict.
        for j in &pool.judgements()[self.told..] {
            (self.news)(News::Judged(j));
        }
        self.told = pool.judgements().len();
        let news = &mut self.news;
        let mut tell_verdict = |ended: &Ended| {
            let (_, c) = verdict_of(ended, &w.settings, names.0, names.1, w.code_of);
            news(News::Verdict(&c));
        };
        if let Some(verdict) = found {
            if let Some(ended) = &ended {
                tell_verdict(ended);
            }
            self.published = Some(Published {
                verdict,
                first: false,
                differs: None,
            });
            return Ok(true);
        }
        if let Some(ended) = ended {
            tell_verdict(&ended);
            self.published = Some(publish(
                &w.dir,
                pool,
                &ended,
                &w.settings,
                names,
                w.k,
                w.code_of,
            )?);
            return Ok(true);
        }
        Ok(false)
    }

    /// The pool (after the first check), with the games recorded since read.
    pub(crate) fn pool(&mut self) -> io::Result<Option<&Pool>> {
        if let Some(pool) = &mut self.pool {
            pool.refresh()?;
        }
        Ok(self.pool.as_ref())
    }

    /// Prints where the pooled test stands, at most once a second (`force`: now).
    pub(crate) fn print(&mut self, force: bool) -> io::Result<()> {
        let due = self
            .last_print
            .is_none_or(|t| t.elapsed() >= Duration::from_secs(1));
        if self.quiet || !(due || force) {
            return Ok(());
        }
        let Some(pool) = &self.pool else {
            return Ok(());
        };
        self.last_print = Some(Instant::now());
        let waiting = match pool.waiting_for() {
            Some((pair, k)) => format!("; next: pair {pair} (worker {k})"),
            None => String::new(),
        };
        let games: u64 = pool.games_by_worker().iter().sum();
        writeln!(
            io::stdout().lock(),
            "pooled {} of {} workers, in order {}{waiting}",
            crate::record::counted(games, "game"),
            self.worker.settings.workers.unwrap_or(1),
            pool.last().status.line()
        )
    }

    /// Waits for the verdict after this worker's pairs are played, checking it after
    /// every `pause` (which waits a while and says whether the worker was interrupted),
    /// until it is known or an interruption; returns whether it is known.
    pub(crate) fn wait(&mut self, mut pause: impl FnMut() -> bool) -> io::Result<bool> {
        let mut said = None;
        loop {
            if self.check()? {
                return Ok(true);
            }
            let next = self.pool.as_ref().and_then(|p| p.waiting_for());
            if !self.quiet && next != said {
                if let Some((pair, k)) = next {
                    writeln!(
                        io::stdout().lock(),
                        "worker {}: its pairs are played; waiting for pair {pair} (worker {k}) \
                         and the verdict",
                        self.worker.k
                    )?;
                }
                said = next;
            }
            if pause() {
                return Ok(false);
            }
        }
    }
}

impl View for WorkerView {
    fn start(&mut self, info: &StartInfo, _tally: &Tally) -> io::Result<()> {
        if let [new, base] = &info.names[..] {
            self.set_names(new, base);
        }
        Ok(())
    }

    fn event(&mut self, event: &Event<'_>, _tally: &Tally) -> io::Result<Control> {
        if !matches!(event, Event::GameFinished { .. }) {
            return Ok(Control::Continue);
        }
        if self.check()? {
            return Ok(Control::Stop);
        }
        self.print(false)?;
        Ok(Control::Continue)
    }
}

/// How many of its own pairs a worker may play beyond the pairs judged in order, besides
/// one for each game it plays at once.
pub(crate) const AHEAD: u64 = 4;

/// What [`Pace`]'s thread stores once the test has ended.
const ENDED: u64 = u64::MAX;

/// How often a worker that holds its games back looks at the others' again.
const HOLD_POLL: Duration = Duration::from_millis(25);

/// The pace of a worker, as the run's stop rule: it holds back a game whose pair is
/// further ahead of the pairs judged in order than the worker may go, until the others
/// catch up. A thread of its own follows the pool (no file is read on the game loop).
pub(crate) struct Pace {
    worker: Worker,
    /// How far ahead, in pairs of the test.
    lead: u64,
    /// Pairs judged in order, as the thread last found them ([`ENDED`] once the test
    /// has ended).
    judged: Arc<AtomicU64>,
    /// Set when the rule is dropped: the thread ends.
    done: Arc<AtomicBool>,
}

impl Pace {
    /// The pace of `worker`, which plays `concurrency` games at once.
    pub(crate) fn new(worker: Worker, concurrency: usize) -> Pace {
        let n = worker.settings.workers.unwrap_or(1);
        Pace {
            worker,
            lead: n * (AHEAD + concurrency as u64),
            judged: Arc::new(AtomicU64::new(0)),
            done: Arc::new(AtomicBool::new(false)),
        }
    }
}

impl Drop for Pace {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
    }
}

impl StopRule for Pace {
    fn start(&mut self, info: &StartInfo) {
        let [new, base] = &info.names[..] else {
            return;
        };
        let w = &self.worker;
        let mut pool = Pool::new(&w.dir, &w.settings, &w.schedule, &w.id, new, base);
        let (judged, done) = (self.judged.clone(), self.done.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                match pool.refresh() {
                    Ok(None) => judged.store(pool.judged(), Ordering::Relaxed),
                    // No game starts after the decision.
                    Ok(Some(_)) => {
                        judged.store(ENDED, Ordering::Relaxed);
                        return;
                    }
                    // Unreadable: the view says so; nothing is held back any more.
                    Err(_) => {
                        judged.store(u64::MAX / 2, Ordering::Relaxed);
                        return;
                    }
                }
                std::thread::sleep(HOLD_POLL);
            }
        });
    }

    fn should_stop(&mut self, _tally: &Tally) -> bool {
        false
    }

    fn hold(&mut self, game: &ScheduledGame) -> Hold {
        match self.judged.load(Ordering::Relaxed) {
            ENDED => Hold::Stop,
            judged if game.pair > judged + self.lead => Hold::Wait(HOLD_POLL),
            _ => Hold::Start,
        }
    }
}
