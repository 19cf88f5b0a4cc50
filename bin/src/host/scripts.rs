//! core's `Scripts` on `System`: user-data.log in TINY_CLOUD_LOGS, programs run with
//! `run_in_root`, script files written into their directory, and the instance's markers;
//! `with_hosts`, which gives one of core's `userdata_scripts` rules the system and the
//! scripts' directories; and core's `Commands` (the image's programs, the power) over it.

use core::ffi::CStr;

#[cfg(feature = "cloud-config")]
use wisp_core::cloud_config::PowerMode;
use wisp_core::host::HostError;
use wisp_core::script_exit::Ended;
use wisp_core::state_files::USER_DATA_LOG;
use wisp_core::userdata_scripts::{self, Places};
use wisp_os_linux::fs::{Dir, Resolve};
use wisp_os_linux::process::ExitStatus;
#[cfg(feature = "cloud-config")]
use wisp_os_linux::system::PowerAction;
use wisp_os_linux::nul_terminated::NulTerminated;
use wisp_os_linux::{AsFd, BorrowedFd};

use super::OpenDir;
use super::host_error;
use super::system::System;
use crate::context::Context;
use crate::markers::Markers;
use crate::output::Message;
use crate::userdata::UserData;

/// Runs `program` chrooted into the root (so by its path inside it), reading /dev/null.
fn run_in_root(ctx: &Context<'_>, program: &CStr, args: &[&CStr], env: Option<&CStr>, output: BorrowedFd<'_>) -> Result<ExitStatus, HostError> {
    let input = wisp_os_linux::fs::open_read(c"/dev/null").map_err(host_error)?;
    let root = ctx.program_root.as_ref().map(NulTerminated::as_cstr);
    wisp_os_linux::process::run(ctx.start, root, program, args, env, input.as_fd(), output).map_err(host_error)
}

impl wisp_core::host::scripts::Scripts for System<'_> {
    const PARTS: bool = cfg!(feature = "userdata");

    fn open_log(&mut self, fresh: bool) -> Result<(), HostError> {
        let logs = self.ctx.root_dir.create_beneath(self.ctx.config.logs_dir.as_bytes(), 0o755, Resolve::InRoot).map_err(host_error)?;
        let opened = if fresh { logs.create_truncate(USER_DATA_LOG, 0o600) } else { logs.open_append(USER_DATA_LOG, 0o600) };
        self.log = Some(opened.map_err(host_error)?);
        Ok(())
    }

    fn run(&mut self, program: &CStr, args: &[&CStr], env: Option<&CStr>) -> Result<Ended, HostError> {
        let output = self.log.as_ref().map_or(wisp_os_linux::stdio::stderr(), |log| log.as_fd());
        match run_in_root(self.ctx, program, args, env, output)? {
            ExitStatus::Exited(code) => Ok(Ended::Exited(code)),
            ExitStatus::Signaled(signal) => Ok(Ended::Signaled(signal)),
        }
    }

    fn save(&mut self, path: &[u8], contents: &[u8], mode: u32) -> Result<(), HostError> {
        let (dir, name) = self.files.parent(path)?;
        dir.write_volatile(name, contents, mode).map_err(host_error)
    }

    fn open_markers(&mut self) -> Result<(), Message> {
        // Every rule that asks for the markers runs in `with_hosts`, which sets `var`.
        let var = self.var.ok_or_else(|| msg!("TINY_CLOUD_VAR is not open"))?;
        self.markers = Some(Markers::open(var)?);
        Ok(())
    }

    fn is_done(&mut self, work: &str, item: Option<&str>) -> Result<bool, Message> {
        self.markers.as_ref().map_or(Ok(false), |markers| markers.is_done(work, item))
    }

    fn mark_done(&mut self, work: &str, item: Option<&str>) -> Result<(), Message> {
        self.markers.as_ref().map_or(Ok(()), |markers| markers.mark_done(self.ctx, work, item))
    }
}

