//! The searching engines: `medium` (a fixed shallow lookahead on the stores), `hard`
//! (iterative deepening within the time given, with a positional evaluation) and
//! `perfect` (an opening book, then the exact solver with endgame tables when it finishes
//! in time, `hard` otherwise).

use super::Player;
use super::options::{int_option, parse_int, unknown_option};
use crate::protocol::EngineOption;
use crate::record::{SearchInfo, TimeLimit};
use crate::rules::{Move, Position, Rules, Side};
use crate::solver::{
    Book, Budget, EndgameTable, Solver, TableRules, TableStore, Test, max_seeds_within,
    planned_seeds, seeds_in_pits,
};
use kalaha_core::search::{Evaluation, Iteration, SCALE, Searcher};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// The largest table `hard` and `perfect` accept, in MiB.
pub const MAX_HASH_MB: i64 = 1024;

/// The time `hard` and `perfect` spend on a move when the referee gives no time at all.
pub const DEFAULT_MOVE_TIME: Duration = Duration::from_secs(1);

/// The share of [`TimeLimit::budget`] that `hard` and `perfect` think for: the rest is for
/// answering and reaching the referee on a busy machine, where a process may wait tens of
/// milliseconds for a core (60% of a fixed move time in all, less under load: see
/// [`think_time`]). The referee's `--time-margin` is never counted on.
pub const BUDGET_SHARE: f64 = 0.75;

/// The time `hard` and `perfect` think about a move given `time`: [`BUDGET_SHARE`] of its
/// budget, less on a machine with more processes waiting to run than CPUs
/// ([`load_share`]), where the engine's answer may wait that much longer for a CPU.
pub fn think_time(time: Option<TimeLimit>) -> Duration {
    time.map_or(DEFAULT_MOVE_TIME, |t| {
        t.budget().mul_f64(BUDGET_SHARE * current_load_share())
    })
}

/// The share of its usual thinking time an engine keeps on a machine with a load average of
/// `load` on `cpus` CPUs: all of it up to one runnable process a CPU, then `cpus / load`,
/// but never less than a third. At a fixed move time that is 60% of it on an idle machine,
/// 30% at twice as many runnable processes as CPUs and 20% from three times.
pub fn load_share(load: f64, cpus: usize) -> f64 {
    let cpus = cpus.max(1) as f64;
    if !load.is_finite() || load <= cpus {
        1.0
    } else {
        (cpus / load).max(1.0 / 3.0)
    }
}

/// [`load_share`] of this machine now, read at most once a second.
fn current_load_share() -> f64 {
    static LAST: std::sync::Mutex<Option<(Instant, f64)>> = std::sync::Mutex::new(None);
    let mut last = LAST.lock().unwrap_or_else(|e| e.into_inner());
    match *last {
        Some((at, share)) if at.elapsed() < Duration::from_secs(1) => share,
        _ => {
            let share = crate::record::machine_load().map_or(1.0, |(l, c)| load_share(l, c));
            *last = Some((Instant::now(), share));
            share
        }
    }
}

fn report(it: &Iteration) -> SearchInfo {
    SearchInfo {
        depth: Some(it.depth),
        score: Some(((it.score as f64) / SCALE as f64).round() as i64),
        nodes: Some(it.nodes),
        time_ms: Some(it.elapsed.as_millis() as u64),
        pv: it.pv.clone(),
    }
}

/// Looks `depth` sowings ahead (default 3) and counts only the stores: it sees extra
/// turns and direct captures, and nothing of the position beyond them.
pub struct MediumPlayer {
    depth: u32,
    searcher: Searcher,
}

impl Default for MediumPlayer {
    fn default() -> Self {
        MediumPlayer {
            depth: 3,
            searcher: Searcher::new(1).with_eval(Evaluation::stores_only()),
        }
    }
}

impl Player for MediumPlayer {
    fn name(&self) -> &str {
        "medium"
    }

    fn options(&self) -> Vec<EngineOption> {
        vec![int_option("depth", 3, 1, 8)]
    }

    fn new_game(&mut self, _game: &str, _rules: Rules, _side: Side) {
        self.searcher.clear();
    }

