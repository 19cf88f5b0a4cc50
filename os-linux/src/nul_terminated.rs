//! NUL-terminated paths built in a fixed buffer. rustix copies `&[u8]` paths into a
//! 256-byte stack buffer and needs an allocator beyond that; wisp joins `--root` with
//! absolute paths, so it builds its own C strings with a larger, named limit.

use core::ffi::CStr;

/// Longest path wisp builds, terminating NUL excluded: comfortably above real paths,
/// well under PATH_MAX (4096) so several fit on a stack.
pub const PATH_LIMIT: usize = 1023;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathError {
    TooLong { limit: usize },
    ContainsNul,
}

impl core::fmt::Display for PathError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            PathError::TooLong { limit } => {
                f.write_str("path longer than ")?;
                decimal(f, *limit)?;
                f.write_str(" bytes")
            }
            PathError::ContainsNul => f.write_str("path contains a NUL byte"),
        }
    }
}

/// `n` in decimal, as `crate::decimal_digits` writes it.
fn decimal(f: &mut core::fmt::Formatter<'_>, n: usize) -> core::fmt::Result {
    f.write_str(core::str::from_utf8(crate::decimal_digits(n as u64, &mut [0; 20])).unwrap_or("?"))
}

pub struct NulTerminated {
    buf: [u8; PATH_LIMIT + 1],
    len: usize,
}

impl NulTerminated {
    pub const fn new() -> Self {
        NulTerminated { buf: [0; PATH_LIMIT + 1], len: 0 }
    }

    /// Joins the pieces as given: no separators are added or removed.
    pub fn from_parts(parts: &[&[u8]]) -> Result<Self, PathError> {
        let mut path = NulTerminated::new();
        for part in parts {
            path.push(part)?;
        }
        Ok(path)
    }

    pub fn push(&mut self, bytes: &[u8]) -> Result<(), PathError> {
        if bytes.contains(&0) {
            return Err(PathError::ContainsNul);
        }
        let end = self.len + bytes.len();
        if end > PATH_LIMIT {
            return Err(PathError::TooLong { limit: PATH_LIMIT });
        }
        self.buf[self.len..end].copy_from_slice(bytes);
        self.buf[end] = 0;
        self.len = end;
        Ok(())
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    pub fn as_cstr(&self) -> &CStr {
        // `push` refuses interior NULs and always terminates, so this cannot fail.
        CStr::from_bytes_with_nul(&self.buf[..=self.len]).unwrap_or(c"")
    }

    /// The directory part and the final component, split at the last '/'.
    pub fn split_last(&self) -> (&[u8], &[u8]) {
        let bytes = self.as_bytes();
        match bytes.iter().rposition(|&b| b == b'/') {
            Some(0) => (b"/", &bytes[1..]),
            Some(i) => (&bytes[..i], &bytes[i + 1..]),
            None => (b".", bytes),
        }
    }
}

impl Default for NulTerminated {
    fn default() -> Self {
        Self::new()
    }
}
