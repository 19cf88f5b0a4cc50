//! What tiny-cloud's `save_userdata` action keeps in TINY_CLOUD_VAR: the user-data in the
//! form tiny-cloud saves it (gunzipped), and, for the clouds whose metadata document holds
//! the instance's network facts, that document beside it (`meta-data`).

use crate::config::Cloud;
use crate::gzip;
use crate::host::messages::Messages;
use crate::host::room::Room;
use crate::host::saved_copies::SavedCopies;
use crate::provider::hetzner;
use crate::provider::metadata::ParseRoom;
use crate::state_files::USER_DATA;
use crate::system_files::call_failed;
use crate::text::{Decimal, Plain};

/// Longest network-config kept.
pub const NETWORK_CONFIG_LIMIT: usize = 16 * 1024;

/// The user-data to save from `raw`, as received: gunzipped into the room `reserve` gives
/// (no more than the deflate ratio allows of `raw`, nor `limit`) when it is gzip. gzip'd
/// user-data that does not decompress is saved as received, and so is all of it in a
/// build that does not `gunzip` (without `userdata`): the main phase's user-data actions
/// then say why they apply nothing, after the instance has its user and keys.
pub fn saved_form<'r, E>(raw: &'r [u8], gunzip: bool, limit: usize, reserve: impl FnOnce(usize) -> Result<&'r mut [u8], E>) -> Result<&'r [u8], E> {
    if !gunzip || !gzip::is_gzip(raw) {
        return Ok(raw);
    }
    let out = reserve(raw.len().saturating_mul(gzip::DEFLATE_RATIO_LIMIT).min(limit))?;
    Ok(match gzip::decompress(raw, out) {
        Ok(len) => &out[..len],
        Err(_) => raw,
    })
}

/// Whether `cloud`'s metadata document is kept as `meta-data`: the clouds whose network
/// facts are in it, for the network configuration.
pub const fn keeps_metadata_document(cloud: Cloud) -> bool {
    matches!(cloud, Cloud::Hetzner | Cloud::Digitalocean | Cloud::Scaleway | Cloud::Incus | Cloud::Vultr)
}

/// The user-data saved: its length, and `note`, whether it was rewritten ("saved") or
/// there already as it is ("unchanged").
pub struct Saved {
    pub len: usize,
    pub note: &'static str,
}

impl Saved {
    /// The action's note: `saved (N bytes, P parts)`, with how the user-data decoded (its
    /// parts' count, `None` for none, or why it does not) and `facts`, the network facts'
    /// words.
    pub fn said<H: Messages>(&self, host: &H, decoded: Result<Option<usize>, H::Text>, facts: &str) -> H::Text {
        let decoded = match decoded {
            Ok(Some(parts)) => host.text(format_args!(", {} parts)", Decimal(parts as u64))),
            Ok(None) => host.text(format_args!(")")),
            Err(e) => host.text(format_args!("); it does not decode: {e}")),
        };
        host.text(format_args!("{note} ({len} bytes{decoded}{facts}", len = Decimal(self.len as u64), note = Plain(self.note), facts = Plain(facts)))
    }
}

/// `raw` saved as `user-data` in `var` (TINY_CLOUD_VAR), mode 0600, in `saved_form` (its
/// room kept by `host`), unless it is there already as it is; empty when the instance has
/// none, as tiny-cloud leaves it.
pub fn save<H: Room, V: SavedCopies>(host: &mut H, var: &mut V, raw: &[u8], gunzip: bool, limit: usize) -> Result<Saved, H::Text> {
    let data = saved_form(raw, gunzip, limit, |len| host.keep(len, "gunzipped user-data"))?;
    if var.file_mode(USER_DATA) == Some(0o600) && var.has_contents(USER_DATA, data) {
        return Ok(Saved { len: data.len(), note: "unchanged" });
    }
    // Made durable by the sync before the completion marker: until then each run saves
    // it again.
    var.write_volatile(USER_DATA, data, 0o600).map_err(|e| call_failed(host, b"cannot save user-data", e))?;
    Ok(Saved { len: data.len(), note: "saved" })
}

