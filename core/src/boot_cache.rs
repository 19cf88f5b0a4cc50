//! What one boot's phases share so that only the first asks the metadata service: the
//! values it fetched for every later phase, kept under /run for this boot only (keyed to
//! the kernel's boot id), and the DMI rules that tell a later boot it is still the same
//! instance without asking at all.
//!
//! The kept file is text: a header line naming the format and the boot, then one record
//! per value, `KEY LENGTH\n` and the value's bytes and a newline, or `KEY -\n` for a value
//! the service does not have. A file of another boot, or one that does not parse, is
//! ignored whole: the phase asks the service as if there were none.

use crate::config::Cloud;
use crate::features::{Built, Feature};
use crate::host::directory::Directory;
use crate::host::files::Files;
use crate::out::{Full, Out};
use crate::provider::metadata::{Metadata, METADATA_SIZE};
use crate::provider::Item;
use crate::state_files::MARKER;
use crate::text::eq_ignoring_case;

const HEADER: &[u8] = b"wisp-metadata 1 boot ";
/// Longest boot id kept (the kernel's is a 36-byte UUID).
pub const BOOT_ID_LIMIT: usize = 64;

/// The kept values: `values` holds `(item, value)` for each fetched item (`None`: absent).
pub fn encode<'v>(boot_id: &[u8], values: impl Iterator<Item = (Item, Option<&'v [u8]>)>, out: &mut Out<'_>) -> Result<(), Full> {
    out.put_all(&[HEADER, boot_id, b"\n"])?;
    for (item, value) in values {
        out.put_all(&[item.key().as_bytes(), b" "])?;
        match value {
            Some(value) => {
                out.put_decimal(value.len() as u64)?;
                out.put_all(&[b"\n", value, b"\n"])?;
            }
            None => out.put(b"-\n")?,
        }
    }
    Ok(())
}

/// Kept values: each item with its value (`None`: the service has none).
pub type Values<'d> = heapless::Vec<(Item, Option<&'d [u8]>), 5>;

/// The values kept in `data`, if it was written during the boot `boot_id` and parses
/// whole; `None` otherwise.
pub fn decode<'d>(data: &'d [u8], boot_id: &[u8]) -> Option<Values<'d>> {
    let boot_id = boot_id.trim_ascii();
    if boot_id.is_empty() || boot_id.len() > BOOT_ID_LIMIT {
        return None;
    }
    let rest = data.strip_prefix(HEADER)?.strip_prefix(boot_id)?.strip_prefix(b"\n")?;
    let mut values = heapless::Vec::new();
    let mut rest = rest;
    while !rest.is_empty() {
        let line_end = rest.iter().position(|&b| b == b'\n')?;
        let (key, length) = split_once(&rest[..line_end], b' ')?;
        let item = Item::from_key(key)?;
        rest = &rest[line_end + 1..];
        let value = match length {
            b"-" => None,
            digits => {
                let len = usize::try_from(crate::text::decimal(digits, 10)?).ok()?;
                let value = rest.get(..len)?;
                rest = rest.get(len..)?.strip_prefix(b"\n")?;
                Some(value)
            }
        };
        values.push((item, value)).ok()?;
    }
    Some(values)
}

fn split_once(line: &[u8], separator: u8) -> Option<(&[u8], &[u8])> {
    let at = line.iter().position(|&b| b == separator)?;
    Some((&line[..at], &line[at + 1..]))
}

/// The kernel's id of this boot.
pub const BOOT_ID: &[u8] = b"/proc/sys/kernel/random/boot_id";
/// Where the values are kept (a tmpfs: this boot only), and the file, mode 0600.
pub const KEPT_DIR: &[u8] = b"/run/wisp";
pub const KEPT_FILE: &[u8] = b"metadata";
pub const KEPT_PATH: &[u8] = b"/run/wisp/metadata";
/// Room for every value and its record line: the most a kept file holds.
pub const KEPT_LIMIT: usize = METADATA_SIZE + 512;

