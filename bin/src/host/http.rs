//! core's `Http` and `Clock` over Linux's network: one non-blocking socket per request,
//! one poll(2) over all of them, each request retried with core's backoff inside the
//! total deadline. A bootstrap then costs the chain of dependent round trips, not their
//! sum.

use core::ffi::CStr;

use wisp_core::host::http::{Cause, Endpoint, Exchange, Failure, Outcome, PARALLEL_LIMIT};
use wisp_core::http::{self, Status};
use wisp_core::retry::{status_is_retryable, Backoff, Timeouts};
use wisp_os_linux::net::{self, PollFd, PollFlags};
use wisp_os_linux::time::monotonic_ms;
use wisp_os_linux::{Errno, OwnedFd};

use super::host_error;

/// Linux's network, and the wall clock. It needs no root: only where the guest API's
/// socket is, when the instance has one.
pub struct Network<'p> {
    pub guest_socket: Option<&'p CStr>,
}

impl wisp_core::host::http::Http for Network<'_> {
    fn exchange_all(&mut self, endpoint: Endpoint, exchanges: &mut [Exchange<'_>], timeouts: &Timeouts) {
        exchange_all(endpoint, self.guest_socket, exchanges, timeouts)
    }

    fn has_route(&mut self, endpoint: Endpoint) -> bool {
        match endpoint {
            Endpoint::Tcp { address, port, .. } => net::has_route(address, port),
            _ => true,
        }
    }
}

impl wisp_core::host::clock::Clock for Network<'_> {
    fn realtime_secs(&mut self) -> u64 {
        wisp_os_linux::time::realtime_secs()
    }
}

/// Where an exchange is; its socket, while it has one, is kept beside.
#[derive(Clone, Copy)]
enum Stage {
    /// Waiting to (re)connect at this time.
    Idle { start_at: u64 },
    Connecting { deadline: u64 },
    Sending { sent: usize, deadline: u64 },
    Receiving { filled: usize, deadline: u64 },
    Finished,
}

/// One exchange on its way: where it is, its connection, and its retry schedule.
struct Attempt<'e, 'b> {
    exchange: &'e mut Exchange<'b>,
    stage: Stage,
    socket: Option<OwnedFd>,
    backoff: Backoff,
}

