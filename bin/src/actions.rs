//! The actions of the phases, by tiny-cloud's names. Each returns a short note for the
//! log on success, or the reason it failed.

use miniz_oxide::inflate::core::DecompressorOxide;
use wisp_core::phase::Action;
use wisp_core::provider::Item;
use wisp_core::{gzip, script};
use wisp_os_linux::cpath::CPath;
use wisp_os_linux::fs::{self, Dir};
use wisp_os_linux::process::{self, ExitStatus};
use wisp_os_linux::AsFd;

use crate::context::Context;
use crate::once::Once;
use crate::output::{Line, Os, Shown};
use crate::phases::Session;
use crate::state;

pub const USER_DATA: &[u8] = b"user-data";
const USER_DATA_LOG: &[u8] = b"user-data.log";
const USER_DATA_EXIT: &[u8] = b"user-data.exit";

pub fn run(ctx: &mut Context<'_>, session: &mut Session<'_>, var: &Dir, action: Action) -> Result<Line, Line> {
    match action {
        Action::ExpandRoot => crate::grow::expand_root(ctx),
        Action::InstallHotplugs => Err(msg!("not supported: wisp installs no mdev hotplug handlers")),
        Action::SetEphemeralNetwork => {
            Err(msg!("not supported: wisp has no DHCP client; the OS brings the network up"))
        }
        Action::SetDefaultInterfaces => set_default_interfaces(ctx),
        Action::EnableSshd => enable_sshd(ctx),
        Action::SaveUserdata => save_userdata(session, var),
        Action::CreateDefaultUser => crate::users::create_default_user(ctx),
        Action::SetHostname => crate::users::set_hostname(ctx, session.metadata.get(Item::Hostname)),
        Action::SetSshKeys => crate::users::set_ssh_keys(ctx, session.metadata.get(Item::SshKeys)),
        Action::RunUserdata => run_userdata(ctx, var),
        Action::BootstrapComplete => state::set_complete(var, true).map(|()| msg!("marked complete")),
    }
}

/// tiny-cloud's `/etc/network/interfaces`, written only when there is none: loopback and
/// DHCP on the first ethernet interface (the lowest ifindex).
#[inline(never)]
fn set_default_interfaces(ctx: &Context<'_>) -> Result<Line, Line> {
    let etc_network = ctx.create_dir(b"/etc/network")?;
    if etc_network.metadata(b"interfaces").map_err(|e| msg!("/etc/network/interfaces: {}", Os(e)))?.is_some() {
        return Ok(msg!("already set up"));
    }
    let mut first: Option<(u32, heapless::String<16>)> = None;
    if let Ok(net) = ctx.open_dir(b"/sys/class/net") {
        let mut names: heapless::Vec<heapless::String<16>, 32> = heapless::Vec::new();
        let _ = net.for_each_entry(|name| {
            if let Ok(name) = core::str::from_utf8(name) {
                if name.starts_with("eth") {
                    let _ = names.push(heapless::String::try_from(name).unwrap_or_default());
                }
            }
        });
        for name in names.iter().filter(|n| !n.is_empty()) {
            let mut path = heapless::String::<64>::new();
            let _ = core::fmt::write(&mut path, format_args!("/sys/class/net/{name}/ifindex"));
            let mut buf = [0u8; 16];
            let index = ctx.read(path.as_bytes(), &mut buf).ok().flatten().and_then(parse_u32).unwrap_or(u32::MAX);
            if first.as_ref().is_none_or(|(best, _)| index < *best) {
                first = Some((index, name.clone()));
            }
        }
    }
    let mut text = heapless::String::<256>::new();
    let _ = text.push_str("auto lo\niface lo inet loopback\n\n");
    if let Some((_, name)) = &first {
        let _ = core::fmt::write(&mut text, format_args!("auto {name}\niface {name}\n\tuse dhcp\n\n"));
    }
    etc_network.write_atomic(b"interfaces", text.as_bytes(), 0o644, None).map_err(|e| msg!("/etc/network/interfaces: {}", Os(e)))?;
    Ok(match first {
        Some((_, name)) => msg!("lo and {name} (dhcp)"),
        None => msg!("lo only: no eth* interface"),
    })
}

/// What `rc-update add sshd default` does: a link in OpenRC's default runlevel.
#[inline(never)]
fn enable_sshd(ctx: &Context<'_>) -> Result<Line, Line> {
    let init_script = ctx.path(b"/etc/init.d/sshd")?;
    if !matches!(fs::metadata(init_script.as_cstr()), Ok(Some(_))) {
        return Ok(msg!("no /etc/init.d/sshd (not OpenRC, or no sshd): nothing to enable"));
    }
    let runlevel = ctx.create_dir(b"/etc/runlevels/default")?;
    match runlevel.create_symlink(b"/etc/init.d/sshd", b"sshd") {
        Ok(true) => Ok(msg!("sshd added to the default runlevel")),
        Ok(false) => Ok(msg!("sshd already in the default runlevel")),
        Err(e) => Err(msg!("/etc/runlevels/default/sshd: {}", Os(e))),
    }
}

