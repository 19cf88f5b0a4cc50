//! /etc/fstab lines from cloud-config's `mounts` key, with cloud-init's semantics
//! (cc_mounts.py, cloud-init 22.4.2): an entry is up to six fields, the missing or null
//! ones taken from `mount_default_fields`; an entry with no mount point removes that
//! device's earlier entries; every line written carries `comment=cloudconfig` in its
//! options, and every such line already in the file is replaced, so running again with
//! the same entries gives the same file. Lines cloud-config did not write are kept byte
//! for byte.
//!
//! Where wisp differs, on purpose: an entry it cannot write is skipped and reported (one
//! naming an instance-metadata device such as `ephemeral0` or `swap`, which cloud-init
//! maps through the cloud's metadata; one whose device already has a line of its own;
//! one with an empty, spaced or relative field), where cloud-init 22.4 logs "ignoring"
//! and writes it anyway. Devices are not looked up on disk (that needs system calls), nor
//! `device_aliases` applied: the caller does both if it wants them.

use core::fmt;

use crate::out::{Full, Out};
use crate::text::{Decimal, Plain};

/// What cloud-init puts in the options of every line it writes, and looks for to find
/// them again.
pub const MARKER: &[u8] = b"comment=cloudconfig";

/// device, mount point, type, options, dump, pass; `None` is YAML's null or a missing field.
pub type Fields<'a> = [Option<&'a [u8]>; 6];

/// cloud-init's `mount_default_fields` where the distribution does not use systemd
/// (Alpine's OpenRC). busybox mount passes `nobootwait` on to the kernel, which most
/// filesystems refuse: a caller may well prefer its own defaults.
pub const DEFAULT_FIELDS: Fields<'static> = [None, None, Some(b"auto"), Some(b"defaults,nobootwait"), Some(b"0"), Some(b"2")];
/// cloud-init's `mount_default_fields` where it does.
pub const DEFAULT_FIELDS_SYSTEMD: Fields<'static> = [
    None, None, Some(b"auto"), Some(b"defaults,nofail,x-systemd.requires=cloud-init.service,_netdev"), Some(b"0"), Some(b"2"),
];

/// The fields' names, by their place in `Fields`: one text, not a table of six slices.
const NAMES: &str = "device\nmount point\nfilesystem type\noptions\ndump\npass";

/// One item of `mounts`: a list of up to six scalars.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry<'a> {
    pub fields: Fields<'a>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FstabError {
    /// The new file does not fit in the caller's buffer, whose size is the limit.
    TooLarge { limit: u32 },
    /// An entry with neither a device nor a default one.
    MissingDevice,
    /// `ephemeralN`, `ebsN`, `swap`, `root` or `ami`: devices named by the cloud's metadata.
    MetadataDevice,
    /// A line cloud-config did not write already names this device.
    AlreadyInFstab,
    /// A field (its place in `Fields`) that is empty or holds white space or a control
    /// character. The fields are numbers, so that the error is 8 bytes, not 24.
    BadField { field: u8 },
    /// A mount point neither absolute nor `none` on a swap line.
    RelativeMountPoint,
    /// dump or pass that is not a number.
    NotANumber { field: u8 },
}

impl fmt::Display for FstabError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FstabError::TooLarge { limit } => write!(f, "/etc/fstab would be larger than {limit} bytes", limit = Decimal((*limit).into())),
            FstabError::MissingDevice => f.write_str("the mount has no device"),
            FstabError::MetadataDevice => f.write_str("the device is named by instance metadata, which wisp does not map"),
            FstabError::AlreadyInFstab => f.write_str("the device already has a line in /etc/fstab"),
            FstabError::BadField { field } => write!(f, "the {} is empty or holds white space or a control character", Plain(field_name(*field))),
            FstabError::RelativeMountPoint => f.write_str("the mount point is not an absolute path"),
            FstabError::NotANumber { field } => write!(f, "the {} field is not a number", Plain(field_name(*field))),
        }
    }
}

impl From<Full> for FstabError {
    fn from(full: Full) -> Self {
        FstabError::TooLarge { limit: full.limit as u32 }
    }
}

/// The entry's fields with the null and missing ones taken from `defaults`.
pub fn fill<'a>(entry: &Entry<'a>, defaults: &Fields<'a>) -> Fields<'a> {
    let mut fields = entry.fields;
    for (field, default) in fields.iter_mut().zip(defaults) {
        *field = field.or(*default);
    }
    fields
}

