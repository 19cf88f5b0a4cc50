//! Growing a mounted filesystem to the size of the device under it, online, with each
//! filesystem's own ioctl; what the kernel's refusals mean, said in words.

use core::fmt;

use crate::host::block::MountedFilesystem;
use crate::host::explain::{errno_number, ErrnoWords, Explain};
use crate::host::HostError;
use crate::mountinfo::Filesystem;
use crate::text::{Decimal, Plain};

/// What the filesystem did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Growth {
    Ext4 { blocks: u64, block_size: u64 },
    /// xfs leaves a last allocation group too small to be worth it: nothing grew.
    XfsFull { blocks: u64 },
    Xfs { from: u64, to: u64, block_size: u32 },
    Btrfs,
}

impl fmt::Display for Growth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Growth::Ext4 { blocks, block_size } => write!(f, "ext4 resized to {blocks} blocks of {block_size} bytes", blocks = Decimal(blocks), block_size = Decimal(block_size)),
            Growth::XfsFull { blocks } => write!(f, "xfs already fills the device ({blocks} blocks)", blocks = Decimal(blocks)),
            Growth::Xfs { from, to, block_size } => write!(f, "xfs grown from {from} to {to} blocks of {block_size} bytes", from = Decimal(from), to = Decimal(to), block_size = Decimal(block_size as u64)),
            Growth::Btrfs => f.write_str("btrfs resized to the device's size"),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GrowthError {
    /// `what` failed as the system said.
    Call { what: &'static str, error: HostError },
    /// EPERM or EACCES from EXT4_IOC_RESIZE_FS.
    Ext4NeedsCapability,
    /// EOPNOTSUPP from EXT4_IOC_RESIZE_FS.
    Ext4CannotGrowOnline,
}

impl Explain for GrowthError {
    fn explain(&self, f: &mut fmt::Formatter<'_>, words: ErrnoWords) -> fmt::Result {
        f.write_str(match *self {
            GrowthError::Call { what, error } => {
                write!(f, "{what}: ", what = Plain(what))?;
                return words(error, f);
            }
            GrowthError::Ext4NeedsCapability => "the kernel refused to resize ext4 online: EXT4_IOC_RESIZE_FS needs CAP_SYS_RESOURCE",
            GrowthError::Ext4CannotGrowOnline => {
                "the kernel cannot resize this ext4 online (no resize_inode and no meta_bg: its block group descriptors cannot grow)"
            }
        })
    }
}

impl fmt::Display for GrowthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.explain(f, errno_number)
    }
}

fn call(what: &'static str) -> impl Fn(HostError) -> GrowthError {
    move |error| GrowthError::Call { what, error }
}

/// Grows `filesystem`, mounted at `mount`, to `device_bytes`.
pub fn grow(mount: &mut impl MountedFilesystem, filesystem: Filesystem, device_bytes: u64) -> Result<Growth, GrowthError> {
    match filesystem {
        Filesystem::Ext4 => {
            let block_size = mount.block_size().map_err(call("statfs"))?;
            let blocks = device_bytes / block_size;
            match mount.ext4_resize(blocks) {
                Ok(()) => Ok(Growth::Ext4 { blocks, block_size }),
                Err(HostError::PERMISSION | HostError::ACCESS) => Err(GrowthError::Ext4NeedsCapability),
                Err(HostError::NOT_SUPPORTED) => Err(GrowthError::Ext4CannotGrowOnline),
                Err(e) => Err(call("ext4 online resize failed")(e)),
            }
        }
        Filesystem::Xfs => {
            let (block_size, data_blocks, imaxpct) = mount.xfs_geometry().map_err(call("xfs geometry"))?;
            let blocks = device_bytes / u64::from(block_size.max(1));
            if blocks <= data_blocks {
                return Ok(Growth::XfsFull { blocks: data_blocks });
            }
            mount.xfs_grow(blocks, imaxpct).map_err(call("xfs growfs failed"))?;
            let (_, grown, _) = mount.xfs_geometry().map_err(call("xfs geometry"))?;
            if grown == data_blocks {
                return Ok(Growth::XfsFull { blocks: data_blocks });
            }
            Ok(Growth::Xfs { from: data_blocks, to: grown, block_size })
        }
        Filesystem::Btrfs => {
            mount.btrfs_resize_max().map_err(call("btrfs resize failed"))?;
            Ok(Growth::Btrfs)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::memory::MemoryMount;

    #[test]
    fn ext4_grows_to_whole_blocks_of_the_device() {
        let mut mount = MemoryMount { block_size: 4096, ..MemoryMount::default() };
        let growth = grow(&mut mount, Filesystem::Ext4, (1 << 30) + 4095).unwrap();
        assert_eq!(growth, Growth::Ext4 { blocks: 262_144, block_size: 4096 });
        assert_eq!(mount.calls, ["block_size", "ext4_resize 262144"]);
        assert_eq!(std::format!("{growth}"), "ext4 resized to 262144 blocks of 4096 bytes");
    }

    #[test]
    fn ext4_refusals_say_why() {
        let refused = |errno| {
            let mut mount = MemoryMount { block_size: 4096, refuse: Some(HostError { errno }), ..MemoryMount::default() };
            std::format!("{}", grow(&mut mount, Filesystem::Ext4, 1 << 30).unwrap_err())
        };
        assert_eq!(refused(1), "the kernel refused to resize ext4 online: EXT4_IOC_RESIZE_FS needs CAP_SYS_RESOURCE");
        assert_eq!(refused(13), refused(1));
        assert!(refused(95).starts_with("the kernel cannot resize this ext4 online (no resize_inode"));
        assert_eq!(refused(16), "ext4 online resize failed: errno 16");
    }

    #[test]
    fn xfs_grows_only_when_the_device_holds_more_and_says_what_it_kept() {
        let mut full = MemoryMount { xfs: (4096, 262_144, 25), ..MemoryMount::default() };
        assert_eq!(grow(&mut full, Filesystem::Xfs, 1 << 30), Ok(Growth::XfsFull { blocks: 262_144 }));
        assert_eq!(full.calls, ["xfs_geometry"]);
        let mut mount = MemoryMount { xfs: (4096, 262_144, 25), ..MemoryMount::default() };
        let growth = grow(&mut mount, Filesystem::Xfs, 2 << 30).unwrap();
        assert_eq!(mount.calls, ["xfs_geometry", "xfs_grow 524288 25", "xfs_geometry"]);
        assert_eq!(std::format!("{growth}"), "xfs grown from 262144 to 524288 blocks of 4096 bytes");
        // xfs drops a last allocation group too small to keep: nothing grew.
        let mut kept = MemoryMount { xfs: (4096, 262_144, 25), xfs_grows_to: Some(262_144), ..MemoryMount::default() };
        assert_eq!(std::format!("{}", grow(&mut kept, Filesystem::Xfs, (1 << 30) + 8192).unwrap()), "xfs already fills the device (262144 blocks)");
    }

    #[test]
    fn btrfs_is_asked_for_its_maximum() {
        let mut mount = MemoryMount::default();
        assert_eq!(std::format!("{}", grow(&mut mount, Filesystem::Btrfs, 1 << 30).unwrap()), "btrfs resized to the device's size");
        mount.refuse = Some(HostError { errno: 22 });
        assert_eq!(std::format!("{}", grow(&mut mount, Filesystem::Btrfs, 1 << 30).unwrap_err()), "btrfs resize failed: errno 22");
    }
}
