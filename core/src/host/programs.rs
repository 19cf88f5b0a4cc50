//! The image's own programs, run by wisp.

use core::ffi::CStr;

use super::HostError;

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

pub trait Programs {
    /// Whether the image has `program` (a path inside the root): a regular file, symlinks
    /// followed.
    fn has_program(&mut self, program: &[u8]) -> bool;

    /// Runs `program` (a path inside the root, run chrooted into it, as its arguments'
    /// paths are) with `args` (`args[0]` its name), standard input /dev/null; whether it
    /// exited 0.
    fn run(&mut self, program: &CStr, args: &[&CStr], output: Output<'_>) -> Result<bool, RunError>;
}
