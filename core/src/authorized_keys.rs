//! SSH public keys from metadata, validated line by line, and merged into a user's
//! `authorized_keys` without losing or repeating anything.

use core::fmt;

use crate::out::{Full, Out};

/// Longest key line accepted (a 16384-bit RSA key is about 2.8 KiB).
pub const LINE_LIMIT: usize = 16 * 1024;

/// The key types OpenSSH accepts in authorized_keys.
pub const KEY_TYPES: [&str; 10] = [
    "ssh-ed25519",
    "ssh-rsa",
    "ecdsa-sha2-nistp256",
    "ecdsa-sha2-nistp384",
    "ecdsa-sha2-nistp521",
    "sk-ssh-ed25519@openssh.com",
    "sk-ecdsa-sha2-nistp256@openssh.com",
    "ssh-dss",
    "ssh-ed448",
    "rsa-sha2-512",
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyError {
    Empty,
    LineTooLong { limit: usize },
    /// A control byte (other than a tab) at this position.
    ControlCharacter { position: usize },
    /// The first field is no key type wisp knows. Lines with options
    /// (`command="..." ssh-ed25519 ...`) land here too: wisp installs keys as the cloud
    /// names them, and a metadata service has no business setting options.
    UnknownType,
    MissingKey,
    /// The key is not base64, or does not decode to a key of the named type.
    BadKeyData,
    /// The new file does not fit in the caller's buffer, whose size is the limit.
    FileTooLarge { limit: usize },
}

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            KeyError::Empty => f.write_str("empty key line"),
            KeyError::LineTooLong { limit } => write!(f, "key line longer than {limit} bytes"),
            KeyError::ControlCharacter { position } => write!(f, "key line has a control character at position {position}"),
            KeyError::UnknownType => f.write_str("key line does not start with a known key type"),
            KeyError::MissingKey => f.write_str("key line has a type but no key"),
            KeyError::BadKeyData => f.write_str("key data is not a valid key of the named type"),
            KeyError::FileTooLarge { limit } => write!(f, "authorized_keys would be larger than {limit} bytes"),
        }
    }
}

/// A validated key: its type, its base64 blob, and the whole line as it will be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PublicKey<'a> {
    pub key_type: &'a [u8],
    pub blob: &'a [u8],
    pub line: &'a [u8],
}

impl<'a> PublicKey<'a> {
    /// Validates one line; a trailing CR (Azure sends `\r\n`) and surrounding spaces go.
    pub fn parse(raw: &'a [u8]) -> Result<PublicKey<'a>, KeyError> {
        let line = raw.trim_ascii();
        if line.is_empty() {
            return Err(KeyError::Empty);
        }
        if line.len() > LINE_LIMIT {
            return Err(KeyError::LineTooLong { limit: LINE_LIMIT });
        }
        if let Some(position) = line.iter().position(|&b| (b < 0x20 && b != b'\t') || b == 0x7f) {
            return Err(KeyError::ControlCharacter { position });
        }
        let mut fields = line.split(|&b| b == b' ' || b == b'\t').filter(|f| !f.is_empty());
        let key_type = fields.next().ok_or(KeyError::Empty)?;
        if !KEY_TYPES.iter().any(|known| known.as_bytes() == key_type) {
            return Err(KeyError::UnknownType);
        }
        let blob = fields.next().ok_or(KeyError::MissingKey)?;
        if !blob_names_type(blob, key_type) {
            return Err(KeyError::BadKeyData);
        }
        Ok(PublicKey { key_type, blob, line })
    }
}

/// A key blob is base64 of SSH wire data starting with its type as a length-prefixed
/// string; checking that catches truncated and pasted-wrong keys.
fn blob_names_type(blob: &[u8], key_type: &[u8]) -> bool {
    // Enough of the blob to hold a 4-byte length and the longest type name.
    let mut head = [0u8; 48];
    let prefix_len = blob.len().min(64) / 4 * 4;
    let Ok(decoded) = crate::base64::decode(&blob[..prefix_len], &mut head) else { return false };
    let full_ok = {
        // The whole blob must be valid base64 too; decode it in pieces of 4 KiB.
        let mut scratch = [0u8; 3 * 1024];
        blob.chunks(4 * 1024).all(|chunk| crate::base64::decode(chunk, &mut scratch).is_ok())
    };
    let head = &head[..decoded];
    let Some(length) = head.get(..4).map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize) else { return false };
    full_ok && head.get(4..4 + length) == Some(key_type)
}

/// The fields that make two lines the same key: type and blob, not the comment.
fn identity(line: &[u8]) -> Option<(&[u8], &[u8])> {
    PublicKey::parse(line).ok().map(|key| (key.key_type, key.blob))
}

