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

pub(crate) fn host_error(e: Errno) -> HostError {
    HostError { errno: e.raw_os_error() }
}

/// `/a/b/name` as (`/a/b`, `name`); the root's own entries have the parent `""`.
pub(crate) fn split(path: &[u8]) -> Result<(&[u8], &[u8]), HostError> {
    let trimmed = path.strip_suffix(b"/").unwrap_or(path);
    match trimmed.iter().rposition(|&b| b == b'/') {
        Some(i) if i + 1 < trimmed.len() => Ok((&trimmed[..i], &trimmed[i + 1..])),
        _ => Err(host_error(Errno::INVAL)),
    }
}

impl Linux<'_> {
    /// The directory `path` is in, open.
    pub(crate) fn parent(&self, path: &[u8]) -> Result<Dir, HostError> {
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

impl wisp_core::host::filesystems::Filesystems for Linux<'_> {
    fn filesystem_of(&mut self, path: &[u8]) -> Result<Option<u64>, HostError> {
        let Ok(dir) = self.root.open_beneath(path, Resolve::InRoot) else { return Ok(None) };
        dir.filesystem().map(Some).map_err(host_error)
    }

    fn sync_filesystem(&mut self, path: &[u8]) -> Result<(), HostError> {
        let dir = self.root.open_beneath(path, Resolve::InRoot).map_err(host_error)?;
        dir.sync_filesystem().map_err(host_error)
    }
}

// --- phases (issue #12): `Directory` over an open directory, for the instance state. ---

use wisp_core::host::directory::Directory;

/// A directory already open (TINY_CLOUD_VAR), as core's `Directory`.
pub struct OpenDir<'a> {
    pub dir: &'a Dir,
}

impl Directory for OpenDir<'_> {
    fn exists(&mut self, name: &[u8]) -> Result<bool, HostError> {
        Ok(self.dir.metadata(name).map_err(host_error)?.is_some())
    }

    fn read(&mut self, name: &[u8], buf: &mut [u8]) -> Result<Option<usize>, HostError> {
        match self.dir.read(name, buf) {
            Ok(len) => Ok(len),
            Err(ReadError::Io(e)) => Err(host_error(e)),
            Err(ReadError::TooLarge { .. }) => Err(host_error(Errno::FBIG)),
        }
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

/// The errno a host call failed with, for bin's messages.
pub fn errno(e: HostError) -> Errno {
    Errno::from_raw_os_error(e.errno)
}

// --- grow: disks, mounted filesystems ------------------------------------------------

/// An open disk or image file. `crash_after` is a test hook: stop the process (as a crash
/// would) right after that many writes.
#[cfg(feature = "grow")]
pub struct Disk<'fd> {
    pub fd: wisp_os_linux::BorrowedFd<'fd>,
    pub writes: u32,
    pub crash_after: Option<u32>,
}

#[cfg(feature = "grow")]
impl wisp_core::host::block::BlockDevice for Disk<'_> {
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> Result<(), HostError> {
        wisp_os_linux::block::read_at(self.fd, offset, buf).map_err(host_error)
    }

    fn write_at(&mut self, offset: u64, bytes: &[u8]) -> Result<(), HostError> {
        wisp_os_linux::block::write_at(self.fd, offset, bytes).map_err(host_error)?;
        self.writes += 1;
        if self.crash_after == Some(self.writes) {
            let _ = wisp_os_linux::block::sync(self.fd);
            crate::output::error(format_args!("{}: stopping after write {}", crate::grow::CRASH_AFTER_WRITES, self.writes));
            wisp_os_linux::process::exit(99);
        }
        Ok(())
    }

    fn sync(&mut self) -> Result<(), HostError> {
        wisp_os_linux::block::sync(self.fd).map_err(host_error)
    }

    fn resize_partition(&mut self, number: u32, start: u64, length: u64) -> Result<(), HostError> {
        wisp_os_linux::block::resize_partition(self.fd, number, start, length).map_err(host_error)
    }
}

/// A mounted filesystem, through its mount point's directory.
#[cfg(feature = "grow")]
pub struct Mount<'fd>(pub wisp_os_linux::BorrowedFd<'fd>);

