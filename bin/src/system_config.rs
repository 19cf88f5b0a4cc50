//! cloud-config keys that change the system rather than accounts or files: `packages`
//! (through apk), `timezone`, `mounts` and `power_state`.

use core::ffi::CStr;

use wisp_core::cloud_config::{self, CloudConfig, Condition, PowerMode};
use wisp_core::packages::Package;
use wisp_core::text::Decimal;
use wisp_core::{fstab, mount_options};
use wisp_os_linux::mount;
use wisp_os_linux::system::PowerAction;
use wisp_core::yaml::Kind;
use wisp_os_linux::nul_terminated::NulTerminated;
use wisp_os_linux::fs::Dir;
use wisp_os_linux::process::ExitStatus;

use crate::context::Context;
use crate::output::{Message, Os, Shown};
use crate::scripts;

/// Most words of one command wisp runs for cloud-config (`apk add` and its packages).
const ARGS_LIMIT: usize = 48;

/// `package_update`, `package_upgrade` and `packages`, in cloud-init's order, with the
/// image's apk (`/sbin/apk` under the root); an image without apk gets a clear error.
/// `None`: none of them asks for anything.
#[inline(never)]
pub fn packages(ctx: &Context<'_>, config: &CloudConfig<'static>) -> Result<Option<Message>, Message> {
    let update = config.flag("package_update", false)?;
    let upgrade = config.flag("package_upgrade", false)?;
    let mut names: heapless::Vec<NulTerminated, { ARGS_LIMIT - 2 }> = heapless::Vec::new();
    if let Some(list) = config.value("packages") {
        // Another package manager's form (`{apt: [...]}`) is left out, with a warning.
        for item in cloud_config::items("packages", list)?.filter(|item| item.kind() != Kind::Mapping) {
            let mut name = NulTerminated::new();
            let words: heapless::Vec<_, 2> = match item.kind() {
                Kind::Sequence => item.items().map(|w| cloud_config::text("packages", w)).collect::<Result<_, _>>()?,
                _ => core::iter::once(cloud_config::text("packages", item)).collect::<Result<_, _>>()?,
            };
            let Some(package) = Package::from_words(&words) else {
                return Err(msg!("cloud-config line {}: packages: a package is a name or [name, version]", Decimal(item.line().into())));
            };
            match package.version {
                None => name.push(package.name.as_bytes()),
                Some(version) => name.push(package.name.as_bytes()).and_then(|()| name.push(b"=")).and_then(|()| name.push(version.as_bytes())),
            }
            .map_err(|e| msg!("packages: {e}"))?;
            names.push(name).map_err(|_| msg!("packages: more than {} packages", Decimal((ARGS_LIMIT - 2) as u64)))?;
        }
    }
    if !update && !upgrade && names.is_empty() {
        return Ok(None);
    }
    if !matches!(wisp_os_linux::fs::metadata(ctx.path(b"/sbin/apk")?.as_cstr()), Ok(Some(_))) {
        return Err(msg!("packages: /sbin/apk not found (wisp installs packages with apk only)"));
    }
    if update {
        run(ctx, c"/sbin/apk", &[c"apk", c"update"], "apk update")?;
    }
    if upgrade {
        run(ctx, c"/sbin/apk", &[c"apk", c"upgrade"], "apk upgrade")?;
    }
    if !names.is_empty() {
        let mut args: heapless::Vec<&CStr, ARGS_LIMIT> = heapless::Vec::new();
        let _ = args.extend_from_slice(&[c"apk", c"add"]);
        for name in &names {
            let _ = args.push(name.as_cstr());
        }
        run(ctx, c"/sbin/apk", &args, "apk add")?;
    }
    Ok(Some(msg!("{} packages{}{}", Decimal(names.len() as u64), if update { ", updated" } else { "" }, if upgrade { ", upgraded" } else { "" })))
}

/// Runs a program of the image (a path inside the root) with its output in
/// user-data.log; a failure fails the action.
fn run(ctx: &Context<'_>, program: &CStr, args: &[&CStr], what: &str) -> Result<(), Message> {
    scripts::run_program(ctx, program, args, what)
}

