//! Markers of finished per-instance work, modelled on cloud-init's `sem/` files: one empty
//! file per piece of work in `$TINY_CLOUD_VAR/sem/`, named for the work and the instance,
//! made durable before the next piece starts. A crash and a rerun then never run a
//! finished piece twice, and a new instance finds none of its own.
//!
//! A piece is finished once it ran to its end, whatever its exit status: a script that
//! failed reports its failure on that boot and is not run again for the instance, as
//! cloud-init does. A piece cut short by a crash has no marker and runs again.

use core::fmt;

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
    for piece in [work, ".", item.unwrap_or(""), if item.is_some() { "." } else { "" }, id] {
        name.push_str(piece).map_err(|_| BadMarkerName)?;
    }
    Ok(name)
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
