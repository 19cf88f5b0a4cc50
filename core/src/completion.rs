//! The completion marker (tiny-cloud's `.bootstrap-complete` in TINY_CLOUD_VAR): set once
//! a bootstrap is done, and made durable with everything before it.
//!
//! Setting it first makes durable each filesystem a bootstrap writes, one syncfs(2) each,
//! so that after a crash the marker never vouches for work that was lost: files replaced
//! earlier had their contents synced before they took their names, and this makes the
//! names durable, and the files each run rewrites. Only the marker's own name then needs
//! to be durable, which the directory's fsync makes it: a crash that loses what it
//! remembers (`boot_cache::instance_uuid`) costs a later boot a request, nothing else.

use crate::boot_cache::{self, InstanceDmi};
use crate::host::directory::Directory;
use crate::host::files::Files;
use crate::host::tree::Tree;
use crate::host::HostError;
use crate::state_files::MARKER;

/// Where a bootstrap writes files it does not make durable itself: the root's filesystem
/// (/etc) and /home (keys); then TINY_CLOUD_LOGS and TINY_CLOUD_VAR, the caller's.
/// (`write_files` syncs its files' directories as it writes them: they may be anywhere.)
const WRITTEN: [&[u8]; 2] = [b"/etc", b"/home"];

/// Most filesystems told apart: one each for the places above.
const FILESYSTEMS_LIMIT: usize = 4;

/// Whether the bootstrap is complete: whether the marker is there.
pub fn is_complete(var: &mut impl Directory) -> Result<bool, HostError> {
    var.exists(MARKER)
}

/// Sets the marker, durably: each filesystem written is synced once (a directory that
/// is not there holds nothing written: a missing logs directory is not made), `synced` is told that everything written so
/// far is durable, then the marker takes its name, holding this machine's EC2 UUID
/// (0600: the kernel keeps product_uuid for root), and `var` is fsynced.
/// `logs` and `var_path` are TINY_CLOUD_LOGS and TINY_CLOUD_VAR (`var`, open).
pub fn set<H: Files + Tree>(host: &mut H, var: &mut impl Directory, logs: &[u8], var_path: &[u8], synced: impl FnOnce()) -> Result<(), HostError> {
    let mut seen: heapless::Vec<u64, FILESYSTEMS_LIMIT> = heapless::Vec::new();
    let places = [WRITTEN[0], WRITTEN[1], logs, var_path];
    for (index, path) in places.iter().enumerate() {
        let filesystem = match host.filesystem_of(path)? {
            Some(filesystem) => filesystem,
            // TINY_CLOUD_VAR is open: it must be synced.
            None if index == places.len() - 1 => return Err(HostError::NOT_FOUND),
            None => continue,
        };
        if !seen.contains(&filesystem) {
            host.sync_filesystem(path)?;
            let _ = seen.push(filesystem);
        }
    }
    synced();
    let mut room = [[0u8; 128]; 3];
    let uuid = boot_cache::instance_uuid(&InstanceDmi::read(host, &mut room)).unwrap_or_default();
    var.write_volatile(MARKER, uuid, 0o600)?;
    var.sync()
}

/// Clears the marker, durably: the next run bootstraps again.
pub fn clear(var: &mut impl Directory) -> Result<(), HostError> {
    var.remove(MARKER)?;
    var.sync()
}

/// `wisp mark` and the `bootstrap_complete` action: the marker set (`set`) or cleared
/// (`clear`) by `complete`; a failure says which of the two failed.
pub fn mark<H: Files + Tree>(host: &mut H, var: &mut impl Directory, complete: bool, logs: &[u8], var_path: &[u8], synced: impl FnOnce()) -> Result<(), MarkingFailed> {
    let marked = match complete {
        true => set(host, var, logs, var_path, synced),
        false => clear(var),
    };
    marked.map_err(|error| MarkingFailed { complete, error })
}

/// The completion marker could not be set (`complete`) or cleared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MarkingFailed {
    pub complete: bool,
    pub error: HostError,
}

impl MarkingFailed {
    /// What failed, in words (the error's are the host's).
    pub fn what(&self) -> &'static str {
        match self.complete {
            true => "cannot set the completion marker",
            false => "cannot clear the completion marker",
        }
    }
}

#[cfg(test)]
mod tests {
    use core::cell::RefCell;
    use std::string::String;
    use std::vec::Vec;

    use super::*;
    use crate::host::memory::{MemoryHost, Shared, SharedDir};

    const EC2_UUID: &[u8] = b"ec2e1916-9099-7caf-fd21-012345abcdef\n";

    /// /etc and /home on the root filesystem, the logs and TINY_CLOUD_VAR on another.
    fn machine() -> MemoryHost {
        let mut host = MemoryHost::new().with_file("/sys/class/dmi/id/product_uuid", EC2_UUID);
        for dir in ["/etc", "/home", "/var/log", "/var/lib/cloud"] {
            host.create_dir(dir.as_bytes(), 0o755).unwrap();
        }
        host.filesystems.insert(b"/".to_vec(), 1);
        host.filesystems.insert(b"/var".to_vec(), 2);
        host.calls.clear();
        host
    }

