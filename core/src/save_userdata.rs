//! What tiny-cloud's `save_userdata` action keeps in TINY_CLOUD_VAR: the user-data in the
//! form tiny-cloud saves it (gunzipped), and, for the clouds whose metadata document holds
//! the instance's network facts, that document beside it (`meta-data`).

use crate::config::Cloud;
use crate::gzip;

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

#[cfg(test)]
mod tests {
    use std::vec;
    use std::vec::Vec;

    use super::*;

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
}
