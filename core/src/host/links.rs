//! Symbolic links under the instance's root: what a path names with its symlinks followed,
//! and links made or replaced whole: /etc/localtime pointing at a zone file, a program
//! found through busybox's links, an OpenRC service enabled in a runlevel.

use super::files::Kind;
use super::HostError;

pub trait Links {
    /// stat(2) of an image path, symlinks followed (inside the root): what it names,
    /// `None` when nothing (or a dangling link) is there.
    fn followed(&mut self, path: &[u8]) -> Option<Kind>;

    /// readlink(2): the link's target into `buf`, its length; `None` when `path` is not
    /// a symlink or not there.
    fn read_link(&mut self, path: &[u8], buf: &mut [u8]) -> Result<Option<usize>, HostError>;

    /// `path` (its directory there already) made a symlink to `target`, atomically: a
    /// file or link there before is replaced, never seen missing.
    fn replace_symlink(&mut self, target: &[u8], path: &[u8]) -> Result<(), HostError>;

    /// symlinkat(2): `path` (absolute, its directory there already) pointing at `target`;
    /// false when something is at `path` already, which is left as it is.
    fn create_symlink(&mut self, target: &[u8], path: &[u8]) -> Result<bool, HostError>;
}
