//! The sandbox helper: this executable started with [`super::HELPER_ARG`]. It reads its
//! plan, builds the sandbox layer by layer and execs the engine's program, or reports on
//! descriptor 4 the step that failed. A fresh, single-threaded process: it may fork and
//! allocate freely, and holds nothing of the referee but its plan.

use super::{HELPER_ARG, Layers, Namespaces, Plan, Report, rules, setid};
use crate::sys::sandbox::{self as sys, Limit};
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// Becomes the sandbox helper, and never returns, when this process was started as one;
/// else returns at once. `kalaha`'s `main` calls it before anything else.
pub fn run_if_asked() {
    if std::env::args_os().nth(1).is_some_and(|a| a == HELPER_ARG) {
        run()
    }
}

fn run() -> ! {
    let (Some(plan_fd), Some(report_fd)) = (sys::adopt_fd(3), sys::adopt_fd(4)) else {
        eprintln!("kalaha: {HELPER_ARG} is started by the referee only");
        std::process::exit(2);
    };
    let mut report = std::fs::File::from(report_fd);
    let err = match read_plan(plan_fd).and_then(|plan| build(&plan, &mut report)) {
        Ok(never) => match never {},
        Err(e) => e,
    };
    let line = serde_json::to_string(&Report::Error(err)).unwrap_or_default();
    let _ = writeln!(report, "{line}");
    std::process::exit(125)
}

fn read_plan(fd: OwnedFd) -> Result<Plan, String> {
    let mut text = Vec::new();
    std::fs::File::from(fd)
        .take(16 << 20)
        .read_to_end(&mut text)
        .map_err(|e| format!("the sandbox helper failed to read its plan: {e}"))?;
    serde_json::from_slice(&text)
        .map_err(|e| format!("the sandbox helper failed to read its plan: {e}"))
}

/// The steps, in order; returns only on failure (the engine's program replaces this
/// process, or in probe mode the layers are reported and the process exits).
fn build(plan: &Plan, report: &mut std::fs::File) -> Result<std::convert::Infallible, String> {
    fn step(what: &str) -> impl Fn(std::io::Error) -> String + '_ {
        move |e| format!("failed to {what}: {e}")
    }
    sys::new_session().map_err(step("start a session of its own"))?;
    sys::die_with_parent().map_err(step("tie the engine to the referee"))?;
    if sys::parent_pid() != plan.parent {
        // The referee is gone already.
        std::process::exit(125);
    }
    // Nothing of the referee's but stdin, stdout, stderr and the report reaches the engine.
    sys::close_on_exec_from(3);
    let mut layers = plan.layers;
    let cwd = std::env::current_dir().ok();
    if layers.namespaces == Namespaces::None {
        // A subreaper: orphans of the engine come to this process, which kills them when
        // the engine ends (unless it is killed itself: only namespaces hold then).
        sys::become_subreaper().map_err(step("become a subreaper"))?;
        sys::fork_and_wait(sys::kill_children).map_err(step("fork the engine"))?;
        sys::die_with_parent().map_err(step("tie the engine to its waiter"))?;
        // The engine leads a session of its own, which the referee signals (the group
        // given in the report): the waiter outlives a SIGKILL of it and kills what the
        // engine left. As a session leader the engine cannot join the waiter's group.
        sys::new_session().map_err(step("start the engine's session"))?;
    } else {
        enter_namespaces(plan, &mut layers)?;
        // pid 1 of the new namespace from here; the shim waits and passes the status up.
        sys::die_with_parent().map_err(step("tie init to the shim"))?;
        sys::not_dumpable().map_err(step("make init untraceable"))?;
        build_file_system(plan, &mut layers)?;
        if let Some(cwd) = &cwd {
            // Again, through the new mounts: a folder of `write=` is writable from here.
            std::env::set_current_dir(cwd)
                .map_err(|e| format!("failed to enter {}: {e}", cwd.display()))?;
        }
        sys::fork_and_wait(|| {}).map_err(step("fork the engine"))?;
        sys::die_with_parent().map_err(step("tie the engine to init"))?;
    }
    set_limits(plan)?;
    // Keyrings belong to a session, not a mount or PID namespace: a new, empty one.
    if let Err(e) = sys::new_session_keyring()
        && e.raw_os_error() != Some(libc::ENOSYS)
    {
        return Err(format!(
            "failed to give the engine a keyring of its own: {e}"
        ));
    }
    sys::drop_capabilities().map_err(step("drop every capability"))?;
    let tmp: Vec<PathBuf> = match (&plan.host_tmp, layers.namespaces) {
        (Some(t), _) => vec![t.clone()],
        (None, Namespaces::None) => Vec::new(),
        (None, _) => vec!["/tmp".into(), "/dev/shm".into()],
    };
    let writable: Vec<&Path> = tmp
        .iter()
        .chain(&plan.writable)
        .map(PathBuf::as_path)
        .collect();
    match rules::restrict(&writable, layers.landlock || layers.landlock_scopes) {
        Ok(got) => {
            let lost = (layers.landlock && !got.writes) || (layers.landlock_scopes && !got.scopes);
            if !plan.probe && lost {
                return Err(
                    "failed to restrict the engine with Landlock, which held in the \
                            probe at the start of the run"
                        .into(),
                );
            }
            layers.landlock = got.writes;
            layers.landlock_scopes = got.scopes;
        }
        // The probe only learns that the layer is missing (the helper has no log).
        Err(_) if plan.probe => {
            layers.landlock = false;
            layers.landlock_scopes = false;
        }
        Err(e) => return Err(format!("failed to restrict the engine with Landlock: {e}")),
    }
    // Last: the filter refuses calls the steps above make.
    if plan.probe || layers.seccomp {
        match setid::refuse() {
            Ok(()) => {}
            Err(_) if plan.probe => layers.seccomp = false,
            Err(e) => return Err(format!("failed to refuse the engine set-id files: {e}")),
        }
    }
    if plan.probe {
        let line = serde_json::to_string(&Report::Layers(layers)).unwrap_or_default();
        let _ = writeln!(report, "{line}");
        std::process::exit(0);
    }
    if layers.namespaces == Namespaces::None {
        let line = serde_json::to_string(&Report::Group(sys::pid())).unwrap_or_default();
        writeln!(report, "{line}")
            .map_err(|e| format!("failed to report the engine's process group: {e}"))?;
    }
    use std::os::unix::process::CommandExt;
    let e = std::process::Command::new(&plan.program)
        .args(&plan.args)
        .exec();
    Err(format!("failed to start {}: {e}", plan.program.display()))
}

