//! Host names from metadata, validated before any reaches the kernel or /etc.

use core::fmt;

use crate::text::Decimal;

pub const LABEL_LIMIT: usize = 63;
pub const NAME_LIMIT: usize = 253;
// HostnameError's messages name both limits.
const _: () = assert!(LABEL_LIMIT == 63 && NAME_LIMIT == 253);
/// The kernel's hostname holds at most 64 bytes (HOST_NAME_MAX).
pub const KERNEL_LIMIT: usize = 64;

/// Positions and indexes are u32 (a name is at most NAME_LIMIT bytes), so that the error is
/// 8 bytes and a `Result<Hostname, HostnameError>` comes back in registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostnameError {
    Empty,
    /// A byte other than a letter, digit, '-' or the '.' between labels.
    BadCharacter { byte: u8, position: u32 },
    EmptyLabel { position: u32 },
    /// A label that starts or ends with '-'.
    HyphenAtLabelEdge { position: u32 },
    /// Longer than LABEL_LIMIT.
    LabelTooLong { label_index: u32 },
    /// Longer than NAME_LIMIT.
    TooLong,
}

impl fmt::Display for HostnameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            HostnameError::Empty => f.write_str("hostname is empty"),
            HostnameError::BadCharacter { byte, position } => {
                write!(f, "hostname has byte 0x{} at position {position}: only letters, digits, '-' and '.' are allowed", crate::text::Hex(byte), position = Decimal(position.into()))
            }
            HostnameError::EmptyLabel { position } => write!(f, "hostname has an empty label at position {position}", position = Decimal(position.into())),
            HostnameError::HyphenAtLabelEdge { position } => {
                write!(f, "hostname label starts or ends with '-' at position {position}", position = Decimal(position.into()))
            }
            HostnameError::LabelTooLong { label_index } => write!(f, "hostname label {} is longer than 63 bytes", Decimal(u64::from(label_index) + 1)),
            HostnameError::TooLong => f.write_str("hostname is longer than 253 bytes"),
        }
    }
}

/// A valid host name: RFC 1123 labels joined by dots.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hostname<'a> {
    fqdn: &'a str,
}

impl<'a> Hostname<'a> {
    /// Validates a name as a metadata service gives it: one trailing newline and one
    /// trailing dot (the DNS root) are dropped.
    pub fn parse(raw: &'a [u8]) -> Result<Hostname<'a>, HostnameError> {
        let mut name = raw.strip_suffix(b"\n").unwrap_or(raw);
        name = name.strip_suffix(b"\r").unwrap_or(name);
        name = name.strip_suffix(b".").unwrap_or(name);
        if name.is_empty() {
            return Err(HostnameError::Empty);
        }
        if name.len() > NAME_LIMIT {
            return Err(HostnameError::TooLong);
        }
        let mut start = 0;
        for (label_index, label) in (0..).zip(name.split(|&b| b == b'.')) {
            if label.is_empty() {
                return Err(HostnameError::EmptyLabel { position: start });
            }
            if let Some(i) = label.iter().position(|&b| !(b.is_ascii_alphanumeric() || b == b'-')) {
                return Err(HostnameError::BadCharacter { byte: label[i], position: start + i as u32 });
            }
            if label[0] == b'-' || label[label.len() - 1] == b'-' {
                return Err(HostnameError::HyphenAtLabelEdge { position: start });
            }
            if label.len() > LABEL_LIMIT {
                return Err(HostnameError::LabelTooLong { label_index });
            }
            start += label.len() as u32 + 1;
        }
        // Only ASCII letters, digits, '-' and '.' remain.
        let fqdn = core::str::from_utf8(name).map_err(|_| HostnameError::Empty)?;
        Ok(Hostname { fqdn })
    }

    pub fn fqdn(&self) -> &'a str {
        self.fqdn
    }

    /// The first label: what tiny-cloud writes to /etc/hostname and hands to the kernel
    /// (always within the kernel's 64 bytes, as a label is at most 63).
    pub fn short(&self) -> &'a str {
        self.fqdn.split('.').next().unwrap_or(self.fqdn)
    }
}

