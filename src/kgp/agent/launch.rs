//! Starting an agent: a port to listen on, its program, and the wait for its own
//! connection (connections from other processes are refused: [`crate::kgp::peer`]).
//!
//! Another local program may flood the port with connections (a hostile agent of another
//! game, say). Each is accepted and closed at once for a few system calls: one question
//! to the kernel about its socket; the agent's processes are looked at only when some
//! connection is not known as theirs, and then once for many (at most once every
//! [`SETTLE_AFTER`], unless [`MAX_UNSURE`] connections wait): the cost of a refusal does
//! not grow with the flood, and the agent's connection is accepted within milliseconds of
//! coming.

use super::super::error::KgpError;
use super::super::peer;
use super::{AgentInfo, Connection, KgpEngine, READ_CHUNK, agent_command, stop_process};
use crate::supervisor::lines::LineBuffer;
use crate::supervisor::log::EngineLog;
use crate::supervisor::{EngineCommand, Process, Settings, Stdout, Stopped, Transcript};
use peer::Owner;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::time::Instant;

/// Connections to the port the kernel queues until kalaha accepts them (it caps the
/// number at `net.core.somaxconn`): room for the agent's in a flood of others.
const BACKLOG: u32 = 4096;

/// Connections held open, not yet known to be the agent's, before its processes are
/// looked at again.
const MAX_UNSURE: usize = 256;

/// The longest a connection not yet known to be the agent's waits for that look.
const SETTLE_AFTER: Duration = Duration::from_millis(10);

/// An agent's program started, before its connection.
pub struct Launch {
    process: Process,
    listener: TcpListener,
    address: SocketAddr,
    settings: Settings,
    program: String,
}

impl Launch {
    /// Listens on a free port of the loopback interface and starts the agent's program
    /// (inside a tokio runtime).
    pub async fn spawn(cmd: &EngineCommand, settings: &Settings) -> Result<Launch, KgpError> {
        let listener = listen().map_err(KgpError::Listen)?;
        let address = listener.local_addr().map_err(KgpError::Listen)?;
        let command = agent_command(cmd, address);
        let log = Arc::new(EngineLog::open(settings.logs.as_ref()));
        // The agent connects to this port: it keeps the machine's network.
        let settings = &Settings {
            network: true,
            ..settings.clone()
        };
        let mut process = Process::spawn_with(&command, settings, log, Stdout::Log)?;
        process.close_stdin();
        let program = cmd
            .program
            .file_name()
            .map_or_else(|| cmd.display(), |n| n.to_string_lossy().into_owned());
        tracing::debug!(agent = %program, pid = process.pid(), %address, "spawned {}", command.display());
        Ok(Launch {
            process,
            listener,
            address,
            settings: settings.clone(),
            program,
        })
    }

    /// The address the agent is to connect to.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// The process id of the agent's first process (also its process group's).
    pub fn pid(&self) -> i32 {
        self.process.pid()
    }

