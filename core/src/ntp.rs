//! cloud-config `ntp` (cloud-init's `ntp` module, as it configures Alpine; tiny-cloud's
//! alpine-config uses the same key): the configuration file of chrony or of busybox
//! ntpd, from `servers` and `pools`.

use crate::cloud_config::{self, CloudConfig};
use crate::config::Cloud;
use crate::host::files::Files;
use crate::host::links::Links;
use crate::host::messages::Messages;
use crate::out::{Full, Out};
use crate::system_files::{self, call_failed};
use crate::text::{Decimal, Plain};
use crate::yaml::{Kind, NodeRef};

/// Most servers, and most pools, configured.
pub const SOURCES_LIMIT: usize = 16;
// Its message names it as a literal, not a number formatted.
const _: () = assert!(SOURCES_LIMIT == 16);
/// Largest configuration file written.
const CONFIG_LIMIT: usize = 4096;
// Its message names it as a literal, not a number formatted.
const _: () = assert!(CONFIG_LIMIT == 4096);

/// The clients wisp configures, by cloud-init's `ntp_client` names (tiny-cloud says
/// `busybox` for `ntp`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Client {
    Chrony,
    /// busybox ntpd, which reads `server` lines only.
    Busybox,
}

impl Client {
    pub fn from_name(name: &str) -> Option<Client> {
        crate::text::word_index("chrony ntp busybox", name.as_bytes()).map(|index| if index == 0 { Client::Chrony } else { Client::Busybox })
    }

    /// Where cloud-init writes the client's configuration on Alpine.
    pub const fn config_path(self) -> &'static str {
        match self {
            Client::Chrony => "/etc/chrony/chrony.conf",
            Client::Busybox => "/etc/ntp.conf",
        }
    }

    /// The directory of `config_path`.
    pub const fn config_dir(self) -> &'static str {
        match self {
            Client::Chrony => "/etc/chrony",
            Client::Busybox => "/etc",
        }
    }

    /// The OpenRC service.
    pub const fn service(self) -> &'static str {
        match self {
            Client::Chrony => "chronyd",
            Client::Busybox => "ntpd",
        }
    }
}

/// Amazon Time Sync, which Alpine's AWS images use.
pub const AWS_TIME_SYNC: &str = "169.254.169.123";
/// cloud-init's default for Alpine, which has no alpine.pool.ntp.org: one word each.
pub const DEFAULT_POOLS: &str = "0.pool.ntp.org 1.pool.ntp.org 2.pool.ntp.org 3.pool.ntp.org";

/// Chrony's directives after the sources, as cloud-init's Alpine template has them.
const CHRONY_TAIL: &[u8] = b"\nkeyfile /etc/chrony/chrony.keys\ndriftfile /var/lib/chrony/chrony.drift\nlogdir /var/log/chrony\nmaxupdateskew 100.0\nrtcsync\nmakestep 1 3\n";

/// The configuration file for `servers` and `pools` (already defaulted: see `defaults`);
/// busybox ntpd gets `server` lines for both.
pub fn write_config<'s>(
    client: Client,
    servers: impl Iterator<Item = &'s str> + Clone,
    pools: impl Iterator<Item = &'s str> + Clone,
    out: &mut Out<'_>,
) -> Result<(), Full> {
    out.put(b"# Written by wisp from cloud-config ntp.\n")?;
    let (pool_word, suffix): (&[u8], &[u8]) = match client {
        Client::Chrony => (b"pool ", b" iburst\n"),
        Client::Busybox => (b"server ", b"\n"),
    };
    for pool in pools {
        out.put_all(&[pool_word, pool.as_bytes(), suffix])?;
    }
    for server in servers {
        out.put_all(&[b"server ", server.as_bytes(), suffix])?;
    }
    if client == Client::Chrony {
        out.put(CHRONY_TAIL)?;
    }
    Ok(())
}

/// A name or address fit for a configuration line: no white space, no comment sign.
pub fn is_valid_source(source: &str) -> bool {
    !source.is_empty() && source.len() <= 255 && source.bytes().all(|b| b.is_ascii_graphic() && b != b'#')
}

