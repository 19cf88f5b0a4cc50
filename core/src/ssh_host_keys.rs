//! The SSH host keys of an instance, as cloud-init's `ssh` and `keys_to_console` modules
//! handle them: which files in /etc/ssh are host keys (removed on a new instance when
//! `ssh_deletekeys`), where `ssh_keys` from cloud-config go, and each public key's
//! fingerprint line as `ssh-keygen -l` prints it, for the console.

use core::fmt;

use crate::out::{Full, Out};

/// The key types `ssh-keygen -t` makes host keys of, one word each; the first
/// `DEFAULT_TYPES` are cloud-init's default `ssh_genkeytypes`.
pub const KNOWN_TYPES: &str = "rsa ecdsa ed25519 dsa";
pub const DEFAULT_TYPES: usize = 3;
/// Longest public key blob read (an RSA key of 16384 bits is ~2 KiB).
pub const BLOB_LIMIT: usize = 4096;

/// The lines around the printed fingerprints. Macros, so that the log line is the literal
/// itself: a format without arguments costs less than one of `{}` and the text.
macro_rules! begin_fingerprints {
    () => {
        "-----BEGIN SSH HOST KEY FINGERPRINTS-----"
    };
}
macro_rules! end_fingerprints {
    () => {
        "-----END SSH HOST KEY FINGERPRINTS-----"
    };
}
pub(crate) use {begin_fingerprints, end_fingerprints};

/// Host key files: cloud-init removes `/etc/ssh/ssh_host_*key*`.
pub fn is_host_key_file(name: &[u8]) -> bool {
    name.strip_prefix(b"ssh_host_").is_some_and(|rest| rest.windows(3).any(|w| w == b"key"))
}

/// Public host key files, whose fingerprints are printed: `ssh_host_*key.pub`.
pub fn is_public_host_key_file(name: &[u8]) -> bool {
    name.starts_with(b"ssh_host_") && name.ends_with(b"key.pub")
}

/// Dropbear's host key files: `dropbear_*_host_key`.
pub fn is_dropbear_key_file(name: &[u8]) -> bool {
    name.starts_with(b"dropbear_") && name.ends_with(b"_host_key")
}

/// The file an `ssh_keys` entry (`rsa_private`, `ed25519_public`, `ecdsa_certificate`...)
/// is written to in /etc/ssh, and its mode; `None` for a name cloud-init does not know.
#[inline(never)]
pub fn given_key_file(name: &str) -> Option<(heapless::String<40>, u32)> {
    let (key_type, part) = name.split_once('_')?;
    crate::text::word_index(KNOWN_TYPES, key_type.as_bytes())?;
    // Each part's file name suffix, a word of `SUFFIXES` (the first is empty); only the
    // private key is 0600.
    const PARTS: &str = "private public certificate";
    const SUFFIXES: &str = " .pub -cert.pub";
    let index = crate::text::word_index(PARTS, part.as_bytes())?;
    let (suffix, mode) = (crate::text::nth_word(SUFFIXES, index), if index == 0 { 0o600 } else { 0o644 });
    let mut file = heapless::String::new();
    for part in ["ssh_host_", key_type, "_key", suffix] {
        file.push_str(part).ok()?;
    }
    Some((file, mode))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FingerprintError {
    /// Not `type base64 [comment]`, or the blob is not base64 of SSH wire data.
    NotAPublicKey,
    TooLarge { limit: usize },
}

impl fmt::Display for FingerprintError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FingerprintError::NotAPublicKey => f.write_str("not an OpenSSH public key"),
            FingerprintError::TooLarge { limit } => write!(f, "larger than {} bytes", crate::text::Decimal(*limit as u64)),
        }
    }
}

impl From<Full> for FingerprintError {
    fn from(full: Full) -> Self {
        FingerprintError::TooLarge { limit: full.limit }
    }
}

/// `ssh-keygen -l -f FILE`'s line for a public key file's text: `BITS SHA256:HASH COMMENT
/// (TYPE)`, the hash being the SHA-256 of the key blob in base64 without padding.
#[inline(never)]
pub fn fingerprint(public_key: &[u8], out: &mut Out<'_>) -> Result<(), FingerprintError> {
    let line = public_key.split(|&b| b == b'\n').next().unwrap_or(b"").trim_ascii();
    let mut fields = line.splitn(3, |&b| b == b' ');
    let (key_type, encoded) = (fields.next().unwrap_or(b""), fields.next().unwrap_or(b""));
    let comment = fields.next().map(<[u8]>::trim_ascii).filter(|c| !c.is_empty()).unwrap_or(b"no comment");
    let mut blob = [0u8; BLOB_LIMIT];
    let len = crate::base64::decode(encoded, &mut blob).map_err(|_| FingerprintError::NotAPublicKey)?;
    let blob = &blob[..len];
    let mut wire = Wire(blob);
    if wire.string() != Some(key_type) {
        return Err(FingerprintError::NotAPublicKey);
    }
    let (bits, name) = match crate::text::word(key_type) {
        "ssh-ed25519" => (256, "ED25519"),
        "ecdsa-sha2-nistp256" => (256, "ECDSA"),
        "ecdsa-sha2-nistp384" => (384, "ECDSA"),
        "ecdsa-sha2-nistp521" => (521, "ECDSA"),
        // RSA: exponent, then the modulus; DSA: p first.
        "ssh-rsa" => (wire.string().and_then(|_| wire.string()).map(bit_length).ok_or(FingerprintError::NotAPublicKey)?, "RSA"),
        "ssh-dss" => (wire.string().map(bit_length).ok_or(FingerprintError::NotAPublicKey)?, "DSA"),
        _ => return Err(FingerprintError::NotAPublicKey),
    };
    let mut hash = [0u8; 43];
    let hash_len = crate::base64::encode_unpadded(&crate::sha256::sha256(blob), &mut hash).unwrap_or(0);
    out.put_decimal(bits)?;
    out.put_all(&[b" SHA256:", &hash[..hash_len], b" ", comment, b" (", name.as_bytes(), b")"])?;
    Ok(())
}

