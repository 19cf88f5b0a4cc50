//! An in-memory host for core's tests: every trait of `host`, over maps, recording what
//! was asked of it so a test can assert the order of calls as well as the end state.

use std::collections::BTreeMap;
use std::vec::Vec;

use super::files::{Files, Kind, Metadata};
use super::HostError;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub contents: Vec<u8>,
    pub meta: Metadata,
}

/// A file tree keyed by absolute path; directories are entries of kind `Directory`.
#[derive(Default)]
pub struct MemoryHost {
    pub files: BTreeMap<Vec<u8>, Entry>,
    /// Each call made, as `"write /etc/hostname"`, in order.
    pub calls: Vec<std::string::String>,
    /// Paths whose next access fails with this error (then the entry is removed).
    pub fail: BTreeMap<Vec<u8>, HostError>,
}

impl MemoryHost {
    pub fn new() -> MemoryHost {
        MemoryHost::default()
    }

    /// A file with `contents`, mode 0644, owned by root (its parents are not made).
    pub fn with_file(mut self, path: &str, contents: &[u8]) -> MemoryHost {
        self.put(path.as_bytes(), contents, 0o644, (0, 0));
        self
    }

    pub fn contents(&self, path: &str) -> Option<&[u8]> {
        self.files.get(path.as_bytes()).map(|e| e.contents.as_slice())
    }

    fn put(&mut self, path: &[u8], contents: &[u8], mode: u32, (uid, gid): (u32, u32)) {
        let meta = Metadata { kind: Kind::File, mode, uid, gid, len: contents.len() as u64 };
        self.files.insert(path.to_vec(), Entry { contents: contents.to_vec(), meta });
    }

    fn call(&mut self, what: &str, path: &[u8]) -> Result<(), HostError> {
        self.calls.push(std::format!("{what} {}", std::string::String::from_utf8_lossy(path)));
        match self.fail.remove(path) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

impl Files for MemoryHost {
    fn read(&mut self, path: &[u8], buf: &mut [u8]) -> Result<Option<usize>, HostError> {
        self.call("read", path)?;
        let Some(entry) = self.files.get(path) else { return Ok(None) };
        let dest = buf.get_mut(..entry.contents.len()).ok_or(HostError { errno: 27 })?;
        dest.copy_from_slice(&entry.contents);
        Ok(Some(entry.contents.len()))
    }

    fn write(&mut self, path: &[u8], contents: &[u8], mode: u32, owner: Option<(u32, u32)>) -> Result<(), HostError> {
        self.call("write", path)?;
        self.put(path, contents, mode, owner.unwrap_or((0, 0)));
        Ok(())
    }

    fn create_dir(&mut self, path: &[u8], mode: u32) -> Result<bool, HostError> {
        self.call("create_dir", path)?;
        if self.files.contains_key(path) {
            return Ok(false);
        }
        let meta = Metadata { kind: Kind::Directory, mode, uid: 0, gid: 0, len: 0 };
        self.files.insert(path.to_vec(), Entry { contents: Vec::new(), meta });
        Ok(true)
    }

    fn metadata(&mut self, path: &[u8]) -> Result<Option<Metadata>, HostError> {
        self.call("metadata", path)?;
        Ok(self.files.get(path).map(|e| e.meta))
    }

    fn set_owner_and_mode(&mut self, path: &[u8], uid: u32, gid: u32, mode: u32) -> Result<(), HostError> {
        self.call("set_owner_and_mode", path)?;
        let entry = self.files.get_mut(path).ok_or(HostError::NOT_FOUND)?;
        entry.meta = Metadata { uid, gid, mode, ..entry.meta };
        Ok(())
    }

    fn remove(&mut self, path: &[u8]) -> Result<bool, HostError> {
        self.call("remove", path)?;
        Ok(self.files.remove(path).is_some())
    }

    fn list(&mut self, dir: &[u8], visit: &mut dyn FnMut(&[u8])) -> Result<(), HostError> {
        self.call("list", dir)?;
        let mut prefix = dir.to_vec();
        if !prefix.ends_with(b"/") {
            prefix.push(b'/');
        }
        for path in self.files.keys() {
            if let Some(name) = path.strip_prefix(prefix.as_slice()) {
                if !name.is_empty() && !name.contains(&b'/') {
                    visit(name);
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_file_reads_back_and_lists_under_its_directory() {
        let mut host = MemoryHost::new();
        host.create_dir(b"/etc", 0o755).unwrap();
        host.write(b"/etc/hostname", b"alpha\n", 0o644, None).unwrap();
        let mut buf = [0u8; 16];
        assert_eq!(host.read(b"/etc/hostname", &mut buf), Ok(Some(6)));
        assert_eq!(host.read(b"/etc/hosts", &mut buf), Ok(None));
        let mut names = Vec::new();
        host.list(b"/etc", &mut |name| names.push(name.to_vec())).unwrap();
        assert_eq!(names, [b"hostname".to_vec()]);
        assert_eq!(host.calls[1], "write /etc/hostname");
    }

    #[test]
    fn a_file_larger_than_the_buffer_is_an_error_not_a_short_read() {
        let mut host = MemoryHost::new().with_file("/etc/passwd", b"root:x:0:0::/root:/bin/sh\n");
        assert_eq!(host.read(b"/etc/passwd", &mut [0u8; 4]), Err(HostError { errno: 27 }));
    }

    #[test]
    fn an_injected_failure_fails_that_path_once() {
        let mut host = MemoryHost::new();
        host.fail.insert(b"/etc/hostname".to_vec(), HostError { errno: 28 });
        assert_eq!(host.write(b"/etc/hostname", b"a", 0o644, None), Err(HostError { errno: 28 }));
        assert_eq!(host.write(b"/etc/hostname", b"a", 0o644, None), Ok(()));
    }
}

// --- phases (issue #12): `Directory` over the in-memory tree, for the instance state. ---

use super::directory::Directory;

/// One directory of a `MemoryHost`, as `Directory` sees it.
pub struct MemoryDir<'h> {
    host: &'h mut MemoryHost,
    path: Vec<u8>,
}

impl MemoryHost {
    /// The directory at `path` (made when first written in).
    pub fn dir(&mut self, path: &str) -> MemoryDir<'_> {
        MemoryDir { host: self, path: path.as_bytes().to_vec() }
    }
}

impl MemoryDir<'_> {
    fn child(&self, name: &[u8]) -> Vec<u8> {
        let mut path = self.path.clone();
        path.push(b'/');
        path.extend_from_slice(name);
        path
    }
}

impl Directory for MemoryDir<'_> {
    fn exists(&mut self, name: &[u8]) -> Result<bool, HostError> {
        let path = self.child(name);
        Ok(self.host.metadata(&path)?.is_some())
    }

    fn read(&mut self, name: &[u8], buf: &mut [u8]) -> Result<Option<usize>, HostError> {
        let path = self.child(name);
        Files::read(self.host, &path, buf)
    }

    fn write_volatile(&mut self, name: &[u8], contents: &[u8], mode: u32) -> Result<(), HostError> {
        let path = self.child(name);
        self.host.call("write_volatile", &path)?;
        self.host.put(&path, contents, mode, (0, 0));
        Ok(())
    }

    fn remove(&mut self, name: &[u8]) -> Result<bool, HostError> {
        let path = self.child(name);
        Files::remove(self.host, &path)
    }

    fn sync(&mut self) -> Result<(), HostError> {
        let path = self.path.clone();
        self.host.call("sync", &path)
    }
}
