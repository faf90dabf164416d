//! The sandbox an engine runs in: an allowlist of what it may write, nothing of the referee
//! or the user's terminal in view, and everything it starts ending with it.
//!
//! The referee does not set the sandbox up in its own forked child (a copy of the referee,
//! with its memory and arguments): it starts a small helper, this same executable with
//! [`HELPER_ARG`], which reads its [`Plan`] from descriptor 3, reports on descriptor 4 and
//! builds the sandbox in layers before it execs the engine's program:
//!
//! ```text
//! referee ── helper (shim: a session of its own, outside the namespaces; waits)
//!             └── init (pid 1 of the engine's PID namespace: reaps, passes the status up)
//!                  └── engine (pid 2: limits, no capability, Landlock, seccomp, then exec)
//! ```
//!
//! Without namespaces there is no init: the shim is a subreaper, and the engine leads a
//! session of its own, the group the referee signals, so that the shim outlives a SIGKILL
//! of it and kills every process the engine left.
//!
//! The layers, each independent of the others where the system allows it:
//! - **Namespaces** (user, PID, mount, IPC and network; the same without user namespaces
//!   for root): everything the engine starts dies with it, even after `kill -9` of the
//!   referee; it sees and signals no process outside; its `/proc` is its own; its `/dev` is
//!   its own (`null`, `zero`, `full`, `random`, `urandom`, `shm`: no terminal); every mount
//!   is read-only but its private `/tmp` and `/dev/shm` and the folders of `write=`; the
//!   run's results folder (or the shared folder that holds it) is covered by an empty
//!   folder; its network is its own loopback
//!   interface (no socket of the machine in view or in reach, kalaha's KGP ports included),
//!   unless the engine keeps the machine's network ([`Plan::share_network`]: `network=true`
//!   and KGP agents, which connect to kalaha).
//! - **Landlock** (Linux 5.13 and later): writes are refused outside the same allowlist,
//!   and (Linux 6.12) no signal or abstract socket reaches a process outside the engine's.
//! - **seccomp** (on x86_64 and arm64): no set-user-ID or set-group-ID file is made
//!   (`setid`).
//! - **Always**: a session with no controlling terminal, no descriptor of the referee but
//!   stdin, stdout and stderr, no capability and no way to gain one, resource limits.
//!
//! [`Layers::detect`] finds once per run what holds here, by running the helper in probe
//! mode through the same code; [`Layers::warning`] names what does not.

mod helper;
mod limits;
mod rules;
mod setid;
use crate::sys::sandbox as sys;

pub use helper::run_if_asked;
pub use limits::ResourceLimits;

use serde::{Deserialize, Serialize};
use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The first argument that makes this executable the sandbox helper.
pub const HELPER_ARG: &str = "__kalaha-sandbox";

/// Which namespaces an engine gets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Namespaces {
    /// A user, PID and mount namespace per engine.
    User,
    /// A PID and mount namespace per engine (root without user namespaces).
    Pid,
    /// None: the engine runs in a session of its own only.
    #[default]
    None,
}

/// What of the sandbox holds on this machine.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Layers {
    pub namespaces: Namespaces,
    /// A `/proc` of the engine's own PID namespace (else an empty one: nothing of the
    /// machine's processes in view).
    pub own_proc: bool,
    /// Every mount read-only but the allowlist.
    pub read_only: bool,
    /// Landlock refuses writes outside the allowlist.
    pub landlock: bool,
    /// Landlock keeps signals and abstract sockets inside the engine's processes.
    pub landlock_scopes: bool,
    /// A network namespace of the engine's own, with only its loopback interface (for the
    /// engines that do not keep the machine's network).
    #[serde(default)]
    pub network: bool,
    /// A seccomp filter refuses set-user-ID and set-group-ID modes (`chmod u+s`, `g+s`,
    /// files created with them): an engine makes no file that runs as its user.
    #[serde(default)]
    pub seccomp: bool,
}

impl Layers {
    /// What holds here, found once per process: the helper is run in probe mode, with user
    /// namespaces, then (root) without, then with none. `KALAHA_NO_NAMESPACES` skips the
    /// namespaces.
    pub fn detect() -> Layers {
        static DETECTED: OnceLock<Layers> = OnceLock::new();
        *DETECTED.get_or_init(|| {
            let modes: &[Namespaces] = if std::env::var_os("KALAHA_NO_NAMESPACES").is_some() {
                &[Namespaces::None]
            } else {
                &[Namespaces::User, Namespaces::Pid, Namespaces::None]
            };
            for &namespaces in modes {
                match probe(namespaces) {
                    Ok(layers) => return layers,
                    Err(e) => tracing::debug!(?namespaces, "sandbox probe: {e}"),
                }
            }
            Layers::default()
        })
    }

