//! Filesystems mounted where cloud-config's `mounts` asks.

use super::messages::Messages;
use super::HostError;

/// Where a mount's source is: a file of the image (a device node), or a name the
/// filesystem reads (`tmpfs`, `server:/export`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source<'a> {
    Path(&'a [u8]),
    Name(&'a [u8]),
}

pub trait Mounts: Messages {
    /// A mount point, open.
    type Point;

    /// Creates the directory (0755, no symlink in the path followed) and opens it; with
    /// whether another filesystem than its parent directory's is there (mounted already).
    fn open_mount_point(&mut self, path: &[u8]) -> Result<(Self::Point, bool), Self::Text>;

    /// mount(2) on the very directory opened, never the path resolved again.
    fn mount(&mut self, source: Source<'_>, point: &Self::Point, fs_type: &[u8], flags: u32, data: &[u8]) -> Result<(), HostError>;
}
