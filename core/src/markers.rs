//! Markers of finished per-instance work, modelled on cloud-init's `sem/` files: one empty
//! file per piece of work in `$TINY_CLOUD_VAR/sem/`, named for the work and the instance,
//! made durable before the next piece starts. A crash and a rerun then never run a
//! finished piece twice, and a new instance finds none of its own.
//!
//! A piece is finished once it ran to its end, whatever its exit status: a script that
//! failed reports its failure on that boot and is not run again for the instance, as
//! cloud-init does. A piece cut short by a crash has no marker and runs again.

use core::fmt;
use core::sync::atomic::{AtomicBool, Ordering};

use crate::host::directory::Directory;
use crate::host::HostError;

/// Longest marker name (a file name).
pub const NAME_LIMIT: usize = 255;

pub type MarkerName = heapless::String<NAME_LIMIT>;

/// The instance-id or the item name holds a byte a file name must not (`/`, a control
/// byte, a space), is empty, or the name would be longer than `NAME_LIMIT`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BadMarkerName;

impl fmt::Display for BadMarkerName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("no valid work marker name for this instance-id and item")
    }
}

/// `<work>.<item>.<instance-id>` (`<work>.<instance-id>` without an item): `work` is
/// wisp's own word (`script`, `runcmd`, `packages`), `item` a script's file name.
pub fn name(work: &str, item: Option<&str>, instance_id: &[u8]) -> Result<MarkerName, BadMarkerName> {
    let plain = |bytes: &[u8]| !bytes.is_empty() && bytes.iter().all(|&b| b.is_ascii_graphic() && b != b'/');
    let id = core::str::from_utf8(instance_id).map_err(|_| BadMarkerName)?;
    if !plain(id.as_bytes()) || item.is_some_and(|item| !plain(item.as_bytes())) {
        return Err(BadMarkerName);
    }
    let mut name = MarkerName::new();
    for piece in [Some(work), item, Some(id)].into_iter().flatten() {
        if !name.is_empty() {
            name.push('.').map_err(|_| BadMarkerName)?;
        }
        name.push_str(piece).map_err(|_| BadMarkerName)?;
    }
    Ok(name)
}

/// Whether `work` (`item` of it) finished for the instance, by its marker in `sem`. A
/// name that cannot be made, or a marker that cannot be read, is not done: the work runs.
#[inline]
pub fn is_done(sem: &mut impl Directory, work: &str, item: Option<&str>, instance_id: &[u8]) -> bool {
    // Borrowed where it is, not copied out of the Result.
    name(work, item, instance_id).as_ref().is_ok_and(|name| sem.exists(name.as_bytes()).unwrap_or(false))
}

/// A marker that could not be written.
// The name is what the message shows, and core has no allocator to box it in: the error
// is returned through the caller's memory, once per marker written.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MarkError {
    BadName(BadMarkerName),
    Host { name: MarkerName, error: HostError },
}

/// Records in `sem` that `work` (`item` of it) finished for the instance: an empty file,
/// durable with the directory's next sync (the caller's to make before the next work).
#[inline]
#[allow(clippy::result_large_err)] // see MarkError
pub fn mark_done(sem: &mut impl Directory, work: &str, item: Option<&str>, instance_id: &[u8]) -> Result<(), MarkError> {
    // A match rather than `?`: the name (264 bytes) is moved into the error, not copied
    // out of one Result into another first.
    match name(work, item, instance_id) {
        Ok(name) => sem.write_volatile(name.as_bytes(), b"", 0o600).map_err(|error| MarkError::Host { name, error }),
        Err(e) => Err(MarkError::BadName(e)),
    }
}

/// Whether running `work` again after a crash ends as running it once: its marker saves
/// time, never a second outcome (`packages`: apk's world says what is wanted). Such a
/// marker goes without a sync of its own: it becomes durable with the next one of the boot
/// (another marker's, the completion's syncfs), or a crash before that runs the work again.
/// Never earlier than with a sync of its own, so it never outlives its work any more than
/// that would.
fn rerun_is_harmless(work: &str) -> bool {
    work == crate::packages::MARKER_WORK
}

