//! The kernel's routing socket (NETLINK_ROUTE): datagrams out and in. Which requests go,
//! in which order, and what the answers mean is `net::rtnl`'s.

use super::HostError;

pub trait Netlink {
    /// Sends one request datagram.
    fn send(&mut self, request: &[u8]) -> Result<(), HostError>;

    /// Receives one datagram into `buf`: its length.
    fn recv(&mut self, buf: &mut [u8]) -> Result<usize, HostError>;
}
