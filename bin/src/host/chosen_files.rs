//! core's `ChosenFiles`: a directory user-data named, opened with no symlink followed
//! (openat2 RESOLVE_NO_SYMLINKS under the root), and its files.

use wisp_core::host::chosen_files::ChosenFiles;
use wisp_core::host::HostError;
use wisp_os_linux::fs::{Dir, Resolve};

use super::{host_error, read_error};
use super::system::System;
use crate::output::Message;

impl ChosenFiles for System<'_> {
    type Dir = Dir;

    fn create_dir_no_symlinks(&mut self, path: &[u8]) -> Result<Dir, Message> {
        self.ctx.create_dir_resolved(path, Resolve::NoSymlinks)
    }

    fn size(&mut self, dir: &Dir, name: &[u8]) -> Result<Option<u64>, HostError> {
        Ok(dir.metadata(name).map_err(host_error)?.map(|found| found.size))
    }

    fn read(&mut self, dir: &Dir, name: &[u8], buf: &mut [u8]) -> Result<Option<usize>, HostError> {
        dir.read(name, buf).map_err(read_error)
    }

    fn write(&mut self, dir: &Dir, name: &[u8], contents: &[u8], mode: u32, owner: (u32, u32)) -> Result<(), HostError> {
        dir.write_atomic(name, contents, mode, Some(owner)).and_then(|()| dir.sync()).map_err(host_error)
    }
}
