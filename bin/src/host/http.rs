//! core's `Sockets` and `Clock` over Linux's network: each socket method the system call
//! it names; `wisp_core::http_exchange` drives them (which request, when, retried how),
//! as core's `Http` for every host with sockets, and as `get` for one GET.

use core::ffi::CStr;

use wisp_core::host::explain::{words, Worded};
use wisp_core::host::http::{Endpoint, PARALLEL_LIMIT};
use wisp_core::host::sockets::Interest;
use wisp_core::host::HostError;
use wisp_core::retry::Timeouts;
use wisp_core::text::Plain;
use wisp_os_linux::net::{self, PollFd, PollFlags};
use wisp_os_linux::OwnedFd;

use super::host_error;
use crate::output::Message;

/// Linux's network, and the clocks. It needs no root: only where the guest API's socket
/// is, when the instance has one (`default()`: none, the way to every other service).
#[derive(Default)]
pub struct Network<'p> {
    // Read only where the guest API is built in (Incus); None everywhere else.
    #[cfg_attr(not(feature = "incus"), allow(dead_code))]
    pub guest_socket: Option<&'p CStr>,
}

/// One GET outside the metadata service's conversation (a user-data `#include` URL, a
/// seed's `seedfrom`): of `host` `path` at `address:port`, the body moved to the start of
/// `out`: its length, `None` for a 404, an error naming the URL for any other failure.
#[inline(never)]
pub fn get(address: [u8; 4], port: u16, host: &str, path: &str, out: &mut [u8], timeouts: &Timeouts) -> Result<Option<usize>, Message> {
    wisp_core::provider::imds::get(&mut Network::default(), address, port, host, path, out, timeouts)
        .map_err(|e| msg!("http://{}{}: {}", Plain(host), Plain(path), Worded(&e, words::<Message>)))
}

impl wisp_core::host::sockets::Sockets for Network<'_> {
    type Socket = OwnedFd;

    #[cfg_attr(not(feature = "incus"), allow(unused_variables))]
    fn connect(&mut self, endpoint: Endpoint) -> Result<OwnedFd, HostError> {
        match endpoint {
            Endpoint::Tcp { address, port, privileged } => net::connect_start_from(address, port, privileged),
            Endpoint::Tcp6 { address, port } => net::connect6_start(address.octets(), port),
            #[cfg(feature = "incus")]
            Endpoint::GuestSocket => net::connect_unix_start(self.guest_socket.unwrap_or(c"/dev/incus/sock")),
            // Only Incus's service is reached through the guest socket.
            #[cfg(not(feature = "incus"))]
            Endpoint::GuestSocket => Err(wisp_os_linux::Errno::NOENT),
        }
        .map_err(host_error)
    }

    fn connect_result(&mut self, socket: &OwnedFd) -> Result<(), HostError> {
        net::connect_result(socket).map_err(host_error)
    }

    fn send(&mut self, socket: &OwnedFd, bytes: &[u8]) -> Result<usize, HostError> {
        net::send(socket, bytes).map_err(host_error)
    }

    fn receive(&mut self, socket: &OwnedFd, buf: &mut [u8]) -> Result<usize, HostError> {
        net::recv(socket, buf).map_err(host_error)
    }

    fn poll(&mut self, sockets: &[(&OwnedFd, Interest)], ready: &mut [bool], timeout_ms: u32) -> Result<(), HostError> {
        let mut fds: heapless::Vec<PollFd<'_>, PARALLEL_LIMIT> = heapless::Vec::new();
        for (socket, interest) in sockets {
            let _ = fds.push(PollFd::new(*socket, if *interest == Interest::Write { PollFlags::OUT } else { PollFlags::IN }));
        }
        net::poll(&mut fds, timeout_ms).map_err(host_error)?;
        for (ready, fd) in ready.iter_mut().zip(&fds) {
            *ready = !fd.revents().is_empty();
        }
        Ok(())
    }

    fn has_route(&mut self, endpoint: Endpoint) -> bool {
        match endpoint {
            Endpoint::Tcp { address, port, .. } => net::has_route(address, port),
            _ => true,
        }
    }
}

impl wisp_core::host::timer::Timer for Network<'_> {
    fn now_ms(&mut self) -> u64 {
        wisp_os_linux::time::monotonic_ms()
    }

    fn pause_ms(&mut self, ms: u64) {
        let _ = net::poll(&mut [], ms.min(u32::MAX as u64) as u32);
    }
}

impl wisp_core::host::clock::Clock for Network<'_> {
    fn realtime_secs(&mut self) -> u64 {
        wisp_os_linux::time::realtime_secs()
    }
}