/// `timezone`: /etc/localtime points at the zone's file (which must exist in the image),
/// and /etc/timezone names it, as Alpine's setup-timezone leaves them.
#[inline(never)]
pub fn timezone(ctx: &Context<'_>, config: &CloudConfig<'static>) -> Result<Message, Message> {
    let Some(value) = config.value("timezone") else { return Ok(msg!("no timezone")) };
    let zone = cloud_config::text("timezone", value)?;
    wisp_core::timezone::check(zone.as_bytes()).map_err(|e| msg!("cloud-config line {}: timezone {}: {e}", Decimal(value.line().into()), Shown(zone.as_bytes())))?;
    let zoneinfo = NulTerminated::from_parts(&[b"/usr/share/zoneinfo/", zone.as_bytes()]).map_err(|e| msg!("timezone: {e}"))?;
    if !matches!(wisp_os_linux::fs::metadata(ctx.path(zoneinfo.as_bytes())?.as_cstr()), Ok(Some(m)) if m.is_file()) {
        return Err(msg!("timezone {}: no {} in the image (install tzdata)", Shown(zone.as_bytes()), Shown(zoneinfo.as_bytes())));
    }
    let etc = ctx.create_dir(b"/etc")?;
    let mut current = [0u8; 256];
    if etc.read_link(b"localtime", &mut current).map_err(|e| crate::output::os_error("/etc/localtime", e))? != Some(zoneinfo.as_bytes()) {
        etc.replace_symlink(zoneinfo.as_bytes(), b"localtime").map_err(|e| crate::output::os_error("/etc/localtime", e))?;
    }
    let mut line = heapless::Vec::<u8, 130>::new();
    let _ = line.extend_from_slice(zone.as_bytes());
    let _ = line.push(b'\n');
    if !etc.has_contents(b"timezone", &line).unwrap_or(false) {
        etc.write_atomic(b"timezone", &line, 0o644, None).map_err(|e| crate::output::os_error("/etc/timezone", e))?;
    }
    Ok(msg!("{zone}"))
}

/// `power_state`: after the bootstrap is marked complete, the image's own `poweroff`,
/// `reboot` or `halt` (so services stop cleanly), given the delay in seconds; its
/// `condition` (a command) decides first.
#[inline(never)]
pub fn power_state(ctx: &Context<'_>, config: &CloudConfig<'static>) -> Result<Message, Message> {
    let Some(value) = config.value("power_state") else { return Ok(msg!("no power_state")) };
    let state = cloud_config::power_state(value)?;
    match state.condition {
        Condition::Never => return Ok(msg!("condition is false: nothing done")),
        Condition::Always => {}
        Condition::Command(command) => {
            let mut script = [0u8; 4096];
            let len = cloud_config::command_script("power_state", command, &mut script).map_err(crate::output::line)?;
            if scripts::run_saved_shell(ctx, b"power-state-condition", &script[..len], None)? != ExitStatus::Exited(0) {
                return Ok(msg!("condition exited non-zero: nothing done"));
            }
        }
    }
    let (program, name) = state.mode.program();
    let action = match state.mode {
        PowerMode::Poweroff => PowerAction::PowerOff,
        PowerMode::Reboot => PowerAction::Restart,
        PowerMode::Halt => PowerAction::Halt,
    };
    if let Some(message) = state.message {
        crate::output::error(format_args!("power_state: {}", Shown(message.as_bytes())));
    }
    let what = name.to_str().unwrap_or("power");
    let path = ctx.path(program.to_bytes())?;
    wisp_os_linux::fs::sync_all();
    if !matches!(wisp_os_linux::fs::metadata(path.as_cstr()), Ok(Some(_))) {
        // An image with no shutdown tool (no busybox): after the delay, the kernel is asked
        // directly, everything synced first; no service is stopped.
        crate::output::error(format_args!("power_state: no {}: {what} with reboot(2) in {} seconds", Shown(program.to_bytes()), Decimal(state.delay_seconds.into())));
        wisp_os_linux::time::sleep_ms(state.delay_seconds.saturating_mul(1000).min(u64::from(u32::MAX)) as u32);
        let e = wisp_os_linux::system::reboot(action).err().unwrap_or(wisp_os_linux::Errno::INVAL);
        return Err(crate::output::os_error("reboot(2)", e));
    }
    let mut digits = [0u8; 20];
    let mut delay = wisp_core::out::Out::new(&mut digits);
    // A u64 has at most 20 digits.
    let _ = delay.put_decimal(state.delay_seconds);
    let delay = NulTerminated::from_parts(&[delay.written()]).map_err(crate::output::line)?;
    run(ctx, program, &[name, c"-d", delay.as_cstr()], what)?;
    Ok(msg!("{what} in {} seconds", Decimal(state.delay_seconds.into())))
}

