//! core's `Directory` over a directory already open (TINY_CLOUD_VAR), for the instance
//! state: names inside it, no path resolution.

use wisp_core::host::directory::Directory;
use wisp_core::host::HostError;
use wisp_os_linux::fs::Dir;

use super::{host_error, read_error};

/// A directory already open (TINY_CLOUD_VAR), as core's `Directory`.
pub struct OpenDir<'a> {
    pub dir: &'a Dir,
}

impl Directory for OpenDir<'_> {
    fn exists(&mut self, name: &[u8]) -> Result<bool, HostError> {
        Ok(self.dir.metadata(name).map_err(host_error)?.is_some())
    }

    fn read(&mut self, name: &[u8], buf: &mut [u8]) -> Result<Option<usize>, HostError> {
        self.dir.read(name, buf).map_err(read_error)
    }

    fn write_volatile(&mut self, name: &[u8], contents: &[u8], mode: u32) -> Result<(), HostError> {
        self.dir.write_volatile(name, contents, mode).map_err(host_error)
    }

    fn remove(&mut self, name: &[u8]) -> Result<bool, HostError> {
        self.dir.remove(name).map_err(host_error)
    }

    fn sync(&mut self) -> Result<(), HostError> {
        self.dir.sync().map_err(host_error)
    }
}
