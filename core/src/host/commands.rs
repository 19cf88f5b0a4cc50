//! The image's programs and shell scripts as cloud-config runs them (apk, poweroff, a
//! condition): chrooted into the root, their output in user-data.log.

use core::ffi::CStr;

use super::messages::Messages;

pub trait Commands: Messages {
    /// Runs `program` (a path inside the root) with `args` (`args[0]` its name); an
    /// error in the host's words when it could not run or did not exit 0 (`what` names it).
    fn run_logged(&mut self, program: &CStr, args: &[&CStr], what: &str) -> Result<(), Self::Text>;

    /// Saves `script` as the run's script `name` and runs it with /bin/sh: whether it
    /// exited 0.
    fn run_script(&mut self, name: &[u8], script: &[u8]) -> Result<bool, Self::Text>;
}
