//! The completion marker in TINY_CLOUD_VAR (tiny-cloud's file), by core's `completion`
//! rules. The instance-id it belongs to is `instance_id`'s.

use wisp_core::completion;
use wisp_os_linux::fs::Dir;

use crate::context::Context;
use crate::host::{errno, OpenDir};
use crate::output::Message;

/// Sets or clears the marker, durably (see `completion::set`).
pub fn set_complete(ctx: &Context<'_>, var: &Dir, complete: bool) -> Result<(), Message> {
    let dir = &mut OpenDir { dir: var };
    let (done, what) = match complete {
        true => (completion::set(&mut crate::host::files::Root::of(ctx), dir, ctx.config.logs_dir.as_bytes(), ctx.config.var_dir.as_bytes(), crate::markers::synced), "cannot set the completion marker"),
        false => (completion::clear(dir), "cannot clear the completion marker"),
    };
    done.map_err(|e| crate::output::os_error(what, errno(e)))
}