    /// Whether every layer holds.
    pub fn is_full(&self) -> bool {
        self.namespaces != Namespaces::None
            && self.own_proc
            && self.read_only
            && self.landlock
            && self.landlock_scopes
            && self.network
            && self.seccomp
    }

    /// One line naming what does not hold, when a promise of docs/reference/engines.md does not.
    pub fn warning(&self) -> Option<String> {
        let mut lost = Vec::new();
        if self.namespaces == Namespaces::None {
            lost.push(
                "they can read your terminal and the run's results folder, see every \
                 process and its command line, reach the machine's shared memory, message \
                 queues and sockets, connect to every port of 127.0.0.1 (kalaha's KGP ports \
                 too) and read the machine's connections in /proc/net, change the mode, owner and times of files your user \
                 owns, and processes they start outlive the run if it is killed; of the \
                 temporary folders only their TMPDIR is theirs to write (not /tmp nor \
                 /dev/shm)",
            );
        } else {
            if !self.own_proc {
                lost.push("they get an empty /proc");
            }
            if !self.network {
                lost.push(
                    "they share the machine's network: they can connect to every port of \
                     127.0.0.1 (kalaha's KGP ports too) and read the machine's connections \
                     in /proc/net",
                );
            }
        }
        let fs = if self.namespaces == Namespaces::None {
            false
        } else {
            self.read_only
        };
        if !fs && !self.landlock {
            lost.push("they can write wherever your user can");
        }
        if self.namespaces == Namespaces::None && !self.landlock_scopes {
            lost.push("they can signal your processes");
        }
        if !self.seccomp {
            lost.push(
                "they can make set-user-ID and set-group-ID files where they write, which \
                 run as your user for whoever runs them (as root, when kalaha runs as root)",
            );
        }
        if lost.is_empty() {
            return None;
        }
        let why = if std::env::var_os("KALAHA_NO_NAMESPACES").is_some() {
            "KALAHA_NO_NAMESPACES is set"
        } else {
            "this system allows no namespaces or Landlock for them"
        };
        Some(format!(
            "engines are not fully isolated ({why}): {}",
            lost.join("; ")
        ))
    }

    /// The warning for `--strict`: what is missing of the full sandbox.
    pub fn missing(&self) -> Vec<&'static str> {
        let mut m = Vec::new();
        if self.namespaces == Namespaces::None {
            m.push("namespaces");
        }
        if self.namespaces != Namespaces::None && !self.own_proc {
            m.push("a /proc of the engine's own");
        }
        if self.namespaces != Namespaces::None && !self.network {
            m.push("a network namespace of the engine's own");
        }
        if !self.read_only {
            m.push("read-only mounts");
        }
        if !self.landlock {
            m.push("Landlock (Linux 5.13)");
        }
        if !self.landlock_scopes {
            m.push("Landlock scopes (Linux 6.12)");
        }
        if !self.seccomp {
            m.push("a seccomp filter against set-id files");
        }
        m
    }
}

/// Whether a run needs the full sandbox.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Policy {
    /// Run with what holds; one warning line says what does not.
    #[default]
    BestEffort,
    /// Refuse to run unless every layer holds (`--strict`).
    Required,
}

impl Policy {
    pub fn from_strict(strict: bool) -> Policy {
        if strict {
            Policy::Required
        } else {
            Policy::BestEffort
        }
    }

    /// Before any engine starts: the error of `--strict` when a layer is missing, else
    /// `Ok` after the warning (once per process) of what does not hold.
    pub fn check(self) -> Result<(), String> {
        let layers = Layers::detect();
        if self == Policy::Required && !layers.is_full() {
            return Err(format!(
                "the engines' sandbox is not complete here (no {}) and the run requires it \
                 (--strict or sandbox = \"required\"); without that requirement the run \
                 goes on with what holds",
                layers.missing().join(", no ")
            ));
        }
        warn_once(&layers);
        Ok(())
    }
}

