//! gzip (RFC 1952): the framing around a raw deflate stream, which `inflate` decodes.
//! The caller's output buffer is the limit: a document that would expand past it (a
//! decompression bomb) is refused before anything of it is used.

use core::fmt;

use crate::crc32::crc32;
use crate::inflate::{inflate, InflateError};
use crate::text::Decimal;

/// The most a deflate stream expands (258 bytes from each 2 bits, RFC 1951): room for a
/// gunzipped document is sized to its compressed length with this.
pub const DEFLATE_RATIO_LIMIT: usize = 1032;

const FHCRC: u8 = 0x02;
const FEXTRA: u8 = 0x04;
const FNAME: u8 = 0x08;
const FCOMMENT: u8 = 0x10;
const RESERVED: u8 = 0xe0;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GzipError {
    /// Not gzip: the magic bytes or compression method differ.
    NotGzip,
    ReservedFlags,
    /// The data ends inside the header, the deflate stream or the trailer.
    Truncated,
    HeaderCrc,
    /// The deflate stream is invalid.
    Corrupt,
    Crc,
    Size,
    OutputTooLarge { limit: usize },
}

impl fmt::Display for GzipError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GzipError::NotGzip => f.write_str("not gzip data"),
            GzipError::ReservedFlags => f.write_str("gzip header uses reserved flags"),
            GzipError::Truncated => f.write_str("gzip data is truncated"),
            GzipError::HeaderCrc => f.write_str("gzip header CRC mismatch"),
            GzipError::Corrupt => f.write_str("gzip deflate stream is corrupt"),
            GzipError::Crc => f.write_str("gzip CRC32 mismatch"),
            GzipError::Size => f.write_str("gzip size (ISIZE) mismatch"),
            GzipError::OutputTooLarge { limit } => write!(f, "gzip data expands past {limit} bytes", limit = Decimal(*limit as u64)),
        }
    }
}

pub fn is_gzip(data: &[u8]) -> bool {
    data.starts_with(&[0x1f, 0x8b])
}

/// The name of another compression `data` starts with, which wisp does not undo.
pub fn other_compression(data: &[u8]) -> Option<&'static str> {
    /// The names, in the order of `MAGIC`: a list of words rather than a `&str` beside each
    /// magic, 16 bytes an entry besides the text.
    const NAMES: &str = "bzip2 xz zstd lzma lzop lz4";
    const MAGIC: [&[u8]; 6] = [b"BZh", b"\xfd7zXZ\x00", b"\x28\xb5\x2f\xfd", b"\x5d\x00\x00", b"\x89LZO", b"\x04\x22\x4d\x18"];
    MAGIC.iter().position(|magic| data.starts_with(magic)).map(|index| crate::text::nth_word(NAMES, index))
}

/// Decompresses every member of `input` into `out`. Returns the length.
pub fn decompress(input: &[u8], out: &mut [u8]) -> Result<usize, GzipError> {
    let mut at = 0;
    let mut written = 0;
    loop {
        let (consumed, produced) = member(input.get(at..).unwrap_or_default(), out, written)?;
        at += consumed;
        written += produced;
        // Concatenated members form one document (as `cat a.gz b.gz` and gunzip agree);
        // anything else after a member is an error.
        if at == input.len() {
            return Ok(written);
        }
        if !is_gzip(input.get(at..).unwrap_or_default()) {
            return Err(GzipError::Corrupt);
        }
    }
}

