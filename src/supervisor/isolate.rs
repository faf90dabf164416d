//! Running an engine so that everything it starts dies with it and it can neither see nor
//! signal the referee or other engines.
//!
//! On Linux each engine runs in a new PID namespace (with a user namespace when one can be
//! made, so it works unprivileged as well as for root in a container) and with its own
//! `/proc`. Three processes make up one engine:
//!
//! ```text
//! referee ── shim (the process the referee sees; its group is the engine's group)
//!             └── init (pid 1 of the namespace: reaps orphans)
//!                  └── engine (pid 2: the program, with its resource limits)
//! ```
//!
//! The shim and init ignore the polite signals, wait for the engine and pass its exit
//! status up, so the referee sees the engine's own status. Each level dies with its parent
//! (`PR_SET_PDEATHSIG`), and when init dies the kernel kills every process left in the
//! namespace: after `kill -9` of the referee, the shim, init, the engine and whatever the
//! engine started (daemons included) all die. A signal from the engine cannot reach outside
//! its namespace.
//!
//! In the engine's mount namespace the results folder is covered with an empty read-only
//! tmpfs (`folder_to_hide`), so the engine can neither read nor change the games, the
//! other engines' logs or the lock. Every descriptor from 3 up is marked close-on-exec
//! before the engine's program starts, so none of the referee's files and pipes reaches it.
//!
//! Where namespaces cannot be made, engines run in their own process group only (they die
//! with the referee, but their own children may not; nothing is hidden), and
//! [`Isolation::warning`] says so.

use super::EngineCommand;
use std::ffi::CString;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

/// Per-engine resource limits, set on the engine's process and inherited by its children.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
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
        // SAFETY: geteuid cannot fail.
        let root = unsafe { libc::geteuid() } == 0;
        let n = self.processes.filter(|_| root)?;
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

/// How engines are isolated on this machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Isolation {
    /// A user, PID and mount namespace per engine.
    UserNamespace,
    /// A PID and mount namespace per engine (root without user namespaces).
    PidNamespace,
    /// A process group per engine only.
    ProcessGroup,
}

impl Isolation {
    /// The best isolation this machine allows (tried once per process).
    pub fn detect() -> Isolation {
        static DETECTED: OnceLock<Isolation> = OnceLock::new();
        *DETECTED.get_or_init(|| {
            if std::env::var_os("KALAHA_NO_NAMESPACES").is_some() {
                return Isolation::ProcessGroup;
            }
            for (mode, flags) in [
                (Isolation::UserNamespace, USER_FLAGS),
                (Isolation::PidNamespace, PID_FLAGS),
            ] {
                if can_unshare(flags) {
                    return mode;
                }
            }
            if let Some(w) = Isolation::ProcessGroup.warning() {
                tracing::warn!("{w}");
            }
            Isolation::ProcessGroup
        })
    }

    /// A one-line warning when engines are not fully isolated.
    pub fn warning(self) -> Option<&'static str> {
        (self == Isolation::ProcessGroup).then_some(
            "this machine allows no PID namespace for engines: they run in process groups, \
             so processes an engine starts in a new session may outlive it, and an engine \
             could signal the referee",
        )
    }
}

const PID_FLAGS: libc::c_int = libc::CLONE_NEWPID | libc::CLONE_NEWNS;
const USER_FLAGS: libc::c_int = PID_FLAGS | libc::CLONE_NEWUSER;

/// Whether a child process may make these namespaces.
fn can_unshare(flags: libc::c_int) -> bool {
    // SAFETY: the child only calls unshare and _exit, both async-signal-safe.
    unsafe {
        match libc::fork() {
            -1 => false,
            0 => libc::_exit(if libc::unshare(flags) == 0 { 0 } else { 1 }),
            pid => {
                let mut status = 0;
                while libc::waitpid(pid, &mut status, 0) == -1
                    && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
                {
                }
                libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0
            }
        }
    }
}

/// Everything the child needs, prepared before the fork (no allocation happens after it).
pub(crate) struct Plan {
    mode: Isolation,
    uid_map: CString,
    gid_map: CString,
    limits: ResourceLimits,
    /// The folder covered with an empty read-only one in the engine's mount namespace.
    hidden: Option<CString>,
}

