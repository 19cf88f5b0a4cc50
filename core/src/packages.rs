//! cloud-config's `packages` entries as apk takes them: `name`, or `[name, version]`,
//! which apk spells `name=version`. Another package manager's form (`{apt: [...]}`) is
//! `cloud_config`'s to leave out.
//!
//! The step is marked done once apk succeeded (`MARKER_WORK`), so that a crash before the
//! bootstrap completes does not make apk fetch and install again. apk's `update`, `upgrade`
//! and `add` run twice end as run once (apk's world file says what is wanted, not what to
//! do), so the marker only saves time: `markers::Durability` makes it durable with the
//! next sync of the boot rather than with one of its own before the next work.

/// The work name of the step's marker (`markers::name`).
pub const MARKER_WORK: &str = "packages";

/// One package to add.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Package<'a> {
    pub name: &'a str,
    pub version: Option<&'a str>,
}

impl<'a> Package<'a> {
    /// From an entry's words; `None` when they are not one or two words apk would take
    /// as a package (never an option: no word starts with `-`).
    #[inline]
    pub fn from_words(words: &[&'a str]) -> Option<Package<'a>> {
        let valid = |w: &str| w.as_bytes().first().is_some_and(|&b| b != b'-') && w.bytes().all(|b| b.is_ascii_graphic());
        match *words {
            [name] if valid(name) => Some(Package { name, version: None }),
            [name, version] if valid(name) && valid(version) => Some(Package { name, version: Some(version) }),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_pinned_versions() {
        assert_eq!(Package::from_words(&["curl"]), Some(Package { name: "curl", version: None }));
        assert_eq!(Package::from_words(&["curl", "8.5.0-r0"]), Some(Package { name: "curl", version: Some("8.5.0-r0") }));
        // Never an option, never a word apk would split.
        for bad in [&[][..], &["-U"], &["a b"], &[""], &["curl", "--allow-untrusted"], &["a", "b", "c"]] {
            assert_eq!(Package::from_words(bad), None, "{bad:?}");
        }
    }
}
