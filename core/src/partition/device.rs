//! The device under a mount point, as the kernel names it: the mount in
//! /proc/self/mountinfo, its device's sysfs `uevent` (DEVNAME, PARTN), and for a
//! partition the disk it is on. Read through `Files`, so the walk is tested on an
//! in-memory tree; opening and resizing the device is the caller's.

use crate::host::files::Files;
use crate::host::HostError;
use crate::mountinfo::{self, Filesystem, MountinfoError};

/// Largest /proc/self/mountinfo read.
pub const MOUNTINFO_LIMIT: usize = 64 * 1024;
/// Largest sysfs `uevent` read.
pub const UEVENT_LIMIT: usize = 1024;
/// Longest sysfs path built here (`/sys/class/block/NAME/uevent`).
pub const SYSFS_PATH_LIMIT: usize = 64;

pub const MOUNTINFO: &str = "/proc/self/mountinfo";

/// The caller's memory for the files read and the paths built; the answer borrows it.
/// /proc/self/mountinfo's buffer is the caller's room (`MOUNTINFO_LIMIT` bytes, mapped
/// rather than probed whole on the stack however short the file).
pub struct Texts<'r> {
    pub mountinfo: &'r mut [u8],
    pub device: [u8; UEVENT_LIMIT],
    pub disk: [u8; UEVENT_LIMIT],
    pub device_path: heapless::Vec<u8, SYSFS_PATH_LIMIT>,
    pub disk_path: heapless::Vec<u8, SYSFS_PATH_LIMIT>,
}

impl<'r> Texts<'r> {
    pub fn new(mountinfo: &'r mut [u8]) -> Texts<'r> {
        Texts {
            mountinfo,
            device: [0; UEVENT_LIMIT],
            disk: [0; UEVENT_LIMIT],
            device_path: heapless::Vec::new(),
            disk_path: heapless::Vec::new(),
        }
    }

    /// The path of a file `find` read.
    pub fn path(&self, file: File) -> &[u8] {
        match file {
            File::Mountinfo => MOUNTINFO.as_bytes(),
            File::Device => &self.device_path,
            File::Disk => &self.disk_path,
        }
    }
}

/// What is under the mount point.
#[derive(Debug, PartialEq, Eq)]
pub enum Found<'t> {
    /// A filesystem wisp does not grow (`skipped: PATH is on TYPE (REASON)`).
    NotGrowable { fs_type: &'t [u8], reason: &'static str },
    /// A device between the filesystem and the disk (`skipped: NAME is REASON`).
    Stacked { name: &'t [u8], reason: &'static str },
    /// The device (`vda1`), and for a partition its number and disk (`vda`).
    Device { filesystem: Filesystem, name: &'t [u8], partition: Option<(u32, &'t [u8])> },
}

/// A file `find` reads; `Texts::path` says where it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum File {
    Mountinfo,
    /// The device's `uevent`.
    Device,
    /// The `uevent` of the disk a partition is on.
    Disk,
}

/// Why the device could not be found. Small (returned in registers): the paths are in
/// `Texts`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FindError {
    /// The file could not be read (the caller words it, under its root).
    Read(File, HostError),
    Missing(File),
    NamesNoDevice(File),
    /// The device's PARTN is not a number.
    BadPartition,
    Mountinfo(MountinfoError),
    NoMount,
}

fn read<'t>(files: &mut impl Files, file: File, path: &[u8], buf: &'t mut [u8]) -> Result<&'t [u8], FindError> {
    match files.read(path, buf) {
        Ok(Some(len)) => Ok(&buf[..len]),
        Ok(None) => Err(FindError::Missing(file)),
        Err(error) => Err(FindError::Read(file, error)),
    }
}

