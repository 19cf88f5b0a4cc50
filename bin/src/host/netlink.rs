//! core's `Netlink` over a NETLINK_ROUTE socket.

use wisp_core::host::HostError;
use wisp_os_linux::netlink;

use super::host_error;

pub struct RouteSocket(pub wisp_os_linux::OwnedFd);

impl wisp_core::host::netlink::Netlink for RouteSocket {
    fn send(&mut self, request: &[u8]) -> Result<(), HostError> {
        netlink::send(&self.0, request).map_err(host_error)
    }

    fn recv(&mut self, buf: &mut [u8]) -> Result<usize, HostError> {
        netlink::recv(&self.0, buf).map_err(host_error)
    }
}
