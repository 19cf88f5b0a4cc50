//! What the fuzz targets share: reference encoders for the round trips, and splitting an
//! input in two.

/// RFC 4648 base64 with padding: the reference the decoder's round trip is checked with.
pub fn base64_encode(data: &[u8]) -> Vec<u8> {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, &b)| n | (b as u32) << (16 - 8 * i));
        for i in 0..4 {
            out.push(if i <= chunk.len() { ALPHABET[(n >> (18 - 6 * i) & 63) as usize] } else { b'=' });
        }
    }
    out
}

/// `data` deflated by miniz_oxide and framed as RFC 1952 gzip.
pub fn gzip(data: &[u8], level: u8) -> Vec<u8> {
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3];
    out.extend(miniz_oxide::deflate::compress_to_vec(data, level.min(10)));
    out.extend(crc32(data).to_le_bytes());
    out.extend((data.len() as u32).to_le_bytes());
    out
}

pub fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in data {
        crc ^= byte as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 { crc >> 1 ^ 0xedb8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

/// The first byte picks a split point; the rest is cut there.
pub fn split(data: &[u8]) -> (&[u8], &[u8]) {
    match data.split_first() {
        Some((&at, rest)) => rest.split_at((at as usize * rest.len() / 256).min(rest.len())),
        None => (&[], &[]),
    }
}

/// Whether `inner` lies inside `outer`'s memory: a parser's answer borrowed from its input.
pub fn within(inner: &[u8], outer: &[u8]) -> bool {
    let (start, end) = (outer.as_ptr() as usize, outer.as_ptr() as usize + outer.len());
    inner.is_empty() || (inner.as_ptr() as usize >= start && inner.as_ptr() as usize + inner.len() <= end)
}