/// wisp's `mount_default_fields`: cloud-init's for systems without systemd, less
/// `nobootwait`, which busybox mount hands to the kernel and most filesystems refuse.
const MOUNT_DEFAULTS: fstab::Fields<'static> = [None, None, Some(b"auto"), Some(b"defaults,nofail"), Some(b"0"), Some(b"2")];
/// Most entries in `mounts`.
const MOUNTS_LIMIT: usize = 32;
/// What `auto` tries, in order, as mount(8) would after asking blkid.
const AUTO_TYPES: [&CStr; 5] = [c"ext4", c"xfs", c"btrfs", c"vfat", c"iso9660"];

/// `mounts`: cloud-config's lines in /etc/fstab (replacing the ones it wrote before),
/// then each mounted where nothing is mounted yet, as `mount -a` would.
#[inline(never)]
pub fn mounts(ctx: &Context<'_>, config: &CloudConfig<'static>) -> Result<Message, Message> {
    let Some(list) = config.value("mounts") else { return Ok(msg!("no mounts")) };
    let mut defaults = MOUNT_DEFAULTS;
    if let Some(fields) = config.value("mount_default_fields") {
        defaults = mount_fields(fields)?;
    }
    let mut entries: heapless::Vec<fstab::Entry<'static>, MOUNTS_LIMIT> = heapless::Vec::new();
    for item in cloud_config::items("mounts", list)? {
        let entry = fstab::Entry { fields: mount_fields(item)? };
        // A device that does not exist is left out, as cloud-init leaves it out.
        if let Some(device) = entry.fields[0].filter(|d| d.starts_with(b"/dev/")) {
            if !matches!(ctx.path(device).map(|p| wisp_os_linux::fs::metadata(p.as_cstr())), Ok(Ok(Some(_)))) {
                ctx.warn(format_args!("cloud-config line {}: mounts: {}: no such device: left out", Decimal(item.line().into()), Shown(device)));
                continue;
            }
        }
        entries.push(entry).map_err(|_| msg!("mounts: more than {limit} entries", limit = Decimal(MOUNTS_LIMIT as u64)))?;
    }
    let mut existing = [0u8; 16 * 1024];
    let existing = ctx.read(b"/etc/fstab", &mut existing)?.unwrap_or(b"");
    let mut new = [0u8; 16 * 1024];
    let mut skipped = [false; MOUNTS_LIMIT];
    let merged = fstab::merge(existing, &entries, &defaults, &mut new, |index, why| {
        skipped[index] = true;
        crate::output::error(format_args!("mounts: entry {} left out: {why}", Decimal((index + 1) as u64)));
    })
    .map_err(|e| msg!("/etc/fstab: {e}"))?;
    if let Some(len) = merged {
        ctx.create_dir(b"/etc")?.write_atomic(b"fstab", &new[..len], 0o644, None).map_err(|e| crate::output::os_error("/etc/fstab", e))?;
    }
    let mut mounted = 0;
    for (entry, _) in entries.iter().zip(skipped).filter(|(_, skipped)| !skipped) {
        let fields = fstab::fill(entry, &defaults);
        let (Some(device), Some(point), Some(fs_type), options) = (fields[0], fields[1], fields[2], fields[3].unwrap_or(b"")) else { continue };
        if fs_type == b"swap" {
            continue;
        }
        let mut data = [0u8; 256];
        let (parsed, data_len) = mount_options::parse(options, &mut data).map_err(|e| msg!("mounts {}: options longer than {} bytes", Shown(point), Decimal(e.limit as u64)))?;
        if parsed.noauto {
            continue;
        }
        match mount_one(ctx, device, point, fs_type, parsed.flags, &data[..data_len]) {
            Ok(true) => mounted += 1,
            Ok(false) => {}
            Err(e) if parsed.nofail => crate::output::error(format_args!("mounts {} (nofail): {e}", Shown(point))),
            Err(e) => return Err(msg!("mounts {}: {e}", Shown(point))),
        }
    }
    Ok(msg!("{} entries in /etc/fstab, {mounted} mounted", Decimal(entries.len() as u64), mounted = Decimal(mounted as u64)))
}

