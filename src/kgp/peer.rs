//! Whose connection is it? kalaha accepts an agent's connection only when the connecting
//! socket is held by a process of the agent's own process tree: another local program
//! (say a contestant scanning the loopback ports) cannot take an agent's place.
//!
//! On Linux the connecting socket is found in `/proc/net/tcp` (and `tcp6`) by its two
//! ports, which gives its inode; then the agent's processes (its first process and
//! everything descended from it) are searched for a file descriptor `socket:[inode]`. A
//! process group is not trusted: any process of the same session can join one. The `/proc` of the referee sees the processes of the
//! agent's PID namespace too, so this works with and without namespaces. Elsewhere the
//! check is not made.

use std::collections::{HashMap, HashSet};
use std::fs;

/// Who holds the socket that connected from loopback port `peer_port` to `listen_port`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    /// A process of the agent's tree.
    Agent,
    /// No process of the agent's tree (or the socket is gone).
    Foreign,
    /// The check cannot be made here (no `/proc/net/tcp`); the connection is taken.
    Unknown,
}

/// Whether the socket connected from `peer_port` to `listen_port` is held by the process
/// `root` (the agent's first process) or one of its descendants.
pub fn owner(root: i32, peer_port: u16, listen_port: u16) -> Owner {
    if !cfg!(target_os = "linux") {
        return Owner::Unknown;
    }
    let mut readable = false;
    let mut inode = None;
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        if let Ok(text) = fs::read_to_string(table) {
            readable = true;
            inode = inode.or_else(|| socket_inode(&text, peer_port, listen_port));
        }
    }
    if !readable {
        return Owner::Unknown;
    }
    let Some(inode) = inode else {
        return Owner::Foreign;
    };
    let wanted = format!("socket:[{inode}]");
    // The first process first: most agents hold their socket themselves.
    if holds(root, &wanted) {
        return Owner::Agent;
    }
    if tree(root)
        .into_iter()
        .any(|pid| pid != root && holds(pid, &wanted))
    {
        Owner::Agent
    } else {
        Owner::Foreign
    }
}

/// The inode of the socket whose local port is `local_port` and remote port
/// `remote_port`, from the text of `/proc/net/tcp` or `/proc/net/tcp6`; both ends must
/// be loopback addresses (IPv4, or IPv4 mapped into IPv6).
pub fn socket_inode(table: &str, local_port: u16, remote_port: u16) -> Option<u64> {
    table.lines().skip(1).find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (local, remote, inode) = (fields.get(1)?, fields.get(2)?, fields.get(9)?);
        let (la, lp) = local.split_once(':')?;
        let (ra, rp) = remote.split_once(':')?;
        let ports = u16::from_str_radix(lp, 16).ok()? == local_port
            && u16::from_str_radix(rp, 16).ok()? == remote_port;
        (ports && is_loopback_hex(la) && is_loopback_hex(ra))
            .then(|| inode.parse().ok())
            .flatten()
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

/// Whether process `pid` has a file descriptor that is `wanted` (`socket:[inode]`).
fn holds(pid: i32, wanted: &str) -> bool {
    let Ok(fds) = fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    fds.flatten()
        .any(|fd| fs::read_link(fd.path()).is_ok_and(|target| target.as_os_str() == wanted))
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
        let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (_server, peer) = listener.accept().unwrap();
        let listen = listener.local_addr().unwrap().port();
        assert_eq!(client.local_addr().unwrap().port(), peer.port());
        if std::path::Path::new("/proc/net/tcp").exists() {
            let me = std::process::id() as i32;
            assert_eq!(owner(me, peer.port(), listen), Owner::Agent);
            // Another process (and its tree) does not hold it; nobody connected from
            // another port.
            let mut other = std::process::Command::new("sleep")
                .arg("30")
                .spawn()
                .unwrap();
            let stranger = owner(other.id() as i32, peer.port(), listen);
            let _ = other.kill();
            let _ = other.wait();
            assert_eq!(stranger, Owner::Foreign);
            assert_eq!(
                owner(me, peer.port().wrapping_add(1), listen),
                Owner::Foreign
            );
        }
    }
}