/// For the clouds that keep their metadata `document` (`keeps_metadata_document`): it, as
/// `meta-data`, and the network configuration it gives in cloud-init's format as
/// `network-config` (Hetzner's inside the document; Incus's `fetch_incus`ed), each 0600
/// for the network configuration and rewritten only when changed. `HETZNER` and `INCUS`:
/// whether the build has that cloud. The note's words for what was kept.
pub fn save_network_facts<const HETZNER: bool, const INCUS: bool, H: Messages, V: SavedCopies>(
    host: &H,
    var: &mut V,
    cloud: Cloud,
    document: Option<&[u8]>,
    room: &mut ParseRoom,
    fetch_incus: impl for<'b> FnOnce(&'b mut [u8]) -> Result<Option<&'b [u8]>, H::Text>,
) -> Result<&'static str, H::Text> {
    if !keeps_metadata_document(cloud) {
        return Ok("");
    }
    let Some(document) = document else { return Ok("") };
    if !(HETZNER || INCUS) {
        // No network configuration to find, so nothing large for this frame: in line (out
        // of line, the AWS-only build grows by 56 bytes).
        save_if_changed(host, var, "meta-data", document)?;
        return Ok("; meta-data saved");
    }
    save_document::<HETZNER, INCUS, _, _>(host, var, cloud, document, room, fetch_incus)
}

/// `save_network_facts`' work once a document is there. Out of line: its frame holds the
/// network configuration's buffer (16 KiB, probed whole on entry), which every other
/// cloud's `save_userdata` touched too; Hetzner's parse takes its text in `room` (the
/// metadata store's), its nodes in its own frame (14 KiB; with the text, 46).
#[inline(never)]
fn save_document<const HETZNER: bool, const INCUS: bool, H: Messages, V: SavedCopies>(
    host: &H,
    var: &mut V,
    cloud: Cloud,
    document: &[u8],
    room: &mut ParseRoom,
    fetch_incus: impl for<'b> FnOnce(&'b mut [u8]) -> Result<Option<&'b [u8]>, H::Text>,
) -> Result<&'static str, H::Text> {
    save_if_changed(host, var, "meta-data", document)?;
    let mut network = [0u8; NETWORK_CONFIG_LIMIT];
    let found = match cloud {
        Cloud::Hetzner if HETZNER => match hetzner::network_config(document, &mut network, room) {
            Ok(len) => len.map(|len| &network[..len]),
            Err(e) => return Err(host.text(format_args!("metadata network-config: {e}"))),
        },
        Cloud::Incus if INCUS => fetch_incus(&mut network)?,
        _ => None,
    };
    match found {
        Some(body) => {
            save_if_changed(host, var, "network-config", body)?;
            Ok("; meta-data and network-config saved")
        }
        None => Ok("; meta-data saved"),
    }
}

fn save_if_changed<H: Messages>(host: &H, var: &mut impl SavedCopies, name: &str, contents: &[u8]) -> Result<(), H::Text> {
    if var.has_contents(name.as_bytes(), contents) {
        return Ok(());
    }
    var.write_durably(name.as_bytes(), contents, 0o600).map_err(|e| call_failed(host, name.as_bytes(), e))
}

#[cfg(test)]
mod tests {
    use std::vec;
    use std::vec::Vec;

    use super::*;
    use crate::host::HostError;

    /// "hello\n", gzip'd (`printf 'hello\n' | gzip -n`).
    const HELLO_GZ: &[u8] = &[
        0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xcb, 0x48, 0xcd, 0xc9, 0xc9, 0xe7, 0x02, 0x00, 0x20, 0x30, 0x3a, 0x36,
        0x06, 0x00, 0x00, 0x00,
    ];

    fn saved(raw: &[u8], gunzip: bool, limit: usize) -> (Vec<u8>, Option<usize>) {
        let mut room = vec![0u8; 4096];
        let mut asked = None;
        let form = saved_form(raw, gunzip, limit, |len| {
            asked = Some(len);
            Ok::<_, ()>(&mut room[..len.min(4096)])
        });
        (form.unwrap().to_vec(), asked)
    }

    #[test]
    fn gzipd_user_data_is_saved_gunzipped_in_room_the_ratio_and_the_limit_bound() {
        assert_eq!(saved(HELLO_GZ, true, 1 << 20), (b"hello\n".to_vec(), Some(HELLO_GZ.len() * gzip::DEFLATE_RATIO_LIMIT)));
        assert_eq!(saved(HELLO_GZ, true, 100).1, Some(100));
    }

