//! Values in .bss handed out once, so that a `&'static mut` to them is never shared.

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
}
