//! `kalaha tables`: builds, lists, checks and deletes the solver's endgame tables, writes
//! opening books; and the table flags and progress display that `kalaha solve` shares.

use super::{CliError, CliResult, RulesArgs};
use crate::rules::Rules;
use crate::solver::{
    Book, EndgameTable, IN_MEMORY_BYTES, MAX_TABLE_SEEDS, Solver, TableEvent, TableRules,
    TableStore, planned_seeds, table_len,
};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The default table budget, in MiB.
pub(crate) const DEFAULT_TABLE_MB: u64 = 1024;

/// What tables cost, for `--help`: the size of each `k` for 6 pits (the standard board).
pub(crate) fn costs_help() -> String {
    let rules = TableRules {
        pits: 6,
        empty_capture: false,
        sweep: crate::rules::Sweep::Owner,
    };
    let mut s = String::from(
        "Endgame tables hold the exact value of every position with at most k seeds left in \
         the pits, one byte each; one table serves every seed count of a board size and \
         variant. k is the largest whose table fits in --table-mb, but at most half the seeds \
         of the game. Sizes for 6 pits (the building time grows about as the size: k=23 takes \
         a few minutes with --threads 2 on a 2-core machine):\n",
    );
    for k in [16, 18, 20, 21, 22, 23, 24, 25, 26] {
        let len = table_len(rules, k).expect("fits");
        s.push_str(&format!(
            "  k={k}: {} MiB (--table-mb {})\n",
            len.div_ceil(1 << 20),
            len.div_ceil(1 << 20)
        ));
    }
    s.push_str(
        "Tables are kept in --tables DIR, else $XDG_CACHE_HOME/kalaha, else ~/.cache/kalaha; \
         tables under 16 MiB are built in memory when needed and never kept.",
    );
    s
}

/// The endgame table flags shared by `solve` and `tables`.
#[derive(Debug, Clone, clap::Args)]
pub struct TableArgs {
    /// Folder of the endgame tables [default: $XDG_CACHE_HOME/kalaha or ~/.cache/kalaha].
    #[arg(long, value_name = "DIR")]
    pub tables: Option<PathBuf>,
    /// Memory and disk for one endgame table, in MiB; 0 for none (see below for what each k
    /// costs).
    #[arg(long, default_value_t = DEFAULT_TABLE_MB, value_name = "MB")]
    pub table_mb: u64,
}

impl TableArgs {
    pub(crate) fn store(&self) -> Result<TableStore, CliError> {
        TableStore::at(self.tables.as_deref()).map_err(CliError::input)
    }

    pub(crate) fn budget_bytes(&self) -> u64 {
        self.table_mb.saturating_mul(1 << 20)
    }
}

/// Threads for building and searching.
pub(crate) fn check_threads(threads: usize) -> Result<usize, CliError> {
    let max = 256;
    if threads == 0 || threads > max {
        return Err(CliError::input_msg(format!(
            "invalid --threads {threads}: it must be between 1 and {max} (this machine has {} cores)",
            std::thread::available_parallelism().map_or(1, |n| n.get())
        )));
    }
    Ok(threads)
}

/// A progress display for table events on stderr: a bar on a terminal, else a plain line
/// at the start and at every tenth of a build (a build takes minutes: a log or a CI job
/// must not look hung).
struct BuildDisplay {
    bar: ProgressBar,
    started: std::sync::Mutex<Option<Instant>>,
    plain: bool,
    entries: AtomicU64,
    tenths: AtomicU64,
}

