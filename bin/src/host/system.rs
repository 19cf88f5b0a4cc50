//! The host the rules of accounts, passwords, keys, host names and user-data's decoding
//! run against: the root's files with a batch of replacements, its symlinks, the run's
//! messages and log, room, randomness, the kernel's host name and an `#include` URL's
//! GET (the image's programs are `scripts.rs`'). Each method is the calls it names; every
//! decision is core's.

use wisp_core::host::files::Kind;
use wisp_core::host::HostError;
use wisp_core::http::Url;
use wisp_core::retry::Timeouts;
use wisp_os_linux::OwnedFd;

use super::files::OpenDir;
use super::host_error;
use crate::context::Context;
use crate::markers::Markers;
use crate::output::Message;

/// What the accounts' rules and user-data's scripts run against: the root, a batch, the
/// context's log, and user-data.log and the instance's markers once opened.
// In this order (repr(C)): the small fields every method reads come before the batch and
// the markers (each hundreds of bytes), at offsets x86 encodes in one byte.
#[repr(C)]
pub struct System<'c> {
    pub(super) files: OpenDir<'c>,
    pub(crate) ctx: &'c Context<'c>,
    pub(super) log: Option<OwnedFd>,
    /// TINY_CLOUD_VAR when the caller holds it open (`scripts::with_hosts`), for the markers.
    pub(super) var: Option<&'c wisp_os_linux::fs::Dir>,
    batch: wisp_os_linux::fs::Batch,
    pub(super) markers: Option<Markers>,
}

impl<'c> System<'c> {
    #[inline(never)]
    pub fn new(ctx: &'c Context<'c>) -> System<'c> {
        System { files: OpenDir::root(ctx), batch: wisp_os_linux::fs::Batch::new(), ctx, log: None, markers: None, var: None }
    }
}

/// Days since 1970, as /etc/shadow counts them.
pub fn today() -> u64 {
    wisp_os_linux::time::realtime_secs() / wisp_core::clock::SECONDS_PER_DAY
}

impl<'c> wisp_core::host::files::HasFiles for System<'c> {
    type Files = OpenDir<'c>;

    fn files(&mut self) -> &mut OpenDir<'c> {
        &mut self.files
    }
}

impl wisp_core::host::system::System for System<'_> {
    fn stage(&mut self, path: &[u8], contents: &[u8], mode: u32, owner: Option<(u32, u32)>) -> Result<(), HostError> {
        let (dir, name) = self.files.parent(path)?;
        dir.stage(name, contents, mode, owner, &mut self.batch).map_err(host_error)
    }

    fn commit(&mut self) -> Result<(), HostError> {
        self.batch.commit().map_err(host_error)
    }

    fn discard(&mut self) {
        self.batch.discard();
    }

    fn set_host_name(&mut self, name: &[u8]) -> Result<(), HostError> {
        wisp_os_linux::system::set_hostname(name).map_err(host_error)
    }

    fn fill(&mut self, buf: &mut [u8]) -> Result<(), HostError> {
        wisp_os_linux::system::random_bytes(buf).map_err(host_error)
    }
}

impl wisp_core::host::messages::Messages for System<'_> {
    type Text = Message;

    fn log(&self, args: core::fmt::Arguments<'_>) {
        self.ctx.log.line(args);
    }

    fn error(&self, args: core::fmt::Arguments<'_>) {
        crate::output::error(args);
    }

    // The context's, which bin's other messages share: the default would be a second copy
    // (+184 bytes).
    fn path_error(&self, path: &[u8], error: HostError) -> Message {
        self.ctx.path_error(path, super::errno(error))
    }

    fn under_root<'p>(&'p self, path: &'p [u8]) -> impl core::fmt::Display + 'p {
        wisp_core::text::ShownUnder { root: self.ctx.root, path }
    }
}

impl wisp_core::host::room::Room for System<'_> {
    type Buffer = wisp_os_linux::memory::Mapping;

    fn room(&mut self, len: usize, what: &str) -> Result<Self::Buffer, Message> {
        crate::memory::map(len, what)
    }

    fn keep(&mut self, len: usize, what: &str) -> Result<&'static mut [u8], Message> {
        crate::memory::reserve(len, what)
    }
}

impl wisp_core::host::fetch::Fetch for System<'_> {
    fn get(&mut self, url: &Url<'_>, out: &mut [u8], timeouts: &Timeouts) -> Result<Option<usize>, Message> {
        super::http::get(url.address, url.port, url.host, url.path, out, timeouts)
    }
}

/// stat(2) with symlinks followed inside the root, readlinkat(2), a symlink replaced by
/// rename(2), symlinkat(2).
impl wisp_core::host::links::Links for System<'_> {
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

    fn create_symlink(&mut self, target: &[u8], path: &[u8]) -> Result<bool, HostError> {
        let (dir, name) = self.files.parent(path)?;
        dir.create_symlink(target, name).map_err(host_error)
    }
}
