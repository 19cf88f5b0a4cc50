//! cloud-config's `timezone`: a tz database name such as `Europe/Berlin`, checked before
//! it becomes a path under ZONEINFO_DIR, so that no name can reach outside it. cloud-init
//! (distros.set_etc_timezone) writes the name and a newline to /etc/timezone, and makes
//! /etc/localtime a symlink to the zone file when it is absent or a symlink already
//! (a copy otherwise), after checking that the zone file exists.

use core::fmt;

use crate::cloud_config::{self, CloudConfig};
use crate::host::files::{Files, Kind};
use crate::host::links::Links;
use crate::host::messages::Messages;
use crate::system_files::{self, joined, write_if_changed};
use crate::text::{Decimal, Plain};

pub const ZONEINFO_DIR: &str = "/usr/share/zoneinfo";
/// Twice the longest name in the tz database (`America/Argentina/ComodRivadavia`, with
/// `posix/` before it).
pub const NAME_LIMIT: usize = 64;
// TimezoneError::TooLong's message names it.
const _: () = assert!(NAME_LIMIT == 64);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimezoneError {
    Empty,
    /// Longer than NAME_LIMIT.
    TooLong,
    /// It starts with '/': names are relative to ZONEINFO_DIR.
    Absolute,
    /// It holds `..`, which would climb out of ZONEINFO_DIR.
    ParentDirectory,
    /// `a//b`, or a '/' at the end.
    EmptyComponent,
    /// A byte outside `A-Za-z0-9_+-/`.
    BadByte { byte: u8 },
}

impl fmt::Display for TimezoneError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            TimezoneError::Empty => f.write_str("the time zone name is empty"),
            TimezoneError::TooLong => f.write_str("the time zone name is longer than 64 bytes"),
            TimezoneError::Absolute => f.write_str("the time zone name starts with '/'"),
            TimezoneError::ParentDirectory => f.write_str("the time zone name holds '..'"),
            TimezoneError::EmptyComponent => f.write_str("the time zone name has an empty part between '/'s"),
            TimezoneError::BadByte { byte } => {
                write!(f, "the time zone name holds '{}', not one of A-Za-z0-9_+-/", core::ascii::escape_default(byte))
            }
        }
    }
}

/// `name` as a str, once it is a name the tz database could hold.
pub fn check(name: &[u8]) -> Result<&str, TimezoneError> {
    if name.is_empty() {
        return Err(TimezoneError::Empty);
    }
    if name.len() > NAME_LIMIT {
        return Err(TimezoneError::TooLong);
    }
    if name.starts_with(b"/") {
        return Err(TimezoneError::Absolute);
    }
    if name.windows(2).any(|pair| pair == b"..") {
        return Err(TimezoneError::ParentDirectory);
    }
    if let Some(&byte) = name.iter().find(|&&b| !(b.is_ascii_alphanumeric() || matches!(b, b'_' | b'+' | b'-' | b'/'))) {
        return Err(TimezoneError::BadByte { byte });
    }
    if name.split(|&b| b == b'/').any(<[u8]>::is_empty) {
        return Err(TimezoneError::EmptyComponent);
    }
    // Every byte is ASCII by now.
    core::str::from_utf8(name).map_err(|_| TimezoneError::BadByte { byte: 0x80 })
}

