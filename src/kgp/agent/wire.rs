//! The agent's connection: reading and framing its lines, writing kalaha's commands, the
//! transcript, and what a closed connection means.

use super::{Connection, KgpEngine, UNREQUESTED_READ};
use crate::kgp::command::Command;
use crate::kgp::error::KgpError;
use crate::supervisor::lines::{BadLine, LineEvent};
use std::io;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::{Instant, sleep_until, timeout};

impl KgpEngine {
    /// Reads and judges what the agent sent since kalaha last listened (at most
    /// [`UNREQUESTED_READ`] bytes, one chunk at a time, so memory stays bounded).
    pub(super) async fn check_unrequested(&mut self) -> Result<(), KgpError> {
        let mut taken = 0;
        while taken < UNREQUESTED_READ && !self.conn.eof {
            match self.conn.reader.try_read(&mut self.conn.buf) {
                Ok(0) => {
                    self.conn.lines.finish();
                    self.conn.eof = true;
                }
                Ok(n) => {
                    self.conn.lines.push(&self.conn.buf[..n]);
                    taken += n;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if is_reset(&e) => {
                    self.conn.lines.finish();
                    self.conn.eof = true;
                }
                Err(e) => return Err(KgpError::Io(e)),
            }
            self.hear_buffered().await?;
        }
        self.hear_buffered().await?;
        if self.conn.eof {
            return Err(self.disconnected("kalaha had nothing to ask").await);
        }
        Ok(())
    }

    /// Judges the lines already read.
    pub(super) async fn hear_buffered(&mut self) -> Result<(), KgpError> {
        while let Some(event) = self.conn.lines.pop() {
            let line = self.event_line(event)?;
            if !line.trim().is_empty() {
                self.hear(&line).await?;
            }
        }
        Ok(())
    }

    /// The next non-blank line, waiting until `end` at most (`None` then). `during` says
    /// what kalaha was waiting for, should the connection end.
    pub(super) async fn read_line(
        &mut self,
        end: Instant,
        during: &'static str,
    ) -> Result<Option<String>, KgpError> {
        loop {
            // Lines already read came before `end`: they count even when it has passed.
            // Nothing more is read after it, so an agent flooding its connection still
            // times out (a read is one chunk at most).
            if let Some(event) = self.conn.lines.pop() {
                let line = self.event_line(event)?;
                if line.trim().is_empty() {
                    continue;
                }
                return Ok(Some(line));
            }
            if self.conn.eof {
                return Err(self.disconnected(during).await);
            }
            if Instant::now() >= end {
                return Ok(None);
            }
            let conn = &mut self.conn;
            tokio::select! {
                r = conn.reader.read(&mut conn.buf) => match r {
                    Ok(0) => {
                        conn.lines.finish();
                        conn.eof = true;
                    }
                    Ok(n) => {
                        conn.lines.push(&conn.buf[..n]);
                        quick_ack(conn);
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) if is_reset(&e) => {
                        conn.lines.finish();
                        conn.eof = true;
                    }
                    Err(e) => return Err(KgpError::Io(e)),
                },
                _ = sleep_until(end) => {}
            }
        }
    }

    /// The error for a connection the agent closed: its exit if it exits soon.
    pub(super) async fn disconnected(&mut self, during: &'static str) -> KgpError {
        match self.process.wait_exit(Duration::from_millis(500)).await {
            Some(st) => KgpError::Process(self.process.exited(st).await),
            None => {
                let tail = self.process.log().tail();
                let stderr = if tail.is_empty() {
                    String::new()
                } else {
                    format!("; its output: {}", tail.join(" | "))
                };
                KgpError::Disconnected { during, stderr }
            }
        }
    }

    /// A framed line as text, or the fault of a line that cannot be one.
    pub(super) fn event_line(&mut self, event: LineEvent) -> Result<String, KgpError> {
        let limit = self.settings.line_limit;
        event
            .into_text(|text| self.record("<", text))
            .map_err(|bad| match bad {
                BadLine::TooLong { prefix } => KgpError::LineTooLong { limit, prefix },
                BadLine::NotUtf8 { prefix, .. } => KgpError::NotUtf8 { prefix },
            })
    }

    /// Sends a command with the next id; returns the id.
    pub(crate) async fn send(&mut self, cmd: Command) -> Result<u64, KgpError> {
        let id = self.next_id;
        self.next_id += 2;
        self.send_command(cmd.with_id(id)).await?;
        Ok(id)
    }

    /// Writes one command as a line (`\r\n` ended, as KGP asks).
    pub(super) async fn send_command(&mut self, cmd: Command) -> Result<(), KgpError> {
        let line = cmd.to_line();
        self.record(">", &line);
        let mut bytes = Vec::with_capacity(line.len() + 2);
        bytes.extend_from_slice(line.as_bytes());
        bytes.extend_from_slice(b"\r\n");
        let limit = self.settings.ping_timeout;
        match timeout(limit, self.conn.writer.write_all(&bytes)).await {
            Ok(Ok(())) => {
                quick_ack(&self.conn);
                Ok(())
            }
            Ok(Err(e)) if is_reset(&e) || e.kind() == io::ErrorKind::BrokenPipe => {
                self.conn.eof = true;
                Err(self.disconnected("kalaha wrote to it").await)
            }
            Ok(Err(e)) => Err(KgpError::Io(e)),
            Err(_) => Err(KgpError::WriteStall { timeout: limit }),
        }
    }

    pub(super) fn record(&mut self, dir: &str, line: &str) {
        if let Some(t) = &mut self.transcript {
            t.record(dir, line);
        }
    }
}

/// Asks the kernel to acknowledge the agent's next segments at once. Agents that leave
/// Nagle's algorithm on (pykgp does) hold each command until the last one is acknowledged;
/// with delayed acknowledgements that is some 40 ms per command, which would be charged
/// to their time. The mode does not stay on by itself, so it is asked for after every read
/// and write.
fn quick_ack(conn: &Connection) {
    crate::sys::tcp_quick_ack(conn.reader.as_ref());
}

fn is_reset(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionReset | io::ErrorKind::ConnectionAborted
    )
}