/// One member at the start of `input`, inflated to `out[written..]`: (bytes read, bytes
/// written).
fn member(input: &[u8], out: &mut [u8], written: usize) -> Result<(usize, usize), GzipError> {
    if input.len() < 10 || !is_gzip(input) || input[2] != 8 {
        return Err(if input.len() < 10 && is_gzip(input) { GzipError::Truncated } else { GzipError::NotGzip });
    }
    let flags = input[3];
    if flags & RESERVED != 0 {
        return Err(GzipError::ReservedFlags);
    }
    let mut at = 10;
    if flags & FEXTRA != 0 {
        let len = u16::from_le_bytes([*input.get(at).ok_or(GzipError::Truncated)?, *input.get(at + 1).ok_or(GzipError::Truncated)?]);
        at += 2 + usize::from(len);
    }
    for flag in [FNAME, FCOMMENT] {
        if flags & flag != 0 {
            let end = input.get(at..).and_then(|rest| rest.iter().position(|&b| b == 0)).ok_or(GzipError::Truncated)?;
            at += end + 1;
        }
    }
    if flags & FHCRC != 0 {
        let (head, stored) = input.split_at_checked(at).ok_or(GzipError::Truncated)?;
        let stored: [u8; 2] = stored.get(..2).and_then(|s| s.try_into().ok()).ok_or(GzipError::Truncated)?;
        if u16::from_le_bytes(stored) != crc32(head) as u16 {
            return Err(GzipError::HeaderCrc);
        }
        at += 2;
    }
    let stream = input.get(at..).ok_or(GzipError::Truncated)?;
    let (consumed, end) = inflate(stream, out, written).map_err(|e| match e {
        InflateError::Truncated => GzipError::Truncated,
        InflateError::Corrupt => GzipError::Corrupt,
        InflateError::OutputFull => GzipError::OutputTooLarge { limit: out.len() },
    })?;
    let produced = end - written;
    let trailer: [u8; 8] = stream.get(consumed..consumed + 8).and_then(|t| t.try_into().ok()).ok_or(GzipError::Truncated)?;
    let [c0, c1, c2, c3, s0, s1, s2, s3] = trailer;
    if crc32(out.get(written..written + produced).unwrap_or_default()) != u32::from_le_bytes([c0, c1, c2, c3]) {
        return Err(GzipError::Crc);
    }
    if produced as u32 != u32::from_le_bytes([s0, s1, s2, s3]) {
        return Err(GzipError::Size);
    }
    Ok((at + consumed + 8, produced))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::process::{Command, Stdio};

    /// `gzip` itself, so the framing is checked against the reference tool.
    fn gzip(data: &[u8], args: &[&str]) -> Vec<u8> {
        let mut child = Command::new("gzip").args(args).arg("-c").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
        child.stdin.take().unwrap().write_all(data).unwrap();
        child.wait_with_output().unwrap().stdout
    }

    fn run(input: &[u8], limit: usize) -> Result<Vec<u8>, GzipError> {
        let mut out = vec![0u8; limit];
        decompress(input, &mut out).map(|n| out[..n].to_vec())
    }

    #[test]
    fn round_trips_with_gzip() {
        let text = b"#!/bin/sh\necho hello from compressed user-data\n".repeat(50);
        assert_eq!(run(&gzip(&text, &[]), 4096).unwrap(), text);
        assert_eq!(run(&gzip(&text, &["-n", "-9"]), 4096).unwrap(), text);
        assert_eq!(run(&gzip(b"", &[]), 16).unwrap(), b"");
        // Two members, as `cat a.gz b.gz`.
        let both = [gzip(b"first\n", &[]), gzip(b"second\n", &[])].concat();
        assert_eq!(run(&both, 64).unwrap(), b"first\nsecond\n");
    }

    #[test]
    fn header_fields() {
        // FNAME (gzip stores the name when compressing a file), plus FHCRC and FEXTRA set by hand.
        let mut data = gzip(b"payload", &["-n"]);
        let body = data.split_off(10);
        let mut header = data;
        header[3] = FEXTRA | FNAME | FCOMMENT | FHCRC;
        header.extend_from_slice(&[3, 0, b'a', b'b', b'c']);
        header.extend_from_slice(b"name\0comment\0");
        let crc = crc32(&header) as u16;
        header.extend_from_slice(&crc.to_le_bytes());
        let full = [header.clone(), body.clone()].concat();
        assert_eq!(run(&full, 64).unwrap(), b"payload");
        let mut bad_crc = full.clone();
        bad_crc[header.len() - 1] ^= 1;
        assert_eq!(run(&bad_crc, 64), Err(GzipError::HeaderCrc));
    }

    #[test]
    fn errors() {
        let good = gzip(b"some user-data\n", &[]);
        assert_eq!(run(b"#!/bin/sh\n", 64), Err(GzipError::NotGzip));
        assert_eq!(run(&good[..5], 64), Err(GzipError::Truncated));
        assert_eq!(run(&good[..good.len() - 4], 64), Err(GzipError::Truncated));
        assert_eq!(run(&good[..good.len() / 2], 64), Err(GzipError::Truncated));
        let mut reserved = good.clone();
        reserved[3] |= 0x20;
        assert_eq!(run(&reserved, 64), Err(GzipError::ReservedFlags));
        let mut crc = good.clone();
        let n = crc.len();
        crc[n - 8] ^= 1;
        assert_eq!(run(&crc, 64), Err(GzipError::Crc));
        let mut size = good.clone();
        size[n - 4] ^= 1;
        assert_eq!(run(&size, 64), Err(GzipError::Size));
        let mut trailing = good.clone();
        trailing.extend_from_slice(b"junk");
        assert_eq!(run(&trailing, 64), Err(GzipError::Corrupt));
        // Exactly fits, then one byte short.
        assert!(run(&good, 15).is_ok());
        assert_eq!(run(&good, 14), Err(GzipError::OutputTooLarge { limit: 14 }));
    }

    #[test]
    fn bomb_is_refused() {
        let bomb = gzip(&vec![0u8; 8 << 20], &["-9"]);
        assert!(bomb.len() < 16 * 1024);
        assert_eq!(run(&bomb, 1 << 20), Err(GzipError::OutputTooLarge { limit: 1 << 20 }));
    }

    #[test]
    fn other_compressions_are_named() {
        assert_eq!(other_compression(b"BZh91AY&SY"), Some("bzip2"));
        assert_eq!(other_compression(b"\xfd7zXZ\x00\x00"), Some("xz"));
        assert_eq!(other_compression(b"\x28\xb5\x2f\xfd\x04"), Some("zstd"));
        assert_eq!(other_compression(b"\x5d\x00\x00\x80"), Some("lzma"));
        assert_eq!(other_compression(b"\x89LZO\x00"), Some("lzop"));
        assert_eq!(other_compression(b"\x04\x22\x4d\x18\x64"), Some("lz4"));
        assert_eq!(other_compression(b"\x04\x22\x4d"), None);
        assert_eq!(other_compression(b"#!/bin/sh"), None);
    }

    #[test]
    fn garbage_never_panics() {
        let good = gzip(b"#cloud-config\nhostname: x\n", &[]);
        crate::fuzz::seed("gzip", &good);
        let mut garbage = crate::fuzz::Garbage::new(31);
        for _ in 0..3000 {
            let data = garbage.mutated(&good, 0..good.len(), 3);
            let mut out = [0u8; 256];
            if let Ok(len) = decompress(&data, &mut out) {
                // Accepted only with the CRC and length its trailer promises.
                let trailer = &data[data.len() - 8..];
                assert_eq!(crate::crc32::crc32(&out[..len]).to_le_bytes(), trailer[..4]);
                assert_eq!((len as u32).to_le_bytes(), trailer[4..]);
            }
        }
    }
}