#[cfg(feature = "grow")]
impl wisp_core::host::block::MountedFilesystem for Mount<'_> {
    fn block_size(&mut self) -> Result<u64, HostError> {
        wisp_os_linux::block::filesystem_block_size(self.0).map_err(host_error)
    }

    fn ext4_resize(&mut self, blocks: u64) -> Result<(), HostError> {
        wisp_os_linux::block::ext4_resize(self.0, blocks).map_err(host_error)
    }

    fn xfs_geometry(&mut self) -> Result<(u32, u64, u32), HostError> {
        wisp_os_linux::block::xfs_geometry(self.0).map_err(host_error)
    }

    fn xfs_grow(&mut self, blocks: u64, imaxpct: u32) -> Result<(), HostError> {
        wisp_os_linux::block::xfs_grow(self.0, blocks, imaxpct).map_err(host_error)
    }

    fn btrfs_resize_max(&mut self) -> Result<(), HostError> {
        wisp_os_linux::block::btrfs_resize_max(self.0).map_err(host_error)
    }
}

/// A system error in words, for core's messages.
#[cfg(any(feature = "grow", feature = "network"))]
pub fn errno_words(e: HostError, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
    core::fmt::Display::fmt(&crate::output::Os(Errno::from_raw_os_error(e.errno)), f)
}

// --- network: the routing socket ------------------------------------------------------

/// A NETLINK_ROUTE socket.
#[cfg(feature = "network")]
pub struct RouteSocket(pub wisp_os_linux::OwnedFd);

#[cfg(feature = "network")]
impl wisp_core::host::netlink::Netlink for RouteSocket {
    fn send(&mut self, request: &[u8]) -> Result<(), HostError> {
        wisp_os_linux::netlink::send(&self.0, request).map_err(host_error)
    }

    fn recv(&mut self, buf: &mut [u8]) -> Result<usize, HostError> {
        wisp_os_linux::netlink::recv(&self.0, buf).map_err(host_error)
    }
}

/// One interface's IPv4 packets, for DHCP.
#[cfg(feature = "network")]
pub struct DhcpOn {
    pub socket: wisp_os_linux::OwnedFd,
    pub index: u32,
}

#[cfg(feature = "network")]
impl wisp_core::host::dhcp::DhcpSocket for DhcpOn {
    fn send_broadcast(&mut self, packet: &[u8]) -> Result<(), HostError> {
        wisp_os_linux::packet::send_broadcast(&self.socket, self.index, packet).map_err(host_error)
    }

    fn receive(&mut self, timeout_ms: u64, buf: &mut [u8]) -> Result<Option<usize>, HostError> {
        use wisp_os_linux::net::{PollFd, PollFlags};
        let mut fds = [PollFd::new(&self.socket, PollFlags::IN)];
        if wisp_os_linux::net::poll(&mut fds, timeout_ms.min(u32::MAX as u64) as u32).map_err(host_error)? == 0 {
            return Ok(None);
        }
        match wisp_os_linux::packet::recv(&self.socket, buf) {
            Ok(len) => Ok(Some(len)),
            Err(Errno::AGAIN) | Err(Errno::INTR) => Ok(None),
            Err(e) => Err(host_error(e)),
        }
    }

    fn now_ms(&mut self) -> u64 {
        wisp_os_linux::time::monotonic_ms()
    }
}

// ---- imds: the network, for core's metadata services and the wireserver ----

/// Linux's network for core's HTTP exchanges (`fetch.rs`), and the wall clock. It needs
/// no root: only where the guest API's socket is, when the instance has one.
pub struct Network<'p> {
    pub guest_socket: Option<&'p core::ffi::CStr>,
}

impl wisp_core::host::http::Http for Network<'_> {
    fn exchange_all(
        &mut self,
        endpoint: wisp_core::host::http::Endpoint,
        exchanges: &mut [wisp_core::host::http::Exchange<'_>],
        timeouts: &wisp_core::retry::Timeouts,
    ) {
        crate::fetch::exchange_all(endpoint, self.guest_socket, exchanges, timeouts)
    }
}

impl wisp_core::host::clock::Clock for Network<'_> {
    fn realtime_secs(&mut self) -> u64 {
        wisp_os_linux::time::realtime_secs()
    }
}