/// SSH wire data (RFC 4251): length-prefixed strings one after another.
struct Wire<'a>(&'a [u8]);

impl<'a> Wire<'a> {
    fn string(&mut self) -> Option<&'a [u8]> {
        let len = u32::from_be_bytes(self.0.get(..4)?.try_into().ok()?) as usize;
        let (value, rest) = self.0.get(4..)?.split_at_checked(len)?;
        self.0 = rest;
        Some(value)
    }
}

/// The bits of an mpint's magnitude.
fn bit_length(mpint: &[u8]) -> u64 {
    let Some((first, top)) = mpint.iter().enumerate().find(|&(_, &b)| b != 0) else { return 0 };
    (mpint.len() - first) as u64 * 8 - u64::from(top.leading_zeros())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(key: &[u8]) -> Result<String, FingerprintError> {
        let mut buf = [0u8; 256];
        let mut out = Out::new(&mut buf);
        fingerprint(key, &mut out)?;
        let len = out.len();
        Ok(String::from_utf8(buf[..len].to_vec()).unwrap())
    }

    #[test]
    fn fingerprints_as_ssh_keygen_prints_them() {
        // Printed by `ssh-keygen -l -f` for these keys.
        let ed25519 = b"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIP6zWIGFsiIt1uW2eXmASHnCRo/IiaNJBUNBBBA8SwbT alice@laptop\n";
        assert_eq!(line(ed25519).unwrap(), "256 SHA256:3JdLwnW/DRQgX92499FE0PVFFuuRQx+z60vPzkbMgt4 alice@laptop (ED25519)");
        let ecdsa = b"ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBOy2XdEvmoAOZj8OE9BQ8mkzwO7wmlR0qCTwPL4S0RhLI3G0mnQmU2AxV8IL+rG4imBA447feb5tu3Rd4a5837w=";
        assert_eq!(line(ecdsa).unwrap(), "256 SHA256:Y9D7nE/mvPfAFpmof8E5Q7ZmYKrnxErVr2tu2S6iyPE no comment (ECDSA)");
        assert_eq!(line(b"ssh-rsa AAAAC3NzaC1lZDI1NTE5AAAAIP6z x"), Err(FingerprintError::NotAPublicKey));
        assert_eq!(line(b"ssh-ed25519 !!!"), Err(FingerprintError::NotAPublicKey));
        assert_eq!(line(b""), Err(FingerprintError::NotAPublicKey));
    }

    #[test]
    fn rsa_bits() {
        // e = 65537, n of 2048 bits with a leading zero byte as mpints carry.
        let mut blob = Vec::new();
        for part in [&b"ssh-rsa"[..], &[1, 0, 1], &[&[0u8, 0xc5][..], &[7u8; 255][..]].concat()] {
            blob.extend_from_slice(&(part.len() as u32).to_be_bytes());
            blob.extend_from_slice(part);
        }
        let mut encoded = [0u8; 512];
        let n = crate::base64::encode_unpadded(&blob, &mut encoded).unwrap();
        let text = [&b"ssh-rsa "[..], &encoded[..n], b" root@h"].concat();
        assert!(line(&text).unwrap().starts_with("2048 SHA256:"), "{}", line(&text).unwrap());
    }

    #[test]
    fn files() {
        assert!(is_host_key_file(b"ssh_host_ed25519_key") && is_host_key_file(b"ssh_host_rsa_key.pub"));
        assert!(is_host_key_file(b"ssh_host_rsa_key-cert.pub") && !is_host_key_file(b"sshd_config"));
        assert!(is_public_host_key_file(b"ssh_host_ecdsa_key.pub") && !is_public_host_key_file(b"ssh_host_ecdsa_key"));
        assert_eq!(given_key_file("rsa_private").unwrap(), ("ssh_host_rsa_key".try_into().unwrap(), 0o600));
        assert_eq!(given_key_file("ed25519_public").unwrap(), ("ssh_host_ed25519_key.pub".try_into().unwrap(), 0o644));
        assert_eq!(given_key_file("ecdsa_certificate").unwrap().0.as_str(), "ssh_host_ecdsa_key-cert.pub");
        assert_eq!(given_key_file("rsa_secret"), None);
        assert_eq!(given_key_file("foo_private"), None);
        assert_eq!(given_key_file("dsa_public").unwrap().0.as_str(), "ssh_host_dsa_key.pub");
        assert_eq!(given_key_file("rsa ecdsa_private"), None);
        assert_eq!(given_key_file("_private"), None);
    }
}
