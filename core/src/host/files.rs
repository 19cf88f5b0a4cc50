//! Files under the instance's root.
//!
//! Paths are absolute as the image sees them (`/etc/passwd`); the host resolves them
//! inside the root it was given (`--root`): symlinks are followed, but never out of it.

use super::HostError;

/// What kind of file a path names (a symlink is not followed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    File,
    Directory,
    Symlink,
    Other,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Metadata {
    pub kind: Kind,
    /// The permission bits (07777).
    pub mode: u32,
    pub uid: u32,
    pub gid: u32,
    pub len: u64,
}

pub trait Files {
    /// The whole file into `buf`: its length, `None` when it does not exist. A file
    /// larger than `buf` is an error (EFBIG), never a truncated read.
    fn read(&mut self, path: &[u8], buf: &mut [u8]) -> Result<Option<usize>, HostError>;

    /// Replaces the file atomically and durably: complete, owned and moded before it
    /// takes the name; a symlink at `path` is replaced, never followed.
    fn write(&mut self, path: &[u8], contents: &[u8], mode: u32, owner: Option<(u32, u32)>) -> Result<(), HostError>;

    /// Creates the directory and its missing parents (0755, the last one `mode`); false
    /// when it was there already.
    fn create_dir(&mut self, path: &[u8], mode: u32) -> Result<bool, HostError>;

    /// `None` when nothing is at `path`.
    fn metadata(&mut self, path: &[u8]) -> Result<Option<Metadata>, HostError>;

    /// A directory's owner and mode (files get theirs from `write`).
    fn set_owner_and_mode(&mut self, path: &[u8], uid: u32, gid: u32, mode: u32) -> Result<(), HostError>;

    /// Removes a file; false when there was none.
    fn remove(&mut self, path: &[u8]) -> Result<bool, HostError>;

    /// Each entry's name in the directory (without `.` and `..`), in no set order.
    fn list(&mut self, dir: &[u8], visit: &mut dyn FnMut(&[u8])) -> Result<(), HostError>;
}
