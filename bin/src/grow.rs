//! Growing the root partition and filesystem.

use wisp_core::cli::GrowTarget;

use crate::context::Context;
use crate::output::Line;

pub fn expand_root(_ctx: &mut Context<'_>) -> Result<Line, Line> {
    Err(msg!("growing the root is not built into this wisp yet"))
}

pub fn command(_ctx: &mut Context<'_>, _target: GrowTarget<'_>) -> i32 {
    crate::output::error(format_args!("grow is not built into this wisp yet"));
    crate::EXIT_FAILED
}