/// cloud-config `timezone`: /etc/localtime points at the zone's file (which must exist in
/// the image), and /etc/timezone names it, as Alpine's setup-timezone leaves them; each
/// rewritten only when it differs.
#[inline(never)]
pub fn apply<H: Files + Links + Messages>(host: &mut H, config: &CloudConfig<'_>) -> Result<H::Text, H::Text> {
    let Some(value) = config.value("timezone") else { return Ok(crate::system_files::no_key(host, "timezone")) };
    let zone = cloud_config::text("timezone", value)?;
    check(zone.as_bytes()).map_err(|e| host.text(format_args!("cloud-config line {}: timezone {}: {e}", Decimal(value.line().into()), H::shown(zone.as_bytes()))))?;
    let mut zoneinfo = [0u8; ZONEINFO_DIR.len() + 1 + NAME_LIMIT];
    let zoneinfo = joined(&mut zoneinfo, &[ZONEINFO_DIR.as_bytes(), b"/", zone.as_bytes()]);
    if host.followed(zoneinfo) != Some(Kind::File) {
        return Err(host.text(format_args!("timezone {}: no {} in the image (install tzdata)", H::shown(zone.as_bytes()), H::shown(zoneinfo))));
    }
    let localtime_error = |host: &H, e| crate::system_files::call_failed(host, b"/etc/localtime", e);
    system_files::make_dir(host, b"/etc")?;
    let mut current = [0u8; 256];
    let linked = host.read_link(b"/etc/localtime", &mut current).map_err(|e| localtime_error(host, e))?;
    if linked.map(|len| &current[..len]) != Some(zoneinfo) {
        host.replace_symlink(zoneinfo, b"/etc/localtime").map_err(|e| localtime_error(host, e))?;
    }
    let mut line = [0u8; NAME_LIMIT + 1];
    let line = joined(&mut line, &[zone.as_bytes(), b"\n"]);
    write_if_changed(host, b"/etc/timezone", line, &mut [0u8; NAME_LIMIT + 2])?;
    Ok(host.text(format_args!("{}", Plain(zone))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tz_database_names() {
        for name in [
            &b"UTC"[..], b"Europe/Berlin", b"America/Argentina/Buenos_Aires", b"Etc/GMT+3", b"Etc/GMT-14",
            b"America/Port-au-Prince", b"posix/America/Argentina/ComodRivadavia", b"EST5EDT",
        ] {
            assert_eq!(check(name).map(str::as_bytes), Ok(name));
        }
        assert!(check(&[b'A'; NAME_LIMIT]).is_ok());
    }

    #[test]
    fn refusals_name_what_is_wrong() {
        assert_eq!(check(b""), Err(TimezoneError::Empty));
        assert_eq!(check(&[b'A'; NAME_LIMIT + 1]), Err(TimezoneError::TooLong));
        assert_eq!(TimezoneError::TooLong.to_string(), "the time zone name is longer than 64 bytes");
        assert_eq!(check(b"/etc/passwd"), Err(TimezoneError::Absolute));
        assert_eq!(check(b"../../etc/shadow"), Err(TimezoneError::ParentDirectory));
        assert_eq!(check(b"Europe/../../x"), Err(TimezoneError::ParentDirectory));
        assert_eq!(check(b"Europe//Berlin"), Err(TimezoneError::EmptyComponent));
        assert_eq!(check(b"Europe/"), Err(TimezoneError::EmptyComponent));
        assert_eq!(check(b"Europe/Berlin\n"), Err(TimezoneError::BadByte { byte: b'\n' }));
        assert_eq!(check(b"Europe Berlin"), Err(TimezoneError::BadByte { byte: b' ' }));
        assert_eq!(check(b"./UTC"), Err(TimezoneError::BadByte { byte: b'.' }));
        assert_eq!(check("Europe/Zürich".as_bytes()), Err(TimezoneError::BadByte { byte: 0xc3 }));
        assert_eq!(
            TimezoneError::BadByte { byte: b'\n' }.to_string(),
            "the time zone name holds '\\n', not one of A-Za-z0-9_+-/"
        );
    }

    #[test]
    fn garbage_never_panics() {
        let mut garbage = crate::fuzz::Garbage::new(13);
        for _ in 0..300 {
            let name = garbage.text(&[b"a", b"/", b".", b"\xff", b"+", b"_"], 70);
            if let Ok(checked) = check(&name) {
                // Accepted: the name itself, and a path that stays under zoneinfo.
                assert_eq!(checked.as_bytes(), &name[..]);
                assert!(!checked.starts_with('/') && !checked.split('/').any(|part| part.is_empty() || part.starts_with("..")));
            }
        }
    }

    #[test]
    fn the_zone_is_linked_and_named_once() {
        use crate::host::memory::{MemoryHost, MemorySystem};
        let mut host = MemorySystem::new(MemoryHost::new()).with_dir("/etc", (0, 0)).with_file("/usr/share/zoneinfo/Europe/Berlin", "TZif");
        let run = |host: &mut MemorySystem, source: &str| {
            crate::users::tests::with_config(source, |config| apply(host, config))
        };
        assert_eq!(run(&mut host, "timezone: Europe/Berlin\n").unwrap(), "Europe/Berlin");
        assert_eq!(host.contents("/etc/localtime"), Some("/usr/share/zoneinfo/Europe/Berlin"));
        assert_eq!(host.contents("/etc/timezone"), Some("Europe/Berlin\n"));
        // A rerun rewrites neither.
        host.host.calls.clear();
        assert_eq!(run(&mut host, "timezone: Europe/Berlin\n").unwrap(), "Europe/Berlin");
        assert!(!host.host.calls.iter().any(|call| call.starts_with("write") || call.starts_with("replace")), "{:?}", host.host.calls);
        assert_eq!(run(&mut host, "timezone: Mars/Olympus\n").unwrap_err(), "timezone Mars/Olympus: no /usr/share/zoneinfo/Mars/Olympus in the image (install tzdata)");
        assert_eq!(run(&mut host, "timezone: ../etc\n").unwrap_err(), "cloud-config line 1: timezone ../etc: the time zone name holds '..'");
        assert_eq!(run(&mut host, "hostname: x\n").unwrap(), "no timezone");
    }
}
