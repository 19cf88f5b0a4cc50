//! Amazon EC2's instance metadata service, version 2: a session token from a PUT, then
//! GETs that carry it.

use super::Item;

pub const TOKEN_PATH: &str = "/latest/api/token";
pub const TOKEN_TTL_HEADER: &str = "X-aws-ec2-metadata-token-ttl-seconds";
pub const TOKEN_HEADER: &str = "X-aws-ec2-metadata-token";
pub const KEYS_PATH: &str = "/latest/meta-data/public-keys/";

/// Most keys wisp installs from one instance's listing.
pub const KEYS_LIMIT: usize = 16;

/// The path of an item served as one document. `SshKeys` is a listing followed by one
/// request per key (`key_path`), so it has no single path.
pub const fn path(item: Item) -> Option<&'static str> {
    match item {
        Item::InstanceId => Some("/latest/meta-data/instance-id"),
        Item::Hostname => Some("/latest/meta-data/hostname"),
        Item::LocalHostname => Some("/latest/meta-data/local-hostname"),
        Item::UserData => Some("/latest/user-data"),
        Item::SshKeys => None,
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyListingError {
    /// A line that is not `<index>=<name>`.
    BadLine { line: usize },
    TooManyKeys { limit: usize },
}

impl core::fmt::Display for KeyListingError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            KeyListingError::BadLine { line } => {
                write!(f, "public-keys listing: line {line} is not <index>=<name>")
            }
            KeyListingError::TooManyKeys { limit } => {
                write!(f, "public-keys listing: more than {limit} keys")
            }
        }
    }
}

/// The key indices of a `public-keys/` listing (`0=my-key\n1=other`), in listing order.
pub fn parse_key_listing(body: &[u8]) -> Result<heapless::Vec<u16, KEYS_LIMIT>, KeyListingError> {
    let mut indices = heapless::Vec::new();
    let lines = body.split(|&b| b == b'\n').map(|line| line.strip_suffix(b"\r").unwrap_or(line));
    for (number, line) in lines.enumerate().filter(|(_, line)| !line.is_empty()) {
        let bad = KeyListingError::BadLine { line: number + 1 };
        let equals = line.iter().position(|&b| b == b'=').ok_or(bad)?;
        let index = parse_index(&line[..equals]).ok_or(bad)?;
        indices.push(index).map_err(|_| KeyListingError::TooManyKeys { limit: KEYS_LIMIT })?;
    }
    Ok(indices)
}

fn parse_index(digits: &[u8]) -> Option<u16> {
    crate::text::decimal(digits, 4).map(|n| n as u16)
}

/// `/latest/meta-data/public-keys/<index>/openssh-key`.
pub fn key_path(index: u16) -> heapless::String<64> {
    let mut path = heapless::String::new();
    // Cannot fail: the longest result is 52 bytes.
    let _ = core::fmt::write(&mut path, format_args!("{KEYS_PATH}{index}/openssh-key"));
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listing() {
        crate::fuzz::seed("aws_keys", b"0=my-key\n1=other key\r\n12=x");
        let indices = parse_key_listing(b"0=my-key\n1=other key\r\n12=x").unwrap();
        assert_eq!(indices.as_slice(), &[0, 1, 12]);
        assert!(parse_key_listing(b"").unwrap().is_empty());
        assert!(parse_key_listing(b"\n").unwrap().is_empty());
    }

    #[test]
    fn listing_errors() {
        assert_eq!(parse_key_listing(b"0=a\nkey"), Err(KeyListingError::BadLine { line: 2 }));
        assert_eq!(parse_key_listing(b"x=a"), Err(KeyListingError::BadLine { line: 1 }));
        assert_eq!(parse_key_listing(b"=a"), Err(KeyListingError::BadLine { line: 1 }));
        assert_eq!(parse_key_listing(b"99999=a"), Err(KeyListingError::BadLine { line: 1 }));
        let many: String = (0..=KEYS_LIMIT).map(|i| format!("{i}=k\n")).collect();
        assert_eq!(
            parse_key_listing(many.as_bytes()),
            Err(KeyListingError::TooManyKeys { limit: KEYS_LIMIT })
        );
        let just_enough: String = (0..KEYS_LIMIT).map(|i| format!("{i}=k\n")).collect();
        assert_eq!(parse_key_listing(just_enough.as_bytes()).unwrap().len(), KEYS_LIMIT);
    }

    #[test]
    fn paths() {
        assert_eq!(key_path(0).as_str(), "/latest/meta-data/public-keys/0/openssh-key");
        assert_eq!(key_path(9999).as_str(), "/latest/meta-data/public-keys/9999/openssh-key");
        assert_eq!(path(Item::UserData), Some("/latest/user-data"));
        assert_eq!(Item::from_key(b"@ssh-keys"), Some(Item::SshKeys));
        assert_eq!(Item::from_key(b"ssh-keys"), None);
    }
}
