//! `kalaha match`: two engines, game pairs with the seats swapped, results in a folder.

use super::common::CommonArgs;
use super::execute::{RunKind, execute};
use super::{CliError, CliResult};
use crate::tournament::spec::EngineSpec;

/// Games a match plays when `--games` is not given.
pub(crate) const MATCH_GAMES: u64 = 100;

/// Play game pairs between two engines (100 games unless --games says otherwise).
///
/// Each engine is a built-in name (`hard`), or KEY=VALUE words in one argument
/// (`"cmd=./my-engine name=mine option.depth=8"`), or given with --engine.
#[derive(Debug, clap::Args)]
#[command(after_help = "Example:\n  \
kalaha match hard medium --games 20 --move-time 50ms\n  \
kalaha match \"cmd=./my-engine name=mine\" hard --clock 10s+100ms --opening-plies 4 --seed 7\n  \
kalaha match --resume results/run1")]
pub struct Args {
    /// The two engines (or use --engine twice).
    #[arg(value_name = "ENGINE", num_args = 0..=2)]
    pub players: Vec<String>,
    #[command(flatten)]
    pub common: CommonArgs,
    /// Continue the match in DIR, as `kalaha tournament --resume DIR` does (only
    /// --concurrency, --quiet, --debug and --report-every may change).
    #[arg(long, value_name = "DIR", conflicts_with = "players")]
    pub resume: Option<std::path::PathBuf>,
}

pub(crate) fn run(args: Args) -> CliResult {
    if let Some(dir) = &args.resume {
        return super::tournament::resume(dir, &args.common);
    }
    let mut file = args.common.to_config_file()?;
    let mut engines = Vec::new();
    for p in &args.players {
        let spec = if !p.contains('=') {
            if let Some(hint) = super::time_as_engine(p.trim()) {
                return Err(CliError::input_msg(hint));
            }
            EngineSpec::builtin(p.trim())
        } else {
            EngineSpec::parse(&[p]).map_err(CliError::input)?
        };
        engines.push(spec);
    }
    engines.extend(std::mem::take(&mut file.engines));
    if engines.len() != 2 {
        return Err(CliError::input_msg(format!(
            "a match needs exactly two engines, {} given",
            engines.len()
        )));
    }
    file.engines = engines;
    // Two games say nothing about two engines; a hundred begin to.
    file.games.get_or_insert(MATCH_GAMES);
    let config = args.common.resolve(&file)?;
    let out = super::common::new_results_folder(&file, "")?;
    let flags = args.common.run_flags(Some(&file));
    args.common
        .open_events(Some(&file), RunKind::Match, &out, true)?;
    Ok(execute(config, out, false, RunKind::Match, &flags, &mut [], None)?.code)
}