impl Plan {
    /// The plan for `cmd`, hiding the folder `private` from it (see [`folder_to_hide`]).
    pub(crate) fn new(
        mode: Isolation,
        limits: ResourceLimits,
        cmd: &EngineCommand,
        private: Option<&Path>,
    ) -> Plan {
        // SAFETY: getuid and getgid cannot fail.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        let hidden = private
            .filter(|_| mode != Isolation::ProcessGroup)
            .and_then(|p| folder_to_hide(p, cmd))
            .and_then(|p| CString::new(p.into_os_string().into_encoded_bytes()).ok());
        Plan {
            mode,
            uid_map: CString::new(format!("{uid} {uid} 1")).expect("no NUL"),
            gid_map: CString::new(format!("{gid} {gid} 1")).expect("no NUL"),
            limits,
            hidden,
        }
    }

    /// Runs in the forked child just before `exec`: sets up the namespaces and limits. In
    /// the shim and in init it never returns; it returns in the engine's process.
    ///
    /// # Safety
    /// Only for a `pre_exec` hook: it calls async-signal-safe functions only.
    pub(crate) unsafe fn apply(&self) -> io::Result<()> {
        unsafe {
            // A session of its own: a process group to signal as one, and no controlling
            // terminal, so that the engine cannot open /dev/tty to write past the
            // referee's cleaning of its text or push keystrokes into the user's shell.
            check(libc::setsid())?;
            close_on_exec_from_3();
            die_with_parent()?;
            if self.mode != Isolation::ProcessGroup {
                let flags = if self.mode == Isolation::UserNamespace {
                    USER_FLAGS
                } else {
                    PID_FLAGS
                };
                check(libc::unshare(flags))?;
                if self.mode == Isolation::UserNamespace {
                    write_file(c"/proc/self/setgroups", c"deny")?;
                    write_file(c"/proc/self/gid_map", &self.gid_map)?;
                    write_file(c"/proc/self/uid_map", &self.uid_map)?;
                }
                fork_and_wait()?;
                // Now pid 1 of the new namespace.
                die_with_parent()?;
                let none: *const libc::c_char = std::ptr::null();
                check(libc::mount(
                    none,
                    c"/".as_ptr(),
                    none,
                    libc::MS_REC | libc::MS_PRIVATE,
                    std::ptr::null(),
                ))?;
                // Without a fresh /proc the engine could still list the machine's processes
                // (not signal them); carry on if the mount is refused.
                let _ = libc::mount(
                    c"proc".as_ptr(),
                    c"/proc".as_ptr(),
                    c"proc".as_ptr(),
                    libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                    std::ptr::null(),
                );
                if let Some(dir) = &self.hidden {
                    // Refused: the engine does not start, rather than see the results.
                    check(libc::mount(
                        c"kalaha-hidden".as_ptr(),
                        dir.as_ptr(),
                        c"tmpfs".as_ptr(),
                        libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                        c"size=4k,mode=0555".as_ptr().cast(),
                    ))?;
                }
                fork_and_wait()?;
                die_with_parent()?;
            }
            self.set_limits()?;
            drop_capabilities()
        }
    }

    unsafe fn set_limits(&self) -> io::Result<()> {
        let set = |resource, soft: u64, hard: u64| -> io::Result<()> {
            let r = libc::rlimit {
                rlim_cur: soft as libc::rlim_t,
                rlim_max: hard as libc::rlim_t,
            };
            // SAFETY: setrlimit reads the struct only.
            check(unsafe { libc::setrlimit(resource, &r) })
        };
        if let Some(m) = self.limits.memory {
            set(libc::RLIMIT_AS, m, m)?;
        }
        if let Some(n) = self.limits.processes {
            set(libc::RLIMIT_NPROC, n, n)?;
        }
        if let Some(t) = self.limits.cpu {
            let s = t.as_secs().max(1);
            set(libc::RLIMIT_CPU, s, s + 1)?;
        }
        Ok(())
    }
}

