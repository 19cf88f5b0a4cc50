//! Keeps cloud-init's `/run/cloud-init/status.json` and `result.json` as the phases run,
//! so that `cloud-init status --wait` works on a wisp image. A file that cannot be written
//! is logged and never fails the bootstrap: the status only reports on the work.

use wisp_core::cloud_init_status as documents;
use wisp_core::config::Cloud;
use wisp_core::phase::{Failed, Phase};
use wisp_os_linux::time::realtime_ms;

use crate::context::Context;
use crate::host::OpenDir;
use crate::output::Message;
use crate::host::system::System;

/// Under the root, as every path is; a tmpfs on a real system, so each boot starts afresh.
pub const RUN_DIR: &[u8] = b"/run/cloud-init";

/// Marks `phase` as running; returns what failed in this boot's phases before it (see
/// `cloud_init_status::record`).
pub fn stage_started(ctx: &mut Context<'_>, phase: Phase, cloud: Option<Cloud>) -> Failed {
    update(ctx, phase, cloud, None)
}

/// Records the end of `phase`, with the reason it failed, if it did.
pub fn stage_finished(ctx: &mut Context<'_>, phase: Phase, cloud: Option<Cloud>, failure: Option<&Message>) {
    let reason = failure.map(|line| msg!("{line}"));
    update(ctx, phase, cloud, Some(reason.as_ref().map(|line| line.text())));
}

fn update(ctx: &mut Context<'_>, phase: Phase, cloud: Option<Cloud>, end: Option<Option<&str>>) -> Failed {
    let system = System::new(ctx);
    let recorded = ctx.create_dir(RUN_DIR).and_then(|dir| documents::record(&mut OpenDir { dir: &dir }, &system, phase, cloud, end, Some(realtime_ms())));
    recorded.unwrap_or_else(|e| {
        ctx.log.line(format_args!("cloud-init status: {e}"));
        Failed::default()
    })
}
