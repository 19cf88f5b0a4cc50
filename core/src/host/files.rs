//! Files under the instance's root.
//!
//! Paths are absolute as the image sees them (`/etc/passwd`); the host resolves them
//! inside the root it was given (`--root`): symlinks are followed, but never out of it.

use super::HostError;

/// What kind of file a path names (a symlink is not followed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    File,
    Directory,
    Symlink,
    Other,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Metadata {
    pub kind: Kind,
    /// The permission bits (07777).
    pub mode: u32,
    pub uid: u32,
    pub gid: u32,
    pub len: u64,
}

pub trait Files {
    /// The whole file into `buf`: its length, `None` when it does not exist. A file
    /// larger than `buf` is an error (EFBIG), never a truncated read.
    fn read(&mut self, path: &[u8], buf: &mut [u8]) -> Result<Option<usize>, HostError>;

    /// Replaces the file atomically and durably: complete, owned and moded before it
    /// takes the name; a symlink at `path` is replaced, never followed.
    fn write(&mut self, path: &[u8], contents: &[u8], mode: u32, owner: Option<(u32, u32)>) -> Result<(), HostError>;

    /// Creates the directory and its missing parents (0755, the last one `mode`); false
    /// when it was there already.
    fn create_dir(&mut self, path: &[u8], mode: u32) -> Result<bool, HostError>;

    /// `None` when nothing is at `path`.
    fn metadata(&mut self, path: &[u8]) -> Result<Option<Metadata>, HostError>;

    /// A directory's owner and mode (files get theirs from `write`).
    fn set_owner_and_mode(&mut self, path: &[u8], uid: u32, gid: u32, mode: u32) -> Result<(), HostError>;

    /// Removes a file; false when there was none.
    fn remove(&mut self, path: &[u8]) -> Result<bool, HostError>;

    /// Each entry's name in the directory (without `.` and `..`), in no set order.
    fn list(&mut self, dir: &[u8], visit: &mut dyn FnMut(&[u8])) -> Result<(), HostError>;
}

/// A host whose files are those of another `Files` it holds (its root), so that the
/// delegation is written once, here.
pub trait HasFiles {
    type Files: Files;

    fn files(&mut self) -> &mut Self::Files;
}

impl<T: HasFiles> Files for T {
    fn read(&mut self, path: &[u8], buf: &mut [u8]) -> Result<Option<usize>, HostError> {
        self.files().read(path, buf)
    }
    fn write(&mut self, path: &[u8], contents: &[u8], mode: u32, owner: Option<(u32, u32)>) -> Result<(), HostError> {
        self.files().write(path, contents, mode, owner)
    }
    fn create_dir(&mut self, path: &[u8], mode: u32) -> Result<bool, HostError> {
        self.files().create_dir(path, mode)
    }
    fn metadata(&mut self, path: &[u8]) -> Result<Option<Metadata>, HostError> {
        self.files().metadata(path)
    }
    fn set_owner_and_mode(&mut self, path: &[u8], uid: u32, gid: u32, mode: u32) -> Result<(), HostError> {
        self.files().set_owner_and_mode(path, uid, gid, mode)
    }
    fn remove(&mut self, path: &[u8]) -> Result<bool, HostError> {
        self.files().remove(path)
    }
    fn list(&mut self, dir: &[u8], visit: &mut dyn FnMut(&[u8])) -> Result<(), HostError> {
        self.files().list(dir, visit)
    }
}

impl Kind {
    /// The kind a stat(2) mode's file type bits say.
    pub fn of_mode(mode: u32) -> Kind {
        match mode & 0o170000 {
            0o100000 => Kind::File,
            0o040000 => Kind::Directory,
            0o120000 => Kind::Symlink,
            _ => Kind::Other,
        }
    }
}

/// `/a/b/name` as (`/a/b`, `name`), a trailing slash ignored; the root's own entries have
/// the parent `""`. `None` for a path that names no entry (`/`, `name`, ``).
pub fn parent_and_name(path: &[u8]) -> Option<(&[u8], &[u8])> {
    let trimmed = path.strip_suffix(b"/").unwrap_or(path);
    match trimmed.iter().rposition(|&b| b == b'/') {
        Some(i) if i + 1 < trimmed.len() => Some((&trimmed[..i], &trimmed[i + 1..])),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_splits_at_its_last_slash() {
        assert_eq!(parent_and_name(b"/etc/passwd"), Some((&b"/etc"[..], &b"passwd"[..])));
        assert_eq!(parent_and_name(b"/home/alice/"), Some((&b"/home"[..], &b"alice"[..])));
        assert_eq!(parent_and_name(b"/etc"), Some((&b""[..], &b"etc"[..])));
        for nothing in [&b"/"[..], b"", b"etc", b"//"] {
            assert_eq!(parent_and_name(nothing), None, "{nothing:?}");
        }
    }

    #[test]
    fn a_mode_says_its_kind() {
        assert_eq!(Kind::of_mode(0o100644), Kind::File);
        assert_eq!(Kind::of_mode(0o040755), Kind::Directory);
        assert_eq!(Kind::of_mode(0o120777), Kind::Symlink);
        assert_eq!(Kind::of_mode(0o020666), Kind::Other);
    }
}