/// A list of up to six fields, as `mounts` entries and `mount_default_fields` are.
fn mount_fields(value: wisp_core::yaml::NodeRef<'static>) -> Result<fstab::Fields<'static>, Message> {
    let mut fields: fstab::Fields<'static> = [None; 6];
    for (index, item) in cloud_config::items("mounts", value)?.enumerate() {
        let slot = fields.get_mut(index).ok_or_else(|| msg!("cloud-config line {}: mounts: more than six fields", Decimal(value.line().into())))?;
        *slot = if item.is_null() { None } else { Some(cloud_config::text("mounts", item)?.as_bytes()) };
    }
    Ok(fields)
}

/// Mounts one entry unless its mount point already is one; `Ok(false)` when it was.
fn mount_one(ctx: &Context<'_>, device: &[u8], point: &[u8], fs_type: &[u8], flags: u32, data: &[u8]) -> Result<bool, Message> {
    if device.starts_with(b"LABEL=") || device.starts_with(b"UUID=") || device.starts_with(b"PARTUUID=") {
        return Err(msg!("{}: not mounted now (wisp has no blkid); the fstab line mounts it at the next boot", Shown(device)));
    }
    // A place user-data chose: no symlink in it is followed, and mount(2) gets the very
    // directory opened, never the path resolved again.
    let point_dir = ctx.create_dir_no_symlinks(point)?;
    let parent = ctx.open_dir(&point[..point.iter().rposition(|&b| b == b'/').unwrap_or(0).max(1)])?;
    let dev = |dir: &Dir| dir.stat().ok().map(|m| m.dev);
    if point != b"/" && dev(&point_dir) != dev(&parent) {
        return Ok(false);
    }
    let target = point_dir.proc_path();
    // A device path is a file inside the instance; other sources (tmpfs, server:/path) are names.
    let source = match device.first() {
        Some(b'/') => ctx.path(device)?,
        _ => NulTerminated::from_parts(&[fstab::device_prefix(device), device]).map_err(crate::output::line)?,
    };
    let source = if source.as_bytes().starts_with(b"/dev/") && !device.starts_with(b"/") { ctx.path(source.as_bytes())? } else { source };
    let data = NulTerminated::from_parts(&[data]).map_err(crate::output::line)?;
    let data = (!data.as_bytes().is_empty()).then_some(data.as_cstr());
    let fs_type = NulTerminated::from_parts(&[fs_type]).map_err(crate::output::line)?;
    let types: &[&CStr] = if fs_type.as_bytes() == b"auto" { &AUTO_TYPES } else { &[fs_type.as_cstr()] };
    let mut last = wisp_os_linux::Errno::NODEV;
    for fs_type in types {
        match mount::mount(source.as_cstr(), target.as_cstr(), fs_type, flags, data) {
            Ok(()) => return Ok(true),
            Err(e) => last = e,
        }
    }
    Err(msg!("mount {} on {}: {}", Shown(source.as_bytes()), Shown(ctx.path(point)?.as_bytes()), Os(last)))
}
