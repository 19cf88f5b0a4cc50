//! core's `Scripts` over Linux: user-data.log in TINY_CLOUD_LOGS, programs run with
//! `run_in_root`, script files written into their directory, and the instance's markers;
//! `with_hosts`, which builds it with the root and the scripts' directories for one of
//! core's `userdata_scripts` rules; and core's `Commands` (cloud-config's programs) over it.

use core::ffi::CStr;

use wisp_core::host::HostError;
use wisp_core::script_exit::Ended;
use wisp_core::state_files::USER_DATA_LOG;
use wisp_core::userdata_scripts::{self, Places};
use wisp_os_linux::fs::Dir;
use wisp_os_linux::process::ExitStatus;
use wisp_os_linux::{AsFd, OwnedFd};

use super::OpenDir;
use super::host_error;
use super::system::System;
use crate::context::Context;
use crate::markers::Markers;
use crate::output::Message;
use crate::userdata::UserData;

/// What user-data's scripts run against: TINY_CLOUD_LOGS, open, and TINY_CLOUD_VAR for
/// the markers (without it, none is asked for).
pub struct ScriptRuns<'c> {
    ctx: &'c Context<'c>,
    var: Option<&'c Dir>,
    logs: &'c Dir,
    /// user-data.log, once `open_log` opened it.
    log: Option<OwnedFd>,
    markers: Option<Markers>,
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

/// A rule of core's `userdata_scripts`, given its hosts: one instantiation of `with_hosts`.
pub type Rule<'r> = &'r mut dyn FnMut(&mut System<'_>, &mut ScriptRuns<'_>, Places<'_, OpenDir<'_>, OpenDir<'_>>) -> Result<Message, Message>;

/// Runs `rule` with the root, the scripts' host, TINY_CLOUD_LOGS and TINY_CLOUD_VAR
/// (`var`, for the markers and the records of what ran; a rule given none uses neither).
#[inline(never)]
pub fn with_hosts(ctx: &Context<'_>, var: Option<&Dir>, rule: Rule<'_>) -> Result<Message, Message> {
    let logs = ctx.logs_dir()?;
    let mut var_dir = OpenDir { dir: var.unwrap_or(&logs) };
    let places = Places { var_dir: ctx.config.var_dir.as_bytes(), var: &mut var_dir, logs: &mut OpenDir { dir: &logs } };
    rule(&mut System::new(ctx), &mut ScriptRuns { ctx, var, logs: &logs, log: None, markers: None }, places)
}

pub fn run_userdata<'u>(ctx: &Context<'_>, var: &Dir, later_boot: bool, userdata: impl FnOnce() -> Result<Option<&'u UserData>, Message>) -> Result<Message, Message> {
    let mut userdata = Some(userdata);
    with_hosts(ctx, Some(var), &mut |host, runs, places| userdata_scripts::run_userdata(host, runs, places, later_boot, || userdata.take().map_or(Ok(None), |read| read())))
}

#[cfg(feature = "userdata")]
pub fn run_boothooks(ctx: &Context<'_>, var: &Dir, userdata: Result<Option<&UserData>, Message>) -> Result<Message, Message> {
    let mut userdata = Some(userdata);
    with_hosts(ctx, Some(var), &mut |host, runs, places| userdata_scripts::run_boothooks(host, runs, places, userdata.take().unwrap_or(Ok(None))))
}

/// The image's programs and power_state's condition as cloud-config runs them: their
/// output in user-data.log, a failed exit recorded and said as scripts' are.
#[cfg(feature = "cloud-config")]
impl wisp_core::host::commands::Commands for System<'_> {
    fn run_logged(&mut self, program: &CStr, args: &[&CStr], what: &str) -> Result<(), Message> {
        with_hosts(self.ctx, None, &mut |host, runs, places| userdata_scripts::run_program(host, runs, places.logs, program, args, what).map(|()| Message::new())).map(|_| ())
    }

    /// Saved in the scripts directory and run with `/bin/sh`.
    fn run_script(&mut self, name: &[u8], script: &[u8]) -> Result<bool, Message> {
        let mut status = Ended::Exited(0);
        with_hosts(self.ctx, None, &mut |host, runs, places| {
            status = userdata_scripts::run_saved_shell(host, runs, places.var_dir, name, script, None)?;
            Ok(Message::new())
        })?;
        Ok(status == Ended::Exited(0))
    }
}
