//! Whose connection is it? kalaha accepts an agent's connection only when the connecting
//! socket is held by a process of the agent's own process tree: another local program
//! (say a contestant scanning the loopback ports) cannot take an agent's place.
//!
//! On Linux the connecting socket's inode is asked of the kernel's socket diagnostics
//! (netlink, a lookup by the connection's two ends whose cost does not grow with the
//! machine's connections: a flood of them makes `/proc/net/tcp` huge, not this); where
//! they are refused, it is found in `/proc/net/tcp` (and `tcp6`). Then the agent's
//! processes (its first process and everything descended from it) are searched for a file
//! descriptor `socket:[inode]`. A process group is not trusted: any process of the same
//! session can join one. The `/proc` of the referee sees the processes of the agent's PID
//! namespace too, so this works with and without namespaces. Elsewhere the check is not
//! made.
//!
//! That search reads every process's `/proc/PID/stat`: it is made once for many
//! connections ([`Gate`]), so that a flood of connections costs a few system calls each.

use crate::sys::sock_diag::SockDiag;
use std::collections::{HashMap, HashSet};
use std::fs;
use std::net::SocketAddr;

/// Who holds the socket that connected to an agent's port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Owner {
    /// A process of the agent's tree.
    Agent,
    /// No process of the agent's tree (or the socket is gone).
    Foreign,
    /// Not known yet: the agent's sockets are looked at again for it ([`Gate::settle`]).
    Unsure,
    /// The check cannot be made here (no `/proc/net/tcp`); the connection is taken.
    Unknown,
}

/// The judge of the connections to one agent's port: what it knows of the agent's
/// sockets, and how to find whose a connection is.
pub(crate) struct Gate {
    root: i32,
    listen: SocketAddr,
    /// The socket diagnostics, while they answer.
    diag: Option<SockDiag>,
    /// The inodes of the sockets the agent's processes held when last looked at.
    agent: HashSet<u64>,
}

impl Gate {
    /// The judge of connections to `listen` for the agent whose first process is `root`.
    pub(crate) fn new(root: i32, listen: SocketAddr) -> Gate {
        let diag = if cfg!(target_os = "linux") {
            SockDiag::open().ok()
        } else {
            None
        };
        Gate {
            root,
            listen,
            diag,
            agent: HashSet::new(),
        }
    }

    /// A judgement of the connection from `peer` made at once, in a few system calls:
    /// `Agent` when its socket is one the agent held when last looked at, `Foreign` when
    /// it is gone, else `Unsure` (or `Unknown` where nothing can be checked).
    pub(crate) fn judge(&mut self, peer: SocketAddr) -> Owner {
        if !cfg!(target_os = "linux") {
            return Owner::Unknown;
        }
        match self.inode(peer) {
            Some(Some(inode)) if self.agent.contains(&inode) => Owner::Agent,
            Some(None) => Owner::Foreign,
            _ => Owner::Unsure,
        }
    }

    /// The owners of the connections from `peers` that [`Gate::judge`] left unsure, after
    /// one new look at the agent's sockets (and, without the socket diagnostics, one read
    /// of `/proc/net/tcp`) for them all.
    pub(crate) fn settle(&mut self, peers: &[SocketAddr]) -> Vec<Owner> {
        let tables = if self.diag.is_none() {
            let texts: Vec<String> = ["/proc/net/tcp", "/proc/net/tcp6"]
                .iter()
                .filter_map(|t| fs::read_to_string(t).ok())
                .collect();
            if texts.is_empty() {
                return vec![Owner::Unknown; peers.len()];
            }
            Some(loopback_sockets(&texts, self.listen.port()))
        } else {
            None
        };
        let inodes: Vec<Option<u64>> = peers
            .iter()
            .map(|&peer| match &tables {
                Some(t) => t.get(&peer.port()).copied(),
                None => self.inode(peer).flatten(),
            })
            .collect();
        if inodes.iter().any(Option::is_some) {
            self.agent = agent_sockets(self.root);
        }
        inodes
            .into_iter()
            .map(|i| match i {
                Some(i) if self.agent.contains(&i) => Owner::Agent,
                _ => Owner::Foreign,
            })
            .collect()
    }

