//! Azure's provisioning report to the wireserver. Without "Ready" the platform waits and
//! finally fails the VM; with "NotReady" and a reason the user sees why at once. A report
//! that cannot be delivered is logged: it never stops the bootstrap.

use core::ops::Range;

use wisp_core::http::{self, Method, Request};
use wisp_core::provider::azure;
use wisp_core::retry::Timeouts;
use wisp_os_linux::fs::Dir;

use crate::fetch::{exchange_all, Exchange};
use crate::output::{Line, Shown};

/// Remembers the instance that was reported ready, under TINY_CLOUD_VAR.
use wisp_core::state_files::AZURE_REPORTED as REPORTED;

/// "Ready", once per instance.
pub fn report_ready(timeouts: &Timeouts, var: &Dir, instance_id: &[u8]) -> Line {
    let mut saved = [0u8; 256];
    if let Ok(Some(len)) = var.read(REPORTED, &mut saved) {
        if saved[..len].strip_suffix(b"\n") == Some(instance_id) {
            return msg!("azure: ready was reported for this instance already");
        }
    }
    match report(timeouts, azure::READY, true) {
        Ok(how) => {
            let mut line = heapless::Vec::<u8, 257>::new();
            let _ = line.extend_from_slice(instance_id);
            let _ = line.push(b'\n');
            if let Err(e) = var.write_atomic(REPORTED, &line, 0o644, None) {
                return msg!("azure: reported ready ({how}), but cannot remember it: {}", crate::output::Os(e));
            }
            msg!("azure: reported ready ({how})")
        }
        Err(e) => msg!("azure: could not report ready: {e}"),
    }
}

/// "NotReady" with the reason provisioning failed.
pub fn report_failure(timeouts: &Timeouts, reason: &Line) -> Line {
    let mut body = [0u8; 512];
    let mut text = heapless::String::<256>::new();
    let _ = core::fmt::write(&mut text, format_args!("{reason}"));
    let len = azure::not_ready(text.as_bytes(), &mut body).unwrap_or(0);
    match report(timeouts, &body[..len], false) {
        Ok(how) => msg!("azure: reported the failure ({how})"),
        Err(e) => msg!("azure: could not report the failure: {e}"),
    }
}

/// The JSON health endpoint; when it is refused and the report is "Ready", the older
/// goal-state protocol (which has no way to carry a failure's reason).
fn report(timeouts: &Timeouts, body: &[u8], ready: bool) -> Result<&'static str, Line> {
    let headers = [("Content-Type", "application/json")];
    let post = Request { method: Method::Post, host: azure::WIRESERVER_HOST, path: azure::HEALTH_PATH, headers: &headers, body };
    let mut response = [0u8; 4096];
    let status = exchange(timeouts, &post, &mut response)?.0;
    if (200..300).contains(&status) {
        return Ok("provisioning/health");
    }
    if !ready {
        return Err(msg!("provisioning/health answered {}", u32::from(status)));
    }
    let goal = Request { method: Method::Get, host: azure::WIRESERVER_HOST, path: azure::GOAL_STATE_PATH, headers: &azure::WIRESERVER_HEADERS, body: b"" };
    let mut goal_response = [0u8; 16 * 1024];
    let (status, body) = exchange(timeouts, &goal, &mut goal_response)?;
    let xml = &goal_response[body];
    if status != 200 {
        return Err(msg!("provisioning/health refused, and the goal state answered {}", u32::from(status)));
    }
    let state = azure::parse_goal_state(xml).ok_or_else(|| msg!("the goal state names no incarnation, container and instance"))?;
    let mut report = [0u8; 2048];
    let len = azure::health_report(&state, &mut report).map_err(|_| msg!("health report larger than 2048 bytes"))?;
    let headers = [azure::WIRESERVER_HEADERS[0], azure::WIRESERVER_HEADERS[1], ("Content-Type", "text/xml; charset=utf-8")];
    let post = Request { method: Method::Post, host: azure::WIRESERVER_HOST, path: azure::HEALTH_REPORT_PATH, headers: &headers, body: &report[..len] };
    let mut answer = [0u8; 4096];
    match exchange(timeouts, &post, &mut answer)?.0 {
        200..=299 => Ok("goal state health report"),
        status => Err(msg!("the goal state health report answered {} (incarnation {})", u32::from(status), Shown(state.incarnation))),
    }
}

/// One request to the wireserver: the status and where the body lies in `response`.
fn exchange(timeouts: &Timeouts, request: &Request<'_>, response: &mut [u8]) -> Result<(u16, Range<usize>), Line> {
    let mut bytes = [0u8; 4096];
    let len = http::write_request(request, &mut bytes).map_err(crate::output::line)?;
    let mut exchanges = [Exchange::new(&bytes[..len], response)];
    exchange_all(&mut exchanges, azure::WIRESERVER_ADDRESS, 80, timeouts);
    exchanges[0].result().map_err(|e| msg!("wireserver: {e}"))
}
