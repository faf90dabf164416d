//! Statistics (pure and synchronous): Elo, normalized Elo, LOS and pentanomial statistics of a
//! pairing ([`elo`]), the generalized SPRT ([`sprt`]), joint Bradley-Terry ratings of many
//! engines ([`ratings`]), the streaming aggregation of finished games into standings
//! ([`tally`]) and the distance of engines from perfect play ([`accuracy`]).

pub(crate) mod accuracy;
pub(crate) mod elo;
pub mod ratings;
pub(crate) mod sprt;
pub(crate) mod tally;

pub use accuracy::{Accuracy, AccuracyTable, BLUNDER_SEEDS};
pub use elo::{Estimate, MeanAcc, Pentanomial, Wdl};
pub use ratings::{Rating, Ratings};
pub use sprt::{Sprt, SprtDecision, SprtModel, SprtStatus};
pub use tally::{
    Added, EngineTally, Faults, GroupInfo, H2hRow, PairingTally, StandingRow, Standings, Tally,
    UnknownEngine,
};
