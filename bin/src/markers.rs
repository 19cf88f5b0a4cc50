//! The markers in `$TINY_CLOUD_VAR`: tiny-cloud's completion marker (core's `completion`)
//! and `sem/`'s of finished per-instance work, and when they are made durable (core's
//! `markers`: the completion marker's sync makes `sem/` durable too); and the crash points
//! of the tests.

use wisp_core::instance::{saved_id, INSTANCE_ID_LIMIT};
use wisp_core::completion;
use wisp_core::markers::{Durability, MarkError};
use wisp_core::phase_run::{CrashPoints, CRASH_AT};
use wisp_core::state_files::SEM_DIR;
use wisp_os_linux::fs::Dir;
use wisp_core::host::HostError;

use crate::context::Context;
use crate::host::{errno, OpenDir};
use crate::output::{Message, Os};

pub struct Markers {
    dir: Dir,
    id: heapless::Vec<u8, INSTANCE_ID_LIMIT>,
}

impl Markers {
    /// The markers of the instance whose id is saved in `var`.
    #[inline(never)]
    pub fn open(var: &Dir) -> Result<Markers, Message> {
        let mut buf = [0u8; INSTANCE_ID_LIMIT];
        let id = saved_id(&mut OpenDir { dir: var }, &mut buf).ok_or_else(|| msg!("no saved instance-id"))?;
        let dir = var.create_dir(SEM_DIR, 0o700).and_then(|_| var.open_child(SEM_DIR)).map_err(|e| crate::output::path_error(b"sem", e))?;
        Ok(Markers { dir, id: heapless::Vec::from_slice(id).unwrap_or_default() })
    }

    /// Whether `work` (`item` of it) finished for this instance (see `Durability::is_done`).
    #[inline(never)]
    pub fn is_done(&self, work: &str, item: Option<&str>) -> Result<bool, Message> {
        SEM.is_done(&mut OpenDir { dir: &self.dir }, work, item, &self.id).map_err(sem_error)
    }

    /// Records that `work` finished; made durable before the next piece of work starts.
    #[inline(never)]
    pub fn mark_done(&self, ctx: &Context<'_>, work: &str, item: Option<&str>) -> Result<(), Message> {
        SEM.mark_done(&mut OpenDir { dir: &self.dir }, work, item, &self.id).map_err(|e| match e {
            MarkError::BadName(e) => crate::output::line(e),
            MarkError::Host { name, error } => msg!("sem/{name}: {}", Os(crate::host::errno(error)), name = wisp_core::text::Plain(&name)),
        })?;
        crash_point(ctx);
        Ok(())
    }
}

/// Whether this run's markers are durable.
static SEM: Durability = Durability::new();

fn sem_error(e: HostError) -> Message {
    crate::output::path_error(b"sem", errno(e))
}

/// Sets or clears the completion marker, durably (see `completion::mark`); setting it
/// syncs the filesystem, and so `sem/`.
pub fn set_complete(ctx: &Context<'_>, var: &Dir, complete: bool) -> Result<(), Message> {
    let (logs, var_path) = (ctx.config.logs_dir.as_bytes(), ctx.config.var_dir.as_bytes());
    let marked = completion::mark(&mut OpenDir::root(ctx), &mut OpenDir { dir: var }, complete, logs, var_path, || SEM.synced());
    marked.map_err(|e| crate::output::path_error(e.what().as_bytes(), errno(e.error)))
}

/// At the end of a run: the markers not yet durable are made so.
pub fn settle(var: &Dir) -> Result<(), Message> {
    SEM.settle(|| var.open_child(SEM_DIR).and_then(|dir| dir.sync()).map_err(crate::host::host_error)).map_err(sem_error)
}

/// A test hook (`phase_run::CRASH_AT`): the process stops here, as a crash would.
#[inline(never)]
pub fn crash_point(ctx: &Context<'_>) {
    if CRASH_POINTS.reached(ctx.start.env(CRASH_AT)) {
        wisp_os_linux::process::exit(99);
    }
}

static CRASH_POINTS: CrashPoints = CrashPoints::new();
