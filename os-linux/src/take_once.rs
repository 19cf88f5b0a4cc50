//! A static value (in .bss) whose `&'static mut` is taken at most once, so it is never
//! shared: not `std::sync::Once`, which runs code once and holds nothing. It is here, not
//! in bin, because handing out that reference takes `unsafe`, which os-linux alone holds.

use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicBool, Ordering};

pub struct TakeOnce<T> {
    value: UnsafeCell<T>,
    taken: AtomicBool,
}

// SAFETY: `take` hands the value out at most once, so no two references to it ever
// exist, whatever thread asks (and wisp has one).
unsafe impl<T> Sync for TakeOnce<T> {}

impl<T> TakeOnce<T> {
    pub const fn new(value: T) -> Self {
        TakeOnce { value: UnsafeCell::new(value), taken: AtomicBool::new(false) }
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

#[cfg(test)]
mod tests {
    use super::TakeOnce;

    #[test]
    fn the_value_is_handed_out_once() {
        static SLOT: TakeOnce<u32> = TakeOnce::new(7);
        let value = SLOT.take().expect("the first take gets the value");
        *value += 1;
        assert_eq!(*value, 8);
        assert!(SLOT.take().is_none());
        assert!(SLOT.take().is_none());
    }
}
