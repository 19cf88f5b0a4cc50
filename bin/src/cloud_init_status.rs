//! Keeps cloud-init's `/run/cloud-init/status.json` and `result.json` as the phases run,
//! so that `cloud-init status --wait` works on a wisp image. A file that cannot be written
//! is logged and never fails the bootstrap: the status only reports on the work.

use wisp_core::cloud_init_status::{self as documents, Status};
use wisp_core::config::Cloud;
use wisp_core::out::Out;
use wisp_core::phase::{Failed, Phase};
use wisp_core::text::Decimal;
use wisp_os_linux::fs::Dir;
use wisp_os_linux::time::realtime_ms;

use crate::context::Context;
use crate::output::{Line, Os};

/// Under the root, as every path is; a tmpfs on a real system, so each boot starts afresh.
pub const RUN_DIR: &[u8] = b"/run/cloud-init";
pub const RESULT_PATH: &[u8] = b"/run/cloud-init/result.json";
const STATUS_FILE: &str = "status.json";
const RESULT_FILE: &str = "result.json";
/// Largest document: four stages of one error line each, escaped, fit with room to spare.
pub const DOCUMENT_LIMIT: usize = 16 * 1024;

/// Marks `phase` as running. The result of an earlier run is removed first, so a reader
/// never sees it beside a stage that has not finished. Returns what failed in this
/// boot's phases before it, as the file recorded them: a phase run alone (as the service
/// scripts run them) knows what the earlier ones left undone. The boot phase starts the
/// record, so it has nothing before it.
pub fn stage_started(ctx: &mut Context<'_>, phase: Phase, cloud: Option<Cloud>) -> Failed {
    update(ctx, phase, cloud, None)
}

/// Records the end of `phase`, with the reason it failed, if it did. The final phase's
/// end, and any failure, also write `result.json`, which ends `cloud-init status --wait`.
pub fn stage_finished(ctx: &mut Context<'_>, phase: Phase, cloud: Option<Cloud>, failure: Option<&Line>) {
    let reason = failure.map(|line| msg!("{line}"));
    update(ctx, phase, cloud, Some(reason.as_ref().map(|line| line.text())));
}

/// Polls for `result.json` every 250 ms (for at most `timeout_s`), as cloud-init's command
/// does; says whether its list of errors (which the log has too) is empty. Out of line:
/// inlined into `main`, it costs 200 bytes more.
#[inline(never)]
pub fn wait_for_result(ctx: &Context<'_>, timeout_s: Option<u32>) -> Result<bool, Line> {
    let mut buf = [0u8; DOCUMENT_LIMIT];
    let started = wisp_os_linux::time::monotonic_ms();
    loop {
        if let Some(document) = ctx.read(RESULT_PATH, &mut buf)? {
            let errors = documents::result_has_errors(document);
            return errors.map(|any| !any).map_err(|e| msg!("{}: {e}", crate::output::Shown(RESULT_PATH)));
        }
        if let Some(limit) = timeout_s {
            if wisp_os_linux::time::monotonic_ms() - started >= u64::from(limit) * 1000 {
                return Err(msg!("status --wait: no {} after {limit} s (--timeout)", crate::output::Shown(RESULT_PATH), limit = Decimal(limit.into())));
            }
        }
        wisp_os_linux::time::sleep_ms(250);
    }
}

fn update(ctx: &mut Context<'_>, phase: Phase, cloud: Option<Cloud>, end: Option<Option<&str>>) -> Failed {
    write_documents(ctx, phase, cloud, end).unwrap_or_else(|e| {
        ctx.log.line(format_args!("cloud-init status: {e}"));
        Failed::default()
    })
}

fn write_documents(ctx: &Context<'_>, phase: Phase, cloud: Option<Cloud>, end: Option<Option<&str>>) -> Result<Failed, Line> {
    let dir = ctx.create_dir(RUN_DIR)?;
    let mut earlier = [0u8; DOCUMENT_LIMIT];
    let mut status = Status::default();
    // A damaged document is started afresh.
    if Status::continues_record(phase, end.is_some()) {
        if let Ok(Some(len)) = dir.read(STATUS_FILE.as_bytes(), &mut earlier) {
            if status.read(&earlier[..len]).is_err() {
                status = Status::default();
            }
        }
    }
    let failed = status.failed_before(phase);
    status.datasource = cloud.and_then(documents::datasource);
    let now = Some(realtime_ms());
    match end {
        None => {
            dir.remove(RESULT_FILE.as_bytes()).map_err(|e| msg!("cannot remove {RESULT_FILE}: {}", Os(e)))?;
            status.start(phase, now);
        }
        Some(failure) => status.finish(phase, now, failure),
    }
    write(&dir, STATUS_FILE, &status, false)?;
    if end.is_some() && status.result_due(phase) {
        write(&dir, RESULT_FILE, &status, true)?;
    }
    Ok(failed)
}

fn write(dir: &Dir, name: &str, status: &Status<'_>, result: bool) -> Result<(), Line> {
    let mut buf = [0u8; DOCUMENT_LIMIT];
    let mut out = Out::new(&mut buf);
    let rendered = if result { status.write_result(&mut out) } else { status.write(&mut out) };
    rendered.map_err(|e| msg!("{name} longer than {} bytes", Decimal(e.limit as u64)))?;
    dir.write_volatile(name.as_bytes(), out.written(), 0o644).map_err(|e| msg!("cannot write {name}: {}", Os(e)))
}
