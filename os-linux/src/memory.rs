//! Anonymous memory, mapped when a run needs it and sized to what it holds, so that the
//! binary reserves no large buffer of its own: a run that never reads user-data never
//! maps room for it, and `wisp --version` fits a small address-space limit. The kernel
//! hands out zeroed pages, which cost memory only once written.

use core::ptr::NonNull;

use rustix::io::Errno;
use rustix::mm::{MapFlags, ProtFlags};

/// An anonymous private mapping, read-write, unmapped when dropped.
pub struct Mapping {
    start: NonNull<u8>,
    len: usize,
}

impl Mapping {
    /// mmap(2) of `len` zeroed bytes (MAP_PRIVATE | MAP_ANONYMOUS). An empty mapping
    /// asks the kernel for nothing.
    pub fn new(len: usize) -> Result<Mapping, Errno> {
        if len == 0 {
            return Ok(Mapping { start: NonNull::dangling(), len });
        }
        // SAFETY: mmap(2) with a null hint picks a fresh range, so no existing memory is
        // touched; the result is checked by rustix and owned by the returned value alone.
        let start = unsafe {
            rustix::mm::mmap_anonymous(core::ptr::null_mut(), len, ProtFlags::READ | ProtFlags::WRITE, MapFlags::PRIVATE)?
        };
        NonNull::new(start.cast::<u8>()).map(|start| Mapping { start, len }).ok_or(Errno::NOMEM)
    }

    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: as in `as_mut_slice`, for a shared borrow of `self`.
        unsafe { core::slice::from_raw_parts(self.start.as_ptr(), self.len) }
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: `start..start + len` is this mapping's (or empty and dangling, which a
        // zero-length slice allows), readable, writable, zeroed or written since, and only
        // reachable through `self`, which this borrow holds.
        unsafe { core::slice::from_raw_parts_mut(self.start.as_ptr(), self.len) }
    }

    /// Keeps the mapping for the rest of the process: for values that live as long as
    /// the run (the decoded user-data and what refers to it).
    pub fn leak(self) -> &'static mut [u8] {
        let this = core::mem::ManuallyDrop::new(self);
        // SAFETY: as in `as_mut_slice`; the mapping is never unmapped now that its owner
        // is forgotten, so the slice stays valid for the life of the process.
        unsafe { core::slice::from_raw_parts_mut(this.start.as_ptr(), this.len) }
    }
}

impl core::ops::Deref for Mapping {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl core::ops::DerefMut for Mapping {
    fn deref_mut(&mut self) -> &mut [u8] {
        self.as_mut_slice()
    }
}

impl Drop for Mapping {
    // One copy for every owner's exits, not one inlined at each.
    #[inline(never)]
    fn drop(&mut self) {
        if self.len > 0 {
            // SAFETY: munmap(2) of exactly the range mmap returned; no slice of it outlives
            // `self` (`as_mut_slice` borrows it, `leak` forgets it).
            let _ = unsafe { rustix::mm::munmap(self.start.as_ptr().cast(), self.len) };
        }
    }
}

/// `len` copies of `fill`, in a mapping kept for the rest of the process: for typed
/// tables (YAML nodes) sized to their input. Only the pages `len` covers are written.
pub fn leak_filled<T: Copy>(len: usize, fill: T) -> Result<&'static mut [T], Errno> {
    // Pages are 4 KiB aligned, enough for any type wisp maps.
    const { assert!(core::mem::align_of::<T>() <= 4096) };
    let bytes = len.checked_mul(core::mem::size_of::<T>()).ok_or(Errno::NOMEM)?;
    let mapping = Mapping::new(bytes)?.leak();
    let start = match len {
        0 => NonNull::<T>::dangling().as_ptr(),
        _ => mapping.as_mut_ptr().cast::<T>(),
    };
    for i in 0..len {
        // SAFETY: element `i` lies inside the mapping (`bytes` covers `len` elements), is
        // aligned (page-aligned start, whole elements), and nothing else refers to it.
        unsafe { start.add(i).write(fill) };
    }
    // SAFETY: every element was initialised above; the mapping is leaked, so it lives for
    // the process, and this is the only reference to it.
    Ok(unsafe { core::slice::from_raw_parts_mut(start, len) })
}