    #[test]
    fn what_is_not_gzip_or_does_not_decompress_is_saved_as_received_and_reserves_nothing() {
        assert_eq!(saved(b"#!/bin/sh\necho hi\n", true, 1 << 20), (b"#!/bin/sh\necho hi\n".to_vec(), None));
        // A build without `userdata` saves gzip as it came: decoding it names the feature.
        assert_eq!(saved(HELLO_GZ, false, 1 << 20), (HELLO_GZ.to_vec(), None));
        let mut cut = HELLO_GZ[..16].to_vec();
        cut.push(0xff);
        assert_eq!(saved(&cut, true, 1 << 20).0, cut);
        // Room too small for what it inflates to is no decompression either.
        assert_eq!(saved(HELLO_GZ, true, 3).0, HELLO_GZ);
    }

    #[test]
    fn a_refused_reservation_is_the_callers_error() {
        assert_eq!(saved_form(HELLO_GZ, true, 1 << 20, |_| Err("no room")), Err("no room"));
    }

    #[test]
    fn only_the_clouds_with_network_facts_in_their_document_keep_it() {
        let kept: Vec<Cloud> = Cloud::ALL.iter().copied().filter(|&cloud| keeps_metadata_document(cloud)).collect();
        assert_eq!(kept, [Cloud::Hetzner, Cloud::Digitalocean, Cloud::Scaleway, Cloud::Incus, Cloud::Vultr]);
    }

    use crate::host::memory::{MemoryDecoding, MemoryHost, MemorySystem};

    const VAR: &str = "/var/lib/cloud";

    fn no_incus(_: &mut [u8]) -> Result<Option<&[u8]>, std::string::String> {
        unreachable!("only Incus fetches its network-config")
    }

    #[test]
    fn user_data_is_saved_private_and_rewritten_only_when_it_or_its_mode_changed() {
        let mut host = MemoryDecoding::new(MemorySystem::new(MemoryHost::new()));
        let mut var = MemoryHost::new();
        let saved = save(&mut host, &mut var.dir(VAR), HELLO_GZ, true, 1 << 20).unwrap();
        assert_eq!((saved.len, saved.note), (6, "saved"));
        let file = &var.files[&b"/var/lib/cloud/user-data"[..]];
        assert_eq!((file.contents.as_slice(), file.meta.mode), (&b"hello\n"[..], 0o600));
        assert_eq!(save(&mut host, &mut var.dir(VAR), b"hello\n", true, 1 << 20).unwrap().note, "unchanged");
        // The same bytes with a wider mode are saved again, 0600.
        var.files.get_mut(&b"/var/lib/cloud/user-data"[..]).unwrap().meta.mode = 0o644;
        assert_eq!(save(&mut host, &mut var.dir(VAR), b"hello\n", true, 1 << 20).unwrap().note, "saved");
        assert_eq!(var.files[&b"/var/lib/cloud/user-data"[..]].meta.mode, 0o600);
        // None is saved as an empty file.
        assert_eq!(save(&mut host, &mut var.dir(VAR), b"", true, 1 << 20).unwrap().len, 0);
        assert!(var.files[&b"/var/lib/cloud/user-data"[..]].contents.is_empty());
    }

    #[test]
    fn a_failed_save_names_the_user_data() {
        let mut host = MemoryDecoding::new(MemorySystem::new(MemoryHost::new()));
        let mut var = MemoryHost::new();
        var.fail.insert(b"/var/lib/cloud/user-data".to_vec(), HostError::NOT_FOUND);
        assert_eq!(save(&mut host, &mut var.dir(VAR), b"x", true, 1 << 20).err().unwrap(), "cannot save user-data: errno 2");
    }

