//! `kalaha ratings` (in progress).

use super::{CliError, CliResult};

#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> CliResult {
    Err(CliError::Failure(anyhow::anyhow!(
        "kalaha ratings is not available yet"
    )))
}
