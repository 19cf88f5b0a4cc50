//! core's `Links` over the root: stat(2) with symlinks followed inside it, readlinkat(2),
//! and a symlink replaced by rename(2).

use wisp_core::host::files::Kind;
use wisp_core::host::links::Links;
use wisp_core::host::HostError;

use super::host_error;
use super::system::System;

impl Links for System<'_> {
    fn followed(&mut self, path: &[u8]) -> Option<Kind> {
        let meta = self.ctx.stat_followed(path)?;
        Some(if meta.is_file() { Kind::File } else if meta.is_dir() { Kind::Directory } else { Kind::Other })
    }

    fn read_link(&mut self, path: &[u8], buf: &mut [u8]) -> Result<Option<usize>, HostError> {
        let (dir, name) = self.files.parent(path)?;
        Ok(dir.read_link(name, buf).map_err(host_error)?.map(<[u8]>::len))
    }

    fn replace_symlink(&mut self, target: &[u8], path: &[u8]) -> Result<(), HostError> {
        let (dir, name) = self.files.parent(path)?;
        dir.replace_symlink(target, name).map_err(host_error)
    }
}
