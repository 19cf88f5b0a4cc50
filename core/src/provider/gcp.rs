//! Google Compute Engine's metadata server: one GET per value, each with
//! `Metadata-Flavor: Google`; SSH keys from the instance, the legacy `sshKeys` and the
//! project, unless the instance blocks the project's.

use super::imds::{add, item_targets, Host, Imds, ImdsError, Service, Targets, What};
use super::metadata::{Metadata, ValueState};
use crate::text::eq_ignoring_case;
use super::Item;
use crate::out::{Full, Out};

pub const SERVICE: Service = Service { headers: &[FLAVOR], rounds: Some(rounds), ..Service::PLAIN };

pub const FLAVOR: (&str, &str) = ("Metadata-Flavor", "Google");
pub const INSTANCE_KEYS: &str = "/computeMetadata/v1/instance/attributes/ssh-keys";
pub const LEGACY_KEYS: &str = "/computeMetadata/v1/instance/attributes/sshKeys";
pub const PROJECT_KEYS: &str = "/computeMetadata/v1/project/attributes/ssh-keys";
pub const BLOCK_PROJECT_KEYS: &str = "/computeMetadata/v1/instance/attributes/block-project-ssh-keys";
pub const USER_DATA_ENCODING: &str = "/computeMetadata/v1/instance/attributes/user-data-encoding";

pub const fn path(item: Item) -> Option<&'static str> {
    match item {
        Item::InstanceId => Some("/computeMetadata/v1/instance/id"),
        Item::Hostname | Item::LocalHostname => Some("/computeMetadata/v1/instance/hostname"),
        Item::UserData => Some("/computeMetadata/v1/instance/attributes/user-data"),
        Item::SshKeys => None,
    }
}

/// `block-project-ssh-keys` as GCP's guest agent reads it.
pub fn blocks_project_keys(value: &[u8]) -> bool {
    eq_ignoring_case(value.trim_ascii(), b"true")
}

/// Appends the keys of one `ssh-keys` value to `out`, one per line: the `user:` prefix
/// dropped (wisp installs every key for CLOUD_USER, as tiny-cloud does), and keys whose
/// `google-ssh {"expireOn": ...}` has passed at `now` left out. Lines without a key
/// type after the prefix are kept as they are, for the key validator to judge.
pub fn append_keys(value: &[u8], now: u64, out: &mut Out<'_>) -> Result<(), Full> {
    for line in value.split(|&b| b == b'\n').map(<[u8]>::trim_ascii).filter(|line| !line.is_empty()) {
        let key = strip_user(line);
        if is_expired(key, now) {
            continue;
        }
        out.put_all(&[key, b"\n"])?;
    }
    Ok(())
}

/// Every value in one round; the keys from the instance, its legacy attribute and the
/// project (unless blocked), expired ones dropped; user-data decoded when its encoding
/// says base64.
fn rounds(imds: &mut Imds<'_>, host: &mut dyn Host, metadata: &mut Metadata<'_>, wanted: &[Item]) -> Result<(), ImdsError> {
    let ([mut instance_id, mut hostname, mut local_hostname, keys, mut user_data], document) = metadata.slots();
    let mut encoding = [0u8; 256];
    let mut encoding_state = ValueState::NotFetched;
    let mut block = [0u8; 256];
    let mut block_state = ValueState::NotFetched;
    let mut key_states = [ValueState::NotFetched; 3];
    let mut targets = Targets::new();
    item_targets([&mut instance_id, &mut hostname, &mut local_hostname, &mut user_data], wanted, path, &mut targets);
    if wanted.contains(&Item::UserData) {
        add(&mut targets, What::Item(Item::UserData), USER_DATA_ENCODING, &mut encoding, &mut encoding_state);
    }
    let want_keys = wanted.contains(&Item::SshKeys);
    let third = keys.buf.len() / 3;
    if want_keys {
        let sources = [INSTANCE_KEYS, LEGACY_KEYS, PROJECT_KEYS];
        for ((path, buf), state) in sources.into_iter().zip(keys.buf.chunks_mut(third)).zip(key_states.iter_mut()) {
            add(&mut targets, What::Item(Item::SshKeys), path, buf, state);
        }
        add(&mut targets, What::Item(Item::SshKeys), BLOCK_PROJECT_KEYS, &mut block, &mut block_state);
    }
    let round = imds.round(host, &mut targets);
    drop(targets);
    let base64 = encoding_state.value(&encoding).is_some_and(|encoding| encoding.trim_ascii() == b"base64");
    if let (Some(range), true) = (user_data.state.range(), base64) {
        let decoded = super::decode_base64_in_place(&mut user_data.buf[range.start..], range.len())
            .map_err(|error| ImdsError::Document { item: Item::UserData, error: error.into() })?;
        *user_data.state = ValueState::Present { start: range.start, len: decoded };
    }
    if want_keys && key_states.iter().all(|state| *state != ValueState::NotFetched) {
        let blocked = block_state.value(&block).is_some_and(blocks_project_keys);
        let now = host.realtime_secs();
        let too_large = |limit: usize| ImdsError::ValueTooLarge { item: Item::SshKeys, limit: limit as u32 };
        let mut out = Out::new(document.buf);
        for (i, state) in key_states.iter().enumerate() {
            if let (Some(range), false) = (state.range(), blocked && i == 2) {
                let value = &keys.buf[i * third + range.start..i * third + range.end];
                append_keys(value, now, &mut out).map_err(|full| too_large(full.limit))?;
            }
        }
        let joined = out.written();
        let limit = keys.buf.len();
        keys.buf.get_mut(..joined.len()).ok_or(too_large(limit))?.copy_from_slice(joined);
        *keys.state = ValueState::Present { start: 0, len: joined.len() };
    }
    round
}

