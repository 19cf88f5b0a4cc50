//! Files at paths user-data chose (`write_files`): no symlink in such a path is followed
//! (an image's `/opt/lnk -> /host`), so each is reached through its directory, opened
//! without following any.

use super::messages::Messages;
use super::HostError;

pub trait ChosenFiles: Messages {
    /// A directory, open.
    type Dir;

    /// Creates the directory and its missing parents (0755), no component of the path a
    /// symlink, and opens it.
    fn create_dir_no_symlinks(&mut self, path: &[u8]) -> Result<Self::Dir, Self::Text>;

    /// The size of the file `name` in `dir`; `None` when there is none.
    fn size(&mut self, dir: &Self::Dir, name: &[u8]) -> Result<Option<u64>, HostError>;

    /// The whole file into `buf`: its length, `None` when it does not exist. A file
    /// larger than `buf` is an error (EFBIG), never a truncated read.
    fn read(&mut self, dir: &Self::Dir, name: &[u8], buf: &mut [u8]) -> Result<Option<usize>, HostError>;

    /// Replaces the file atomically (owned and moded before it takes the name), then
    /// fsync(2)s the directory: the directory may be on a filesystem the completion
    /// marker's sync does not cover.
    fn write(&mut self, dir: &Self::Dir, name: &[u8], contents: &[u8], mode: u32, owner: (u32, u32)) -> Result<(), HostError>;
}
