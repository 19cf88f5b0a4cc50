//! The image's programs and shell scripts as cloud-config runs them (apk, poweroff, a
//! condition): chrooted into the root, their output in user-data.log; and the machine's
//! power, what `power_state` falls back on in an image without a shutdown tool.

use core::ffi::CStr;

use super::messages::Messages;
use super::HostError;
use crate::cloud_config::PowerMode;

pub trait Commands: Messages {
    /// Runs `program` (a path inside the root) with `args` (`args[0]` its name); an
    /// error in the host's words when it could not run or did not exit 0 (`what` names it).
    fn run_logged(&mut self, program: &CStr, args: &[&CStr], what: &str) -> Result<(), Self::Text>;

    /// Saves `script` as the run's script `name` and runs it with /bin/sh: whether it
    /// exited 0.
    fn run_script(&mut self, name: &[u8], script: &[u8]) -> Result<bool, Self::Text>;

    /// sync(2): everything written reaches the disks.
    fn sync_all(&mut self);

    /// Sleeps `ms` milliseconds.
    fn sleep_ms(&mut self, ms: u32);

    /// reboot(2) with `mode`; returns only when the kernel refused.
    fn reboot(&mut self, mode: PowerMode) -> HostError;
}
