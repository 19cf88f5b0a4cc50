//! Sends several HTTP requests at once and waits for all of them: one non-blocking
//! socket per request, one poll(2) over all of them, each request retried with backoff
//! inside the total deadline. A bootstrap then costs the chain of dependent round trips,
//! not their sum.

use core::fmt;
use core::ops::Range;

use wisp_core::http::{self, Status};
use wisp_core::retry::{status_is_retryable, Backoff, GaveUp, Timeouts};
use wisp_os_linux::net::{self, PollFd, PollFlags};
use wisp_os_linux::time::monotonic_ms;
use wisp_os_linux::{Errno, OwnedFd};

use crate::output::Os;

/// Most requests in flight at once: a key listing and its keys.
pub const PARALLEL_LIMIT: usize = 24;

/// Why a request failed: its last attempt's cause, and when it was retried until the
/// deadline, how often and within what.
#[derive(Clone, Copy, Debug)]
pub struct Failure {
    pub cause: Cause,
    pub gave_up: Option<GaveUp>,
}

impl From<Cause> for Failure {
    fn from(cause: Cause) -> Failure {
        Failure { cause, gave_up: None }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.cause)?;
        match self.gave_up {
            Some(gave_up) => write!(f, "; gave up after {gave_up}"),
            None => Ok(()),
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub enum Cause {
    Connect(Errno),
    ConnectTimeout { ms: u32 },
    ReadTimeout { ms: u32 },
    Io(Errno),
    Http(http::Error),
    /// The service kept answering with a status worth retrying until the deadline.
    Status(u16),
    TooManyRequests { limit: usize },
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Cause::Connect(e) => write!(f, "cannot connect: {}", Os(*e)),
            Cause::ConnectTimeout { ms } => write!(f, "no connection within {ms} ms"),
            Cause::ReadTimeout { ms } => write!(f, "no complete answer within {ms} ms"),
            Cause::Io(e) => write!(f, "connection failed: {}", Os(*e)),
            Cause::Http(e) => write!(f, "bad HTTP response: {e}"),
            // As u32: the binary then has one formatter less (u16's).
            Cause::Status(status) => write!(f, "HTTP status {}", u32::from(*status)),
            Cause::TooManyRequests { limit } => write!(f, "more than {limit} requests at once"),
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub enum Outcome {
    Pending,
    Reply { status: u16, body_start: usize, body_len: usize },
    Failed(Failure),
}

enum Stage {
    /// Waiting to (re)connect at this time.
    Idle { start_at: u64 },
    Connecting { socket: OwnedFd, deadline: u64 },
    Sending { socket: OwnedFd, sent: usize, deadline: u64 },
    Receiving { socket: OwnedFd, filled: usize, deadline: u64 },
    Finished,
}

/// One request and the buffer its response goes into.
pub struct Exchange<'b> {
    request: &'b [u8],
    response: &'b mut [u8],
    pub outcome: Outcome,
    stage: Stage,
}

impl<'b> Exchange<'b> {
    pub fn new(request: &'b [u8], response: &'b mut [u8]) -> Self {
        Exchange { request, response, outcome: Outcome::Pending, stage: Stage::Idle { start_at: 0 } }
    }

    /// The status of a finished exchange and where its body lies in the response buffer.
    pub fn result(&self) -> Result<(u16, Range<usize>), Failure> {
        match self.outcome {
            Outcome::Reply { status, body_start, body_len } => Ok((status, body_start..body_start + body_len)),
            Outcome::Failed(failure) => Err(failure),
            Outcome::Pending => Err(Cause::Io(Errno::INPROGRESS).into()),
        }
    }

    /// The status and body of a finished exchange.
    pub fn reply(&self) -> Result<(u16, &[u8]), Failure> {
        self.result().map(|(status, body)| (status, &self.response[body]))
    }
}

/// One GET of `host` `path` at `address:port`, the body moved to the start of `out`:
/// its length, `None` for a 404, an error naming the URL for any other failure.
#[inline(never)]
pub fn get(address: [u8; 4], port: u16, host: &str, path: &str, out: &mut [u8], timeouts: &Timeouts) -> Result<Option<usize>, crate::output::Line> {
    let get = http::Request { method: http::Method::Get, host, path, headers: &[], body: b"" };
    let mut request = [0u8; 1024];
    let len = http::write_request(&get, &mut request).map_err(|e| msg!("http://{host}{path}: {e}"))?;
    let mut exchanges = [Exchange::new(&request[..len], out)];
    exchange_all(&mut exchanges, address, port, timeouts);
    let (status, body) = exchanges[0].result().map_err(|e| msg!("http://{host}{path}: {e}"))?;
    match status {
        200 => {
            let len = body.len();
            out.copy_within(body, 0);
            Ok(Some(len))
        }
        404 => Ok(None),
        status => Err(msg!("http://{host}{path}: HTTP status {}", u32::from(status))),
    }
}

/// Where the requests go.
#[derive(Clone, Copy)]
pub enum Endpoint<'p> {
    /// TCP, from a privileged source port when the flag is set.
    Tcp { address: [u8; 4], port: u16, privileged: bool },
    /// A Unix stream socket at this path.
    #[cfg_attr(not(feature = "incus"), allow(dead_code))]
    Unix(&'p core::ffi::CStr),
}

/// Runs every exchange to its end: a reply (any status that is not worth retrying), or a
/// failure once the total deadline leaves no room for another attempt.
pub fn exchange_all(exchanges: &mut [Exchange<'_>], address: [u8; 4], port: u16, timeouts: &Timeouts) {
    exchange_all_at(exchanges, Endpoint::Tcp { address, port, privileged: false }, timeouts)
}

/// `exchange_all` with any endpoint.
pub fn exchange_all_at(exchanges: &mut [Exchange<'_>], endpoint: Endpoint<'_>, timeouts: &Timeouts) {
    if exchanges.len() > PARALLEL_LIMIT {
        for exchange in exchanges.iter_mut() {
            exchange.outcome = Outcome::Failed(Cause::TooManyRequests { limit: PARALLEL_LIMIT }.into());
        }
        return;
    }
    let started = monotonic_ms();
    let elapsed = || monotonic_ms() - started;
    let mut backoffs: heapless::Vec<Backoff, PARALLEL_LIMIT> = heapless::Vec::new();
    for exchange in exchanges.iter_mut() {
        exchange.outcome = Outcome::Pending;
        exchange.stage = Stage::Idle { start_at: 0 };
        let _ = backoffs.push(Backoff::new(timeouts));
    }
    loop {
        let now = elapsed();
        for (exchange, backoff) in exchanges.iter_mut().zip(backoffs.iter_mut()) {
            if let Stage::Idle { start_at } = exchange.stage {
                if now >= start_at {
                    start(exchange, backoff, endpoint, now, timeouts);
                }
            }
        }
        if exchanges.iter().all(|e| matches!(e.stage, Stage::Finished)) {
            return;
        }
        let mut ready = [PollFlags::empty(); PARALLEL_LIMIT];
        wait(exchanges, &mut ready, now);
        let now = elapsed();
        for ((exchange, backoff), &events) in exchanges.iter_mut().zip(backoffs.iter_mut()).zip(&ready) {
            advance(exchange, backoff, events, now, timeouts);
        }
    }
}

fn start(exchange: &mut Exchange<'_>, backoff: &mut Backoff, endpoint: Endpoint<'_>, now: u64, timeouts: &Timeouts) {
    let connected = match endpoint {
        Endpoint::Tcp { address, port, privileged } => net::connect_start_from(address, port, privileged),
        Endpoint::Unix(path) => net::connect_unix_start(path),
    };
    match connected {
        Ok(socket) => {
            let deadline = now + u64::from(backoff.attempt_budget(now, timeouts.connect_ms));
            exchange.stage = Stage::Connecting { socket, deadline };
        }
        Err(e) => retry_or_fail(exchange, backoff, Cause::Connect(e), now),
    }
}

/// poll(2) until a socket is ready or the earliest deadline or restart time.
fn wait(exchanges: &[Exchange<'_>], ready: &mut [PollFlags; PARALLEL_LIMIT], now: u64) {
    let mut fds: heapless::Vec<PollFd<'_>, PARALLEL_LIMIT> = heapless::Vec::new();
    let mut owners: heapless::Vec<usize, PARALLEL_LIMIT> = heapless::Vec::new();
    let mut wake_at = u64::MAX;
    for (i, exchange) in exchanges.iter().enumerate() {
        let (socket, flags, at) = match &exchange.stage {
            Stage::Idle { start_at } => {
                wake_at = wake_at.min(*start_at);
                continue;
            }
            Stage::Finished => continue,
            Stage::Connecting { socket, deadline } => (socket, PollFlags::OUT, *deadline),
            Stage::Sending { socket, deadline, .. } => (socket, PollFlags::OUT, *deadline),
            Stage::Receiving { socket, deadline, .. } => (socket, PollFlags::IN, *deadline),
        };
        wake_at = wake_at.min(at);
        let _ = fds.push(PollFd::new(socket, flags));
        let _ = owners.push(i);
    }
    let timeout = wake_at.saturating_sub(now).min(u64::from(u32::MAX)) as u32;
    if net::poll(&mut fds, timeout).is_ok() {
        for (fd, &owner) in fds.iter().zip(&owners) {
            ready[owner] = fd.revents();
        }
    }
}

fn advance(exchange: &mut Exchange<'_>, backoff: &mut Backoff, events: PollFlags, now: u64, timeouts: &Timeouts) {
    let stage = core::mem::replace(&mut exchange.stage, Stage::Finished);
    exchange.stage = match stage {
        Stage::Connecting { socket, deadline } if events.is_empty() => {
            if now >= deadline {
                return retry_or_fail(exchange, backoff, Cause::ConnectTimeout { ms: timeouts.connect_ms }, now);
            }
            Stage::Connecting { socket, deadline }
        }
        Stage::Connecting { socket, .. } => match net::connect_result(&socket) {
            Ok(()) => {
                let deadline = now + u64::from(backoff.attempt_budget(now, timeouts.read_ms));
                Stage::Sending { socket, sent: 0, deadline }
            }
            Err(e) => return retry_or_fail(exchange, backoff, Cause::Connect(e), now),
        },
        Stage::Sending { socket, sent, deadline } => {
            if events.is_empty() {
                if now >= deadline {
                    return retry_or_fail(exchange, backoff, Cause::ReadTimeout { ms: timeouts.read_ms }, now);
                }
                Stage::Sending { socket, sent, deadline }
            } else {
                match net::send(&socket, &exchange.request[sent..]) {
                    Ok(n) if sent + n == exchange.request.len() => Stage::Receiving { socket, filled: 0, deadline },
                    Ok(n) => Stage::Sending { socket, sent: sent + n, deadline },
                    Err(Errno::AGAIN) | Err(Errno::INTR) => Stage::Sending { socket, sent, deadline },
                    Err(e) => return retry_or_fail(exchange, backoff, Cause::Io(e), now),
                }
            }
        }
        Stage::Receiving { socket, filled, deadline } => {
            if events.is_empty() {
                if now >= deadline {
                    return retry_or_fail(exchange, backoff, Cause::ReadTimeout { ms: timeouts.read_ms }, now);
                }
                Stage::Receiving { socket, filled, deadline }
            } else {
                return receive(exchange, backoff, socket, filled, deadline, now);
            }
        }
        other => other,
    };
}

fn receive(exchange: &mut Exchange<'_>, backoff: &mut Backoff, socket: OwnedFd, filled: usize, deadline: u64, now: u64) {
    let capacity = exchange.response.len();
    let received = if filled < capacity {
        net::recv(&socket, &mut exchange.response[filled..])
    } else {
        // A full buffer: only the end of the stream may follow.
        let mut probe = [0u8; 1];
        net::recv(&socket, &mut probe).map(|n| if n == 0 { 0 } else { usize::MAX })
    };
    let (filled, eof) = match received {
        Ok(0) => (filled, true),
        Ok(usize::MAX) => {
            let failure = Cause::Http(http::Error::BodyTooLarge { limit: capacity });
            return finish(exchange, Outcome::Failed(failure.into()));
        }
        Ok(n) => (filled + n, false),
        Err(Errno::AGAIN) | Err(Errno::INTR) => (filled, false),
        Err(e) => return retry_or_fail(exchange, backoff, Cause::Io(e), now),
    };
    match http::parse_response(&exchange.response[..filled], capacity, eof) {
        Ok(Status::Complete(response)) => {
            let status = response.status;
            if status_is_retryable(status) {
                return retry_or_fail(exchange, backoff, Cause::Status(status), now);
            }
            let body_start = response.body.as_ptr() as usize - exchange.response.as_ptr() as usize;
            let body_len = response.body.len();
            finish(exchange, Outcome::Reply { status, body_start, body_len });
        }
        Ok(Status::Partial) if !eof => exchange.stage = Stage::Receiving { socket, filled, deadline },
        Ok(Status::Partial) => retry_or_fail(exchange, backoff, Cause::Io(Errno::CONNRESET), now),
        // Limits are properties of the answer, not of the moment: retrying cannot help.
        Err(e @ (http::Error::HeadTooLarge { .. } | http::Error::BodyTooLarge { .. } | http::Error::TooManyHeaders { .. })) => {
            finish(exchange, Outcome::Failed(Cause::Http(e).into()))
        }
        Err(e) => retry_or_fail(exchange, backoff, Cause::Http(e), now),
    }
}

fn retry_or_fail(exchange: &mut Exchange<'_>, backoff: &mut Backoff, cause: Cause, now: u64) {
    match backoff.next_delay(now) {
        Ok(delay) => exchange.stage = Stage::Idle { start_at: now + u64::from(delay) },
        Err(gave_up) => finish(exchange, Outcome::Failed(Failure { cause, gave_up: Some(gave_up) })),
    }
}

fn finish(exchange: &mut Exchange<'_>, outcome: Outcome) {
    exchange.outcome = outcome;
    exchange.stage = Stage::Finished;
}
