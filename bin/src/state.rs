//! The completion marker in TINY_CLOUD_VAR (tiny-cloud's file): set once a bootstrap
//! is done, and made durable with everything before it. The instance-id it belongs to
//! is `instance_id`'s.

use wisp_core::text::Plain;
use wisp_os_linux::fs::Dir;

use crate::context::Context;
use crate::output::{Line, Os};

pub use wisp_core::state_files::MARKER;

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
    let fail = |e| msg!("cannot {verb} the completion marker: {}", Os(e), verb = Plain(verb));
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