/// Most bytes gzip'd user-data may expand to: the bound that stops a decompression bomb.
pub const USER_DATA_LIMIT: usize = 16 << 20;

/// The gunzipped user-data, in .bss: untouched unless used.
static GUNZIP: Once<[u8; USER_DATA_LIMIT]> = Once::new([0; USER_DATA_LIMIT]);

/// `$TINY_CLOUD_VAR/user-data`, mode 0600, replaced atomically; empty when the instance
/// has none, as tiny-cloud leaves it. gzip'd user-data is saved decompressed, as
/// tiny-cloud does; other compressions are refused, as wisp has no decoder for them.
#[inline(never)]
fn save_userdata(session: &Session<'_>, var: &Dir) -> Result<Line, Line> {
    let raw = session.metadata.get(Item::UserData).unwrap_or(b"");
    if let Some(name) = gzip::other_compression(raw) {
        return Err(msg!("user-data is {name}-compressed: unsupported compression (wisp decodes gzip only)"));
    }
    let data = if gzip::is_gzip(raw) {
        let out = GUNZIP.take().ok_or_else(|| msg!("the gunzip buffer is in use"))?;
        let mut state = DecompressorOxide::new();
        let len = gzip::decompress(raw, out, &mut state).map_err(|e| msg!("user-data: {e}"))?;
        &out[..len]
    } else {
        raw
    };
    let mode_ok = matches!(var.metadata(USER_DATA), Ok(Some(m)) if m.is_file() && m.permissions() == 0o600);
    if mode_ok && var.has_contents(USER_DATA, data).unwrap_or(false) {
        return Ok(msg!("unchanged ({} bytes)", data.len()));
    }
    var.write_atomic(USER_DATA, data, 0o600, None).map_err(|e| msg!("cannot save user-data: {}", Os(e)))?;
    Ok(msg!("saved {} bytes", data.len()))
}

/// Runs a saved `#!` user-data script with its interpreter; its output goes to
/// `$TINY_CLOUD_LOGS/user-data.log` and its exit status to `user-data.exit`.
#[inline(never)]
fn run_userdata(ctx: &Context<'_>, var: &Dir) -> Result<Line, Line> {
    let mut head = [0u8; script::SHEBANG_LIMIT];
    let len = match var.read_start(USER_DATA, &mut head) {
        Ok(Some(len)) => len,
        Ok(None) => return Ok(msg!("no user-data saved")),
        Err(e) => return Err(msg!("cannot read user-data: {}", Os(e))),
    };
    if len == 0 {
        return Ok(msg!("user-data is empty"));
    }
    let shebang = match script::parse(&head[..len]) {
        Ok(shebang) => shebang,
        Err(script::ShebangError::NotAScript) => return Ok(msg!("user-data is not a #! script: not run")),
        Err(e) => return Err(msg!("user-data: {e}")),
    };
    let interpreter = CPath::from_parts(&[shebang.interpreter]).map_err(|e| msg!("user-data interpreter: {e}"))?;
    let argument = CPath::from_parts(&[shebang.argument.unwrap_or(b"")]).map_err(|e| msg!("user-data interpreter argument: {e}"))?;
    let mut script_path = ctx.path(ctx.config.var_dir.as_bytes())?;
    script_path.push(b"/").and_then(|()| script_path.push(USER_DATA)).map_err(|e| msg!("user-data path: {e}"))?;
    let mut args: heapless::Vec<&core::ffi::CStr, 3> = heapless::Vec::new();
    let _ = args.push(interpreter.as_cstr());
    if shebang.argument.is_some() {
        let _ = args.push(argument.as_cstr());
    }
    let _ = args.push(script_path.as_cstr());

    let logs = ctx.logs_dir()?;
    let output = logs.create_truncate(USER_DATA_LOG, 0o600).map_err(|e| msg!("cannot create user-data.log: {}", Os(e)))?;
    let input = fs::open_read(c"/dev/null").map_err(|e| msg!("/dev/null: {}", Os(e)))?;
    let status = process::run(ctx.start, interpreter.as_cstr(), &args, input.as_fd(), output.as_fd())
        .map_err(|e| msg!("cannot start {}: {}", Shown(shebang.interpreter), Os(e)))?;
    let code = match status {
        ExitStatus::Exited(code) => code,
        ExitStatus::Signaled(signal) => 128 + signal,
    };
    let mut exit_line = heapless::String::<16>::new();
    let _ = core::fmt::write(&mut exit_line, format_args!("{code}\n"));
    logs.write_atomic(USER_DATA_EXIT, exit_line.as_bytes(), 0o644, None)
        .map_err(|e| msg!("cannot write user-data.exit: {}", Os(e)))?;
    match status {
        ExitStatus::Exited(0) => Ok(msg!("script exited 0")),
        ExitStatus::Exited(code) => Err(msg!("user-data script exited with status {code} (output in user-data.log)")),
        ExitStatus::Signaled(signal) => Err(msg!("user-data script killed by signal {signal} (output in user-data.log)")),
    }
}

fn parse_u32(text: &[u8]) -> Option<u32> {
    u32::try_from(wisp_core::text::decimal(text.trim_ascii_end(), 10)?).ok()
}
