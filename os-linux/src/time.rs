//! Clocks and sleeping.

use rustix::time::{clock_gettime, ClockId, Timespec};

/// clock_gettime(2) CLOCK_MONOTONIC, in milliseconds: for deadlines and durations.
pub fn monotonic_ms() -> u64 {
    let now = clock_gettime(ClockId::Monotonic);
    now.tv_sec as u64 * 1000 + now.tv_nsec as u64 / 1_000_000
}

/// clock_gettime(2) CLOCK_REALTIME, in whole seconds since the epoch.
pub fn realtime_secs() -> u64 {
    clock_gettime(ClockId::Realtime).tv_sec as u64
}

/// clock_gettime(2) CLOCK_REALTIME, in milliseconds since the epoch.
pub fn realtime_ms() -> u64 {
    let now = clock_gettime(ClockId::Realtime);
    now.tv_sec as u64 * 1000 + now.tv_nsec as u64 / 1_000_000
}

/// nanosleep(2), resumed after signals until the whole time has passed.
pub fn sleep_ms(ms: u32) {
    let mut request = Timespec { tv_sec: (ms / 1000) as _, tv_nsec: ((ms % 1000) * 1_000_000) as _ };
    while let rustix::thread::NanosleepRelativeResult::Interrupted(rest) =
        rustix::thread::nanosleep(&request)
    {
        request = rest;
    }
}