    #[test]
    fn only_the_clouds_that_keep_their_document_save_it_and_its_network_config() {
        let host = MemorySystem::new(MemoryHost::new());
        let mut room = [0u8; crate::provider::metadata::PARSE_ROOM];
        let mut var = MemoryHost::new();
        let document = &b"hostname: a\nnetwork-config:\n  version: 1\n"[..];
        assert_eq!(save_network_facts::<true, true, _, _>(&host, &mut var.dir(VAR), Cloud::Aws, Some(document), &mut room, no_incus), Ok(""));
        assert_eq!(save_network_facts::<true, true, _, _>(&host, &mut var.dir(VAR), Cloud::Hetzner, None, &mut room, no_incus), Ok(""));
        assert!(var.files.is_empty());
        let said = save_network_facts::<true, true, _, _>(&host, &mut var.dir(VAR), Cloud::Hetzner, Some(document), &mut room, no_incus);
        assert_eq!(said.unwrap(), "; meta-data and network-config saved");
        assert_eq!(var.contents("/var/lib/cloud/meta-data"), Some(document));
        assert_eq!(var.contents("/var/lib/cloud/network-config"), Some(&b"{\"version\":1}"[..]));
        assert_eq!(var.files[&b"/var/lib/cloud/network-config"[..]].meta.mode, 0o600);
        // Unchanged, nothing is written again.
        let writes = var.calls.len();
        save_network_facts::<true, true, _, _>(&host, &mut var.dir(VAR), Cloud::Hetzner, Some(document), &mut room, no_incus).unwrap();
        assert_eq!(var.calls.len(), writes);
        // A build without Hetzner keeps the document only.
        let mut var = MemoryHost::new();
        assert_eq!(save_network_facts::<false, true, _, _>(&host, &mut var.dir(VAR), Cloud::Hetzner, Some(document), &mut room, no_incus), Ok("; meta-data saved"));
        assert_eq!(var.contents("/var/lib/cloud/network-config"), None);
        // So does one with neither Hetzner nor Incus (its own path, kept in line).
        let mut var = MemoryHost::new();
        assert_eq!(save_network_facts::<false, false, _, _>(&host, &mut var.dir(VAR), Cloud::Vultr, Some(document), &mut room, no_incus), Ok("; meta-data saved"));
        assert_eq!(var.contents("/var/lib/cloud/meta-data"), Some(document));
        assert_eq!(var.files[&b"/var/lib/cloud/meta-data"[..]].meta.mode, 0o600);
        assert_eq!(var.contents("/var/lib/cloud/network-config"), None);
    }

    #[test]
    fn incus_fetches_its_network_config_and_a_failure_is_the_actions() {
        let host = MemorySystem::new(MemoryHost::new());
        let mut room = [0u8; crate::provider::metadata::PARSE_ROOM];
        let mut var = MemoryHost::new();
        fn served(buf: &mut [u8]) -> Result<Option<&[u8]>, std::string::String> {
            buf[..9].copy_from_slice(b"version 2");
            Ok(Some(&buf[..9]))
        }
        fn none(_: &mut [u8]) -> Result<Option<&[u8]>, std::string::String> {
            Ok(None)
        }
        fn refused(_: &mut [u8]) -> Result<Option<&[u8]>, std::string::String> {
            Err("http 500".into())
        }
        let said = save_network_facts::<true, true, _, _>(&host, &mut var.dir(VAR), Cloud::Incus, Some(b"{}"), &mut room, served);
        assert_eq!(said.unwrap(), "; meta-data and network-config saved");
        assert_eq!(var.contents("/var/lib/cloud/network-config"), Some(&b"version 2"[..]));
        assert_eq!(save_network_facts::<true, true, _, _>(&host, &mut MemoryHost::new().dir(VAR), Cloud::Incus, Some(b"{}"), &mut room, none).unwrap(), "; meta-data saved");
        assert_eq!(save_network_facts::<true, true, _, _>(&host, &mut MemoryHost::new().dir(VAR), Cloud::Incus, Some(b"{}"), &mut room, refused), Err("http 500".into()));
    }

    #[test]
    fn the_note_says_the_length_how_the_user_data_decoded_and_the_facts() {
        let host = crate::host::memory::MemorySystem::new(crate::host::memory::MemoryHost::new());
        let saved = Saved { len: 12, note: "saved" };
        assert_eq!(saved.said(&host, Ok(Some(2)), ""), "saved (12 bytes, 2 parts)");
        assert_eq!(Saved { len: 0, note: "unchanged" }.said(&host, Ok(None), ", meta-data kept"), "unchanged (0 bytes), meta-data kept");
        assert_eq!(saved.said(&host, Err("bad MIME".into()), ""), "saved (12 bytes); it does not decode: bad MIME");
    }
}
