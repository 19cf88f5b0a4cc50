//! An AF_PACKET socket (packet(7)) for DHCP on an interface that has no address yet.
//!
//! Why a packet socket and not UDP on port 68: rustix (1.0) has no SO_BINDTODEVICE, and a
//! UDP socket without it sends its broadcast by the routing table, which may pick another
//! interface or none; it would also miss a server's unicast OFFER to an address the
//! interface does not have yet. A SOCK_DGRAM packet socket bound to the interface sends
//! and receives whole IPv4 packets on exactly that link (the kernel adds and removes only
//! the ethernet header), which is what udhcpc and dhcpcd do.

use core::mem::size_of;

use rustix::fd::{AsFd, OwnedFd};
use rustix::io::Errno;
use rustix::net::addr::{SocketAddrArg, SocketAddrLen, SocketAddrOpaque};
use rustix::net::{eth, AddressFamily, RecvFlags, SendFlags, SocketFlags, SocketType};

/// `struct sockaddr_ll` (packet(7)).
#[repr(C)]
struct SockaddrLl {
    family: u16,
    /// ETH_P_IP in network byte order.
    protocol: u16,
    ifindex: i32,
    hatype: u16,
    pkttype: u8,
    halen: u8,
    addr: [u8; 8],
}

const AF_PACKET: u16 = 17;
const ETH_P_IP: u16 = 0x0800;

/// A link-layer address: the interface, and for sending, the destination MAC.
pub struct LinkAddr(SockaddrLl);

impl LinkAddr {
    fn new(ifindex: u32, destination: Option<[u8; 6]>) -> LinkAddr {
        let mut addr = [0u8; 8];
        if let Some(mac) = destination {
            addr[..6].copy_from_slice(&mac);
        }
        LinkAddr(SockaddrLl {
            family: AF_PACKET,
            protocol: ETH_P_IP.to_be(),
            ifindex: ifindex as i32,
            hatype: 0,
            pkttype: 0,
            halen: if destination.is_some() { 6 } else { 0 },
            addr,
        })
    }
}

// SAFETY: `f` gets a pointer to a complete, initialized `sockaddr_ll` owned by `self`,
// which outlives the call, and that struct's size, as bind(2) and sendto(2) expect for
// AF_PACKET (packet(7)).
unsafe impl SocketAddrArg for LinkAddr {
    unsafe fn with_sockaddr<R>(&self, f: impl FnOnce(*const SocketAddrOpaque, SocketAddrLen) -> R) -> R {
        f((&self.0 as *const SockaddrLl).cast(), size_of::<SockaddrLl>() as SocketAddrLen)
    }
}

/// socket(2) AF_PACKET, SOCK_DGRAM, ETH_P_IP, non-blocking, then bind(2) to `ifindex`:
/// IPv4 packets of that interface only.
pub fn ipv4_socket(ifindex: u32) -> Result<OwnedFd, Errno> {
    let flags = SocketFlags::CLOEXEC | SocketFlags::NONBLOCK;
    let socket = rustix::net::socket_with(AddressFamily::PACKET, SocketType::DGRAM, flags, Some(eth::IP))?;
    rustix::net::bind(&socket, &LinkAddr::new(ifindex, None))?;
    Ok(socket)
}

/// sendto(2) the link's broadcast address (ff:ff:ff:ff:ff:ff): `packet` is a whole IPv4
/// packet.
pub fn send_broadcast<Fd: AsFd>(socket: Fd, ifindex: u32, packet: &[u8]) -> Result<(), Errno> {
    let to = LinkAddr::new(ifindex, Some([0xff; 6]));
    rustix::net::sendto(socket, packet, SendFlags::empty(), &to).map(|_| ())
}

/// recv(2) one IPv4 packet; `Err(Errno::AGAIN)` when none is waiting.
pub fn recv<Fd: AsFd>(socket: Fd, buf: &mut [u8]) -> Result<usize, Errno> {
    rustix::net::recv(socket, buf, RecvFlags::empty()).map(|(n, _)| n)
}

/// poll(2) up to `timeout_ms` for one packet, then `recv` it: `None` when the time passed,
/// the wait was interrupted, or the packet was gone (EAGAIN) first.
pub fn recv_within<Fd: AsFd>(socket: Fd, timeout_ms: u64, buf: &mut [u8]) -> Result<Option<usize>, Errno> {
    let mut fds = [crate::net::PollFd::new(&socket, crate::net::PollFlags::IN)];
    if crate::net::poll(&mut fds, timeout_ms.min(u32::MAX as u64) as u32)? == 0 {
        return Ok(None);
    }
    match recv(&socket, buf) {
        Ok(len) => Ok(Some(len)),
        Err(Errno::AGAIN) | Err(Errno::INTR) => Ok(None),
        Err(e) => Err(e),
    }
}
