//! Non-blocking sockets, for HTTP exchanges: each method one system call. Which sockets
//! are opened, when, and what their answers mean is `http_exchange`'s decision.

use super::http::Endpoint;
use super::timer::Timer;
use super::HostError;

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

    /// Whether the system has a route to `endpoint` now (no packet is sent): `Http`'s,
    /// whose default (every route) is for hosts without sockets.
    fn has_route(&mut self, endpoint: Endpoint) -> bool;
}

/// The errno values the exchanges tell apart (the same on every Linux architecture wisp
/// builds for).
impl HostError {
    pub const INTERRUPTED: HostError = HostError { errno: 4 };
    pub const WOULD_BLOCK: HostError = HostError { errno: 11 };
    pub const CONNECTION_RESET: HostError = HostError { errno: 104 };
}
