//! Whose is a TCP connection? The kernel's socket diagnostics (`NETLINK_SOCK_DIAG`, what
//! `ss` reads) look one socket up by its two ends, in a hash table: the cost does not
//! grow with the connections the machine holds, where reading `/proc/net/tcp` does (a
//! flood of connections makes it huge). Used by [`crate::kgp::peer`].

use std::io;
use std::net::SocketAddrV4;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

const SOCK_DIAG_BY_FAMILY: u16 = 20;
const NLMSG_ERROR: u16 = 2;
const NLM_F_REQUEST: u16 = 1;
const INET_DIAG_NOCOOKIE: u32 = !0;

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct NlMsgHdr {
    len: u32,
    kind: u16,
    flags: u16,
    seq: u32,
    pid: u32,
}

/// `struct inet_diag_sockid`: ports and addresses in network byte order.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct SockId {
    sport: [u8; 2],
    dport: [u8; 2],
    src: [[u8; 4]; 4],
    dst: [[u8; 4]; 4],
    interface: u32,
    cookie: [u32; 2],
}

/// `struct inet_diag_req_v2`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Request {
    header: NlMsgHdr,
    family: u8,
    protocol: u8,
    ext: u8,
    pad: u8,
    states: u32,
    id: SockId,
}

/// `struct inet_diag_msg`, after its netlink header.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Reply {
    header: NlMsgHdr,
    family: u8,
    state: u8,
    timer: u8,
    retrans: u8,
    id: SockId,
    expires: u32,
    rqueue: u32,
    wqueue: u32,
    uid: u32,
    inode: u32,
}

/// A socket to ask the kernel about sockets of this process's network namespace.
pub(crate) struct SockDiag {
    fd: OwnedFd,
    seq: u32,
}

impl SockDiag {
    pub(crate) fn open() -> io::Result<SockDiag> {
        // SAFETY: socket returns a new descriptor, owned from here.
        let fd = unsafe {
            libc::socket(
                libc::AF_NETLINK,
                libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
                libc::NETLINK_SOCK_DIAG,
            )
        };
        if fd == -1 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a descriptor just returned by socket, owned by nothing else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        Ok(SockDiag { fd, seq: 0 })
    }

    /// The inode of the TCP socket whose own end is `local` and other end `remote`, if
    /// there is one (IPv4).
    pub(crate) fn tcp_inode(
        &mut self,
        local: SocketAddrV4,
        remote: SocketAddrV4,
    ) -> io::Result<Option<u64>> {
        self.seq = self.seq.wrapping_add(1);
        let mut id = SockId {
            sport: local.port().to_be_bytes(),
            dport: remote.port().to_be_bytes(),
            cookie: [INET_DIAG_NOCOOKIE; 2],
            ..SockId::default()
        };
        id.src[0] = local.ip().octets();
        id.dst[0] = remote.ip().octets();
        let request = Request {
            header: NlMsgHdr {
                len: std::mem::size_of::<Request>() as u32,
                kind: SOCK_DIAG_BY_FAMILY,
                flags: NLM_F_REQUEST,
                seq: self.seq,
                pid: 0,
            },
            family: libc::AF_INET as u8,
            protocol: libc::IPPROTO_TCP as u8,
            states: !0,
            id,
            ..Request::default()
        };
        let fd = self.fd.as_raw_fd();
        // SAFETY: sends the bytes of a plain C struct of the size given, to the kernel
        // (a zeroed sockaddr_nl: pid 0).
        let sent = unsafe {
            let mut to: libc::sockaddr_nl = std::mem::zeroed();
            to.nl_family = libc::AF_NETLINK as libc::sa_family_t;
            libc::sendto(
                fd,
                (&request as *const Request).cast(),
                std::mem::size_of::<Request>(),
                0,
                (&to as *const libc::sockaddr_nl).cast(),
                std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t,
            )
        };
        if sent == -1 {
            return Err(io::Error::last_os_error());
        }
        // The kernel answers within the send: one message, the socket or an error (its
        // header, then a negative errno).
        let mut buf = [0u64; 128];
        loop {
            // SAFETY: receives at most the buffer's size into it.
            let n = unsafe {
                libc::recv(
                    fd,
                    buf.as_mut_ptr().cast(),
                    std::mem::size_of_val(&buf),
                    libc::MSG_DONTWAIT,
                )
            };
            if n == -1 {
                return Err(io::Error::last_os_error());
            }
            let n = n as usize;
            if n < std::mem::size_of::<NlMsgHdr>() {
                return Err(io::Error::other("a short answer of the socket diagnostics"));
            }
            // SAFETY: the buffer is aligned for u64 and holds at least a header; every
            // bit pattern is a valid NlMsgHdr.
            let header: NlMsgHdr = unsafe { std::ptr::read(buf.as_ptr().cast()) };
            if header.seq != self.seq {
                // An answer to an earlier question, left unread: skip it.
                continue;
            }
            if header.kind == NLMSG_ERROR {
                // The errno follows the 16 bytes of the header: the first 4 of buf[2].
                let word = buf[2].to_ne_bytes();
                let errno = i32::from_ne_bytes([word[0], word[1], word[2], word[3]]);
                return match -errno {
                    0 => Ok(None),
                    libc::ENOENT => Ok(None),
                    e => Err(io::Error::from_raw_os_error(e)),
                };
            }
            if header.kind != SOCK_DIAG_BY_FAMILY || n < std::mem::size_of::<Reply>() {
                return Err(io::Error::other(
                    "an unexpected answer of the socket diagnostics",
                ));
            }
            // SAFETY: the buffer is aligned and holds a whole Reply; every bit pattern
            // is valid for it.
            let reply: Reply = unsafe { std::ptr::read(buf.as_ptr().cast()) };
            return Ok(Some(u64::from(reply.inode)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_ends_of_a_loopback_connection_are_found_and_a_made_up_one_is_not() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let server = listener.local_addr().unwrap();
        let client = std::net::TcpStream::connect(server).unwrap();
        let (_accepted, peer) = listener.accept().unwrap();
        let v4 = |a: std::net::SocketAddr| match a {
            std::net::SocketAddr::V4(a) => a,
            _ => unreachable!(),
        };
        let (server, peer) = (v4(server), v4(peer));
        let mut diag = match SockDiag::open() {
            Ok(d) => d,
            // Not Linux, or netlink refused: nothing to try.
            Err(_) => return,
        };
        let inode = diag.tcp_inode(peer, server).unwrap().unwrap();
        // The client's descriptor is that socket.
        let fd = format!("/proc/self/fd/{}", client.as_raw_fd());
        assert_eq!(
            std::fs::read_link(fd).unwrap().to_string_lossy(),
            format!("socket:[{inode}]")
        );
        let other = diag.tcp_inode(server, peer).unwrap().unwrap();
        assert_ne!(other, inode);
        // Nothing here is connected to port 1.
        let nowhere = SocketAddrV4::new(*server.ip(), 1);
        assert_eq!(diag.tcp_inode(peer, nowhere).unwrap(), None);
    }
}