/// Fills `metadata` with what an earlier phase of this boot kept (read into `room`,
/// `KEPT_LIMIT` bytes); false when nothing was kept for this boot, or it cannot be read.
#[inline(never)]
pub fn load(host: &mut impl Files, room: &mut [u8], metadata: &mut Metadata<'_>) -> bool {
    let mut boot_id = [0u8; BOOT_ID_LIMIT];
    let Some(boot_id) = read(host, BOOT_ID, &mut boot_id) else { return false };
    let Some(kept) = read(host, KEPT_PATH, room) else { return false };
    let Some(values) = decode(kept, boot_id) else { return false };
    for (item, value) in values {
        match value {
            // A kept value is one that fitted its buffer when fetched.
            Some(value) => drop(metadata.set(item, value)),
            None => metadata.set_len(item, None),
        }
    }
    true
}

/// What `metadata` holds, to keep for the later phases of this boot, encoded in `room`
/// (`KEPT_LIMIT` bytes); nothing for a boot without a boot id (a scratch root).
#[inline(never)]
pub fn kept<'r>(host: &mut impl Files, room: &'r mut [u8], metadata: &Metadata<'_>) -> Option<&'r [u8]> {
    let mut boot_id = [0u8; BOOT_ID_LIMIT];
    let boot_id = read(host, BOOT_ID, &mut boot_id)?;
    let fetched = Item::ALL.into_iter().filter(|&item| metadata.is_fetched(item)).map(|item| (item, metadata.get(item)));
    let mut out = Out::new(room);
    encode(boot_id.trim_ascii(), fetched, &mut out).ok()?;
    let len = out.len();
    Some(&room[..len])
}

/// A file's contents, if it can be read whole into `buf`.
#[inline(never)]
fn read<'b>(host: &mut impl Files, path: &[u8], buf: &'b mut [u8]) -> Option<&'b [u8]> {
    match host.read(path, buf) {
        Ok(Some(len)) => Some(&buf[..len]),
        _ => None,
    }
}

/// The DMI values that name the instance on some platforms, each as read (an unreadable
/// file is empty).
#[derive(Clone, Copy, Debug, Default)]
pub struct InstanceDmi<'a> {
    /// AWS Nitro's `board_asset_tag`: the instance-id itself.
    pub board_asset_tag: &'a [u8],
    /// Azure's `product_uuid`: the vmId (its first three fields byte-swapped on some
    /// generations, which cloud-init also accepts). On AWS, the instance's own UUID.
    pub product_uuid: &'a [u8],
    /// Xen's `/sys/hypervisor/uuid`: on AWS's Xen PV instances, which have no DMI, the
    /// instance's own UUID.
    pub hypervisor_uuid: &'a [u8],
}

/// The files that name the instance on some platforms: `board_asset_tag`,
/// `product_uuid`, the hypervisor's UUID.
pub const INSTANCE_DMI_FILES: [&[u8]; 3] =
    [b"/sys/class/dmi/id/board_asset_tag", b"/sys/class/dmi/id/product_uuid", b"/sys/hypervisor/uuid"];
/// Room for each of `INSTANCE_DMI_FILES`: each holds one short line.
pub type DmiRoom = [[u8; 128]; 3];

