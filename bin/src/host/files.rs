//! core's `Files`, `Tree` and `Directory` over a directory already open. As `Files`, the
//! instance's root (`--root`): every path is resolved inside it (openat2 RESOLVE_IN_ROOT),
//! so `..` and absolute symlinks stop at the root. As `Directory` and `SavedCopies`,
//! TINY_CLOUD_VAR: names inside it, no path resolution.

use wisp_core::host::directory::Directory;
use wisp_core::host::files::{parent_and_name, Files, Kind, Metadata};
use wisp_core::host::HostError;
use wisp_core::text::ShownUnder;
use wisp_os_linux::fs::{Dir, Resolve};
use wisp_os_linux::Errno;

use super::{errno, host_error, read_error};
use crate::context::{too_large, Context};
use crate::output::Message;

/// A directory already open: the instance's root, or TINY_CLOUD_VAR.
pub struct OpenDir<'a> {
    pub dir: &'a Dir,
}

impl<'a> OpenDir<'a> {
    /// The root the command works under.
    pub fn root(ctx: &'a Context<'_>) -> OpenDir<'a> {
        OpenDir { dir: &ctx.root_dir }
    }

    /// The directory `path` is in, open, and `path`'s name in it.
    pub(crate) fn parent<'p>(&self, path: &'p [u8]) -> Result<(Dir, &'p [u8]), HostError> {
        let (parent, name) = parent_and_name(path).ok_or(host_error(Errno::INVAL))?;
        Ok((self.open(parent)?, name))
    }

    fn open(&self, path: &[u8]) -> Result<Dir, HostError> {
        self.dir.open_beneath(path, Resolve::InRoot).map_err(host_error)
    }
}

// Defined beside `OpenDir`, whose read it is, so that context.rs builds no host.
impl Context<'_> {
    /// The whole file, resolved inside the root as `open_dir`; `Ok(None)` when it does
    /// not exist.
    #[inline(never)]
    pub fn read<'b>(&self, absolute: &[u8], buf: &'b mut [u8]) -> Result<Option<&'b [u8]>, Message> {
        let limit = buf.len();
        match Files::read(&mut OpenDir::root(self), absolute, buf) {
            Ok(len) => Ok(len.and_then(|len| buf.get(..len))),
            // `Files::read` says a file past the buffer as EFBIG.
            Err(e) if e == host_error(Errno::FBIG) => Err(too_large(ShownUnder { root: self.root, path: absolute }, limit)),
            Err(e) => Err(self.path_error(absolute, errno(e))),
        }
    }
}

impl Files for OpenDir<'_> {
    fn read(&mut self, path: &[u8], buf: &mut [u8]) -> Result<Option<usize>, HostError> {
        let fd = match self.dir.open_file_beneath(path, Resolve::InRoot) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => return Ok(None),
            Err(e) => return Err(host_error(e)),
        };
        wisp_os_linux::fs::read_to_end(&fd, buf).map(Some).map_err(read_error)
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
        let parent = self.dir.create_beneath(parent, 0o755, Resolve::InRoot).map_err(host_error)?;
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

impl wisp_core::host::tree::Tree for OpenDir<'_> {
    fn is_directory(&mut self, path: &[u8]) -> bool {
        self.open(path).is_ok()
    }

    fn remove_dir(&mut self, path: &[u8]) -> Result<bool, HostError> {
        let (dir, name) = self.parent(path)?;
        dir.remove_dir(name).map_err(host_error)
    }

    fn filesystem_of(&mut self, path: &[u8]) -> Result<Option<u64>, HostError> {
        let Ok(dir) = self.open(path) else { return Ok(None) };
        dir.filesystem().map(Some).map_err(host_error)
    }

    fn sync_filesystem(&mut self, path: &[u8]) -> Result<(), HostError> {
        self.open(path)?.sync_filesystem().map_err(host_error)
    }
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

impl wisp_core::host::saved_copies::SavedCopies for OpenDir<'_> {
    fn file_mode(&mut self, name: &[u8]) -> Option<u32> {
        self.dir.metadata(name).ok().flatten().filter(|found| found.is_file()).map(|found| found.permissions())
    }

    fn has_contents(&mut self, name: &[u8], contents: &[u8]) -> bool {
        self.dir.has_contents(name, contents).unwrap_or(false)
    }

    fn write_durably(&mut self, name: &[u8], contents: &[u8], mode: u32) -> Result<(), HostError> {
        self.dir.write_atomic(name, contents, mode, None).map_err(host_error)
    }
}
