//! AWS's `public-keys/` listing (`0=my-key\n1=other`): the key indices it names, or
//! where it is not that. Its own module so that `imds` can carry its error without
//! importing `aws`, which imports `imds`.

use super::metadata::KEYS_LIMIT;
use crate::text::Decimal;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyListingError {
    /// A line that is not `<index>=<name>`.
    BadLine { line: usize },
    TooManyKeys { limit: usize },
}

impl core::fmt::Display for KeyListingError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("public-keys listing: ")?;
        match self {
            KeyListingError::BadLine { line } => write!(f, "line {line} is not <index>=<name>", line = Decimal(*line as u64)),
            KeyListingError::TooManyKeys { limit } => write!(f, "more than {limit} keys", limit = Decimal(*limit as u64)),
        }
    }
}

/// The key indices of a `public-keys/` listing, in listing order.
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
    fn errors_say_they_are_the_listings() {
        assert_eq!(KeyListingError::BadLine { line: 2 }.to_string(), "public-keys listing: line 2 is not <index>=<name>");
        assert_eq!(KeyListingError::TooManyKeys { limit: 16 }.to_string(), "public-keys listing: more than 16 keys");
    }
}
