//! Running user-data's scripts: the `#!` document or MIME script parts (`run_userdata`),
//! cloud-init's per-boot, per-instance and per-once script directories, and boothooks.
//! Output goes to `user-data.log`, the last exit status to `user-data.exit` (core's
//! `script_exit`); the first
//! script that fails stops the action.

use core::ffi::CStr;

use wisp_core::script;
use wisp_core::script_exit::{self, Ended};
use wisp_core::script_directories::{self, Frequency, DIRECTORY_LIMIT};
use wisp_core::text::{Decimal, Plain};
use wisp_core::userdata::{self, Handling, Kind, ScriptName};
use wisp_os_linux::nul_terminated::NulTerminated;
use wisp_os_linux::fs::{self, Dir};
use wisp_os_linux::process::{self, ExitStatus};
use wisp_os_linux::{AsFd, BorrowedFd, OwnedFd};

use crate::context::Context;
use crate::host::{errno, OpenDir};
use crate::markers::Markers;
use crate::output::{Message, Os, Shown};
use crate::userdata::{var_child, Part, UserData};

// Under TINY_CLOUD_VAR: MIME script parts, and cloud-init's script directories in
// `scripts`; the markers of the per-once and per-instance scripts.
use wisp_core::state_files::{BOOTHOOKS_DIR, PER_INSTANCE_DONE, PER_ONCE_DONE, SCRIPTS_DIR, USER_DATA_LOG};

/// `run_userdata`: the per-X script directories (user-data's per-X parts written into
/// them first), then the user-data script or MIME script parts. On a later boot of a
/// bootstrapped instance, only the per-boot directory. `userdata` is asked for only
/// when it is used (the log is opened first).
#[inline(never)]
pub fn run_userdata<'u>(
    ctx: &Context<'_>,
    var: &Dir,
    later_boot: bool,
    userdata: impl FnOnce() -> Result<Option<&'u UserData>, Message>,
) -> Result<Message, Message> {
    let mut id_buf = [0u8; crate::instance_id::INSTANCE_ID_LIMIT];
    let id = crate::instance_id::saved(var, &mut id_buf).unwrap_or(b"");
    let output = open_log(ctx, later_boot)?;
    let userdata = match later_boot {
        true => None,
        false => userdata()?,
    };
    let scripts = ctx.create_dir(var_child(ctx, SCRIPTS_DIR)?.as_bytes())?;
    let mut ran = 0;
    for frequency in Frequency::ALL {
        let directory = frequency.directory();
        let mut path = var_child(ctx, SCRIPTS_DIR)?;
        path.push(b"/").and_then(|()| path.push(directory)).map_err(crate::output::line)?;
        let dir = ctx.create_dir(path.as_bytes())?;
        // Only MIME parts are per-X scripts.
        #[cfg(feature = "userdata")]
        if let Some(userdata) = userdata {
            for (index, part) in userdata.of_kind(frequency.part_kind()) {
                let name = part_name(part, index);
                dir.write_volatile(name.as_bytes(), part.bytes, 0o700).map_err(|e| msg!("cannot save {name}: {}", Os(e), name = Plain(&name)))?;
            }
        }
        let ran_before = || match frequency {
            Frequency::Instance => var.has_contents(PER_INSTANCE_DONE, id).unwrap_or(false),
            _ => matches!(var.metadata(PER_ONCE_DONE), Ok(Some(_))),
        };
        if !frequency.is_due(later_boot, ran_before) {
            continue;
        }
        let markers = match frequency {
            Frequency::Instance => Some(Markers::open(var)?),
            _ => None,
        };
        ran += run_directory(ctx, directory, &dir, output.as_fd(), markers.as_ref())?;
        let done = match frequency {
            Frequency::Boot => Ok(()),
            // Made durable with the rest by the sync before the completion marker.
            Frequency::Once => var.write_volatile(PER_ONCE_DONE, b"", 0o644),
            Frequency::Instance => var.write_volatile(PER_INSTANCE_DONE, id, 0o644),
        };
        done.map_err(|e| msg!("cannot record that the {} scripts ran: {}", Shown(directory), Os(e)))?;
    }
    let Some(userdata) = userdata else {
        record_exit(ctx, ExitStatus::Exited(0))?;
        let what = if later_boot { "per-boot" } else { "user-data is empty or absent; image" };
        return Ok(msg!("{what} scripts: {ran} ran", ran = Decimal(ran as u64), what = Plain(what)));
    };
    let markers = Markers::open(var)?;
    let (mut skipped, mut done) = (0, 0);
    for (index, part) in userdata.parts.iter().enumerate() {
        match part.kind.handling() {
            Handling::Script => {
                // A lone script runs as tiny-cloud runs it: the saved file itself; a build
                // without `userdata` has no other kind.
                #[cfg(feature = "userdata")]
                let own_name = part_name(part, index);
                #[cfg(feature = "userdata")]
                let name = if part.whole { "user-data" } else { own_name.as_str() };
                #[cfg(not(feature = "userdata"))]
                let name = "user-data";
                if markers.is_done("script", Some(name))? {
                    done += 1;
                    continue;
                }
                #[cfg(feature = "userdata")]
                let path = if part.whole {
                    script_path(ctx, &[wisp_core::state_files::USER_DATA])?
                } else {
                    scripts.write_volatile(name.as_bytes(), part.bytes, 0o700).map_err(|e| msg!("cannot save {name}: {}", Os(e), name = Plain(&name)))?;
                    script_path(ctx, &[SCRIPTS_DIR, b"/", name.as_bytes()])?
                };
                #[cfg(not(feature = "userdata"))]
                let path = script_path(ctx, &[wisp_core::state_files::USER_DATA])?;
                let status = run_script(ctx, part.bytes, &path, None, output.as_fd())?;
                markers.mark_done(ctx, "script", Some(name))?;
                finish(ctx, status, if part.whole { "user-data script" } else { name })?;
                ran += 1;
            }
            // An include is followed as the user-data is decoded: one here was not.
            Handling::Unsupported | Handling::Include => {
                skipped += 1;
                crate::output::error(format_args!("user-data part {} ({}): {}: not supported, not run", Decimal((index + 1) as u64), Plain(&part.media_type), Plain(part.kind.name())));
            }
            // Handled by other actions.
            Handling::ScriptDirectory | Handling::CloudConfig | Handling::Boothook => {}
        }
    }
    record_exit(ctx, ExitStatus::Exited(0))?;
    Ok(msg!("{ran} scripts ran, {done} had run already, {skipped} parts not supported", ran = Decimal(ran as u64), done = Decimal(done as u64), skipped = Decimal(skipped as u64)))
}

