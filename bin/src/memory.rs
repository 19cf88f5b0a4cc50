//! Room for what a run reads (user-data, what decoding it makes, cloud-config's tables),
//! mapped when an action needs it and sized to its input, within the named limits.

use wisp_core::text::{Decimal, Plain};
use wisp_os_linux::memory::Mapping;

use crate::output::{Message, Os};

/// `len` zeroed bytes for the rest of the run.
pub fn reserve(len: usize, what: &str) -> Result<&'static mut [u8], Message> {
    Ok(map(len, what)?.leak())
}

/// `len` zeroed bytes, given back when dropped.
pub fn map(len: usize, what: &str) -> Result<Mapping, Message> {
    Mapping::new(len).map_err(|e| refused(len, what, e))
}

#[inline(never)]
pub fn refused(len: usize, what: &str, e: wisp_os_linux::Errno) -> Message {
    msg!("cannot reserve {len} bytes for {what}: {}", Os(e), len = Decimal(len as u64), what = Plain(what))
}
