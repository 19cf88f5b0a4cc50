//! Which configuration file wisp reads, and what it makes of the bytes: `--config FILE` as
//! given, else the first of wisp's and tiny-cloud's files found under the root (so an
//! image switching from tiny-cloud keeps its settings); the parser's errors and unknown
//! variables named with the file; every action list checked once it is read, so that
//! every command refuses the same bad file.

use core::fmt;

use crate::config::{self, Config};
use crate::host::files::Files;
use crate::host::messages::Messages;
use crate::host::HostError;
use crate::retry::Timeouts;
use crate::text::{Decimal, Shown};

/// The configuration files wisp reads under the root, first found wins: its own, then
/// tiny-cloud 3.x's and 2.x's.
pub const FILES: [&str; 3] = ["/etc/wisp.conf", "/etc/tiny-cloud.conf", "/etc/conf.d/tiny-cloud"];
/// Largest configuration file.
pub const FILE_LIMIT: usize = 16 * 1024;
/// EFBIG: what a read says of a file larger than its buffer (`Files::read`).
const TOO_LARGE: HostError = HostError { errno: 27 };

/// `--config FILE`: read by the caller as given, not under the root, and what the read
/// said (its length, `None` when there is no such file).
#[derive(Clone, Copy, Debug)]
pub struct Given<'a> {
    pub path: &'a [u8],
    pub read: Result<Option<usize>, HostError>,
}

/// Where the configuration came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source<'a> {
    /// No file: the defaults.
    Defaults,
    Given(&'a [u8]),
    /// One of `FILES`, under the root.
    UnderRoot(&'static str),
}

/// The configuration: `given`'s, else the first of `FILES` in `host`; `Config::default()`
/// when there is none. `text` holds the file while it is parsed (`FILE_LIMIT` bytes).
#[inline(never)]
pub fn load<'a, H: Files + Messages>(host: &mut H, given: Option<Given<'a>>, text: &mut [u8], config: &mut Config) -> Result<Source<'a>, H::Text> {
    let (source, read) = match given {
        Some(Given { path, read }) => (Source::Given(path), read.and_then(|len| len.ok_or(HostError::NOT_FOUND))),
        None => match find(host, text) {
            Some((file, read)) => (Source::UnderRoot(file), read),
            None => return Ok(Source::Defaults),
        },
    };
    let name = Name(host, source);
    let len = match read {
        Ok(len) => len,
        Err(e) if e == TOO_LARGE => return Err(host.text(format_args!("{name}: larger than {limit} bytes", limit = Decimal(text.len() as u64)))),
        Err(e) => {
            return Err(match source {
                Source::UnderRoot(file) => host.path_error(file.as_bytes(), e),
                _ if e.is_not_found() => host.text(format_args!("{name}: no such file")),
                _ => host.text(format_args!("{name}: {}", H::reason(e))),
            })
        }
    };
    let mut on_warning = |warning: config::Warning| host.error(format_args!("{name}:{warning}"));
    config::parse(&text[..len], config, &mut on_warning).map_err(|e| host.text(format_args!("{name}:{e}")))?;
    config.check_actions().map_err(|e| host.text(format_args!("{name}:{e}")))?;
    Ok(source)
}

/// The configuration file as messages name it: `read` (the one read, under the root),
/// else the first of `FILES`, the one a configuration would be read from.
pub fn named(read: &[u8]) -> Shown<'_> {
    Shown(if read.is_empty() { FILES[0].as_bytes() } else { read })
}

/// The first of `FILES` that `host` has or cannot read, and what the read said.
fn find(host: &mut impl Files, text: &mut [u8]) -> Option<(&'static str, Result<usize, HostError>)> {
    FILES.into_iter().find_map(|file| match host.read(file.as_bytes(), text) {
        Ok(None) => None,
        read => Some((file, read.map(|len| len.unwrap_or(0)))),
    })
}

/// The file, as messages name it: `--config`'s as given, the others under the root.
struct Name<'h, H>(&'h H, Source<'h>);

impl<H: Messages> fmt::Display for Name<'_, H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.1 {
            Source::Given(path) => H::shown(path).fmt(f),
            Source::UnderRoot(file) => self.0.under_root(file.as_bytes()).fmt(f),
            Source::Defaults => Ok(()),
        }
    }
}

