//! DEFLATE (RFC 1951), the compressed stream inside gzip: stored, fixed-Huffman and
//! dynamic-Huffman blocks, each Huffman code decoded canonically one bit at a time, as
//! zlib's contrib/puff does. Small rather than fast: about 2 KB of code where
//! miniz_oxide's table-driven inflater with its fast path was 8 KB, for user-data that is
//! a few kilobytes (16 MiB of text still decodes in a fraction of a second).
//!
//! The output buffer is the only memory: a back-reference reads what this stream wrote
//! before it, and a stream that would write past the buffer's end stops with
//! `OutputFull` before writing anything beyond it.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InflateError {
    /// The input ends inside the stream.
    Truncated,
    /// Not a valid DEFLATE stream: a reserved block type, a bad code, a distance before
    /// the start of the output.
    Corrupt,
    /// The output does not fit in the caller's buffer.
    OutputFull,
}

use InflateError::{Corrupt, OutputFull, Truncated};

/// Longest code, in bits.
const MAX_BITS: usize = 15;
/// Literal/length symbols (286 used, 288 in the fixed code) and distance symbols.
const LITERAL_LENGTH_SYMBOLS: usize = 288;
const DISTANCE_SYMBOLS: usize = 30;

/// Length symbols 257..=285: base length and extra bits.
const LENGTH_BASE: [u16; 29] = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258];
const LENGTH_EXTRA: [u8; 29] = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0];
/// Distance symbols 0..=29: base distance and extra bits.
const DISTANCE_BASE: [u16; 30] =
    [1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577];
const DISTANCE_EXTRA: [u8; 30] = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13];
/// The order a dynamic block lists the code-length code's lengths in.
const CODE_LENGTH_ORDER: [u8; 19] = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15];

/// Inflates the stream at the start of `input` into `out[start..]`: returns (bytes of
/// `input` read, up to the byte that holds the stream's last bit; the end of the output).
pub fn inflate(input: &[u8], out: &mut [u8], start: usize) -> Result<(usize, usize), InflateError> {
    let mut s = State { input, at: 0, bits: 0, count: 0, out, start, end: start };
    loop {
        let last = s.bits(1)?;
        match s.bits(2)? {
            0 => s.stored()?,
            1 => s.fixed()?,
            2 => s.dynamic()?,
            _ => return Err(Corrupt),
        }
        if last == 1 {
            return Ok((s.at, s.end));
        }
    }
}

struct State<'i, 'o> {
    input: &'i [u8],
    /// The next byte of `input` to take bits from.
    at: usize,
    /// Bits taken and not yet used, the next one lowest; fewer than 8 between calls.
    bits: u32,
    count: u32,
    out: &'o mut [u8],
    /// Where this stream's output starts, and where it has reached.
    start: usize,
    end: usize,
}

/// A canonical Huffman code: how many codes there are of each length, and the symbols
/// ordered by code.
struct Huffman {
    count: [u16; MAX_BITS + 1],
    symbol: [u16; LITERAL_LENGTH_SYMBOLS],
    /// Codes no symbol has: 0 for a complete code.
    unused: i32,
}

impl Huffman {
    /// The code for these lengths, one per symbol (0: the symbol is unused). An
    /// over-subscribed set is corrupt; an incomplete one is built, and `is_usable` says
    /// whether the block may use it.
    fn new(lengths: &[u8]) -> Result<Huffman, InflateError> {
        let mut code = Huffman { count: [0; MAX_BITS + 1], symbol: [0; LITERAL_LENGTH_SYMBOLS], unused: 1 };
        for &length in lengths {
            code.count[usize::from(length)] += 1;
        }
        let mut offsets = [0u16; MAX_BITS + 1];
        for length in 1..=MAX_BITS {
            code.unused = (code.unused << 1) - i32::from(code.count[length]);
            if code.unused < 0 {
                return Err(Corrupt);
            }
            if length < MAX_BITS {
                offsets[length + 1] = offsets[length] + code.count[length];
            }
        }
        for (symbol, &length) in lengths.iter().enumerate() {
            if length != 0 {
                let slot = &mut offsets[usize::from(length)];
                code.symbol[usize::from(*slot)] = symbol as u16;
                *slot += 1;
            }
        }
        Ok(code)
    }

    /// Whether a dynamic block may use the code: complete, or (as zlib allows) a single
    /// symbol of one bit. A stream using a code that is missing fails in `decode`.
    fn is_usable(&self) -> bool {
        self.unused == 0 || (self.count[1] == 1 && self.count[2..].iter().all(|&n| n == 0))
    }
}

impl State<'_, '_> {
    /// The next `need` bits (at most 16), first bit lowest.
    fn bits(&mut self, need: u32) -> Result<u32, InflateError> {
        let mut bits = self.bits;
        while self.count < need {
            let byte = *self.input.get(self.at).ok_or(Truncated)?;
            self.at += 1;
            bits |= u32::from(byte) << self.count;
            self.count += 8;
        }
        self.bits = bits >> need;
        self.count -= need;
        Ok(bits & ((1 << need) - 1))
    }

