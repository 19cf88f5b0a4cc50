//! core's `Mounts` over the root: the mount point opened with no symlink followed, and
//! mount(2) given that very directory (its /proc/self/fd path).

use wisp_core::host::chosen_files::ChosenFiles;
use wisp_core::host::mounts::{Mounts, Source};
use wisp_core::host::HostError;
use wisp_os_linux::fs::Dir;

use super::{c_path, host_error};
use super::system::System;
use crate::output::Message;

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
