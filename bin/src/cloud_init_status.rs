//! Keeps cloud-init's `/run/cloud-init/status.json` and `result.json` as the phases run,
//! so that `cloud-init status --wait` works on a wisp image. A file that cannot be written
//! is logged and never fails the bootstrap: the status only reports on the work. A build
//! without the `cloud-init-status` feature records nothing (a phase run alone then runs
//! all its actions) and `wisp status --wait` says why it cannot wait.

use wisp_core::cloud_init_status as documents;
use wisp_core::config::Cloud;
use wisp_core::phase::{Failed, Phase};
use wisp_core::phases_start::Starting;
use wisp_os_linux::time::realtime_ms;

use crate::context::Context;
use crate::host::OpenDir;
use crate::output::Message;
use crate::host::system::System;

/// Under the root, as every path is; a tmpfs on a real system, so each boot starts afresh.
pub const RUN_DIR: &[u8] = b"/run/cloud-init";

/// Whether this build keeps the status files: without, the code below is never reached.
const BUILT: bool = cfg!(feature = "cloud-init-status");

/// The run's log, and each phase's start and end in cloud-init's status, before the
/// first phase too (`phases_start`).
impl Starting for Context<'_> {
    type Text = Message;

    fn log(&mut self, args: core::fmt::Arguments<'_>) {
        self.log.line(args);
    }

    // Inlined: a call of its own costs 40 bytes.
    #[inline(always)]
    fn stage_started(&mut self, phase: Phase, cloud: Option<Cloud>) -> Failed {
        update(self, phase, cloud, None)
    }

    fn stage_finished(&mut self, phase: Phase, cloud: Option<Cloud>, failure: Option<&Message>) {
        if !BUILT {
            return;
        }
        let reason = failure.map(|line| msg!("{line}"));
        update(self, phase, cloud, Some(reason.as_ref().map(|line| line.text())));
    }
}

/// Records that `phase` started (`end: None`), or ended with the reason it failed, if it
/// did; what the earlier phases of this boot recorded failing.
fn update(ctx: &mut Context<'_>, phase: Phase, cloud: Option<Cloud>, end: Option<Option<&str>>) -> Failed {
    if !BUILT {
        return Failed::default();
    }
    let system = System::new(ctx);
    let room = crate::memory::map(documents::ROOM, "cloud-init's status");
    let recorded = room.and_then(|mut room| ctx.create_dir(RUN_DIR, wisp_os_linux::fs::Resolve::InRoot).and_then(|dir| documents::record(&mut OpenDir { dir: &dir }, &system, &mut room, phase, cloud, end, Some(realtime_ms()))));
    recorded.unwrap_or_else(|e| {
        ctx.log.line(format_args!("cloud-init status: {e}"));
        Failed::default()
    })
}
