//! Message lines kept in one append-only store: a line's handle, and how much text a line
//! takes. The handle is one non-zero `u32` (the line's start, its length, and whether it
//! was cut), so that a `Result<T, Message>` with a small `T`, which nearly every step of a
//! run returns, travels in a register. Decides where a line is cut (whole characters
//! within `LINE_LIMIT`, room kept for the "..." that ends it) and when a line being
//! extended moves to the store's end.

use core::num::NonZeroU32;

/// Longest message line; longer ones end in "..." rather than being split.
pub const LINE_LIMIT: usize = 1024;

/// The bits below `START_SHIFT` hold the length, below `CUT`, and `CUT` when the text
/// was cut at `LINE_LIMIT`; the bits above hold the start in the store.
const CUT: u32 = 1 << 10;
const START_SHIFT: u32 = 11;
const _: () = assert!(LINE_LIMIT <= CUT as usize);

/// The largest store the handle can address.
pub const STORE_LIMIT: usize = 1 << (32 - START_SHIFT);

/// Where the lines' text is: appended, never changed.
pub trait LineStore {
    /// Bytes in the store so far; the next append goes there.
    fn used(&self) -> usize;

    /// Bytes the store can still take.
    fn room(&self) -> usize;

    /// Appends `bytes`, which fit in `room`.
    fn append(&self, bytes: &[u8]);

    /// The text of `start..start + len`, appended before ("" if it is not).
    fn text(&self, start: usize, len: usize) -> &str;
}

/// A line of text in a `LineStore`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineHandle(NonZeroU32);

impl LineHandle {
    /// An empty line starting at `start`.
    pub fn at(start: usize) -> LineHandle {
        LineHandle::new(start, 0, false)
    }

    fn new(start: usize, len: usize, cut: bool) -> LineHandle {
        let bits = ((start as u32) << START_SHIFT) | len as u32 | if cut { CUT } else { 0 };
        LineHandle(NonZeroU32::MIN.saturating_add(bits))
    }

    pub fn start(self) -> usize {
        ((self.0.get() - 1) >> START_SHIFT) as usize
    }

    pub fn len(self) -> usize {
        ((self.0.get() - 1) & (CUT - 1)) as usize
    }

    pub fn is_empty(self) -> bool {
        self.len() == 0
    }

    /// Whether text was left out at the limit: the line is shown ending in "...".
    pub fn cut(self) -> bool {
        (self.0.get() - 1) & CUT != 0
    }

    /// Appends `text` to the line, first moving the line to the store's end if other lines
    /// were written after it.
    pub fn write(&mut self, store: &impl LineStore, text: &str) {
        if self.start() + self.len() != store.used() {
            let old = store.text(self.start(), self.len());
            *self = LineHandle::new(store.used(), 0, self.cut());
            self.push(store, old);
        }
        self.push(store, text);
    }

    /// Appends what fits within `LINE_LIMIT`, leaving room for "...", and in the store, in
    /// whole characters; marks the line cut if not all of `text` did.
    fn push(&mut self, store: &impl LineStore, text: &str) {
        let room = if self.cut() { 0 } else { LINE_LIMIT - 4 - self.len() };
        let mut len = text.len().min(room).min(store.room());
        while !text.is_char_boundary(len) {
            len -= 1;
        }
        store.append(&text.as_bytes()[..len]);
        *self = LineHandle::new(self.start(), self.len() + len, self.cut() || len < text.len());
    }
}

#[cfg(test)]
mod tests {
    use core::cell::RefCell;
    use std::string::String;

    use super::*;

    /// A store of `limit` bytes.
    struct Store(RefCell<String>, usize);

    impl LineStore for Store {
        fn used(&self) -> usize {
            self.0.borrow().len()
        }
        fn room(&self) -> usize {
            self.1 - self.used()
        }
        fn append(&self, bytes: &[u8]) {
            self.0.borrow_mut().push_str(core::str::from_utf8(bytes).unwrap());
        }
        fn text(&self, start: usize, len: usize) -> &str {
            // The test's store never shrinks and lives as long as the test.
            std::boxed::Box::leak(self.0.borrow()[start..start + len].into())
        }
    }

    fn shown(store: &Store, line: LineHandle) -> String {
        std::format!("{}{}", store.text(line.start(), line.len()), if line.cut() { "..." } else { "" })
    }

    #[test]
    fn a_line_grows_in_place_and_moves_to_the_end_when_another_follows() {
        let store = Store(RefCell::default(), 4096);
        let mut first = LineHandle::at(store.used());
        first.write(&store, "cannot open ");
        let mut second = LineHandle::at(store.used());
        second.write(&store, "other");
        first.write(&store, "/etc/passwd");
        assert_eq!((shown(&store, first), shown(&store, second)), ("cannot open /etc/passwd".into(), "other".into()));
        assert_eq!(first.start(), 17);
        assert_eq!(*store.0.borrow(), "cannot open othercannot open /etc/passwd");
    }

    #[test]
    fn a_long_line_is_cut_in_whole_characters_and_ends_in_dots() {
        let store = Store(RefCell::default(), 4096);
        let mut line = LineHandle::at(0);
        line.write(&store, &"a".repeat(1017));
        line.write(&store, "éé");
        assert!(line.cut());
        // Three bytes of room: one é, not half of the second.
        assert_eq!(line.len(), 1019);
        line.write(&store, "more");
        assert_eq!(line.len(), 1019);
        assert!(shown(&store, line).ends_with("aé..."));
    }

    #[test]
    fn a_full_store_cuts_the_line() {
        let store = Store(RefCell::default(), 8);
        let mut line = LineHandle::at(0);
        line.write(&store, "0123456789");
        assert_eq!(shown(&store, line), "01234567...");
        assert_eq!(LineHandle::at(8).len(), 0);
        assert!(!LineHandle::at(STORE_LIMIT - 1).cut());
    }
}
