//! netlink(7) framing: the 16-byte `nlmsghdr` every message starts with, the attributes
//! (`rtattr`, netlink(7) "Attributes") that follow a family header, and the two control
//! messages, NLMSG_ERROR (an acknowledgement when its code is 0) and NLMSG_DONE.
//!
//! Shaped as smoltcp's `wire/`: a checked view over bytes the caller owns (`Message`),
//! named field ranges, and a `Writer` that emits into a caller's buffer. Integers are in
//! the host's byte order, as the kernel sends them; wisp builds for little-endian targets.

use core::ops::Range;

mod field {
    use core::ops::Range;
    pub const LENGTH: Range<usize> = 0..4;
    pub const KIND: Range<usize> = 4..6;
    pub const FLAGS: Range<usize> = 6..8;
    pub const SEQUENCE: Range<usize> = 8..12;
    /// NLMSG_ERROR's payload: a negative errno, or 0 for an acknowledgement.
    pub const ERROR_CODE: Range<usize> = 16..20;
}

pub const HEADER_LEN: usize = 16;

pub const NLMSG_ERROR: u16 = 2;
pub const NLMSG_DONE: u16 = 3;

pub const F_REQUEST: u16 = 0x1;
pub const F_MULTI: u16 = 0x2;
pub const F_ACK: u16 = 0x4;
pub const F_REPLACE: u16 = 0x100;
pub const F_EXCL: u16 = 0x200;
pub const F_CREATE: u16 = 0x400;
pub const F_DUMP: u16 = 0x300;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// A header or attribute whose length runs past the bytes received, or is too short.
    Truncated,
    /// The request does not fit the buffer given to the writer. (u16, said as 65535 for a
    /// larger buffer, which no caller has: rtnl's is 32 KiB. The error is 4 bytes, so that
    /// an `RtnlError` holding it is 8 and comes back in a register.)
    BufferTooSmall { limit: u16 },
    /// An interface name longer than the kernel's 15 bytes (IFNAMSIZ less its NUL).
    NameTooLong,
}

impl core::fmt::Display for Error {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Error::Truncated => f.write_str("netlink: truncated message"),
            Error::BufferTooSmall { limit } => write!(f, "netlink: request longer than {} bytes", crate::text::Decimal(*limit as u64)),
            Error::NameTooLong => f.write_str("netlink: an interface name is at most 15 bytes"),
        }
    }
}

pub(crate) fn u16_at(bytes: &[u8], range: Range<usize>) -> u16 {
    bytes.get(range).and_then(|b| b.try_into().ok()).map(u16::from_ne_bytes).unwrap_or(0)
}

pub(crate) fn u32_at(bytes: &[u8], range: Range<usize>) -> u32 {
    bytes.get(range).and_then(|b| b.try_into().ok()).map(u32::from_ne_bytes).unwrap_or(0)
}

const fn align4(n: usize) -> usize {
    (n + 3) & !3
}

/// One message, its length checked against the bytes that hold it.
#[derive(Clone, Copy, Debug)]
pub struct Message<'a> {
    bytes: &'a [u8],
}

impl<'a> Message<'a> {
    /// The message at the start of `buffer` (its header's length, not the buffer's).
    pub fn new_checked(buffer: &'a [u8]) -> Result<Message<'a>, Error> {
        let length = u32_at(buffer, field::LENGTH) as usize;
        if buffer.len() < HEADER_LEN || length < HEADER_LEN || length > buffer.len() {
            return Err(Error::Truncated);
        }
        Ok(Message { bytes: &buffer[..length] })
    }

    pub fn kind(&self) -> u16 {
        u16_at(self.bytes, field::KIND)
    }

    pub fn flags(&self) -> u16 {
        u16_at(self.bytes, field::FLAGS)
    }

    pub fn sequence(&self) -> u32 {
        u32_at(self.bytes, field::SEQUENCE)
    }

    /// What follows the header: a family header and its attributes.
    pub fn payload(&self) -> &'a [u8] {
        &self.bytes[HEADER_LEN..]
    }

    /// NLMSG_ERROR's code: `Some(0)` acknowledges, `Some(-errno)` refuses; `None` for
    /// any other message.
    pub fn error_code(&self) -> Option<i32> {
        if self.kind() != NLMSG_ERROR {
            return None;
        }
        Some(u32_at(self.bytes, field::ERROR_CODE) as i32)
    }
}

/// The messages of one datagram, in order; the first malformed one ends it with an error.
pub fn messages(datagram: &[u8]) -> Messages<'_> {
    Messages { rest: datagram }
}

pub struct Messages<'a> {
    rest: &'a [u8],
}

impl<'a> Iterator for Messages<'a> {
    type Item = Result<Message<'a>, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        match Message::new_checked(self.rest) {
            Ok(message) => {
                self.rest = self.rest.get(align4(message.bytes.len())..).unwrap_or(&[]);
                Some(Ok(message))
            }
            Err(e) => {
                self.rest = &[];
                Some(Err(e))
            }
        }
    }
}

/// The attributes that follow a family header: `(type, value)` pairs, 4-byte aligned.
/// The type's nested and byte-order bits are masked off.
pub fn attributes(bytes: &[u8]) -> Attributes<'_> {
    Attributes { rest: bytes }
}

pub struct Attributes<'a> {
    rest: &'a [u8],
}

impl<'a> Iterator for Attributes<'a> {
    type Item = Result<(u16, &'a [u8]), Error>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        let length = u16_at(self.rest, 0..2) as usize;
        if self.rest.len() < 4 || length < 4 || length > self.rest.len() {
            self.rest = &[];
            return Some(Err(Error::Truncated));
        }
        let kind = u16_at(self.rest, 2..4) & 0x3fff;
        let value = &self.rest[4..length];
        self.rest = self.rest.get(align4(length)..).unwrap_or(&[]);
        Some(Ok((kind, value)))
    }
}

