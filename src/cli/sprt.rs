//! `kalaha sprt`: plays game pairs between a new engine and a base engine until the
//! generalized SPRT on the pairs' pentanomial counts accepts H0 or H1 (or `--max-games` runs
//! out). Results go to a tournament folder (resumable like a tournament) plus `sprt.toml`
//! (the test's parameters) and `sprt.csv` (the LLR after every pair).

use super::tournament::CommonArgs;
use super::{CliError, CliResult};
use crate::stats::sprt::fmt_estimate;
use crate::stats::{Outcome, Sprt, SprtDecision, SprtModel, SprtProgress, SprtStatus};
use crate::tournament::run::{Control, Event, Reporter, RunSummary, StartInfo};
use crate::tournament::{RunOptions, TournamentError, default_out_dir, load_saved};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Games scheduled when `--max-games` is not given (the schedule is set when the test
/// starts; a test of close engines with narrow bounds can need more).
const DEFAULT_MAX_GAMES: u64 = 200_000;

/// Test whether a new engine is stronger than a base engine (generalized SPRT).
///
/// The first engine is the new one. Game pairs (each opening played twice with the seats
/// swapped) are played until the log-likelihood ratio of "new is elo1 stronger" against "new
/// is elo0 stronger", computed on the pairs' pentanomial counts, leaves [ln(β/(1-α)),
/// ln((1-β)/α)]. Exit status: 0 H1 accepted, 3 H0 accepted, 4 --max-games ran out.
///
/// The tournament flags apply, except --games and --shard; without --opening-plies or
/// --openings each pair starts after 4 random sowings. The results folder holds the games
/// (as for a tournament), sprt.toml (the test) and sprt.csv (the LLR after every pair).
#[derive(Debug, clap::Args)]
#[command(
    // sprt refuses --games and --shard (it plays until a decision; see --max-games).
    mut_arg("games", |a| a.hide(true)),
    mut_arg("shard", |a| a.hide(true)),
    mut_arg("opening_plies", |a| a.help(
        "Random legal sowings from the start for each pair's opening (0: none) [default: 4]"
    )),
)]
#[command(after_help = "Example:\n  \
kalaha sprt --engine cmd=./new name=new --engine cmd=./old name=old --elo0 0 --elo1 5 --move-time 50ms\n  \
kalaha sprt --engine builtin=hard --engine builtin=random --elo0 0 --elo1 10 --model logistic --max-games 2000\n  \
kalaha sprt --resume results/sprt-1")]
pub struct Args {
    #[command(flatten)]
    pub common: CommonArgs,
    /// H0: the new engine is ELO0 stronger (normalized or logistic Elo, see --model).
    #[arg(long, allow_hyphen_values = true, default_value_t = 0.0)]
    pub elo0: f64,
    /// H1: the new engine is ELO1 stronger.
    #[arg(long, allow_hyphen_values = true, default_value_t = 5.0)]
    pub elo1: f64,
    /// Probability of accepting H1 when H0 is true.
    #[arg(long, default_value_t = 0.05)]
    pub alpha: f64,
    /// Probability of accepting H0 when H1 is true.
    #[arg(long, default_value_t = 0.05)]
    pub beta: f64,
    /// How ELO0 and ELO1 are read.
    #[arg(long, value_enum, default_value_t = ModelArg::Normalized)]
    pub model: ModelArg,
    /// Stop after this many games (rounded up to whole pairs) without a decision (exit 4)
    /// [default: 200000].
    #[arg(long, value_name = "N")]
    pub max_games: Option<u64>,
    /// Continue the test in DIR (only --concurrency, --quiet and --debug may change).
    #[arg(long, value_name = "DIR")]
    pub resume: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ModelArg {
    /// Normalized Elo: independent of the draw ratio (fishtest's default).
    Normalized,
    /// Logistic Elo: an expected score.
    Logistic,
}

/// The test's parameters as saved in `sprt.toml`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct SprtFile {
    elo0: f64,
    elo1: f64,
    alpha: f64,
    beta: f64,
    model: ModelArg,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    max_games: Option<u64>,
}

impl SprtFile {
    fn sprt(&self) -> Sprt {
        Sprt {
            elo0: self.elo0,
            elo1: self.elo1,
            alpha: self.alpha,
            beta: self.beta,
            model: match self.model {
                ModelArg::Normalized => SprtModel::Normalized,
                ModelArg::Logistic => SprtModel::Logistic,
            },
        }
    }

