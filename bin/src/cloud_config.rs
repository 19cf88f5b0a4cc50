//! The `userdata_*` actions that apply `#cloud-config`. Work in progress: the YAML reader
//! is being written; until it lands these actions only say so.

use wisp_core::phase::Action;
use wisp_core::userdata::Kind;
use wisp_os_linux::fs::Dir;

use crate::context::Context;
use crate::output::Line;
use crate::phases::Session;

pub fn run(ctx: &Context<'_>, session: &mut Session<'_>, var: &Dir, action: Action) -> Result<Line, Line> {
    let _ = action;
    match session.userdata(ctx, var)? {
        Some(userdata) if userdata.of_kind(Kind::CloudConfig).next().is_some() => Ok(msg!("cloud-config is not applied yet")),
        _ => Ok(msg!("no cloud-config")),
    }
}
