//! What core asks of the system it runs on.
//!
//! Every decision in core is written against these traits, never against system calls, so
//! that it is unit-tested with an in-memory host (no root, no network, no disk). bin
//! implements them for Linux over os-linux; each test implements only what it needs.
//!
//! One trait per concern, each in its own module, so a rule asks for exactly what it uses
//! (`fn plan(disk: &mut impl BlockDevice)`) and a test fakes exactly that. `Host` is the
//! union the phase runner takes. A trait method is as thin as the call it stands for:
//! it takes caller-owned buffers, returns what the system said, and decides nothing.

use core::fmt;

use crate::text::Decimal;

pub mod actions;
pub mod phases;
pub mod block;
pub mod clock;
pub mod dhcp;
pub mod directory;
pub mod explain;
pub mod files;
pub mod http;
pub mod netlink;
// accounts, passwords, keys and host names (issue #12)
pub mod messages;
pub mod room;
pub mod system;
// user-data's scripts, its decoding's room and includes
pub mod scripts;
pub mod fetch;
// local clouds' seeds
pub mod seed_media;
pub mod seed_sources;
// the network's waits
pub mod timer;
// `wisp clean` and the completion marker
pub mod tree;
// HTTP exchanges' sockets
pub mod sockets;
// grow's disks, images and mount points
pub mod devices;
// config: cloud-config's system keys (timezone, packages, mounts, power_state)
pub mod chosen_files;
pub mod commands;
pub mod links;
pub mod mounts;
// actions: TINY_CLOUD_VAR's saved copies of user-data and metadata
pub mod saved_copies;
#[cfg(test)]
pub mod memory;

/// A call the host could not make, as the system reported it: the errno, kept as a
/// number so core needs no system crate; bin turns it back into words for messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostError {
    pub errno: i32,
}

impl HostError {
    /// No such file or directory: for most reads, "absent" rather than a failure.
    pub const NOT_FOUND: HostError = HostError { errno: 2 };
    /// ELOOP: a symlink the host refused to follow (out of the root, or where no
    /// component may be one).
    pub const SYMLINK_REFUSED: HostError = HostError { errno: 40 };

    pub fn is_not_found(self) -> bool {
        self == Self::NOT_FOUND
    }
}

impl fmt::Display for HostError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "errno {}", Decimal(self.errno.unsigned_abs().into()))
    }
}