/// The warning of [`Layers::warning`], printed once per process.
pub(crate) fn warn_once(layers: &Layers) {
    static WARNED: std::sync::Once = std::sync::Once::new();
    if let Some(w) = layers.warning() {
        WARNED.call_once(|| tracing::warn!("{w}"));
    }
}

/// Everything the helper needs to start one engine in its sandbox.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct Plan {
    /// The engine's program (looked up in `PATH` when it has no `/`) and arguments.
    pub program: PathBuf,
    pub args: Vec<String>,
    /// The layers to build: those [`Layers::detect`] found.
    pub layers: Layers,
    /// Probe mode: build every layer that can be built, report which, exec nothing.
    pub probe: bool,
    pub limits: ResourceLimits,
    /// A folder covered with an empty read-only one (the run's results folder, or the
    /// shared folder of a test played by several workers that holds it).
    pub hidden: Option<PathBuf>,
    /// Folders the engine may write (`write=`), besides its private temporary ones.
    pub writable: Vec<PathBuf>,
    /// The private temporary folder on the host, where the engine has no mount namespace
    /// (else its `/tmp` is a file system of its own).
    pub host_tmp: Option<PathBuf>,
    /// Size of the private `/tmp` and `/dev/shm`, in bytes (`None`: the system's default).
    pub tmp_size: Option<u64>,
    /// The referee's pid: the helper stops if its parent is already another.
    pub parent: i32,
    /// The engine keeps the machine's network (`network=true`, and KGP agents, which
    /// connect to kalaha's port on 127.0.0.1) instead of a network namespace of its own.
    pub share_network: bool,
}

/// What the helper says on descriptor 4 before the engine's program runs: nothing when
/// all went well (the descriptor closes on exec), else one of these as a JSON line.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Report {
    /// A step failed; the engine does not start.
    Error(String),
    /// Probe mode: the layers that could be built.
    Layers(Layers),
    /// The engine's process group, where it is not the helper's (without namespaces the
    /// helper waits outside the engine's group, to kill what the engine leaves).
    Group(i32),
}

/// The program that is the helper: this executable unless [`set_helper`] said otherwise.
fn helper_program() -> io::Result<PathBuf> {
    match HELPER.get() {
        Some(p) => Ok(p.clone()),
        None => std::env::current_exe(),
    }
}

static HELPER: OnceLock<PathBuf> = OnceLock::new();

/// Names the `kalaha` executable that serves as the sandbox helper, for programs that use
/// this library and are not `kalaha` themselves (the tests). The first call wins.
pub fn set_helper(kalaha: impl Into<PathBuf>) {
    let _ = HELPER.set(kalaha.into());
}

/// An engine's process about to be started in its sandbox.
pub(crate) struct Launch {
    command: tokio::process::Command,
    plan: Plan,
    /// The private temporary folder on the host (no mount namespace), removed on drop.
    host_tmp: Option<tempfile::TempDir>,
}

impl Launch {
    /// The helper's command for `plan`'s program: set its stdio, environment and working
    /// folder on [`Launch::command`], then [`Launch::spawn`].
    pub(crate) fn new(mut plan: Plan) -> io::Result<Launch> {
        let mut command = tokio::process::Command::new(helper_program()?);
        command.arg(HELPER_ARG);
        let host_tmp = if plan.layers.namespaces == Namespaces::None && !plan.probe {
            use std::os::unix::fs::PermissionsExt;
            let dir = tempfile::Builder::new()
                .prefix("kalaha-engine-")
                .permissions(std::fs::Permissions::from_mode(0o700))
                .tempdir()?;
            plan.host_tmp = Some(dir.path().to_path_buf());
            command.env("TMPDIR", dir.path());
            Some(dir)
        } else {
            command.env("TMPDIR", "/tmp");
            None
        };
        plan.parent = sys::pid();
        Ok(Launch {
            command,
            plan,
            host_tmp,
        })
    }

    pub(crate) fn command(&mut self) -> &mut tokio::process::Command {
        &mut self.command
    }

