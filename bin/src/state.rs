//! What persists between boots in TINY_CLOUD_VAR: the completion marker (tiny-cloud's
//! file) and the instance-id it belongs to.

use wisp_os_linux::fs::Dir;

use crate::output::{Line, Os};

pub use wisp_core::state_files::{INSTANCE_ID, MARKER};
/// Longest instance-id kept.
pub const INSTANCE_ID_LIMIT: usize = 256;

pub fn is_complete(var: &Dir) -> Result<bool, Line> {
    match var.metadata(MARKER) {
        Ok(found) => Ok(found.is_some()),
        Err(e) => Err(crate::output::os_error("cannot read the completion marker", e)),
    }
}

/// Sets or clears the marker, durably. Everything the bootstrap wrote, on whichever
/// filesystem, is flushed first, so that after a crash the marker never vouches for
/// work that was lost.
pub fn set_complete(var: &Dir, complete: bool) -> Result<(), Line> {
    let verb = if complete { "set" } else { "clear" };
    let fail = |e| msg!("cannot {verb} the completion marker: {}", Os(e));
    if complete {
        wisp_os_linux::fs::sync_all();
        var.write_atomic(MARKER, b"", 0o644, None).map_err(fail)?;
    } else {
        var.remove(MARKER).map_err(fail)?;
    }
    var.sync().map_err(fail)
}

/// The instance-id saved by an earlier run, if any.
pub fn saved_instance_id<'b>(var: &Dir, buf: &'b mut [u8; INSTANCE_ID_LIMIT]) -> Option<&'b [u8]> {
    match var.read(INSTANCE_ID, buf) {
        Ok(Some(len)) => Some(buf[..len].strip_suffix(b"\n").unwrap_or(&buf[..len])),
        _ => None,
    }
}

pub fn save_instance_id(var: &Dir, id: &[u8]) -> Result<(), Line> {
    let mut line = heapless::Vec::<u8, { INSTANCE_ID_LIMIT + 1 }>::new();
    if line.extend_from_slice(id).is_err() || line.push(b'\n').is_err() {
        return Err(msg!("instance-id longer than {INSTANCE_ID_LIMIT} bytes"));
    }
    if var.has_contents(INSTANCE_ID, &line).unwrap_or(false) {
        return Ok(());
    }
    var.write_atomic(INSTANCE_ID, &line, 0o644, None).map_err(|e| crate::output::os_error("cannot save the instance-id", e))
}