/// `user:ssh-ed25519 AAAA...` -> `ssh-ed25519 AAAA...`: the prefix ends at the first ':'
/// that comes before any space.
fn strip_user(line: &[u8]) -> &[u8] {
    let space = line.iter().position(|&b| b == b' ').unwrap_or(line.len());
    match line[..space].iter().position(|&b| b == b':') {
        Some(colon) => &line[colon + 1..],
        None => line,
    }
}

/// A key whose comment is `google-ssh {..."expireOn":"<time>"...}` and whose time has
/// passed. A time wisp cannot read counts as expired: an unknown lifetime is no licence.
#[inline(never)]
fn is_expired(key: &[u8], now: u64) -> bool {
    let Some(at) = find(key, b"google-ssh ") else { return false };
    let json = &key[at + b"google-ssh ".len()..];
    let Ok(doc) = crate::json::JsonText::parse(json) else { return true };
    let Ok(Some(expire)) = doc.get("expireOn") else { return false };
    let mut text = [0u8; 64];
    let Ok(len) = expire.unescape_into(json, &mut text) else { return true };
    crate::clock::parse_iso8601(&text[..len]).is_none_or(|deadline| deadline <= now)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|window| window == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(value: &[u8], now: u64) -> String {
        let mut buf = [0u8; 1024];
        let mut out = Out::new(&mut buf);
        append_keys(value, now, &mut out).unwrap();
        String::from_utf8(out.written().to_vec()).unwrap()
    }

    const NOW: u64 = 1_795_340_672; // 2026-11-22T09:44:32Z

    #[test]
    fn users_dropped_and_expiry_honoured() {
        let value = b"alice:ssh-ed25519 AAAA alice@host\n\
            bob:ssh-rsa BBBB google-ssh {\"userName\":\"bob@example.com\",\"expireOn\":\"2026-11-22T09:44:31+0000\"}\n\
            carol:ssh-rsa CCCC google-ssh {\"userName\":\"carol@example.com\",\"expireOn\":\"2027-01-01T00:00:00+0000\"}\r\n\
            \n\
            ssh-ed25519 DDDD no-user\n";
        assert_eq!(
            keys(value, NOW),
            "ssh-ed25519 AAAA alice@host\nssh-rsa CCCC google-ssh {\"userName\":\"carol@example.com\",\"expireOn\":\"2027-01-01T00:00:00+0000\"}\nssh-ed25519 DDDD no-user\n"
        );
        // An unreadable expiry is treated as expired.
        assert_eq!(keys(b"d:ssh-rsa EEEE google-ssh {\"expireOn\":\"someday\"}", NOW), "");
        assert_eq!(keys(b"d:ssh-rsa EEEE google-ssh {not json", NOW), "");
        assert_eq!(keys(b"d:ssh-rsa EEEE google-ssh {\"userName\":\"d\"}", NOW), "ssh-rsa EEEE google-ssh {\"userName\":\"d\"}\n");
    }

    #[test]
    fn blocking_and_limits() {
        assert!(blocks_project_keys(b"true\n") && blocks_project_keys(b"TRUE"));
        assert!(!blocks_project_keys(b"false") && !blocks_project_keys(b""));
        let mut buf = [0u8; 8];
        let mut out = Out::new(&mut buf);
        assert_eq!(append_keys(b"a:ssh-rsa AAAAAAAA", NOW, &mut out), Err(Full { limit: 8 }));
    }

    use crate::config::Cloud;
    use crate::provider::imds::fetch_from;

    const BASE: &str = "GET /computeMetadata/v1/instance/";
    fn get(path: &str) -> String {
        format!("{BASE}{path}")
    }
    const PROJECT: &str = "GET /computeMetadata/v1/project/attributes/ssh-keys";

    fn instance() -> MemoryNetwork {
        MemoryNetwork::new()
            .serve(&get("id"), 200, b"4520")
            .serve(&get("hostname"), 200, b"vm-1.c.project.internal")
            .serve(&get("attributes/user-data"), 200, b"IyEvYmluL3NoCg==")
            .serve(&get("attributes/user-data-encoding"), 200, b"base64\n")
            .serve(&get("attributes/ssh-keys"), 200, b"alice:ssh-ed25519 AAAA alice")
            .serve(&get("attributes/sshKeys"), 200, b"bob:ssh-rsa BBBB bob\n")
            .serve(PROJECT, 200, b"carol:ssh-ed25519 CCCC carol\ndave:ssh-rsa DDDD google-ssh {\"expireOn\":\"2026-11-22T09:44:31+0000\"}")
    }

    use crate::host::memory::MemoryNetwork;

    #[test]
    fn one_round_with_the_flavor_header_and_the_keys_merged() {
        let mut network = instance();
        network.now = NOW;
        let (result, values) = fetch_from(Cloud::Gcp, &SERVICE, &mut network, &Item::ALL);
        assert_eq!(result, Ok(()));
        let round: Vec<String> = ["id", "hostname", "hostname", "attributes/user-data", "attributes/user-data-encoding", "attributes/ssh-keys", "attributes/sshKeys"]
            .iter()
            .map(|path| get(path))
            .chain([PROJECT.to_string(), get("attributes/block-project-ssh-keys")])
            .collect();
        assert_eq!(network.lines(), [round]);
        assert!(network.seen().iter().all(|seen| seen.headers == ["Metadata-Flavor: Google"]));
        assert_eq!(values[0].as_deref(), Some(&b"4520"[..]));
        assert_eq!(values[1], values[2]);
        // Instance, legacy, project; the expired key of the project left out.
        assert_eq!(values[3].as_deref(), Some(&b"ssh-ed25519 AAAA alice\nssh-rsa BBBB bob\nssh-ed25519 CCCC carol\n"[..]));
        assert_eq!(values[4].as_deref(), Some(&b"#!/bin/sh\n"[..]));
    }

    #[test]
    fn the_instance_can_block_the_projects_keys() {
        let mut network = instance().serve(&get("attributes/block-project-ssh-keys"), 200, b"TRUE");
        let (result, values) = fetch_from(Cloud::Gcp, &SERVICE, &mut network, &[Item::SshKeys]);
        assert_eq!(result, Ok(()));
        assert_eq!(network.seen().len(), 4);
        assert_eq!(values[3].as_deref(), Some(&b"ssh-ed25519 AAAA alice\nssh-rsa BBBB bob\n"[..]));
        let mut network = instance().serve(&get("attributes/block-project-ssh-keys"), 200, b"false");
        network.now = NOW;
        let (_, values) = fetch_from(Cloud::Gcp, &SERVICE, &mut network, &[Item::SshKeys]);
        assert!(values[3].as_deref().unwrap().ends_with(b"CCCC carol\n"));
    }

    #[test]
    fn no_key_anywhere_is_an_empty_list_and_plain_user_data_stays_as_is() {
        let mut network = MemoryNetwork::new().serve(&get("attributes/user-data"), 200, b"IyEvYmluL3NoCg==");
        let (result, values) = fetch_from(Cloud::Gcp, &SERVICE, &mut network, &[Item::SshKeys, Item::UserData]);
        assert_eq!(result, Ok(()));
        assert_eq!(values[3].as_deref(), Some(&b""[..]));
        assert_eq!(values[4].as_deref(), Some(&b"IyEvYmluL3NoCg=="[..]));
    }

    #[test]
    fn user_data_that_is_not_base64_as_its_encoding_says_is_a_document_error() {
        let mut network = instance().serve(&get("attributes/user-data"), 200, b"#!/bin/sh");
        network.answers.get_mut(&get("attributes/user-data")).unwrap().pop_front();
        let (result, _) = fetch_from(Cloud::Gcp, &SERVICE, &mut network, &[Item::UserData]);
        let error = result.unwrap_err();
        assert!(matches!(error, ImdsError::Document { item: Item::UserData, .. }), "{error:?}");
        assert_eq!(error.item(), Some(Item::UserData));
    }

    #[test]
    fn a_failed_key_source_leaves_the_keys_unfetched() {
        let mut network = instance().serve(PROJECT, 500, b"");
        network.answers.get_mut(PROJECT).unwrap().pop_front();
        let (result, values) = fetch_from(Cloud::Gcp, &SERVICE, &mut network, &[Item::SshKeys, Item::InstanceId]);
        let error = result.unwrap_err();
        assert!(matches!(error, ImdsError::Fetch { what: What::Item(Item::SshKeys), .. }), "{error:?}");
        assert_eq!(values[3], None);
        assert_eq!(values[0].as_deref(), Some(&b"4520"[..]));
    }
}
