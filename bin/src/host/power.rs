//! core's `Power`: sync(2), a sleep, reboot(2).

use wisp_core::cloud_config::PowerMode;
use wisp_core::host::power::Power;
use wisp_core::host::HostError;
use wisp_os_linux::system::PowerAction;
use wisp_os_linux::Errno;

use super::host_error;
use super::system::System;

impl Power for System<'_> {
    fn sync_all(&mut self) {
        wisp_os_linux::fs::sync_all();
    }

    fn sleep_ms(&mut self, ms: u32) {
        wisp_os_linux::time::sleep_ms(ms);
    }

    fn reboot(&mut self, mode: PowerMode) -> HostError {
        let action = match mode {
            PowerMode::Poweroff => PowerAction::PowerOff,
            PowerMode::Reboot => PowerAction::Restart,
            PowerMode::Halt => PowerAction::Halt,
        };
        host_error(wisp_os_linux::system::reboot(action).err().unwrap_or(Errno::INVAL))
    }
}
