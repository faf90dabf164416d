//! An engine process: spawning it isolated ([`super::isolate`]), writing lines to its
//! stdin, reading its stdout as lines ([`super::lines`]), draining its stderr into its log,
//! and stopping it (signals, reaping, kill on drop).
//!
//! Stdout is read directly by whoever waits for an answer (no reader task in between): a
//! non-blocking read when the pipe is readable, the bytes cut into lines at once.
//! [`Process::read_now`] takes whatever is already in the pipe without waiting, which is
//! how lines an engine sent when nobody asked are caught before the next request.
//!
//! An engine that speaks over a socket instead ([`Stdout::Log`]) has its stdout kept in its
//! log with its stderr.

use super::error::{EngineError, ExitKind};
use super::lines::{LineBuffer, LineEvent};
use super::log::EngineLog;
use super::{EngineCommand, Settings};
use crate::sandbox::{Launch, Layers, Namespaces, Plan, ResourceLimits, Spawned, folder_to_hide};
use std::io;
use std::os::fd::OwnedFd;
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStdin};
use tokio::task::JoinHandle;
use tokio::time::{Instant, sleep_until, timeout};

/// Bytes read from stdout at a time.
const READ_CHUNK: usize = 64 * 1024;

/// What an engine's standard output carries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Stdout {
    /// Protocol lines, read by whoever waits for an answer.
    #[default]
    Protocol,
    /// Free text, written to the engine's log with its stderr (for engines that speak
    /// their protocol over a socket).
    Log,
}

/// A running engine process.
pub struct Process {
    child: Child,
    pid: i32,
    /// The engine's process group: the helper's pid, or (no namespaces) the engine's.
    group: i32,
    stdin: Option<ChildStdin>,
    /// `None` when stdout goes to the log.
    stdout: Option<AsyncFd<OwnedFd>>,
    stdout_eof: bool,
    lines: LineBuffer,
    buf: Box<[u8]>,
    stderr_task: Option<JoinHandle<()>>,
    exit: Option<ExitStatus>,
    log: Arc<EngineLog>,
    limits: ResourceLimits,
    killed: bool,
    /// The engine's private temporary folder, where it has no mount namespace: removed
    /// when the process is dropped.
    _host_tmp: Option<tempfile::TempDir>,
}

impl Process {
    /// Spawns `cmd` (inside a tokio runtime) with the line limit, resource limits and
    /// hidden folder of `settings`, and its stderr going to `log`.
    pub fn spawn(
        cmd: &EngineCommand,
        settings: &Settings,
        log: Arc<EngineLog>,
    ) -> Result<Process, EngineError> {
        Process::spawn_with(cmd, settings, log, Stdout::Protocol)
    }