/// The new /etc/fstab in `out`, or `None` when `existing` already is exactly that.
/// `skipped` hears of each entry left out, by its index in `entries`, and why.
pub fn merge(
    existing: &[u8],
    entries: &[Entry<'_>],
    defaults: &Fields<'_>,
    out: &mut [u8],
    mut skipped: impl FnMut(usize, FstabError),
) -> Result<Option<usize>, FstabError> {
    let mut writer = Out::new(out);
    for line in kept_lines(existing) {
        writer.put_all(&[line, b"\n"])?;
    }
    for (index, entry) in entries.iter().enumerate() {
        let fields = fill(entry, defaults);
        let Some(mount_point) = fields[1] else { continue };
        let line = match check(existing, &fields, mount_point) {
            Ok(device) if !removed_later(device, &entries[index + 1..], defaults) => (device, fields),
            Ok(_) => continue,
            Err(error) => {
                skipped(index, error);
                continue;
            }
        };
        put_line(&mut writer, line)?;
    }
    Ok((writer.written() != existing).then_some(writer.len()))
}

fn field_name(field: u8) -> &'static str {
    crate::text::nth_part(NAMES, '\n', field.into())
}

/// A device as it goes into the file: `sdb` is written `/dev/sdb`.
#[derive(Clone, Copy)]
struct Device<'a> {
    prefix: &'static [u8],
    name: &'a [u8],
}

impl Device<'_> {
    fn is(&self, other: &[u8]) -> bool {
        other.strip_prefix(self.prefix) == Some(self.name)
    }

    /// Whether both are the same path: `/dev/sdb` (no prefix) is `sdb` (prefix `/dev/`).
    fn same(&self, other: &Device<'_>) -> bool {
        match (self.prefix.is_empty(), other.prefix.is_empty()) {
            (true, _) => other.is(self.name),
            (false, true) => self.is(other.name),
            (false, false) => self.prefix == other.prefix && self.name == other.name,
        }
    }
}

/// What goes before a device's name in fstab and for mount(2): `/dev/` for `sdb`.
pub fn device_prefix(name: &[u8]) -> &'static [u8] {
    device(name).map_or(b"", |device| device.prefix)
}

/// cloud-init's sanitize_devname, less its lookups on disk.
fn device(name: &[u8]) -> Result<Device<'_>, FstabError> {
    let plain = Device { prefix: b"", name };
    // `server:/export` (NETWORK_NAME_FILTER `^.+:.*`) is taken as it is.
    if name.iter().skip(1).any(|&b| b == b':') {
        return Ok(plain);
    }
    // `ephemeral0.1` is partition 1 of `ephemeral0`.
    let base = name.iter().rposition(|&b| b == b'.').map_or(name, |dot| &name[..dot]);
    let metadata = crate::text::word_index("ami root swap", base).is_some() || base.starts_with(b"ephemeral") || base.starts_with(b"ebs");
    if metadata {
        return Err(FstabError::MetadataDevice);
    }
    // DEVICE_NAME_FILTER: `^([x]{0,1}[shv]d[a-z][0-9]*|sr[0-9]+)$`.
    let short = name.strip_prefix(b"x").unwrap_or(name);
    let disk = matches!(short, [b's' | b'h' | b'v', b'd', b'a'..=b'z', digits @ ..] if digits.iter().all(u8::is_ascii_digit));
    let cdrom = matches!(name, [b's', b'r', digits @ ..] if !digits.is_empty() && digits.iter().all(u8::is_ascii_digit));
    Ok(if disk || cdrom { Device { prefix: b"/dev/", name } } else { plain })
}

fn check<'a>(existing: &[u8], fields: &Fields<'a>, mount_point: &[u8]) -> Result<Device<'a>, FstabError> {
    let name = fields[0].ok_or(FstabError::MissingDevice)?;
    let device = device(name)?;
    if name.starts_with(b"#") {
        return Err(FstabError::BadField { field: 0 });
    }
    for (field, value) in (0..).zip(fields) {
        let value = value.unwrap_or_default();
        if value.is_empty() || value.iter().any(|&b| b <= b' ' || b == 0x7f) {
            return Err(FstabError::BadField { field });
        }
    }
    let swap = fields[2] == Some(b"swap") && mount_point == b"none";
    if !mount_point.starts_with(b"/") && !swap {
        return Err(FstabError::RelativeMountPoint);
    }
    for (field, value) in [(4, fields[4]), (5, fields[5])] {
        crate::text::decimal(value.unwrap_or_default(), 9).ok_or(FstabError::NotANumber { field })?;
    }
    // cloud-init's fstab_devs: the first white-space separated token of each line.
    if kept_lines(existing).any(|line| line.split(u8::is_ascii_whitespace).next().is_some_and(|first| device.is(first))) {
        return Err(FstabError::AlreadyInFstab);
    }
    Ok(device)
}

