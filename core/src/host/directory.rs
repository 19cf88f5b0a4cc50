//! One directory of the host, already open (TINY_CLOUD_VAR): its entries by name.
//!
//! Unlike `Files`, a write here is not made durable by itself: the files of the saved
//! state are rewritten by every run until the completion marker's sync makes them
//! durable together, so one fsync each would only cost time (README "Durability").

use super::HostError;

pub trait Directory {
    /// Whether an entry of that name is there (a symlink is not followed).
    fn exists(&mut self, name: &[u8]) -> Result<bool, HostError>;

    /// The whole file into `buf`: its length, `None` when it does not exist. A file
    /// larger than `buf` is an error (EFBIG), never a truncated read.
    fn read(&mut self, name: &[u8], buf: &mut [u8]) -> Result<Option<usize>, HostError>;


    /// Replaces the file atomically (complete before it takes the name), not durably:
    /// the directory's next `sync` makes it so.
    fn write_volatile(&mut self, name: &[u8], contents: &[u8], mode: u32) -> Result<(), HostError>;

    /// Removes a file; false when there was none.
    fn remove(&mut self, name: &[u8]) -> Result<bool, HostError>;

    /// fsync(2) of the directory: the names in it are durable.
    fn sync(&mut self) -> Result<(), HostError>;
}
