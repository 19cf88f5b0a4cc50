//! The machine's power: what `power_state` falls back on in an image without a shutdown
//! tool.

use super::HostError;
use crate::cloud_config::PowerMode;

pub trait Power {
    /// sync(2): everything written reaches the disks.
    fn sync_all(&mut self);

    /// Sleeps `ms` milliseconds.
    fn sleep_ms(&mut self, ms: u32);

    /// reboot(2) with `mode`; returns only when the kernel refused.
    fn reboot(&mut self, mode: PowerMode) -> HostError;
}