/// cloud-config `ntp`: the client's configuration written (when it changed) and its
/// OpenRC service linked into the default runlevel when its init script is there. The
/// client is `ntp_client`'s, else chrony when `/usr/sbin/chronyd` is installed, else busybox
/// ntpd. With no `servers` or `pools`: Amazon Time Sync on AWS (`cloud` is asked only
/// then), else cloud-init's default pools.
pub fn configure<H: Files + Messages + Links>(host: &mut H, config: &CloudConfig<'_>, cloud: impl FnOnce() -> Result<Cloud, H::Text>) -> Result<H::Text, H::Text> {
    let Some(ntp) = config.value("ntp") else { return Ok(crate::system_files::no_key(host, "ntp")) };
    if ntp.kind() != Kind::Mapping {
        return Err(cloud_config::error("ntp", ntp, cloud_config::Problem::ExpectedMapping).into());
    }
    let field = |name| ntp.get(name).filter(|v| !v.is_null());
    if !field("enabled").map(|v| cloud_config::flag("ntp", v)).transpose()?.unwrap_or(true) {
        return Ok(host.text(format_args!("ntp disabled")));
    }
    let client = match field("ntp_client").map(|v| (v, cloud_config::text("ntp", v))) {
        None => None,
        Some((_, Ok("auto"))) => None,
        Some((at, name)) => Some(Client::from_name(name?).ok_or_else(|| cloud_config::error("ntp", at, cloud_config::Problem::UnknownNtpClient))?),
    };
    let client = client.unwrap_or_else(|| if installed(host, b"/usr/sbin/chronyd") { Client::Chrony } else { Client::Busybox });
    let mut servers = sources(host, field("servers"))?;
    let mut pools = sources(host, field("pools"))?;
    if servers.is_empty() && pools.is_empty() {
        match (cloud()?, client) {
            (Cloud::Aws, _) => drop(servers.push(AWS_TIME_SYNC)),
            (_, Client::Chrony) => pools.extend(DEFAULT_POOLS.split(' ')),
            (_, Client::Busybox) => servers.extend(DEFAULT_POOLS.split(' ')),
        }
    }
    let mut text = [0u8; CONFIG_LIMIT];
    let mut out = Out::new(&mut text);
    write_config(client, servers.iter().copied(), pools.iter().copied(), &mut out)
        .map_err(|_| host.text(format_args!("ntp: the configuration is larger than 4096 bytes")))?;
    let len = out.len();
    let path = client.config_path().as_bytes();
    let dir = client.config_dir().as_bytes();
    system_files::make_dir(host, dir)?;
    system_files::write_if_changed(host, path, &text[..len], &mut [0u8; CONFIG_LIMIT])?;
    let service = client.service();
    let mut script = [0u8; 32];
    let script = system_files::joined(&mut script, &[b"/etc/init.d/", service.as_bytes()]);
    let enabled = if installed(host, script) {
        const RUNLEVEL: &[u8] = b"/etc/runlevels/default";
        system_files::make_dir(host, RUNLEVEL)?;
        let mut link = [0u8; 64];
        let link = system_files::joined(&mut link, &[RUNLEVEL, b"/", service.as_bytes()]);
        host.create_symlink(script, link).map_err(|e| call_failed(host, RUNLEVEL, e))?;
        "in the default runlevel"
    } else {
        "not installed: no /etc/init.d script"
    };
    Ok(host.text(format_args!("{}: {} servers, {} pools; {} {}", Plain(client.config_path()), Decimal(servers.len() as u64), Decimal(pools.len() as u64), Plain(service), Plain(enabled))))
}

/// Whether something is at `path` in the image.
fn installed<H: Files>(host: &mut H, path: &[u8]) -> bool {
    matches!(host.metadata(path), Ok(Some(_)))
}