/// The short and the full host name from cloud-config's `hostname` and `fqdn` and the
/// metadata's name, by cloud-init's rules (`util.get_hostname_fqdn`): `fqdn` names the
/// full name and, less its domain, the short one unless `hostname` names that; a
/// `hostname` with a dot stands for both; the metadata's name fills in what is not given.
pub fn short_and_full<'a>(hostname: Option<&'a [u8]>, fqdn: Option<&'a [u8]>, metadata: &'a [u8]) -> (&'a [u8], &'a [u8]) {
    let first_label = |name: &'a [u8]| name.split(|&b| b == b'.').next().unwrap_or(name);
    match (hostname, fqdn) {
        (short, Some(full)) => (short.unwrap_or(first_label(full)), full),
        (Some(name), None) if name.iter().position(|&b| b == b'.').is_some_and(|dot| dot > 0) => (first_label(name), name),
        (short, None) => (short.unwrap_or(first_label(metadata)), metadata),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_names() {
        let name = Hostname::parse(b"ip-10-0-1-23.eu-west-1.compute.internal\n").unwrap();
        assert_eq!(name.fqdn(), "ip-10-0-1-23.eu-west-1.compute.internal");
        assert_eq!(name.short(), "ip-10-0-1-23");
        let name = Hostname::parse(b"web1.").unwrap();
        assert_eq!((name.fqdn(), name.short()), ("web1", "web1"));
        let label = "a".repeat(LABEL_LIMIT);
        assert_eq!(Hostname::parse(label.as_bytes()).unwrap().short().len(), KERNEL_LIMIT - 1);
        let long = [&*"a".repeat(63), &*"b".repeat(63), &*"c".repeat(63), &*"d".repeat(61)].join(".");
        assert_eq!(long.len(), NAME_LIMIT);
        assert!(Hostname::parse(long.as_bytes()).is_ok());
    }

    #[test]
    fn refusals() {
        let cases: [(&[u8], HostnameError); 10] = [
            (b"", HostnameError::Empty),
            (b"\n", HostnameError::Empty),
            (b"bad_host", HostnameError::BadCharacter { byte: b'_', position: 3 }),
            (b"a.b;reboot", HostnameError::BadCharacter { byte: b';', position: 3 }),
            (b"two words", HostnameError::BadCharacter { byte: b' ', position: 3 }),
            (b"host\x1b[2J", HostnameError::BadCharacter { byte: 0x1b, position: 4 }),
            (b"a..b", HostnameError::EmptyLabel { position: 2 }),
            (b".a", HostnameError::EmptyLabel { position: 0 }),
            (b"a.-b", HostnameError::HyphenAtLabelEdge { position: 2 }),
            (b"a-", HostnameError::HyphenAtLabelEdge { position: 0 }),
        ];
        for (raw, error) in cases {
            assert_eq!(Hostname::parse(raw), Err(error), "{:?}", String::from_utf8_lossy(raw));
        }
        let label = "a".repeat(LABEL_LIMIT + 1);
        let name = format!("ok.{label}");
        assert_eq!(Hostname::parse(name.as_bytes()), Err(HostnameError::LabelTooLong { label_index: 1 }));
        assert_eq!(HostnameError::LabelTooLong { label_index: 1 }.to_string(), "hostname label 2 is longer than 63 bytes");
        let long = format!("{}.{}", "a".repeat(60), "b.".repeat(97));
        assert_eq!(Hostname::parse(long.as_bytes()), Err(HostnameError::TooLong));
        assert_eq!(HostnameError::TooLong.to_string(), "hostname is longer than 253 bytes");
        assert_eq!(Hostname::parse("héllo".as_bytes()), Err(HostnameError::BadCharacter { byte: 0xc3, position: 1 }));
    }

    #[test]
    fn names_from_cloud_config_as_cloud_init_chooses() {
        let meta = &b"ip-10-0-1-23.ec2.internal\n"[..];
        let pick = |h: Option<&'static str>, f: Option<&'static str>| {
            let (short, full) = short_and_full(h.map(str::as_bytes), f.map(str::as_bytes), meta);
            (String::from_utf8(short.to_vec()).unwrap(), String::from_utf8(full.to_vec()).unwrap())
        };
        let pair = |a: &str, b: &str| (a.to_string(), b.to_string());
        // cloud-init's test_hostname_and_fqdn: hostname alpha with fqdn beta.example.com.
        assert_eq!(pick(Some("alpha"), Some("beta.example.com")), pair("alpha", "beta.example.com"));
        assert_eq!(pick(None, Some("beta.example.com")), pair("beta", "beta.example.com"));
        assert_eq!(pick(Some("web.example.org"), None), pair("web", "web.example.org"));
        assert_eq!(pick(Some("alpha"), None), pair("alpha", "ip-10-0-1-23.ec2.internal\n"));
        assert_eq!(pick(Some(".alpha"), None), pair(".alpha", "ip-10-0-1-23.ec2.internal\n"));
        assert_eq!(pick(None, None), pair("ip-10-0-1-23", "ip-10-0-1-23.ec2.internal\n"));
    }
}
