//! A build without the `cloud-init-status` feature keeps no cloud-init status files:
//! the phases' calls do nothing (and `wisp status --wait` says why it cannot wait: `main`).

use wisp_core::config::Cloud;
use wisp_core::phase::Phase;

use crate::context::Context;
use crate::output::Message;

/// Without status.json there is no record of earlier phases' failures: a phase run alone
/// runs all its actions.
pub fn stage_started(_: &mut Context<'_>, _: Phase, _: Option<Cloud>) -> wisp_core::phase::Failed {
    wisp_core::phase::Failed::default()
}

pub fn stage_finished(_: &mut Context<'_>, _: Phase, _: Option<Cloud>, _: Option<&Message>) {}
