//! Small readings of text that several parsers share.

/// A decimal number of at most `max_digits` digits (and no sign, space or other byte).
pub fn decimal(digits: &[u8], max_digits: usize) -> Option<u64> {
    let valid = !digits.is_empty() && digits.len() <= max_digits.min(19) && digits.iter().all(u8::is_ascii_digit);
    valid.then(|| digits.iter().fold(0, |n, &d| n * 10 + u64::from(d - b'0')))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals() {
        assert_eq!(decimal(b"0", 4), Some(0));
        assert_eq!(decimal(b"9999", 4), Some(9999));
        assert_eq!(decimal(b"10000", 4), None);
        assert_eq!(decimal(b"18446744073709551615", 30), None);
        assert_eq!(decimal(b"9999999999999999999", 30), Some(9_999_999_999_999_999_999));
        for bad in [&b""[..], b"-1", b"+1", b" 1", b"1 ", b"1e3", b"x"] {
            assert_eq!(decimal(bad, 10), None);
        }
    }
}
