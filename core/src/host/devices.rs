//! Opening what `grow` works on: a disk by its kernel name, a disk image file, a mounted
//! filesystem by its mount point; and the sizes the kernel gives. Each method is the
//! calls it names; which device, and in what order the steps go, is
//! `partition::expand`'s decision.

use super::block::{BlockDevice, MountedFilesystem};
use super::HostError;

pub trait Devices {
    type Disk: BlockDevice;
    type Mount: MountedFilesystem;

    /// open(2) of `/dev/NAME` under the root, for reading and writing.
    fn open_device(&mut self, name: &[u8]) -> Result<Self::Disk, HostError>;

    /// open(2) of the image file at `path` (as given) for reading and writing, and
    /// fstat(2)'s length of it.
    fn open_image(&mut self, path: &[u8]) -> Result<(Self::Disk, u64), HostError>;

    /// BLKSSZGET: the disk's logical sector size.
    fn sector_size(&mut self, disk: &mut Self::Disk) -> Result<u32, HostError>;

    /// BLKGETSIZE64: what the kernel says the device holds, in bytes.
    fn size_bytes(&mut self, disk: &mut Self::Disk) -> Result<u64, HostError>;

    /// open(2) of the directory at `path` (as given), a mount point.
    fn open_mount(&mut self, path: &[u8]) -> Result<Self::Mount, HostError>;
}