impl BuildDisplay {
    fn new() -> BuildDisplay {
        BuildDisplay {
            bar: ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()),
            started: std::sync::Mutex::new(None),
            plain: !std::io::stderr().is_terminal(),
            entries: AtomicU64::new(0),
            tenths: AtomicU64::new(0),
        }
    }

    fn event(&self, e: TableEvent) {
        match e {
            TableEvent::Loading { path } => {
                self.bar
                    .set_message(format!("checking {}", crate::record::shown_path(path)));
                self.bar.tick();
            }
            TableEvent::Damaged { error } => {
                self.bar.suspend(|| {
                    eprintln!(
                        "warning: {}; rebuilding it",
                        crate::record::clean_message(&error.to_string())
                    )
                });
            }
            TableEvent::Building { rules, k, entries } => {
                *self.started.lock().expect("not poisoned") = Some(Instant::now());
                let what = format!(
                    "building the endgame table k={k} for {rules} ({} MiB)",
                    entries.div_ceil(1 << 20)
                );
                if self.plain {
                    self.entries.store(entries, Ordering::Relaxed);
                    eprintln!(
                        "{what}: done once and kept for later runs (see `kalaha tables --help`)"
                    );
                }
                self.bar.set_length(entries);
                self.bar.set_style(
                    ProgressStyle::with_template(
                        "{msg} [{bar:30}] {percent}% {human_pos}/{human_len} positions, {eta} left",
                    )
                    .expect("a valid template")
                    .progress_chars("=> "),
                );
                self.bar.set_message(what);
            }
            TableEvent::Built { done } => {
                self.bar.set_position(done);
                let entries = self.entries.load(Ordering::Relaxed);
                if self.plain && entries > 0 {
                    let tenth = done.saturating_mul(10) / entries;
                    if tenth > self.tenths.fetch_max(tenth, Ordering::Relaxed) && tenth < 10 {
                        eprintln!("  {}% built", tenth * 10);
                    }
                }
            }
            TableEvent::Saved { path } => {
                let secs = self
                    .started
                    .lock()
                    .expect("not poisoned")
                    .map_or(0.0, |t| t.elapsed().as_secs_f64());
                self.bar.finish_and_clear();
                eprintln!(
                    "built in {secs:.1} s and saved to {}",
                    crate::record::shown_path(path)
                );
            }
        }
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// The endgame table for a game under `rules` within the flags' budget: loaded, or built
/// (with a progress bar on a terminal) and saved; `None` when the game needs none.
pub(crate) fn obtain(
    rules: &Rules,
    args: &TableArgs,
    threads: usize,
) -> Result<Option<EndgameTable>, CliError> {
    let Some(k) = planned_seeds(rules, args.budget_bytes()) else {
        return Ok(None);
    };
    let stop = AtomicBool::new(false);
    let tr = TableRules::of(rules);
    if table_len(tr, k).is_some_and(|len| len <= IN_MEMORY_BYTES) {
        // Built in memory and never kept: no folder needed.
        let table = EndgameTable::build(tr, k, threads, &|_| {}, &stop);
        return Ok(Some(table.expect("a build nothing stops finishes")));
    }
    let store = args.store()?;
    let display = BuildDisplay::new();
    let table = store.obtain(
        rules,
        args.budget_bytes(),
        threads,
        &|e| display.event(e),
        &stop,
    );
    display.finish();
    Ok(table?)
}

/// Manage the solver's endgame tables and write opening books.
#[derive(Debug, clap::Args)]
#[command(after_help = costs_help())]
pub struct Args {
    #[command(subcommand)]
    pub command: TablesCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum TablesCommand {
    Build(BuildArgs),
    Info(InfoArgs),
    Clear(ClearArgs),
    Book(BookArgs),
}

/// Build the endgame table for a board size and variant (or check the one there).
///
/// Without --table-seeds, builds the table `kalaha solve` and the `perfect` engine would
/// use for these rules within --table-mb.
#[derive(Debug, clap::Args)]
#[command(after_help = format!("{}\n\nExample:\n  kalaha tables build --pits 6 --seeds 4 --threads 2\n  kalaha tables build --pits 6 --empty-capture --table-seeds 20", costs_help()))]
pub struct BuildArgs {
    #[command(flatten)]
    pub rules: RulesArgs,
    #[command(flatten)]
    pub tables: TableArgs,
    /// Build the table of this k (at most 127) instead of the one --table-mb allows.
    #[arg(long, value_name = "K")]
    pub table_seeds: Option<u32>,
    /// Threads to build with.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub threads: usize,
}

/// List the endgame tables in the folder, with their sizes; --verify checks each one.
#[derive(Debug, clap::Args)]
#[command(after_help = "Example:\n  kalaha tables info\n  kalaha tables info --verify")]
pub struct InfoArgs {
    /// Folder of the endgame tables [default: $XDG_CACHE_HOME/kalaha or ~/.cache/kalaha].
    #[arg(long, value_name = "DIR")]
    pub tables: Option<PathBuf>,
    /// Read every table and check its checksum (a second or so per GiB).
    #[arg(long)]
    pub verify: bool,
}

/// Delete every endgame table in the folder.
#[derive(Debug, clap::Args)]
#[command(after_help = "Example:\n  kalaha tables clear --tables /tmp/kalaha-tables")]
pub struct ClearArgs {
    /// Folder of the endgame tables [default: $XDG_CACHE_HOME/kalaha or ~/.cache/kalaha].
    #[arg(long, value_name = "DIR")]
    pub tables: Option<PathBuf>,
}

/// Write an opening book: each side in turn plays --moves of its moves from the book
/// against every move of the other side, each proved by the solver to keep the value.
///
/// The book shipped for the standard board (`core/src/solver/books/standard.book`) is
/// `kalaha tables book --moves 5 --out core/src/solver/books/standard.book`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Example:\n  kalaha tables book --moves 5 --out standard.book\n  kalaha tables book --pits 5 --seeds 4 --moves 3"
)]
pub struct BookArgs {
    #[command(flatten)]
    pub rules: RulesArgs,
    #[command(flatten)]
    pub tables: TableArgs,
    /// Moves of the book's side that each line of play covers.
    #[arg(long, default_value_t = 5, value_name = "N")]
    pub moves: u32,
    /// Memory for the solver's transposition table, in MiB (1 to 65536).
    #[arg(long, default_value_t = 256, value_name = "N")]
    pub hash_mb: usize,
    /// Threads for the table build and the solver.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub threads: usize,
    /// Write the book to FILE (through a temporary file) instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

pub(crate) fn run(args: Args) -> CliResult {
    match args.command {
        TablesCommand::Build(a) => build(a),
        TablesCommand::Info(a) => info(a),
        TablesCommand::Clear(a) => clear(a),
        TablesCommand::Book(a) => book(a),
    }
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1 << 20) as f64)
}

