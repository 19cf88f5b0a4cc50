//! What persists between boots in TINY_CLOUD_VAR: the completion marker (tiny-cloud's
//! file) and the instance-id it belongs to.

use wisp_os_linux::fs::Dir;

use crate::context::Context;
use crate::output::{Line, Os};

pub const MARKER: &[u8] = b".bootstrap-complete";
pub const INSTANCE_ID: &[u8] = b".instance-id";
/// Longest instance-id kept.
pub const INSTANCE_ID_LIMIT: usize = 256;

pub fn is_complete(var: &Dir) -> Result<bool, Line> {
    match var.metadata(MARKER) {
        Ok(found) => Ok(found.is_some()),
        Err(e) => Err(crate::output::os_error("cannot read the completion marker", e)),
    }
}

/// Where a bootstrap writes, besides `write_files`: the root's filesystem (/etc), /home
/// (keys), TINY_CLOUD_VAR and the logs.
const WRITTEN: [&[u8]; 2] = [b"/etc", b"/home"];

/// Filesystems made durable with syncfs(2), each once.
pub struct Synced(heapless::Vec<u64, 8>);

impl Synced {
    pub const fn new() -> Synced {
        Synced(heapless::Vec::new())
    }

    /// syncfs(2) of `dir`'s filesystem, unless done already.
    pub fn sync(&mut self, dir: &Dir) -> Result<(), Line> {
        let fail = |e| msg!("cannot sync before the completion marker: {}", Os(e));
        let filesystem = dir.filesystem().map_err(fail)?;
        if !self.0.contains(&filesystem) {
            dir.sync_filesystem().map_err(fail)?;
            let _ = self.0.push(filesystem);
        }
        Ok(())
    }
}

/// Sets or clears the marker, durably. Setting it first makes durable every filesystem
/// the bootstrap wrote (those `synced` has, and those it writes on every run), one
/// syncfs(2) each, so that after a crash the marker never vouches for work that was
/// lost; files replaced earlier had their contents synced before they took their names,
/// and this makes the names durable.
pub fn set_complete(ctx: &Context<'_>, var: &Dir, complete: bool, mut synced: Synced) -> Result<(), Line> {
    let verb = if complete { "set" } else { "clear" };
    let fail = |e| msg!("cannot {verb} the completion marker: {}", Os(e));
    if complete {
        for path in WRITTEN {
            if let Ok(dir) = ctx.open_dir(path) {
                synced.sync(&dir)?;
            }
        }
        synced.sync(&ctx.logs_dir()?)?;
        synced.sync(var)?;
        // Empty: only its name needs to be durable, which the directory's fsync makes it.
        var.write_volatile(MARKER, b"", 0o644).map_err(fail)?;
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
