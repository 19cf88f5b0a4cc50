//! Azure's provisioning report (core's `provider::azure_report`) over Linux's network,
//! remembered under TINY_CLOUD_VAR. A report that cannot be delivered is logged: it
//! never stops the bootstrap.

use wisp_core::host::http::Described;
use wisp_core::provider::azure_report::{self, GOAL_STATE_LIMIT};
use wisp_core::retry::Timeouts;
use wisp_core::state_files::AZURE_REPORTED as REPORTED;
use wisp_os_linux::fs::Dir;

use crate::host::{errno_words, Network};
use crate::output::Line;

/// "Ready", once per instance.
pub fn report_ready(timeouts: &Timeouts, var: &Dir, instance_id: &[u8]) -> Line {
    let mut saved = [0u8; 256];
    if let Ok(Some(len)) = var.read(REPORTED, &mut saved) {
        if azure_report::already_reported(&saved[..len], instance_id) {
            return msg!("azure: ready was reported for this instance already");
        }
    }
    let mut goal = [0u8; GOAL_STATE_LIMIT];
    match azure_report::report_ready(&mut Network { guest_socket: None }, timeouts, &mut goal) {
        Ok(how) => {
            if let Err(e) = var.write_atomic(REPORTED, &azure_report::ready_record(instance_id), 0o644, None) {
                return msg!("azure: reported ready ({how}), but cannot remember it: {}", crate::output::Os(e));
            }
            msg!("azure: reported ready ({how})")
        }
        Err(e) => msg!("azure: could not report ready: {}", Described(&e, errno_words)),
    }
}

/// "NotReady" with the reason provisioning failed.
pub fn report_failure(timeouts: &Timeouts, reason: &Line) -> Line {
    let mut text = heapless::String::<256>::new();
    let _ = core::fmt::write(&mut text, format_args!("{reason}"));
    match azure_report::report_failure(&mut Network { guest_socket: None }, timeouts, text.as_bytes()) {
        Ok(how) => msg!("azure: reported the failure ({how})"),
        Err(e) => msg!("azure: could not report the failure: {}", Described(&e, errno_words)),
    }
}
