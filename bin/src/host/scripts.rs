//! core's `Scripts` over Linux: user-data.log in TINY_CLOUD_LOGS, programs run with
//! `run_in_root`, script files written into their directory, and the instance's markers.

use core::ffi::CStr;

use wisp_core::host::HostError;
use wisp_core::script_exit::Ended;
use wisp_core::state_files::USER_DATA_LOG;
use wisp_os_linux::fs::Dir;
use wisp_os_linux::process::ExitStatus;
use wisp_os_linux::{AsFd, OwnedFd};

use super::OpenDir;
use super::host_error;
use crate::context::Context;
use crate::markers::Markers;
use crate::output::Message;

/// What user-data's scripts run against: TINY_CLOUD_LOGS, open, and TINY_CLOUD_VAR for
/// the markers (without it, none is asked for).
pub struct ScriptRuns<'c> {
    pub ctx: &'c Context<'c>,
    pub var: Option<&'c Dir>,
    pub logs: &'c Dir,
    /// user-data.log, once `open_log` opened it.
    pub log: Option<OwnedFd>,
    pub markers: Option<Markers>,
}

impl wisp_core::host::scripts::Scripts for ScriptRuns<'_> {
    type Text = Message;
    const PARTS: bool = cfg!(feature = "userdata");

    fn open_log(&mut self, fresh: bool) -> Result<(), HostError> {
        let opened = if fresh { self.logs.create_truncate(USER_DATA_LOG, 0o600) } else { self.logs.open_append(USER_DATA_LOG, 0o600) };
        self.log = Some(opened.map_err(host_error)?);
        Ok(())
    }

    fn run(&mut self, program: &CStr, args: &[&CStr], env: Option<&CStr>) -> Result<Ended, HostError> {
        let output = self.log.as_ref().map_or(wisp_os_linux::stdio::stderr(), |log| log.as_fd());
        match super::run_in_root(self.ctx, program, args, env, output)? {
            ExitStatus::Exited(code) => Ok(Ended::Exited(code)),
            ExitStatus::Signaled(signal) => Ok(Ended::Signaled(signal)),
        }
    }

    fn save(&mut self, path: &[u8], contents: &[u8], mode: u32) -> Result<(), HostError> {
        let (dir, name) = OpenDir::root(self.ctx).parent(path)?;
        dir.write_volatile(name, contents, mode).map_err(host_error)
    }

    fn open_markers(&mut self) -> Result<(), Message> {
        if let Some(var) = self.var {
            self.markers = Some(Markers::open(var)?);
        }
        Ok(())
    }

    fn is_done(&mut self, work: &str, item: Option<&str>) -> Result<bool, Message> {
        self.markers.as_ref().map_or(Ok(false), |markers| markers.is_done(work, item))
    }

    fn mark_done(&mut self, work: &str, item: Option<&str>) -> Result<(), Message> {
        self.markers.as_ref().map_or(Ok(()), |markers| markers.mark_done(self.ctx, work, item))
    }
}
