//! The machine's name: /etc/hostname, /etc/hosts and the kernel's, chosen from the
//! metadata and cloud-config as cloud-init chooses it.

use crate::cloud_config::CloudConfig;
use crate::host::files::Files;
use crate::host::messages::Messages;
use crate::host::room::Room;
use crate::host::system::System;
use crate::hostname::{self, Hostname};
use crate::hosts_file;
use crate::system_files::{self, SystemFile, FILE_LIMIT};
use crate::text::Plain;

/// The host name, from the metadata's `value` and cloud-config's `hostname`, `fqdn` and
/// `prefer_fqdn_over_hostname` as cloud-init chooses it (`hostname::short_and_full`),
/// unless cloud-config sets `preserve_hostname`; `manage_etc_hosts: false` leaves
/// /etc/hosts alone. A name that is not a valid host name is left out with a warning:
/// wrong for good, it must not fail the boot.
#[inline(never)]
pub fn set_hostname<H: Files + System + Messages + Room>(host: &mut H, value: Option<&[u8]>, config: Option<&CloudConfig<'_>>) -> Result<H::Text, H::Text> {
    let mut manage_hosts = true;
    let (mut short, mut full, mut prefer_full) = (None, None, false);
    if let Some(config) = config {
        if config.flag("preserve_hostname", false)? {
            return Ok(host.text(format_args!("preserve_hostname: left as it is")));
        }
        full = config.text("fqdn")?.map(str::as_bytes);
        short = config.text("hostname")?.map(str::as_bytes);
        prefer_full = config.flag("prefer_fqdn_over_hostname", false)?;
        manage_hosts = config.value("manage_etc_hosts").is_none_or(|v| v.as_bool() != Some(false));
    }
    let (short, full) = hostname::short_and_full(short, full, value.unwrap_or(b""));
    if short.is_empty() {
        return Ok(host.text(format_args!("no hostname in the metadata: left as it is")));
    }
    let full = if full.trim_ascii().is_empty() { short } else { full };
    let (short, full) = match (Hostname::parse(short), Hostname::parse(full)) {
        (Ok(short), Ok(full)) => (short.fqdn(), full.fqdn()),
        (Err(e), _) | (_, Err(e)) => {
            host.warn(format_args!("set_hostname: {} ({}): {e}: left out", H::shown(short.trim_ascii_end()), H::shown(full.trim_ascii_end())));
            return Ok(host.text(format_args!("left as it is")));
        }
    };
    let name = if prefer_full { full } else { short };
    if name.len() > hostname::KERNEL_LIMIT {
        host.warn(format_args!("set_hostname: {name}: over 64 bytes: left out", name = Plain(name)));
        return Ok(host.text(format_args!("left as it is")));
    }
    system_files::make_dir(host, b"/etc")?;
    let mut hostname_line = heapless::Vec::<u8, 80>::new();
    let _ = hostname_line.extend_from_slice(name.as_bytes());
    let _ = hostname_line.push(b'\n');
    if !system_files::has_contents(host, b"/etc/hostname", &hostname_line, &mut [0u8; 80]) {
        host.stage(b"/etc/hostname", &hostname_line, 0o644, None).map_err(|e| system_files::call_failed(host, b"/etc/hostname", e))?;
    }
    if manage_hosts {
        let mut room = host.room(2 * FILE_LIMIT, "/etc/hosts")?;
        let [hosts_buf, new] = system_files::file_buffers(&mut room);
        let mut hosts = SystemFile::read(host, "/etc/hosts", 0o644, hosts_buf)?;
        if let Some(len) = hosts_file::update(hosts.text(), full, short, new).map_err(|e| system_files::said(host, &e))? {
            hosts.replace(&new[..len], host)?;
        }
    }
    system_files::commit(host)?;
    host.set_host_name(name.as_bytes()).map_err(|e| system_files::call_failed(host, b"sethostname", e))?;
    Ok(host.text(format_args!("{name} ({full})", name = Plain(name), full = Plain(full))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::memory::{MemoryHost, MemorySystem};
    use crate::users::tests::with_config;

    const METADATA: &[u8] = b"ip-10-0-1-23.ec2.internal\n";

    fn image() -> MemorySystem {
        MemorySystem::new(MemoryHost::new()).with_dir("/etc", (0, 0)).with_file("/etc/hosts", "127.0.0.1 localhost\n")
    }

    #[test]
    fn the_metadatas_name_gives_the_short_name_and_the_full_one() {
        let mut host = image();
        assert_eq!(set_hostname(&mut host, Some(METADATA), None).unwrap(), "ip-10-0-1-23 (ip-10-0-1-23.ec2.internal)");
        assert_eq!(host.contents("/etc/hostname"), Some("ip-10-0-1-23\n"));
        assert!(host.contents("/etc/hosts").unwrap().contains("ip-10-0-1-23.ec2.internal ip-10-0-1-23"));
        assert_eq!(host.host_name.as_deref(), Some(&b"ip-10-0-1-23"[..]));
        // Both files in one commit, before the kernel is told.
        let commit = host.host.calls.iter().position(|c| c.starts_with("commit")).unwrap();
        assert!(host.host.calls[commit..].iter().any(|c| c.starts_with("set_host_name")));
    }

    #[test]
    fn cloud_configs_names_come_before_the_metadatas() {
        for (source, said, kernel) in [
            ("hostname: alpha\nfqdn: beta.example.com\n", "alpha (beta.example.com)", "alpha"),
            ("fqdn: beta.example.com\n", "beta (beta.example.com)", "beta"),
            ("hostname: web.example.org\n", "web (web.example.org)", "web"),
            ("hostname: alpha\n", "alpha (ip-10-0-1-23.ec2.internal)", "alpha"),
            ("fqdn: beta.example.com\nprefer_fqdn_over_hostname: true\n", "beta.example.com (beta.example.com)", "beta.example.com"),
        ] {
            with_config(source, |config| {
                let mut host = image();
                assert_eq!(set_hostname(&mut host, Some(METADATA), Some(config)).unwrap(), said, "{source}");
                assert_eq!(host.host_name.as_deref(), Some(kernel.as_bytes()));
                assert_eq!(host.contents("/etc/hostname").unwrap(), std::format!("{kernel}\n"));
            });
        }
    }

    #[test]
    fn preserve_hostname_and_manage_etc_hosts_false_are_kept() {
        with_config("preserve_hostname: true\nhostname: alpha\n", |config| {
            let mut host = image();
            assert_eq!(set_hostname(&mut host, Some(METADATA), Some(config)).unwrap(), "preserve_hostname: left as it is");
            assert!(host.contents("/etc/hostname").is_none() && host.host_name.is_none());
        });
        with_config("hostname: alpha\nmanage_etc_hosts: false\n", |config| {
            let mut host = image();
            set_hostname(&mut host, Some(METADATA), Some(config)).unwrap();
            assert_eq!(host.contents("/etc/hosts"), Some("127.0.0.1 localhost\n"));
            assert_eq!(host.contents("/etc/hostname"), Some("alpha\n"));
        });
    }

    #[test]
    fn a_bad_name_is_left_out_with_a_warning_and_no_name_is_left_alone() {
        let mut host = image();
        assert_eq!(set_hostname(&mut host, Some(b"bad_host\n"), None).unwrap(), "left as it is");
        assert_eq!(*host.said.borrow(), ["warning: set_hostname: bad_host (bad_host): hostname has byte 0x5f at position 3: only letters, digits, '-' and '.' are allowed: left out"]);
        assert!(host.contents("/etc/hostname").is_none() && host.host_name.is_none());
        assert_eq!(set_hostname(&mut image(), None, None).unwrap(), "no hostname in the metadata: left as it is");
    }

    #[test]
    fn a_rerun_rewrites_nothing() {
        let mut host = image();
        set_hostname(&mut host, Some(METADATA), None).unwrap();
        let files = host.host.files.clone();
        host.host.calls.clear();
        set_hostname(&mut host, Some(METADATA), None).unwrap();
        assert_eq!(host.host.files, files);
        assert!(!host.host.calls.iter().any(|c| c.starts_with("stage")), "{:?}", host.host.calls);
    }
}
