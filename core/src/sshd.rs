//! sshd's configuration on the host, as cloud-init edits it. `ssh_pwauth`:
//! `PasswordAuthentication`, in `/etc/ssh/sshd_config` or, when that file includes
//! `sshd_config.d/*.conf`, in the drop-in `50-cloud-init.conf` there (0600). Written only
//! when it changes, so a rerun changes nothing; sshd is not restarted (the bootstrap runs
//! before it starts). The text edit is `sshd_config`'s.

use crate::cloud_config::{self, CloudConfig};
use crate::host::files::Files;
use crate::host::messages::Messages;
use crate::host::room::Room;
use crate::sshd_config;
use crate::system_files::{self, TOO_LARGE};
use crate::text::{Decimal, Plain};
use crate::yaml::Scalar;

/// Largest sshd_config read.
pub const CONFIG_LIMIT: usize = 64 * 1024;
// Its message names it as a literal, not a number formatted.
const _: () = assert!(CONFIG_LIMIT == 65536);
/// What an edit may add to the file it edits.
const EDIT_ROOM: usize = 512;

pub fn ssh_pwauth<H: Files + Messages + Room>(host: &mut H, config: &CloudConfig<'_>) -> Result<H::Text, H::Text> {
    let Some(value) = config.value("ssh_pwauth") else { return Ok(crate::system_files::no_key(host, "ssh_pwauth")) };
    // cloud-init takes a boolean, or (deprecated) its spelling as a string.
    let allow = match value.scalar() {
        Some(Scalar::Bool(allow)) => Some(allow),
        Some(Scalar::Str(text)) if crate::text::eq_ignoring_case(text.as_bytes(), b"unchanged") => return Ok(host.text(format_args!("unchanged"))),
        Some(Scalar::Str(text)) => truth(text),
        _ => None,
    };
    let Some(allow) = allow else { return Err(cloud_config::error("ssh_pwauth", value, cloud_config::Problem::BadPwauth).into()) };
    let setting = if allow { "yes" } else { "no" };
    let (name, changed) = set_option(host, "PasswordAuthentication", setting)?;
    let already = if changed { "" } else { "already " };
    Ok(host.text(format_args!("PasswordAuthentication {} {}in {}", Plain(setting), Plain(already), Plain(name))))
}

/// Sets `keyword value` where cloud-init would: the drop-in when sshd_config includes
/// `sshd_config.d/*.conf`, else sshd_config itself. The file's name, and whether it
/// changed.
pub fn set_option<H: Files + Messages + Room>(host: &mut H, keyword: &str, value: &str) -> Result<(&'static str, bool), H::Text> {
    system_files::make_dir(host, b"/etc/ssh")?;
    let mut room = host.room(2 * CONFIG_LIMIT + EDIT_ROOM, "sshd_config")?;
    let (text, updated) = room.split_at_mut_checked(CONFIG_LIMIT).unwrap_or_default();
    edit(host, keyword, value, text, updated)
}

/// `set_option` in `text`'s room (sshd_config, then the drop-in if it is included) and
/// `updated`'s (the new text).
fn edit<H: Files + Messages>(host: &mut H, keyword: &str, value: &str, text: &mut [u8], updated: &mut [u8]) -> Result<(&'static str, bool), H::Text> {
    let mut len = read(host, b"/etc/ssh/sshd_config", text)?;
    let (path, name, mode): (&[u8], _, _) = if sshd_config::includes_drop_ins(&text[..len]) {
        let directory = b"/etc/ssh/sshd_config.d";
        system_files::make_dir(host, directory)?;
        // sshd_config has said all it needs to: its buffer takes the drop-in.
        let drop_in = b"/etc/ssh/sshd_config.d/50-cloud-init.conf";
        len = read(host, drop_in, text)?;
        (drop_in, sshd_config::DROP_IN, 0o600)
    } else {
        (b"/etc/ssh/sshd_config", "sshd_config", 0o644)
    };
    match sshd_config::set_option(&text[..len], keyword, value, updated) {
        Ok(Some(new_len)) => {
            let keep_mode = match host.metadata(path) {
                Ok(Some(existing)) => existing.mode,
                _ => mode,
            };
            host.write(path, &updated[..new_len], keep_mode, None).map_err(|e| system_files::call_failed(host, name.as_bytes(), e))?;
            Ok((name, true))
        }
        Ok(None) => Ok((name, false)),
        Err(full) => Err(host.text(format_args!("{} would be larger than {} bytes", Plain(name), Decimal(full.limit as u64)))),
    }
}

