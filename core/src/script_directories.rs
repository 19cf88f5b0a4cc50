//! cloud-init's script directories under `$TINY_CLOUD_VAR/scripts`: `per-once`,
//! `per-boot` and `per-instance`, which `run_userdata` runs in cloud-init's order, each
//! in run-parts' order, before the user-data's own scripts. An image may put scripts
//! there; user-data's `text/x-shellscript-per-*` parts are written there first.

use crate::userdata::{Kind, ScriptName};

/// Most scripts run from one directory.
pub const DIRECTORY_LIMIT: usize = 64;

/// How often a directory's scripts run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frequency {
    Once,
    Boot,
    Instance,
}

impl Frequency {
    /// In the order cloud-init's final stage runs them.
    pub const ALL: [Frequency; 3] = [Frequency::Once, Frequency::Boot, Frequency::Instance];

    pub const fn directory(self) -> &'static [u8] {
        match self {
            Frequency::Once => b"per-once",
            Frequency::Boot => b"per-boot",
            Frequency::Instance => b"per-instance",
        }
    }

    /// The user-data parts written into this directory.
    pub const fn part_kind(self) -> Kind {
        match self {
            Frequency::Once => Kind::ScriptPerOnce,
            Frequency::Boot => Kind::ScriptPerBoot,
            Frequency::Instance => Kind::ScriptPerInstance,
        }
    }

    /// Whether the directory runs this time: per-boot at every boot; the others not on
    /// a later boot of a bootstrapped instance, and not once `ran_before` (asked only
    /// then) says they ran: ever (per-once), or for this instance (per-instance).
    pub fn is_due(self, later_boot: bool, ran_before: impl FnOnce() -> bool) -> bool {
        match self {
            Frequency::Boot => true,
            _ if later_boot => false,
            Frequency::Once | Frequency::Instance => !ran_before(),
        }
    }
}

/// Whether a directory entry is a script to run: hidden names are not (a temporary file
/// a crash left behind is one).
pub fn is_listed(name: &[u8]) -> bool {
    !name.starts_with(b".")
}

/// run-parts' order: by name, bytewise. By insertion: a directory holds at most
/// `DIRECTORY_LIMIT` names, and core's sort_unstable is 2 KB of code.
pub fn sort(names: &mut [ScriptName]) {
    for sorted in 1..names.len() {
        let mut at = sorted;
        while at > 0 && names[at - 1] > names[at] {
            names.swap(at - 1, at);
            at -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_run_in_cloud_inits_order_and_frequency() {
        let names: std::vec::Vec<_> = Frequency::ALL.iter().map(|f| f.directory()).collect();
        assert_eq!(names, [&b"per-once"[..], b"per-boot", b"per-instance"]);
        assert_eq!(Frequency::Instance.part_kind(), Kind::ScriptPerInstance);
        // First boot: each runs unless it ran before.
        assert!(Frequency::Once.is_due(false, || false));
        assert!(!Frequency::Once.is_due(false, || true));
        assert!(!Frequency::Instance.is_due(false, || true));
        assert!(Frequency::Boot.is_due(false, || true));
        // A later boot of a bootstrapped instance: per-boot only, and nothing is asked.
        assert!(Frequency::Boot.is_due(true, || unreachable!()));
        assert!(!Frequency::Once.is_due(true, || unreachable!()));
        assert!(!Frequency::Instance.is_due(true, || unreachable!()));
    }

    #[test]
    fn run_parts_order() {
        let mut names: std::vec::Vec<ScriptName> = ["b", "a-2", "A", "a-10", "10"].iter().map(|n| ScriptName::try_from(*n).unwrap()).collect();
        sort(&mut names);
        assert_eq!(names, ["10", "A", "a-10", "a-2", "b"]);
        assert!(is_listed(b"setup") && !is_listed(b".setup.tmp"));
    }
}
