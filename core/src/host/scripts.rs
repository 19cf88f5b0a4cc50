//! User-data's scripts: the log their output goes to, their runs, and the markers of
//! those that ran for this instance.

use core::ffi::CStr;

use super::messages::Messages;
use super::HostError;
use crate::script_exit::Ended;

/// Errors are said in the host's own message lines (its `Messages::Text`).
pub trait Scripts: Messages {
    /// Whether user-data may come as more than one whole document (MIME parts, includes):
    /// false in a build that reads one plain document only, whose rules for parts are
    /// then left out.
    const PARTS: bool;

    /// Opens `user-data.log` (0600) in TINY_CLOUD_LOGS, created afresh (`fresh`) or to be
    /// appended to: the programs `run` starts from then on write there.
    fn open_log(&mut self, fresh: bool) -> Result<(), HostError>;

    /// Runs `program` (a path inside the root, run chrooted into it, as its arguments'
    /// paths are) with `args` (`args[0]` its name) and wisp's environment plus `env`
    /// (`NAME=value`), standard input /dev/null, its output to the log; how it ended.
    fn run(&mut self, program: &CStr, args: &[&CStr], env: Option<&CStr>) -> Result<Ended, HostError>;

    /// Replaces the file at `path` (inside the root) atomically, not durably: the
    /// completion marker's sync makes it so.
    fn save(&mut self, path: &[u8], contents: &[u8], mode: u32) -> Result<(), HostError>;

    /// Opens this instance's markers (`sem/`), which `is_done` and `mark_done` ask.
    fn open_markers(&mut self) -> Result<(), Self::Text>;

    /// Whether `work` (`item` of it) finished for this instance.
    fn is_done(&mut self, work: &str, item: Option<&str>) -> Result<bool, Self::Text>;

    /// Records that `work` (`item` of it) finished.
    fn mark_done(&mut self, work: &str, item: Option<&str>) -> Result<(), Self::Text>;
}
