//! The system calls of the engines' sandbox (`crate::sandbox`), each behind a safe
//! function. Most run in the helper process (single-threaded, so forking and allocating
//! after a fork are sound); [`pass_fds_to_helper`] runs between fork and exec in the
//! referee's child and is async-signal-safe.

use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, RawFd};
use std::sync::atomic::{AtomicI32, Ordering};

fn check(r: libc::c_int) -> io::Result<()> {
    if r == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

fn c_path(path: &std::path::Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a path holds a NUL byte"))
}

/// Has `command`'s child, between fork and exec, put `plan` on descriptor 3 and `report`
/// on 4 for the helper.
pub(crate) fn pass_fds_to_helper(
    command: &mut tokio::process::Command,
    plan: RawFd,
    report: RawFd,
) {
    // SAFETY: `move_fds_for_helper` only calls fcntl and dup2, which are
    // async-signal-safe, and allocates nothing.
    unsafe {
        command.pre_exec(move || move_fds_for_helper(plan, report));
    }
}

/// In the referee's child, before exec: puts `plan` on descriptor 3 and `report` on 4 for
/// the helper. Async-signal-safe (fcntl and dup2 only).
fn move_fds_for_helper(plan: RawFd, report: RawFd) -> io::Result<()> {
    // SAFETY: fcntl and dup2 on descriptors this process holds; both are async-signal-safe.
    unsafe {
        // Copies above 9 first, so that neither target overwrites the other's source.
        let plan = libc::fcntl(plan, libc::F_DUPFD_CLOEXEC, 10);
        let report = libc::fcntl(report, libc::F_DUPFD_CLOEXEC, 10);
        if plan == -1 || report == -1 {
            return Err(io::Error::last_os_error());
        }
        // dup2 leaves the new descriptors open across exec.
        check(libc::dup2(plan, 3))?;
        check(libc::dup2(report, 4))?;
    }
    Ok(())
}

/// The descriptor `fd`, taken over by the caller (the helper's plan and report pipes).
pub(crate) fn adopt_fd(fd: RawFd) -> Option<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    // SAFETY: F_GETFD only checks that the descriptor is open; the helper's caller gave it
    // and nothing else in the helper owns it.
    unsafe {
        if libc::fcntl(fd, libc::F_GETFD) == -1 {
            return None;
        }
        libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
        Some(std::os::fd::OwnedFd::from_raw_fd(fd))
    }
}

pub(crate) fn uid() -> u32 {
    // SAFETY: getuid cannot fail.
    unsafe { libc::getuid() }
}

pub(crate) fn gid() -> u32 {
    // SAFETY: getgid cannot fail.
    unsafe { libc::getgid() }
}

pub(crate) fn is_root() -> bool {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() == 0 }
}

pub(crate) fn pid() -> i32 {
    // SAFETY: getpid cannot fail.
    unsafe { libc::getpid() }
}

pub(crate) fn parent_pid() -> i32 {
    // SAFETY: getppid cannot fail.
    unsafe { libc::getppid() }
}

/// A session of its own: a process group to signal as one, and no controlling terminal.
pub(crate) fn new_session() -> io::Result<()> {
    // SAFETY: setsid has no memory effects.
    check(unsafe { libc::setsid() })
}

/// SIGKILL when the parent dies.
pub(crate) fn die_with_parent() -> io::Result<()> {
    // SAFETY: prctl with these arguments has no memory effects.
    check(unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) })
}

/// Not dumpable: its `/proc` files belong to root and no process may trace it.
pub(crate) fn not_dumpable() -> io::Result<()> {
    // SAFETY: prctl with these arguments has no memory effects.
    check(unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0 as libc::c_ulong) })
}

/// Orphans of this process's descendants become its children.
pub(crate) fn become_subreaper() -> io::Result<()> {
    // SAFETY: prctl with these arguments has no memory effects.
    check(unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong) })
}

/// Marks every descriptor from `from` up close-on-exec.
pub(crate) fn close_on_exec_from(from: RawFd) {
    const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;
    // SAFETY: close_range and fcntl act on descriptors only.
    unsafe {
        if libc::syscall(
            libc::SYS_close_range,
            from as libc::c_uint,
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
        for fd in from..end {
            let flags = libc::fcntl(fd, libc::F_GETFD);
            if flags >= 0 && flags & libc::FD_CLOEXEC == 0 {
                libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC);
            }
        }
    }
}