/// Runs every exchange to its end: a reply (any status that is not worth retrying), or a
/// failure once the total deadline leaves no room for another attempt.
fn exchange_all(endpoint: Endpoint, guest_socket: Option<&CStr>, exchanges: &mut [Exchange<'_>], timeouts: &Timeouts) {
    if exchanges.len() > PARALLEL_LIMIT {
        for exchange in exchanges.iter_mut() {
            exchange.outcome = Outcome::Failed(Cause::TooManyRequests { limit: PARALLEL_LIMIT }.into());
        }
        return;
    }
    let started = monotonic_ms();
    let elapsed = || monotonic_ms() - started;
    let mut attempts: heapless::Vec<Attempt<'_, '_>, PARALLEL_LIMIT> = heapless::Vec::new();
    for exchange in exchanges.iter_mut() {
        exchange.outcome = Outcome::Pending;
        let _ = attempts.push(Attempt { exchange, stage: Stage::Idle { start_at: 0 }, socket: None, backoff: Backoff::new(timeouts) });
    }
    loop {
        let now = elapsed();
        for attempt in attempts.iter_mut() {
            if let Stage::Idle { start_at } = attempt.stage {
                if now >= start_at {
                    start(attempt, endpoint, guest_socket, now, timeouts);
                }
            }
        }
        if attempts.iter().all(|a| matches!(a.stage, Stage::Finished)) {
            return;
        }
        let mut ready = [PollFlags::empty(); PARALLEL_LIMIT];
        wait(&attempts, &mut ready, now);
        let now = elapsed();
        for (attempt, &events) in attempts.iter_mut().zip(&ready) {
            advance(attempt, events, now, timeouts);
        }
    }
}

#[cfg_attr(not(feature = "incus"), allow(unused_variables))]
fn start(attempt: &mut Attempt<'_, '_>, endpoint: Endpoint, guest_socket: Option<&CStr>, now: u64, timeouts: &Timeouts) {
    let connected = match endpoint {
        Endpoint::Tcp { address, port, privileged } => net::connect_start_from(address, port, privileged),
        Endpoint::Tcp6 { address, port } => net::connect6_start(address.octets(), port),
        #[cfg(feature = "incus")]
        Endpoint::GuestSocket => net::connect_unix_start(guest_socket.unwrap_or(c"/dev/incus/sock")),
        // Only Incus's service is reached through the guest socket.
        #[cfg(not(feature = "incus"))]
        Endpoint::GuestSocket => Err(Errno::NOENT),
    };
    match connected {
        Ok(socket) => {
            let deadline = now + u64::from(attempt.backoff.attempt_budget(now, timeouts.connect_ms));
            attempt.socket = Some(socket);
            attempt.stage = Stage::Connecting { deadline };
        }
        Err(e) => retry_or_fail(attempt, Cause::Connect(host_error(e)), now),
    }
}

/// The events an attempt waits for, and until when; `None` when it waits for none.
fn interest(attempt: &Attempt<'_, '_>) -> Option<(PollFlags, u64)> {
    match attempt.stage {
        Stage::Connecting { deadline } | Stage::Sending { deadline, .. } => Some((PollFlags::OUT, deadline)),
        Stage::Receiving { deadline, .. } => Some((PollFlags::IN, deadline)),
        Stage::Idle { .. } | Stage::Finished => None,
    }
}

/// poll(2) until a socket is ready or the earliest deadline or restart time.
fn wait(attempts: &[Attempt<'_, '_>], ready: &mut [PollFlags; PARALLEL_LIMIT], now: u64) {
    let mut fds: heapless::Vec<PollFd<'_>, PARALLEL_LIMIT> = heapless::Vec::new();
    let mut wake_at = u64::MAX;
    for attempt in attempts {
        if let Stage::Idle { start_at } = attempt.stage {
            wake_at = wake_at.min(start_at);
        }
        if let (Some((flags, deadline)), Some(socket)) = (interest(attempt), &attempt.socket) {
            wake_at = wake_at.min(deadline);
            let _ = fds.push(PollFd::new(socket, flags));
        }
    }
    let timeout = wake_at.saturating_sub(now).min(u64::from(u32::MAX)) as u32;
    if net::poll(&mut fds, timeout).is_ok() {
        // The descriptors are in the attempts' order, one for each that has interest.
        let mut polled = fds.iter();
        for (attempt, ready) in attempts.iter().zip(ready.iter_mut()) {
            if let (Some(_), Some(_)) = (interest(attempt), &attempt.socket) {
                *ready = polled.next().map_or(PollFlags::empty(), PollFd::revents);
            }
        }
    }
}

fn advance(attempt: &mut Attempt<'_, '_>, events: PollFlags, now: u64, timeouts: &Timeouts) {
    let Some(socket) = &attempt.socket else { return };
    let (timeout, deadline) = match attempt.stage {
        Stage::Connecting { deadline } => (Cause::ConnectTimeout { ms: timeouts.connect_ms }, deadline),
        Stage::Sending { deadline, .. } | Stage::Receiving { deadline, .. } => (Cause::ReadTimeout { ms: timeouts.read_ms }, deadline),
        _ => return,
    };
    if events.is_empty() {
        if now >= deadline {
            retry_or_fail(attempt, timeout, now);
        }
        return;
    }
    match attempt.stage {
        Stage::Connecting { .. } => match net::connect_result(socket) {
            Ok(()) => {
                let deadline = now + u64::from(attempt.backoff.attempt_budget(now, timeouts.read_ms));
                attempt.stage = Stage::Sending { sent: 0, deadline };
            }
            Err(e) => retry_or_fail(attempt, Cause::Connect(host_error(e)), now),
        },
        Stage::Sending { sent, deadline } => {
            let request = attempt.exchange.request;
            match net::send(socket, &request[sent..]) {
                Ok(n) if sent + n == request.len() => attempt.stage = Stage::Receiving { filled: 0, deadline },
                Ok(n) => attempt.stage = Stage::Sending { sent: sent + n, deadline },
                Err(Errno::AGAIN) | Err(Errno::INTR) => {}
                Err(e) => retry_or_fail(attempt, Cause::Io(host_error(e)), now),
            }
        }
        Stage::Receiving { filled, deadline } => receive(attempt, filled, deadline, now),
        _ => {}
    }
}

fn receive(attempt: &mut Attempt<'_, '_>, filled: usize, deadline: u64, now: u64) {
    let Some(socket) = &attempt.socket else { return };
    let response = &mut *attempt.exchange.response;
    let capacity = response.len();
    let received = if filled < capacity {
        net::recv(socket, &mut response[filled..])
    } else {
        // A full buffer: only the end of the stream may follow.
        let mut probe = [0u8; 1];
        net::recv(socket, &mut probe).map(|n| if n == 0 { 0 } else { usize::MAX })
    };
    let (filled, eof) = match received {
        Ok(0) => (filled, true),
        Ok(usize::MAX) => {
            let failure = Cause::Http(http::Error::BodyTooLarge { limit: capacity });
            return finish(attempt, Outcome::Failed(failure.into()));
        }
        Ok(n) => (filled + n, false),
        Err(Errno::AGAIN) | Err(Errno::INTR) => (filled, false),
        Err(e) => return retry_or_fail(attempt, Cause::Io(host_error(e)), now),
    };
    let response = &attempt.exchange.response;
    match http::parse_response(&response[..filled], capacity, eof) {
        Ok(Status::Complete(reply)) => {
            let status = reply.status;
            if status_is_retryable(status) {
                return retry_or_fail(attempt, Cause::Status(status), now);
            }
            let body_start = reply.body.as_ptr() as usize - response.as_ptr() as usize;
            let body_len = reply.body.len();
            finish(attempt, Outcome::Reply { status, body_start, body_len });
        }
        Ok(Status::Partial) if !eof => attempt.stage = Stage::Receiving { filled, deadline },
        Ok(Status::Partial) => retry_or_fail(attempt, Cause::Io(host_error(Errno::CONNRESET)), now),
        // Limits are properties of the answer, not of the moment: retrying cannot help.
        Err(e @ (http::Error::HeadTooLarge { .. } | http::Error::BodyTooLarge { .. } | http::Error::TooManyHeaders { .. })) => {
            finish(attempt, Outcome::Failed(Cause::Http(e).into()))
        }
        Err(e) => retry_or_fail(attempt, Cause::Http(e), now),
    }
}

/// The attempt's connection closed; the next attempt after the pause, or the failure.
fn retry_or_fail(attempt: &mut Attempt<'_, '_>, cause: Cause, now: u64) {
    attempt.socket = None;
    match attempt.backoff.next_delay(now) {
        Ok(delay) => attempt.stage = Stage::Idle { start_at: now + u64::from(delay) },
        Err(gave_up) => finish(attempt, Outcome::Failed(Failure { cause, gave_up: Some(gave_up) })),
    }
}

fn finish(attempt: &mut Attempt<'_, '_>, outcome: Outcome) {
    attempt.socket = None;
    attempt.exchange.outcome = outcome;
    attempt.stage = Stage::Finished;
}
