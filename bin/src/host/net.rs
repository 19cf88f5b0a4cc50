//! The ephemeral network's sockets: core's `Netlink` over a NETLINK_ROUTE socket, and its
//! `DhcpSocket` over one interface's packet socket.

use wisp_core::host::HostError;
use wisp_os_linux::{netlink, packet, OwnedFd};

use super::host_error;

pub struct RouteSocket(pub OwnedFd);

impl wisp_core::host::netlink::Netlink for RouteSocket {
    fn send(&mut self, request: &[u8]) -> Result<(), HostError> {
        netlink::send(&self.0, request).map_err(host_error)
    }

    fn recv(&mut self, buf: &mut [u8]) -> Result<usize, HostError> {
        netlink::recv(&self.0, buf).map_err(host_error)
    }
}

pub struct DhcpOn {
    pub socket: OwnedFd,
    pub index: u32,
}

impl wisp_core::host::dhcp::DhcpSocket for DhcpOn {
    fn send_broadcast(&mut self, packet: &[u8]) -> Result<(), HostError> {
        packet::send_broadcast(&self.socket, self.index, packet).map_err(host_error)
    }

    fn receive(&mut self, timeout_ms: u64, buf: &mut [u8]) -> Result<Option<usize>, HostError> {
        packet::recv_within(&self.socket, timeout_ms, buf).map_err(host_error)
    }

    fn now_ms(&mut self) -> u64 {
        wisp_os_linux::time::monotonic_ms()
    }
}
