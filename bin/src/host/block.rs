//! core's `Devices`, `BlockDevice` and `MountedFilesystem` for `grow`: disks under the
//! root's /dev, image files and mount points, open, and the ioctls on them.

use wisp_core::host::HostError;
use wisp_os_linux::{block, fs, AsFd, OwnedFd};

use super::{c_path, host_error};
use super::system::System;

/// A test hook: stop (as a crash would) right after this many table writes.
pub const CRASH_AFTER_WRITES: &str = "WISP_TEST_CRASH_AFTER_WRITES";

/// An open disk or image file. `crash_after` is the test hook's count (`CRASH_AFTER_WRITES`).
pub struct Disk {
    fd: OwnedFd,
    writes: u32,
    crash_after: Option<u32>,
}

/// A mounted filesystem, through a directory on it.
pub struct Mount(OwnedFd);

impl System<'_> {
    fn open_disk(&self, parts: &[&[u8]]) -> Result<Disk, HostError> {
        let fd = fs::open_read_write(c_path(parts)?.as_cstr()).map_err(host_error)?;
        let crash_after = self.ctx.start.env(CRASH_AFTER_WRITES.as_bytes()).and_then(|n| wisp_core::text::decimal(n, 10));
        Ok(Disk { fd, writes: 0, crash_after: crash_after.and_then(|n| u32::try_from(n).ok()) })
    }
}

impl wisp_core::host::devices::Devices for System<'_> {
    type Disk = Disk;
    type Mount = Mount;

    fn open_device(&mut self, name: &[u8]) -> Result<Disk, HostError> {
        self.open_disk(&[self.ctx.root, b"/dev/", name])
    }

    fn open_image(&mut self, file: &[u8]) -> Result<(Disk, u64), HostError> {
        let image = self.open_disk(&[file])?;
        let size = block::file_size(image.fd.as_fd()).map_err(host_error)?;
        Ok((image, size))
    }

    fn sector_size(&mut self, disk: &mut Disk) -> Result<u32, HostError> {
        block::logical_sector_size(disk.fd.as_fd()).map_err(host_error)
    }

    fn size_bytes(&mut self, disk: &mut Disk) -> Result<u64, HostError> {
        block::size_bytes(disk.fd.as_fd()).map_err(host_error)
    }

    fn open_mount(&mut self, mountpoint: &[u8]) -> Result<Mount, HostError> {
        fs::open_directory(c_path(&[mountpoint])?.as_cstr()).map(Mount).map_err(host_error)
    }
}

impl wisp_core::host::block::BlockDevice for Disk {
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> Result<(), HostError> {
        block::read_at(self.fd.as_fd(), offset, buf).map_err(host_error)
    }

    fn write_at(&mut self, offset: u64, bytes: &[u8]) -> Result<(), HostError> {
        block::write_at(self.fd.as_fd(), offset, bytes).map_err(host_error)?;
        self.writes += 1;
        if self.crash_after == Some(self.writes) {
            let _ = block::sync(self.fd.as_fd());
            crate::output::error(format_args!("{}: stopping after write {}", wisp_core::text::Plain(CRASH_AFTER_WRITES), wisp_core::text::Decimal(self.writes.into())));
            wisp_os_linux::process::exit(99);
        }
        Ok(())
    }

    fn sync(&mut self) -> Result<(), HostError> {
        block::sync(self.fd.as_fd()).map_err(host_error)
    }

    fn resize_partition(&mut self, number: u32, start: u64, length: u64) -> Result<(), HostError> {
        block::resize_partition(self.fd.as_fd(), number, start, length).map_err(host_error)
    }
}

impl wisp_core::host::block::MountedFilesystem for Mount {
    fn block_size(&mut self) -> Result<u64, HostError> {
        block::filesystem_block_size(self.0.as_fd()).map_err(host_error)
    }

    fn ext4_resize(&mut self, blocks: u64) -> Result<(), HostError> {
        block::ext4_resize(self.0.as_fd(), blocks).map_err(host_error)
    }

    fn xfs_geometry(&mut self) -> Result<(u32, u64, u32), HostError> {
        block::xfs_geometry(self.0.as_fd()).map_err(host_error)
    }

    fn xfs_grow(&mut self, blocks: u64, imaxpct: u32) -> Result<(), HostError> {
        block::xfs_grow(self.0.as_fd(), blocks, imaxpct).map_err(host_error)
    }

    fn btrfs_resize_max(&mut self) -> Result<(), HostError> {
        block::btrfs_resize_max(self.0.as_fd()).map_err(host_error)
    }
}
