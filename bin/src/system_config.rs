//! cloud-config keys that change the system rather than accounts or files: `packages`
//! (through apk), `timezone`, `mounts` and `power_state`.

use core::ffi::CStr;

use wisp_core::cloud_config::{self, CloudConfig, Condition, PowerMode};
use wisp_core::yaml::Kind;
use wisp_os_linux::cpath::CPath;
use wisp_os_linux::process::ExitStatus;
use wisp_os_linux::AsFd;

use crate::context::Context;
use crate::output::{Line, Os, Shown};
use crate::scripts;

/// Most words of one command wisp runs for cloud-config (`apk add` and its packages).
const ARGS_LIMIT: usize = 48;

/// `package_update`, `package_upgrade` and `packages`, in cloud-init's order, with the
/// image's apk (`/sbin/apk` under the root); an image without apk gets a clear error.
#[inline(never)]
pub fn packages(ctx: &Context<'_>, config: &CloudConfig<'static>) -> Result<Line, Line> {
    let update = config.flag("package_update", false)?;
    let upgrade = config.flag("package_upgrade", false)?;
    let mut names: heapless::Vec<CPath, { ARGS_LIMIT - 2 }> = heapless::Vec::new();
    if let Some(list) = config.value("packages") {
        for item in cloud_config::items("packages", list)? {
            let mut name = CPath::new();
            let words: heapless::Vec<_, 2> = match item.kind() {
                Kind::Sequence => item.items().map(|w| cloud_config::text("packages", w)).collect::<Result<_, _>>()?,
                _ => core::iter::once(cloud_config::text("packages", item)).collect::<Result<_, _>>()?,
            };
            let bad = || msg!("cloud-config line {}: packages: a package is a name or [name, version]", item.line());
            let valid = |w: &str| !w.is_empty() && !w.starts_with('-') && w.bytes().all(|b| b.is_ascii_graphic());
            match words.as_slice() {
                [name_only] if valid(name_only) => name.push(name_only.as_bytes()),
                [package, version] if valid(package) && valid(version) => {
                    name.push(package.as_bytes()).and_then(|()| name.push(b"=")).and_then(|()| name.push(version.as_bytes()))
                }
                _ => return Err(bad()),
            }
            .map_err(|e| msg!("packages: {e}"))?;
            names.push(name).map_err(|_| msg!("packages: more than {} packages", ARGS_LIMIT - 2))?;
        }
    }
    if !update && !upgrade && names.is_empty() {
        return Ok(msg!("no packages"));
    }
    let apk = ctx.path(b"/sbin/apk")?;
    if !matches!(wisp_os_linux::fs::metadata(apk.as_cstr()), Ok(Some(_))) {
        return Err(msg!("packages: /sbin/apk not found (wisp installs packages with apk only)"));
    }
    if update {
        run(ctx, &apk, &[c"apk", c"update"], "apk update")?;
    }
    if upgrade {
        run(ctx, &apk, &[c"apk", c"upgrade"], "apk upgrade")?;
    }
    if !names.is_empty() {
        let mut args: heapless::Vec<&CStr, ARGS_LIMIT> = heapless::Vec::new();
        let _ = args.extend_from_slice(&[c"apk", c"add"]);
        for name in &names {
            let _ = args.push(name.as_cstr());
        }
        run(ctx, &apk, &args, "apk add")?;
    }
    Ok(msg!("{} packages{}{}", names.len(), if update { ", updated" } else { "" }, if upgrade { ", upgraded" } else { "" }))
}

/// Runs a program with its output in user-data.log; a failure fails the action.
fn run(ctx: &Context<'_>, program: &CPath, args: &[&CStr], what: &str) -> Result<(), Line> {
    let output = scripts::open_log(ctx, true)?;
    let input = wisp_os_linux::fs::open_read(c"/dev/null").map_err(|e| msg!("/dev/null: {}", Os(e)))?;
    let status = wisp_os_linux::process::run(ctx.start, program.as_cstr(), args, input.as_fd(), output.as_fd())
        .map_err(|e| msg!("cannot run {what}: {}", Os(e)))?;
    scripts::finish(ctx, status, what).map(|_| ())
}

