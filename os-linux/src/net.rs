//! Non-blocking TCP (IPv4, and IPv6 for AWS's IPv6-only subnets) and Unix stream sockets,
//! for talking to several metadata endpoints at once.

use rustix::event::Timespec;
use rustix::fd::{AsFd, OwnedFd};
use rustix::io::Errno;
use rustix::net::{AddressFamily, Ipv4Addr, RecvFlags, SendFlags, SocketAddrUnix, SocketAddrV4, SocketAddrV6, SocketFlags, SocketType};

pub use rustix::event::{PollFd, PollFlags};

/// socket(2) + connect(2) without waiting: the connection completes in the background and
/// the socket becomes writable (see `connect_result`). An immediate refusal (ECONNREFUSED,
/// ENETUNREACH) is returned at once.
pub fn connect_start(ip: [u8; 4], port: u16) -> Result<OwnedFd, Errno> {
    connect_start_from(ip, port, false)
}

/// Lowest source port `connect_start_from` tries; the ports below are left to services.
const PRIVILEGED_PORT_FLOOR: u16 = 512;

/// `connect_start`, from a privileged source port (below 1024) when `privileged`: bind(2)
/// to the first free one from 1023 down (EADDRINUSE: taken, or in TIME_WAIT from an
/// earlier request), for services that answer root only (Scaleway's user-data). Binding
/// one needs CAP_NET_BIND_SERVICE (capabilities(7)).
pub fn connect_start_from(ip: [u8; 4], port: u16, privileged: bool) -> Result<OwnedFd, Errno> {
    let flags = SocketFlags::NONBLOCK | SocketFlags::CLOEXEC;
    let socket = rustix::net::socket_with(AddressFamily::INET, SocketType::STREAM, flags, None)?;
    if privileged {
        let mut source = 1023;
        loop {
            match rustix::net::bind(&socket, &SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, source)) {
                Ok(()) => break,
                Err(Errno::ADDRINUSE) if source > PRIVILEGED_PORT_FLOOR => source -= 1,
                Err(e) => return Err(e),
            }
        }
    }
    let address = SocketAddrV4::new(Ipv4Addr::new(ip[0], ip[1], ip[2], ip[3]), port);
    match rustix::net::connect(&socket, &address) {
        Ok(()) | Err(Errno::INPROGRESS) => Ok(socket),
        Err(e) => Err(e),
    }
}

/// `connect_start` to an IPv6 address (ipv6(7)).
#[inline(never)]
pub fn connect6_start(ip: [u8; 16], port: u16) -> Result<OwnedFd, Errno> {
    let flags = SocketFlags::NONBLOCK | SocketFlags::CLOEXEC;
    let socket = rustix::net::socket_with(AddressFamily::INET6, SocketType::STREAM, flags, None)?;
    match rustix::net::connect(&socket, &SocketAddrV6::new(ip.into(), port, 0, 0)) {
        Ok(()) | Err(Errno::INPROGRESS) => Ok(socket),
        Err(e) => Err(e),
    }
}

/// Whether the kernel has a route to `ip:port`: connect(2) of a datagram socket looks the
/// route up and sends nothing (udp(7); ENETUNREACH when there is none).
pub fn has_route(ip: [u8; 4], port: u16) -> bool {
    match rustix::net::socket_with(AddressFamily::INET, SocketType::DGRAM, SocketFlags::CLOEXEC, None) {
        Ok(socket) => rustix::net::connect(&socket, &SocketAddrV4::new(ip.into(), port)).is_ok(),
        Err(_) => false,
    }
}

/// socket(2) AF_UNIX + connect(2) to the stream socket at `path` (unix(7)), non-blocking
/// as `connect_start`.
pub fn connect_unix_start(path: &core::ffi::CStr) -> Result<OwnedFd, Errno> {
    let flags = SocketFlags::NONBLOCK | SocketFlags::CLOEXEC;
    let socket = rustix::net::socket_with(AddressFamily::UNIX, SocketType::STREAM, flags, None)?;
    let address = SocketAddrUnix::new(path)?;
    match rustix::net::connect(&socket, &address) {
        Ok(()) => Ok(socket),
        Err(e) => Err(e),
    }
}

/// getsockopt(2) SO_ERROR: how a background connect ended, once the socket is writable.
pub fn connect_result<Fd: AsFd>(socket: Fd) -> Result<(), Errno> {
    rustix::net::sockopt::socket_error(socket)?
}

/// send(2) with MSG_NOSIGNAL, so a peer that closed early is EPIPE, not SIGPIPE.
pub fn send<Fd: AsFd>(socket: Fd, bytes: &[u8]) -> Result<usize, Errno> {
    rustix::net::send(socket, bytes, SendFlags::NOSIGNAL)
}

/// recv(2); `Ok(0)` is the peer's end of stream.
pub fn recv<Fd: AsFd>(socket: Fd, buf: &mut [u8]) -> Result<usize, Errno> {
    rustix::net::recv(socket, buf, RecvFlags::empty()).map(|(n, _)| n)
}

/// poll(2) for at most `timeout_ms`; returns how many descriptors are ready.
pub fn poll(fds: &mut [PollFd<'_>], timeout_ms: u32) -> Result<usize, Errno> {
    let timeout = Timespec { tv_sec: (timeout_ms / 1000) as _, tv_nsec: ((timeout_ms % 1000) * 1_000_000) as _ };
    match rustix::event::poll(fds, Some(&timeout)) {
        Err(Errno::INTR) => Ok(0),
        other => other,
    }
}