    /// The inode of the socket that connected from `peer`, by the socket diagnostics:
    /// `None` when they cannot say (then they are not asked again), `Some(None)` when
    /// there is no such socket.
    fn inode(&mut self, peer: SocketAddr) -> Option<Option<u64>> {
        let (SocketAddr::V4(peer), SocketAddr::V4(listen)) = (peer, self.listen) else {
            return None;
        };
        match self.diag.as_mut()?.tcp_inode(peer, listen) {
            Ok(found) => Some(found),
            Err(e) => {
                tracing::debug!("socket diagnostics refused ({e}): /proc/net/tcp instead");
                self.diag = None;
                None
            }
        }
    }
}

/// The inodes of the sockets connected from loopback to loopback port `listen_port`, by
/// the local port, from the texts of `/proc/net/tcp` and `tcp6`.
fn loopback_sockets(texts: &[String], listen_port: u16) -> HashMap<u16, u64> {
    let mut found = HashMap::new();
    for text in texts {
        for line in text.lines().skip(1) {
            if let Some((port, inode)) = connecting_socket(line, listen_port) {
                found.entry(port).or_insert(inode);
            }
        }
    }
    found
}

/// The local port and inode of a line of `/proc/net/tcp*` whose remote port is
/// `remote_port`, both ends loopback addresses.
fn connecting_socket(line: &str, remote_port: u16) -> Option<(u16, u64)> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    let (local, remote, inode) = (fields.get(1)?, fields.get(2)?, fields.get(9)?);
    let (la, lp) = local.split_once(':')?;
    let (ra, rp) = remote.split_once(':')?;
    let lp = u16::from_str_radix(lp, 16).ok()?;
    let ours = u16::from_str_radix(rp, 16).ok()? == remote_port;
    (ours && is_loopback_hex(la) && is_loopback_hex(ra))
        .then(|| Some((lp, inode.parse().ok()?)))
        .flatten()
}

/// The inodes of the sockets the process `root` and its descendants hold.
fn agent_sockets(root: i32) -> HashSet<u64> {
    let mut found = HashSet::new();
    for pid in tree(root) {
        let Ok(fds) = fs::read_dir(format!("/proc/{pid}/fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            if let Ok(target) = fs::read_link(fd.path())
                && let Some(inode) = target
                    .to_str()
                    .and_then(|t| t.strip_prefix("socket:["))
                    .and_then(|t| t.strip_suffix(']'))
                    .and_then(|t| t.parse().ok())
            {
                found.insert(inode);
            }
        }
    }
    found
}

/// The inode of the socket whose local port is `local_port` and remote port
/// `remote_port`, from the text of `/proc/net/tcp` or `/proc/net/tcp6`; both ends must
/// be loopback addresses (IPv4, or IPv4 mapped into IPv6).
#[cfg(test)]
fn socket_inode(table: &str, local_port: u16, remote_port: u16) -> Option<u64> {
    table.lines().skip(1).find_map(|line| {
        connecting_socket(line, remote_port)
            .filter(|&(p, _)| p == local_port)
            .map(|(_, inode)| inode)
    })
}

/// Whether an address of `/proc/net/tcp*` (the address's 32-bit words in hex, each in the
/// machine's byte order) is 127.x.x.x, or that mapped into IPv6.
fn is_loopback_hex(hex: &str) -> bool {
    let word = |i: usize| {
        hex.get(i * 8..i * 8 + 8)
            .and_then(|w| u32::from_str_radix(w, 16).ok())
            .map(u32::to_ne_bytes)
    };
    match hex.len() {
        8 => word(0).is_some_and(|b| b[0] == 127),
        32 => {
            let mapped = [word(0), word(1), word(2)]
                == [Some([0; 4]), Some([0; 4]), Some([0, 0, 0xff, 0xff])];
            mapped && word(3).is_some_and(|b| b[0] == 127)
        }
        _ => false,
    }
}

/// `root` and its descendants, from `/proc/*/stat`.
fn tree(root: i32) -> Vec<i32> {
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    if let Ok(entries) = fs::read_dir("/proc") {
        for entry in entries.flatten() {
            let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else {
                continue;
            };
            if let Some(ppid) = parent(pid) {
                children.entry(ppid).or_default().push(pid);
            }
        }
    }
    let mut found: HashSet<i32> = HashSet::from([root]);
    let mut todo = vec![root];
    while let Some(pid) = todo.pop() {
        for &child in children.get(&pid).map_or(&[][..], Vec::as_slice) {
            if found.insert(child) {
                todo.push(child);
            }
        }
    }
    found.into_iter().collect()
}

/// The parent of `pid`, from `/proc/<pid>/stat` (after the name, which may hold spaces
/// and parentheses).
fn parent(pid: i32) -> Option<i32> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&stat)
}

