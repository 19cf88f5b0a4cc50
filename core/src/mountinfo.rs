//! Which device holds a mountpoint, from /proc/self/mountinfo (proc(5)), and whether
//! wisp can grow what is there.

use core::fmt;

use crate::text::Decimal;

/// One line of mountinfo, its escaped fields (`\040` for a space) left as they are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mount<'a> {
    pub major: u32,
    pub minor: u32,
    pub mountpoint: &'a [u8],
    pub fs_type: &'a [u8],
    pub source: &'a [u8],
    pub read_only: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MountinfoError {
    /// A line that is not mountinfo's format.
    Malformed { line: usize },
}

impl fmt::Display for MountinfoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MountinfoError::Malformed { line } => write!(f, "mountinfo line {line} is malformed", line = Decimal(*line as u64)),
        }
    }
}

/// The mount at `mountpoint` (escaped as mountinfo escapes it): the last entry wins, as a
/// later mount hides an earlier one at the same place.
pub fn find<'a>(mountinfo: &'a [u8], mountpoint: &[u8]) -> Result<Option<Mount<'a>>, MountinfoError> {
    let mut found = None;
    for (index, line) in mountinfo.split(|&b| b == b'\n').enumerate() {
        if line.is_empty() {
            continue;
        }
        let mount = parse_line(line).ok_or(MountinfoError::Malformed { line: index + 1 })?;
        if unescaped_eq(mount.mountpoint, mountpoint) {
            found = Some(mount);
        }
    }
    Ok(found)
}

/// `36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue`
fn parse_line(line: &[u8]) -> Option<Mount<'_>> {
    let mut fields = line.split(|&b| b == b' ');
    let _id = fields.next()?;
    let _parent = fields.next()?;
    let device = fields.next()?;
    let _root = fields.next()?;
    let mountpoint = fields.next()?;
    let options = fields.next()?;
    // Optional fields run up to a lone "-".
    fields.by_ref().find(|field| *field == b"-")?;
    let fs_type = fields.next()?;
    let source = fields.next()?;
    let colon = device.iter().position(|&b| b == b':')?;
    let read_only = options.split(|&b| b == b',').any(|option| option == b"ro");
    Some(Mount {
        major: number(&device[..colon])?,
        minor: number(&device[colon + 1..])?,
        mountpoint,
        fs_type,
        source,
        read_only,
    })
}

fn number(digits: &[u8]) -> Option<u32> {
    u32::try_from(crate::text::decimal(digits, 10)?).ok()
}

/// The mount holding `path`: the one whose mountpoint is the longest prefix of it (a
/// later mount at the same place wins).
pub fn find_containing<'a>(mountinfo: &'a [u8], path: &[u8]) -> Result<Option<Mount<'a>>, MountinfoError> {
    let mut best: Option<(usize, Mount<'a>)> = None;
    for (index, line) in mountinfo.split(|&b| b == b'\n').enumerate() {
        if line.is_empty() {
            continue;
        }
        let mount = parse_line(line).ok_or(MountinfoError::Malformed { line: index + 1 })?;
        let Some(len) = unescaped_prefix(mount.mountpoint, path).filter(|&len| is_mount_prefix(len, path)) else {
            continue;
        };
        if best.as_ref().is_none_or(|(best_len, _)| len >= *best_len) {
            best = Some((len, mount));
        }
    }
    Ok(best.map(|(_, mount)| mount))
}

/// Whether the first `len` bytes of `path` end at a path component boundary.
fn is_mount_prefix(len: usize, path: &[u8]) -> bool {
    (len == 1 && path.first() == Some(&b'/')) || len == path.len() || path.get(len) == Some(&b'/')
}

/// Compares a mountinfo field, whose space, tab, newline and backslash are written as
/// three octal digits after a backslash, with plain bytes.
fn unescaped_eq(escaped: &[u8], plain: &[u8]) -> bool {
    unescaped_prefix(escaped, plain) == Some(plain.len())
}