/// Whether a later entry with no mount point removes this device's line.
fn removed_later(device: Device<'_>, later: &[Entry<'_>], defaults: &Fields<'_>) -> bool {
    later.iter().map(|entry| fill(entry, defaults)).any(|fields| {
        let other = fields[0].and_then(|name| self::device(name).ok());
        fields[1].is_none() && other.is_some_and(|other| other.same(&device))
    })
}

fn put_line(writer: &mut Out<'_>, (device, fields): (Device<'_>, Fields<'_>)) -> Result<(), FstabError> {
    writer.put_all(&[device.prefix, device.name])?;
    // The mount point and the fields after it, each after a tab; the options end with the
    // marker. A loop, not one put_all of fifteen parts: each part costs code to place.
    for (index, field) in fields.iter().enumerate().skip(1) {
        writer.put_all(&[b"\t", field.unwrap_or_default()])?;
        if index == 3 {
            writer.put_all(&[b",", MARKER])?;
        }
    }
    writer.put(b"\n")?;
    Ok(())
}

/// The lines of `existing` that cloud-config did not write, without their newlines.
fn kept_lines(existing: &[u8]) -> impl Iterator<Item = &[u8]> {
    let text = existing.strip_suffix(b"\n").unwrap_or(existing);
    // An empty file has no lines; a file of one blank line keeps it.
    text.split(|&b| b == b'\n').filter(move |line| !existing.is_empty() && !marked(line))
}

