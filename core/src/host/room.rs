//! Room for the large buffers a rule works in (a system file read whole, its new text),
//! and room kept for the rest of the run (decoded user-data, which every later action of
//! the run reads back).
//!
//! The host provides them so that a rule's stack frame stays small: Rust's stack probes
//! touch every page of a frame on entry, so four 32 KiB files on the stack cost 128 KiB
//! of memory however small the files are, where mapped room costs only the pages written.

use core::ops::DerefMut;

use super::messages::Messages;

pub trait Room: Messages {
    /// Zeroed bytes, given back when dropped.
    type Buffer: DerefMut<Target = [u8]>;

    /// `len` zeroed bytes for `what` (named in the error when the host has none).
    fn room(&mut self, len: usize, what: &str) -> Result<Self::Buffer, Self::Text>;

    /// `len` zeroed bytes for `what` (named in the error when the host has none), never
    /// given back.
    fn keep(&mut self, len: usize, what: &str) -> Result<&'static mut [u8], Self::Text>;
}
