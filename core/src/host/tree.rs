//! Directories as wholes under the instance's root, for `wisp clean`: whether one is
//! there to work in, and removing one once emptied (`Files` removes files only).

use super::HostError;

pub trait Tree {
    /// Whether the directory at `path` can be opened (symlinks followed inside the root).
    fn is_directory(&mut self, path: &[u8]) -> bool;

    /// Removes the empty directory at `path`; false when there was none.
    fn remove_dir(&mut self, path: &[u8]) -> Result<bool, HostError>;
}