    fn validate(&self) -> Result<(), CliError> {
        let p = |x: f64| x > 0.0 && x < 0.5;
        if !(p(self.alpha) && p(self.beta)) {
            return Err(CliError::input_msg(
                "--alpha and --beta must be in (0, 0.5)",
            ));
        }
        if !(self.elo0.is_finite() && self.elo1.is_finite() && self.elo0 < self.elo1) {
            return Err(CliError::input_msg("--elo0 must be smaller than --elo1"));
        }
        if self.max_games == Some(0) {
            return Err(CliError::input_msg("--max-games must be positive"));
        }
        Ok(())
    }
}

const SPRT_CSV_HEADER: &str = "pairs,games,ll,ld,wl_dd,wd,ww,llr,lower,upper,elo,elo_error\n";

fn csv_line(s: &SprtStatus, penta: [u64; 5]) -> String {
    let num = |x: f64, d: usize| {
        if x.is_finite() {
            format!("{x:.d$}")
        } else {
            String::new()
        }
    };
    format!(
        "{},{},{},{},{},{},{},{},{},{},{},{}\n",
        s.pairs,
        s.games,
        penta[0],
        penta[1],
        penta[2],
        penta[3],
        penta[4],
        num(s.llr, 4),
        num(s.lower, 4),
        num(s.upper, 4),
        num(s.elo.value, 2),
        num(s.elo.error, 2),
    )
}

/// Pairs games by pair number as they finish and feeds complete pairs to the test.
struct Pairing {
    new_engine: String,
    open: HashMap<u64, u8>,
    progress: SprtProgress,
    /// The status when the LLR first left its bounds: the test's result (pairs that were
    /// already running then are recorded but change nothing).
    decided: Option<SprtStatus>,
}

impl Pairing {
    /// The new engine's half points in a game, if it played in it.
    fn half_points(&self, south: &str, north: &str, result: Outcome) -> Option<u8> {
        let south_hp = result.south_half_points();
        if south == self.new_engine {
            Some(south_hp)
        } else if north == self.new_engine {
            Some(2 - south_hp)
        } else {
            None
        }
    }

    /// Adds a game; returns the status when it completed a pair.
    fn add(&mut self, pair: u64, south: &str, north: &str, result: Outcome) -> Option<SprtStatus> {
        let hp = self.half_points(south, north, result)?;
        match self.open.remove(&pair) {
            Some(first) => {
                let status = self.progress.add_pair([first, hp]);
                if self.decided.is_none() && status.decision != SprtDecision::Continue {
                    self.decided = Some(status);
                }
                Some(status)
            }
            None => {
                self.open.insert(pair, hp);
                None
            }
        }
    }
}

struct SprtReporter {
    pairing: Pairing,
    csv: std::fs::File,
    quiet: bool,
    last_print: Instant,
    /// Pairs in the last line printed.
    printed_pairs: u64,
}

impl SprtReporter {
    fn print(&mut self, status: &SprtStatus) -> io::Result<()> {
        if !self.quiet {
            writeln!(io::stdout().lock(), "{}", status.line())?;
        }
        self.printed_pairs = status.pairs;
        self.last_print = Instant::now();
        Ok(())
    }
}

impl Reporter for SprtReporter {
    fn event(&mut self, event: &Event<'_>) -> io::Result<Control> {
        let Event::GameFinished(g) = event else {
            return Ok(Control::Continue);
        };
        let Some(result) = Outcome::parse(g.play.result.as_str()) else {
            return Ok(Control::Continue);
        };
        let Some(status) = self.pairing.add(g.pair, &g.south, &g.north, result) else {
            return Ok(Control::Continue);
        };
        self.csv
            .write_all(csv_line(&status, self.pairing.progress.penta.0).as_bytes())?;
        self.csv.flush()?;
        let decided_now = self
            .pairing
            .decided
            .is_some_and(|d| d.pairs == status.pairs);
        if decided_now || self.last_print.elapsed() >= Duration::from_secs(1) {
            self.print(&status)?;
        }
        Ok(if self.pairing.decided.is_none() {
            Control::Continue
        } else {
            Control::Stop
        })
    }

    fn finish(&mut self, _summary: &RunSummary) -> io::Result<()> {
        self.csv.sync_all()
    }

    fn start(&mut self, _info: &StartInfo) -> io::Result<()> {
        Ok(())
    }
}

