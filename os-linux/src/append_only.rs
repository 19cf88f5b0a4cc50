//! A static byte buffer (in .bss) that only grows at its end, so that what was appended
//! can be lent out for the rest of the run while more is appended after it: the message
//! store bin's `Message` handles point into. Here, not in bin, because lending those
//! bytes while appending takes `unsafe`, which os-linux alone holds (as `TakeOnce`).

use core::cell::{Cell, UnsafeCell};

pub struct AppendOnly<const N: usize> {
    bytes: UnsafeCell<[u8; N]>,
    used: Cell<usize>,
}

// SAFETY: wisp has one thread; an `AppendOnly` is only touched from it.
unsafe impl<const N: usize> Sync for AppendOnly<N> {}

impl<const N: usize> Default for AppendOnly<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> AppendOnly<N> {
    pub const fn new() -> Self {
        AppendOnly { bytes: UnsafeCell::new([0; N]), used: Cell::new(0) }
    }

    /// Bytes appended so far; the next append goes there.
    pub fn used(&self) -> usize {
        self.used.get()
    }

    /// Appends what of `bytes` fits.
    pub fn append(&self, bytes: &[u8]) {
        let used = self.used.get();
        let len = bytes.len().min(N - used);
        // SAFETY: `used..used + len` is past every range `get` lent out, and in bounds.
        let tail = unsafe { core::slice::from_raw_parts_mut((self.bytes.get() as *mut u8).add(used), len) };
        tail.copy_from_slice(&bytes[..len]);
        self.used.set(used + len);
    }

    /// The bytes `start..start + len`; none if they were not all appended.
    pub fn get(&self, start: usize, len: usize) -> &[u8] {
        if start + len > self.used.get() {
            return &[];
        }
        // SAFETY: the range lies below `used`, which only grows, and only bytes at or past
        // `used` are ever written (`append`), so no one writes to these bytes again.
        unsafe { core::slice::from_raw_parts((self.bytes.get() as *const u8).add(start), len) }
    }
}

#[cfg(test)]
mod tests {
    use super::AppendOnly;

    #[test]
    fn what_was_appended_stays_lent_while_more_is_appended() {
        static STORE: AppendOnly<8> = AppendOnly::new();
        STORE.append(b"abc");
        let first = STORE.get(0, 3);
        STORE.append(b"defgh-cut");
        assert_eq!(first, b"abc");
        assert_eq!(STORE.used(), 8);
        assert_eq!(STORE.get(3, 5), b"defgh");
        assert_eq!(STORE.get(4, 5), b"");
        STORE.append(b"more");
        assert_eq!(STORE.used(), 8);
    }
}
