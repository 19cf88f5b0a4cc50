//! core's `SeedSources` over Linux: the block devices of /sys/class/block, opened under
//! the root's /dev; seed directories resolved inside the root; a seed URL's GET through
//! wisp's own client; the kept files in TINY_CLOUD_VAR.

use wisp_core::host::seed_sources::SeedSources;
use wisp_core::host::HostError;
use wisp_core::seed::{Device, SeedError};
use wisp_os_linux::fs::{self, Dir};
use wisp_os_linux::nul_terminated::NulTerminated;
use wisp_os_linux::{block, OwnedFd};

use super::host_error;
use crate::context::Context;
use crate::output::{Message, Shown};

/// A block device read through its descriptor.
pub struct BlockDevice(OwnedFd);

impl Device for BlockDevice {
    fn read(&mut self, offset: u64, buf: &mut [u8]) -> Result<(), SeedError> {
        block::read_at(&self.0, offset, buf).map_err(|e| SeedError::Io { errno: e.raw_os_error() })
    }
}

/// The places seeds are read from under the root; state files kept in `keep` when given.
pub struct Seeds<'c> {
    pub ctx: &'c Context<'c>,
    pub keep: Option<&'c Dir>,
}

impl SeedSources for Seeds<'_> {
    type Device = BlockDevice;
    /// The directory, open, and its path under the root for messages.
    type Directory = (Dir, NulTerminated);
    type Text = Message;
    const ISO9660: bool = cfg!(feature = "iso9660");
    const VFAT: bool = cfg!(feature = "vfat");
    const UDF: bool = cfg!(feature = "udf");
    const NOCLOUD: bool = cfg!(feature = "nocloud");
    const CONFIGDRIVE: bool = cfg!(feature = "configdrive");

    fn block_devices(&mut self, visit: &mut dyn FnMut(&[u8])) {
        if let Ok(sys) = self.ctx.open_dir(b"/sys/class/block") {
            let _ = sys.for_each_entry(visit);
        }
    }

    /// BLKGETSIZE64 gives a device's size, fstat(2) an image file's.
    fn open_block_device(&mut self, name: &[u8]) -> Result<(BlockDevice, u64), HostError> {
        let fd = fs::open_read(super::c_path(&[self.ctx.root, b"/dev/", name])?.as_cstr()).map_err(host_error)?;
        let size = block::size_bytes(&fd).or_else(|_| block::file_size(&fd)).map_err(host_error)?;
        Ok((BlockDevice(fd), size))
    }

    fn open_directory(&mut self, path: &[u8]) -> Result<(Dir, NulTerminated), Message> {
        Ok((self.ctx.open_dir(path)?, self.ctx.path(path)?))
    }

    fn read_beneath(&mut self, (dir, _): &(Dir, NulTerminated), relative: &[u8], out: &mut [u8]) -> Result<Option<usize>, HostError> {
        wisp_core::host::files::Files::read(&mut super::OpenDir { dir }, relative, out)
    }

    fn directory_path<'a>(&'a self, (_, path): &'a (Dir, NulTerminated)) -> impl core::fmt::Display + 'a {
        Shown(path.as_bytes())
    }

    fn get(&mut self, address: [u8; 4], port: u16, host: &str, path: &str, out: &mut [u8]) -> Result<Option<usize>, Message> {
        super::http::get(address, port, host, path, out, &self.ctx.config.timeouts())
    }

    fn kept(&mut self, name: &[u8], contents: &[u8]) -> bool {
        self.keep.is_some_and(|var| var.has_contents(name, contents).unwrap_or(false))
    }

    fn keep(&mut self, name: &[u8], contents: &[u8]) -> Result<(), HostError> {
        let Some(var) = self.keep else { return Ok(()) };
        var.write_atomic(name, contents, 0o600, None).map_err(host_error)
    }
}
