//! core's `DhcpSocket` over one interface's packet socket.

use wisp_core::host::HostError;
use wisp_os_linux::packet;

use super::host_error;

pub struct DhcpOn {
    pub socket: wisp_os_linux::OwnedFd,
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
