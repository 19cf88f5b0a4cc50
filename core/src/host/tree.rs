//! Directories as wholes under the instance's root: for `wisp clean`, whether one is
//! there to work in and removing one once emptied (`Files` removes files only); for the
//! completion marker's durability, the filesystem each is on and one syncfs(2) of it per
//! filesystem a bootstrap wrote.

use super::HostError;

pub trait Tree {
    /// Whether the directory at `path` can be opened (symlinks followed inside the root).
    fn is_directory(&mut self, path: &[u8]) -> bool;

    /// Removes the empty directory at `path`; false when there was none.
    fn remove_dir(&mut self, path: &[u8]) -> Result<bool, HostError>;

    /// The filesystem holding the directory at `path` (as the image sees it), as its
    /// device number; `None` when that directory cannot be opened.
    fn filesystem_of(&mut self, path: &[u8]) -> Result<Option<u64>, HostError>;

    /// syncfs(2) of the filesystem holding the directory at `path`: everything written
    /// to it, and only to it, reaches the disk.
    fn sync_filesystem(&mut self, path: &[u8]) -> Result<(), HostError>;
}
