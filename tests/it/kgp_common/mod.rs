//! What the KGP tests share: the test agent.

use std::path::PathBuf;
use std::process::Command;

/// The test agent (`examples/kgp_agent.rs`), built by `cargo test`.
pub fn agent_exe() -> PathBuf {
    crate::common::use_kalaha_as_sandbox_helper();
    let exe = std::env::current_exe().expect("test executable path");
    let dir = exe.parent().and_then(|d| d.parent()).expect("target dir");
    let path = dir.join("examples").join("kgp_agent");
    if !path.exists() {
        // A filtered run (`cargo test --test it`) does not build the examples.
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
        let mut cmd = Command::new(cargo);
        cmd.args(["build", "--quiet", "--example", "kgp_agent"]);
        if !cfg!(debug_assertions) {
            cmd.arg("--release");
        }
        let _ = cmd.status();
    }
    assert!(path.exists(), "{} is missing", path.display());
    path
}