    /// [`Process::spawn`], with `stdout` saying what the engine's stdout carries.
    pub fn spawn_with(
        cmd: &EngineCommand,
        settings: &Settings,
        log: Arc<EngineLog>,
        stdout: Stdout,
    ) -> Result<Process, EngineError> {
        let (line_limit, limits) = (settings.line_limit, settings.limits);
        if let Some(w) = limits.warning() {
            static WARNED: std::sync::Once = std::sync::Once::new();
            WARNED.call_once(|| tracing::warn!("{w}"));
        }
        let spawn_error = |source| EngineError::Spawn {
            program: cmd.program.display().to_string(),
            source,
        };
        let layers = Layers::detect();
        crate::sandbox::warn_once(&layers);
        let hidden = settings
            .private_dirs
            .iter()
            .filter(|_| layers.namespaces != Namespaces::None)
            .find_map(|p| folder_to_hide(p, &cmd.program, cmd.dir.as_deref()));
        let plan = Plan {
            program: cmd.program.clone(),
            args: cmd.args.clone(),
            layers,
            limits,
            hidden,
            writable: settings.writable.clone(),
            share_network: settings.network,
            tmp_size: limits.memory,
            ..Plan::default()
        };
        let mut launch = Launch::new(plan).map_err(spawn_error)?;
        let command = launch.command();
        command
            .envs(cmd.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped());
        // With `Stdout::Log`, stdout and stderr share one pipe, drained into the log.
        let shared_output = match stdout {
            Stdout::Protocol => {
                command.stdout(Stdio::piped()).stderr(Stdio::piped());
                None
            }
            Stdout::Log => {
                let (reader, writer) = io::pipe().map_err(spawn_error)?;
                let copy = writer.try_clone().map_err(spawn_error)?;
                command.stdout(copy).stderr(writer);
                Some(reader)
            }
        };
        if let Some(dir) = &cmd.dir {
            command.current_dir(dir);
        }
        // The write ends of a shared pipe are dropped with the command inside `spawn`, or
        // the drain would never end.
        let Spawned {
            mut child,
            host_tmp,
            group,
            ..
        } = launch.spawn().map_err(spawn_error)?;
        let pid = child.id().map_or(0, |p| p as i32);
        let group = group.unwrap_or(pid);
        let (stdout, stderr_task) = match shared_output {
            None => {
                let stdout = child
                    .stdout
                    .take()
                    .expect("stdout is piped")
                    .into_owned_fd()
                    .map_err(EngineError::Io)?;
                crate::sys::set_nonblocking(&stdout, true).map_err(EngineError::Io)?;
                let stdout = crate::sys::async_readable(stdout).map_err(EngineError::Io)?;
                let stderr = child.stderr.take().expect("stderr is piped");
                (
                    Some(stdout),
                    tokio::spawn(drain_stderr(stderr, log.clone())),
                )
            }
            Some(reader) => {
                let output = tokio::net::unix::pipe::Receiver::from_owned_fd(reader.into())
                    .map_err(EngineError::Io)?;
                (None, tokio::spawn(drain_stderr(output, log.clone())))
            }
        };
        Ok(Process {
            stdin: child.stdin.take(),
            child,
            pid,
            group,
            stdout_eof: stdout.is_none(),
            stdout,
            lines: LineBuffer::new(line_limit),
            buf: vec![0u8; READ_CHUNK].into_boxed_slice(),
            stderr_task: Some(stderr_task),
            exit: None,
            log,
            limits,
            killed: false,
            _host_tmp: host_tmp,
        })
    }

    /// The process id of the engine's first process (the sandbox's helper), an ancestor
    /// of every process the engine starts.
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// The engine's log.
    pub fn log(&self) -> &EngineLog {
        &self.log
    }

