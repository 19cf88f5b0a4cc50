//! SSH public keys from metadata, validated line by line, and merged into a user's
//! `authorized_keys` without losing or repeating anything.

use core::fmt;

use crate::out::{Full, Out};
use crate::text::Decimal;

/// Longest key line accepted (a 16384-bit RSA key is about 2.8 KiB).
pub const LINE_LIMIT: usize = 16 * 1024;

/// The key types OpenSSH accepts in authorized_keys (one string, not a table, as
/// `OPTIONS`).
pub const KEY_TYPES: &str = "ssh-ed25519 ssh-rsa ecdsa-sha2-nistp256 ecdsa-sha2-nistp384 ecdsa-sha2-nistp521 \
    sk-ssh-ed25519@openssh.com sk-ecdsa-sha2-nistp256@openssh.com ssh-dss ssh-ed448 rsa-sha2-512";

/// Positions and limits are u32 (a line is at most LINE_LIMIT bytes): an 8-byte error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyError {
    Empty,
    LineTooLong { limit: u32 },
    /// A control byte (other than a tab) at this position.
    ControlCharacter { position: u32 },
    /// The first field after any options is no key type wisp knows.
    UnknownType,
    /// The options before the key type, as sshd(8) reads them: an option sshd does not
    /// know (sshd would ignore the whole line), or a quote left open.
    BadOptions { position: u32 },
    MissingKey,
    /// The key is not base64, or does not decode to a key of the named type.
    BadKeyData,
    /// The new file does not fit in the caller's buffer, whose size is the limit.
    FileTooLarge { limit: u32 },
}

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            KeyError::Empty => f.write_str("empty key line"),
            KeyError::LineTooLong { limit } => write!(f, "key line longer than {limit} bytes", limit = Decimal(limit.into())),
            KeyError::ControlCharacter { position } => write!(f, "key line has a control character at position {position}", position = Decimal(position.into())),
            KeyError::UnknownType => f.write_str("key line does not start with a known key type (after its options)"),
            KeyError::BadOptions { position } => write!(f, "key line options are not as sshd(8) reads them at position {position}", position = Decimal(position.into())),
            KeyError::MissingKey => f.write_str("key line has a type but no key"),
            KeyError::BadKeyData => f.write_str("key data is not a valid key of the named type"),
            KeyError::FileTooLarge { limit } => write!(f, "authorized_keys would be larger than {limit} bytes", limit = Decimal(limit.into())),
        }
    }
}

/// The options sshd(8) knows, in "AUTHORIZED_KEYS FILE FORMAT" (one string, not a
/// table of 22, to keep the binary small); it compares names without case.
const OPTIONS: &str = "agent-forwarding cert-authority command environment expiry-time from no-agent-forwarding \
    no-port-forwarding no-pty no-user-rc no-x11-forwarding permitlisten permitopen port-forwarding principals pty \
    no-touch-required verify-required restrict tunnel user-rc x11-forwarding";

/// The length of the options field that starts `line`, as sshd(8) reads it: `name` or
/// `name="value"`, separated by commas, ending at the first blank outside quotes; in a
/// value, `\"` is a quote. A line that starts with a key type has none (0).
fn options_len(line: &[u8]) -> Result<usize, KeyError> {
    let first = line.split(|&b| b == b' ' || b == b'\t').next().unwrap_or(b"");
    if crate::text::word_index(KEY_TYPES, first).is_some() {
        return Ok(0);
    }
    let mut i = 0;
    loop {
        let name_start = i;
        while i < line.len() && (line[i].is_ascii_alphanumeric() || line[i] == b'-') {
            i += 1;
        }
        let name = &line[name_start..i];
        if crate::text::word_index_ignoring_case(OPTIONS, name).is_none() {
            return Err(KeyError::BadOptions { position: name_start as u32 });
        }
        if line.get(i) == Some(&b'=') {
            if line.get(i + 1) != Some(&b'"') {
                return Err(KeyError::BadOptions { position: i as u32 + 1 });
            }
            i += 2;
            loop {
                match line.get(i) {
                    None => return Err(KeyError::BadOptions { position: i as u32 }),
                    Some(b'\\') if line.get(i + 1) == Some(&b'"') => i += 2,
                    Some(b'"') => break,
                    Some(_) => i += 1,
                }
            }
            i += 1;
        }
        match line.get(i) {
            Some(b',') => i += 1,
            Some(b' ' | b'\t') => return Ok(i),
            _ => return Err(KeyError::BadOptions { position: i as u32 }),
        }
    }
}

/// A validated key: its type, its base64 blob, and the whole line as it will be written
/// (options, as sshd(8) reads them, kept verbatim).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PublicKey<'a> {
    pub key_type: &'a [u8],
    pub blob: &'a [u8],
    pub line: &'a [u8],
}