fn enter_namespaces(plan: &Plan, layers: &mut Layers) -> Result<(), String> {
    let namespaces = layers.namespaces;
    let (uid, gid) = (sys::uid(), sys::gid());
    // IPC too: the machine's SysV segments and POSIX message queues stay out of reach.
    let mut flags = sys::CLONE_NEWPID | sys::CLONE_NEWNS | sys::CLONE_NEWIPC;
    if namespaces == Namespaces::User {
        flags |= sys::CLONE_NEWUSER;
    }
    sys::unshare(flags).map_err(|e| format!("failed to make the engine's namespaces: {e}"))?;
    if namespaces == Namespaces::User {
        fn map(what: &str) -> impl Fn(std::io::Error) -> String + '_ {
            move |e| format!("failed to write the {what}: {e}")
        }
        sys::write_whole(c"/proc/self/setgroups", "deny").map_err(map("setgroups"))?;
        sys::write_whole(c"/proc/self/gid_map", &format!("{gid} {gid} 1"))
            .map_err(map("gid map"))?;
        sys::write_whole(c"/proc/self/uid_map", &format!("{uid} {uid} 1"))
            .map_err(map("uid map"))?;
    }
    if plan.share_network {
        // Its network is the machine's: whether a namespace would hold says nothing here.
    } else if let Err(e) = own_network() {
        if !plan.probe && layers.network {
            return Err(e);
        }
        layers.network = false;
    }
    sys::fork_and_wait(|| {}).map_err(|e| format!("failed to fork init: {e}"))
}

/// A network namespace of the engine's own (still capable in its user namespace, or
/// root): no socket of the machine in `/proc/net` or in reach, its loopback interface up.
fn own_network() -> Result<(), String> {
    sys::unshare(sys::CLONE_NEWNET)
        .map_err(|e| format!("failed to make the engine's network namespace: {e}"))?;
    sys::loopback_up().map_err(|e| format!("failed to bring up the engine's loopback: {e}"))
}

