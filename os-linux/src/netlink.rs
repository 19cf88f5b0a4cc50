//! The NETLINK_ROUTE socket (netlink(7), rtnetlink(7)): requests to the kernel's routing
//! and link tables, and its answers. Building and reading the messages is core's
//! (`wisp_core::net`); this is only the socket.

use rustix::fd::{AsFd, OwnedFd};
use rustix::io::Errno;
use rustix::net::netlink::SocketAddrNetlink;
use rustix::net::{AddressFamily, RecvFlags, SendFlags, SocketFlags, SocketType};

/// socket(2) AF_NETLINK, SOCK_RAW, NETLINK_ROUTE (protocol 0). The kernel binds it to a port id on
/// the first send.
pub fn route_socket() -> Result<OwnedFd, Errno> {
    rustix::net::socket_with(AddressFamily::NETLINK, SocketType::RAW, SocketFlags::CLOEXEC, None)
}

/// sendto(2) the kernel (port id 0): one request.
pub fn send<Fd: AsFd>(socket: Fd, request: &[u8]) -> Result<(), Errno> {
    rustix::net::sendto(socket, request, SendFlags::empty(), &SocketAddrNetlink::new(0, 0)).map(|_| ())
}

/// recv(2) one datagram: one or more messages. The kernel's answers come at once
/// (rtnetlink(7) requests are handled in the sender's context), so this blocks only
/// briefly. A datagram longer than `buf` is an error (EMSGSIZE), not silently cut.
pub fn recv<Fd: AsFd>(socket: Fd, buf: &mut [u8]) -> Result<usize, Errno> {
    let (received, full_len) = rustix::net::recv(socket, buf, RecvFlags::TRUNC)?;
    if full_len > received {
        return Err(Errno::MSGSIZE);
    }
    Ok(received)
}
