//! The completion marker in TINY_CLOUD_VAR (tiny-cloud's file), by core's `completion`
//! rules. The instance-id it belongs to is `instance_id`'s.

use wisp_core::text::Plain;
use wisp_core::completion;
use wisp_os_linux::fs::Dir;

use crate::context::Context;
use crate::host::{errno, OpenDir};
use crate::output::{Message, Os};

pub fn is_complete(var: &Dir) -> Result<bool, Message> {
    completion::is_complete(&mut OpenDir { dir: var }).map_err(|e| crate::output::os_error("cannot read the completion marker", errno(e)))
}

/// Sets or clears the marker, durably (see `completion::set`).
pub fn set_complete(ctx: &Context<'_>, var: &Dir, complete: bool) -> Result<(), Message> {
    let verb = if complete { "set" } else { "clear" };
    let dir = &mut OpenDir { dir: var };
    let done = match complete {
        true => completion::set(&mut crate::host::files::Root::of(ctx), dir, ctx.config.logs_dir.as_bytes(), ctx.config.var_dir.as_bytes(), crate::markers::synced),
        false => completion::clear(dir),
    };
    done.map_err(|e| msg!("cannot {verb} the completion marker: {}", Os(errno(e)), verb = Plain(verb)))
}
