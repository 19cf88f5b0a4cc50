//! core's `DhcpSocket` over one interface's packet socket, for DHCP.

use wisp_core::host::HostError;
use wisp_os_linux::Errno;

use super::host_error;

/// One interface's IPv4 packets, for DHCP.
pub struct DhcpOn {
    pub socket: wisp_os_linux::OwnedFd,
    pub index: u32,
}

impl wisp_core::host::dhcp::DhcpSocket for DhcpOn {
    fn send_broadcast(&mut self, packet: &[u8]) -> Result<(), HostError> {
        wisp_os_linux::packet::send_broadcast(&self.socket, self.index, packet).map_err(host_error)
    }

    fn receive(&mut self, timeout_ms: u64, buf: &mut [u8]) -> Result<Option<usize>, HostError> {
        use wisp_os_linux::net::{PollFd, PollFlags};
        let mut fds = [PollFd::new(&self.socket, PollFlags::IN)];
        if wisp_os_linux::net::poll(&mut fds, timeout_ms.min(u32::MAX as u64) as u32).map_err(host_error)? == 0 {
            return Ok(None);
        }
        match wisp_os_linux::packet::recv(&self.socket, buf) {
            Ok(len) => Ok(Some(len)),
            Err(Errno::AGAIN) | Err(Errno::INTR) => Ok(None),
            Err(e) => Err(host_error(e)),
        }
    }

    fn now_ms(&mut self) -> u64 {
        wisp_os_linux::time::monotonic_ms()
    }
}