    /// Writes one line (a newline is added), waiting at most `limit` for the pipe.
    pub async fn write_line(&mut self, line: &str, limit: Duration) -> Result<(), EngineError> {
        let Some(stdin) = self.stdin.as_mut() else {
            return Err(self.gone().await);
        };
        let mut bytes = Vec::with_capacity(line.len() + 1);
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
        match timeout(limit, stdin.write_all(&bytes)).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) if e.kind() == io::ErrorKind::BrokenPipe => {
                self.stdin = None;
                Err(self.gone().await)
            }
            Ok(Err(e)) => Err(EngineError::Io(e)),
            Err(_) => Err(EngineError::Stall { timeout: limit }),
        }
    }

    /// Closes the engine's stdin (a second way of saying `quit`).
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// The error for an engine that stopped reading or writing: its exit if it exits soon.
    async fn gone(&mut self) -> EngineError {
        match self.wait_exit(Duration::from_millis(500)).await {
            Some(st) => self.exited(st).await,
            None => EngineError::Io(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "the engine closed its input",
            )),
        }
    }

    /// The error for an engine that exited: the status, the last lines of its stderr (read
    /// to its end, briefly) and where its log is.
    pub async fn exited(&mut self, st: ExitStatus) -> EngineError {
        if let Some(task) = &mut self.stderr_task
            && timeout(Duration::from_millis(300), task).await.is_ok()
        {
            self.stderr_task = None;
        }
        self.log.flush();
        let mut stderr = String::new();
        let tail = self.log.tail();
        if !tail.is_empty() {
            stderr.push_str("; its stderr: ");
            stderr.push_str(&tail.join(" | "));
        }
        if !self.limits.is_empty() {
            stderr.push_str(&format!("; its limits: {}", self.limits));
        }
        if let Some(p) = self.log.path() {
            stderr.push_str(&format!(" (log: {})", p.display()));
        }
        EngineError::Exited {
            exit: ExitKind::from(st),
            stderr,
        }
    }

    /// Reads what is in the pipe right now, at most `max` bytes, without waiting. When
    /// the pipe is empty, the runtime learns it too (so the next wait starts with no
    /// pointless read).
    pub fn read_now(&mut self, max: usize) -> Result<(), EngineError> {
        let mut taken = 0;
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        while taken < max && !self.stdout_eof {
            let Some(stdout) = &self.stdout else { break };
            let read = match stdout.poll_read_ready(&mut cx) {
                std::task::Poll::Ready(Ok(mut guard)) => {
                    match guard.try_io(|fd| crate::sys::read_fd(fd.get_ref(), &mut self.buf)) {
                        Ok(r) => r,
                        Err(_would_block) => break,
                    }
                }
                std::task::Poll::Ready(Err(e)) => return Err(EngineError::Io(e)),
                // Not known to be readable: data may have come since the runtime last
                // looked, so look.
                std::task::Poll::Pending => crate::sys::read_fd(stdout.get_ref(), &mut self.buf),
            };
            match read {
                Ok(0) => {
                    self.lines.finish();
                    self.stdout_eof = true;
                }
                Ok(n) => {
                    self.lines.push(&self.buf[..n]);
                    taken += n;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(EngineError::Io(e)),
            }
        }
        Ok(())
    }

    /// A line (or line fault) already read, if any, without reading more.
    pub fn take_ready(&mut self) -> Option<LineEvent> {
        self.lines.pop()
    }

    /// The next line from stdout, waiting until `end` at most. Fails when the deadline
    /// passes (`Timeout` with a zero deadline: the caller names its own), the engine exits
    /// or its stdout closes.
    pub async fn next_line(&mut self, end: Instant) -> Result<LineEvent, EngineError> {
        loop {
            // Checked first, so that an engine flooding its output still times out.
            if Instant::now() >= end {
                return Err(EngineError::Timeout {
                    deadline: Duration::ZERO,
                });
            }
            if let Some(ev) = self.lines.pop() {
                return Ok(ev);
            }
            if self.stdout_eof {
                return Err(match self.wait_exit(Duration::from_millis(500)).await {
                    Some(st) => self.exited(st).await,
                    None => EngineError::StdoutClosed,
                });
            }
            if let Some(st) = self.exit {
                // The process is gone: take what it wrote, briefly (its children may hold
                // the pipe open).
                let brief = (Instant::now() + Duration::from_millis(100)).min(end);
                if !self.wait_readable(brief).await? {
                    return Err(self.exited(st).await);
                }
                continue;
            }
            tokio::select! {
                biased;
                r = readable(&self.stdout) => {
                    let mut guard = r.map_err(EngineError::Io)?;
                    match guard.try_io(|fd| crate::sys::read_fd(fd.get_ref(), &mut self.buf)) {
                        Ok(Ok(0)) => {
                            self.lines.finish();
                            self.stdout_eof = true;
                        }
                        Ok(Ok(n)) => self.lines.push(&self.buf[..n]),
                        Ok(Err(e)) if e.kind() == io::ErrorKind::Interrupted => {}
                        Ok(Err(e)) => return Err(EngineError::Io(e)),
                        Err(_would_block) => {}
                    }
                }
                st = self.child.wait() => self.exit = Some(st.map_err(EngineError::Io)?),
                _ = sleep_until(end) => {}
            }
        }
    }

    /// Waits until stdout has something to read (or ends) before `end`; reads it.
    async fn wait_readable(&mut self, end: Instant) -> Result<bool, EngineError> {
        loop {
            tokio::select! {
                r = readable(&self.stdout) => {
                    let mut guard = r.map_err(EngineError::Io)?;
                    match guard.try_io(|fd| crate::sys::read_fd(fd.get_ref(), &mut self.buf)) {
                        Ok(Ok(0)) => {
                            self.lines.finish();
                            self.stdout_eof = true;
                            return Ok(true);
                        }
                        Ok(Ok(n)) => {
                            self.lines.push(&self.buf[..n]);
                            return Ok(true);
                        }
                        Ok(Err(e)) if e.kind() == io::ErrorKind::Interrupted => {}
                        Ok(Err(e)) => return Err(EngineError::Io(e)),
                        Err(_would_block) => {}
                    }
                }
                _ = sleep_until(end) => return Ok(false),
            }
        }
    }

    /// Waits at most `limit` for the process to exit.
    pub async fn wait_exit(&mut self, limit: Duration) -> Option<ExitStatus> {
        if let Some(st) = self.exit {
            return Some(st);
        }
        if let Ok(Ok(st)) = timeout(limit, self.child.wait()).await {
            self.exit = Some(st);
        }
        self.exit
    }

    /// Whether the process has been seen to exit.
    pub fn has_exited(&mut self) -> bool {
        if self.exit.is_none()
            && let Ok(Some(st)) = self.child.try_wait()
        {
            self.exit = Some(st);
        }
        self.exit.is_some()
    }

    /// Sends `signal` to the engine's process group.
    pub fn signal_group(&self, signal: i32) {
        // The group is the engine's own (the sandbox's helper, or without namespaces the
        // engine, starts a session and group of its own), so no other process is hit.
        crate::sandbox::signal_group(self.group, signal);
    }

    /// SIGKILLs the group, reaps the process and waits for the stderr drain.
    pub async fn kill_and_reap(&mut self) {
        self.signal_group(libc::SIGKILL);
        // With namespaces the helper is in the group; without, it outlives the group to
        // kill what the engine left, then ends. SIGKILL cannot be ignored; only an
        // uninterruptible sleep delays it.
        if self.group == self.pid || self.wait_exit(Duration::from_secs(5)).await.is_none() {
            let _ = self.child.start_kill();
            let _ = self.wait_exit(Duration::from_secs(10)).await;
        }
        self.finish().await;
    }

    /// After the process has exited: kills whatever is left in its group, lets stderr
    /// drain briefly and flushes the log.
    pub async fn finish(&mut self) {
        self.signal_group(libc::SIGKILL);
        self.killed = true;
        if let Some(task) = self.stderr_task.take() {
            let _ = timeout(Duration::from_secs(1), task).await;
        }
        self.log.flush();
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        if !self.killed {
            self.signal_group(libc::SIGKILL);
            // Without namespaces the helper ends by itself once it has killed what the
            // engine left (it dies with the referee too).
            if self.group == self.pid {
                let _ = self.child.start_kill();
            }
        }
        if let Some(task) = &self.stderr_task {
            task.abort();
        }
    }
}

/// Waits until stdout is readable; forever when stdout goes to the log.
async fn readable(
    stdout: &Option<AsyncFd<OwnedFd>>,
) -> io::Result<tokio::io::unix::AsyncFdReadyGuard<'_, OwnedFd>> {
    match stdout {
        Some(fd) => fd.readable().await,
        None => std::future::pending().await,
    }
}

/// Reads stderr (or the pipe shared by stdout and stderr) until it closes, into the
/// engine's log.
async fn drain_stderr(mut err: impl tokio::io::AsyncRead + Unpin, log: Arc<EngineLog>) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match err.read(&mut buf).await {
            Ok(0) => break,
            Ok(n) => log.stderr(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    log.flush();
}
