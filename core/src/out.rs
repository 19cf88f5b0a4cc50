//! Appending to a caller's buffer, whose length is the limit: the one way every writer
//! in core produces bytes.

/// The buffer is full; `limit` is its size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Full {
    pub limit: usize,
}

pub struct Out<'o> {
    buf: &'o mut [u8],
    len: usize,
}

impl<'o> Out<'o> {
    pub fn new(buf: &'o mut [u8]) -> Self {
        Out { buf, len: 0 }
    }

    /// Out of line: inlined, its bounds check and copy were repeated at each of its many
    /// callers.
    #[inline(never)]
    pub fn put(&mut self, bytes: &[u8]) -> Result<(), Full> {
        let limit = self.buf.len();
        let slot = self.buf.get_mut(self.len..self.len + bytes.len()).ok_or(Full { limit })?;
        slot.copy_from_slice(bytes);
        self.len += bytes.len();
        Ok(())
    }

    pub fn put_all(&mut self, pieces: &[&[u8]]) -> Result<(), Full> {
        pieces.iter().try_for_each(|piece| self.put(piece))
    }

    /// A number in decimal.
    pub fn put_decimal(&mut self, n: u64) -> Result<(), Full> {
        self.put(crate::text::decimal_digits(n, &mut [0; 20]))
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn written(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

/// A `fmt` writer that hands its text on in pieces of its buffer's size, for a document
/// larger than any buffer (`wisp userdata show`'s JSON); `flush` hands on the last one.
pub struct Chunked<'o, F: FnMut(&[u8])> {
    out: Out<'o>,
    sink: F,
}

impl<'o, F: FnMut(&[u8])> Chunked<'o, F> {
    pub fn new(buf: &'o mut [u8], sink: F) -> Self {
        Chunked { out: Out::new(buf), sink }
    }

    pub fn flush(&mut self) {
        (self.sink)(self.out.written());
        self.out.len = 0;
    }
}

impl<F: FnMut(&[u8])> core::fmt::Write for Chunked<'_, F> {
    /// Buffered while it fits; a piece larger than the whole buffer goes on at once.
    fn write_str(&mut self, text: &str) -> core::fmt::Result {
        if self.out.put(text.as_bytes()).is_err() {
            self.flush();
            if self.out.put(text.as_bytes()).is_err() {
                (self.sink)(text.as_bytes());
            }
        }
        Ok(())
    }
}

/// For `fmt` writers such as `yaml::write_json`: a full buffer is `fmt::Error`.
impl core::fmt::Write for Out<'_> {
    fn write_str(&mut self, text: &str) -> core::fmt::Result {
        self.put(text.as_bytes()).map_err(|_| core::fmt::Error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::fmt::Write;

    #[test]
    fn chunks_keep_the_order_and_never_split_a_piece() {
        let mut pieces: std::vec::Vec<std::vec::Vec<u8>> = std::vec::Vec::new();
        let mut buf = [0u8; 4];
        let mut out = Chunked::new(&mut buf, |bytes: &[u8]| pieces.push(bytes.to_vec()));
        for text in ["ab", "c", "de", "fghij", "k"] {
            out.write_str(text).unwrap();
        }
        out.flush();
        assert_eq!(pieces, [&b"abc"[..], b"de", b"fghij", b"k"]);
    }

    #[test]
    fn fills_to_the_limit() {
        let mut buf = [0u8; 8];
        let mut out = Out::new(&mut buf);
        out.put_all(&[b"ab", b"c"]).unwrap();
        out.put_decimal(12345).unwrap();
        assert_eq!(out.written(), b"abc12345");
        assert_eq!(out.put(b"x"), Err(Full { limit: 8 }));
        assert_eq!(out.len(), 8);
        let mut buf = [0u8; 1];
        let mut out = Out::new(&mut buf);
        out.put_decimal(0).unwrap();
        assert_eq!(out.written(), b"0");
    }
}