/// `userdata_boothooks`: cloud-init's boothooks, every boot, before anything else of
/// user-data: the part less its `#cloud-boothook` line, run as a script (`/bin/sh` when it
/// has no `#!` line).
#[cfg(feature = "userdata")]
#[inline(never)]
pub fn run_boothooks(ctx: &Context<'_>, var: &Dir, userdata: Result<Option<&UserData>, Message>) -> Result<Message, Message> {
    let userdata = match userdata {
        Ok(Some(userdata)) => userdata,
        Ok(None) => return Ok(msg!("no user-data")),
        // The main phase reports it and stops: the instance still gets its keys first.
        Err(e) => return Ok(msg!("skipped: {e}")),
    };
    let mut ran = 0;
    let instance_env = instance_env(var)?;
    let dir = ctx.create_dir(var_child(ctx, BOOTHOOKS_DIR)?.as_bytes())?;
    let output = open_log(ctx, true)?;
    for (index, part) in userdata.of_kind(Kind::Boothook) {
        let text = part.bytes.trim_ascii_start();
        let body = text.iter().position(|&b| b == b'\n').map_or(&b""[..], |end| &text[end + 1..]);
        let name = part_name(part, index);
        dir.write_volatile(name.as_bytes(), body, 0o700).map_err(|e| msg!("cannot save boothook {name}: {}", Os(e), name = Plain(&name)))?;
        let path = script_path(ctx, &[BOOTHOOKS_DIR, b"/", name.as_bytes()])?;
        let env = Some(instance_env.as_cstr());
        let status = if body.starts_with(b"#!") { run_script(ctx, body, &path, env, output.as_fd())? } else { run_shell(ctx, &path, env, output.as_fd())? };
        finish(ctx, status, &name)?;
        ran += 1;
    }
    Ok(msg!("{ran} boothooks ran", ran = Decimal(ran as u64)))
}