/// The engine's view of the file system: its own `/proc` and `/dev`, a private `/tmp`,
/// the results folder covered, everything read-only but the allowlist. In probe mode
/// `own_proc` and `read_only` say whether they could be had; otherwise they must hold.
/// The steps run in this order: each opens what it keeps before it covers it.
fn build_file_system(plan: &Plan, layers: &mut Layers) -> Result<(), String> {
    // Nothing mounted here propagates back to the machine.
    mount(
        None,
        Path::new("/"),
        None,
        sys::MS_REC | sys::MS_PRIVATE,
        None,
    )?;
    let size = plan
        .tmp_size
        .map_or_else(String::new, |s| format!(",size={s}"));
    own_dev()?;
    own_proc(plan, layers)?;
    let shm = own_shm(&size)?;
    let needed = own_tmp(plan, &size)?;
    // /run holds the machine's and the user's sockets (ssh-agent, D-Bus, a container
    // engine's): a socket with a path is reached by its path, so none is in view, unless
    // the engine needs something there.
    let needs_run = needed.iter().any(|p| p.starts_with("/run"));
    if !needs_run && Path::new("/run").is_dir() {
        cover(Path::new("/run"), "kalaha-no-run", "size=4k,mode=0755")?;
    }
    // Under /tmp the folder is out of sight unless a kept folder holds it.
    if let Some(hidden) = plan.hidden.as_ref().filter(|h| h.exists()) {
        cover(hidden, "kalaha-hidden", "size=4k,mode=0555")?;
    }
    if layers.read_only {
        read_only_but_allowed(plan, layers, &shm)?;
    }
    Ok(())
}

/// Mounts for the engine, saying what failed.
fn mount(
    source: Option<&str>,
    target: &Path,
    fstype: Option<&str>,
    flags: u64,
    data: Option<&str>,
) -> Result<(), String> {
    sys::mount(source, target, fstype, flags, data)
        .map_err(|e| format!("failed to mount {} for the engine: {e}", target.display()))
}

/// Flags of a mount where nothing may run, and no device or set-id file works.
const SAFE: u64 = sys::MS_NOSUID | sys::MS_NODEV | sys::MS_NOEXEC;

/// Covers `target` with an empty read-only file system named `name`.
fn cover(target: &Path, name: &str, data: &str) -> Result<(), String> {
    mount(
        Some(name),
        target,
        Some("tmpfs"),
        SAFE | sys::MS_RDONLY,
        Some(data),
    )
}

/// A /dev of its own: no terminal of the machine in it, only the harmless devices.
fn own_dev() -> Result<(), String> {
    // Opened before /dev is covered.
    let devices: Vec<(&str, std::fs::File)> = ["null", "zero", "full", "random", "urandom"]
        .into_iter()
        .filter_map(|d| {
            let f = std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_PATH)
                .open(format!("/dev/{d}"))
                .ok()?;
            Some((d, f))
        })
        .collect();
    mount(
        Some("kalaha-dev"),
        Path::new("/dev"),
        Some("tmpfs"),
        sys::MS_NOSUID | sys::MS_NOEXEC,
        Some("size=64k,mode=0755"),
    )?;
    let dev = Path::new("/dev");
    for (name, file) in &devices {
        let target = dev.join(name);
        std::fs::write(&target, b"")
            .map_err(|e| format!("failed to make {} for the engine: {e}", target.display()))?;
        use std::os::fd::AsFd;
        let source = sys::fd_path(file.as_fd());
        mount(source.to_str(), &target, None, sys::MS_BIND, None)?;
    }
    for (link, to) in [
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ] {
        let _ = std::os::unix::fs::symlink(to, dev.join(link));
    }
    Ok(())
}

/// A /proc of the engine's own processes, or (where that cannot be had) none at all.
fn own_proc(plan: &Plan, layers: &mut Layers) -> Result<(), String> {
    match mount(Some("proc"), Path::new("/proc"), Some("proc"), SAFE, None) {
        Ok(()) => {}
        Err(_) if plan.probe => {
            layers.own_proc = false;
        }
        Err(e) if layers.own_proc => return Err(e),
        Err(_) => {}
    }
    if !layers.own_proc {
        // The machine's /proc shows the referee and the user's terminal: none at all.
        cover(Path::new("/proc"), "kalaha-no-proc", "size=4k,mode=0555")?;
    }
    Ok(())
}

/// The engine's own /dev/shm; its path.
fn own_shm(size: &str) -> Result<PathBuf, String> {
    let shm = Path::new("/dev").join("shm");
    std::fs::create_dir(&shm).map_err(|e| format!("failed to make /dev/shm: {e}"))?;
    mount(
        Some("kalaha-shm"),
        &shm,
        Some("tmpfs"),
        sys::MS_NOSUID | sys::MS_NODEV,
        Some(&format!("mode=1777{size}")),
    )?;
    Ok(shm)
}

