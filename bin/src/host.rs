//! `impl Host for Linux`: core's host traits over os-linux, for the instance's root.
//! Each method is the system calls it names and nothing else; every decision is core's.

use wisp_core::host::files::{Files, Kind, Metadata};
use wisp_core::host::HostError;
use wisp_os_linux::fs::{Dir, ReadError, Resolve};
use wisp_os_linux::Errno;

/// The instance's root, open: every path is resolved inside it (openat2 RESOLVE_IN_ROOT).
pub struct Linux<'a> {
    pub root: &'a Dir,
}

fn host_error(e: Errno) -> HostError {
    HostError { errno: e.raw_os_error() }
}

/// `/a/b/name` as (`/a/b`, `name`); the root's own entries have the parent `""`.
fn split(path: &[u8]) -> Result<(&[u8], &[u8]), HostError> {
    let trimmed = path.strip_suffix(b"/").unwrap_or(path);
    match trimmed.iter().rposition(|&b| b == b'/') {
        Some(i) if i + 1 < trimmed.len() => Ok((&trimmed[..i], &trimmed[i + 1..])),
        _ => Err(host_error(Errno::INVAL)),
    }
}

impl Linux<'_> {
    /// The directory `path` is in, open.
    fn parent(&self, path: &[u8]) -> Result<Dir, HostError> {
        let (parent, _) = split(path)?;
        self.root.open_beneath(parent, Resolve::InRoot).map_err(host_error)
    }
}

impl Files for Linux<'_> {
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

// Accounts, passwords, keys and host names (issue #12): the root's files with a batch of
// replacements, the run's messages, randomness and the kernel's host name.

/// What the accounts' rules run against: the root, a batch, and the context's log.
pub struct System<'c> {
    files: Linux<'c>,
    batch: wisp_os_linux::fs::Batch,
    ctx: &'c crate::context::Context<'c>,
}

impl<'c> System<'c> {
    pub fn new(ctx: &'c crate::context::Context<'c>) -> System<'c> {
        System { files: ctx.host(), batch: wisp_os_linux::fs::Batch::new(), ctx }
    }
}

/// Days since 1970, as /etc/shadow counts them.
pub fn today() -> u64 {
    wisp_os_linux::time::realtime_secs() / wisp_core::clock::SECONDS_PER_DAY
}

impl Files for System<'_> {
    fn read(&mut self, path: &[u8], buf: &mut [u8]) -> Result<Option<usize>, HostError> {
        self.files.read(path, buf)
    }
    fn write(&mut self, path: &[u8], contents: &[u8], mode: u32, owner: Option<(u32, u32)>) -> Result<(), HostError> {
        self.files.write(path, contents, mode, owner)
    }
    fn create_dir(&mut self, path: &[u8], mode: u32) -> Result<bool, HostError> {
        self.files.create_dir(path, mode)
    }
    fn metadata(&mut self, path: &[u8]) -> Result<Option<Metadata>, HostError> {
        self.files.metadata(path)
    }
    fn set_owner_and_mode(&mut self, path: &[u8], uid: u32, gid: u32, mode: u32) -> Result<(), HostError> {
        self.files.set_owner_and_mode(path, uid, gid, mode)
    }
    fn remove(&mut self, path: &[u8]) -> Result<bool, HostError> {
        self.files.remove(path)
    }
    fn list(&mut self, dir: &[u8], visit: &mut dyn FnMut(&[u8])) -> Result<(), HostError> {
        self.files.list(dir, visit)
    }
}

impl wisp_core::host::batch::Batch for System<'_> {
    fn stage(&mut self, path: &[u8], contents: &[u8], mode: u32, owner: Option<(u32, u32)>) -> Result<(), HostError> {
        let (_, name) = split(path)?;
        let dir = self.files.parent(path)?;
        dir.stage(name, contents, mode, owner, &mut self.batch).map_err(host_error)
    }

    fn commit(&mut self) -> Result<(), HostError> {
        core::mem::take(&mut self.batch).commit().map_err(host_error)
    }
}

impl wisp_core::host::messages::Messages for System<'_> {
    type Text = crate::output::Line;

    fn text(&self, args: core::fmt::Arguments<'_>) -> crate::output::Line {
        crate::output::Line::format(args)
    }

    fn warn(&self, args: core::fmt::Arguments<'_>) {
        self.ctx.warn(args);
    }

    fn error(&self, args: core::fmt::Arguments<'_>) {
        crate::output::error(args);
    }

    fn reason(error: HostError) -> impl core::fmt::Display {
        crate::output::Os(Errno::from_raw_os_error(error.errno))
    }

    fn shown(bytes: &[u8]) -> impl core::fmt::Display + '_ {
        crate::output::Shown(bytes)
    }

    fn under_root<'p>(&'p self, path: &'p [u8]) -> impl core::fmt::Display + 'p {
        UnderRoot(self.ctx.path(path).ok(), path)
    }
}

/// A path under `--root` for messages (as given, when too long to join).
struct UnderRoot<'p>(Option<wisp_os_linux::cpath::CPath>, &'p [u8]);

impl core::fmt::Display for UnderRoot<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let path = self.0.as_ref().map_or(self.1, |p| p.as_bytes());
        core::fmt::Display::fmt(&crate::output::Shown(path), f)
    }
}

impl wisp_core::host::random::Random for System<'_> {
    fn fill(&mut self, buf: &mut [u8]) -> Result<(), HostError> {
        wisp_os_linux::system::random_bytes(buf).map_err(host_error)
    }
}

impl wisp_core::host::uts::HostName for System<'_> {
    fn set_host_name(&mut self, name: &[u8]) -> Result<(), HostError> {
        wisp_os_linux::system::set_hostname(name).map_err(host_error)
    }
}
