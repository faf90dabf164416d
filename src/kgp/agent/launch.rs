//! Starting an agent: a port to listen on, its program, and the wait for its own
//! connection (connections from other processes are refused: [`crate::kgp::peer`]).

use super::super::error::KgpError;
use super::super::peer;
use super::{AgentInfo, Connection, KgpEngine, READ_CHUNK, agent_command, stop_process};
use crate::supervisor::lines::LineBuffer;
use crate::supervisor::log::EngineLog;
use crate::supervisor::{EngineCommand, Process, Settings, Stdout, Stopped, Transcript};
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::time::Instant;

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
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .await
            .map_err(KgpError::Listen)?;
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
    /// closed and the wait goes on ([`peer`]). On a failure the agent is stopped.
    pub async fn accept(mut self, end: Instant) -> Result<KgpEngine, KgpError> {
        let settings = &self.settings;
        let mut refused = 0u64;
        let stream = loop {
            let limit = end.saturating_duration_since(Instant::now());
            tokio::select! {
                accepted = self.listener.accept() => match accepted {
                    Ok((stream, peer)) => {
                        if self.is_the_agents(peer, refused) {
                            break stream;
                        }
                        refused += 1;
                    }
                    Err(e) => {
                        stop_process(&mut self.process, settings).await;
                        return Err(KgpError::Listen(e));
                    }
                },
                st = self.process.wait_exit(limit) => {
                    let err = match st {
                        Some(st) => KgpError::Process(self.process.exited(st).await),
                        None => never_connected(&self.process, self.address, settings.startup_timeout, refused),
                    };
                    stop_process(&mut self.process, settings).await;
                    return Err(err);
                }
            }
        };
        drop(self.listener);
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

    /// Whether the connection from `peer` comes from the agent's own processes; a
    /// foreign one is noted (and then closed by the caller), never charged to the agent.
    fn is_the_agents(&self, peer: SocketAddr, refused_before: u64) -> bool {
        let pid = self.process.pid();
        match peer::owner(pid, peer.port(), self.address.port()) {
            peer::Owner::Agent => true,
            peer::Owner::Unknown => {
                tracing::debug!(agent = %self.program, %peer, "connection taken unchecked (no /proc/net/tcp)");
                true
            }
            peer::Owner::Foreign => {
                // A few warnings tell the story; a flood of connections must not flood
                // the terminal and the log.
                if refused_before < MAX_REFUSAL_WARNINGS {
                    let text = format!(
                        "refused a connection to {} from {peer}: no process of the agent \
                         (pid {pid} and its descendants) holds it; still waiting for the agent{}",
                        self.address,
                        if refused_before + 1 == MAX_REFUSAL_WARNINGS {
                            " (further refusals are counted, not shown)"
                        } else {
                            ""
                        }
                    );
                    tracing::warn!(agent = %self.program, "{text}");
                    self.process.log().note(&format!("[warning] {text}"));
                }
                false
            }
        }
    }

    /// Stops the agent without a connection.
    pub async fn shutdown(mut self) -> Stopped {
        stop_process(&mut self.process, &self.settings).await
    }
}

/// Refused connections warned about, per agent start; the rest are counted.
const MAX_REFUSAL_WARNINGS: u64 = 3;

fn never_connected(
    process: &Process,
    address: SocketAddr,
    timeout: Duration,
    refused: u64,
) -> KgpError {
    let tail = process.log().tail();
    let mut hint = if refused > 0 {
        format!(
            "; {refused} connection{} from processes outside the agent's process tree {} \
             refused (an agent that detaches with setsid or a double fork is outside it \
             unless engines run in namespaces)",
            if refused == 1 { "" } else { "s" },
            if refused == 1 { "was" } else { "were" }
        )
    } else {
        String::new()
    };
    if !tail.is_empty() {
        hint.push_str(&format!("; its output: {}", tail.join(" | ")));
    }
    KgpError::NeverConnected {
        address,
        timeout,
        hint,
    }
}
