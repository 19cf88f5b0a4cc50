//! What persists between boots in TINY_CLOUD_VAR: the completion marker (tiny-cloud's
//! file) and the instance-id it belongs to.

use wisp_os_linux::fs::Dir;

use crate::context::Context;
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

/// Where a bootstrap writes files it does not make durable itself: the root's filesystem
/// (/etc), /home (keys), and TINY_CLOUD_VAR and the logs, below. (`write_files` syncs
/// its files' directories as it writes them: they may be anywhere.)
const WRITTEN: [&[u8]; 2] = [b"/etc", b"/home"];

/// Sets or clears the marker, durably. Setting it first makes durable each filesystem a
/// bootstrap writes, one syncfs(2) each, so that after a crash the marker never vouches
/// for work that was lost: files replaced earlier had their contents synced before they
/// took their names, and this makes the names durable, and the files each run rewrites.
pub fn set_complete(ctx: &Context<'_>, var: &Dir, complete: bool) -> Result<(), Line> {
    let verb = if complete { "set" } else { "clear" };
    let fail = |e| msg!("cannot {verb} the completion marker: {}", Os(e));
    if complete {
        let mut synced: heapless::Vec<u64, 4> = heapless::Vec::new();
        let mut sync_once = |dir: &Dir| -> Result<(), Line> {
            let filesystem = dir.filesystem().map_err(fail)?;
            if !synced.contains(&filesystem) {
                dir.sync_filesystem().map_err(fail)?;
                let _ = synced.push(filesystem);
            }
            Ok(())
        };
        for dir in WRITTEN.into_iter().filter_map(|path| ctx.open_dir(path).ok()).chain(ctx.logs_dir().ok()) {
            sync_once(&dir)?;
        }
        sync_once(var)?;
        crate::markers::synced();
        // Only its name needs to be durable, which the directory's fsync makes it: a
        // crash that loses what it remembers costs a later boot a request, nothing else.
        // 0600: the kernel keeps product_uuid for root.
        var.write_volatile(MARKER, crate::boot_cache::instance_uuid(ctx, &mut [[0; 128]; 3]), 0o600).map_err(fail)?;
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
    // Without its own fsync: the sync before the completion marker makes it durable, and
    // until then a lost or cut copy only means "a new instance", as it is.
    var.write_volatile(INSTANCE_ID, &line, 0o644).map_err(|e| crate::output::os_error("cannot save the instance-id", e))
}