    /// The next symbol in `code`, read a bit at a time: canonical codes of one length are
    /// consecutive numbers, so each length's codes are a range to check.
    fn decode(&mut self, code: &Huffman) -> Result<usize, InflateError> {
        let (mut value, mut first, mut index) = (0i32, 0i32, 0i32);
        for length in 1..=MAX_BITS {
            value |= self.bits(1)? as i32;
            let count = i32::from(code.count[length]);
            if value - first < count {
                return Ok(usize::from(code.symbol[(index + value - first) as usize]));
            }
            index += count;
            first = (first + count) << 1;
            value <<= 1;
        }
        Err(Corrupt)
    }

    fn put(&mut self, byte: u8) -> Result<(), InflateError> {
        *self.out.get_mut(self.end).ok_or(OutputFull)? = byte;
        self.end += 1;
        Ok(())
    }

    /// A stored block: the rest of the current byte skipped, then LEN, its complement and
    /// LEN bytes.
    fn stored(&mut self) -> Result<(), InflateError> {
        self.bits = 0;
        self.count = 0;
        let header = self.input.get(self.at..self.at + 4).ok_or(Truncated)?;
        let length = u16::from_le_bytes([header[0], header[1]]);
        if length != !u16::from_le_bytes([header[2], header[3]]) {
            return Err(Corrupt);
        }
        self.at += 4;
        let data = self.input.get(self.at..self.at + usize::from(length)).ok_or(Truncated)?;
        self.out.get_mut(self.end..self.end + data.len()).ok_or(OutputFull)?.copy_from_slice(data);
        self.at += data.len();
        self.end += data.len();
        Ok(())
    }

    /// A block in the fixed code of RFC 1951 3.2.6.
    fn fixed(&mut self) -> Result<(), InflateError> {
        let mut lengths = [8u8; LITERAL_LENGTH_SYMBOLS];
        lengths[144..256].fill(9);
        lengths[256..280].fill(7);
        self.codes(&Huffman::new(&lengths)?, &Huffman::new(&[5; DISTANCE_SYMBOLS])?)
    }

    /// A block that carries its own codes, themselves coded (RFC 1951 3.2.7).
    fn dynamic(&mut self) -> Result<(), InflateError> {
        let literal_lengths = self.bits(5)? as usize + 257;
        let distances = self.bits(5)? as usize + 1;
        let code_lengths = self.bits(4)? as usize + 4;
        if literal_lengths > 286 || distances > DISTANCE_SYMBOLS {
            return Err(Corrupt);
        }
        let mut lengths = [0u8; 286 + DISTANCE_SYMBOLS];
        for &symbol in &CODE_LENGTH_ORDER[..code_lengths] {
            lengths[usize::from(symbol)] = self.bits(3)? as u8;
        }
        let length_code = Huffman::new(&lengths[..19])?;
        if length_code.unused != 0 {
            return Err(Corrupt);
        }
        let total = literal_lengths + distances;
        let mut index = 0;
        while index < total {
            let symbol = self.decode(&length_code)?;
            let (value, repeat) = match symbol {
                0..16 => (symbol as u8, 1),
                16 => (*lengths.get(index.wrapping_sub(1)).ok_or(Corrupt)?, 3 + self.bits(2)?),
                17 => (0, 3 + self.bits(3)?),
                _ => (0, 11 + self.bits(7)?),
            };
            let run = lengths.get_mut(index..index + repeat as usize).filter(|_| index + repeat as usize <= total).ok_or(Corrupt)?;
            run.fill(value);
            index += repeat as usize;
        }
        // Without an end-of-block code the block could never end.
        if lengths[256] == 0 {
            return Err(Corrupt);
        }
        let (literal, distance) = lengths[..total].split_at(literal_lengths);
        let literal_code = Huffman::new(literal)?;
        let distance_code = Huffman::new(distance)?;
        if !literal_code.is_usable() || !distance_code.is_usable() {
            return Err(Corrupt);
        }
        self.codes(&literal_code, &distance_code)
    }