/// The engine's private /tmp, gone with its namespace, holding what of the machine's /tmp
/// it needs (its program, working folder, the folders its arguments name, its `write=`
/// folders). Returns the paths the engine needs.
fn own_tmp(plan: &Plan, size: &str) -> Result<Vec<PathBuf>, String> {
    // Found and opened once, before /tmp is replaced.
    let needed = needed_paths(plan);
    let kept: Vec<(PathBuf, std::fs::File)> = kept_in_tmp(&needed)
        .into_iter()
        .filter_map(|d| {
            let f = std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_PATH)
                .open(&d)
                .ok()?;
            Some((d, f))
        })
        .collect();
    let writable: Vec<(PathBuf, std::fs::File)> = plan
        .writable
        .iter()
        .map(|d| {
            let f = std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_PATH | libc::O_DIRECTORY)
                .open(d)
                .map_err(|e| format!("failed to open the folder {} of write=: {e}", d.display()))?;
            Ok((d.clone(), f))
        })
        .collect::<Result<_, String>>()?;
    mount(
        Some("kalaha-tmp"),
        Path::new("/tmp"),
        Some("tmpfs"),
        sys::MS_NOSUID | sys::MS_NODEV,
        Some(&format!("mode=1777{size}")),
    )?;
    // Kept folders first (read-only below), then the writable ones, which may lie inside.
    for (dir, file) in kept.iter().chain(&writable) {
        use std::os::fd::AsFd;
        if dir.starts_with("/tmp") {
            let made = if file.metadata().is_ok_and(|m| m.is_dir()) {
                std::fs::create_dir_all(dir)
            } else {
                dir.parent()
                    .map_or(Ok(()), std::fs::create_dir_all)
                    .and_then(|()| std::fs::write(dir, b""))
            };
            made.map_err(|e| format!("failed to make {} for the engine: {e}", dir.display()))?;
        }
        let source = sys::fd_path(file.as_fd());
        mount(source.to_str(), dir, None, sys::MS_BIND | sys::MS_REC, None)?;
    }
    Ok(needed)
}

/// Every mount read-only but /tmp, /dev/shm and the `write=` folders.
fn read_only_but_allowed(plan: &Plan, layers: &mut Layers, shm: &Path) -> Result<(), String> {
    match sys::set_read_only(Path::new("/"), true, true) {
        Ok(()) => {
            let open: Vec<&Path> = [Path::new("/tmp"), shm]
                .into_iter()
                .chain(plan.writable.iter().map(PathBuf::as_path))
                .collect();
            for dir in open {
                sys::set_read_only(dir, false, false).map_err(|e| {
                    format!("failed to let the engine write {}: {e}", dir.display())
                })?;
            }
        }
        Err(_) if plan.probe => {
            layers.read_only = false;
        }
        Err(e) => return Err(format!("failed to make the engine's mounts read-only: {e}")),
    }
    Ok(())
}

fn set_limits(plan: &Plan) -> Result<(), String> {
    let limits = &plan.limits;
    let set = |what: Limit, soft: u64, hard: u64| {
        sys::set_limit(what, soft, hard)
            .map_err(|e| format!("failed to set the engine's limit {what:?}: {e}"))
    };
    if let Some(m) = limits.memory {
        set(Limit::AddressSpace, m, m)?;
    }
    if let Some(n) = limits.processes {
        set(Limit::Processes, n, n)?;
    }
    if let Some(t) = limits.cpu {
        let s = t.as_secs().max(1);
        set(Limit::CpuSeconds, s, s + 1)?;
    }
    Ok(())
}

/// The paths an engine needs, links resolved: its working folder, its program, what its
/// arguments name and its `write=` folders.
fn needed_paths(plan: &Plan) -> Vec<PathBuf> {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    let mut wanted = vec![cwd.clone()];
    if plan.program.components().count() > 1 {
        wanted.push(cwd.join(&plan.program));
    }
    wanted.extend(plan.args.iter().map(|a| cwd.join(a)));
    wanted.extend(plan.writable.iter().cloned());
    wanted
        .into_iter()
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .collect()
}

/// What of the machine's `/tmp` the engine needs to see: the folders of its program, its
/// working folder and each argument that names an existing file or folder (the file
/// itself when it lies in `/tmp` directly), and its `write=` folders; each with its links
/// resolved, none inside another.
fn kept_in_tmp(needed: &[PathBuf]) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = needed
        .iter()
        .cloned()
        .filter_map(|p| {
            let keep = match p.parent() {
                Some(parent) if !p.is_dir() && parent != Path::new("/tmp") => parent.to_path_buf(),
                _ => p,
            };
            (keep.starts_with("/tmp") && keep != Path::new("/tmp")).then_some(keep)
        })
        .collect();
    dirs.sort();
    dirs.dedup();
    let all = dirs.clone();
    dirs.retain(|d| !all.iter().any(|o| o != d && d.starts_with(o)));
    dirs
}
