//! Disks and the filesystems mounted from them: bytes at offsets, a sync, and the ioctls
//! that tell the kernel a partition grew or grow a mounted filesystem. Each method is one
//! call; which calls are made, and in what order, is `partition::grow`'s and
//! `partition::filesystem`'s decision.

use super::HostError;

/// A block device (or a disk image file), open for reading and writing.
pub trait BlockDevice {
    /// Fills `buf` from `offset` (bytes); a short read is an error.
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> Result<(), HostError>;

    /// Writes all of `bytes` at `offset` (bytes).
    fn write_at(&mut self, offset: u64, bytes: &[u8]) -> Result<(), HostError>;

    /// fsync(2): what was written is on the device.
    fn sync(&mut self) -> Result<(), HostError>;

    /// BLKPG_RESIZE_PARTITION: the kernel's idea of partition `number` on this disk
    /// becomes `length` bytes from `start` (bytes).
    fn resize_partition(&mut self, number: u32, start: u64, length: u64) -> Result<(), HostError>;
}

/// A mounted filesystem, through a handle on its mount point.
pub trait MountedFilesystem {
    /// statfs(2)'s block size.
    fn block_size(&mut self) -> Result<u64, HostError>;

    /// EXT4_IOC_RESIZE_FS to `blocks` blocks.
    fn ext4_resize(&mut self, blocks: u64) -> Result<(), HostError>;

    /// XFS_IOC_FSGEOMETRY: the block size, the data blocks and imaxpct.
    fn xfs_geometry(&mut self) -> Result<(u32, u64, u32), HostError>;

    /// XFS_IOC_FSGROWFSDATA to `blocks` data blocks, keeping `imaxpct`.
    fn xfs_grow(&mut self, blocks: u64, imaxpct: u32) -> Result<(), HostError>;

    /// BTRFS_IOC_RESIZE "max" on the filesystem's device.
    fn btrfs_resize_max(&mut self) -> Result<(), HostError>;
}

/// The errno values the growth decisions tell apart (the same on every Linux
/// architecture wisp builds for).
impl HostError {
    pub const PERMISSION: HostError = HostError { errno: 1 };
    pub const ACCESS: HostError = HostError { errno: 13 };
    pub const NOT_SUPPORTED: HostError = HostError { errno: 95 };
}