/// Closes every descriptor except `keep` (-1 for none), standard ones included.
fn close_all_but(keep: [RawFd; 2]) {
    let mut keep = keep;
    keep.sort_unstable();
    let mut from: libc::c_uint = 0;
    // SAFETY: close_range closes descriptors only; nothing in this process uses the closed
    // ones afterwards (it only waits and exits).
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

pub(crate) const CLONE_NEWUSER: i32 = libc::CLONE_NEWUSER;
pub(crate) const CLONE_NEWPID: i32 = libc::CLONE_NEWPID;
pub(crate) const CLONE_NEWNS: i32 = libc::CLONE_NEWNS;
pub(crate) const CLONE_NEWIPC: i32 = libc::CLONE_NEWIPC;
pub(crate) const CLONE_NEWNET: i32 = libc::CLONE_NEWNET;

/// Brings the loopback interface `lo` up in this process's network namespace (a new one
/// has it down): the engine's own processes may talk to each other over 127.0.0.1.
pub(crate) fn loopback_up() -> io::Result<()> {
    // SAFETY: socket, ioctl and close on a descriptor this function owns, with an ifreq
    // that lives through both ioctls; the name is NUL-terminated within IFNAMSIZ.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        if fd == -1 {
            return Err(io::Error::last_os_error());
        }
        let mut req: libc::ifreq = std::mem::zeroed();
        for (to, from) in req.ifr_name.iter_mut().zip(b"lo\0") {
            *to = *from as libc::c_char;
        }
        let mut r = libc::ioctl(fd, libc::SIOCGIFFLAGS, &mut req);
        if r == 0 {
            req.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
            r = libc::ioctl(fd, libc::SIOCSIFFLAGS, &req);
        }
        let err = io::Error::last_os_error();
        libc::close(fd);
        if r == -1 {
            return Err(err);
        }
    }
    Ok(())
}

/// A new, empty session keyring for this process and what it execs: the keys of the
/// user's session stay out of reach.
pub(crate) fn new_session_keyring() -> io::Result<()> {
    const KEYCTL_JOIN_SESSION_KEYRING: libc::c_long = 1;
    // SAFETY: keyctl with a null name creates an anonymous keyring; no memory is passed.
    let r = unsafe {
        libc::syscall(
            libc::SYS_keyctl,
            KEYCTL_JOIN_SESSION_KEYRING,
            std::ptr::null::<libc::c_char>(),
        )
    };
    if r == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

pub(crate) fn unshare(flags: i32) -> io::Result<()> {
    // SAFETY: unshare has no memory effects.
    check(unsafe { libc::unshare(flags) })
}

/// Writes `text` to the file `path` in one write (the uid and gid maps need that).
pub(crate) fn write_whole(path: &CStr, text: &str) -> io::Result<()> {
    // SAFETY: open, write and close with valid pointers and lengths.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd == -1 {
            return Err(io::Error::last_os_error());
        }
        let n = libc::write(fd, text.as_ptr().cast(), text.len());
        let err = io::Error::last_os_error();
        libc::close(fd);
        if n != text.len() as isize {
            return Err(err);
        }
    }
    Ok(())
}

pub(crate) const MS_RDONLY: u64 = libc::MS_RDONLY;
pub(crate) const MS_NOSUID: u64 = libc::MS_NOSUID;
pub(crate) const MS_NODEV: u64 = libc::MS_NODEV;
pub(crate) const MS_NOEXEC: u64 = libc::MS_NOEXEC;
pub(crate) const MS_BIND: u64 = libc::MS_BIND;
pub(crate) const MS_REC: u64 = libc::MS_REC;
pub(crate) const MS_PRIVATE: u64 = libc::MS_PRIVATE;

/// mount(2); `source` and `fstype` may be absent, `data` is the file system's options.
pub(crate) fn mount(
    source: Option<&str>,
    target: &std::path::Path,
    fstype: Option<&str>,
    flags: u64,
    data: Option<&str>,
) -> io::Result<()> {
    let text = |s: Option<&str>| s.map(|s| CString::new(s).expect("no NUL"));
    let (source, fstype, data) = (text(source), text(fstype), text(data));
    let target = c_path(target)?;
    let ptr = |s: &Option<CString>| s.as_ref().map_or(std::ptr::null(), |s| s.as_ptr());
    // SAFETY: every pointer is a valid NUL-terminated string or null, as mount(2) allows.
    check(unsafe {
        libc::mount(
            ptr(&source),
            target.as_ptr(),
            ptr(&fstype),
            flags as libc::c_ulong,
            ptr(&data).cast(),
        )
    })
}