/// `INSTANCE_ID=<saved instance-id>`, which cloud-init gives boothooks and `bootcmd`.
pub fn instance_env(var: &Dir) -> Result<NulTerminated, Message> {
    let mut id = [0u8; crate::instance_id::INSTANCE_ID_LIMIT];
    let id = crate::instance_id::saved(var, &mut id).unwrap_or(b"");
    NulTerminated::from_parts(&[b"INSTANCE_ID=", id]).map_err(crate::output::line)
}

/// Runs the executable files of a script directory in name order, as run-parts does.
/// Scripts `markers` has marked done are not run again.
fn run_directory(ctx: &Context<'_>, directory: &[u8], dir: &Dir, output: BorrowedFd<'_>, markers: Option<&Markers>) -> Result<usize, Message> {
    let mut names: heapless::Vec<ScriptName, DIRECTORY_LIMIT> = heapless::Vec::new();
    let mut refused: Option<Message> = None;
    dir.for_each_entry(|name| {
        if !script_directories::is_listed(name) || refused.is_some() {
            return;
        }
        let kept = core::str::from_utf8(name).ok().and_then(|n| heapless::String::try_from(n).ok());
        refused = match kept.map(|name| names.push(name)) {
            Some(Ok(())) => None,
            Some(Err(_)) => Some(msg!("scripts/{}: more than {limit} entries", Shown(directory), limit = Decimal(DIRECTORY_LIMIT as u64))),
            None => Some(msg!(
                "scripts/{}/{}: a name longer than {} bytes, or not UTF-8",
                Shown(directory),
                Shown(name),
                Decimal(wisp_core::userdata::SCRIPT_NAME_LIMIT as u64)
            )),
        };
    })
    .map_err(|e| msg!("scripts/{}: {}", Shown(directory), Os(e)))?;
    if let Some(reason) = refused {
        return Err(reason);
    }
    script_directories::sort(&mut names);
    let mut ran = 0;
    for name in &names {
        let executable = matches!(dir.metadata(name.as_bytes()), Ok(Some(m)) if m.is_file() && m.permissions() & 0o111 != 0);
        if !executable {
            continue;
        }
        if let Some(markers) = markers {
            if markers.is_done("per-instance", Some(name))? {
                continue;
            }
        }
        let path = script_path(ctx, &[SCRIPTS_DIR, b"/", directory, b"/", name.as_bytes()])?;
        let status = execute(ctx, path.as_cstr(), &[path.as_cstr()], None, output)
            .map_err(|e| msg!("cannot run scripts/{}/{name}: {e}", Shown(directory), name = Plain(&name)))?;
        if let Some(markers) = markers {
            markers.mark_done(ctx, "per-instance", Some(name))?;
        }
        let mut label = heapless::String::<160>::new();
        let _ = core::fmt::write(&mut label, format_args!("scripts/{}/{name}", Shown(directory), name = Plain(name)));
        finish(ctx, status, &label)?;
        ran += 1;
    }
    Ok(ran)
}

fn part_name(part: &Part, index: usize) -> ScriptName {
    userdata::script_name(part.filename.as_ref(), index)
}

/// `$TINY_CLOUD_VAR/<parts...>` as a program sees it: inside the root it runs in.
pub fn script_path(ctx: &Context<'_>, parts: &[&[u8]]) -> Result<NulTerminated, Message> {
    let mut path = NulTerminated::from_parts(&[ctx.config.var_dir.as_bytes(), b"/"]).map_err(crate::output::line)?;
    for part in parts {
        path.push(part).map_err(crate::output::line)?;
    }
    Ok(path)
}

/// `user-data.log`, started afresh by a bootstrap and appended to on later boots.
pub fn open_log(ctx: &Context<'_>, append: bool) -> Result<OwnedFd, Message> {
    let logs = ctx.logs_dir()?;
    let opened = if append { logs.open_append(USER_DATA_LOG, 0o600) } else { logs.create_truncate(USER_DATA_LOG, 0o600) };
    opened.map_err(|e| crate::output::os_error("cannot open user-data.log", e))
}