/// The folder to hide from the engine of `cmd`: `private` with its links resolved, unless
/// the engine's program or working folder is inside it (the engine needs those), or it
/// does not exist.
pub(crate) fn folder_to_hide(private: &Path, cmd: &EngineCommand) -> Option<PathBuf> {
    let private = std::fs::canonicalize(private).ok()?;
    let here = std::env::current_dir().ok()?;
    let dir = here.join(cmd.dir.as_deref().unwrap_or(Path::new(".")));
    let mut needed = vec![dir.clone()];
    // A program named with a folder is found from the engine's folder or from here; a
    // bare name is looked up in PATH.
    if cmd.program.components().count() > 1 {
        needed.push(dir.join(&cmd.program));
        needed.push(here.join(&cmd.program));
    }
    let inside = needed.iter().any(|p| {
        std::fs::canonicalize(p)
            .unwrap_or_else(|_| p.clone())
            .starts_with(&private)
    });
    (!inside).then_some(private)
}

/// Marks every descriptor from 3 up close-on-exec, so that no file or pipe of the referee
/// (results, the folder's lock, other engines' pipes) reaches the engine, whoever opened it
/// and however.
unsafe fn close_on_exec_from_3() {
    const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;
    unsafe {
        if libc::syscall(
            libc::SYS_close_range,
            3 as libc::c_uint,
            libc::c_uint::MAX,
            CLOSE_RANGE_CLOEXEC,
        ) == 0
        {
            return;
        }
        // Linux before 5.11: each descriptor up to the limit on open files.
        let mut lim: libc::rlimit = std::mem::zeroed();
        let end = if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 {
            lim.rlim_cur.min(1 << 20) as libc::c_int
        } else {
            1 << 16
        };
        for fd in 3..end {
            let flags = libc::fcntl(fd, libc::F_GETFD);
            if flags >= 0 && flags & libc::FD_CLOEXEC == 0 {
                libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC);
            }
        }
    }
}

/// Leaves the engine no capability, in its namespaces or (run by root) on the machine: an
/// engine with `CAP_SYS_ADMIN` could unmount what hides the results folder. Emptying the
/// bounding set makes `exec` grant none, even to uid 0; without `CAP_SETPCAP` (a user
/// outside namespaces) there is nothing to drop, and no new privilege can be gained.
///
/// # Safety
/// Only for a `pre_exec` hook: it calls async-signal-safe functions only.
unsafe fn drop_capabilities() -> io::Result<()> {
    // From linux/capability.h.
    const CAP_SYS_ADMIN: libc::c_ulong = 21;
    unsafe {
        // prctl takes its arguments as unsigned longs.
        let (zero, one): (libc::c_ulong, libc::c_ulong) = (0, 1);
        check(libc::prctl(
            libc::PR_SET_NO_NEW_PRIVS,
            one,
            zero,
            zero,
            zero,
        ))?;
        // Refused for capabilities past the kernel's last (EINVAL) and without CAP_SETPCAP
        // (EPERM, when there are none to drop).
        for cap in 0..64 as libc::c_ulong {
            let _ = libc::prctl(libc::PR_CAPBSET_DROP, cap, zero, zero, zero);
        }
        let clear_all = libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong;
        let _ = libc::prctl(libc::PR_CAP_AMBIENT, clear_all, zero, zero, zero);
        if libc::geteuid() == 0
            && libc::prctl(libc::PR_CAPBSET_READ, CAP_SYS_ADMIN, zero, zero, zero) > 0
        {
            // Root could not drop them: the engine would run with every power.
            return Err(io::Error::from_raw_os_error(libc::EPERM));
        }
    }
    Ok(())
}

fn check(r: libc::c_int) -> io::Result<()> {
    if r == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

unsafe fn die_with_parent() -> io::Result<()> {
    // SAFETY: prctl with these arguments has no memory effects.
    check(unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) })
}

