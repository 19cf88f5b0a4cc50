//! Whole filesystems of the host, by a directory on each: what the completion marker's
//! durability needs (one syncfs(2) per filesystem a bootstrap wrote).

use super::HostError;

pub trait Filesystems {
    /// The filesystem holding the directory at `path` (as the image sees it), as its
    /// device number; `None` when that directory cannot be opened.
    fn filesystem_of(&mut self, path: &[u8]) -> Result<Option<u64>, HostError>;

    /// syncfs(2) of the filesystem holding the directory at `path`: everything written
    /// to it, and only to it, reaches the disk.
    fn sync_filesystem(&mut self, path: &[u8]) -> Result<(), HostError>;
}
