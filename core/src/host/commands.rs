//! The image's own programs, run by wisp chrooted into the root: the SSH host keys'
//! generators (their output on standard error or in a file), and the programs and shell
//! scripts cloud-config runs (apk, poweroff, a condition; their output in user-data.log);
//! and the machine's power, what `power_state` falls back on in an image without a
//! shutdown tool.

use core::ffi::CStr;

use super::files::Kind;
use super::links::Links;
use super::messages::Messages;
use super::HostError;
use crate::cloud_config::PowerMode;

/// Where a program's standard output goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output<'a> {
    /// The host's standard error (wisp's own output stays its results).
    StandardError,
    /// The file at this path (as the image sees it), created or truncated with this mode.
    File(&'a [u8], u32),
}

/// Why a program did not run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunError {
    /// Its output file could not be opened.
    Output(HostError),
    /// It could not be started, or waited for.
    Run(HostError),
}

pub trait Commands: Messages + Links {
    /// Whether the image has `program` (a path inside the root): a regular file, symlinks
    /// followed.
    fn has_program(&mut self, program: &[u8]) -> bool {
        self.followed(program) == Some(Kind::File)
    }

    /// Runs `program` (a path inside the root, run chrooted into it, as its arguments'
    /// paths are) with `args` (`args[0]` its name), standard input /dev/null; whether it
    /// exited 0.
    fn run(&mut self, program: &CStr, args: &[&CStr], output: Output<'_>) -> Result<bool, RunError>;

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
