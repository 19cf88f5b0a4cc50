//! The wall clock, for rules that compare against dates (keys that expire).

pub trait Clock {
    /// Seconds since the Unix epoch, as the system clock says.
    fn realtime_secs(&mut self) -> u64;
}
