//! core's `Devices`, `BlockDevice` and `MountedFilesystem` for `grow`: disks under the
//! root's /dev, image files and mount points, open, and the ioctls on them.

use wisp_core::host::HostError;
use wisp_core::partition::crash_hook::{StopAfterWrites, CRASH_AFTER_WRITES};
use wisp_os_linux::{block, fs, AsFd, OwnedFd};

use super::{c_path, host_error};
use super::system::System;

/// An open disk or image file, behind core's test hook (`crash_hook`).
pub struct Disk(OwnedFd);

/// A mounted filesystem, through a directory on it.
pub struct Mount(OwnedFd);

impl System<'_> {
    fn open_disk(&self, parts: &[&[u8]]) -> Result<StopAfterWrites<Disk>, HostError> {
        let fd = fs::open_read_write(c_path(parts)?.as_cstr()).map_err(host_error)?;
        let crashed = |said: core::fmt::Arguments<'_>| {
            crate::output::error(said);
            wisp_os_linux::process::exit(99)
        };
        Ok(StopAfterWrites::new(Disk(fd), self.ctx.start.env(CRASH_AFTER_WRITES.as_bytes()), crashed))
    }
}

impl wisp_core::host::devices::Devices for System<'_> {
    type Disk = StopAfterWrites<Disk>;
    type Mount = Mount;

    fn open_device(&mut self, name: &[u8]) -> Result<Self::Disk, HostError> {
        self.open_disk(&[self.ctx.root, b"/dev/", name])
    }

    fn open_image(&mut self, file: &[u8]) -> Result<(Self::Disk, u64), HostError> {
        let image = self.open_disk(&[file])?;
        let size = block::file_size(image.disk.0.as_fd()).map_err(host_error)?;
        Ok((image, size))
    }

    fn sector_size(&mut self, disk: &mut Self::Disk) -> Result<u32, HostError> {
        block::logical_sector_size(disk.disk.0.as_fd()).map_err(host_error)
    }

    fn size_bytes(&mut self, disk: &mut Self::Disk) -> Result<u64, HostError> {
        block::size_bytes(disk.disk.0.as_fd()).map_err(host_error)
    }

    fn open_mount(&mut self, mountpoint: &[u8]) -> Result<Mount, HostError> {
        fs::open_directory(c_path(&[mountpoint])?.as_cstr()).map(Mount).map_err(host_error)
    }
}

impl wisp_core::host::block::BlockDevice for Disk {
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> Result<(), HostError> {
        block::read_at(self.0.as_fd(), offset, buf).map_err(host_error)
    }

    fn write_at(&mut self, offset: u64, bytes: &[u8]) -> Result<(), HostError> {
        block::write_at(self.0.as_fd(), offset, bytes).map_err(host_error)
    }

    fn sync(&mut self) -> Result<(), HostError> {
        block::sync(self.0.as_fd()).map_err(host_error)
    }

    fn resize_partition(&mut self, number: u32, start: u64, length: u64) -> Result<(), HostError> {
        block::resize_partition(self.0.as_fd(), number, start, length).map_err(host_error)
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
