//! Drives HTTP exchanges over the host's sockets (`host::sockets`): every request on its
//! own non-blocking socket, one poll over all of them, each request tried again on
//! `retry::Backoff`'s schedule inside its total deadline. A bootstrap then costs the chain
//! of dependent round trips, not their sum. Decides when an attempt starts, how long it
//! may take, which failures are worth another attempt, and when to give up.

use crate::host::http::{Cause, Endpoint, Exchange, Failure, Http, Outcome, PARALLEL_LIMIT};
use crate::host::sockets::{Interest, Sockets};
use crate::host::HostError;
use crate::http::{self, Status};
use crate::retry::{status_is_retryable, Backoff, Timeouts};

/// A host with sockets exchanges HTTP as this module drives them, so that a host
/// implements only the system calls.
impl<T: Sockets> Http for T {
    fn exchange_all(&mut self, endpoint: Endpoint, exchanges: &mut [Exchange<'_>], timeouts: &Timeouts) {
        exchange_all(self, endpoint, exchanges, timeouts)
    }

    fn has_route(&mut self, endpoint: Endpoint) -> bool {
        Sockets::has_route(self, endpoint)
    }
}

/// Where an attempt is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Waiting to (re)connect.
    Idle,
    Connecting,
    Sending { sent: usize },
    Receiving { filled: usize },
    Finished,
}

/// One exchange on its way: its stage, until when it may stay there (the time an idle
/// attempt starts, the deadline of one under way), its connection and its retry schedule.
struct Attempt<'e, 'b, S> {
    exchange: &'e mut Exchange<'b>,
    stage: Stage,
    until: u64,
    socket: Option<S>,
    backoff: Backoff,
}

