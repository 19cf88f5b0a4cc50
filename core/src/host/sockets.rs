//! Non-blocking sockets, for HTTP exchanges: each method one system call. Which sockets
//! are opened, when, and what their answers mean is `http_exchange`'s decision.

use super::http::{Endpoint, Exchange, Http};
use super::timer::Timer;
use super::HostError;
use crate::retry::Timeouts;

/// What a socket is waited on for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interest {
    /// Connected, or room to send.
    Write,
    /// Bytes to receive, or the end of the stream.
    Read,
}

/// The host's sockets and its monotonic clock (`Timer`), which poll(2)'s waits move.
pub trait Sockets: Timer {
    /// An open socket; dropping it closes it.
    type Socket;

    /// socket(2) and a non-blocking connect(2) to `endpoint`: the connection is under
    /// way when this returns.
    fn connect(&mut self, endpoint: Endpoint) -> Result<Self::Socket, HostError>;

    /// SO_ERROR: how the connection attempt ended, once the socket is writable.
    fn connect_result(&mut self, socket: &Self::Socket) -> Result<(), HostError>;

    /// send(2): how many of `bytes` were sent.
    fn send(&mut self, socket: &Self::Socket, bytes: &[u8]) -> Result<usize, HostError>;

    /// recv(2) into `buf`: how many bytes came, 0 at the end of the stream.
    fn receive(&mut self, socket: &Self::Socket, buf: &mut [u8]) -> Result<usize, HostError>;

    /// poll(2) until one of `sockets` is ready for its interest, or `timeout_ms` passed;
    /// `ready[i]` is set when `sockets[i]` had any event (its interest, an error, a
    /// hang-up).
    fn poll(&mut self, sockets: &[(&Self::Socket, Interest)], ready: &mut [bool], timeout_ms: u32) -> Result<(), HostError>;

    /// Whether the system has a route to `endpoint` now (no packet is sent).
    fn has_route(&mut self, _endpoint: Endpoint) -> bool {
        true
    }
}

/// A host with sockets exchanges HTTP as `http_exchange` drives them, so that a host
/// implements only the system calls.
impl<T: Sockets> Http for T {
    fn exchange_all(&mut self, endpoint: Endpoint, exchanges: &mut [Exchange<'_>], timeouts: &Timeouts) {
        crate::http_exchange::exchange_all(self, endpoint, exchanges, timeouts)
    }

    fn has_route(&mut self, endpoint: Endpoint) -> bool {
        Sockets::has_route(self, endpoint)
    }
}

/// The errno values the exchanges tell apart (the same on every Linux architecture wisp
/// builds for).
impl HostError {
    pub const INTERRUPTED: HostError = HostError { errno: 4 };
    pub const WOULD_BLOCK: HostError = HostError { errno: 11 };
    pub const CONNECTION_RESET: HostError = HostError { errno: 104 };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::memory::{MemorySockets, Peer};

    #[test]
    fn a_host_with_sockets_exchanges_http_through_them_and_has_every_route() {
        let endpoint = Endpoint::Tcp { address: [169, 254, 169, 254], port: 80, privileged: false };
        let timeouts = Timeouts { connect_ms: 300, read_ms: 1000, total_ms: 5000, backoff_initial_ms: 100, backoff_max_ms: 400 };
        let mut sockets = MemorySockets::new([Peer::http(200, "i-0123")]);
        let mut response = [0u8; 256];
        let mut exchanges = [Exchange::new(b"GET / HTTP/1.0\r\n\r\n", &mut response)];
        Http::exchange_all(&mut sockets, endpoint, &mut exchanges, &timeouts);
        let (status, body) = exchanges[0].result().unwrap();
        assert_eq!((status, &exchanges[0].response[body]), (200, &b"i-0123"[..]));
        assert_eq!(sockets.received, [b"GET / HTTP/1.0\r\n\r\n".to_vec()]);
        assert!(Http::has_route(&mut sockets, endpoint));
    }
}
