//! `$TINY_CLOUD_VAR/.instance-id`: the instance the saved state belongs to (core's
//! `instance` reads and writes it; a phase compares it with the metadata service's).

use wisp_core::instance::{self, SaveError};
use wisp_os_linux::fs::Dir;

use crate::host::OpenDir;
use crate::output::Message;

pub use wisp_core::instance::INSTANCE_ID_LIMIT;

/// The instance-id saved by an earlier run, if any.
pub fn saved<'b>(var: &Dir, buf: &'b mut [u8; INSTANCE_ID_LIMIT]) -> Option<&'b [u8]> {
    instance::saved_id(&mut OpenDir { dir: var }, buf)
}

pub fn save(var: &Dir, id: &[u8]) -> Result<(), Message> {
    match instance::save_id(&mut OpenDir { dir: var }, id) {
        Ok(()) => Ok(()),
        Err(SaveError::TooLong) => Err(msg!("instance-id longer than {limit} bytes", limit = wisp_core::text::Decimal(INSTANCE_ID_LIMIT as u64))),
        Err(SaveError::Host(e)) => Err(crate::output::os_error("cannot save the instance-id", crate::host::errno(e))),
    }
}