    fn set_option(&mut self, name: &str, value: &serde_json::Value) -> Result<(), String> {
        match name {
            "depth" => {
                self.depth = parse_int(name, value, 1, 8)? as u32;
                Ok(())
            }
            _ => Err(unknown_option(self.name(), name, &self.options())),
        }
    }

    fn choose_move(
        &mut self,
        pos: &Position,
        _history: &[Move],
        time: Option<TimeLimit>,
        info: &mut dyn FnMut(SearchInfo),
    ) -> u8 {
        // The depth is the limit; the time is only a safety net for huge boards.
        let deadline = Instant::now() + time.map_or(DEFAULT_MOVE_TIME, |t| t.budget());
        let it = self
            .searcher
            .iterate(pos, self.depth, Some(deadline), &mut |_| {});
        info(report(&it));
        it.best
    }
}

/// Iterative-deepening alpha-beta with a transposition table, within the time given
/// (`TimeLimit::budget`, or [`DEFAULT_MOVE_TIME`]). Options: `depth` (a maximum depth, 0 for
/// none) and `hash_mb` (table size).
pub struct HardPlayer {
    max_depth: u32,
    hash_mb: usize,
    eval: Option<Evaluation>,
    /// Built at the first search, so that setting options costs nothing.
    searcher: Option<Searcher>,
}

impl Default for HardPlayer {
    fn default() -> Self {
        HardPlayer::new(0, 16)
    }
}

impl HardPlayer {
    pub fn new(max_depth: u32, hash_mb: usize) -> HardPlayer {
        HardPlayer {
            max_depth,
            hash_mb,
            eval: None,
            searcher: None,
        }
    }

    /// A `hard` player with a fixed horizon evaluation instead of the rules' default.
    pub fn with_evaluation(max_depth: u32, hash_mb: usize, eval: Evaluation) -> HardPlayer {
        HardPlayer {
            max_depth,
            hash_mb,
            eval: Some(eval),
            searcher: None,
        }
    }

    /// Builds the table now (it is otherwise built at the first move, on the clock).
    fn ensure_table(&mut self) -> &mut Searcher {
        let (hash_mb, eval) = (self.hash_mb, self.eval);
        self.searcher.get_or_insert_with(|| match eval {
            Some(e) => Searcher::new(hash_mb).with_eval(e),
            None => Searcher::new(hash_mb),
        })
    }

    fn think(&mut self, pos: &Position, deadline: Instant, info: &mut dyn FnMut(SearchInfo)) -> u8 {
        let max_depth = self.max_depth;
        let it = self
            .ensure_table()
            .iterate(pos, max_depth, Some(deadline), &mut |it| info(report(it)));
        it.best
    }
}

fn hard_options() -> Vec<EngineOption> {
    vec![
        int_option("depth", 0, 0, 250),
        int_option("hash_mb", 16, 1, MAX_HASH_MB),
    ]
}

impl Player for HardPlayer {
    fn name(&self) -> &str {
        "hard"
    }

    fn options(&self) -> Vec<EngineOption> {
        hard_options()
    }

    /// Builds the table if needed and empties it: each game starts afresh.
    fn new_game(&mut self, _game: &str, _rules: Rules, _side: Side) {
        self.ensure_table().clear();
    }

    fn set_option(&mut self, name: &str, value: &serde_json::Value) -> Result<(), String> {
        match name {
            "depth" => {
                self.max_depth = parse_int(name, value, 0, 250)? as u32;
                Ok(())
            }
            "hash_mb" => {
                let mb = parse_int(name, value, 1, MAX_HASH_MB)? as usize;
                if mb != self.hash_mb {
                    self.hash_mb = mb;
                    self.searcher = None;
                }
                Ok(())
            }
            _ => Err(unknown_option(self.name(), name, &self.options())),
        }
    }

    fn choose_move(
        &mut self,
        pos: &Position,
        _history: &[Move],
        time: Option<TimeLimit>,
        info: &mut dyn FnMut(SearchInfo),
    ) -> u8 {
        let started = Instant::now();
        self.think(pos, started + think_time(time), info)
    }
}