impl<'a> PublicKey<'a> {
    /// Validates one line; a trailing CR (Azure sends `\r\n`) and surrounding spaces go.
    #[inline(never)]
    pub fn parse(raw: &'a [u8]) -> Result<PublicKey<'a>, KeyError> {
        let line = raw.trim_ascii();
        if line.is_empty() {
            return Err(KeyError::Empty);
        }
        if line.len() > LINE_LIMIT {
            return Err(KeyError::LineTooLong { limit: LINE_LIMIT as u32 });
        }
        if let Some(position) = line.iter().position(|&b| (b < 0x20 && b != b'\t') || b == 0x7f) {
            return Err(KeyError::ControlCharacter { position: position as u32 });
        }
        let options = options_len(line)?;
        let mut fields = line[options..].split(|&b| b == b' ' || b == b'\t').filter(|f| !f.is_empty());
        let key_type = fields.next().ok_or(KeyError::Empty)?;
        if crate::text::word_index(KEY_TYPES, key_type).is_none() {
            return Err(KeyError::UnknownType);
        }
        let blob = fields.next().ok_or(KeyError::MissingKey)?;
        if !blob_names_type(blob, key_type) {
            return Err(KeyError::BadKeyData);
        }
        Ok(PublicKey { key_type, blob, line })
    }
}

/// A key blob is base64 of SSH wire data: length-prefixed fields, its type first, then
/// the key's numbers or strings, with nothing after the last. Walking the fields as the
/// blob decodes (in pieces of 4 KiB) catches truncated and pasted-wrong keys.
fn blob_names_type(blob: &[u8], key_type: &[u8]) -> bool {
    let mut scratch = [0u8; 3 * 1024];
    // Bytes of the current field's length read, the bytes of its data still to come, how
    // many fields have started, and the position in the current one.
    let (mut length_bytes, mut left, mut fields, mut offset) = (0, 0usize, 0, 0);
    for chunk in blob.chunks(4 * 1024) {
        let Ok(len) = crate::base64::decode(chunk, &mut scratch) else { return false };
        for &byte in &scratch[..len] {
            if length_bytes < 4 {
                left = left << 8 | usize::from(byte);
                length_bytes += 1;
                if length_bytes == 4 {
                    fields += 1;
                    offset = 0;
                }
            } else {
                if fields == 1 && key_type.get(offset) != Some(&byte) {
                    return false;
                }
                offset += 1;
                left -= 1;
            }
            if length_bytes == 4 && left == 0 {
                if fields == 1 && offset != key_type.len() {
                    return false;
                }
                length_bytes = 0;
            }
        }
    }
    length_bytes == 0 && fields >= 2
}

/// The fields that make two lines the same key: type and blob, not the comment.
fn identity(line: &[u8]) -> Option<(&[u8], &[u8])> {
    PublicKey::parse(line).ok().map(|key| (key.key_type, key.blob))
}

/// `existing` with each of `keys` not already present appended, one per line; `None`
/// when every key is there already. Existing lines (comments, options, keys wisp does
/// not understand) are kept byte for byte.
pub fn merge(existing: &[u8], keys: &[PublicKey<'_>], out: &mut [u8]) -> Result<Option<usize>, KeyError> {
    let too_large = |full: Full| KeyError::FileTooLarge { limit: full.limit as u32 };
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

    /// A line of `key_type` whose blob names it and holds one byte more.
    fn line_of(key_type: &str) -> std::vec::Vec<u8> {
        let mut blob = std::vec::Vec::new();
        blob.extend_from_slice(&(key_type.len() as u32).to_be_bytes());
        blob.extend_from_slice(key_type.as_bytes());
        blob.extend_from_slice(&[0, 0, 0, 1, 7]);
        let mut encoded = [0u8; 128];
        let len = crate::base64::encode_unpadded(&blob, &mut encoded).unwrap();
        [key_type.as_bytes(), b" ", &encoded[..len]].concat()
    }

    #[test]
    fn every_type_openssh_accepts_is_known_and_no_other() {
        let known = ["ssh-ed25519", "ssh-rsa", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521",
            "sk-ssh-ed25519@openssh.com", "sk-ecdsa-sha2-nistp256@openssh.com", "ssh-dss", "ssh-ed448", "rsa-sha2-512"];
        for key_type in known {
            let line = line_of(key_type);
            assert_eq!(PublicKey::parse(&line).map(|key| key.key_type), Ok(key_type.as_bytes()), "{key_type}");
        }
        for unknown in ["ssh", "ssh-ed25519x", "ed448", "SSH-RSA", "ecdsa-sha2-nistp", "rsa-sha2-256", "ssh-rsa-cert-v01@openssh.com"] {
            assert_eq!(PublicKey::parse(&line_of(unknown)), Err(KeyError::BadOptions { position: 0 }), "{unknown}");
        }
    }

    #[test]
    fn refusals() {
        let cases: [(&[u8], KeyError); 10] = [
            (b"", KeyError::Empty),
            (b"  \r\n", KeyError::Empty),
            (b"ssh-ed25519 AAAA\x1b[2J", KeyError::ControlCharacter { position: 16 }),
            (b"ssh-ed25519 AAAA\rroot", KeyError::ControlCharacter { position: 16 }),
            (b"commands=\"rm -rf /\" ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIP6zWIGFsiIt1uW2eXmASHnCRo/IiaNJBUNBBBA8SwbT", KeyError::BadOptions { position: 0 }),
            (b"ssh-ed25519", KeyError::MissingKey),
            (b"ssh-ed25519 not!base64", KeyError::BadKeyData),
            // An RSA blob under the ed25519 name.
            (b"ssh-ed25519 AAAAB3NzaC1yc2EAAAADAQABAAAAgQC7", KeyError::BadKeyData),
            // Truncated: the key's 32 bytes end early, or the blob ends inside a length.
            (b"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIP6zWIGFsiIt1uW2eXmASHnCRo/IiaNJBUNBBBA8", KeyError::BadKeyData),
            (b"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAA", KeyError::BadKeyData),
        ];
        for (line, error) in cases {
            assert_eq!(PublicKey::parse(line), Err(error), "{:?}", String::from_utf8_lossy(line));
        }
        let mut long = ED25519.to_vec();
        long.resize(LINE_LIMIT, b'x');
        assert!(PublicKey::parse(&long).is_ok());
        long.push(b'x');
        assert_eq!(PublicKey::parse(&long), Err(KeyError::LineTooLong { limit: LINE_LIMIT as u32 }));
    }

    #[test]
    fn options_as_sshd_reads_them() {
        const BLOB: &str = "AAAAC3NzaC1lZDI1NTE5AAAAIP6zWIGFsiIt1uW2eXmASHnCRo/IiaNJBUNBBBA8SwbT";
        for options in [
            "command=\"/usr/bin/true\",no-pty",
            "restrict",
            "cert-authority,principals=\"a,b c\"",
            "from=\"10.0.0.0/8,!10.1.2.3\",environment=\"A=b \\\"c\\\"\",No-Port-Forwarding",
            "command=\"\"",
        ] {
            let line = format!("{options} ssh-ed25519 {BLOB} x@y");
            let key = PublicKey::parse(line.as_bytes()).unwrap_or_else(|e| panic!("{line}: {e}"));
            assert_eq!((key.key_type, key.blob, key.line), (&b"ssh-ed25519"[..], BLOB.as_bytes(), line.as_bytes()));
        }
        let cases: [(&str, KeyError); 7] = [
            ("command=\"x ssh-ed25519 ", KeyError::BadOptions { position: 91 }), // open to the end
            ("command=x ssh-ed25519 ", KeyError::BadOptions { position: 8 }),
            ("no-pty,,restrict ssh-ed25519 ", KeyError::BadOptions { position: 7 }),
            ("no-pty, ssh-ed25519 ", KeyError::BadOptions { position: 7 }),
            ("no-ptyx ssh-ed25519 ", KeyError::BadOptions { position: 0 }),
            ("command=\"a\"b ssh-ed25519 ", KeyError::BadOptions { position: 11 }),
            ("restrict rsa-sha1 ", KeyError::UnknownType),
        ];
        for (start, error) in cases {
            let line = format!("{start}{BLOB}");
            assert_eq!(PublicKey::parse(line.as_bytes()), Err(error), "{line}");
        }
        // A line break inside quotes is a control character: no second line gets in.
        let smuggled = format!("command=\"a\nssh-ed25519 {BLOB}\" ssh-ed25519 {BLOB}");
        assert_eq!(PublicKey::parse(smuggled.as_bytes()), Err(KeyError::ControlCharacter { position: 10 }));
        // The same key with options is the same key: not added twice.
        let plain = PublicKey::parse(ED25519).unwrap();
        let with = format!("restrict {}", core::str::from_utf8(ED25519).unwrap());
        let with = PublicKey::parse(with.as_bytes()).unwrap();
        let mut out = [0u8; 512];
        assert_eq!(merge(&[ED25519, b"\n"].concat(), &[with], &mut out), Ok(None));
        assert_eq!(merge(b"", &[plain, with], &mut out).unwrap(), Some(ED25519.len() + 1));
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
        assert_eq!(merge(b"", &[ed], &mut short), Err(KeyError::FileTooLarge { limit: ED25519.len() as u32 }));
    }
}
