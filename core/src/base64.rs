//! Base64 (RFC 4648, standard alphabet) decoding into a caller's buffer. Metadata
//! services and MIME wrap lines, so ASCII white space between groups is skipped. And
//! encoding without padding, as SSH fingerprints are written.

use core::fmt;

use crate::text::Decimal;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// A byte outside the alphabet, at this offset of the input.
    InvalidByte { offset: u32 },
    /// Padding where data must be, or data after padding, at this offset.
    BadPadding { offset: u32 },
    /// The input ends inside a group of four.
    Truncated,
    OutputTooLarge { limit: u32 },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidByte { offset } => write!(f, "invalid base64 byte at offset {offset}", offset = Decimal((*offset).into())),
            Error::BadPadding { offset } => write!(f, "misplaced base64 padding at offset {offset}", offset = Decimal((*offset).into())),
            Error::Truncated => f.write_str("base64 ends inside a group of four"),
            Error::OutputTooLarge { limit } => write!(f, "decoded base64 larger than {limit} bytes", limit = Decimal((*limit).into())),
        }
    }
}

/// Most bytes `encoded_len` bytes of base64 can decode to.
pub const fn decoded_len_max(encoded_len: usize) -> usize {
    encoded_len / 4 * 3 + 3
}

fn value(byte: u8) -> Option<u8> {
    match byte {
        b'A'..=b'Z' => Some(byte - b'A'),
        b'a'..=b'z' => Some(byte - b'a' + 26),
        b'0'..=b'9' => Some(byte - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    }
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Encodes `input` into `out` without `=` padding; `None` when `out` is too small.
pub fn encode_unpadded(input: &[u8], out: &mut [u8]) -> Option<usize> {
    let mut written = 0;
    for group in input.chunks(3) {
        let bits = group.iter().enumerate().fold(0u32, |acc, (i, &b)| acc | u32::from(b) << (16 - 8 * i));
        for i in 0..=group.len() {
            *out.get_mut(written)? = ALPHABET[(bits >> (18 - 6 * i) & 63) as usize];
            written += 1;
        }
    }
    Some(written)
}

/// Decodes `input` into `out`, returning the decoded length.
pub fn decode(input: &[u8], out: &mut [u8]) -> Result<usize, Error> {
    let mut written = 0;
    let mut group = [0u8; 4];
    let mut filled = 0;
    let mut padding = 0;
    for (offset, &byte) in (0u32..).zip(input) {
        if byte.is_ascii_whitespace() {
            continue;
        }
        if byte == b'=' {
            // Padding only completes a group that has at least two data bytes.
            if filled + padding < 2 {
                return Err(Error::BadPadding { offset });
            }
            padding += 1;
        } else {
            if padding > 0 {
                return Err(Error::BadPadding { offset });
            }
            group[filled] = value(byte).ok_or(Error::InvalidByte { offset })?;
            filled += 1;
        }
        if filled + padding == 4 {
            written = put_group(&group, filled, out, written)?;
            if padding > 0 {
                // Anything but white space after the padding is an error.
                if let Some(extra) = input[offset as usize + 1..].iter().position(|b| !b.is_ascii_whitespace()) {
                    return Err(Error::BadPadding { offset: offset + 1 + extra as u32 });
                }
                return Ok(written);
            }
            filled = 0;
        }
    }
    match filled + padding {
        0 => Ok(written),
        // Unpadded input (as some services send) ends in a group of two or three.
        2 | 3 if padding == 0 => put_group(&group, filled, out, written),
        _ => Err(Error::Truncated),
    }
}

/// Base64 text decoded over itself (the output never overtakes the input, decoding
/// group by group); the decoded length.
pub fn decode_in_place(buf: &mut [u8]) -> Result<usize, Error> {
    let len = buf.len();
    let mut decoded = 0;
    let mut at = 0;
    let mut group = [0u8; 4];
    // Where each byte of the group is in the input, so that an error names its offset
    // there, as `decode` does, not its place in the group.
    let mut offsets = [0u32; 4];
    let mut filled = 0;
    while at < len {
        let byte = buf[at];
        at += 1;
        if byte.is_ascii_whitespace() {
            continue;
        }
        group[filled] = byte;
        offsets[filled] = (at - 1) as u32;
        filled += 1;
        // A last group may be short, and white space may follow it.
        if filled == 4 || buf[at..].iter().all(u8::is_ascii_whitespace) {
            let mut three = [0u8; 3];
            let n = decode(&group[..filled], &mut three).map_err(|e| match e {
                Error::InvalidByte { offset } => Error::InvalidByte { offset: offsets[offset as usize & 3] },
                Error::BadPadding { offset } => Error::BadPadding { offset: offsets[offset as usize & 3] },
                e => e,
            })?;
            buf[decoded..decoded + n].copy_from_slice(&three[..n]);
            decoded += n;
            if filled == 4 && group[3] == b'=' && buf[at..len].iter().any(|b| !b.is_ascii_whitespace()) {
                return Err(Error::BadPadding { offset: at as u32 });
            }
            filled = 0;
        }
    }
    Ok(decoded)
}

/// Writes the `filled - 1` bytes that the first `filled` (2 to 4) values of `group` hold
/// at `out[written..]`; returns where the output has reached. One copy for the loop and
/// the unpadded tail.
fn put_group(group: &[u8; 4], filled: usize, out: &mut [u8], written: usize) -> Result<usize, Error> {
    let bytes = [group[0] << 2 | group[1] >> 4, group[1] << 4 | group[2] >> 2, group[2] << 6 | group[3]];
    let count = filled - 1;
    let limit = out.len() as u32;
    out.get_mut(written..written + count).ok_or(Error::OutputTooLarge { limit })?.copy_from_slice(&bytes[..count]);
    Ok(written + count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_place_as_into_another_buffer() {
        for input in [&b"aGVsbG8="[..], b"aGVs\nbG8=\n", b"QUJD\nQQ\n", b"QQ", b" QUJD "] {
            let mut out = [0u8; 16];
            let expected = decode(input, &mut out).unwrap();
            let mut buf = input.to_vec();
            let len = decode_in_place(&mut buf).unwrap();
            assert_eq!(&buf[..len], &out[..expected], "{}", String::from_utf8_lossy(input));
        }
        // A short last group is checked too, white space after it or not.
        for bad in [&b"\xff\xff\t"[..], b"QUJD!!\n", b"QQ==QQ==", b"Q"] {
            assert!(decode_in_place(&mut bad.to_vec()).is_err(), "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn in_place_errors_name_the_offset_in_the_input_as_decode_does() {
        for bad in [&b"QUJD\nQ!=="[..], b"QUJD =QQQ", b"QU\nJ!", b"QUJD\n\nQUJ*"] {
            let mut out = [0u8; 16];
            let expected = decode(bad, &mut out);
            assert!(matches!(expected, Err(Error::InvalidByte { .. } | Error::BadPadding { .. })), "{expected:?}");
            assert_eq!(decode_in_place(&mut bad.to_vec()), expected, "{}", String::from_utf8_lossy(bad));
        }
        assert_eq!(decode_in_place(&mut b"QUJD\nQ!==".to_vec()), Err(Error::InvalidByte { offset: 6 }));
    }

    fn decoded(input: &[u8]) -> Result<Vec<u8>, Error> {
        let mut out = vec![0u8; decoded_len_max(input.len())];
        decode(input, &mut out).map(|n| out[..n].to_vec())
    }

    #[test]
    fn rfc4648_vectors() {
        let cases: [(&[u8], &[u8]); 7] = [
            (b"", b""),
            (b"Zg==", b"f"),
            (b"Zm8=", b"fo"),
            (b"Zm9v", b"foo"),
            (b"Zm9vYg==", b"foob"),
            (b"Zm9vYmE=", b"fooba"),
            (b"Zm9vYmFy", b"foobar"),
        ];
        for (input, output) in cases {
            assert_eq!(decoded(input).unwrap(), output);
        }
    }

    #[test]
    fn white_space_and_missing_padding() {
        assert_eq!(decoded(b"Zm9v\r\nYmFy\n").unwrap(), b"foobar");
        assert_eq!(decoded(b" Zm9 vYg== \n").unwrap(), b"foob");
        assert_eq!(decoded(b"Zm9vYg").unwrap(), b"foob");
        assert_eq!(decoded(b"Zm9vYmE").unwrap(), b"fooba");
        assert_eq!(decoded(b"+/+/").unwrap(), [0xfb, 0xff, 0xbf]);
    }

    #[test]
    fn errors() {
        assert_eq!(decoded(b"Zm9v!"), Err(Error::InvalidByte { offset: 4 }));
        assert_eq!(decoded(b"Zm9v-_"), Err(Error::InvalidByte { offset: 4 }));
        assert_eq!(decoded(b"Z==="), Err(Error::BadPadding { offset: 1 }));
        assert_eq!(decoded(b"Zg==Zg=="), Err(Error::BadPadding { offset: 4 }));
        assert_eq!(decoded(b"Zm=v"), Err(Error::BadPadding { offset: 3 }));
        assert_eq!(decoded(b"Zm9vY"), Err(Error::Truncated));
        assert_eq!(decoded(b"Zg="), Err(Error::Truncated));
    }

    #[test]
    fn output_limit_at_the_boundary() {
        let mut exact = [0u8; 6];
        assert_eq!(decode(b"Zm9vYmFy", &mut exact), Ok(6));
        let mut short = [0u8; 5];
        assert_eq!(decode(b"Zm9vYmFy", &mut short), Err(Error::OutputTooLarge { limit: 5 }));
        let mut short = [0u8; 1];
        assert_eq!(decode(b"Zm8", &mut short), Err(Error::OutputTooLarge { limit: 1 }));
    }

    #[test]
    fn garbage_never_panics() {
        let mut garbage = crate::fuzz::Garbage::new(99);
        for _ in 0..400 {
            let input = garbage.text(&[b"A", b"Z", b"a", b"z", b"0", b"9", b"+", b"/", b"=", b" ", b"\n", b"!"], 400);
            let mut out = [0u8; 64];
            crate::fuzz::seed("base64", &input);
            if let Ok(len) = decode(&input, &mut out) {
                let significant = input.iter().filter(|b| !b.is_ascii_whitespace() && **b != b'=').count();
                assert_eq!(len, significant * 3 / 4, "{:?}", String::from_utf8_lossy(&input));
            }
        }
    }
}
