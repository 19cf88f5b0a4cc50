//! core's `ChosenFiles` and `Mounts`: a directory user-data named (for its files, or to
//! mount on), opened with no symlink followed (openat2 RESOLVE_NO_SYMLINKS under the
//! root), its files, and mount(2) given that very directory (its /proc/self/fd path).

use wisp_core::host::chosen_files::ChosenFiles;
use wisp_core::host::mounts::{Mounts, Source};
use wisp_core::host::HostError;
use wisp_os_linux::fs::{Dir, Resolve};

use super::{c_path, host_error, read_error};
use super::system::System;
use crate::output::Message;

impl ChosenFiles for System<'_> {
    type Dir = Dir;

    fn create_dir_no_symlinks(&mut self, path: &[u8]) -> Result<Dir, Message> {
        self.ctx.create_dir(path, Resolve::NoSymlinks)
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

impl Mounts for System<'_> {
    type Point = Dir;

    fn open_mount_point(&mut self, path: &[u8]) -> Result<(Dir, bool), Message> {
        let point = self.create_dir_no_symlinks(path)?;
        let parent = self.ctx.open_dir(&path[..path.iter().rposition(|&b| b == b'/').unwrap_or(0).max(1)])?;
        let device = |dir: &Dir| dir.stat().ok().map(|m| m.dev);
        let mounted = device(&point) != device(&parent);
        Ok((point, mounted))
    }

    fn mount(&mut self, source: Source<'_>, point: &Dir, fs_type: &[u8], flags: u32, data: &[u8]) -> Result<(), HostError> {
        let source = match source {
            Source::Path(path) => c_path(&[self.ctx.root, path])?,
            Source::Name(name) => c_path(&[name])?,
        };
        let options = c_path(&[data])?;
        let options = (!data.is_empty()).then_some(options.as_cstr());
        let fs_type = c_path(&[fs_type])?;
        wisp_os_linux::mount::mount(source.as_cstr(), point.proc_path().as_cstr(), fs_type.as_cstr(), flags, options).map_err(host_error)
    }
}