/// One of core's `userdata_scripts` rules, given the system and the scripts' directories.
pub type Rule<'r> = dyn FnMut(&mut System<'_>, Places<'_, OpenDir<'_>, OpenDir<'_>>) -> Result<Message, Message> + 'r;

/// Runs `rule` (behind `dyn` so that it is compiled once) with the system,
/// TINY_CLOUD_LOGS and TINY_CLOUD_VAR (`var`, for the records of what ran).
pub fn with_hosts(ctx: &Context<'_>, var: &Dir, rule: &mut Rule<'_>) -> Result<Message, Message> {
    let logs = ctx.logs_dir()?;
    let mut var_dir = OpenDir { dir: var };
    let places = Places { var_dir: ctx.config.var_dir.as_bytes(), var: &mut var_dir, logs: &mut OpenDir { dir: &logs } };
    let mut system = System::new(ctx);
    system.var = Some(var);
    rule(&mut system, places)
}

pub fn run_userdata<'u>(ctx: &Context<'_>, var: &Dir, later_boot: bool, userdata: impl FnOnce() -> Result<Option<&'u UserData>, Message>) -> Result<Message, Message> {
    let mut userdata = Some(userdata);
    with_hosts(ctx, var, &mut |host, places| userdata_scripts::run_userdata(host, places, later_boot, || userdata.take().map_or(Ok(None), |read| read())))
}

#[cfg(feature = "userdata")]
pub fn run_boothooks(ctx: &Context<'_>, var: &Dir, userdata: Result<Option<&UserData>, Message>) -> Result<Message, Message> {
    let mut userdata = Some(userdata);
    with_hosts(ctx, var, &mut |host, places| userdata_scripts::run_boothooks(host, places, userdata.take().unwrap_or(Ok(None))))
}

/// The image's programs: the host keys' generators, their output on standard error or in
/// a file; cloud-config's programs and power_state's condition, their output in
/// user-data.log, a failed exit recorded and said as scripts' are; and the power: sync(2),
/// a sleep, reboot(2).
#[cfg(feature = "cloud-config")]
impl wisp_core::host::commands::Commands for System<'_> {
    fn run(&mut self, program: &CStr, args: &[&CStr], output: wisp_core::host::commands::Output<'_>) -> Result<bool, wisp_core::host::commands::RunError> {
        use wisp_core::host::commands::{Output, RunError};
        let file = match output {
            Output::StandardError => None,
            Output::File(path, mode) => {
                let (dir, name) = self.files.parent(path).map_err(RunError::Output)?;
                Some(dir.create_truncate(name, mode).map_err(|e| RunError::Output(host_error(e)))?)
            }
        };
        let output = file.as_ref().map_or(wisp_os_linux::stdio::stderr(), |f| f.as_fd());
        let status = run_in_root(self.ctx, program, args, None, output).map_err(RunError::Run)?;
        Ok(status == ExitStatus::Exited(0))
    }

    fn run_logged(&mut self, program: &CStr, args: &[&CStr], what: &str) -> Result<(), Message> {
        let logs = self.ctx.logs_dir()?;
        userdata_scripts::run_program(self, &mut OpenDir { dir: &logs }, program, args, what)
    }

    /// Saved in the scripts directory and run with `/bin/sh`.
    fn run_script(&mut self, name: &[u8], script: &[u8]) -> Result<bool, Message> {
        let var_dir = self.ctx.config.var_dir.as_bytes();
        Ok(userdata_scripts::run_saved_shell(self, var_dir, name, script, None)? == Ended::Exited(0))
    }

    fn sync_all(&mut self) {
        wisp_os_linux::fs::sync_all();
    }

    fn sleep_ms(&mut self, ms: u32) {
        wisp_os_linux::time::sleep_ms(ms);
    }

    fn reboot(&mut self, mode: PowerMode) -> HostError {
        let action = match mode {
            PowerMode::Poweroff => PowerAction::PowerOff,
            PowerMode::Reboot => PowerAction::Restart,
            PowerMode::Halt => PowerAction::Halt,
        };
        host_error(wisp_os_linux::system::reboot(action).err().unwrap_or(wisp_os_linux::Errno::INVAL))
    }
}