/// Runs one script with the interpreter its `#!` names, so the saved copy needs no
/// execute bit.
pub fn run_script(ctx: &Context<'_>, text: &[u8], path: &NulTerminated, env: Option<&CStr>, output: BorrowedFd<'_>) -> Result<ExitStatus, Message> {
    let shebang = script::parse(text).map_err(|e| msg!("user-data: {e}"))?;
    let interpreter = NulTerminated::from_parts(&[shebang.interpreter]).map_err(|e| msg!("user-data interpreter: {e}"))?;
    let argument = NulTerminated::from_parts(&[shebang.argument.unwrap_or(b"")]).map_err(|e| msg!("user-data interpreter argument: {e}"))?;
    let mut args: heapless::Vec<&CStr, 3> = heapless::Vec::new();
    let _ = args.push(interpreter.as_cstr());
    if shebang.argument.is_some() {
        let _ = args.push(argument.as_cstr());
    }
    let _ = args.push(path.as_cstr());
    execute(ctx, interpreter.as_cstr(), &args, env, output).map_err(|e| msg!("cannot start {}: {e}", Shown(shebang.interpreter)))
}

/// Saves `text` as `$TINY_CLOUD_VAR/scripts/<name>` and runs it with `/bin/sh`, its
/// output in user-data.log: what `bootcmd`, `runcmd` and power_state's condition become.
pub fn run_saved_shell(ctx: &Context<'_>, name: &[u8], text: &[u8], env: Option<&CStr>) -> Result<ExitStatus, Message> {
    let dir = ctx.create_dir(var_child(ctx, SCRIPTS_DIR)?.as_bytes())?;
    dir.write_volatile(name, text, 0o700).map_err(|e| msg!("cannot save scripts/{}: {}", Shown(name), Os(e)))?;
    let path = script_path(ctx, &[SCRIPTS_DIR, b"/", name])?;
    let output = open_log(ctx, true)?;
    run_shell(ctx, &path, env, output.as_fd())
}

/// Runs a shell script file with `/bin/sh`, `env` added to its environment.
pub fn run_shell(ctx: &Context<'_>, path: &NulTerminated, env: Option<&CStr>, output: BorrowedFd<'_>) -> Result<ExitStatus, Message> {
    execute(ctx, c"/bin/sh", &[c"sh", path.as_cstr()], env, output).map_err(|e| msg!("cannot start /bin/sh: {e}"))
}

/// Runs `program` (a path inside the root) with standard input from /dev/null, output to
/// `output`, chrooted into `--root` when one is given: an image builder's user-data must
/// change the image, never the machine building it.
pub fn execute(ctx: &Context<'_>, program: &CStr, args: &[&CStr], env: Option<&CStr>, output: BorrowedFd<'_>) -> Result<ExitStatus, Message> {
    let input = fs::open_read(c"/dev/null").map_err(|e| crate::output::os_error("/dev/null", e))?;
    process::run(ctx.start, ctx.program_root(), program, args, env, input.as_fd(), output).map_err(|e| msg!("{}", Os(e)))
}

/// A script's end: a failure is recorded in `user-data.exit` and fails the action.
pub fn finish(ctx: &Context<'_>, status: ExitStatus, what: &str) -> Result<Message, Message> {
    let ended = ended(status);
    if ended.succeeded() {
        return Ok(msg!("script exited 0"));
    }
    record_exit(ctx, status)?;
    Err(match ended {
        // Never negative: printed as u32, so the binary has one formatter less (i32's).
        Ended::Exited(code) => msg!("{what} exited with status {} (output in user-data.log)", Decimal(code.unsigned_abs().into()), what = Plain(what)),
        Ended::Signaled(signal) => msg!("{what} killed by signal {} (output in user-data.log)", Decimal(signal.unsigned_abs().into()), what = Plain(what)),
    })
}

fn ended(status: ExitStatus) -> Ended {
    match status {
        ExitStatus::Exited(code) => Ended::Exited(code),
        ExitStatus::Signaled(signal) => Ended::Signaled(signal),
    }
}

/// `user-data.exit`, by core's `script_exit`.
fn record_exit(ctx: &Context<'_>, status: ExitStatus) -> Result<(), Message> {
    let logs = ctx.logs_dir()?;
    script_exit::record(&mut OpenDir { dir: &logs }, ended(status)).map_err(|e| crate::output::os_error("cannot write user-data.exit", errno(e)))
}