fn parse_stat(stat: &str) -> Option<i32> {
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TCP: &str = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:A5B3 0100007F:1F90 01 00000000:00000000 00:00000000 00000000     0        0 4242 1 0000000000000000 20 4 30 10 -1
   1: 0100007F:1F90 0100007F:A5B3 01 00000000:00000000 00:00000000 00000000     0        0 4343 1 0000000000000000 20 4 30 10 -1
   2: 0200000A:A5B4 0100007F:1F90 01 00000000:00000000 00:00000000 00000000     0        0 4444 1 0000000000000000 20 4 30 10 -1
";

    #[test]
    fn the_connecting_end_is_found_by_its_two_ports() {
        if cfg!(target_endian = "little") {
            assert_eq!(socket_inode(TCP, 0xA5B3, 0x1F90), Some(4242));
            assert_eq!(socket_inode(TCP, 0x1F90, 0xA5B3), Some(4343));
            // Not a loopback address.
            assert_eq!(socket_inode(TCP, 0xA5B4, 0x1F90), None);
            assert_eq!(socket_inode(TCP, 1, 2), None);
        }
    }

    #[test]
    fn mapped_ipv4_loopback_counts_and_other_ipv6_does_not() {
        if cfg!(target_endian = "little") {
            assert!(is_loopback_hex("0000000000000000FFFF00000100007F"));
            assert!(!is_loopback_hex("00000000000000000000000001000000"));
            assert!(!is_loopback_hex("zz"));
        }
    }

    #[test]
    fn stat_lines_with_odd_names_parse() {
        assert_eq!(parse_stat("12 (a) b (c)) S 7 9 9 0"), Some(7));
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn our_own_connection_is_ours_and_not_a_strangers() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let listen = listener.local_addr().unwrap();
        let client = std::net::TcpStream::connect(listen).unwrap();
        let (_server, peer) = listener.accept().unwrap();
        assert_eq!(client.local_addr().unwrap(), peer);
        if !std::path::Path::new("/proc/net/tcp").exists() {
            return;
        }
        let me = std::process::id() as i32;
        let mut other = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let nobody: SocketAddr = ([127, 0, 0, 1], 1).into();
        // With the socket diagnostics where they answer, and with /proc/net/tcp.
        for diag in [true, false] {
            let gate = |root: i32| {
                let mut g = Gate::new(root, listen);
                if !diag {
                    g.diag = None;
                }
                g
            };
            let mut mine = gate(me);
            // Nothing is known of the agent's sockets before a look at them.
            let first = mine.judge(peer);
            assert!(matches!(first, Owner::Unsure | Owner::Agent), "{first:?}");
            assert_eq!(mine.settle(&[peer, nobody]), [Owner::Agent, Owner::Foreign]);
            // Known from then on, without another look.
            assert_eq!(
                mine.judge(peer),
                if diag && mine.diag.is_some() {
                    Owner::Agent
                } else {
                    Owner::Unsure
                }
            );
            // Another process (and its tree) does not hold it.
            let mut stranger = gate(other.id() as i32);
            assert_eq!(stranger.settle(&[peer]), [Owner::Foreign]);
        }
        let _ = other.kill();
        let _ = other.wait();
        // A connection whose socket is gone is foreign at once.
        let mut g = Gate::new(me, listen);
        if g.diag.is_some() {
            assert_eq!(g.judge(nobody), Owner::Foreign);
        }
    }
}
