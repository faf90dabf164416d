//! The exit codes of `kalaha`, in one place (README's table lists them).

/// Success; for `kalaha sprt`, H1 accepted (the new engine is stronger).
pub const OK: u8 = 0;
/// A failure of the run (an engine, a write, a bug).
pub const FAILURE: u8 = 1;
/// Bad usage or input: a flag, a missing engine, a malformed file, an unsupported rule.
pub const USAGE: u8 = 2;
/// `kalaha sprt`: H0 accepted (the new engine is not stronger).
pub const H0_ACCEPTED: u8 = 3;
/// `kalaha sprt`: no decision (`--max-games` ran out, or the test cannot decide).
pub const NO_DECISION: u8 = 4;
/// Stopped by Ctrl-C or SIGTERM (128 + SIGINT, as shells report it); `--resume` continues.
pub const INTERRUPTED: u8 = 130;

/// Why a run of `kind` that exits with `code` ended, as the `run_finished` event of
/// `--events` says it.
pub fn reason(kind: crate::results::RunKind, code: u8) -> crate::events::Reason {
    use crate::events::Reason;
    let sprt = kind == crate::results::RunKind::Sprt;
    match code {
        INTERRUPTED => Reason::Interrupted,
        OK if sprt => Reason::H1Accepted,
        OK => Reason::Complete,
        H0_ACCEPTED if sprt => Reason::H0Accepted,
        NO_DECISION if sprt => Reason::NoDecision,
        _ => Reason::Error,
    }
}
