//! The monotonic clock and a pause, for waits measured in milliseconds (a link's carrier).

pub trait Timer {
    /// The monotonic clock, in milliseconds.
    fn now_ms(&mut self) -> u64;

    /// Sleeps `ms` milliseconds (a shorter wait, when interrupted, is fine).
    fn pause_ms(&mut self, ms: u64);
}
