//! The Landlock layer: writes only to the engine's allowlist, and (Linux 6.12) signals and
//! abstract sockets only within the engine's own processes. Independent of the mount
//! namespace: it holds where namespaces cannot be made, and behind them where they can.

use landlock::{
    ABI, AccessFs, CompatLevel, Compatible, LandlockStatus, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetStatus, Scope, path_beneath_rules,
};
use std::path::Path;

/// The ABI whose rights are asked for: writes and truncation (5.13, 6.2), device ioctls
/// (6.10), scopes (6.12). Older kernels give what they have (best effort).
const ABI_ASKED: ABI = ABI::V6;

/// What Landlock enforced.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Enforced {
    pub writes: bool,
    pub scopes: bool,
}

/// Restricts this process and everything it execs or starts: writes only beneath
/// `writable` (and to the devices `null`, `zero`, `full`, `random`, `urandom`). With
/// `wanted` false, nothing is done.
pub(crate) fn restrict(writable: &[&Path], wanted: bool) -> Result<Enforced, String> {
    if !wanted {
        return Ok(Enforced::default());
    }
    let write = AccessFs::from_write(ABI_ASKED);
    let devices = ["null", "zero", "full", "random", "urandom"].map(|d| format!("/dev/{d}"));
    let device_rights = AccessFs::WriteFile | AccessFs::Truncate;
    let err = |e: landlock::RulesetError| e.to_string();
    let ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(write)
        .map_err(err)?;
    let ruleset = ruleset
        .scope(Scope::Signal | Scope::AbstractUnixSocket)
        .map_err(err)?;
    let status = ruleset
        .create()
        .map_err(err)?
        .add_rules(path_beneath_rules(writable, write))
        .map_err(err)?
        .add_rules(path_beneath_rules(&devices, device_rights))
        .map_err(err)?
        .restrict_self()
        .map_err(err)?;
    let writes = status.ruleset != RulesetStatus::NotEnforced;
    // Scopes came with ABI 6; best effort leaves them out before it.
    let scoped = matches!(
        status.landlock,
        LandlockStatus::Available { effective_abi, .. } if effective_abi >= ABI::V6
    );
    Ok(Enforced {
        writes,
        scopes: writes && scoped,
    })
}