    /// Sets the marker; whether `synced` was told, and the calls that changed something.
    fn set_on(host: MemoryHost) -> (Result<(), HostError>, bool, MemoryHost) {
        let host = RefCell::new(host);
        let mut told = false;
        let result = set(&mut Shared(&host), &mut SharedDir(&host, "/var/lib/cloud"), b"/var/log", b"/var/lib/cloud", || told = true);
        (result, told, host.into_inner())
    }

    fn changes(host: &MemoryHost) -> Vec<&str> {
        host.calls.iter().map(String::as_str).filter(|c| ["sync", "write", "remove", "create"].iter().any(|verb| c.starts_with(verb))).collect()
    }

    #[test]
    fn each_filesystem_is_synced_once_before_the_marker_takes_its_name() {
        let (result, told, host) = set_on(machine());
        assert_eq!((result, told), (Ok(()), true));
        assert_eq!(
            changes(&host),
            ["syncfs /etc", "syncfs /var/log", "write_volatile /var/lib/cloud/.bootstrap-complete", "sync /var/lib/cloud"]
        );
        // It remembers the machine's EC2 UUID, for root only.
        let marker = &host.files[&b"/var/lib/cloud/.bootstrap-complete".to_vec()];
        assert_eq!(marker.contents, EC2_UUID.trim_ascii());
        assert_eq!(marker.meta.mode, 0o600);
    }

    #[test]
    fn a_uuid_that_is_not_ec2s_is_not_remembered() {
        let (result, _, host) = set_on(machine().with_file("/sys/class/dmi/id/product_uuid", b"03000200-0400-0500-0006-000700080009\n"));
        assert_eq!(result, Ok(()));
        assert_eq!(host.contents("/var/lib/cloud/.bootstrap-complete"), Some(&b""[..]));
    }

    #[test]
    fn a_missing_place_is_skipped() {
        let mut host = machine();
        host.files.remove(&b"/etc"[..]);
        host.files.remove(&b"/var/log"[..]);
        let (result, _, host) = set_on(host);
        assert_eq!(result, Ok(()));
        // /home stands for the root filesystem, TINY_CLOUD_VAR for the other.
        assert_eq!(&changes(&host)[..2], ["syncfs /home", "syncfs /var/lib/cloud"]);
    }

    #[test]
    fn a_failed_sync_sets_no_marker_and_says_nothing_is_durable() {
        let mut host = machine();
        host.fail.insert(b"/etc".to_vec(), HostError { errno: 5 });
        let (result, told, host) = set_on(host);
        assert_eq!((result, told), (Err(HostError { errno: 5 }), false));
        assert!(host.contents("/var/lib/cloud/.bootstrap-complete").is_none());
    }

    #[test]
    fn without_its_directory_the_marker_is_not_set() {
        let mut host = machine();
        host.files.remove(&b"/var/lib/cloud"[..]);
        let (result, told, _) = set_on(host);
        assert_eq!((result, told), (Err(HostError::NOT_FOUND), false));
    }

    #[test]
    fn clearing_removes_the_marker_durably() {
        let (_, _, mut host) = set_on(machine());
        host.calls.clear();
        let mut var = host.dir("/var/lib/cloud");
        assert_eq!(is_complete(&mut var), Ok(true));
        assert_eq!(clear(&mut var), Ok(()));
        assert_eq!(is_complete(&mut var), Ok(false));
        assert_eq!(changes(&host), ["remove /var/lib/cloud/.bootstrap-complete", "sync /var/lib/cloud"]);
    }

    #[test]
    fn marking_says_whether_setting_or_clearing_failed() {
        let mut host = machine();
        host.fail.insert(b"/etc".to_vec(), HostError { errno: 5 });
        let host = RefCell::new(host);
        let set_failed = mark(&mut Shared(&host), &mut SharedDir(&host, "/var/lib/cloud"), true, b"/var/log", b"/var/lib/cloud", || {}).unwrap_err();
        assert_eq!((set_failed.what(), set_failed.error), ("cannot set the completion marker", HostError { errno: 5 }));
        host.borrow_mut().fail.insert(b"/var/lib/cloud/.bootstrap-complete".to_vec(), HostError { errno: 13 });
        let cleared = mark(&mut Shared(&host), &mut SharedDir(&host, "/var/lib/cloud"), false, b"/var/log", b"/var/lib/cloud", || {});
        let clear_failed = cleared.unwrap_err();
        assert_eq!(clear_failed, MarkingFailed { complete: false, error: HostError { errno: 13 } });
        assert_eq!(clear_failed.what(), "cannot clear the completion marker");
        // Marked, then cleared: the run's word is the last.
        assert_eq!(mark(&mut Shared(&host), &mut SharedDir(&host, "/var/lib/cloud"), true, b"/var/log", b"/var/lib/cloud", || {}), Ok(()));
        assert_eq!(mark(&mut Shared(&host), &mut SharedDir(&host, "/var/lib/cloud"), false, b"/var/log", b"/var/lib/cloud", || {}), Ok(()));
        assert_eq!(is_complete(&mut SharedDir(&host, "/var/lib/cloud")), Ok(false));
    }
}