/// Writes one request into a caller's buffer: `header`, the family header's bytes, its
/// attributes, then `finish` sets the length.
pub struct Writer<'b> {
    buffer: &'b mut [u8],
    len: usize,
    overflow: bool,
}

impl<'b> Writer<'b> {
    pub fn new(buffer: &'b mut [u8], kind: u16, flags: u16, sequence: u32) -> Writer<'b> {
        let mut header = [0u8; HEADER_LEN];
        header[field::KIND].copy_from_slice(&kind.to_ne_bytes());
        header[field::FLAGS].copy_from_slice(&flags.to_ne_bytes());
        header[field::SEQUENCE].copy_from_slice(&sequence.to_ne_bytes());
        let mut writer = Writer { buffer, len: 0, overflow: false };
        writer.bytes(&header);
        writer
    }

    /// Raw bytes, then zeros up to the next 4-byte boundary.
    pub fn bytes(&mut self, bytes: &[u8]) {
        let end = self.len + align4(bytes.len());
        match self.buffer.get_mut(self.len..end) {
            Some(slot) => {
                slot.fill(0);
                slot[..bytes.len()].copy_from_slice(bytes);
                self.len = end;
            }
            None => self.overflow = true,
        }
    }

    pub fn attribute(&mut self, kind: u16, value: &[u8]) {
        let length = ((4 + value.len()) as u16).to_ne_bytes();
        let kind = kind.to_ne_bytes();
        self.bytes(&[length[0], length[1], kind[0], kind[1]]);
        self.bytes(value);
    }

    pub fn attribute_u32(&mut self, kind: u16, value: u32) {
        self.attribute(kind, &value.to_ne_bytes());
    }

    /// The finished request.
    pub fn finish(self) -> Result<&'b [u8], Error> {
        if self.overflow {
            return Err(Error::BufferTooSmall { limit: u16::try_from(self.buffer.len()).unwrap_or(u16::MAX) });
        }
        self.buffer[field::LENGTH].copy_from_slice(&(self.len as u32).to_ne_bytes());
        Ok(&self.buffer[..self.len])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ip link set eth7 up`'s acknowledgement, from `strace -e read=3` (seq 0x6b051fbf).
    static ACK: [u8; 36] = [
        0x24, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x01, 0xbf, 0x1f, 0x05, 0x6b, 0xdf, 0x58, 0x00, 0x00, //
        0x00, 0x00, 0x00, 0x00, 0x20, 0x00, 0x00, 0x00, 0x10, 0x00, 0x05, 0x00, 0xbf, 0x1f, 0x05, 0x6b, //
        0x00, 0x00, 0x00, 0x00,
    ];

    #[test]
    fn acknowledgement() {
        crate::fuzz::seed("netlink", &ACK);
        let message = Message::new_checked(&ACK).unwrap();
        assert_eq!(message.kind(), NLMSG_ERROR);
        assert_eq!(message.sequence(), 0x6b05_1fbf);
        assert_eq!(message.error_code(), Some(0));
    }

    #[test]
    fn refusal_code_is_negative_errno() {
        let mut bytes = ACK;
        bytes[16..20].copy_from_slice(&(-17i32).to_ne_bytes());
        assert_eq!(Message::new_checked(&bytes).unwrap().error_code(), Some(-17));
    }

    #[test]
    fn truncated_messages_are_errors() {
        assert_eq!(Message::new_checked(&ACK[..15]).unwrap_err(), Error::Truncated);
        assert_eq!(Message::new_checked(&ACK[..35]).unwrap_err(), Error::Truncated);
        let mut short = ACK;
        short[0] = 8;
        assert_eq!(Message::new_checked(&short).unwrap_err(), Error::Truncated);
        let mut iter = messages(&ACK[..20]);
        assert_eq!(iter.next().unwrap().unwrap_err(), Error::Truncated);
        assert!(iter.next().is_none());
    }

    #[test]
    fn attributes_are_aligned_and_checked() {
        let bytes = [9, 0, 3, 0, b'e', b't', b'h', b'7', 0, 0, 0, 0, 8, 0, 4, 0, 0x78, 5, 0, 0];
        let found: Vec<_> = attributes(&bytes).map(|a| a.unwrap()).collect();
        assert_eq!(found, [(3, &b"eth7\0"[..]), (4, &[0x78, 5, 0, 0][..])]);
        let broken = [200, 0, 3, 0, 1, 2, 3, 4];
        assert_eq!(attributes(&broken).next().unwrap().unwrap_err(), Error::Truncated);
        assert_eq!(attributes(&[3, 0, 3, 0]).next().unwrap().unwrap_err(), Error::Truncated);
    }

    #[test]
    fn writer_names_its_limit() {
        let mut small = [0u8; 20];
        let mut writer = Writer::new(&mut small, 16, F_REQUEST, 1);
        writer.attribute(3, b"a-long-interface-name\0");
        assert_eq!(writer.finish().unwrap_err(), Error::BufferTooSmall { limit: 20 });
    }

    #[test]
    fn any_bytes_parse_without_panic() {
        let mut state = 0x1234_5678u32;
        for _ in 0..2000 {
            let mut bytes = [0u8; 64];
            for b in bytes.iter_mut() {
                state = state.wrapping_mul(1_103_515_245).wrapping_add(12345);
                *b = (state >> 16) as u8 & 0x3f;
            }
            for message in messages(&bytes).flatten() {
                let _ = message.error_code();
                for _ in attributes(message.payload()) {}
            }
        }
    }
}
