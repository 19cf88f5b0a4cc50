//! cloud-config `ntp` (cloud-init's `ntp` module, as it configures Alpine; tiny-cloud's
//! alpine-config uses the same key): the configuration file of chrony or of busybox
//! ntpd, from `servers` and `pools`.

use crate::out::{Full, Out};

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
        match name {
            "chrony" => Some(Client::Chrony),
            "ntp" | "busybox" => Some(Client::Busybox),
            _ => None,
        }
    }

    /// Where cloud-init writes the client's configuration on Alpine.
    pub const fn config_path(self) -> &'static str {
        match self {
            Client::Chrony => "/etc/chrony/chrony.conf",
            Client::Busybox => "/etc/ntp.conf",
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
/// cloud-init's default for Alpine, which has no alpine.pool.ntp.org.
pub const DEFAULT_POOLS: [&str; 4] = ["0.pool.ntp.org", "1.pool.ntp.org", "2.pool.ntp.org", "3.pool.ntp.org"];

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

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(Client::from_name("openntpd"), None);
        assert!(is_valid_source("169.254.169.123") && !is_valid_source("a b") && !is_valid_source("#x") && !is_valid_source(""));
    }
}