/// Plays exact moves: from an opening book, then by proving with the solver (helped by an
/// endgame table from the cache) that a move keeps the value the engine is already sure
/// of; otherwise it searches like `hard`. See `engines/README.md` for how it spends its
/// time, its options and what it needs on disk.
pub struct PerfectPlayer {
    hash_mb: usize,
    threads: usize,
    /// Endgame table budget in MiB; 0 for none.
    table_mb: u64,
    /// The table folder; `None` for the default cache folder.
    tables: Option<PathBuf>,
    /// `Some(None)`: no book; `Some(Some(path))`: a book file; `None`: the built-in book.
    book_path: Option<Option<PathBuf>>,
    /// Built at the first game, so that setting options costs nothing.
    solver: Option<Solver>,
    /// The endgame table in use and the rules it was chosen for.
    endgame: Option<(Rules, Option<Arc<EndgameTable>>)>,
    /// The endgame table and the log lines of its loading, while it loads in the
    /// background.
    loading: Option<std::sync::mpsc::Receiver<Loaded>>,
    book: Option<Arc<Book>>,
    hard: HardPlayer,
    /// A value of the game (final margin, this engine's side) that its play so far has
    /// made sure of, when it has one.
    sure: Option<i32>,
    /// The last value it was sure of, kept when `hard`'s move made it unsure: the value is
    /// most likely still that or near it, which the next solve starts from.
    hint: Option<i32>,
    /// Moves since the solver was last tried, while nothing is sure.
    skipped: u32,
    /// Whether this game has already said that the solver cannot keep up.
    said_fallback: bool,
    log: Vec<(&'static str, String)>,
}

impl Default for PerfectPlayer {
    fn default() -> Self {
        PerfectPlayer::new(64)
    }
}

/// An endgame table loaded in the background and what its loading has to say.
type Loaded = (Option<Arc<EndgameTable>>, Vec<(&'static str, String)>);

/// With nothing sure, `perfect` tries the solver on every move with at most this many
/// seeds in the pits...
const SOLVER_SEEDS: u32 = 24;
/// ...and otherwise on every this many moves.
const SOLVER_RETRY_EVERY: u32 = 3;
/// The table budget `perfect` uses by default, in MiB (the default of `kalaha solve`).
const PERFECT_TABLE_MB: i64 = 1024;
/// With no table in the cache, `perfect` builds one of at most this many bytes in memory
/// at the start of a game (a fraction of a second).
const QUICK_TABLE_BYTES: u64 = 1 << 20;
/// The share of its time `perfect` gives to proving that a move keeps what it is sure of
/// (and to trying for more); the rest is left for `hard`'s search should the proof not
/// finish, so that its move is still a searched one.
const PROOF_SHARE: f64 = 0.75;
/// Solver nodes per millisecond of move time given to raising a proved value (a node
/// count, not a time, so that a game does not depend on the machine's speed).
const RAISE_NODES_PER_MS: u64 = 200;

impl PerfectPlayer {
    pub fn new(hash_mb: usize) -> PerfectPlayer {
        PerfectPlayer {
            hash_mb,
            threads: 1,
            table_mb: PERFECT_TABLE_MB as u64,
            tables: None,
            book_path: None,
            solver: None,
            endgame: None,
            loading: None,
            book: None,
            hard: HardPlayer::new(0, (hash_mb / 4).max(1)),
            sure: None,
            hint: None,
            skipped: SOLVER_RETRY_EVERY,
            said_fallback: false,
            log: Vec::new(),
        }
    }

    /// Loads (or builds small, in memory) the endgame table for `rules` unless it is
    /// already there, and says what it did.
    fn prepare_endgame(&mut self, rules: Rules) {
        if self.endgame.as_ref().is_some_and(|(r, _)| {
            TableRules::of(r) == TableRules::of(&rules)
                && planned_seeds(r, self.table_bytes()) == planned_seeds(&rules, self.table_bytes())
        }) {
            return;
        }
        let (bytes, tables) = (self.table_bytes(), self.tables.clone());
        let small = planned_seeds(&rules, bytes).is_none_or(|planned| {
            max_seeds_within(TableRules::of(&rules), QUICK_TABLE_BYTES)
                .is_some_and(|k| k >= planned)
        });
        if small {
            let table = find_endgame(&rules, bytes, tables.as_deref(), &mut self.log);
            self.endgame = Some((rules, table));
            self.loading = None;
            return;
        }
        // Checking a large table's checksum takes a second or more (several on a busy
        // machine, and the referee waits 5 s after `new_game`): it is done in the
        // background, and until the table is ready the solver plays without one.
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut log = Vec::new();
            let table = find_endgame(&rules, bytes, tables.as_deref(), &mut log);
            // A player that moved on to other rules no longer listens.
            let _ = tx.send((table, log));
        });
        self.endgame = Some((rules, None));
        self.loading = Some(rx);
    }

    /// Takes the endgame table loaded in the background once it is ready.
    fn poll_endgame(&mut self) {
        let Some(rx) = &self.loading else { return };
        match rx.try_recv() {
            Ok((table, log)) => {
                self.log.extend(log);
                if let Some((_, t)) = self.endgame.as_mut() {
                    *t = table;
                }
                self.loading = None;
            }
            Err(std::sync::mpsc::TryRecvError::Empty) => {}
            Err(std::sync::mpsc::TryRecvError::Disconnected) => self.loading = None,
        }
    }

    fn table_bytes(&self) -> u64 {
        self.table_mb * 1024 * 1024
    }

    fn prepare_book(&mut self, rules: Rules) {
        self.book = match &self.book_path {
            Some(None) => None,
            None => Book::builtin(&rules),
            Some(Some(path)) => {
                if self.book.as_ref().is_some_and(|b| b.rules() == &rules) {
                    return;
                }
                match crate::input::read_text_limited(path, crate::input::OPENINGS_LIMIT)
                    .map_err(|e| e.to_string())
                    .and_then(|t| Book::parse(&t).map_err(|e| e.to_string()))
                {
                    Ok(b) if b.rules() == &rules => Some(Arc::new(b)),
                    Ok(b) => {
                        self.log.push((
                            "warn",
                            format!(
                                "book {}: made for {}, not for this game's {rules}; playing without it",
                                path.display(),
                                b.rules()
                            ),
                        ));
                        None
                    }
                    Err(e) => {
                        self.log.push((
                            "warn",
                            format!("book {}: {e}; playing without it", path.display()),
                        ));
                        None
                    }
                }
            }
        };
    }

    fn solver(&mut self) -> &mut Solver {
        let (hash_mb, threads) = (self.hash_mb, self.threads);
        let endgame = self.endgame.as_ref().and_then(|(_, t)| t.clone());
        let solver = self.solver.get_or_insert_with(|| Solver::new(hash_mb));
        solver.set_threads(threads);
        solver.set_endgame(endgame);
        solver
    }
}

impl PerfectPlayer {
    /// A move proved to keep what is sure (and the value it keeps), or the solved best
    /// move when nothing is sure, within the share of `budget` (from `started`) that
    /// leaves `hard` enough time for a move of its own when the solver does not finish.
    fn prove(&mut self, pos: &Position, started: Instant, budget: Duration) -> Option<(u8, i32)> {
        let proof_deadline = started + budget.mul_f64(PROOF_SHARE);
        let (sure, hint) = (self.sure, self.hint);
        // Borrowing the solver below borrows all of `self`.
        let mut skipped = self.skipped;
        let solver = self.solver();
        let found = match sure {
            // The value is at least what was already sure: prove it with a move, then try
            // for more within a fixed number of nodes.
            Some(v) => match solver.test(
                pos,
                v,
                Budget {
                    deadline: Some(proof_deadline),
                    max_nodes: None,
                },
            ) {
                Some(Test::AtLeast { bound, pit }) => {
                    let raise = Budget {
                        deadline: Some(proof_deadline),
                        max_nodes: Some(budget.as_millis() as u64 * RAISE_NODES_PER_MS),
                    };
                    match solver.test(pos, bound + 1, raise) {
                        Some(Test::AtLeast { bound, pit }) => Some((pit, bound)),
                        _ => Some((pit, bound)),
                    }
                }
                _ => None,
            },
            // Unsure since `hard` moved: solve from the value it was sure of before,
            // which the first searches of MTD(f) confirm or correct by a little.
            None if hint.is_some() => {
                let share = Budget {
                    deadline: Some(proof_deadline),
                    max_nodes: None,
                };
                solver
                    .solve_observed(pos, share, hint, &mut |_| {})
                    .and_then(|sol| sol.best_move().map(|pit| (pit, sol.value)))
            }
            // Nothing sure yet: solve within a fifth of the time, on every move while
            // few seeds are left, else every few moves (what it learns stays in its table).
            None if seeds_in_pits(pos) as u32 <= SOLVER_SEEDS || skipped >= SOLVER_RETRY_EVERY => {
                skipped = 0;
                let share = Budget {
                    deadline: Some(started + budget.mul_f64(0.2)),
                    max_nodes: None,
                };
                solver
                    .solve_within(pos, share)
                    .and_then(|sol| sol.best_move().map(|pit| (pit, sol.value)))
            }
            None => {
                skipped += 1;
                None
            }
        };
        self.skipped = skipped;
        found
    }
}

/// The endgame table for games under `rules` within `table_bytes`: built in memory when
/// small, else the largest in the folder `tables` (default: the cache folder), else a small
/// one built in memory; what it did is added to `log`.
fn find_endgame(
    rules: &Rules,
    table_bytes: u64,
    tables: Option<&std::path::Path>,
    log: &mut Vec<(&'static str, String)>,
) -> Option<Arc<EndgameTable>> {
    let planned = planned_seeds(rules, table_bytes)?;
    let tr = TableRules::of(rules);
    let quick = max_seeds_within(tr, QUICK_TABLE_BYTES).map(|k| k.min(planned));
    let stop = AtomicBool::new(false);
    let build = |k: u32| EndgameTable::build(tr, k, 1, &|_| {}, &stop).map(Arc::new);
    if quick == Some(planned) {
        return build(planned);
    }
    let store = match TableStore::at(tables) {
        Ok(store) => match store.open_best(tr, table_bytes) {
            Ok((found, errors)) => {
                for e in errors {
                    log.push(("warn", format!("skipped an endgame table: {e}")));
                }
                if let Some(t) = found {
                    log.push((
                        "info",
                        format!("endgame table k={} for {tr} loaded", t.max_seeds()),
                    ));
                    return Some(Arc::new(t));
                }
                store.dir().display().to_string()
            }
            Err(e) => {
                log.push(("warn", format!("no endgame table: {e}")));
                "the table folder".to_string()
            }
        },
        Err(e) => {
            log.push(("warn", format!("no endgame table: {e}")));
            "the table folder".to_string()
        }
    };
    let sweep = match rules.sweep() {
        crate::rules::Sweep::Owner => String::new(),
        other => format!(" --sweep {other}"),
    };
    log.push((
        "warn",
        format!(
            "no endgame table for {tr} in {store} (option tables): playing with a small one \
             built in memory; build the full one once with `kalaha tables build --pits {} \
             --seeds {}{}{sweep}{}`",
            rules.pits(),
            rules.seeds(),
            if rules.empty_capture() {
                " --empty-capture"
            } else {
                ""
            },
            // The folder the engine was told to use, where the build must put the table.
            tables.map_or(String::new(), |dir| format!(
                " --tables {}",
                crate::record::shell::shell_path(dir)
            )),
        ),
    ));
    quick.and_then(build)
}

fn string_option(name: &str, default: &str) -> EngineOption {
    EngineOption {
        name: name.to_string(),
        kind: crate::protocol::OptionKind::String {
            default: default.to_string(),
        },
    }
}

fn path_option(value: &serde_json::Value) -> Result<Option<PathBuf>, String> {
    match value {
        serde_json::Value::String(s) if s.is_empty() => Ok(None),
        serde_json::Value::String(s) => Ok(Some(PathBuf::from(s))),
        other => Err(format!("expected a path as a string, got {other}")),
    }
}

impl Player for PerfectPlayer {
    fn name(&self) -> &str {
        "perfect"
    }

    /// Starts each game afresh (empty tables of what was searched), with the endgame
    /// table and the book for its rules.
    fn new_game(&mut self, game: &str, rules: Rules, side: Side) {
        self.prepare_endgame(rules);
        self.poll_endgame();
        self.prepare_book(rules);
        self.solver().clear();
        self.hard.new_game(game, rules, side);
        self.sure = None;
        self.hint = None;
        // The solver is tried on the first move.
        self.skipped = SOLVER_RETRY_EVERY;
        self.said_fallback = false;
    }

    fn take_log(&mut self) -> Vec<(&'static str, String)> {
        std::mem::take(&mut self.log)
    }

    fn options(&self) -> Vec<EngineOption> {
        vec![
            int_option("depth", 0, 0, 250),
            int_option("hash_mb", 64, 1, MAX_HASH_MB),
            int_option("threads", 1, 1, 64),
            int_option("table_mb", PERFECT_TABLE_MB, 0, 1 << 20),
            string_option("tables", ""),
            string_option("book", ""),
        ]
    }

    fn set_option(&mut self, name: &str, value: &serde_json::Value) -> Result<(), String> {
        match name {
            "depth" => self.hard.set_option(name, value),
            "hash_mb" => {
                let mb = parse_int(name, value, 1, MAX_HASH_MB)? as usize;
                if mb != self.hash_mb {
                    self.hash_mb = mb;
                    self.solver = None;
                    self.hard
                        .set_option("hash_mb", &serde_json::json!((mb / 4).max(1)))?;
                }
                Ok(())
            }
            "threads" => {
                self.threads = parse_int(name, value, 1, 64)? as usize;
                Ok(())
            }
            "table_mb" => {
                self.table_mb = parse_int(name, value, 0, 1 << 20)? as u64;
                self.endgame = None;
                Ok(())
            }
            "tables" => {
                self.tables = path_option(value).map_err(|e| format!("option tables: {e}"))?;
                self.endgame = None;
                Ok(())
            }
            "book" => {
                self.book_path = match value {
                    serde_json::Value::String(s) if s == "none" => Some(None),
                    v => path_option(v)
                        .map_err(|e| format!("option book: {e}"))?
                        .map(Some),
                };
                self.book = None;
                Ok(())
            }
            _ => Err(unknown_option(self.name(), name, &self.options())),
        }
    }

    fn choose_move(
        &mut self,
        pos: &Position,
        _history: &[Move],
        time: Option<TimeLimit>,
        info: &mut dyn FnMut(SearchInfo),
    ) -> u8 {
        let started = Instant::now();
        let budget = think_time(time);
        let deadline = started + budget;
        if self.endgame.as_ref().is_none_or(|(r, _)| r != pos.rules()) {
            // Driven without `new_game` (or with other rules): prepare now.
            self.prepare_endgame(*pos.rules());
            self.prepare_book(*pos.rules());
        }
        self.poll_endgame();
        let exact = |pit: u8, value: i32, nodes: u64, pv: Vec<u8>| SearchInfo {
            depth: None,
            score: Some(value as i64),
            nodes: Some(nodes),
            time_ms: Some(started.elapsed().as_millis() as u64),
            pv: if pv.is_empty() { vec![pit] } else { pv },
        };
        if let Some((pit, value)) = self.book.as_ref().and_then(|b| b.lookup(pos)) {
            self.sure = Some(value);
            info(exact(pit, value, 0, Vec::new()));
            return pit;
        }
        let found = self.prove(pos, started, budget);
        if let Some((pit, value)) = found {
            self.sure = Some(value);
            info(exact(pit, value, 0, Vec::new()));
            return pit;
        }
        // `hard`'s move may lose some of what was sure.
        self.hint = self.sure.or(self.hint);
        self.sure = None;
        if !self.said_fallback {
            self.said_fallback = true;
            self.log.push((
                "info",
                format!(
                    "the solver cannot finish in {} ms in this game ({}, {} seeds in pits); \
                     playing hard's search when it cannot",
                    budget.as_millis(),
                    pos.rules(),
                    seeds_in_pits(pos)
                ),
            ));
        }
        self.hard.think(pos, deadline, info)
    }
}

#[cfg(test)]
mod tests;
