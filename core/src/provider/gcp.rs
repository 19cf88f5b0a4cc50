//! Google Compute Engine's metadata server: one GET per value, each with
//! `Metadata-Flavor: Google`; SSH keys from the instance, the legacy `sshKeys` and the
//! project, unless the instance blocks the project's.

use super::Item;
use crate::out::{Full, Out};

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
    value.trim_ascii().eq_ignore_ascii_case(b"true")
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
fn is_expired(key: &[u8], now: u64) -> bool {
    let Some(at) = find(key, b"google-ssh ") else { return false };
    let json = &key[at + b"google-ssh ".len()..];
    let Ok(doc) = crate::json::Value::parse(json) else { return true };
    let Ok(Some(expire)) = doc.get("expireOn") else { return false };
    let mut text = [0u8; 64];
    let Ok(len) = expire.unescape_into(&mut text) else { return true };
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
}
