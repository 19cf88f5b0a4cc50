//! The system's own state beyond plain files: whole-file replacements made together,
//! durably, as one step; the kernel's name for the machine; its randomness. One trait,
//! since every host that has one has all three (the accounts' and host names' rules, and
//! the DHCP client's transaction ids, run against the same host).

use super::HostError;

/// `stage`, `commit` and `discard` are a batch of whole-file replacements that take
/// effect together: `stage` writes each new file beside its old one, `commit` makes every
/// staged file durable (one sync per filesystem) and then gives each its name, in the
/// order staged. A crash before the commit leaves every old file; after it, complete new
/// ones. What is staged and never committed is removed.
pub trait System {
    /// The new contents of `path` (absolute, as the image sees it), owned and moded,
    /// for the next commit; staging a path again replaces what was staged for it.
    fn stage(&mut self, path: &[u8], contents: &[u8], mode: u32, owner: Option<(u32, u32)>) -> Result<(), HostError>;

    /// Gives the staged files their names, durably, and empties the batch; after a
    /// failure, what is left staged stays until discarded.
    fn commit(&mut self) -> Result<(), HostError>;

    /// Forgets what is staged, removing its new files: the old ones stay.
    fn discard(&mut self);

    /// sethostname(2).
    fn set_host_name(&mut self, name: &[u8]) -> Result<(), HostError>;

    /// Fills `buf` with random bytes fit for secrets (salts).
    fn fill(&mut self, buf: &mut [u8]) -> Result<(), HostError>;
}
