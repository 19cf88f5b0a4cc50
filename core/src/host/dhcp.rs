//! The socket a DHCP exchange runs on: one interface's IPv4 packets (AF_PACKET, since the
//! interface has no address yet), and the monotonic clock its deadlines are read from.
//! When to send, what, and how long to wait is `net::dhcp_exchange`'s.

use super::HostError;

pub trait DhcpSocket {
    /// Sends one IPv4 packet to the link-layer broadcast address.
    fn send_broadcast(&mut self, packet: &[u8]) -> Result<(), HostError>;

    /// One packet received within `timeout_ms` into `buf`: its length, `None` when the
    /// time passed (or the wait was interrupted) first.
    fn receive(&mut self, timeout_ms: u64, buf: &mut [u8]) -> Result<Option<usize>, HostError>;

    /// The monotonic clock, in milliseconds.
    fn now_ms(&mut self) -> u64;
}