impl Config {
    /// The metadata requests' timeouts, as configured.
    pub fn timeouts(&self) -> Timeouts {
        Timeouts {
            connect_ms: self.http_connect_ms,
            read_ms: self.http_read_ms,
            total_ms: self.http_total_ms,
            backoff_initial_ms: self.http_backoff_ms,
            backoff_max_ms: self.http_backoff_max_ms,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Cloud;
    use crate::host::memory::{MemoryHost, MemorySystem};

    fn load_from(system: &mut MemorySystem, given: Option<Given<'static>>) -> Result<(Source<'static>, Config), String> {
        let mut text = [0u8; FILE_LIMIT];
        let mut config = Config::default();
        load(system, given, &mut text, &mut config).map(|source| (source, config))
    }

    #[test]
    fn messages_name_the_file_read_else_the_first_wisp_would_read() {
        assert_eq!(std::format!("{}", named(b"/mnt/etc/tiny-cloud.conf")), "/mnt/etc/tiny-cloud.conf");
        assert_eq!(std::format!("{}", named(b"")), "/etc/wisp.conf");
    }

    #[test]
    fn the_first_file_found_wins_and_none_means_the_defaults() {
        let mut system = MemorySystem::new(MemoryHost::new());
        assert_eq!(load_from(&mut system, None), Ok((Source::Defaults, Config::default())));
        assert_eq!(system.host.calls, ["read /etc/wisp.conf", "read /etc/tiny-cloud.conf", "read /etc/conf.d/tiny-cloud"]);

        let mut system = MemorySystem::new(MemoryHost::new()).with_file("/etc/conf.d/tiny-cloud", "CLOUD=gcp\n");
        let (source, config) = load_from(&mut system, None).unwrap();
        assert_eq!((source, config.cloud), (Source::UnderRoot("/etc/conf.d/tiny-cloud"), Cloud::Gcp));

        // tiny-cloud 3.x's file before 2.x's, wisp's own before both.
        let mut system = system.with_file("/etc/tiny-cloud.conf", "CLOUD=oci\n");
        assert_eq!(load_from(&mut system, None).unwrap().1.cloud, Cloud::Oci);
        let mut system = system.with_file("/etc/wisp.conf", "CLOUD=aws\n");
        let (source, config) = load_from(&mut system, None).unwrap();
        assert_eq!((source, config.cloud), (Source::UnderRoot("/etc/wisp.conf"), Cloud::Aws));
    }

    #[test]
    fn a_given_file_is_used_as_read_and_the_root_is_not_searched() {
        let mut system = MemorySystem::new(MemoryHost::new()).with_file("/etc/wisp.conf", "CLOUD=aws\n");
        let body = b"CLOUD=gcp\nCLOUD_USER=ops\n";
        let mut text = [0u8; FILE_LIMIT];
        text[..body.len()].copy_from_slice(body);
        let mut config = Config::default();
        let given = Given { path: b"other.conf", read: Ok(Some(body.len())) };
        assert_eq!(load(&mut system, Some(given), &mut text, &mut config), Ok(Source::Given(b"other.conf")));
        assert_eq!((config.cloud, config.cloud_user.as_str()), (Cloud::Gcp, "ops"));
        assert!(system.host.calls.is_empty());
    }

    #[test]
    fn read_failures_name_the_file() {
        let mut system = MemorySystem::new(MemoryHost::new());
        let missing = Given { path: b"/tmp/missing.conf", read: Ok(None) };
        assert_eq!(load_from(&mut system, Some(missing)), Err("/tmp/missing.conf: no such file".into()));
        let large = Given { path: b"big.conf", read: Err(TOO_LARGE) };
        assert_eq!(load_from(&mut system, Some(large)), Err("big.conf: larger than 16384 bytes".into()));
        let denied = Given { path: b"x.conf", read: Err(HostError { errno: 13 }) };
        assert_eq!(load_from(&mut system, Some(denied)), Err("x.conf: errno 13".into()));

        let big = "#".repeat(FILE_LIMIT + 1);
        let mut system = MemorySystem::new(MemoryHost::new()).with_file("/etc/tiny-cloud.conf", &big);
        assert_eq!(load_from(&mut system, None), Err("/etc/tiny-cloud.conf: larger than 16384 bytes".into()));
        let mut system = MemorySystem::new(MemoryHost::new());
        system.host.fail.insert(b"/etc/wisp.conf".to_vec(), HostError { errno: 40 });
        assert_eq!(load_from(&mut system, None), Err("/etc/wisp.conf: a symlink in the path is refused".into()));
    }

    #[test]
    fn errors_and_warnings_name_the_file_and_line() {
        let mut system = MemorySystem::new(MemoryHost::new()).with_file("/etc/wisp.conf", "CLOUD=aws\n# fine\nCLOUD_USER = alpine\n");
        assert_eq!(load_from(&mut system, None), Err("/etc/wisp.conf:3: no spaces allowed around '='".into()));

        let mut system = MemorySystem::new(MemoryHost::new()).with_file("/etc/wisp.conf", "CLOUD=aws\nCOLOUR=blue\n");
        assert_eq!(load_from(&mut system, None).unwrap().1.cloud, Cloud::Aws);
        assert_eq!(*system.said.borrow(), ["error: /etc/wisp.conf:2: unknown variable COLOUR (ignored)"]);

        // An unknown action is refused when the file is read, by every command alike.
        let mut system = MemorySystem::new(MemoryHost::new());
        let mut text = [0u8; FILE_LIMIT];
        text[..23].copy_from_slice(b"SKIP_INIT_ACTIONS=nope\n");
        let given = Given { path: b"my.conf", read: Ok(Some(23)) };
        assert_eq!(
            load(&mut system, Some(given), &mut text, &mut Config::default()),
            Err("my.conf:1: SKIP_INIT_ACTIONS names an unknown action 'nope'".into())
        );
    }

    #[test]
    fn timeouts_follow_the_configuration() {
        let mut system = MemorySystem::new(MemoryHost::new()).with_file("/etc/wisp.conf", "WISP_HTTP_CONNECT_MS=5\nWISP_HTTP_BACKOFF_MAX_MS=7\n");
        let timeouts = load_from(&mut system, None).unwrap().1.timeouts();
        assert_eq!((timeouts.connect_ms, timeouts.backoff_max_ms, timeouts.total_ms), (5, 7, Timeouts::default().total_ms));
        let defaults = Config::default().timeouts();
        assert_eq!((defaults.connect_ms, defaults.read_ms, defaults.backoff_initial_ms), (1000, 2000, 100));
    }
}