fn build(args: BuildArgs) -> CliResult {
    let rules = args.rules.rules()?;
    let threads = check_threads(args.threads)?;
    let tr = TableRules::of(&rules);
    let k = match args.table_seeds {
        Some(k) if k > MAX_TABLE_SEEDS => {
            return Err(CliError::input_msg(format!(
                "invalid --table-seeds {k}: at most {MAX_TABLE_SEEDS}"
            )));
        }
        Some(k) => k,
        None => planned_seeds(&rules, args.tables.budget_bytes()).ok_or_else(|| {
            CliError::input_msg(format!(
                "no endgame table is worth building for {rules} within --table-mb {}: raise \
                 --table-mb or give --table-seeds",
                args.tables.table_mb
            ))
        })?,
    };
    let len = table_len(tr, k).ok_or_else(|| {
        CliError::input_msg(format!(
            "a table of k={k} for {tr} has more than 2^64 positions"
        ))
    })?;
    let store = args.tables.store()?;
    let display = BuildDisplay::new();
    let stop = AtomicBool::new(false);
    let t = Instant::now();
    let table = store.open_or_build(tr, k, threads, &|e| display.event(e), &stop);
    display.finish();
    let table = table?;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{} k={} {} positions ({}) ready in {:.1} s: {}",
        tr,
        table.max_seeds(),
        len,
        mib(len),
        t.elapsed().as_secs_f64(),
        crate::record::shown_path(&store.path(tr, k))
    )?;
    Ok(super::exit::OK)
}

