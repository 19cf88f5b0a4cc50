//! sshd's configuration as cloud-init edits it. `ssh_pwauth`: `PasswordAuthentication`, in
//! `/etc/ssh/sshd_config` or, when that file includes `sshd_config.d/*.conf`, in the
//! drop-in `50-cloud-init.conf` there (0600). Written only when it changes, so a rerun
//! changes nothing; sshd is not restarted (the bootstrap runs before it starts).

use wisp_core::cloud_config::{self, CloudConfig};
use wisp_core::sshd_config;
use wisp_core::yaml::Scalar;

use crate::context::Context;
use crate::output::Line;

/// Largest sshd_config read.
const CONFIG_LIMIT: usize = 64 * 1024;

#[inline(never)]
pub fn ssh_pwauth(ctx: &Context<'_>, config: &CloudConfig<'static>) -> Result<Line, Line> {
    let Some(value) = config.value("ssh_pwauth") else { return Ok(msg!("no ssh_pwauth")) };
    // cloud-init takes a boolean, or (deprecated) its spelling as a string.
    let allow = match value.scalar() {
        Some(Scalar::Bool(allow)) => allow,
        Some(Scalar::Str(text)) => match keyword(text) {
            Some(b"true" | b"yes" | b"on" | b"1") => true,
            Some(b"false" | b"no" | b"off" | b"0") => false,
            Some(b"unchanged") => return Ok(msg!("unchanged")),
            _ => return Err(cloud_config::error("ssh_pwauth", value, "not true, false or unchanged").into()),
        },
        _ => return Err(cloud_config::error("ssh_pwauth", value, "not true, false or unchanged").into()),
    };
    let setting = if allow { "yes" } else { "no" };
    let (name, changed) = set_option(ctx, "PasswordAuthentication", setting)?;
    Ok(match changed {
        true => msg!("PasswordAuthentication {setting} in {name}"),
        false => msg!("PasswordAuthentication {setting} already in {name}"),
    })
}

/// Sets `keyword value` where cloud-init would: the drop-in when sshd_config includes
/// `sshd_config.d/*.conf`, else sshd_config itself. The file's name, and whether it
/// changed.
pub fn set_option(ctx: &Context<'_>, keyword: &str, value: &str) -> Result<(&'static str, bool), Line> {
    let etc_ssh = ctx.create_dir(b"/etc/ssh")?;
    let mut main = [0u8; CONFIG_LIMIT];
    let read = |dir: &wisp_os_linux::fs::Dir, name: &[u8], buf: &mut [u8]| match dir.read(name, buf) {
        Ok(found) => Ok(found.unwrap_or(0)),
        Err(wisp_os_linux::fs::ReadError::Io(e)) => Err(crate::output::os_error("/etc/ssh/sshd_config", e)),
        Err(wisp_os_linux::fs::ReadError::TooLarge { limit }) => Err(msg!("/etc/ssh: a config file larger than {limit} bytes")),
    };
    let main_len = read(&etc_ssh, b"sshd_config", &mut main)?;
    let (dir, name, mode) = if sshd_config::includes_drop_ins(&main[..main_len]) {
        (ctx.create_dir(b"/etc/ssh/sshd_config.d")?, sshd_config::DROP_IN, 0o600)
    } else {
        (etc_ssh, "sshd_config", 0o644)
    };
    let mut text = [0u8; CONFIG_LIMIT];
    let len = read(&dir, name.as_bytes(), &mut text)?;
    let mut updated = [0u8; CONFIG_LIMIT + 512];
    match sshd_config::set_option(&text[..len], keyword, value, &mut updated) {
        Ok(Some(new_len)) => {
            let keep_mode = match dir.metadata(name.as_bytes()) {
                Ok(Some(existing)) => existing.permissions(),
                _ => mode,
            };
            dir.write_atomic(name.as_bytes(), &updated[..new_len], keep_mode, None).map_err(|e| crate::output::os_error(name, e))?;
            Ok((name, true))
        }
        Ok(None) => Ok((name, false)),
        Err(full) => Err(msg!("{name} would be larger than {} bytes", full.limit)),
    }
}

/// The words cloud-init's `is_true`, `is_false` and "unchanged" take, any case.
fn keyword(text: &str) -> Option<&'static [u8]> {
    const WORDS: [&[u8]; 9] = [b"true", b"yes", b"on", b"1", b"false", b"no", b"off", b"0", b"unchanged"];
    WORDS.into_iter().find(|word| text.as_bytes().eq_ignore_ascii_case(word))
}
