//! core's `Timer`: the monotonic clock, and poll(2) with no descriptor as the pause.

/// The monotonic clock.
pub struct Monotonic;

impl wisp_core::host::timer::Timer for Monotonic {
    fn now_ms(&mut self) -> u64 {
        wisp_os_linux::time::monotonic_ms()
    }

    fn pause_ms(&mut self, ms: u64) {
        let _ = wisp_os_linux::net::poll(&mut [], ms.min(u32::MAX as u64) as u32);
    }
}