/// Replays an existing `games.csv` (on resume) into the pairing, rewriting `sprt.csv`.
fn replay(dir: &Path, pairing: &mut Pairing) -> Result<(), CliError> {
    let csv_path = dir.join("sprt.csv");
    let tmp = dir.join(".sprt.csv.tmp");
    let mut text = String::from(SPRT_CSV_HEADER);
    let games = dir.join("games.csv");
    if games.exists() {
        let mut reader = csv::ReaderBuilder::new()
            .flexible(true)
            .from_path(&games)
            .map_err(CliError::input)?;
        let headers = reader.headers().map_err(CliError::input)?.clone();
        let col = |name: &str| headers.iter().position(|h| h == name);
        let (Some(pc), Some(sc), Some(nc), Some(rc)) =
            (col("pair"), col("south"), col("north"), col("result"))
        else {
            return Err(CliError::input_msg(format!(
                "{}: not a games.csv header",
                games.display()
            )));
        };
        for rec in reader.records() {
            let Ok(rec) = rec else { continue };
            let (Some(pair), Some(south), Some(north), Some(result)) = (
                rec.get(pc).and_then(|p| p.parse::<u64>().ok()),
                rec.get(sc),
                rec.get(nc),
                rec.get(rc).and_then(Outcome::parse),
            ) else {
                continue;
            };
            if let Some(status) = pairing.add(pair, south, north, result) {
                text.push_str(&csv_line(&status, pairing.progress.penta.0));
            }
        }
    }
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, &csv_path)?;
    Ok(())
}

pub fn run(args: Args) -> CliResult {
    let common = &args.common;
    if common.games.is_some() || common.shard.is_some() {
        return Err(CliError::input_msg(
            "sprt plays until a decision: use --max-games instead of --games; --shard does not apply",
        ));
    }
    let (config, out, params, resume) = match &args.resume {
        Some(dir) => {
            if !common.engines.0.is_empty() || common.config.is_some() || common.out.is_some() {
                return Err(CliError::input_msg(
                    "--resume takes its engines and settings from DIR; only --concurrency, \
                     --quiet and --debug may be given with it",
                ));
            }
            let text = std::fs::read_to_string(dir.join("sprt.toml")).map_err(|e| {
                CliError::input_msg(format!("{} holds no SPRT to resume: {e}", dir.display()))
            })?;
            let params: SprtFile = toml::from_str(&text).map_err(CliError::input)?;
            let config = load_saved(dir).map_err(CliError::input)?;
            (config, dir.clone(), params, true)
        }
        None => {
            let params = SprtFile {
                elo0: args.elo0,
                elo1: args.elo1,
                alpha: args.alpha,
                beta: args.beta,
                model: args.model,
                max_games: args.max_games,
            };
            let mut file = common.to_config_file()?;
            if file.engines.len() != 2 {
                return Err(CliError::input_msg(format!(
                    "sprt needs exactly two engines (the new one first), {} given",
                    file.engines.len()
                )));
            }
            file.games = Some(args.max_games.unwrap_or(DEFAULT_MAX_GAMES));
            // Every pair should start from its own position: a few random sowings.
            if file.openings.is_none() && file.opening_list.is_none() {
                file.opening_plies.get_or_insert(4);
            }
            let config = file.resolve().map_err(CliError::input)?;
            let out = common.out.clone().unwrap_or_else(|| {
                let d = default_out_dir();
                d.with_file_name(format!(
                    "sprt-{}",
                    d.file_name()
                        .map(|n| n.to_string_lossy())
                        .unwrap_or_default()
                ))
            });
            if out.join("games.csv").exists() {
                return Err(CliError::input_msg(format!(
                    "{} already holds results: continue with --resume {0}, or choose another --out",
                    out.display()
                )));
            }
            (config, out, params, false)
        }
    };
    params.validate()?;
    let sprt = params.sprt();
    let names = config.names();
    let (new, base) = (names[0].clone(), names[1].clone());
    std::fs::create_dir_all(&out)?;
    if !resume {
        std::fs::write(
            out.join("sprt.toml"),
            toml::to_string(&params).map_err(anyhow::Error::from)?,
        )?;
    }
    let mut pairing = Pairing {
        new_engine: new.clone(),
        open: HashMap::new(),
        progress: SprtProgress::new(sprt),
        decided: None,
    };
    replay(&out, &mut pairing)?;
    let before = pairing.progress.status();
    let quiet = common.quiet;
    let (lower, upper) = sprt.bounds();
    let model = sprt.model.as_str();
    if !quiet {
        writeln!(
            io::stdout().lock(),
            "{} SPRT {new} vs {base}: H0 {model} Elo = {}, H1 {model} Elo = {}, alpha {}, beta {}, LLR bounds [{lower:.2}, {upper:.2}]; results in {}",
            if resume { "resuming" } else { "starting" },
            sprt.elo0,
            sprt.elo1,
            sprt.alpha,
            sprt.beta,
            out.display()
        )?;
        if before.pairs > 0 {
            writeln!(io::stdout().lock(), "{}", before.line())?;
        }
    }
    if let Some(decided) = pairing.decided {
        return verdict(&decided, &new, &base);
    }

    let csv = std::fs::OpenOptions::new()
        .append(true)
        .open(out.join("sprt.csv"))?;
    let mut reporter = SprtReporter {
        pairing,
        csv,
        quiet,
        last_print: Instant::now(),
        printed_pairs: before.pairs,
    };
    let options = RunOptions {
        out: out.clone(),
        resume,
        concurrency: common.concurrency.unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        }),
        debug: common.debug,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let outcome = runtime.block_on(async {
        let mut reporters: [&mut dyn Reporter; 1] = [&mut reporter];
        crate::tournament::run_tournament(config, &options, &mut reporters).await
    });
    runtime.shutdown_timeout(Duration::from_millis(100));
    let outcome = match outcome {
        Ok(o) => o,
        Err(TournamentError::Input(m)) => return Err(CliError::input_msg(m)),
        Err(e) => return Err(e.into()),
    };
    let status = reporter.pairing.progress.status();
    let s = &outcome.summary;
    if let Some(decided) = reporter.pairing.decided {
        return verdict(&decided, &new, &base);
    }
    if s.stopped_by_interrupt || s.aborted {
        if !quiet {
            writeln!(io::stdout().lock(), "{}", status.line())?;
        }
        eprintln!(
            "interrupted after {} pairs. Resume with:\n  kalaha sprt --resume {}",
            status.pairs,
            out.display()
        );
        return Ok(130);
    }
    if !quiet && reporter.printed_pairs != status.pairs {
        writeln!(io::stdout().lock(), "{}", status.line())?;
    }
    // Every scheduled game was played without a decision.
    verdict(
        &SprtStatus {
            decision: SprtDecision::Continue,
            ..status
        },
        &new,
        &base,
    )
}