/// Sets (or clears) the read-only flag of the mount at `path`, and with `recursive` of
/// every mount below it (mount_setattr(2), Linux 5.12).
pub(crate) fn set_read_only(
    path: &std::path::Path,
    read_only: bool,
    recursive: bool,
) -> io::Result<()> {
    #[repr(C)]
    struct MountAttr {
        attr_set: u64,
        attr_clr: u64,
        propagation: u64,
        userns_fd: u64,
    }
    const MOUNT_ATTR_RDONLY: u64 = 0x0000_0001;
    const AT_RECURSIVE: libc::c_uint = 0x8000;
    let attr = MountAttr {
        attr_set: if read_only { MOUNT_ATTR_RDONLY } else { 0 },
        attr_clr: if read_only { 0 } else { MOUNT_ATTR_RDONLY },
        propagation: 0,
        userns_fd: 0,
    };
    let path = c_path(path)?;
    let flags = if recursive { AT_RECURSIVE } else { 0 };
    // SAFETY: a valid path and a mount_attr of the size given.
    let r = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            path.as_ptr(),
            flags,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    if r == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// A path that names the file open on `fd` (for bind-mounting a file whose path is
/// covered by then).
pub(crate) fn fd_path(fd: BorrowedFd<'_>) -> std::path::PathBuf {
    format!("/proc/self/fd/{}", fd.as_raw_fd()).into()
}

/// The resource limit `resource` set to `soft` and `hard`.
pub(crate) fn set_limit(resource: Limit, soft: u64, hard: u64) -> io::Result<()> {
    let r = libc::rlimit {
        rlim_cur: soft as libc::rlim_t,
        rlim_max: hard as libc::rlim_t,
    };
    let resource = match resource {
        Limit::AddressSpace => libc::RLIMIT_AS,
        Limit::Processes => libc::RLIMIT_NPROC,
        Limit::CpuSeconds => libc::RLIMIT_CPU,
    };
    // SAFETY: setrlimit reads the struct only.
    check(unsafe { libc::setrlimit(resource, &r) })
}

/// The resource limits the sandbox sets.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Limit {
    AddressSpace,
    Processes,
    CpuSeconds,
}

/// Leaves this process (and what it execs) no capability and no way to gain one: an engine
/// with `CAP_SYS_ADMIN` could undo its mounts. Emptying the bounding set makes `exec`
/// grant none, even to uid 0. Fails when root keeps `CAP_SYS_ADMIN` all the same.
pub(crate) fn drop_capabilities() -> io::Result<()> {
    const CAP_SYS_ADMIN: libc::c_ulong = 21;
    let (zero, one): (libc::c_ulong, libc::c_ulong) = (0, 1);
    // SAFETY: prctl with integer arguments has no memory effects.
    unsafe {
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
            return Err(io::Error::from_raw_os_error(libc::EPERM));
        }
    }
    Ok(())
}

/// Which side of a fork this process is.
pub(crate) enum Forked {
    Child,
    Parent(i32),
}

pub(crate) fn fork() -> io::Result<Forked> {
    // SAFETY: the helper is single-threaded, so the child may run any code.
    match unsafe { libc::fork() } {
        -1 => Err(io::Error::last_os_error()),
        0 => Ok(Forked::Child),
        pid => Ok(Forked::Parent(pid)),
    }
}

/// Where a waiting parent reports the status it passes up (-1: nowhere, it exits with it).
static STATUS_FD: AtomicI32 = AtomicI32::new(-1);

/// Forks. The child returns; the parent becomes a waiter: it closes every descriptor but
/// a status pipe, ignores the polite signals, reaps every child that ends (orphans too,
/// when it is a PID namespace's init or a subreaper) until `child` ends, calls `after`,
/// and passes the child's status up: through the status pipe to its own waiting parent,
/// and as its own end.
pub(crate) fn fork_and_wait(after: fn()) -> io::Result<()> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe2 writes two descriptors into the array.
    check(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) })?;
    let (read_end, write_end) = (fds[0], fds[1]);
    match fork()? {
        Forked::Child => {
            // SAFETY: closes a descriptor this process holds and uses no more.
            unsafe { libc::close(read_end) };
            STATUS_FD.store(write_end, Ordering::Relaxed);
            Ok(())
        }
        Forked::Parent(child) => {
            close_all_but([read_end, STATUS_FD.load(Ordering::Relaxed)]);
            ignore_polite_signals();
            let status = reap_until(child);
            after();
            // The status of the engine, passed up by the child if it was a waiter too.
            let mut passed = 0 as libc::c_int;
            // SAFETY: reads at most the size of the integer into it.
            let n = unsafe {
                libc::read(
                    read_end,
                    (&mut passed as *mut libc::c_int).cast(),
                    std::mem::size_of::<libc::c_int>(),
                )
            };
            let status = if n == std::mem::size_of::<libc::c_int>() as isize {
                passed
            } else {
                status
            };
            pass_up(status)
        }
    }
}

