//! Engine processes: one [`Engine`] handle per process, speaking the protocol of
//! `protocol.md` with a deadline on every request, and a clean shutdown.
//!
//! The layers, from the bytes up:
//! - [`lines`]: bytes to lines, with a hard limit on a line's length (pure);
//! - `process`: spawning an engine in its sandbox ([`crate::sandbox`]), reading and
//!   writing its pipes, its log ([`log`]), signals, reaping, kill on drop;
//! - `engine`: the requests (handshake, options, ping, games, moves), each racing its
//!   answer against its deadline and the process's exit, and the staged shutdown (`quit`,
//!   the quit grace, SIGTERM to the engine's group, the term grace, SIGKILL).

mod engine;
mod error;
pub(crate) mod lines;
pub(crate) mod log;
mod process;
pub mod transcript;

pub use crate::sandbox::ResourceLimits;
pub use engine::{Engine, EngineNote, MALFORMED, rename_logs};
pub use error::{EngineError, ExitKind, Stopped};
pub use log::LogPlace;
pub use process::{Process, Stdout};
pub use transcript::Transcript;

use std::path::PathBuf;
use std::time::Duration;

/// How to start an engine.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EngineCommand {
    pub program: PathBuf,
    pub args: Vec<String>,
    /// Working directory (default: the current one).
    pub dir: Option<PathBuf>,
    /// Extra environment variables.
    pub env: Vec<(String, String)>,
}

impl EngineCommand {
    /// A program with arguments, in the current directory.
    pub fn new(
        program: impl Into<PathBuf>,
        args: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        EngineCommand {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
            dir: None,
            env: Vec::new(),
        }
    }

    /// A built-in engine: this executable with `engine NAME` (so only meaningful when
    /// called from the `kalaha` binary; tests use `env!("CARGO_BIN_EXE_kalaha")`).
    pub fn builtin(name: &str) -> std::io::Result<Self> {
        Ok(EngineCommand::new(
            std::env::current_exe()?,
            ["engine", name],
        ))
    }

    /// The command line, for messages.
    pub fn display(&self) -> String {
        let mut s = self.program.display().to_string();
        for a in &self.args {
            s.push(' ');
            s.push_str(a);
        }
        s
    }
}

/// Timeouts and limits of one engine.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Time to answer the first `hello` (slow-loading engines are common).
    pub startup_timeout: Duration,
    /// Time to answer a `ping` (also bounds writing one line to the engine).
    pub ping_timeout: Duration,
    /// Time to exit after `quit` before SIGTERM.
    pub quit_grace: Duration,
    /// Time to exit after SIGTERM before SIGKILL.
    pub term_grace: Duration,
    /// Longest accepted line from the engine, in bytes (without its line ending).
    pub line_limit: usize,
    /// Where the engine's log goes (`None`: nowhere; what stderr said is still kept
    /// for error messages).
    pub logs: Option<LogPlace>,
    /// Also keep a transcript of every line sent and received, beside the log.
    pub transcript: bool,
    /// `info` lines kept per move (the latest ones); the rest are counted.
    pub info_cap: usize,
    /// Resource limits of the engine's processes.
    pub limits: ResourceLimits,
    /// The folders to hide from the engine, widest first (the shared folder of a test
    /// played by several workers, then the results folder): where engines run in a mount
    /// namespace, an empty read-only folder covers the first that holds neither the
    /// engine's program nor its working folder, so the engine can neither read nor change
    /// the games, the other engines' logs or the lock.
    pub private_dirs: Vec<PathBuf>,
    /// Folders the engine may write besides its private temporary ones (`write=`).
    pub writable: Vec<PathBuf>,
    /// The engine keeps the machine's network (`network=true`; KGP agents) instead of a
    /// network namespace of its own.
    pub network: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            startup_timeout: Duration::from_secs(10),
            ping_timeout: Duration::from_secs(5),
            quit_grace: Duration::from_secs(1),
            term_grace: Duration::from_secs(1),
            line_limit: crate::protocol::DEFAULT_LINE_LIMIT,
            logs: None,
            transcript: false,
            info_cap: 100,
            limits: ResourceLimits::default(),
            private_dirs: Vec::new(),
            writable: Vec::new(),
            network: false,
        }
    }
}