/// Prints the one-line verdict and returns the exit code.
fn verdict(status: &SprtStatus, new: &str, base: &str) -> CliResult {
    // The same estimate as the progress lines.
    let elo = format!("Elo {}", fmt_estimate(status.elo));
    let (code, text) = match status.decision {
        SprtDecision::H1 => (
            0,
            format!(
                "H1 accepted: {new} is stronger than {base} (LLR {:.2} >= {:.2} after {} pairs, {elo})",
                status.llr, status.upper, status.pairs
            ),
        ),
        SprtDecision::H0 => (
            3,
            format!(
                "H0 accepted: {new} is not stronger than {base} (LLR {:.2} <= {:.2} after {} pairs, {elo})",
                status.llr, status.lower, status.pairs
            ),
        ),
        SprtDecision::Continue => (
            4,
            format!(
                "no decision: --max-games ran out (LLR {:.2} in [{:.2}, {:.2}] after {} pairs, {elo})",
                status.llr, status.lower, status.upper, status.pairs
            ),
        ),
    };
    writeln!(io::stdout().lock(), "{text}")?;
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_complete_by_pair_number() {
        let sprt = Sprt {
            elo0: 0.0,
            elo1: 5.0,
            alpha: 0.05,
            beta: 0.05,
            model: SprtModel::Normalized,
        };
        let mut p = Pairing {
            new_engine: "new".into(),
            open: HashMap::new(),
            progress: SprtProgress::new(sprt),
            decided: None,
        };
        assert!(p.add(1, "new", "old", Outcome::SouthWin).is_none());
        assert!(p.add(2, "new", "old", Outcome::Draw).is_none());
        let s = p.add(1, "old", "new", Outcome::SouthWin).unwrap();
        assert_eq!(s.pairs, 1);
        assert_eq!(p.progress.penta.0, [0, 0, 1, 0, 0]);
        assert!(p.add(2, "old", "new", Outcome::NorthWin).is_some());
        assert_eq!(p.progress.penta.0, [0, 0, 1, 1, 0]);
        assert!(csv_line(&s, [0, 0, 1, 0, 0]).starts_with("1,2,0,0,1,0,0,"));
    }
}