fn ignore_polite_signals() {
    for s in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP, libc::SIGQUIT] {
        // SAFETY: SIG_IGN for a catchable signal.
        unsafe { libc::signal(s, libc::SIG_IGN) };
    }
}

/// Reaps children until `child` ends; its wait status.
fn reap_until(child: i32) -> libc::c_int {
    loop {
        let mut status = 0;
        // SAFETY: waitpid writes the status into the integer.
        let pid = unsafe { libc::waitpid(-1, &mut status, 0) };
        if pid == child {
            return status;
        }
        if pid == -1 && io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            // SAFETY: _exit ends the process.
            unsafe { libc::_exit(120) };
        }
    }
}

/// SIGKILLs every descendant of this process and reaps what comes to it, until none is
/// left: the engine's processes that outlived it, however deep (a chain of processes each
/// the parent of the next is killed in one pass, not one level a pass).
pub(crate) fn kill_children() {
    let me = pid();
    for _ in 0..1000 {
        let below = descendants(me);
        for &p in &below {
            // SAFETY: kill has no memory effects; the process descends from this one.
            unsafe { libc::kill(p, libc::SIGKILL) };
        }
        // Reap whatever ended.
        loop {
            let mut status = 0;
            // SAFETY: waitpid writes the status into the integer.
            let r = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
            if r <= 0 {
                break;
            }
        }
        if below.is_empty() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
}

/// The processes below `root` in the process tree, as `/proc` shows it now.
fn descendants(root: i32) -> Vec<i32> {
    let mut children: std::collections::HashMap<i32, Vec<i32>> = Default::default();
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for e in dir.flatten() {
            let Some(p) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
                continue;
            };
            let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
            // The parent is the second field after the name, which ends at the last ')'.
            let ppid = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                .and_then(|s| s.parse::<i32>().ok());
            if let Some(ppid) = ppid {
                children.entry(ppid).or_default().push(p);
            }
        }
    }
    let mut found = std::collections::HashSet::new();
    let mut next = vec![root];
    while let Some(p) = next.pop() {
        for &c in children.get(&p).map_or(&[][..], Vec::as_slice) {
            // A pid seen twice (reused while /proc was read) would loop.
            if c != root && found.insert(c) {
                next.push(c);
            }
        }
    }
    found.into_iter().collect()
}

/// Ends this waiting process with the engine's `status`: written to the status pipe for
/// the parent, and mirrored as this process's own end.
fn pass_up(status: libc::c_int) -> ! {
    let fd = STATUS_FD.load(Ordering::Relaxed);
    // SAFETY: plain system calls on integers and a local signal set.
    unsafe {
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

/// Sends `signal` to the process group `group`.
pub(crate) fn signal_group(group: i32, signal: i32) {
    if group > 1 {
        // SAFETY: killpg has no memory-safety preconditions.
        unsafe { libc::killpg(group, signal) };
    }
}

/// Installs the seccomp filter `program` on this process and what it execs or starts
/// (`crate::sandbox`'s filter against set-id files). Needs `no_new_privs`, set by
/// [`drop_capabilities`].
pub(crate) fn install_seccomp_filter(program: &[libc::sock_filter]) -> io::Result<()> {
    let len = u16::try_from(program.len())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "the filter is too long"))?;
    let prog = libc::sock_fprog {
        len,
        filter: program.as_ptr().cast_mut(),
    };
    // SAFETY: the kernel copies `len` instructions from the pointer, which `program`
    // holds for the duration of the call, and keeps no reference to them.
    check(unsafe {
        libc::prctl(
            libc::PR_SET_SECCOMP,
            libc::SECCOMP_MODE_FILTER as libc::c_ulong,
            &prog as *const libc::sock_fprog,
        )
    })
}