/// The device under the filesystem holding `path`.
pub fn find<'t>(files: &mut impl Files, path: &[u8], texts: &'t mut Texts<'_>) -> Result<Found<'t>, FindError> {
    let Texts { mountinfo, device, disk, device_path, disk_path } = texts;
    let mountinfo = read(files, File::Mountinfo, MOUNTINFO.as_bytes(), mountinfo)?;
    let mount = mountinfo::find_containing(mountinfo, path).map_err(FindError::Mountinfo)?.ok_or(FindError::NoMount)?;
    let filesystem = match mountinfo::growable(&mount) {
        Ok(filesystem) => filesystem,
        Err(reason) => return Ok(Found::NotGrowable { fs_type: mount.fs_type, reason }),
    };
    match (mount.major, mount.source.strip_prefix(b"/dev/")) {
        // btrfs reports an anonymous device number (major 0): its source names the device.
        (0, Some(name)) if !name.contains(&b'/') => {
            let _ = device_path.extend_from_slice(b"/sys/class/block/");
            let _ = device_path.extend_from_slice(name);
        }
        _ => {
            let _ = device_path.extend_from_slice(b"/sys/dev/block/");
            push_decimal(device_path, mount.major);
            let _ = device_path.push(b':');
            push_decimal(device_path, mount.minor);
        }
    }
    let _ = device_path.extend_from_slice(b"/uevent");
    let device = read(files, File::Device, device_path, device)?;
    let name = mountinfo::uevent_value(device, b"DEVNAME").ok_or(FindError::NamesNoDevice(File::Device))?;
    if let Some(reason) = mountinfo::stacked_device_reason(name) {
        return Ok(Found::Stacked { name, reason });
    }
    let Some(number) = mountinfo::uevent_value(device, b"PARTN") else {
        return Ok(Found::Device { filesystem, name, partition: None });
    };
    let number = crate::text::decimal(number, 10).and_then(|n| u32::try_from(n).ok()).ok_or(FindError::BadPartition)?;
    // `/sys/dev/block/8:1/../uevent`: the kernel resolves the `..` after following the
    // device's link, which lands on its parent disk.
    let _ = disk_path.extend_from_slice(device_path.strip_suffix(b"uevent").unwrap_or(device_path));
    let _ = disk_path.extend_from_slice(b"../uevent");
    let disk = read(files, File::Disk, disk_path, disk)?;
    let disk_name = mountinfo::uevent_value(disk, b"DEVNAME").ok_or(FindError::NamesNoDevice(File::Disk))?;
    Ok(Found::Device { filesystem, name, partition: Some((number, disk_name)) })
}

