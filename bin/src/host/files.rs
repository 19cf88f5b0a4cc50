//! core's `Files` and `Tree` over the instance's root (`--root`), open: every path is
//! resolved inside it (openat2 RESOLVE_IN_ROOT), so `..` and absolute symlinks stop at the root.

use wisp_core::host::files::{parent_and_name, Files, Kind, Metadata};
use wisp_core::host::HostError;
use wisp_os_linux::fs::{Dir, Resolve};
use wisp_os_linux::Errno;

use super::host_error;
use crate::context::Context;

/// The instance's root, open.
pub struct Root<'a> {
    pub root: &'a Dir,
}

impl<'a> Root<'a> {
    /// The root the command works under.
    pub fn of(ctx: &'a Context<'_>) -> Root<'a> {
        Root { root: &ctx.root_dir }
    }

    /// The directory `path` is in, open, and `path`'s name in it.
    pub(crate) fn parent<'p>(&self, path: &'p [u8]) -> Result<(Dir, &'p [u8]), HostError> {
        let (parent, name) = parent_and_name(path).ok_or(host_error(Errno::INVAL))?;
        Ok((self.open(parent)?, name))
    }

    fn open(&self, path: &[u8]) -> Result<Dir, HostError> {
        self.root.open_beneath(path, Resolve::InRoot).map_err(host_error)
    }
}

impl Files for Root<'_> {
    fn read(&mut self, path: &[u8], buf: &mut [u8]) -> Result<Option<usize>, HostError> {
        super::read_beneath(self.root, path, buf)
    }

    fn write(&mut self, path: &[u8], contents: &[u8], mode: u32, owner: Option<(u32, u32)>) -> Result<(), HostError> {
        let (dir, name) = self.parent(path)?;
        dir.write_atomic(name, contents, mode, owner).map_err(host_error)
    }

    fn create_dir(&mut self, path: &[u8], mode: u32) -> Result<bool, HostError> {
        match self.open(path) {
            Ok(_) => return Ok(false),
            Err(HostError::NOT_FOUND) => {}
            Err(e) => return Err(e),
        }
        let (parent, name) = parent_and_name(path).ok_or(host_error(Errno::INVAL))?;
        let parent = self.root.create_beneath(parent, 0o755, Resolve::InRoot).map_err(host_error)?;
        parent.create_dir(name, mode).map_err(host_error)
    }

    fn metadata(&mut self, path: &[u8]) -> Result<Option<Metadata>, HostError> {
        let (dir, name) = match self.parent(path) {
            Err(HostError::NOT_FOUND) => return Ok(None),
            other => other?,
        };
        Ok(dir.metadata(name).map_err(host_error)?.map(|m| Metadata { kind: Kind::of_mode(m.mode), mode: m.mode & 0o7777, uid: m.uid, gid: m.gid, len: m.size }))
    }

    fn set_owner_and_mode(&mut self, path: &[u8], uid: u32, gid: u32, mode: u32) -> Result<(), HostError> {
        self.open(path)?.set_owner_and_mode(uid, gid, mode).map_err(host_error)
    }

    fn remove(&mut self, path: &[u8]) -> Result<bool, HostError> {
        let (dir, name) = self.parent(path)?;
        dir.remove(name).map_err(host_error)
    }

    fn list(&mut self, path: &[u8], visit: &mut dyn FnMut(&[u8])) -> Result<(), HostError> {
        self.open(path)?.for_each_entry(visit).map_err(host_error)
    }
}

impl wisp_core::host::filesystems::Filesystems for Root<'_> {
    fn filesystem_of(&mut self, path: &[u8]) -> Result<Option<u64>, HostError> {
        let Ok(dir) = self.open(path) else { return Ok(None) };
        dir.filesystem().map(Some).map_err(host_error)
    }

    fn sync_filesystem(&mut self, path: &[u8]) -> Result<(), HostError> {
        self.open(path)?.sync_filesystem().map_err(host_error)
    }
}

impl wisp_core::host::tree::Tree for Root<'_> {
    fn is_directory(&mut self, path: &[u8]) -> bool {
        self.open(path).is_ok()
    }

    fn remove_dir(&mut self, path: &[u8]) -> Result<bool, HostError> {
        let (dir, name) = self.parent(path)?;
        dir.remove_dir(name).map_err(host_error)
    }
}
