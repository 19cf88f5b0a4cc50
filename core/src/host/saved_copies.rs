//! TINY_CLOUD_VAR's copies of what the metadata service gave (user-data, the metadata
//! document, network-config), compared with what they would be rewritten with, so that a
//! rerun rewrites nothing that did not change.

use super::directory::Directory;
use super::HostError;

pub trait SavedCopies: Directory {
    /// The permission bits of `name` when it is a regular file (a symlink is not
    /// followed); `None` when it is not one, or cannot be looked at.
    fn file_mode(&mut self, name: &[u8]) -> Option<u32>;

    /// Whether `name` holds exactly `contents` (false when it cannot be read).
    fn has_contents(&mut self, name: &[u8], contents: &[u8]) -> bool;

    /// Replaces `name` atomically and durably (complete before it takes the name).
    fn write_durably(&mut self, name: &[u8], contents: &[u8], mode: u32) -> Result<(), HostError>;
}