/// `existing` with each of `keys` not already present appended, one per line; `None`
/// when every key is there already. Existing lines (comments, options, keys wisp does
/// not understand) are kept byte for byte.
pub fn merge(existing: &[u8], keys: &[PublicKey<'_>], out: &mut [u8]) -> Result<Option<usize>, KeyError> {
    let too_large = |full: Full| KeyError::FileTooLarge { limit: full.limit };
    let mut writer = Out::new(out);
    writer.put(existing).map_err(too_large)?;
    let mut added = false;
    for (i, key) in keys.iter().enumerate() {
        let present = existing.split(|&b| b == b'\n').filter_map(identity).any(|id| id == (key.key_type, key.blob));
        let repeated = keys[..i].iter().any(|earlier| (earlier.key_type, earlier.blob) == (key.key_type, key.blob));
        if present || repeated {
            continue;
        }
        if !added && !existing.is_empty() && !existing.ends_with(b"\n") {
            writer.put(b"\n").map_err(too_large)?;
        }
        writer.put_all(&[key.line, b"\n"]).map_err(too_large)?;
        added = true;
    }
    Ok(added.then_some(writer.len()))
}


#[cfg(test)]
mod tests {
    use super::*;

    // Made with ssh-keygen (ed25519; ecdsa -b 256) for these tests.
    const ED25519: &[u8] = b"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIP6zWIGFsiIt1uW2eXmASHnCRo/IiaNJBUNBBBA8SwbT alice@laptop";
    const ECDSA: &[u8] = b"ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBOy2XdEvmoAOZj8OE9BQ8mkzwO7wmlR0qCTwPL4S0RhLI3G0mnQmU2AxV8IL+rG4imBA447feb5tu3Rd4a5837w= bob";

    #[test]
    fn valid_keys() {
        let key = PublicKey::parse(ED25519).unwrap();
        assert_eq!(key.key_type, b"ssh-ed25519");
        assert_eq!(key.line, ED25519);
        let mut azure = ECDSA.to_vec();
        azure.extend_from_slice(b"\r\n");
        assert_eq!(PublicKey::parse(&azure).unwrap().line, ECDSA);
        let no_comment = b"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIP6zWIGFsiIt1uW2eXmASHnCRo/IiaNJBUNBBBA8SwbT";
        assert!(PublicKey::parse(no_comment).is_ok());
    }

    #[test]
    fn refusals() {
        let cases: [(&[u8], KeyError); 8] = [
            (b"", KeyError::Empty),
            (b"  \r\n", KeyError::Empty),
            (b"ssh-ed25519 AAAA\x1b[2J", KeyError::ControlCharacter { position: 16 }),
            (b"ssh-ed25519 AAAA\rroot", KeyError::ControlCharacter { position: 16 }),
            (b"command=\"rm -rf /\" ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIP6zWIGFsiIt1uW2eXmASHnCRo/IiaNJBUNBBBA8SwbT", KeyError::UnknownType),
            (b"ssh-ed25519", KeyError::MissingKey),
            (b"ssh-ed25519 not!base64", KeyError::BadKeyData),
            // An RSA blob under the ed25519 name.
            (b"ssh-ed25519 AAAAB3NzaC1yc2EAAAADAQABAAAAgQC7", KeyError::BadKeyData),
        ];
        for (line, error) in cases {
            assert_eq!(PublicKey::parse(line), Err(error), "{:?}", String::from_utf8_lossy(line));
        }
        let mut long = ED25519.to_vec();
        long.resize(LINE_LIMIT, b'x');
        assert!(PublicKey::parse(&long).is_ok());
        long.push(b'x');
        assert_eq!(PublicKey::parse(&long), Err(KeyError::LineTooLong { limit: LINE_LIMIT }));
    }

    #[test]
    fn merge_keeps_and_deduplicates() {
        let ed = PublicKey::parse(ED25519).unwrap();
        let ec = PublicKey::parse(ECDSA).unwrap();
        let mut out = [0u8; 2048];
        let n = merge(b"", &[ed, ec, ed], &mut out).unwrap().unwrap();
        let first = out[..n].to_vec();
        assert_eq!(first, [ED25519, b"\n", ECDSA, b"\n"].concat());
        assert_eq!(merge(&first, &[ec, ed], &mut out), Ok(None));

        // The same key with another comment is already there; other lines stay.
        let existing = [b"# mine\ncommand=\"x\" ssh-rsa AAAA\n", &ED25519[..ED25519.len() - 12], b" other-comment"].concat();
        crate::fuzz::seed_pair("authorized_keys", &existing, &[ED25519, b"\n", ECDSA].concat());
        let n = merge(&existing, &[ed, ec], &mut out).unwrap().unwrap();
        assert_eq!(&out[..n], [&existing[..], b"\n", ECDSA, b"\n"].concat().as_slice());
    }

    #[test]
    fn file_limit() {
        let ed = PublicKey::parse(ED25519).unwrap();
        let mut exact = vec![0u8; ED25519.len() + 1];
        assert_eq!(merge(b"", &[ed], &mut exact), Ok(Some(ED25519.len() + 1)));
        let mut short = vec![0u8; ED25519.len()];
        assert_eq!(merge(b"", &[ed], &mut short), Err(KeyError::FileTooLarge { limit: ED25519.len() }));
    }
}