    /// Starts the helper, hands it the plan and waits until the engine's program is
    /// exec'd (or a step fails: the error says which).
    pub(crate) fn spawn(self) -> io::Result<Spawned> {
        let Launch {
            mut command,
            plan,
            host_tmp,
        } = self;
        let (plan_read, mut plan_write) = io::pipe()?;
        let (mut report_read, report_write) = io::pipe()?;
        let (p, r) = (plan_read.as_raw_fd(), report_write.as_raw_fd());
        sys::pass_fds_to_helper(&mut command, p, r);
        let mut child = command.spawn()?;
        drop(command);
        drop((plan_read, report_write));
        let text = serde_json::to_vec(&plan).map_err(io::Error::other)?;
        // A helper that died early closes its end: its report says why.
        let _ = plan_write.write_all(&text);
        drop(plan_write);
        let mut said = Vec::new();
        (&mut report_read).take(1 << 20).read_to_end(&mut said)?;
        let said = String::from_utf8_lossy(&said);
        let reports: Vec<Report> = said
            .lines()
            .filter_map(|l| serde_json::from_str::<Report>(l).ok())
            .collect();
        let group = reports.iter().find_map(|r| match r {
            Report::Group(g) => Some(*g),
            _ => None,
        });
        let report = reports.into_iter().find(|r| !matches!(r, Report::Group(_)));
        let fail = |child: &mut tokio::process::Child, msg: String| {
            let _ = child.start_kill();
            io::Error::other(msg)
        };
        match report {
            None if plan.probe => Err(fail(
                &mut child,
                format!(
                    "the sandbox helper {} said nothing it was asked (is it kalaha?){}",
                    helper_program()?.display(),
                    if said.trim().is_empty() {
                        String::new()
                    } else {
                        format!(": {}", said.trim())
                    }
                ),
            )),
            None | Some(Report::Group(_)) => Ok(Spawned {
                child,
                host_tmp,
                layers: None,
                group,
            }),
            Some(Report::Error(e)) => Err(fail(&mut child, e)),
            Some(Report::Layers(layers)) => Ok(Spawned {
                child,
                host_tmp,
                layers: Some(layers),
                group,
            }),
        }
    }
}

/// A started engine's helper process, and its private temporary folder on the host.
pub(crate) struct Spawned {
    pub child: tokio::process::Child,
    pub host_tmp: Option<tempfile::TempDir>,
    layers: Option<Layers>,
    /// The engine's process group when it is not the helper's (no namespaces).
    pub group: Option<i32>,
}

/// Runs the helper in probe mode with `namespaces`: the layers it could build.
fn probe(namespaces: Namespaces) -> io::Result<Layers> {
    let plan = Plan {
        program: PathBuf::from("/"),
        layers: Layers {
            namespaces,
            own_proc: true,
            read_only: true,
            landlock: true,
            landlock_scopes: true,
            network: true,
            seccomp: true,
        },
        probe: true,
        ..Plan::default()
    };
    // A thread and runtime of their own: detection may be asked for inside a runtime.
    std::thread::scope(|s| {
        s.spawn(|| {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            runtime.block_on(async {
                let mut launch = Launch::new(plan)?;
                launch
                    .command()
                    .stdin(std::process::Stdio::null())
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null());
                let mut spawned = launch.spawn()?;
                let _ = spawned.child.wait().await;
                spawned
                    .layers
                    .ok_or_else(|| io::Error::other("the probe reported no layers"))
            })
        })
        .join()
        .unwrap_or_else(|_| Err(io::Error::other("the sandbox probe panicked")))
    })
}

/// The folder to hide from an engine: `private` with its links resolved, unless the
/// engine's program or working folder is inside it (the engine needs those), or it does
/// not exist.
pub(crate) fn folder_to_hide(
    private: &Path,
    program: &Path,
    dir: Option<&Path>,
) -> Option<PathBuf> {
    let private = std::fs::canonicalize(private).ok()?;
    let here = std::env::current_dir().ok()?;
    let dir = here.join(dir.unwrap_or(Path::new(".")));
    let mut needed = vec![dir.clone()];
    // A program named with a folder is found from the engine's folder or from here; a
    // bare name is looked up in PATH.
    if program.components().count() > 1 {
        needed.push(dir.join(program));
        needed.push(here.join(program));
    }
    let inside = needed.iter().any(|p| {
        std::fs::canonicalize(p)
            .unwrap_or_else(|_| p.clone())
            .starts_with(&private)
    });
    (!inside).then_some(private)
}

/// Sends `signal` to the process group `group` (an engine's: [`Spawned::group`]).
pub(crate) fn signal_group(group: i32, signal: i32) {
    sys::signal_group(group, signal);
}

#[cfg(test)]
mod tests;