/// When `sem/` is synced: a marker written is made durable before the next piece of work
/// starts (one fsync of the directory then), unless the completion marker's syncfs came
/// first, or at the end of the run; a marker of work whose rerun is harmless waits for
/// the boot's next sync. One process runs one instance's work and all its markers are in
/// one directory, so one flag (a `static` of the caller's) is enough.
#[derive(Default)]
pub struct Durability {
    pending: AtomicBool,
}

impl Durability {
    pub const fn new() -> Durability {
        Durability { pending: AtomicBool::new(false) }
    }

    /// Whether `work` (`item` of it) finished for the instance. When it did not, it is
    /// about to start: the markers of the work before it are made durable first.
    pub fn is_done(&self, sem: &mut impl Directory, work: &str, item: Option<&str>, instance_id: &[u8]) -> Result<bool, HostError> {
        let done = is_done(sem, work, item, instance_id);
        if !done && self.pending.swap(false, Ordering::Relaxed) {
            sem.sync()?;
        }
        Ok(done)
    }

    /// Records that `work` finished; made durable before the next piece of work starts
    /// (work whose rerun is harmless: with the boot's next sync).
    #[allow(clippy::result_large_err)] // see MarkError
    pub fn mark_done(&self, sem: &mut impl Directory, work: &str, item: Option<&str>, instance_id: &[u8]) -> Result<(), MarkError> {
        mark_done(sem, work, item, instance_id)?;
        if !rerun_is_harmless(work) {
            self.pending.store(true, Ordering::Relaxed);
        }
        Ok(())
    }

    /// The filesystem holding `sem/` was synced (the completion marker's syncfs): the
    /// markers written so far are durable.
    pub fn synced(&self) {
        self.pending.store(false, Ordering::Relaxed);
    }

