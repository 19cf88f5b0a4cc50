//! A build without the `cloud-init-status` feature keeps no cloud-init status files:
//! the phases' calls do nothing, and `wisp status --wait` says why it cannot wait.

use wisp_core::config::Cloud;
use wisp_core::phase::{Failed, Phase};

use crate::context::Context;
use crate::output::Message;

/// Without status.json there is no record of earlier phases' failures: a phase run alone
/// runs all its actions.
pub fn update(_: &mut Context<'_>, _: Phase, _: Option<Cloud>, _: Option<Option<&str>>) -> Failed {
    Failed::default()
}

pub fn stage_finished(_: &mut Context<'_>, _: Phase, _: Option<Cloud>, _: Option<&Message>) {}

pub fn wait_for_result(_: &Context<'_>, _: Option<u32>) -> Result<bool, Message> {
    Err(crate::features::missing("status --wait", "cloud-init-status"))
}

