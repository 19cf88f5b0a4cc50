//! Symbolic links under the instance's root: an OpenRC service enabled in a runlevel is a
//! link to its init script.

use super::HostError;

pub trait Symlinks {
    /// symlinkat(2): `path` (absolute, its directory there already) pointing at `target`;
    /// false when something is at `path` already, which is left as it is.
    fn create_symlink(&mut self, target: &[u8], path: &[u8]) -> Result<bool, HostError>;
}