    /// At the end of a run: the markers not yet durable are made so (`sync_sem` opens
    /// `sem/` and syncs it, called only then).
    pub fn settle(&self, sync_sem: impl FnOnce() -> Result<(), HostError>) -> Result<(), HostError> {
        match self.pending.swap(false, Ordering::Relaxed) {
            true => sync_sem(),
            false => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::memory::MemoryHost;

    #[test]
    fn a_crash_between_items_runs_only_what_had_not_finished() {
        let mut host = MemoryHost::new();
        let scripts = ["part-001", "part-002", "part-003"];
        // The first run finishes two scripts, then the machine stops.
        for script in &scripts[..2] {
            assert!(!is_done(&mut host.dir("/var/lib/cloud/sem"), "script", Some(script), b"i-1"));
            mark_done(&mut host.dir("/var/lib/cloud/sem"), "script", Some(script), b"i-1").unwrap();
        }
        // The rerun skips them and runs the third; another instance runs all three.
        let done: std::vec::Vec<bool> = scripts.iter().map(|s| is_done(&mut host.dir("/var/lib/cloud/sem"), "script", Some(s), b"i-1")).collect();
        assert_eq!(done, [true, true, false]);
        assert!(scripts.iter().all(|s| !is_done(&mut host.dir("/var/lib/cloud/sem"), "script", Some(s), b"i-2")));
        // runcmd as a whole: its marker is its own.
        assert!(!is_done(&mut host.dir("/var/lib/cloud/sem"), "runcmd", None, b"i-1"));
        // A marker that cannot be read is not done; one that cannot be written says which.
        host.fail.insert(b"/var/lib/cloud/sem/script.part-001.i-1".to_vec(), HostError { errno: 5 });
        assert!(!is_done(&mut host.dir("/var/lib/cloud/sem"), "script", Some("part-001"), b"i-1"));
        host.fail.insert(b"/var/lib/cloud/sem/runcmd.i-1".to_vec(), HostError { errno: 28 });
        assert_eq!(
            mark_done(&mut host.dir("/var/lib/cloud/sem"), "runcmd", None, b"i-1"),
            Err(MarkError::Host { name: MarkerName::try_from("runcmd.i-1").unwrap(), error: HostError { errno: 28 } })
        );
        assert_eq!(mark_done(&mut host.dir("/var/lib/cloud/sem"), "runcmd", None, b""), Err(MarkError::BadName(BadMarkerName)));
    }

    #[test]
    fn names() {
        assert_eq!(name("runcmd", None, b"i-0123").unwrap(), "runcmd.i-0123");
        assert_eq!(name("script", Some("part-001"), b"i-0123").unwrap(), "script.part-001.i-0123");
        // Another instance, another marker: its work is not done.
        assert_ne!(name("runcmd", None, b"i-0123"), name("runcmd", None, b"i-4567"));
        assert_eq!(name("runcmd", None, b""), Err(BadMarkerName));
        assert_eq!(name("runcmd", None, b"a/b"), Err(BadMarkerName));
        assert_eq!(name("script", Some("a b"), b"i-1"), Err(BadMarkerName));
        assert_eq!(name("script", Some(""), b"i-1"), Err(BadMarkerName));
        assert_eq!(name("script", Some("x"), b"i-\xff"), Err(BadMarkerName));
        let long = "a".repeat(250);
        assert_eq!(name("script", Some(&long), b"i-1"), Err(BadMarkerName));
    }

    #[test]
    fn markers_are_made_durable_before_the_next_work_or_at_the_end() {
        let mut host = MemoryHost::new();
        let durability = Durability::new();
        let syncs = |host: &MemoryHost| host.calls.iter().filter(|c| c.starts_with("sync")).count();
        // Nothing written yet: starting work syncs nothing.
        assert_eq!(durability.is_done(&mut host.dir("/sem"), "script", Some("a"), b"i-1"), Ok(false));
        durability.mark_done(&mut host.dir("/sem"), "script", Some("a"), b"i-1").unwrap();
        assert_eq!(syncs(&host), 0);
        // Work already done starts nothing: its check syncs nothing either.
        assert_eq!(durability.is_done(&mut host.dir("/sem"), "script", Some("a"), b"i-1"), Ok(true));
        assert_eq!(syncs(&host), 0);
        // The next work to start makes the marker before it durable, once.
        assert_eq!(durability.is_done(&mut host.dir("/sem"), "script", Some("b"), b"i-1"), Ok(false));
        assert_eq!(durability.is_done(&mut host.dir("/sem"), "script", Some("c"), b"i-1"), Ok(false));
        assert_eq!(syncs(&host), 1);
        // A syncfs in between makes the directory's sync needless; the end of the run
        // syncs only what is pending.
        durability.mark_done(&mut host.dir("/sem"), "script", Some("b"), b"i-1").unwrap();
        durability.synced();
        assert_eq!(durability.settle(|| host.dir("/sem").sync()), Ok(()));
        assert_eq!(syncs(&host), 1);
        durability.mark_done(&mut host.dir("/sem"), "script", Some("c"), b"i-1").unwrap();
        assert_eq!(durability.settle(|| host.dir("/sem").sync()), Ok(()));
        assert_eq!(syncs(&host), 2);
        assert_eq!(durability.settle(|| Err(HostError::NOT_FOUND)), Ok(()));
    }

    #[test]
    fn the_packages_marker_waits_for_the_next_sync_of_the_boot() {
        let mut host = MemoryHost::new();
        let durability = Durability::new();
        let syncs = |host: &MemoryHost| host.calls.iter().filter(|c| c.starts_with("sync")).count();
        // apk ran: its marker is written, and neither the next work nor the end of the run
        // (the main phase's process) syncs for it.
        assert_eq!(durability.is_done(&mut host.dir("/sem"), crate::packages::MARKER_WORK, None, b"i-1"), Ok(false));
        durability.mark_done(&mut host.dir("/sem"), crate::packages::MARKER_WORK, None, b"i-1").unwrap();
        assert!(is_done(&mut host.dir("/sem"), crate::packages::MARKER_WORK, None, b"i-1"));
        assert_eq!(durability.is_done(&mut host.dir("/sem"), "runcmd", None, b"i-1"), Ok(false));
        assert_eq!(durability.settle(|| host.dir("/sem").sync()), Ok(()));
        assert_eq!(syncs(&host), 0);
        // Work whose rerun is not harmless still has its marker synced before the next work,
        // which makes the packages marker durable too.
        durability.mark_done(&mut host.dir("/sem"), "runcmd", None, b"i-1").unwrap();
        assert_eq!(durability.is_done(&mut host.dir("/sem"), "script", Some("a"), b"i-1"), Ok(false));
        assert_eq!(syncs(&host), 1);
    }
}
