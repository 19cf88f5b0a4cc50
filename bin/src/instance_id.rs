//! `$TINY_CLOUD_VAR/.instance-id`: the instance the saved state belongs to. A phase
//! compares it with the metadata service's to tell a later boot from a new instance.

use wisp_os_linux::fs::Dir;

use crate::output::Line;

pub use wisp_core::state_files::INSTANCE_ID;
/// Longest instance-id kept.
pub const INSTANCE_ID_LIMIT: usize = 256;

/// The instance-id saved by an earlier run, if any.
pub fn saved<'b>(var: &Dir, buf: &'b mut [u8; INSTANCE_ID_LIMIT]) -> Option<&'b [u8]> {
    match var.read(INSTANCE_ID, buf) {
        Ok(Some(len)) => Some(buf[..len].strip_suffix(b"\n").unwrap_or(&buf[..len])),
        _ => None,
    }
}

pub fn save(var: &Dir, id: &[u8]) -> Result<(), Line> {
    let mut line = heapless::Vec::<u8, { INSTANCE_ID_LIMIT + 1 }>::new();
    if line.extend_from_slice(id).is_err() || line.push(b'\n').is_err() {
        return Err(msg!("instance-id longer than {INSTANCE_ID_LIMIT} bytes"));
    }
    if var.has_contents(INSTANCE_ID, &line).unwrap_or(false) {
        return Ok(());
    }
    // Without its own fsync: the sync before the completion marker makes it durable, and
    // until then a lost or cut copy only means "a new instance", as it is.
    var.write_volatile(INSTANCE_ID, &line, 0o644).map_err(|e| crate::output::os_error("cannot save the instance-id", e))
}