/// `servers` or `pools`: a list of names or addresses.
fn sources<'a, H: Messages>(host: &H, list: Option<NodeRef<'a>>) -> Result<heapless::Vec<&'a str, SOURCES_LIMIT>, H::Text> {
    let mut names = heapless::Vec::new();
    for item in list.map(|list| cloud_config::items("ntp", list)).transpose()?.into_iter().flatten() {
        let name = cloud_config::text("ntp", item)?;
        if !is_valid_source(name) {
            return Err(cloud_config::error("ntp", item, cloud_config::Problem::BadNtpServer).into());
        }
        names.push(name).map_err(|_| host.text(format_args!("ntp: more than 16 servers or pools")))?;
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::files::Kind as FileKind;
    use crate::host::memory::{MemoryHost, MemorySystem};
    use crate::users::tests::with_config;

    fn alpine(chrony: bool) -> MemorySystem {
        let mut image = MemorySystem::new(MemoryHost::new()).with_dir("/etc", (0, 0));
        if chrony {
            image = image.with_file("/usr/sbin/chronyd", "").with_file("/etc/init.d/chronyd", "");
        }
        image
    }

    fn run(host: &mut MemorySystem, source: &str, cloud: Cloud) -> Result<std::string::String, std::string::String> {
        with_config(source, |config| configure(host, config, || Ok(cloud)))
    }

    #[test]
    fn chrony_when_installed_is_configured_and_enabled() {
        let mut host = alpine(true);
        let said = run(&mut host, "ntp:\n  servers: [10.0.0.1]\n", Cloud::Nocloud).unwrap();
        assert_eq!(said, "/etc/chrony/chrony.conf: 1 servers, 0 pools; chronyd in the default runlevel");
        assert!(host.contents("/etc/chrony/chrony.conf").unwrap().contains("\nserver 10.0.0.1 iburst\n"));
        let link = &host.host.files[&b"/etc/runlevels/default/chronyd"[..]];
        assert_eq!((link.meta.kind, link.contents.as_slice()), (FileKind::Symlink, &b"/etc/init.d/chronyd"[..]));
        // A rerun changes nothing: the same file is not rewritten, the link is kept.
        let writes = host.host.calls.iter().filter(|c| c.starts_with("write")).count();
        run(&mut host, "ntp:\n  servers: [10.0.0.1]\n", Cloud::Nocloud).unwrap();
        assert_eq!(host.host.calls.iter().filter(|c| c.starts_with("write")).count(), writes);
    }

    #[test]
    fn the_default_sources_depend_on_the_cloud_and_the_client() {
        let mut host = alpine(false);
        let said = run(&mut host, "ntp: {}\n", Cloud::Aws).unwrap();
        assert_eq!(said, "/etc/ntp.conf: 1 servers, 0 pools; ntpd not installed: no /etc/init.d script");
        assert_eq!(host.contents("/etc/ntp.conf").unwrap(), "# Written by wisp from cloud-config ntp.\nserver 169.254.169.123\n");
        let mut host = alpine(false);
        run(&mut host, "ntp: {}\n", Cloud::Nocloud).unwrap();
        assert!(host.contents("/etc/ntp.conf").unwrap().ends_with("\nserver 0.pool.ntp.org\nserver 1.pool.ntp.org\nserver 2.pool.ntp.org\nserver 3.pool.ntp.org\n"));
        let mut host = alpine(true);
        let said = run(&mut host, "ntp: {}\n", Cloud::Gcp).unwrap();
        assert!(said.starts_with("/etc/chrony/chrony.conf: 0 servers, 4 pools"), "{said}");
    }

    #[test]
    fn the_cloud_is_asked_only_when_no_source_is_given() {
        let mut host = alpine(false);
        with_config("ntp:\n  pools: [pool.example]\n", |config| {
            configure(&mut host, config, || Err(std::string::String::from("not asked"))).unwrap();
        });
        assert!(host.contents("/etc/ntp.conf").unwrap().contains("server pool.example\n"));
    }

    #[test]
    fn disabled_absent_and_wrong_sections() {
        let mut host = alpine(true);
        assert_eq!(run(&mut host, "ntp:\n  enabled: false\n", Cloud::Aws).unwrap(), "ntp disabled");
        assert_eq!(run(&mut host, "hostname: a\n", Cloud::Aws).unwrap(), "no ntp");
        assert!(host.contents("/etc/chrony/chrony.conf").is_none());
        assert!(run(&mut host, "ntp: [a]\n", Cloud::Aws).unwrap_err().contains("expected a mapping"));
        assert!(run(&mut host, "ntp:\n  ntp_client: openntpd\n", Cloud::Aws).unwrap_err().contains("chrony or ntp (busybox) only"));
        assert!(run(&mut host, "ntp:\n  servers: ['a b']\n", Cloud::Aws).unwrap_err().contains("host name or address"));
        let many = std::format!("ntp:\n  servers: [{}]\n", (0..17).map(|i| std::format!("s{i}")).collect::<std::vec::Vec<_>>().join(", "));
        assert_eq!(run(&mut host, &many, Cloud::Aws).unwrap_err(), "ntp: more than 16 servers or pools");
        let long = std::format!("ntp:\n  servers: [{}]\n", std::vec![&*"a".repeat(255); 16].join(", "));
        assert_eq!(run(&mut host, &long, Cloud::Aws).unwrap_err(), "ntp: the configuration is larger than 4096 bytes");
        assert!(host.contents("/etc/chrony/chrony.conf").is_none());
    }

    fn text(client: Client, servers: &[&str], pools: &[&str]) -> String {
        let mut buf = [0u8; 1024];
        let mut out = Out::new(&mut buf);
        write_config(client, servers.iter().copied(), pools.iter().copied(), &mut out).unwrap();
        let len = out.len();
        String::from_utf8(buf[..len].to_vec()).unwrap()
    }

    #[test]
    fn configs() {
        let chrony = text(Client::Chrony, &["s1"], &["p1"]);
        assert!(chrony.starts_with("# Written by wisp from cloud-config ntp.\npool p1 iburst\nserver s1 iburst\n\nkeyfile "));
        assert!(chrony.ends_with("rtcsync\nmakestep 1 3\n"));
        assert_eq!(text(Client::Busybox, &["s1"], &["p1"]), "# Written by wisp from cloud-config ntp.\nserver p1\nserver s1\n");
        assert_eq!(Client::from_name("busybox"), Some(Client::Busybox));
        assert_eq!(Client::from_name("ntp"), Some(Client::Busybox));
        assert_eq!(Client::from_name("chrony"), Some(Client::Chrony));
        assert_eq!(Client::from_name("chrony ntp"), None);
        for client in [Client::Chrony, Client::Busybox] {
            assert_eq!(client.config_path().rsplit_once('/').unwrap().0, client.config_dir());
        }
        assert_eq!(Client::from_name("openntpd"), None);
        assert!(is_valid_source("169.254.169.123") && !is_valid_source("a b") && !is_valid_source("#x") && !is_valid_source(""));
    }
}
