//! Azure's provisioning report (core's `provider::azure_report`) over Linux's network,
//! remembered under TINY_CLOUD_VAR, in words. A report that cannot be delivered is logged: it
//! never stops the bootstrap.

use wisp_core::host::explain::{words, Worded};
use wisp_core::provider::azure_report::{self, Ready, GOAL_STATE_LIMIT};
use wisp_core::retry::Timeouts;
use wisp_core::text::Plain;
use wisp_os_linux::fs::Dir;

use crate::host::{errno, Network, OpenDir};
use crate::output::Message;

/// "Ready", once per instance.
pub fn report_ready(timeouts: &Timeouts, var: &Dir, instance_id: &[u8]) -> Message {
    let mut goal = [0u8; GOAL_STATE_LIMIT];
    match azure_report::report_ready_once(&mut Network::default(), &mut OpenDir { dir: var }, timeouts, instance_id, &mut goal) {
        Ready::AlreadyReported => msg!("azure: ready was reported for this instance already"),
        Ready::Reported(how) => msg!("azure: reported ready ({})", Plain(how)),
        Ready::NotRemembered(how, e) => msg!("azure: reported ready ({}), but cannot remember it: {}", Plain(how), crate::output::Os(errno(e))),
        Ready::Failed(e) => msg!("azure: could not report ready: {}", Worded(&e, words::<Message>)),
    }
}

/// "NotReady" with the reason provisioning failed.
pub fn report_failure(timeouts: &Timeouts, reason: &Message) -> Message {
    let mut text = heapless::String::<256>::new();
    let _ = core::fmt::write(&mut text, format_args!("{reason}"));
    match azure_report::report_failure(&mut Network::default(), timeouts, text.as_bytes()) {
        Ok(how) => msg!("azure: reported the failure ({})", Plain(how)),
        Err(e) => msg!("azure: could not report the failure: {}", Worded(&e, words::<Message>)),
    }
}
