//! Resource limits of an engine's processes, set by the sandbox before the engine runs.

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Per-engine resource limits, set on the engine's process and inherited by its children.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceLimits {
    /// Address space of each process, in bytes (`RLIMIT_AS`).
    pub memory: Option<u64>,
    /// Processes (and threads) the engine may have at once (`RLIMIT_NPROC`, counted within
    /// the engine's user namespace).
    pub processes: Option<u64>,
    /// CPU time of each process (`RLIMIT_CPU`): SIGXCPU when it is used up.
    pub cpu: Option<Duration>,
}

impl ResourceLimits {
    pub fn is_empty(&self) -> bool {
        *self == ResourceLimits::default()
    }

    /// A warning when a limit set here cannot hold: the kernel does not apply
    /// `RLIMIT_NPROC` to root, and an engine started by root is root outside its namespace
    /// too, so `limit.processes` does nothing when the referee runs as root.
    pub fn warning(&self) -> Option<String> {
        let n = self.processes.filter(|_| crate::sys::sandbox::is_root())?;
        Some(format!(
            "limit.processes={n} is not enforced: the referee runs as root, and the kernel \
             exempts root's processes (engines included) from the process limit; run the \
             referee as an ordinary user for it to hold (limit.memory and limit.cpu hold)"
        ))
    }
}

impl std::fmt::Display for ResourceLimits {
    /// `memory 64M, processes 16, cpu 10s` (the limits that are set).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts = Vec::new();
        if let Some(m) = self.memory {
            parts.push(format!("memory {}M", m >> 20));
        }
        if let Some(p) = self.processes {
            parts.push(format!("processes {p}"));
        }
        if let Some(c) = self.cpu {
            parts.push(format!("cpu {}", crate::record::format_duration(c)));
        }
        f.write_str(&parts.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_process_limit_is_said_not_to_hold_for_root() {
        let limits = ResourceLimits {
            processes: Some(8),
            ..ResourceLimits::default()
        };
        assert_eq!(limits.warning().is_some(), crate::sys::sandbox::is_root());
        assert_eq!(ResourceLimits::default().warning(), None);
    }
}