/// Whether cloud-config wrote the line.
#[inline(never)]
fn marked(line: &[u8]) -> bool {
    line.windows(MARKER.len()).any(|window| window == MARKER)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry<'a>(given: &[Option<&'a [u8]>]) -> Entry<'a> {
        let mut fields = [None; 6];
        fields[..given.len()].copy_from_slice(given);
        Entry { fields }
    }

    fn run(existing: &[u8], entries: &[Entry<'_>]) -> (Option<Vec<u8>>, Vec<(usize, FstabError)>) {
        let mut out = [0u8; 2048];
        let mut skips = Vec::new();
        let n = merge(existing, entries, &DEFAULT_FIELDS, &mut out, |index, error| skips.push((index, error))).unwrap();
        (n.map(|n| out[..n].to_vec()), skips)
    }

    const ALPINE: &[u8] = b"UUID=1234-abcd\t/\text4\trw,relatime 0 1\n/dev/cdrom\t/media/cdrom\tiso9660\tnoauto,ro 0 0\n";

    #[test]
    fn appends_with_the_marker_then_stays() {
        let entries = [
            entry(&[Some(b"sdb"), Some(b"/data")]),
            entry(&[Some(b"/dev/vdc1"), Some(b"/srv"), Some(b"ext4"), Some(b"noatime"), Some(b"0"), Some(b"0")]),
            entry(&[Some(b"LABEL=logs"), Some(b"/var/log/x"), None, Some(b"defaults")]),
            entry(&[Some(b"nfs.example:/export"), Some(b"/mnt/nfs"), Some(b"nfs")]),
            entry(&[Some(b"/swapfile"), Some(b"none"), Some(b"swap"), Some(b"sw"), Some(b"0"), Some(b"0")]),
        ];
        let (once, skips) = run(ALPINE, &entries);
        let once = once.unwrap();
        let mut expected = ALPINE.to_vec();
        expected.extend_from_slice(
            b"/dev/sdb\t/data\tauto\tdefaults,nobootwait,comment=cloudconfig\t0\t2\n\
              /dev/vdc1\t/srv\text4\tnoatime,comment=cloudconfig\t0\t0\n\
              LABEL=logs\t/var/log/x\tauto\tdefaults,comment=cloudconfig\t0\t2\n\
              nfs.example:/export\t/mnt/nfs\tnfs\tdefaults,nobootwait,comment=cloudconfig\t0\t2\n\
              /swapfile\tnone\tswap\tsw,comment=cloudconfig\t0\t0\n",
        );
        assert_eq!(String::from_utf8_lossy(&once), String::from_utf8_lossy(&expected));
        assert!(skips.is_empty());
        assert_eq!(run(&once, &entries), (None, vec![]));
    }

    #[test]
    fn replaces_earlier_cloud_config_lines() {
        let existing = b"/dev/sda1 / ext4 defaults 0 1\n/dev/sdb\t/old\tauto\tdefaults,comment=cloudconfig\t0\t2\n# note\n";
        let (new, _) = run(existing, &[entry(&[Some(b"sdc"), Some(b"/new"), Some(b"xfs"), Some(b"defaults")])]);
        assert_eq!(new.unwrap(), b"/dev/sda1 / ext4 defaults 0 1\n# note\n/dev/sdc\t/new\txfs\tdefaults,comment=cloudconfig\t0\t2\n");
        // No entries: only the cloud-config lines go.
        assert_eq!(run(existing, &[]).0.unwrap(), b"/dev/sda1 / ext4 defaults 0 1\n# note\n");
        assert_eq!(run(b"", &[]), (None, vec![]));
        assert_eq!(run(b"a b\n", &[]), (None, vec![]));
        assert_eq!(run(b"a b", &[]).0.unwrap(), b"a b\n");
    }

    #[test]
    fn no_mount_point_removes_that_device() {
        let entries = [
            entry(&[Some(b"sdb"), Some(b"/a")]),
            entry(&[Some(b"sdc"), Some(b"/c")]),
            entry(&[Some(b"/dev/sdb")]),
            entry(&[Some(b"sdb"), Some(b"/b")]),
        ];
        let (new, skips) = run(b"", &entries);
        assert_eq!(
            new.unwrap(),
            b"/dev/sdc\t/c\tauto\tdefaults,nobootwait,comment=cloudconfig\t0\t2\n/dev/sdb\t/b\tauto\tdefaults,nobootwait,comment=cloudconfig\t0\t2\n"
        );
        assert!(skips.is_empty());
        // The other way round: `sdb` removes the line of `/dev/sdb`; `sdbx` does not.
        let entries = [entry(&[Some(b"/dev/sdb"), Some(b"/a")]), entry(&[Some(b"sdb")]), entry(&[Some(b"/dev/sdc"), Some(b"/c")]), entry(&[Some(b"sdcx")])];
        assert_eq!(run(b"", &entries).0.unwrap(), b"/dev/sdc\t/c\tauto\tdefaults,nobootwait,comment=cloudconfig\t0\t2\n");
    }

    #[test]
    fn device_names() {
        let named = |name: &[u8]| device(name).map(|d| [d.prefix, d.name].concat());
        for (given, written) in [
            (&b"sda"[..], &b"/dev/sda"[..]), (b"xvdb1", b"/dev/xvdb1"), (b"hdc", b"/dev/hdc"), (b"vdd12", b"/dev/vdd12"),
            (b"sr0", b"/dev/sr0"), (b"nvme0n1", b"nvme0n1"), (b"sdab", b"sdab"), (b"xxvda", b"xxvda"), (b"sr", b"sr"),
            (b"/dev/sdb", b"/dev/sdb"), (b"UUID=1-2", b"UUID=1-2"), (b"host:/x", b"host:/x"), (b"tmpfs", b"tmpfs"),
            (b"amis", b"amis"), (b"rootfs", b"rootfs"), (b"swap root", b"swap root"),
        ] {
            assert_eq!(named(given), Ok(written.to_vec()), "{}", String::from_utf8_lossy(given));
        }
        for meta in [&b"ephemeral0"[..], b"ephemeral", b"ephemeral1.2", b"ebs3", b"swap", b"root", b"ami", b"swap.1"] {
            assert_eq!(named(meta), Err(FstabError::MetadataDevice));
        }
    }

    #[test]
    fn skipped_entries_are_reported() {
        let entries = [
            entry(&[Some(b"ephemeral0"), Some(b"/mnt")]),
            entry(&[Some(b"sda1"), Some(b"/")]),
            entry(&[None, Some(b"/x")]),
            entry(&[Some(b"sdb"), Some(b"data")]),
            entry(&[Some(b"sdb"), Some(b"/my data")]),
            entry(&[Some(b"sdb"), Some(b"/d"), Some(b"")]),
            entry(&[Some(b"#sdb"), Some(b"/d")]),
            entry(&[Some(b"sdb"), Some(b"/d"), None, None, Some(b"x")]),
            entry(&[Some(b"sdb"), Some(b"none"), Some(b"ext4")]),
            entry(&[Some(b"sdb"), Some(b"/ok\x7f")]),
            entry(&[Some(b"sdc"), Some(b"/ok")]),
        ];
        let (new, skips) = run(b"/dev/sda1 / ext4 defaults 0 1\n", &entries);
        assert_eq!(new.unwrap(), b"/dev/sda1 / ext4 defaults 0 1\n/dev/sdc\t/ok\tauto\tdefaults,nobootwait,comment=cloudconfig\t0\t2\n");
        assert_eq!(
            skips,
            [
                (0, FstabError::MetadataDevice),
                (1, FstabError::AlreadyInFstab),
                (2, FstabError::MissingDevice),
                (3, FstabError::RelativeMountPoint),
                (4, FstabError::BadField { field: 1 }),
                (5, FstabError::BadField { field: 2 }),
                (6, FstabError::BadField { field: 0 }),
                (7, FstabError::NotANumber { field: 4 }),
                (8, FstabError::RelativeMountPoint),
                (9, FstabError::BadField { field: 1 }),
            ]
        );
    }

    #[test]
    fn defaults_are_the_callers() {
        let mut out = [0u8; 256];
        let entries = [entry(&[Some(b"vdb"), Some(b"/srv")])];
        let n = merge(b"", &entries, &DEFAULT_FIELDS_SYSTEMD, &mut out, |_, _| {}).unwrap().unwrap();
        assert_eq!(
            &out[..n],
            b"/dev/vdb\t/srv\tauto\tdefaults,nofail,x-systemd.requires=cloud-init.service,_netdev,comment=cloudconfig\t0\t2\n"
        );
        // A default mount point (cloud-init allows it) applies to entries that name none.
        let defaults: Fields<'_> = [None, Some(b"/media"), Some(b"vfat"), Some(b"ro"), Some(b"0"), Some(b"0")];
        let n = merge(b"", &[entry(&[Some(b"sr0")])], &defaults, &mut out, |_, _| {}).unwrap().unwrap();
        assert_eq!(&out[..n], b"/dev/sr0\t/media\tvfat\tro,comment=cloudconfig\t0\t0\n");
    }

    #[test]
    fn limit_at_the_boundary() {
        let entries = [entry(&[Some(b"sdb"), Some(b"/d")])];
        let line_len = b"/dev/sdb\t/d\tauto\tdefaults,nobootwait,comment=cloudconfig\t0\t2\n".len();
        let mut exact = vec![0u8; line_len];
        assert_eq!(merge(b"", &entries, &DEFAULT_FIELDS, &mut exact, |_, _| {}), Ok(Some(line_len)));
        let mut short = vec![0u8; line_len - 1];
        assert_eq!(
            merge(b"", &entries, &DEFAULT_FIELDS, &mut short, |_, _| {}),
            Err(FstabError::TooLarge { limit: line_len as u32 - 1 })
        );
    }

    #[test]
    fn a_blank_line_left_alone_stays() {
        // Found by garbage_never_panics' rerun check: the blank line kept from this file
        // was dropped by the next run, which rewrote /etc/fstab for nothing.
        let existing = b"\n/ephemeral0 /x auto defaults,comment=cloudconfig 0 2\n";
        let mut out = [0u8; 256];
        assert_eq!(merge(existing, &[], &DEFAULT_FIELDS, &mut out, |_, _| {}), Ok(Some(1)));
        assert_eq!(merge(b"\n", &[], &DEFAULT_FIELDS, &mut out, |_, _| {}), Ok(None));
        assert_eq!(merge(b"", &[], &DEFAULT_FIELDS, &mut out, |_, _| {}), Ok(None));
    }

    #[test]
    fn garbage_never_panics() {
        let mut garbage = crate::fuzz::Garbage::new(7);
        let mut out = [0u8; 1024];
        let pieces: &[&[u8]] = &[b"sdb", b"/", b" ", b"\t", b"\n", b"comment=cloudconfig", b"#", b":", b".", b"ephemeral0", b"0"];
        for _ in 0..300 {
            let existing = garbage.text(pieces, 40);
            let a = garbage.text(pieces, 4);
            let b = garbage.text(pieces, 4);
            let entries = [entry(&[Some(&a), Some(&b)]), entry(&[Some(&b), None, Some(&a)]), entry(&[Some(&a)])];
            let limit = garbage.below(out.len());
            crate::fuzz::seed_pair("fstab", &[&a[..], b"|", &b].concat(), &existing);
            if let Ok(merged) = merge(&existing, &entries, &DEFAULT_FIELDS, &mut out[..limit], |_, _| {}) {
                // A rerun over what was written writes nothing.
                let written = merged.map_or(existing.clone(), |len| out[..len].to_vec());
                assert!(merged.is_none_or(|len| len <= limit));
                assert_eq!(merge(&written, &entries, &DEFAULT_FIELDS, &mut [0u8; 2048], |_, _| {}), Ok(None));
            }
        }
    }
}