    /// A block's symbols up to its end-of-block code: literals, and lengths with their
    /// distances back into the output.
    fn codes(&mut self, literal: &Huffman, distance: &Huffman) -> Result<(), InflateError> {
        loop {
            let symbol = self.decode(literal)?;
            if symbol < 256 {
                self.put(symbol as u8)?;
                continue;
            }
            if symbol == 256 {
                return Ok(());
            }
            let index = symbol - 257;
            let base = *LENGTH_BASE.get(index).ok_or(Corrupt)?;
            let length = usize::from(base) + self.bits(u32::from(LENGTH_EXTRA[index]))? as usize;
            let index = self.decode(distance)?;
            let base = *DISTANCE_BASE.get(index).ok_or(Corrupt)?;
            let back = usize::from(base) + self.bits(u32::from(DISTANCE_EXTRA[index]))? as usize;
            if back > self.end - self.start {
                return Err(Corrupt);
            }
            for _ in 0..length {
                self.put(self.out[self.end - back])?;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(input: &[u8], limit: usize) -> Result<Vec<u8>, InflateError> {
        let mut out = vec![0u8; limit];
        inflate(input, &mut out, 0).map(|(_, end)| out[..end].to_vec())
    }

    #[test]
    fn stored_and_fixed_blocks() {
        // A stored block holding "abc" (final bit set, type 0, padding to the byte).
        assert_eq!(run(&[0x01, 3, 0, 0xfc, 0xff, b'a', b'b', b'c'], 16).unwrap(), b"abc");
        // Python's zlib.compress(b"hello hello hello", wbits=-15): a fixed block with a
        // back-reference.
        let fixed = [0xcb, 0x48, 0xcd, 0xc9, 0xc9, 0x57, 0xc8, 0x40, 0x90, 0x00];
        assert_eq!(run(&fixed, 64).unwrap(), b"hello hello hello");
        // The empty stream: one fixed block holding only the end-of-block code.
        assert_eq!(inflate(&[0x03, 0x00], &mut [], 0), Ok((2, 0)));
    }

    /// `gzip` itself as the oracle: its members' deflate streams (after the 10-byte header
    /// `-n` writes, before the 8-byte trailer) at every level, for text (dynamic blocks),
    /// noise (stored blocks) and both mixed.
    #[test]
    fn decodes_what_gzip_writes() {
        use std::io::Write;
        use std::process::{Command, Stdio};
        let mut noise = Vec::new();
        let mut x: u32 = 1;
        for _ in 0..70_000 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            noise.push((x >> 16) as u8);
        }
        let text = include_bytes!("inflate.rs").repeat(3);
        let mixed = [&text[..], &noise[..20_000], &text[..5000]].concat();
        let mut kinds = std::collections::BTreeSet::new();
        for data in [&text[..], &noise[..], &mixed[..], b"a", b""] {
            for level in ["-1", "-6", "-9"] {
                let mut child = Command::new("gzip").args([level, "-n", "-c"]).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
                child.stdin.take().unwrap().write_all(data).unwrap();
                let packed = child.wait_with_output().unwrap().stdout;
                let stream = &packed[10..packed.len() - 8];
                kinds.insert((stream[0] >> 1) & 3);
                let mut out = vec![0u8; data.len()];
                assert_eq!(inflate(stream, &mut out, 0), Ok((stream.len(), data.len())), "level {level}, {} bytes", data.len());
                assert!(out == data);
            }
        }
        // Stored, fixed and dynamic first blocks were all seen.
        assert_eq!(kinds.into_iter().collect::<Vec<_>>(), [0, 1, 2]);
    }

    #[test]
    fn errors() {
        // Block type 3 is reserved.
        assert_eq!(run(&[0x07], 16), Err(Corrupt));
        // LEN and NLEN disagree.
        assert_eq!(run(&[0x01, 3, 0, 0xfc, 0xfe, b'a', b'b', b'c'], 16), Err(Corrupt));
        assert_eq!(run(&[0x01, 3, 0, 0xfc, 0xff, b'a'], 16), Err(Truncated));
        assert_eq!(run(&[0x01, 3, 0, 0xfc, 0xff, b'a', b'b', b'c'], 2), Err(OutputFull));
        let fixed = [0xcb, 0x48, 0xcd, 0xc9, 0xc9, 0x57, 0xc8, 0x40, 0x90, 0x00];
        assert_eq!(run(&fixed[..5], 64), Err(Truncated));
        assert_eq!(run(&fixed, 16), Err(OutputFull));
        // A fixed block whose first symbol is a back-reference (length 3, distance 1):
        // nothing of this stream precedes it, even where the buffer has bytes before
        // `start` (an earlier gzip member's).
        let back = fixed_block(&[(257, 7), (0, 5), (256, 7)]);
        let mut out = [b'x'; 16];
        assert_eq!(inflate(&back, &mut out, 4), Err(Corrupt));
        // The same reference after one literal ('a', code 0x30 + 0x61 in 8 bits) is fine.
        let after = fixed_block(&[(0x30 + 0x61, 8), (257, 7), (0, 5), (256, 7)]);
        assert_eq!(inflate(&after, &mut out, 4).map(|(_, end)| end), Ok(8));
        assert_eq!(&out[..8], b"xxxxaaaa");
    }

    /// A final fixed block of these Huffman codes (value, bits), packed most significant
    /// bit first as RFC 1951 3.1.1 says.
    fn fixed_block(codes: &[(u32, u32)]) -> Vec<u8> {
        let mut bits = vec![1, 1, 0];
        for &(value, length) in codes {
            bits.extend((0..length).rev().map(|i| (value >> i) & 1));
        }
        bits.chunks(8).map(|byte| byte.iter().enumerate().fold(0u8, |acc, (i, &b)| acc | (b as u8) << i)).collect()
    }
}