fn info(args: InfoArgs) -> CliResult {
    let store = TableStore::at(args.tables.as_deref()).map_err(CliError::input)?;
    let files = store.list()?;
    let mut out = std::io::stdout().lock();
    if store.dir().is_dir() {
        writeln!(out, "folder {}", crate::record::shown_path(store.dir()))?;
    } else {
        // The commands that make it, given the same folder.
        let flag = match &args.tables {
            Some(dir) => format!(" --tables {}", super::shell::shell_path(dir)),
            None => String::new(),
        };
        writeln!(
            out,
            "folder {} (not made yet: `kalaha tables build{flag}` makes it, as does the first \
             `kalaha solve{flag}` that needs a table of 16 MiB or more)",
            crate::record::shown_path(store.dir())
        )?;
    }
    let mut bad = 0;
    let mut total = 0;
    for f in &files {
        total += f.size;
        let status = if args.verify {
            let t = Instant::now();
            match store.load(f.rules, f.k) {
                Ok(_) => format!("ok (checked in {:.1} s)", t.elapsed().as_secs_f64()),
                Err(e) => {
                    bad += 1;
                    format!("DAMAGED: {e}")
                }
            }
        } else {
            match store.header(&f.path) {
                Ok(h) => format!("checksum {:016x}", h.checksum),
                Err(e) => {
                    bad += 1;
                    format!("DAMAGED: {e}")
                }
            }
        };
        writeln!(
            out,
            "{} k={} {} {}: {status}",
            f.rules,
            f.k,
            mib(f.size),
            file_name(&f.path)
        )?;
    }
    writeln!(
        out,
        "{}, {}",
        crate::record::counted(files.len() as u64, "table"),
        mib(total)
    )?;
    let unfinished = store.unfinished()?;
    if !unfinished.is_empty() {
        writeln!(
            out,
            "{} unfinished file{} of a build that was stopped while saving ({}): the next \
             build deletes them, and so does `kalaha tables clear`",
            unfinished.len(),
            if unfinished.len() == 1 { "" } else { "s" },
            mib(unfinished.iter().map(|(_, size)| size).sum())
        )?;
    }
    Ok(if bad > 0 { 1 } else { 0 })
}

fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

fn clear(args: ClearArgs) -> CliResult {
    let store = TableStore::at(args.tables.as_deref()).map_err(CliError::input)?;
    let (files, bytes) = store.clear()?;
    writeln!(
        std::io::stdout().lock(),
        "deleted {} ({}) from {}",
        crate::record::counted(files as u64, "file"),
        mib(bytes),
        crate::record::shown_path(store.dir())
    )?;
    Ok(super::exit::OK)
}

fn book(args: BookArgs) -> CliResult {
    let rules = args.rules.rules()?;
    let threads = check_threads(args.threads)?;
    super::solve::check_hash_mb(args.hash_mb)?;
    let table = obtain(&rules, &args.tables, threads)?;
    let mut solver = Solver::new(args.hash_mb);
    solver.allow_huge_pages();
    solver.set_threads(threads);
    solver.set_endgame(table.map(std::sync::Arc::new));
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{spinner} {msg} [{elapsed}]").expect("a valid template"),
    );
    bar.enable_steady_tick(Duration::from_millis(200));
    bar.set_message(format!("solving {rules} from the start"));
    let book = Book::generate(rules, args.moves, &mut solver, &mut |n, pos| {
        bar.set_message(format!("{n} positions, last {}", pos.to_compact()));
    });
    bar.finish_and_clear();
    let text = book.to_text();
    match &args.out {
        None => std::io::stdout().lock().write_all(text.as_bytes())?,
        Some(path) => {
            super::common::write_atomically(path, &text).map_err(CliError::input_msg)?;
            eprintln!(
                "{} positions written to {}",
                book.len(),
                crate::record::shown_path(path)
            );
        }
    }
    Ok(super::exit::OK)
}
