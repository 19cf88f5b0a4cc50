//! HTTP exchanges: requests already written, sent at once, each answered into its own
//! buffer.
//!
//! The host owns the connection and the clock: it connects, sends, receives, keeps each
//! attempt inside `Timeouts`, and tries a request again on the schedule `retry::Backoff`
//! gives (the attempts of all requests interleave, so a round costs its slowest request,
//! not the sum). What the requests are, and what each answer means, is core's.

use core::fmt;
use core::ops::Range;

use super::HostError;
use crate::http;
use crate::retry::{GaveUp, Timeouts};
use crate::text::Decimal;

/// Most requests in flight at once: a key listing and its keys.
pub const PARALLEL_LIMIT: usize = 24;

/// Where the requests go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Endpoint {
    /// TCP, from a privileged source port (below 1024) when the flag is set.
    Tcp { address: [u8; 4], port: u16, privileged: bool },
    /// TCP over IPv6, to an address wisp knows by name.
    Tcp6 { address: Ipv6Service, port: u16 },
    /// The Unix socket of the guest API (Incus's), which the host knows where to find.
    GuestSocket,
}

/// The IPv6 addresses wisp speaks to, by name: an `Endpoint` stays one word, passed in a
/// register (with 16 address bytes inside, every round would copy it through memory).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ipv6Service {
    /// `fd00:ec2::254`, AWS's metadata service on Nitro instances.
    AwsMetadata,
}

impl Ipv6Service {
    pub const fn octets(self) -> [u8; 16] {
        match self {
            Ipv6Service::AwsMetadata => [0xfd, 0, 0x0e, 0xc2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x54],
        }
    }
}

/// One request and the buffer its response goes into.
pub struct Exchange<'b> {
    pub request: &'b [u8],
    pub response: &'b mut [u8],
    pub outcome: Outcome,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Pending,
    /// A response whose status is not worth retrying; its body lies in the response buffer.
    Reply { status: u16, body_start: usize, body_len: usize },
    Failed(Failure),
}

impl<'b> Exchange<'b> {
    pub fn new(request: &'b [u8], response: &'b mut [u8]) -> Self {
        Exchange { request, response, outcome: Outcome::Pending }
    }

    /// The status of a finished exchange and where its body lies in the response buffer.
    /// Not inlined: every round and token fetch reads its exchanges through it.
    #[inline(never)]
    pub fn result(&self) -> Result<(u16, Range<usize>), Failure> {
        match self.outcome {
            Outcome::Reply { status, body_start, body_len } => Ok((status, body_start..body_start + body_len)),
            Outcome::Failed(failure) => Err(failure),
            Outcome::Pending => Err(Cause::Io(IN_PROGRESS).into()),
        }
    }
}

/// EINPROGRESS: what an exchange that never ran reports.
const IN_PROGRESS: HostError = HostError { errno: 115 };

pub trait Http {
    /// Runs every exchange to its end: a reply (any status `retry::status_is_retryable`
    /// refuses), or a failure once the total deadline leaves no room for another attempt.
    fn exchange_all(&mut self, endpoint: Endpoint, exchanges: &mut [Exchange<'_>], timeouts: &Timeouts);

    /// Whether the system has a route to `endpoint` now (no packet is sent).
    fn has_route(&mut self, _endpoint: Endpoint) -> bool {
        true
    }
}

/// Why a request failed: its last attempt's cause, and when it was retried until the
/// deadline, how often and within what.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Failure {
    pub cause: Cause,
    pub gave_up: Option<GaveUp>,
}

// Every exchange's result and every metadata error carries one: GaveUp's NonZeroU32
// attempts keep `Option<GaveUp>` without a tag of its own, and the failure at 20 bytes.
const _: () = assert!(core::mem::size_of::<Failure>() == 20);

impl From<Cause> for Failure {
    fn from(cause: Cause) -> Failure {
        Failure { cause, gave_up: None }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cause {
    Connect(HostError),
    ConnectTimeout { ms: u32 },
    ReadTimeout { ms: u32 },
    Io(HostError),
    Http(http::Error),
    /// The service kept answering with a status worth retrying until the deadline.
    Status(u16),
    TooManyRequests { limit: u32 },
}

pub use super::explain::{ErrnoWords, Explain};

impl Explain for Failure {
    fn explain(&self, f: &mut fmt::Formatter<'_>, words: ErrnoWords) -> fmt::Result {
        match self.cause {
            Cause::Connect(e) => {
                f.write_str("cannot connect: ")?;
                words(e, f)?
            }
            Cause::ConnectTimeout { ms } => write!(f, "no connection within {ms} ms", ms = Decimal(ms as u64))?,
            Cause::ReadTimeout { ms } => write!(f, "no complete answer within {ms} ms", ms = Decimal(ms as u64))?,
            Cause::Io(e) => {
                f.write_str("connection failed: ")?;
                words(e, f)?
            }
            Cause::Http(e) => write!(f, "bad HTTP response: {e}")?,
            // As u32: the binary then has one formatter less (u16's).
            Cause::Status(status) => write!(f, "HTTP status {}", Decimal(status.into()))?,
            Cause::TooManyRequests { limit } => write!(f, "more than {limit} requests at once", limit = Decimal(limit.into()))?,
        }
        match self.gave_up {
            Some(gave_up) => write!(f, "; gave up after {gave_up}"),
            None => Ok(()),
        }
    }
}