    /// Waits until `end` for the agent's connection (then the port is closed: a second
    /// connection is refused). Connections from processes that are not the agent's are
    /// closed and the wait goes on ([`peer`]); how many were is said when the wait ends.
    /// On a failure the agent is stopped.
    pub async fn accept(mut self, end: Instant) -> Result<KgpEngine, KgpError> {
        let mut gate = peer::Gate::new(self.process.pid(), self.address);
        let mut unsure: Vec<(TcpStream, SocketAddr)> = Vec::new();
        let mut settle_at: Option<Instant> = None;
        let mut last_settle: Option<Instant> = None;
        let mut refused = 0u64;
        let stream = loop {
            let limit = end.saturating_duration_since(Instant::now());
            let settle = async {
                match settle_at {
                    Some(t) => tokio::time::sleep_until(t).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                accepted = self.listener.accept() => match accepted {
                    Ok((stream, peer)) => match gate.judge(peer) {
                        Owner::Agent => break stream,
                        Owner::Unknown => {
                            tracing::debug!(agent = %self.program, %peer, "connection taken unchecked (no /proc/net/tcp)");
                            break stream;
                        }
                        Owner::Foreign => self.refuse(stream, peer, &mut refused),
                        Owner::Unsure => {
                            unsure.push((stream, peer));
                            // At once, unless the last look was less than SETTLE_AFTER ago.
                            let now = Instant::now();
                            let due = *settle_at.get_or_insert_with(|| {
                                last_settle.map_or(now, |t| (t + SETTLE_AFTER).max(now))
                            });
                            if unsure.len() >= MAX_UNSURE || due <= now {
                                settle_at = None;
                                last_settle = Some(now);
                                if let Some(s) = self.settle(&mut gate, &mut unsure, &mut refused) {
                                    break s;
                                }
                            }
                        }
                    },
                    // Out of descriptors, or a connection reset before it was accepted:
                    // the wait goes on.
                    Err(e) => {
                        tracing::debug!(agent = %self.program, "accept: {e}");
                        tokio::time::sleep(Duration::from_millis(5)).await;
                    }
                },
                () = settle => {
                    settle_at = None;
                    last_settle = Some(Instant::now());
                    if let Some(s) = self.settle(&mut gate, &mut unsure, &mut refused) {
                        break s;
                    }
                }
                st = self.process.wait_exit(limit) => {
                    // The connections still waiting to be judged: the agent's may be one.
                    if let Some(s) = self.settle(&mut gate, &mut unsure, &mut refused) && st.is_none() {
                        break s;
                    }
                    let err = match st {
                        Some(st) => KgpError::Process(self.process.exited(st).await),
                        None => never_connected(&self.process, self.address, self.settings.startup_timeout, refused),
                    };
                    self.refusals_counted(refused, "the wait ended");
                    stop_process(&mut self.process, &self.settings).await;
                    return Err(err);
                }
            }
        };
        // Whatever else waits is not served.
        for (s, peer) in unsure.drain(..) {
            self.refuse(s, peer, &mut refused);
        }
        self.refusals_counted(refused, "the agent's connection came");
        drop(self.listener);
        let settings = &self.settings;
        let _ = stream.set_nodelay(true);
        let (reader, writer) = stream.into_split();
        let transcript = match (&settings.logs, settings.transcript) {
            (Some(place), true) => Transcript::create(place),
            _ => None,
        };
        Ok(KgpEngine {
            process: self.process,
            conn: Connection {
                reader,
                writer,
                lines: LineBuffer::new(settings.line_limit),
                buf: vec![0u8; READ_CHUNK].into_boxed_slice(),
                eof: false,
            },
            address: self.address,
            settings: self.settings,
            transcript,
            info: AgentInfo::default(),
            next_id: 2,
            current: None,
            time_mode: None,
            late: 0,
            program: self.program,
        })
    }

    /// Judges the connections that wait, after one look at the agent's processes: the
    /// agent's, if one is; the others are refused.
    fn settle(
        &self,
        gate: &mut peer::Gate,
        unsure: &mut Vec<(TcpStream, SocketAddr)>,
        refused: &mut u64,
    ) -> Option<TcpStream> {
        if unsure.is_empty() {
            return None;
        }
        let peers: Vec<SocketAddr> = unsure.iter().map(|(_, p)| *p).collect();
        let owners = gate.settle(&peers);
        let mut found = None;
        for ((stream, peer), owner) in unsure.drain(..).zip(owners) {
            match owner {
                Owner::Agent | Owner::Unknown if found.is_none() => found = Some(stream),
                _ => self.refuse(stream, peer, refused),
            }
        }
        found
    }

    /// Closes a connection that is not the agent's, unserved; the first few are warned
    /// about, the rest counted. Never charged to the agent.
    fn refuse(&self, stream: TcpStream, peer: SocketAddr, refused: &mut u64) {
        // A reset, not a close: nothing of it lingers on kalaha's side.
        let _ = stream.set_zero_linger();
        drop(stream);
        *refused += 1;
        if *refused > MAX_REFUSAL_WARNINGS {
            return;
        }
        let pid = self.process.pid();
        let text = format!(
            "refused a connection to {} from {peer}: no process of the agent (pid {pid} and \
             its descendants) holds it; still waiting for the agent{}",
            self.address,
            if *refused == MAX_REFUSAL_WARNINGS {
                " (further refusals are counted, and the count said when the wait ends)"
            } else {
                ""
            }
        );
        tracing::warn!(agent = %self.program, "{text}");
        self.process.log().note(&format!("[warning] {text}"));
    }

    /// Says how many connections were refused, when more were than were warned about.
    fn refusals_counted(&self, refused: u64, when: &str) {
        if refused <= MAX_REFUSAL_WARNINGS {
            return;
        }
        let text = format!(
            "refused {refused} connections to {} from processes that are not the agent's \
             before {when}",
            self.address
        );
        tracing::warn!(agent = %self.program, "{text}");
        self.process.log().note(&format!("[warning] {text}"));
    }

    /// Stops the agent without a connection.
    pub async fn shutdown(mut self) -> Stopped {
        stop_process(&mut self.process, &self.settings).await
    }
}

/// Refused connections warned about, per agent start; the rest are counted.
const MAX_REFUSAL_WARNINGS: u64 = 3;

/// The port the agent is to connect to, on the loopback interface.
fn listen() -> std::io::Result<TcpListener> {
    let socket = TcpSocket::new_v4()?;
    socket.bind((Ipv4Addr::LOCALHOST, 0).into())?;
    socket.listen(BACKLOG)
}

fn never_connected(
    process: &Process,
    address: SocketAddr,
    timeout: Duration,
    refused: u64,
) -> KgpError {
    let tail = process.log().tail();
    let output = if tail.is_empty() {
        String::new()
    } else {
        format!("; its output: {}", tail.join(" | "))
    };
    if refused > 0 {
        return KgpError::Crowded {
            address,
            timeout,
            refused,
            hint: output,
        };
    }
    KgpError::NeverConnected {
        address,
        timeout,
        hint: output,
    }
}
