//! `$TINY_CLOUD_VAR/.instance-id`: the instance the saved state belongs to (core's
//! `instance` reads and writes it; a phase compares it with the metadata service's).

use wisp_core::instance;
use wisp_os_linux::fs::Dir;

use crate::host::OpenDir;

pub use wisp_core::instance::INSTANCE_ID_LIMIT;

/// The instance-id saved by an earlier run, if any.
pub fn saved<'b>(var: &Dir, buf: &'b mut [u8; INSTANCE_ID_LIMIT]) -> Option<&'b [u8]> {
    instance::saved_id(&mut OpenDir { dir: var }, buf)
}