/// `n` in decimal digits (a path past the limit is cut, then not found).
fn push_decimal(out: &mut heapless::Vec<u8, SYSFS_PATH_LIMIT>, n: u32) {
    let _ = out.extend_from_slice(crate::text::decimal_digits(n.into(), &mut [0; 20]));
}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::vec;

    use super::*;
    use crate::host::memory::MemoryHost;

    const MOUNTINFO_TEXT: &[u8] = b"\
22 1 252:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw\n\
30 22 0:33 / /data rw - btrfs /dev/sdb rw\n\
31 22 253:0 / /lvm rw - xfs /dev/mapper/vg-root rw\n\
32 22 0:40 / /run rw - tmpfs tmpfs rw\n";

    fn tree() -> MemoryHost {
        MemoryHost::new()
            .with_file(MOUNTINFO, MOUNTINFO_TEXT)
            .with_file("/sys/dev/block/252:1/uevent", b"MAJOR=252\nMINOR=1\nDEVNAME=vda1\nDEVTYPE=partition\nPARTN=1\n")
            .with_file("/sys/dev/block/252:1/../uevent", b"MAJOR=252\nMINOR=0\nDEVNAME=vda\nDEVTYPE=disk\n")
            .with_file("/sys/class/block/sdb/uevent", b"MAJOR=8\nMINOR=16\nDEVNAME=sdb\nDEVTYPE=disk\n")
            .with_file("/sys/dev/block/253:0/uevent", b"MAJOR=253\nMINOR=0\nDEVNAME=dm-0\n")
    }

    #[test]
    fn a_partition_and_its_disk() {
        let mut room = vec![0u8; MOUNTINFO_LIMIT];
        let mut host = tree();
        let mut texts = Texts::new(&mut room);
        let found = find(&mut host, b"/etc", &mut texts).unwrap();
        assert_eq!(found, Found::Device { filesystem: Filesystem::Ext4, name: b"vda1", partition: Some((1, &b"vda"[..])) });
        assert_eq!(host.calls, ["read /proc/self/mountinfo", "read /sys/dev/block/252:1/uevent", "read /sys/dev/block/252:1/../uevent"]);
    }

    #[test]
    fn btrfs_is_found_by_its_source_not_its_anonymous_number() {
        let mut room = vec![0u8; MOUNTINFO_LIMIT];
        let mut texts = Texts::new(&mut room);
        let found = find(&mut tree(), b"/data/x", &mut texts).unwrap();
        assert_eq!(found, Found::Device { filesystem: Filesystem::Btrfs, name: b"sdb", partition: None });
    }

    #[test]
    fn skips_what_it_does_not_grow() {
        let mut room = vec![0u8; MOUNTINFO_LIMIT];
        let mut texts = Texts::new(&mut room);
        let found = find(&mut tree(), b"/run/x", &mut texts).unwrap();
        assert_eq!(found, Found::NotGrowable { fs_type: b"tmpfs", reason: "a memory filesystem has no partition to grow" });
        let mut texts = Texts::new(&mut room);
        let found = find(&mut tree(), b"/lvm", &mut texts).unwrap();
        assert!(matches!(found, Found::Stacked { name: b"dm-0", .. }), "{found:?}");
    }

    #[test]
    fn each_failure_names_the_file() {
        let mut room = vec![0u8; MOUNTINFO_LIMIT];
        let mut texts = Texts::new(&mut room);
        assert_eq!(find(&mut MemoryHost::new(), b"/", &mut texts), Err(FindError::Missing(File::Mountinfo)));
        let mut texts = Texts::new(&mut room);
        let mut host = MemoryHost::new().with_file(MOUNTINFO, MOUNTINFO_TEXT);
        assert_eq!(find(&mut host, b"/", &mut texts), Err(FindError::Missing(File::Device)));
        assert_eq!(texts.path(File::Device), b"/sys/dev/block/252:1/uevent");
        let mut texts = Texts::new(&mut room);
        let mut host = MemoryHost::new().with_file(MOUNTINFO, MOUNTINFO_TEXT).with_file("/sys/dev/block/252:1/uevent", b"PARTN=1\n");
        assert_eq!(find(&mut host, b"/", &mut texts), Err(FindError::NamesNoDevice(File::Device)));
        let mut texts = Texts::new(&mut room);
        let mut host = MemoryHost::new().with_file(MOUNTINFO, MOUNTINFO_TEXT).with_file("/sys/dev/block/252:1/uevent", b"DEVNAME=vda1\nPARTN=x\n");
        assert_eq!(find(&mut host, b"/", &mut texts), Err(FindError::BadPartition));
        let mut texts = Texts::new(&mut room);
        let mut host = tree();
        host.fail.insert(b"/sys/dev/block/252:1/../uevent".to_vec(), HostError { errno: 13 });
        assert_eq!(find(&mut host, b"/", &mut texts), Err(FindError::Read(File::Disk, HostError { errno: 13 })));
        assert_eq!(texts.path(File::Disk), b"/sys/dev/block/252:1/../uevent");
        let mut texts = Texts::new(&mut room);
        // A source that is not ASCII is looked for by its bytes.
        let mut host = MemoryHost::new().with_file(MOUNTINFO, b"22 1 0:33 / / rw - btrfs /dev/\xff rw\n");
        assert_eq!(find(&mut host, b"/", &mut texts), Err(FindError::Missing(File::Device)));
        assert_eq!(texts.path(File::Device), b"/sys/class/block/\xff/uevent");
        let mut texts = Texts::new(&mut room);
        let mut host = MemoryHost::new().with_file(MOUNTINFO, b"22 1 252:1 / /srv rw - ext4 /dev/vda1 rw\n");
        assert_eq!(find(&mut host, b"/", &mut texts), Err(FindError::NoMount));
    }
}