impl<'a> InstanceDmi<'a> {
    /// The DMI values as the host has them; a missing or unreadable file (product_uuid
    /// is root-only) counts as empty.
    #[inline(never)]
    pub fn read(host: &mut impl Files, room: &'a mut DmiRoom) -> InstanceDmi<'a> {
        let mut lens = [0; 3];
        for ((path, buf), len) in INSTANCE_DMI_FILES.iter().zip(room.iter_mut()).zip(lens.iter_mut()) {
            *len = host.read(path, buf).ok().flatten().unwrap_or(0);
        }
        let [tag, uuid, hypervisor] = room;
        InstanceDmi { board_asset_tag: &tag[..lens[0]], product_uuid: &uuid[..lens[1]], hypervisor_uuid: &hypervisor[..lens[2]] }
    }
}

/// Whether the host's DMI names this instance as `saved_id`, or is the one the completion
/// marker in `var` remembers (see `same_instance`). A marker that cannot be read, or is
/// longer than a UUID, remembers nothing. `BUILT` is the build's features
/// (`Built::bits`, see `same_instance`).
#[inline(never)]
pub fn dmi_same_instance<const BUILT: u32>(host: &mut impl Files, var: &mut impl Directory, cloud: Cloud, saved_id: &[u8]) -> Option<bool> {
    let mut room = [[0u8; 128]; 3];
    let mut marker = [0u8; 64];
    let remembered = match var.read(MARKER, &mut marker) {
        Ok(Some(len)) => &marker[..len],
        _ => b"",
    };
    same_instance(Built::from_bits(BUILT), cloud, &InstanceDmi::read(host, &mut room), saved_id, remembered)
}

/// What the completion marker remembers of this machine: its EC2 UUID (AWS gives each
/// instance its own, starting "ec2" in either byte order, in DMI's `product_uuid` or,
/// on Xen PV, the hypervisor's), or nothing.
///
/// Only that form is remembered: other platforms' UUIDs are not known to name one
/// instance alone. Some hypervisors give every guest the same one (all zeros, all ones,
/// `03000200-0400-0500-0006-000700080009`), and a cloned VM keeps its source's; none of
/// those starts with "ec2".
pub fn instance_uuid<'a>(dmi: &InstanceDmi<'a>) -> Option<&'a [u8]> {
    [dmi.product_uuid, dmi.hypervisor_uuid].into_iter().map(<[u8]>::trim_ascii).find(|uuid| crate::detect::is_ec2_uuid(uuid))
}

/// Whether the DMI says this is the instance `saved_id` names: `Some(true)` the same,
/// `Some(false)` another one, `None` when it cannot tell (ask the metadata service).
/// `remembered` is what the completion marker holds (`instance_uuid` when it was set).
///
/// On AWS, a `board_asset_tag` that is an instance-id (Nitro) decides; elsewhere the
/// EC2 UUID decides when it is the one remembered, as only the instance whose bootstrap
/// completed has it: a captured image started as a new instance has another. A UUID that
/// differs says nothing (the kernel may print it another way after an upgrade): the
/// service is asked. The run's cloud is one the build has (`built`): a build without
/// Azure keeps no code for Azure's UUID.
pub fn same_instance(built: Built, cloud: Cloud, dmi: &InstanceDmi<'_>, saved_id: &[u8], remembered: &[u8]) -> Option<bool> {
    let saved_id = saved_id.trim_ascii();
    match cloud {
        Cloud::Aws if built.has(Feature::Aws) => {
            let tag = dmi.board_asset_tag.trim_ascii();
            let is_instance_id = tag.len() > 2 && tag.starts_with(b"i-") && tag[2..].iter().all(u8::is_ascii_hexdigit);
            if is_instance_id {
                return Some(tag == saved_id);
            }
            // Kernels before 4.15 print product_uuid in capitals, later ones not.
            instance_uuid(dmi).filter(|uuid| eq_ignoring_case(uuid, remembered.trim_ascii())).map(|_| true)
        }
        Cloud::Azure if built.has(Feature::Azure) => {
            let uuid = dmi.product_uuid.trim_ascii();
            let matches = |at: fn(usize) -> usize| {
                saved_id.len() == uuid.len() && saved_id.iter().enumerate().all(|(i, b)| b.eq_ignore_ascii_case(&uuid[at(i)]))
            };
            is_uuid(uuid).then(|| matches(|i| i) || matches(|i| *BYTE_SWAPPED.get(i).unwrap_or(&i)))
        }
        _ => None,
    }
}

/// Where each of a UUID's first 18 characters comes from when its first three fields are
/// little-endian: bytes (pairs of hex digits) reversed within each field.
const BYTE_SWAPPED: [usize; 18] = [6, 7, 4, 5, 2, 3, 0, 1, 8, 11, 12, 9, 10, 13, 16, 17, 14, 15];

