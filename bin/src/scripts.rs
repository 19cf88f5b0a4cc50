//! User-data's scripts (core's `userdata_scripts`), run against TINY_CLOUD_VAR and
//! TINY_CLOUD_LOGS as `host::scripts::ScriptRuns` reaches them.

use core::ffi::CStr;

use wisp_core::script_exit::Ended;
use wisp_core::userdata_scripts::{self, Places};
use wisp_os_linux::fs::Dir;

use crate::context::Context;
use crate::host::scripts::ScriptRuns;
use crate::host::system::System;
use crate::host::OpenDir;
use crate::output::Message;
use crate::userdata::UserData;

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