/// Runs every exchange to its end: a reply (any status `status_is_retryable` refuses), or
/// a failure once the total deadline leaves no room for another attempt.
pub fn exchange_all<H: Sockets>(host: &mut H, endpoint: Endpoint, exchanges: &mut [Exchange<'_>], timeouts: &Timeouts) {
    if exchanges.len() > PARALLEL_LIMIT {
        for exchange in exchanges.iter_mut() {
            exchange.outcome = Outcome::Failed(Cause::TooManyRequests { limit: PARALLEL_LIMIT as u32 }.into());
        }
        return;
    }
    let started = host.now_ms();
    let mut attempts: heapless::Vec<Attempt<'_, '_, H::Socket>, PARALLEL_LIMIT> = heapless::Vec::new();
    for exchange in exchanges.iter_mut() {
        exchange.outcome = Outcome::Pending;
        let _ = attempts.push(Attempt { exchange, stage: Stage::Idle, until: 0, socket: None, backoff: Backoff::new(timeouts) });
    }
    loop {
        let now = host.now_ms() - started;
        for attempt in attempts.iter_mut() {
            if attempt.stage == Stage::Idle && now >= attempt.until {
                attempt.start(host, endpoint, now, timeouts);
            }
        }
        let Some(wake_at) = attempts.iter().filter(|a| a.stage != Stage::Finished).map(|a| a.until).min() else { return };
        let mut ready = [false; PARALLEL_LIMIT];
        let mut waits: heapless::Vec<(&H::Socket, Interest), PARALLEL_LIMIT> = heapless::Vec::new();
        for attempt in &attempts {
            if let Some(wait) = attempt.wait() {
                let _ = waits.push(wait);
            }
        }
        let timeout = wake_at.saturating_sub(now).min(u64::from(u32::MAX)) as u32;
        // A failed (interrupted) poll leaves no socket ready: each deadline is checked.
        let _ = host.poll(&waits, &mut ready[..waits.len()], timeout);
        drop(waits);
        let now = host.now_ms() - started;
        // `ready` is in the attempts' order, one for each that waited.
        let mut polled = ready.iter();
        for attempt in attempts.iter_mut() {
            if attempt.wait().is_some() {
                let ready = polled.next().copied().unwrap_or(false);
                attempt.advance(host, ready, now, timeouts);
            }
        }
    }
}

impl<S> Attempt<'_, '_, S> {
    /// The socket and what it waits for, while the attempt is on a connection.
    fn wait(&self) -> Option<(&S, Interest)> {
        let interest = match self.stage {
            Stage::Connecting | Stage::Sending { .. } => Interest::Write,
            Stage::Receiving { .. } => Interest::Read,
            Stage::Idle | Stage::Finished => return None,
        };
        Some((self.socket.as_ref()?, interest))
    }

    fn start<H: Sockets<Socket = S>>(&mut self, host: &mut H, endpoint: Endpoint, now: u64, timeouts: &Timeouts) {
        match host.connect(endpoint) {
            Ok(socket) => {
                self.until = now + u64::from(self.backoff.attempt_budget(now, timeouts.connect_ms));
                self.socket = Some(socket);
                self.stage = Stage::Connecting;
            }
            Err(e) => self.retry_or_fail(Cause::Connect(e), now),
        }
    }

    /// One step after poll: the socket was `ready`, or the attempt's deadline may have come.
    /// Not inlined (nor `receive`): inside the loop they cost 1.1 KB more.
    #[inline(never)]
    fn advance<H: Sockets<Socket = S>>(&mut self, host: &mut H, ready: bool, now: u64, timeouts: &Timeouts) {
        let Some(socket) = &self.socket else { return };
        if !ready {
            if now >= self.until {
                let timeout = match self.stage {
                    Stage::Connecting => Cause::ConnectTimeout { ms: timeouts.connect_ms },
                    _ => Cause::ReadTimeout { ms: timeouts.read_ms },
                };
                self.retry_or_fail(timeout, now);
            }
            return;
        }
        match self.stage {
            Stage::Connecting => match host.connect_result(socket) {
                Ok(()) => {
                    // The read limit runs from the connection to the complete answer.
                    self.until = now + u64::from(self.backoff.attempt_budget(now, timeouts.read_ms));
                    self.stage = Stage::Sending { sent: 0 };
                }
                Err(e) => self.retry_or_fail(Cause::Connect(e), now),
            },
            Stage::Sending { sent } => {
                let request = self.exchange.request;
                match host.send(socket, &request[sent..]) {
                    Ok(n) if sent + n == request.len() => self.stage = Stage::Receiving { filled: 0 },
                    Ok(n) => self.stage = Stage::Sending { sent: sent + n },
                    Err(HostError::WOULD_BLOCK | HostError::INTERRUPTED) => {}
                    Err(e) => self.retry_or_fail(Cause::Io(e), now),
                }
            }
            Stage::Receiving { filled } => self.receive(host, filled, now),
            Stage::Idle | Stage::Finished => {}
        }
    }

    #[inline(never)]
    fn receive<H: Sockets<Socket = S>>(&mut self, host: &mut H, filled: usize, now: u64) {
        let Some(socket) = &self.socket else { return };
        let capacity = self.exchange.response.len();
        let received = if filled < capacity {
            host.receive(socket, &mut self.exchange.response[filled..])
        } else {
            // A full buffer: only the end of the stream may follow.
            match host.receive(socket, &mut [0u8; 1]) {
                Ok(0) => Ok(0),
                Ok(_) => return self.finish(Outcome::Failed(Cause::Http(http::Error::BodyTooLarge { limit: capacity as u32 }).into())),
                Err(e) => Err(e),
            }
        };
        let (filled, eof) = match received {
            Ok(0) => (filled, true),
            Ok(n) => (filled + n, false),
            Err(HostError::WOULD_BLOCK | HostError::INTERRUPTED) => (filled, false),
            Err(e) => return self.retry_or_fail(Cause::Io(e), now),
        };
        let response = &*self.exchange.response;
        let outcome = match http::parse_response(&response[..filled], capacity, eof) {
            Ok(Status::Complete(reply)) if status_is_retryable(reply.status) => Err(Cause::Status(reply.status)),
            Ok(Status::Complete(reply)) => {
                let body_start = reply.body.as_ptr() as usize - response.as_ptr() as usize;
                Ok(Outcome::Reply { status: reply.status, body_start, body_len: reply.body.len() })
            }
            Ok(Status::Partial) if !eof => return self.stage = Stage::Receiving { filled },
            Ok(Status::Partial) => Err(Cause::Io(HostError::CONNECTION_RESET)),
            // Limits are properties of the answer, not of the moment: retrying cannot help.
            Err(e @ (http::Error::HeadTooLarge { .. } | http::Error::BodyTooLarge { .. } | http::Error::TooManyHeaders)) => {
                Ok(Outcome::Failed(Cause::Http(e).into()))
            }
            Err(e) => Err(Cause::Http(e)),
        };
        match outcome {
            Ok(outcome) => self.finish(outcome),
            Err(cause) => self.retry_or_fail(cause, now),
        }
    }

    /// The attempt's connection closed; the next attempt after the pause, or the failure.
    fn retry_or_fail(&mut self, cause: Cause, now: u64) {
        self.socket = None;
        match self.backoff.next_delay(now) {
            Ok(delay) => {
                self.stage = Stage::Idle;
                self.until = now + u64::from(delay);
            }
            Err(gave_up) => self.finish(Outcome::Failed(Failure { cause, gave_up: Some(gave_up) })),
        }
    }

    fn finish(&mut self, outcome: Outcome) {
        self.socket = None;
        self.exchange.outcome = outcome;
        self.stage = Stage::Finished;
    }
}

#[cfg(test)]
mod tests {
    use std::vec::Vec;

    use super::*;
    use crate::host::memory::{MemorySockets, Peer};
    use crate::retry::GaveUp;

    const REQUEST: &[u8] = b"GET /latest/meta-data/instance-id HTTP/1.0\r\nHost: 169.254.169.254\r\n\r\n";
    const ENDPOINT: Endpoint = Endpoint::Tcp { address: [169, 254, 169, 254], port: 80, privileged: false };
    const REFUSED: HostError = HostError { errno: 111 };

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

    fn timeouts(total_ms: u32) -> Timeouts {
        Timeouts { connect_ms: 300, read_ms: 1000, total_ms, backoff_initial_ms: 100, backoff_max_ms: 400 }
    }

    /// The outcome of one request, and its body as text when it was answered.
    fn one(sockets: &mut MemorySockets, response_limit: usize, total_ms: u32) -> (Result<u16, Failure>, std::string::String) {
        let mut response = std::vec![0u8; response_limit];
        let mut exchanges = [Exchange::new(REQUEST, &mut response)];
        exchange_all(sockets, ENDPOINT, &mut exchanges, &timeouts(total_ms));
        match exchanges[0].result() {
            Ok((status, body)) => (Ok(status), std::string::String::from_utf8(exchanges[0].response[body].to_vec()).unwrap()),
            Err(failure) => (Err(failure), std::string::String::new()),
        }
    }

    #[test]
    fn a_refused_connection_is_tried_again_after_each_pause() {
        let mut sockets = MemorySockets::new([Peer::Refuses(REFUSED), Peer::Refuses(REFUSED), Peer::http(200, "i-0123")]);
        assert_eq!(one(&mut sockets, 1024, 5000), (Ok(200), "i-0123".into()));
        assert_eq!(sockets.calls, ["connect at 0", "connect at 100", "connect at 300"]);
        assert_eq!(sockets.received.last().unwrap(), REQUEST);
    }

    #[test]
    fn a_service_that_keeps_refusing_is_given_up_at_the_deadline() {
        let mut sockets = MemorySockets::new([Peer::Refuses(REFUSED)]);
        let (outcome, _) = one(&mut sockets, 1024, 1000);
        // Pauses of 100, 200, 400: a fourth pause of 400 would start past the deadline.
        assert_eq!(outcome, Err(Failure { cause: Cause::Connect(REFUSED), gave_up: Some(GaveUp::new(4, 1000)) }));
        assert_eq!(sockets.calls, ["connect at 0", "connect at 100", "connect at 300", "connect at 700"]);
    }

    #[test]
    fn a_silent_service_costs_each_attempt_its_connect_limit_cut_at_the_deadline() {
        let mut sockets = MemorySockets::new([Peer::Silent]);
        let (outcome, _) = one(&mut sockets, 1024, 1000);
        assert_eq!(outcome, Err(Failure { cause: Cause::ConnectTimeout { ms: 300 }, gave_up: Some(GaveUp::new(3, 1000)) }));
        // 0-300, then 400-700, then 900 until the deadline at 1000.
        assert_eq!(sockets.calls, ["connect at 0", "connect at 400", "connect at 900"]);
        assert_eq!(sockets.now, 1000);
    }

    #[test]
    fn an_answer_that_never_completes_costs_the_read_limit() {
        let partial = Peer::Answers { bytes: b"HTTP/1.0 200 X\r\nContent-Length: 10\r\n\r\nabc".to_vec(), closes: false };
        let mut sockets = MemorySockets::new([partial, Peer::http(200, "0123456789")]);
        assert_eq!(one(&mut sockets, 1024, 5000), (Ok(200), "0123456789".into()));
        assert_eq!(sockets.calls, ["connect at 0", "connect at 1100"]);
        let partial = Peer::Answers { bytes: b"HTTP/1.0 200 X\r\n".to_vec(), closes: false };
        let (outcome, _) = one(&mut MemorySockets::new([partial]), 1024, 1000);
        assert_eq!(outcome, Err(Failure { cause: Cause::ReadTimeout { ms: 1000 }, gave_up: Some(GaveUp::new(1, 1000)) }));
    }

    #[test]
    fn an_answer_cut_short_by_the_peer_is_asked_again() {
        let cut = Peer::Answers { bytes: b"HTTP/1.0 200 X\r\nContent-Length: 10\r\n\r\nabc".to_vec(), closes: true };
        let mut sockets = MemorySockets::new([cut, Peer::http(200, "0123456789")]);
        assert_eq!(one(&mut sockets, 1024, 5000), (Ok(200), "0123456789".into()));
        assert_eq!(sockets.calls, ["connect at 0", "connect at 100"]);
        let (outcome, _) = one(&mut MemorySockets::new([Peer::Answers { bytes: b"HTTP/1.0 200".to_vec(), closes: true }]), 1024, 50);
        assert_eq!(outcome.unwrap_err().cause, Cause::Http(http::Error::TruncatedHead { received: 12 }));
    }

    #[test]
    fn a_status_worth_retrying_is_asked_again_and_the_next_kept() {
        let mut sockets = MemorySockets::new([Peer::http(503, "busy"), Peer::http(429, ""), Peer::http(404, "gone")]);
        assert_eq!(one(&mut sockets, 1024, 5000), (Ok(404), "gone".into()));
        assert_eq!(sockets.calls, ["connect at 0", "connect at 100", "connect at 300"]);
        let (outcome, _) = one(&mut MemorySockets::new([Peer::http(500, "")]), 1024, 250);
        assert_eq!(outcome, Err(Failure { cause: Cause::Status(500), gave_up: Some(GaveUp::new(2, 250)) }));
    }

    #[test]
    fn an_answer_over_its_buffer_fails_at_once() {
        let mut sockets = MemorySockets::new([Peer::Answers { bytes: b"HTTP/1.0 200 X\r\n\r\n0123456789012345678901234567890123456789".to_vec(), closes: true }]);
        let (outcome, _) = one(&mut sockets, 40, 5000);
        assert_eq!(outcome, Err(Cause::Http(http::Error::BodyTooLarge { limit: 40 }).into()));
        assert_eq!(sockets.calls, ["connect at 0"]);
    }

    #[test]
    fn a_request_and_its_answer_move_in_pieces() {
        let mut sockets = MemorySockets::new([Peer::http(200, "i-0123")]);
        sockets.chunk = 7;
        assert_eq!(one(&mut sockets, 1024, 5000), (Ok(200), "i-0123".into()));
        assert_eq!(sockets.received, [REQUEST]);
    }

    #[test]
    fn requests_wait_side_by_side_not_one_after_another() {
        let mut sockets = MemorySockets::new([Peer::Silent, Peer::Silent, Peer::http(200, "x")]);
        let (mut first, mut second) = (std::vec![0u8; 256], std::vec![0u8; 256]);
        let mut exchanges = [Exchange::new(REQUEST, &mut first), Exchange::new(REQUEST, &mut second)];
        exchange_all(&mut sockets, ENDPOINT, &mut exchanges, &timeouts(5000));
        assert!(exchanges.iter().all(|e| e.result().is_ok_and(|(status, _)| status == 200)));
        // Both time out together at 300 and are tried again together at 400.
        assert_eq!(sockets.calls, ["connect at 0", "connect at 0", "connect at 400", "connect at 400"]);
    }

    #[test]
    fn more_requests_than_the_limit_all_fail_unsent() {
        let mut sockets = MemorySockets::new([Peer::http(200, "x")]);
        let mut buffers: Vec<[u8; 64]> = std::vec![[0u8; 64]; PARALLEL_LIMIT + 1];
        let mut exchanges: Vec<Exchange<'_>> = buffers.iter_mut().map(|b| Exchange::new(REQUEST, b)).collect();
        exchange_all(&mut sockets, ENDPOINT, &mut exchanges, &timeouts(5000));
        let too_many = Failure::from(Cause::TooManyRequests { limit: PARALLEL_LIMIT as u32 });
        assert!(exchanges.iter().all(|e| e.result() == Err(too_many)));
        assert!(sockets.calls.is_empty());
    }
}
