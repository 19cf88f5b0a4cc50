//! When to try a metadata request again. At boot the service can lag behind the network
//! (connection refused, 500s) for seconds, so wisp retries with a doubling pause; every
//! attempt and every pause stays inside one total deadline per request, so a dead
//! service costs a known, configured time and never more.

use core::num::NonZeroU32;

use crate::text::{Decimal, Plain};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeouts {
    /// Per attempt: time to establish the connection.
    pub connect_ms: u32,
    /// Per attempt: time from connecting to the complete response.
    pub read_ms: u32,
    /// All attempts and pauses of one request together.
    pub total_ms: u32,
    pub backoff_initial_ms: u32,
    pub backoff_max_ms: u32,
}

impl Default for Timeouts {
    /// The metadata service is one hop away and answers in about a millisecond: a second
    /// to connect is generous, two seconds for a 256 KiB user-data too. Thirty seconds in
    /// all rides out a slow boot (tiny-cloud's wget retries for about as long), and
    /// pauses from 100 ms doubling to 2 s retry quickly at first without spinning.
    fn default() -> Self {
        Timeouts { connect_ms: 1000, read_ms: 2000, total_ms: 30_000, backoff_initial_ms: 100, backoff_max_ms: 2000 }
    }
}

/// The pauses between the attempts of one request, measured from the request's start.
#[derive(Clone, Copy, Debug)]
pub struct Backoff {
    next_pause_ms: u32,
    max_pause_ms: u32,
    total_ms: u32,
    /// The attempt now under way (the first is 1): the count when the deadline stops it.
    attempt: NonZeroU32,
}

/// A request given up at its deadline. The last attempt's own failure ("no connection
/// within 1000 ms") alone would hide the rest: the time spent and how often it was tried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GaveUp {
    /// Never 0 (a request gives up after an attempt): `Option<GaveUp>` then takes no tag
    /// of its own, and an HTTP `Failure` stays 20 bytes, not 24.
    pub attempts: NonZeroU32,
    pub total_ms: u32,
}

impl GaveUp {
    #[cfg(test)]
    pub fn new(attempts: u32, total_ms: u32) -> GaveUp {
        GaveUp { attempts: NonZeroU32::new(attempts).unwrap(), total_ms }
    }
}

impl core::fmt::Display for GaveUp {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let plural = if self.attempts == NonZeroU32::MIN { "" } else { "s" };
        write!(f, "{} attempt{plural} in the {} ms deadline (WISP_HTTP_TOTAL_MS)", Decimal(self.attempts.get().into()), Decimal(self.total_ms as u64), plural = Plain(plural))
    }
}

impl Backoff {
    pub fn new(timeouts: &Timeouts) -> Self {
        Backoff {
            next_pause_ms: timeouts.backoff_initial_ms.max(1),
            max_pause_ms: timeouts.backoff_max_ms.max(1),
            total_ms: timeouts.total_ms,
            attempt: NonZeroU32::MIN,
        }
    }

    /// After an attempt failed at `now_ms`: the pause before the next one, or what to
    /// say when the next attempt could not start before the deadline.
    pub fn next_delay(&mut self, now_ms: u64) -> Result<u32, GaveUp> {
        let pause = self.next_pause_ms.min(self.max_pause_ms);
        if now_ms + u64::from(pause) >= u64::from(self.total_ms) {
            return Err(GaveUp { attempts: self.attempt, total_ms: self.total_ms });
        }
        self.attempt = self.attempt.saturating_add(1);
        self.next_pause_ms = pause.saturating_mul(2);
        Ok(pause)
    }

    /// An attempt's own limit (`per_attempt_ms`), cut short by the deadline.
    pub fn attempt_budget(&self, now_ms: u64, per_attempt_ms: u32) -> u32 {
        let left = u64::from(self.total_ms).saturating_sub(now_ms);
        left.min(u64::from(per_attempt_ms)) as u32
    }
}

/// Whether an answer is worth asking again: server errors and 429 (too many requests)
/// pass; 4xx other than 429 say something about the request, which will not change.
pub fn status_is_retryable(status: u16) -> bool {
    status == 429 || (500..600).contains(&status)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timeouts(total_ms: u32) -> Timeouts {
        Timeouts { connect_ms: 300, read_ms: 1000, total_ms, backoff_initial_ms: 100, backoff_max_ms: 400 }
    }

    #[test]
    fn doubling_up_to_the_cap() {
        let mut backoff = Backoff::new(&timeouts(100_000));
        let pauses: Vec<_> = (0..6).map(|_| backoff.next_delay(0).unwrap()).collect();
        assert_eq!(pauses, [100, 200, 400, 400, 400, 400]);
    }

    #[test]
    fn deadline_stops_retries() {
        let mut backoff = Backoff::new(&timeouts(1000));
        assert_eq!(backoff.next_delay(0), Ok(100));
        assert_eq!(backoff.next_delay(799), Ok(200));
        // 400 more would start the next attempt at the deadline itself.
        let gave_up = backoff.next_delay(600).unwrap_err();
        assert_eq!(gave_up, GaveUp::new(3, 1000));
        assert_eq!(gave_up.to_string(), "3 attempts in the 1000 ms deadline (WISP_HTTP_TOTAL_MS)");
        let mut backoff = Backoff::new(&timeouts(1000));
        assert_eq!(backoff.next_delay(899), Ok(100));
        let mut backoff = Backoff::new(&timeouts(1000));
        assert_eq!(backoff.next_delay(900), Err(GaveUp::new(1, 1000)));
        assert_eq!(GaveUp::new(1, 30_000).to_string(), "1 attempt in the 30000 ms deadline (WISP_HTTP_TOTAL_MS)");
    }

    #[test]
    fn attempts_end_at_the_deadline() {
        let backoff = Backoff::new(&timeouts(1000));
        assert_eq!(backoff.attempt_budget(0, 300), 300);
        assert_eq!(backoff.attempt_budget(800, 300), 200);
        assert_eq!(backoff.attempt_budget(1000, 300), 0);
        assert_eq!(backoff.attempt_budget(5000, 300), 0);
    }

    #[test]
    fn zero_pauses_still_advance() {
        let zero = Timeouts { backoff_initial_ms: 0, backoff_max_ms: 0, ..timeouts(10) };
        let mut backoff = Backoff::new(&zero);
        assert_eq!(backoff.next_delay(0), Ok(1));
    }

    #[test]
    fn retryable_statuses() {
        for status in [429, 500, 502, 503, 599] {
            assert!(status_is_retryable(status), "{status}");
        }
        for status in [200, 204, 301, 400, 401, 403, 404, 600] {
            assert!(!status_is_retryable(status), "{status}");
        }
    }
}