fn is_uuid(text: &[u8]) -> bool {
    text.len() == 36 && text.iter().enumerate().all(|(i, b)| if matches!(i, 8 | 13 | 18 | 23) { *b == b'-' } else { b.is_ascii_hexdigit() })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A build with every cloud.
    const EVERY_CLOUD: Built = Built::from_bits(u32::MAX);

    const BOOT: &[u8] = b"6c2d6f1e-6a1b-4b8e-9d62-3f7e9d0a1b2c";

    fn encoded(values: &[(Item, Option<&[u8]>)]) -> ([u8; 512], usize) {
        let mut buf = [0u8; 512];
        let mut out = Out::new(&mut buf);
        encode(BOOT, values.iter().copied(), &mut out).unwrap();
        let len = out.len();
        (buf, len)
    }

    #[test]
    fn round_trip() {
        let values: [(Item, Option<&[u8]>); 3] =
            [(Item::InstanceId, Some(b"i-0123")), (Item::UserData, Some(b"#!/bin/sh\n\necho 1 2\n")), (Item::Hostname, None)];
        let (buf, len) = encoded(&values);
        assert!(buf[..len].starts_with(b"wisp-metadata 1 boot 6c2d6f1e-6a1b-4b8e-9d62-3f7e9d0a1b2c\n@instance-id 6\ni-0123\n"));
        let decoded = decode(&buf[..len], BOOT).unwrap();
        assert_eq!(&decoded[..], &values[..]);
        // The kernel's file ends in a newline.
        assert_eq!(decode(&buf[..len], b"6c2d6f1e-6a1b-4b8e-9d62-3f7e9d0a1b2c\n").unwrap().len(), 3);
    }

    #[test]
    fn another_boot_or_damage_is_ignored() {
        let (buf, len) = encoded(&[(Item::InstanceId, Some(b"i-0123")), (Item::SshKeys, Some(b"ssh-ed25519 AAAA\n"))]);
        assert_eq!(decode(&buf[..len], b"00000000-6a1b-4b8e-9d62-3f7e9d0a1b2c"), None);
        assert_eq!(decode(&buf[..len], b""), None);
        for cut in 0..len {
            // A cut file is refused, except where the cut falls between records.
            let partial = decode(&buf[..cut], BOOT);
            let at_boundary = cut == 58 || cut == 80;
            assert_eq!(partial.is_some(), at_boundary, "cut at {cut}");
        }
        assert_eq!(decode(b"wisp-metadata 1 boot 6c2d6f1e-6a1b-4b8e-9d62-3f7e9d0a1b2c\n@nothing 1\nx\n", BOOT), None);
        let six = "wisp-metadata 1 boot 6c2d6f1e-6a1b-4b8e-9d62-3f7e9d0a1b2c\n@hostname -\n@hostname -\n@hostname -\n@hostname -\n@hostname -\n@hostname -\n";
        assert_eq!(decode(six.as_bytes(), BOOT), None);
        assert_eq!(decode(b"wisp-metadata 1 boot 6c2d6f1e-6a1b-4b8e-9d62-3f7e9d0a1b2c\n@hostname 99\nx\n", BOOT), None);
    }

    #[test]
    fn aws_nitro_names_the_instance_in_its_board_asset_tag() {
        let nitro = InstanceDmi { board_asset_tag: b"i-0123456789abcdef0\n", ..InstanceDmi::default() };
        assert_eq!(same_instance(EVERY_CLOUD, Cloud::Aws, &nitro, b"i-0123456789abcdef0\n", b""), Some(true));
        assert_eq!(same_instance(EVERY_CLOUD, Cloud::Aws, &nitro, b"i-0fedcba9876543210", b""), Some(false));
        // Xen instances have no such tag, and other values are not instance-ids.
        assert_eq!(same_instance(EVERY_CLOUD, Cloud::Aws, &InstanceDmi::default(), b"i-0123456789abcdef0", b""), None);
        let other = InstanceDmi { board_asset_tag: b"Not Specified", ..InstanceDmi::default() };
        assert_eq!(same_instance(EVERY_CLOUD, Cloud::Aws, &other, b"i-0123456789abcdef0", b""), None);
        assert_eq!(same_instance(EVERY_CLOUD, Cloud::Gcp, &nitro, b"i-0123456789abcdef0", b""), None);
    }

    const XEN_UUID: &[u8] = b"EC2E1916-9099-7CAF-FD21-012345ABCDEF";

    #[test]
    fn aws_xen_is_the_same_instance_when_its_uuid_is_the_one_remembered() {
        let xen = InstanceDmi { product_uuid: b"EC2E1916-9099-7CAF-FD21-012345ABCDEF\n", ..InstanceDmi::default() };
        assert_eq!(instance_uuid(&xen), Some(XEN_UUID));
        assert_eq!(same_instance(EVERY_CLOUD, Cloud::Aws, &xen, b"i-0123456789abcdef0", b"EC2E1916-9099-7CAF-FD21-012345ABCDEF\n"), Some(true));
        // Another kernel prints it in small letters.
        assert_eq!(same_instance(EVERY_CLOUD, Cloud::Aws, &xen, b"i-0123456789abcdef0", b"ec2e1916-9099-7caf-fd21-012345abcdef"), Some(true));
        // Little-endian firmware's form is this instance's too.
        let swapped = InstanceDmi { product_uuid: b"45E12AEC-DCD1-B213-94ED-012345ABCDEF", ..InstanceDmi::default() };
        assert_eq!(same_instance(EVERY_CLOUD, Cloud::Aws, &swapped, b"i-0", b"45e12aec-dcd1-b213-94ed-012345abcdef"), Some(true));
        // Xen PV has no DMI: the hypervisor's UUID.
        let pv = InstanceDmi { hypervisor_uuid: b"ec2e1916-9099-7caf-fd21-012345abcdef\n", ..InstanceDmi::default() };
        assert_eq!(same_instance(EVERY_CLOUD, Cloud::Aws, &pv, b"i-0", XEN_UUID), Some(true));
    }

    #[test]
    fn aws_asks_when_the_uuid_cannot_vouch_for_the_instance() {
        let xen = InstanceDmi { product_uuid: XEN_UUID, ..InstanceDmi::default() };
        // A captured image started as a new instance: another UUID. Asking tells.
        assert_eq!(same_instance(EVERY_CLOUD, Cloud::Aws, &xen, b"i-0", b"EC2AAAAA-9099-7CAF-FD21-012345ABCDEF"), None);
        // A marker set before UUIDs were remembered, or cut by a crash.
        assert_eq!(same_instance(EVERY_CLOUD, Cloud::Aws, &xen, b"i-0", b""), None);
        assert_eq!(same_instance(EVERY_CLOUD, Cloud::Aws, &xen, b"i-0", b"EC2E1916-9099"), None);
        // UUIDs that are not EC2's are never remembered nor trusted, even when equal:
        // hypervisors that give every guest the same one, or a bogus one.
        for shared in [
            &b"00000000-0000-0000-0000-000000000000"[..],
            b"FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF",
            b"03000200-0400-0500-0006-000700080009",
            b"5a3f0c2e-1111-2222-3333-444455556666",
        ] {
            let dmi = InstanceDmi { product_uuid: shared, hypervisor_uuid: shared, ..InstanceDmi::default() };
            assert_eq!(instance_uuid(&dmi), None);
            assert_eq!(same_instance(EVERY_CLOUD, Cloud::Aws, &dmi, b"i-0", shared), None);
        }
        // "ec2" and something else is not a UUID.
        let short = InstanceDmi { product_uuid: b"ec2", ..InstanceDmi::default() };
        assert_eq!(same_instance(EVERY_CLOUD, Cloud::Aws, &short, b"i-0", b"ec2"), None);
        // Only on AWS, whose UUIDs these are.
        assert_eq!(same_instance(EVERY_CLOUD, Cloud::Gcp, &xen, b"i-0", XEN_UUID), None);
        assert_eq!(same_instance(EVERY_CLOUD, Cloud::Oci, &xen, b"i-0", XEN_UUID), None);
        // Nitro's instance-id tag decides before the UUID: another instance-id is another
        // instance, whatever the marker remembers.
        let nitro = InstanceDmi { board_asset_tag: b"i-0fedcba9876543210", product_uuid: XEN_UUID, ..InstanceDmi::default() };
        assert_eq!(same_instance(EVERY_CLOUD, Cloud::Aws, &nitro, b"i-0123456789abcdef0", XEN_UUID), Some(false));
    }

    #[test]
    fn a_cloud_the_build_lacks_is_never_the_one_asked_about() {
        // A build without Azure keeps no code for its UUID; one without AWS none for its tag.
        let aws_only = Built::of(&[(Feature::Aws, true)]);
        let azure_only = Built::of(&[(Feature::Azure, true)]);
        let azure = InstanceDmi { product_uuid: b"D0DF4C54-4ECB-4A4B-9954-5BDF3ED5C3B8", ..InstanceDmi::default() };
        let vm_id = b"d0df4c54-4ecb-4a4b-9954-5bdf3ed5c3b8";
        assert_eq!(same_instance(azure_only, Cloud::Azure, &azure, vm_id, b""), Some(true));
        assert_eq!(same_instance(aws_only, Cloud::Azure, &azure, vm_id, b""), None);
        let nitro = InstanceDmi { board_asset_tag: b"i-0123456789abcdef0", ..InstanceDmi::default() };
        assert_eq!(same_instance(aws_only, Cloud::Aws, &nitro, b"i-0123456789abcdef0", b""), Some(true));
        assert_eq!(same_instance(azure_only, Cloud::Aws, &nitro, b"i-0123456789abcdef0", b""), None);
    }

    #[test]
    fn azure_names_the_vm_in_its_product_uuid_either_byte_order() {
        let vm_id = b"d0df4c54-4ecb-4a4b-9954-5bdf3ed5c3b8";
        let straight = InstanceDmi { product_uuid: b"D0DF4C54-4ECB-4A4B-9954-5BDF3ED5C3B8\n", ..InstanceDmi::default() };
        assert_eq!(same_instance(EVERY_CLOUD, Cloud::Azure, &straight, vm_id, b""), Some(true));
        let swapped = InstanceDmi { product_uuid: b"544cdfd0-cb4e-4b4a-9954-5bdf3ed5c3b8", ..InstanceDmi::default() };
        assert_eq!(same_instance(EVERY_CLOUD, Cloud::Azure, &swapped, vm_id, b""), Some(true));
        assert_eq!(same_instance(EVERY_CLOUD, Cloud::Azure, &straight, b"11111111-4ecb-4a4b-9954-5bdf3ed5c3b8", b""), Some(false));
        let garbage = InstanceDmi { product_uuid: b"not a uuid", ..InstanceDmi::default() };
        assert_eq!(same_instance(EVERY_CLOUD, Cloud::Azure, &garbage, vm_id, b""), None);
    }

    #[test]
    fn what_one_phase_keeps_the_next_phase_of_the_boot_loads() {
        use crate::host::files::Files;
        use crate::host::memory::MemoryHost;
        let mut host = MemoryHost::new().with_file("/proc/sys/kernel/random/boot_id", b"6c2d6f1e-6a1b-4b8e-9d62-3f7e9d0a1b2c\n");
        let mut space = std::vec![0u8; METADATA_SIZE];
        let mut fetched = Metadata::new(&mut space);
        fetched.set(Item::InstanceId, b"i-0123").unwrap();
        fetched.set_len(Item::Hostname, None);
        let mut room = std::vec![0u8; KEPT_LIMIT];
        let file = kept(&mut host, &mut room, &fetched).unwrap().to_vec();
        host.write(KEPT_PATH, &file, 0o600, None).unwrap();
        let mut space = std::vec![0u8; METADATA_SIZE];
        let mut loaded = Metadata::new(&mut space);
        assert!(load(&mut host, &mut room, &mut loaded));
        assert_eq!(loaded.get(Item::InstanceId), Some(&b"i-0123"[..]));
        assert!(loaded.is_fetched(Item::Hostname) && loaded.get(Item::Hostname).is_none());
        assert!(!loaded.is_fetched(Item::SshKeys));
        // Another boot (a reboot) finds nothing kept for it; a scratch root keeps nothing.
        host.write(BOOT_ID, b"00000000-6a1b-4b8e-9d62-3f7e9d0a1b2c\n", 0o444, None).unwrap();
        assert!(!load(&mut host, &mut room, &mut Metadata::new(&mut std::vec![0u8; METADATA_SIZE])));
        assert_eq!(kept(&mut MemoryHost::new(), &mut room, &fetched), None);
        assert!(!load(&mut MemoryHost::new(), &mut room, &mut Metadata::new(&mut std::vec![0u8; METADATA_SIZE])));
    }

}