/// The length of the start of `plain` that the whole escaped field matches, if it does.
fn unescaped_prefix(escaped: &[u8], plain: &[u8]) -> Option<usize> {
    let mut i = 0;
    let mut j = 0;
    while i < escaped.len() {
        let byte = match &escaped[i..] {
            [b'\\', a @ b'0'..=b'3', b @ b'0'..=b'7', c @ b'0'..=b'7', ..] => {
                i += 4;
                (a - b'0') << 6 | (b - b'0') << 3 | (c - b'0')
            }
            [other, ..] => {
                i += 1;
                *other
            }
            [] => break,
        };
        if plain.get(j) != Some(&byte) {
            return None;
        }
        j += 1;
    }
    Some(j)
}

/// The value of `KEY=value` in a sysfs `uevent` file (DEVNAME, DEVTYPE, PARTN).
pub fn uevent_value<'a>(uevent: &'a [u8], key: &[u8]) -> Option<&'a [u8]> {
    uevent.split(|&b| b == b'\n').find_map(|line| line.strip_prefix(key)?.strip_prefix(b"="))
}

/// What wisp does with the filesystem on a mount.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Filesystem {
    Ext4,
    Xfs,
    Btrfs,
}

/// Filesystem types (space-separated) and what wisp does with each: grows it, or the
/// one-line reason it leaves it alone. A table, not a match: the match compiles to a
/// comparison per byte.
const KINDS: [(&[u8], Result<Filesystem, &str>); 7] = [
    (b"ext4 ext3 ext2", Ok(Filesystem::Ext4)),
    (b"xfs", Ok(Filesystem::Xfs)),
    (b"btrfs", Ok(Filesystem::Btrfs)),
    (b"overlay", Err("an overlay filesystem has no partition to grow")),
    (b"tmpfs ramfs rootfs", Err("a memory filesystem has no partition to grow")),
    (b"squashfs erofs iso9660", Err("a read-only image filesystem cannot grow")),
    (b"nfs nfs4 cifs 9p virtiofs", Err("a network or shared filesystem is grown by its server")),
];

