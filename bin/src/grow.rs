//! `expand_root`, `wisp grow MOUNTPOINT` and `wisp grow --image FILE --partition N`:
//! core's `partition::expand` on the root's devices (`host::block`).

use wisp_core::cli::GrowTarget;
use wisp_core::partition::expand;

use crate::context::Context;
use crate::host::system::System;
use crate::output::Message;

#[inline(never)]
pub fn mount(ctx: &Context<'_>, path: &[u8]) -> Result<Message, Message> {
    expand::mount(&mut System::new(ctx), path)
}

#[inline(never)]
pub fn command(ctx: &mut Context<'_>, target: GrowTarget<'_>) -> i32 {
    let result = match target {
        GrowTarget::Mount(mountpoint) => mount(ctx, mountpoint),
        GrowTarget::Image { file, partition } => expand::image(&mut System::new(ctx), file, partition),
    };
    match result {
        Ok(note) => {
            crate::output::print(format_args!("{note}"));
            0
        }
        Err(e) => {
            crate::output::error(format_args!("grow: {e}"));
            crate::EXIT_FAILED
        }
    }
}