unsafe fn write_file(path: &std::ffi::CStr, text: &std::ffi::CStr) -> io::Result<()> {
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd == -1 {
            return Err(io::Error::last_os_error());
        }
        let bytes = text.to_bytes();
        let n = libc::write(fd, bytes.as_ptr().cast(), bytes.len());
        libc::close(fd);
        if n != bytes.len() as isize {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

/// Forks. The child returns; the parent closes every file descriptor but a status pipe,
/// ignores the polite signals, waits for the child and then passes its exit status up
/// (its own parent learns it through the pipe the child's status arrives in, or as this
/// process's own exit).
unsafe fn fork_and_wait() -> io::Result<()> {
    unsafe {
        let mut fds = [0 as libc::c_int; 2];
        check(libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC))?;
        let (read_end, write_end) = (fds[0], fds[1]);
        match libc::fork() {
            -1 => Err(io::Error::last_os_error()),
            0 => {
                // The child keeps the write end to report its child's status, if it
                // becomes a waiting parent itself; else it closes on exec.
                libc::close(read_end);
                STATUS_FD.store(write_end, Ordering::Relaxed);
                Ok(())
            }
            child => {
                libc::close(write_end);
                close_all_but(read_end, STATUS_FD.load(Ordering::Relaxed));
                for s in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP, libc::SIGQUIT] {
                    libc::signal(s, libc::SIG_IGN);
                }
                let mut status = 0;
                while libc::waitpid(child, &mut status, 0) == -1 {
                    if io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                        libc::_exit(120);
                    }
                }
                // The status of the engine, passed up by the child if it was a waiting
                // parent too; else the child's own status.
                let mut passed = 0 as libc::c_int;
                let n = libc::read(
                    read_end,
                    (&mut passed as *mut libc::c_int).cast(),
                    std::mem::size_of::<libc::c_int>(),
                );
                if n == std::mem::size_of::<libc::c_int>() as isize {
                    status = passed;
                }
                pass_up(status)
            }
        }
    }
}

/// Where a waiting parent reports the status it passes up (-1: nowhere, it exits with it).
/// Only the single-threaded forked children set it.
static STATUS_FD: AtomicI32 = AtomicI32::new(-1);

/// Closes every descriptor except `keep` and `also` (either may be -1).
unsafe fn close_all_but(keep: libc::c_int, also: libc::c_int) {
    let mut keep = [keep, also];
    keep.sort_unstable();
    let mut from: libc::c_uint = 0;
    unsafe {
        for k in keep {
            if k >= 0 {
                let k = k as libc::c_uint;
                if k > from {
                    libc::syscall(libc::SYS_close_range, from, k - 1, 0);
                }
                from = k + 1;
            }
        }
        libc::syscall(libc::SYS_close_range, from, libc::c_uint::MAX, 0);
    }
}

/// Ends this waiting process with the engine's `status`: written to the status pipe for
/// the parent, and mirrored as this process's own end.
unsafe fn pass_up(status: libc::c_int) -> ! {
    unsafe {
        let fd = STATUS_FD.load(Ordering::Relaxed);
        if fd >= 0 {
            libc::write(
                fd,
                (&status as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>(),
            );
        }
        if libc::WIFSIGNALED(status) {
            let sig = libc::WTERMSIG(status);
            libc::signal(sig, libc::SIG_DFL);
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, sig);
            libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
            // pid 1 of a namespace cannot kill itself this way; its parent reads the pipe.
            libc::kill(libc::getpid(), sig);
            libc::_exit(128 + sig);
        }
        libc::_exit(if libc::WIFEXITED(status) {
            libc::WEXITSTATUS(status)
        } else {
            121
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_results_folder_is_hidden_unless_the_engine_lives_in_it() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("results");
        std::fs::create_dir_all(out.join("engines")).unwrap();
        let real = std::fs::canonicalize(&out).unwrap();
        let elsewhere = EngineCommand::new("/bin/true", Vec::<String>::new());
        assert_eq!(folder_to_hide(&out, &elsewhere), Some(real.clone()));
        let by_path = EngineCommand::new("sh", Vec::<String>::new());
        assert_eq!(folder_to_hide(&out, &by_path), Some(real));
        let inside = EngineCommand::new(out.join("engines/e"), Vec::<String>::new());
        assert_eq!(folder_to_hide(&out, &inside), None);
        let mut working_inside = elsewhere.clone();
        working_inside.dir = Some(out.join("engines"));
        assert_eq!(folder_to_hide(&out, &working_inside), None);
        assert_eq!(folder_to_hide(&dir.path().join("none"), &elsewhere), None);
    }

    #[test]
    fn the_process_limit_is_said_not_to_hold_for_root() {
        let limits = ResourceLimits {
            processes: Some(8),
            ..ResourceLimits::default()
        };
        // SAFETY: geteuid cannot fail.
        let root = unsafe { libc::geteuid() } == 0;
        assert_eq!(limits.warning().is_some(), root);
        assert_eq!(ResourceLimits::default().warning(), None);
    }
}
