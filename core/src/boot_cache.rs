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
use crate::out::{Full, Out};
use crate::provider::Item;

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

/// The DMI values that name the instance on some platforms.
#[derive(Clone, Copy, Debug, Default)]
pub struct InstanceDmi<'a> {
    /// AWS Nitro's `board_asset_tag`: the instance-id itself.
    pub board_asset_tag: &'a [u8],
    /// Azure's `product_uuid`: the vmId (its first three fields byte-swapped on some
    /// generations, which cloud-init also accepts).
    pub product_uuid: &'a [u8],
}

/// Whether the DMI says this is the instance `saved_id` names: `Some(true)` the same,
/// `Some(false)` another one, `None` when this platform's DMI does not name its instance
/// (ask the metadata service).
pub fn same_instance(cloud: Cloud, dmi: &InstanceDmi<'_>, saved_id: &[u8]) -> Option<bool> {
    let saved_id = saved_id.trim_ascii();
    match cloud {
        Cloud::Aws => {
            let tag = dmi.board_asset_tag.trim_ascii();
            let is_instance_id = tag.len() > 2 && tag.starts_with(b"i-") && tag[2..].iter().all(u8::is_ascii_hexdigit);
            is_instance_id.then(|| tag == saved_id)
        }
        Cloud::Azure => {
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
        assert_eq!(same_instance(Cloud::Aws, &nitro, b"i-0123456789abcdef0\n"), Some(true));
        assert_eq!(same_instance(Cloud::Aws, &nitro, b"i-0fedcba9876543210"), Some(false));
        // Xen instances have no such tag, and other values are not instance-ids.
        assert_eq!(same_instance(Cloud::Aws, &InstanceDmi::default(), b"i-0123456789abcdef0"), None);
        let other = InstanceDmi { board_asset_tag: b"Not Specified", ..InstanceDmi::default() };
        assert_eq!(same_instance(Cloud::Aws, &other, b"i-0123456789abcdef0"), None);
        assert_eq!(same_instance(Cloud::Gcp, &nitro, b"i-0123456789abcdef0"), None);
    }

    #[test]
    fn azure_names_the_vm_in_its_product_uuid_either_byte_order() {
        let vm_id = b"d0df4c54-4ecb-4a4b-9954-5bdf3ed5c3b8";
        let straight = InstanceDmi { product_uuid: b"D0DF4C54-4ECB-4A4B-9954-5BDF3ED5C3B8\n", ..InstanceDmi::default() };
        assert_eq!(same_instance(Cloud::Azure, &straight, vm_id), Some(true));
        let swapped = InstanceDmi { product_uuid: b"544cdfd0-cb4e-4b4a-9954-5bdf3ed5c3b8", ..InstanceDmi::default() };
        assert_eq!(same_instance(Cloud::Azure, &swapped, vm_id), Some(true));
        assert_eq!(same_instance(Cloud::Azure, &straight, b"11111111-4ecb-4a4b-9954-5bdf3ed5c3b8"), Some(false));
        let garbage = InstanceDmi { product_uuid: b"not a uuid", ..InstanceDmi::default() };
        assert_eq!(same_instance(Cloud::Azure, &garbage, vm_id), None);
    }
}