/// The filesystem wisp can grow online, or the one-line reason it leaves this mount alone.
pub fn growable(mount: &Mount<'_>) -> Result<Filesystem, &'static str> {
    let fs = KINDS
        .iter()
        .find(|(types, _)| types.split(|&b| b == b' ').any(|t| t == mount.fs_type))
        .map_or(Err("wisp grows ext2/3/4, xfs and btrfs only"), |(_, kind)| *kind)?;
    if mount.read_only {
        return Err("mounted read-only");
    }
    Ok(fs)
}

/// Device-mapper (LVM, crypt) and md arrays sit between the filesystem and the disk;
/// growing them is a job for their own tools.
pub fn stacked_device_reason(device_name: &[u8]) -> Option<&'static str> {
    if device_name.starts_with(b"dm-") {
        Some("on device-mapper (LVM or dm-crypt): grow it with its own tools")
    } else if device_name.starts_with(b"md") {
        Some("on an md RAID array: grow it with mdadm")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &[u8] = b"\
22 1 252:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw\n\
23 22 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:2 - proc proc rw\n\
40 22 259:2 / /srv/my\\040data rw,noatime - xfs /dev/nvme0n1p2 rw,attr2\n\
41 22 7:1 / /mnt/ro ro,relatime - btrfs /dev/loop1 ro\n\
50 22 0:50 / / rw - overlay overlay rw,lowerdir=/a\n";

    #[test]
    fn finds_the_last_mount_at_a_place() {
        crate::fuzz::seed_pair("mountinfo", b"/srv/my data", SAMPLE);
        crate::fuzz::seed("mountinfo", b"\0MAJOR=259\nMINOR=2\nDEVNAME=nvme0n1p2\nDEVTYPE=partition\nPARTN=2\n");
        let root = find(SAMPLE, b"/").unwrap().unwrap();
        assert_eq!(root.fs_type, b"overlay");
        let data = find(SAMPLE, b"/srv/my data").unwrap().unwrap();
        assert_eq!((data.major, data.minor, data.source, data.read_only), (259, 2, &b"/dev/nvme0n1p2"[..], false));
        assert_eq!(growable(&data), Ok(Filesystem::Xfs));
        assert_eq!(find(SAMPLE, b"/srv/my\\040data").unwrap(), None);
        assert_eq!(find(SAMPLE, b"/nowhere").unwrap(), None);
        let first_line = &SAMPLE[..SAMPLE.iter().position(|&b| b == b'\n').unwrap()];
        let first_root = find(first_line, b"/").unwrap().unwrap();
        assert_eq!((first_root.major, first_root.minor, first_root.fs_type), (252, 1, &b"ext4"[..]));
        assert_eq!(growable(&first_root), Ok(Filesystem::Ext4));
    }

    #[test]
    fn finds_the_mount_holding_a_path() {
        let text = b"1 0 8:1 / / rw - ext4 /dev/sda1 rw\n2 1 8:2 / /srv rw - xfs /dev/sda2 rw\n3 1 8:3 / /srv/a rw - btrfs /dev/sda3 rw\n";
        let fs = |path: &[u8]| find_containing(text, path).unwrap().unwrap().fs_type;
        assert_eq!(fs(b"/"), b"ext4");
        assert_eq!(fs(b"/tmp/x/root"), b"ext4");
        assert_eq!(fs(b"/srv"), b"xfs");
        assert_eq!(fs(b"/srv/ab"), b"xfs");
        assert_eq!(fs(b"/srv/a"), b"btrfs");
        assert_eq!(fs(b"/srv/a/b/c"), b"btrfs");
        assert_eq!(find_containing(b"1 0 8:2 / /srv rw - xfs /dev/sda2 rw\n", b"/home").unwrap(), None);
    }

    #[test]
    fn skip_reasons() {
        assert_eq!(growable(&find(SAMPLE, b"/").unwrap().unwrap()), Err("an overlay filesystem has no partition to grow"));
        assert_eq!(growable(&find(SAMPLE, b"/mnt/ro").unwrap().unwrap()), Err("mounted read-only"));
        assert_eq!(growable(&find(SAMPLE, b"/proc").unwrap().unwrap()), Err("wisp grows ext2/3/4, xfs and btrfs only"));
        assert!(stacked_device_reason(b"dm-0").is_some() && stacked_device_reason(b"md127").is_some());
        assert_eq!(stacked_device_reason(b"vda1"), None);
        assert_eq!(stacked_device_reason(b"mmcblk0p2"), None);
    }

    #[test]
    fn uevent() {
        let text = b"MAJOR=259\nMINOR=2\nDEVNAME=nvme0n1p2\nDEVTYPE=partition\nPARTN=2\n";
        assert_eq!(uevent_value(text, b"DEVNAME"), Some(&b"nvme0n1p2"[..]));
        assert_eq!(uevent_value(text, b"PARTN"), Some(&b"2"[..]));
        assert_eq!(uevent_value(text, b"PART"), None);
        assert_eq!(uevent_value(b"", b"DEVNAME"), None);
    }

    #[test]
    fn malformed_lines() {
        assert_eq!(find(b"22 1 252:1 / / rw - ext4\n", b"/"), Err(MountinfoError::Malformed { line: 1 }));
        assert_eq!(find(b"\n22 1 252 / / rw - ext4 /dev/x rw\n", b"/"), Err(MountinfoError::Malformed { line: 2 }));
        assert_eq!(find(b"22 1 2:1 / / rw shared:1 ext4 /dev/x rw", b"/"), Err(MountinfoError::Malformed { line: 1 }));
    }
}
