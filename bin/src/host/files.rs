//! core's `Files` over the instance's root (`--root`), open: every path is resolved
//! inside it (openat2 RESOLVE_IN_ROOT), so `..` and absolute symlinks stop at the root.

use wisp_core::host::files::{Files, Kind, Metadata};
use wisp_core::host::HostError;
use wisp_os_linux::fs::{Dir, ReadError, Resolve};
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
        Root { root: ctx.root_dir() }
    }
}

/// `/a/b/name` as (`/a/b`, `name`); the root's own entries have the parent `""`.
pub(crate) fn split(path: &[u8]) -> Result<(&[u8], &[u8]), HostError> {
    let trimmed = path.strip_suffix(b"/").unwrap_or(path);
    match trimmed.iter().rposition(|&b| b == b'/') {
        Some(i) if i + 1 < trimmed.len() => Ok((&trimmed[..i], &trimmed[i + 1..])),
        _ => Err(host_error(Errno::INVAL)),
    }
}

impl Root<'_> {
    /// The directory `path` is in, open.
    pub(crate) fn parent(&self, path: &[u8]) -> Result<Dir, HostError> {
        let (parent, _) = split(path)?;
        self.root.open_beneath(parent, Resolve::InRoot).map_err(host_error)
    }
}

impl Files for Root<'_> {
    fn read(&mut self, path: &[u8], buf: &mut [u8]) -> Result<Option<usize>, HostError> {
        let fd = match self.root.open_file_beneath(path, Resolve::InRoot) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => return Ok(None),
            Err(e) => return Err(host_error(e)),
        };
        match wisp_os_linux::fs::read_to_end(&fd, buf) {
            Ok(len) => Ok(Some(len)),
            Err(ReadError::Io(e)) => Err(host_error(e)),
            Err(ReadError::TooLarge { .. }) => Err(host_error(Errno::FBIG)),
        }
    }

    fn write(&mut self, path: &[u8], contents: &[u8], mode: u32, owner: Option<(u32, u32)>) -> Result<(), HostError> {
        let (_, name) = split(path)?;
        let dir = self.parent(path)?;
        dir.write_atomic(name, contents, mode, owner).map_err(host_error)
    }

    fn create_dir(&mut self, path: &[u8], mode: u32) -> Result<bool, HostError> {
        match self.root.open_beneath(path, Resolve::InRoot) {
            Ok(_) => return Ok(false),
            Err(Errno::NOENT) => {}
            Err(e) => return Err(host_error(e)),
        }
        let (parent, name) = split(path)?;
        let parent = self.root.create_beneath(parent, 0o755, Resolve::InRoot).map_err(host_error)?;
        parent.create_dir(name, mode).map_err(host_error)
    }

    fn metadata(&mut self, path: &[u8]) -> Result<Option<Metadata>, HostError> {
        let (_, name) = split(path)?;
        let dir = match self.parent(path) {
            Err(e) if e.is_not_found() => return Ok(None),
            other => other?,
        };
        Ok(dir.metadata(name).map_err(host_error)?.map(|m| {
            let kind = match m.mode & 0o170000 {
                0o100000 => Kind::File,
                0o040000 => Kind::Directory,
                0o120000 => Kind::Symlink,
                _ => Kind::Other,
            };
            Metadata { kind, mode: m.mode & 0o7777, uid: m.uid, gid: m.gid, len: m.size }
        }))
    }

    fn set_owner_and_mode(&mut self, path: &[u8], uid: u32, gid: u32, mode: u32) -> Result<(), HostError> {
        let dir = self.root.open_beneath(path, Resolve::InRoot).map_err(host_error)?;
        dir.set_owner_and_mode(uid, gid, mode).map_err(host_error)
    }

    fn remove(&mut self, path: &[u8]) -> Result<bool, HostError> {
        let (_, name) = split(path)?;
        let dir = self.parent(path)?;
        dir.remove(name).map_err(host_error)
    }

    fn list(&mut self, path: &[u8], visit: &mut dyn FnMut(&[u8])) -> Result<(), HostError> {
        let dir = self.root.open_beneath(path, Resolve::InRoot).map_err(host_error)?;
        dir.for_each_entry(visit).map_err(host_error)
    }
}

impl wisp_core::host::filesystems::Filesystems for Root<'_> {
    fn filesystem_of(&mut self, path: &[u8]) -> Result<Option<u64>, HostError> {
        let Ok(dir) = self.root.open_beneath(path, Resolve::InRoot) else { return Ok(None) };
        dir.filesystem().map(Some).map_err(host_error)
    }

    fn sync_filesystem(&mut self, path: &[u8]) -> Result<(), HostError> {
        let dir = self.root.open_beneath(path, Resolve::InRoot).map_err(host_error)?;
        dir.sync_filesystem().map_err(host_error)
    }
}