/// A configuration file, never through a symlink; an absent one is empty.
fn read<H: Files + Messages>(host: &mut H, path: &[u8], buf: &mut [u8]) -> Result<usize, H::Text> {
    match system_files::read_file_itself(host, path, buf) {
        Ok(found) => Ok(found.unwrap_or(0)),
        Err(TOO_LARGE) => Err(host.text(format_args!("/etc/ssh: a config file larger than 65536 bytes"))),
        Err(e) => Err(system_files::call_failed(host, b"/etc/ssh/sshd_config", e)),
    }
}

/// What cloud-init's `is_true` and `is_false` words say, any case.
fn truth(text: &str) -> Option<bool> {
    crate::text::word_index_ignoring_case("true yes on 1 false no off 0", text.as_bytes()).map(|at| at < 4)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::memory::{MemoryHost, MemorySystem};
    use crate::users::tests::with_config;

    fn image(main: &str) -> MemorySystem {
        MemorySystem::new(MemoryHost::new()).with_dir("/etc", (0, 0)).with_dir("/etc/ssh", (0, 0)).with_file("/etc/ssh/sshd_config", main)
    }

    #[test]
    fn ssh_pwauth_goes_in_sshd_config_or_its_drop_in_once() {
        with_config("ssh_pwauth: true\n", |config| {
            let mut host = image("Port 22\nPasswordAuthentication no\n");
            assert_eq!(ssh_pwauth(&mut host, config).unwrap(), "PasswordAuthentication yes in sshd_config");
            assert_eq!(host.contents("/etc/ssh/sshd_config"), Some("Port 22\nPasswordAuthentication yes\n"));
            assert_eq!(ssh_pwauth(&mut host, config).unwrap(), "PasswordAuthentication yes already in sshd_config");
        });
        with_config("ssh_pwauth: \"no\"\n", |config| {
            let mut host = image("Include /etc/ssh/sshd_config.d/*.conf\n");
            assert_eq!(ssh_pwauth(&mut host, config).unwrap(), "PasswordAuthentication no in 50-cloud-init.conf");
            assert_eq!(host.contents("/etc/ssh/sshd_config.d/50-cloud-init.conf"), Some("PasswordAuthentication no\n"));
            assert_eq!(host.meta("/etc/ssh/sshd_config.d/50-cloud-init.conf").mode, 0o600);
            assert_eq!(host.contents("/etc/ssh/sshd_config"), Some("Include /etc/ssh/sshd_config.d/*.conf\n"));
        });
    }

    #[test]
    fn a_config_file_too_large_is_said_with_the_limit() {
        with_config("ssh_pwauth: true\n", |config| {
            let e = ssh_pwauth(&mut image(&"#".repeat(CONFIG_LIMIT + 1)), config).unwrap_err();
            assert_eq!(e, "/etc/ssh: a config file larger than 65536 bytes");
        });
    }

    #[test]
    fn cloud_inits_true_and_false_words_in_any_case() {
        for (word, said) in [("TRUE", true), ("Yes", true), ("on", true), ("1", true), ("false", false), ("NO", false), ("Off", false), ("0", false)] {
            assert_eq!(truth(word), Some(said), "{word}");
        }
        for word in ["", "2", "yess", "true yes", "o"] {
            assert_eq!(truth(word), None, "{word:?}");
        }
    }

    #[test]
    fn unchanged_and_wrong_values() {
        with_config("ssh_pwauth: unchanged\n", |config| {
            let mut host = image("Port 22\n");
            assert_eq!(ssh_pwauth(&mut host, config).unwrap(), "unchanged");
            assert_eq!(host.contents("/etc/ssh/sshd_config"), Some("Port 22\n"));
        });
        with_config("ssh_pwauth: maybe\n", |config| {
            let e = ssh_pwauth(&mut image(""), config).unwrap_err();
            assert!(e.contains("ssh_pwauth: not true, false or unchanged"), "{e}");
        });
        with_config("hostname: a\n", |config| assert_eq!(ssh_pwauth(&mut image(""), config).unwrap(), "no ssh_pwauth"));
    }

    #[test]
    fn a_symlink_at_sshd_config_is_refused() {
        with_config("ssh_pwauth: true\n", |config| {
            let mut host = MemorySystem::new(MemoryHost::new()).with_dir("/etc/ssh", (0, 0)).with_symlink("/etc/ssh/sshd_config");
            assert_eq!(ssh_pwauth(&mut host, config).unwrap_err(), "/etc/ssh/sshd_config: errno 40");
        });
    }
}
