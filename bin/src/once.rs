//! Large buffers in .bss, handed out once: their pages cost memory only when written, and
//! they are never copied or zeroed at run time.

use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicBool, Ordering};

pub struct Once<T> {
    value: UnsafeCell<T>,
    taken: AtomicBool,
}

// SAFETY: `take` hands the value out at most once, so no two references to it ever
// exist, whatever thread asks (and wisp has one).
unsafe impl<T> Sync for Once<T> {}

impl<T> Once<T> {
    pub const fn new(value: T) -> Self {
        Once { value: UnsafeCell::new(value), taken: AtomicBool::new(false) }
    }

    /// The value; `None` if it was taken before. Handing out `&mut` from `&self` is sound
    /// here because the flag lets it happen once.
    #[allow(clippy::mut_from_ref)]
    pub fn take(&'static self) -> Option<&'static mut T> {
        if self.taken.swap(true, Ordering::Relaxed) {
            return None;
        }
        // SAFETY: the flag above lets this line run once, so this is the only reference.
        Some(unsafe { &mut *self.value.get() })
    }

    /// Lends the value to `use_it`, unless it is taken or lent already, and gets it back
    /// afterwards: for a buffer that several actions of one run use in turn.
    pub fn lend<R>(&'static self, use_it: impl FnOnce(&mut T) -> R) -> Option<R> {
        if self.taken.swap(true, Ordering::Relaxed) {
            return None;
        }
        // SAFETY: the flag is held for the length of `use_it`, so this is the only reference
        // until it is cleared below, after the reference is gone.
        let result = use_it(unsafe { &mut *self.value.get() });
        self.taken.store(false, Ordering::Relaxed);
        Some(result)
    }
}
