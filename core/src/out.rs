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

#[cfg(test)]
mod tests {
    use super::*;

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

/// For `fmt` writers such as `yaml::write_json`: a full buffer is `fmt::Error`.
impl core::fmt::Write for Out<'_> {
    fn write_str(&mut self, text: &str) -> core::fmt::Result {
        self.put(text.as_bytes()).map_err(|_| core::fmt::Error)
    }
}
