//! Every system call kalaha makes beyond the standard library, each behind a safe function
//! whose comment says why the call is sound: the one module where `unsafe` is written
//! (`lib.rs` denies it everywhere else).
//!
//! [`sandbox`] holds the calls that build an engine's sandbox; the functions here serve
//! the rest: descriptor flags, raw reads of an engine's pipe, the CPU time of a run, the
//! terminal's size, a socket option of KGP connections, and whether Ctrl-C or SIGTERM
//! came.

#![allow(unsafe_code)]

pub(crate) mod sandbox;
pub(crate) mod sock_diag;

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::time::Duration;

/// Sets or clears `O_NONBLOCK` on `fd`.
pub(crate) fn set_nonblocking(fd: &impl AsRawFd, on: bool) -> io::Result<()> {
    let fd = fd.as_raw_fd();
    // SAFETY: fcntl reads and sets the flags of a descriptor the caller holds open.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        let flags = match on {
            true => flags | libc::O_NONBLOCK,
            false => flags & !libc::O_NONBLOCK,
        };
        if flags == -1 || libc::fcntl(fd, libc::F_SETFL, flags) == -1 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Reads what `fd` holds now into `buf` (a non-blocking descriptor answers `WouldBlock`
/// when it holds nothing).
pub(crate) fn read_fd(fd: &OwnedFd, buf: &mut [u8]) -> io::Result<usize> {
    // SAFETY: reads into a buffer the caller lends, at most its length, from a descriptor
    // it owns.
    let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// `fd` registered with tokio to be awaited for reading.
pub(crate) fn async_readable(fd: OwnedFd) -> io::Result<tokio::io::unix::AsyncFd<OwnedFd>> {
    // SAFETY: the descriptor is moved into the `AsyncFd`, which owns it from here on: it is
    // neither replaced nor closed while it is registered.
    unsafe {
        tokio::io::unix::AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE)
            .map_err(Into::into)
    }
}

/// Which process's CPU time [`cpu_time`] reports.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Who {
    /// This process.
    Me,
    /// Its children that have ended and been reaped.
    Children,
}

/// User plus system CPU time of this process or of its reaped children.
pub(crate) fn cpu_time(who: Who) -> Duration {
    let who = match who {
        Who::Me => libc::RUSAGE_SELF,
        Who::Children => libc::RUSAGE_CHILDREN,
    };
    // SAFETY: getrusage only writes into the struct we pass, which a zeroed value fills.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(who, &mut u) } != 0 {
        return Duration::ZERO;
    }
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(u.ru_utime) + tv(u.ru_stime)
}

/// The size (columns, rows) of the terminal on standard output, if it is one.
pub(crate) fn terminal_size() -> Option<(usize, usize)> {
    // SAFETY: TIOCGWINSZ fills the struct we pass, which a zeroed value fills.
    let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
    let ok = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut ws) } == 0;
    (ok && ws.ws_col > 0 && ws.ws_row > 0).then_some((ws.ws_col as usize, ws.ws_row as usize))
}

/// Asks the kernel to acknowledge the next TCP segments of `socket` at once
/// (`TCP_QUICKACK`); a failure changes nothing but timing, so it is not reported.
pub(crate) fn tcp_quick_ack(socket: &impl AsRawFd) {
    let on: libc::c_int = 1;
    // SAFETY: setsockopt reads `on` only, for the length given.
    unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_QUICKACK,
            (&on as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}

/// Makes a FIFO at `path` (for tests of what kalaha refuses to read).
#[cfg(test)]
pub(crate) fn make_fifo(path: &std::path::Path) -> io::Result<()> {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a path holds a NUL byte"))?;
    // SAFETY: mkfifo reads the NUL-terminated path only.
    match unsafe { libc::mkfifo(c.as_ptr(), 0o600) } {
        0 => Ok(()),
        _ => Err(io::Error::last_os_error()),
    }
}

/// Moves standard output aside: returns a new descriptor (close-on-exec) of what standard
/// output was, and makes descriptor 1 a copy of standard error, so that whatever is
/// printed to standard output from now on goes to standard error.
pub(crate) fn stdout_to_stderr() -> io::Result<OwnedFd> {
    use std::os::fd::AsFd;
    let original = io::stdout().as_fd().try_clone_to_owned()?;
    // SAFETY: dup2 makes descriptor 1 refer to what descriptor 2 does, closing what 1
    // referred to first, in one step; 1 and 2 belong to the process's standard streams,
    // which the standard library writes through their numbers and never closes, so no
    // owner of descriptor 1 is left with a closed or reused descriptor.
    if unsafe { libc::dup2(libc::STDERR_FILENO, libc::STDOUT_FILENO) } == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(original)
}

/// Set once Ctrl-C (SIGINT) or SIGTERM came after [`note_interrupts`].
static INTERRUPTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// From now on, notes every Ctrl-C (SIGINT) and SIGTERM for [`interrupted`], beside what
/// else handles them (the run's own handler, which tokio installs). The note stays after
/// the run's handler is gone, so that the end of the process (the event stream waiting
/// for its reader) learns of a Ctrl-C pressed while it waits. Call it where the run
/// takes over these signals: before, they end the process as usual.
pub(crate) fn note_interrupts() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        for signal in [libc::SIGINT, libc::SIGTERM] {
            // SAFETY: the action only stores into an atomic, which is async-signal-safe;
            // the registry chains it with the other actions of the signal (tokio's).
            let registered = unsafe {
                signal_hook_registry::register(signal, || {
                    INTERRUPTED.store(true, std::sync::atomic::Ordering::SeqCst)
                })
            };
            if let Err(e) = registered {
                tracing::debug!("failed to note signal {signal}: {e}");
            }
        }
    });
}

/// Whether Ctrl-C or SIGTERM came since [`note_interrupts`].
pub(crate) fn interrupted() -> bool {
    INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst)
}
