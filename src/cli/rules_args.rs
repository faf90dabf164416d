//! The rules flags shared by every command that plays or analyses games.

use super::CliError;
use crate::rules::{Rules, Sweep};
use clap::{Args, ValueEnum};

#[derive(Debug, Clone, Args)]
pub struct RulesArgs {
    /// Pits per side (1 to 16).
    #[arg(long, default_value_t = 6, value_name = "N")]
    pub pits: u32,
    /// Seeds per pit at the start (1 to 100).
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub seeds: u32,
    /// A last seed in an empty own pit goes to the store even when the opposite pit is empty.
    #[arg(long)]
    pub empty_capture: bool,
    /// Where seeds left in the pits go at the end of the game.
    #[arg(long, value_enum, default_value_t = SweepArg::Owner, value_name = "SWEEP")]
    pub sweep: SweepArg,
}

/// `--sweep` values, spelled as in the protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SweepArg {
    /// Each player's remaining seeds go to their own store.
    #[value(name = "owner")]
    Owner,
    /// All remaining seeds go to the player whose pits ran empty.
    #[value(name = "empty_side")]
    EmptySide,
    /// Remaining seeds are not counted.
    #[value(name = "none")]
    None,
}

impl From<SweepArg> for Sweep {
    fn from(s: SweepArg) -> Sweep {
        match s {
            SweepArg::Owner => Sweep::Owner,
            SweepArg::EmptySide => Sweep::EmptySide,
            SweepArg::None => Sweep::None,
        }
    }
}

impl RulesArgs {
    /// The validated rules; an unsupported size is an input error (exit 2).
    pub fn rules(&self) -> Result<Rules, CliError> {
        Rules::new(self.pits, self.seeds, self.empty_capture, self.sweep.into())
            .map_err(CliError::input)
    }
}