/// `timezone`: /etc/localtime points at the zone's file (which must exist in the image),
/// and /etc/timezone names it, as Alpine's setup-timezone leaves them.
#[inline(never)]
pub fn timezone(ctx: &Context<'_>, config: &CloudConfig<'static>) -> Result<Line, Line> {
    let Some(value) = config.value("timezone") else { return Ok(msg!("no timezone")) };
    let zone = cloud_config::text("timezone", value)?;
    wisp_core::timezone::validate(zone).map_err(|e| msg!("cloud-config line {}: timezone {}: {e}", value.line(), Shown(zone.as_bytes())))?;
    let zoneinfo = CPath::from_parts(&[b"/usr/share/zoneinfo/", zone.as_bytes()]).map_err(|e| msg!("timezone: {e}"))?;
    if !matches!(wisp_os_linux::fs::metadata(ctx.path(zoneinfo.as_bytes())?.as_cstr()), Ok(Some(m)) if m.is_file()) {
        return Err(msg!("timezone {}: no {} in the image (install tzdata)", Shown(zone.as_bytes()), Shown(zoneinfo.as_bytes())));
    }
    let etc = ctx.create_dir(b"/etc")?;
    let mut current = [0u8; 256];
    if etc.read_link(b"localtime", &mut current).map_err(|e| msg!("/etc/localtime: {}", Os(e)))? != Some(zoneinfo.as_bytes()) {
        etc.replace_symlink(zoneinfo.as_bytes(), b"localtime").map_err(|e| msg!("/etc/localtime: {}", Os(e)))?;
    }
    let mut line = heapless::Vec::<u8, 130>::new();
    let _ = line.extend_from_slice(zone.as_bytes());
    let _ = line.push(b'\n');
    if !etc.has_contents(b"timezone", &line).unwrap_or(false) {
        etc.write_atomic(b"timezone", &line, 0o644, None).map_err(|e| msg!("/etc/timezone: {}", Os(e)))?;
    }
    Ok(msg!("{zone}"))
}

/// `power_state`: after the bootstrap is marked complete, the image's own `poweroff`,
/// `reboot` or `halt` (so services stop cleanly), given the delay in seconds; its
/// `condition` (a command) decides first.
#[inline(never)]
pub fn power_state(ctx: &Context<'_>, config: &CloudConfig<'static>) -> Result<Line, Line> {
    let Some(value) = config.value("power_state") else { return Ok(msg!("no power_state")) };
    let state = cloud_config::power_state(value)?;
    match state.condition {
        Condition::Never => return Ok(msg!("condition is false: nothing done")),
        Condition::Always => {}
        Condition::Command(command) => {
            let mut script = [0u8; 4096];
            let len = cloud_config::command_script("power_state", command, &mut script).map_err(|e| msg!("{e}"))?;
            let dir = ctx.create_dir(crate::userdata::var_child(ctx, b"scripts")?.as_bytes())?;
            dir.write_atomic(b"power-state-condition", &script[..len], 0o700, None).map_err(|e| msg!("power_state: {}", Os(e)))?;
            let path = scripts::script_path(ctx, &[b"scripts/power-state-condition"])?;
            let output = scripts::open_log(ctx, true)?;
            if scripts::run_shell(ctx, &path, output.as_fd())? != ExitStatus::Exited(0) {
                return Ok(msg!("condition exited non-zero: nothing done"));
            }
        }
    }
    let (program, name): (&[u8], &CStr) = match state.mode {
        PowerMode::Poweroff => (b"/sbin/poweroff", c"poweroff"),
        PowerMode::Reboot => (b"/sbin/reboot", c"reboot"),
        PowerMode::Halt => (b"/sbin/halt", c"halt"),
    };
    if let Some(message) = state.message {
        crate::output::error(format_args!("power_state: {}", Shown(message.as_bytes())));
    }
    let path = ctx.path(program)?;
    let mut delay = heapless::String::<24>::new();
    let _ = core::fmt::write(&mut delay, format_args!("{}", state.delay_seconds));
    let delay = CPath::from_parts(&[delay.as_bytes()]).map_err(|e| msg!("{e}"))?;
    wisp_os_linux::fs::sync_all();
    run(ctx, &path, &[name, c"-d", delay.as_cstr()], name.to_str().unwrap_or("power"))?;
    Ok(msg!("{} in {} seconds", name.to_str().unwrap_or(""), state.delay_seconds))
}

/// TEMPORARY
pub fn mounts(_ctx: &Context<'_>, config: &CloudConfig<'static>) -> Result<Line, Line> {
    match config.value("mounts") { None => Ok(msg!("no mounts")), Some(_) => Err(msg!("mounts: not yet")) }
}
