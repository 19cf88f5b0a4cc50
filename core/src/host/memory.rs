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

// Accounts, passwords, keys and host names (issue #12): a `MemoryHost` with a batch,
// message lines as strings, a fixed randomness and a kernel host name.

/// A `MemoryHost` with what the accounts' rules ask besides files.
pub struct MemorySystem {
    pub host: MemoryHost,
    /// Staged replacements, applied by `commit`.
    pub staged: Vec<(Vec<u8>, Vec<u8>, u32, Option<(u32, u32)>)>,
    /// How many commits were made (each one sync in the real host).
    pub commits: usize,
    /// Warnings and errors said, in order, as `"warning: ..."` and `"error: ..."`.
    pub said: std::cell::RefCell<Vec<std::string::String>>,
    /// The kernel's host name, once set.
    pub host_name: Option<Vec<u8>>,
    /// The byte every random byte is.
    pub random: u8,
    /// The programs the image has, and what each run does to the files: given the
    /// arguments, the output file's new contents (for `Output::File`), or `None` to fail.
    pub programs: Vec<(Vec<u8>, fn(&mut MemoryHost, &[&[u8]]) -> Option<Vec<u8>>)>,
    /// Each program run, as its arguments joined by spaces.
    pub runs: Vec<std::string::String>,
}

impl MemorySystem {
    pub fn new(host: MemoryHost) -> MemorySystem {
        MemorySystem { host, staged: Vec::new(), commits: 0, said: Default::default(), host_name: None, random: 7, programs: Vec::new(), runs: Vec::new() }
    }

    pub fn contents(&self, path: &str) -> Option<&str> {
        self.host.contents(path).map(|c| core::str::from_utf8(c).unwrap())
    }

    pub fn meta(&self, path: &str) -> Metadata {
        self.host.files[path.as_bytes()].meta
    }

    /// A directory owned by `owner` (its parents are not made).
    pub fn with_dir(mut self, path: &str, owner: (u32, u32)) -> MemorySystem {
        let meta = Metadata { kind: Kind::Directory, mode: 0o755, uid: owner.0, gid: owner.1, len: 0 };
        self.host.files.insert(path.as_bytes().to_vec(), Entry { contents: Vec::new(), meta });
        self
    }

    pub fn with_symlink(mut self, path: &str) -> MemorySystem {
        let meta = Metadata { kind: Kind::Symlink, mode: 0o777, uid: 0, gid: 0, len: 0 };
        self.host.files.insert(path.as_bytes().to_vec(), Entry { contents: Vec::new(), meta });
        self
    }

    pub fn with_file(mut self, path: &str, contents: &str) -> MemorySystem {
        self.host = self.host.with_file(path, contents.as_bytes());
        self
    }
}

impl Files for MemorySystem {
    fn read(&mut self, path: &[u8], buf: &mut [u8]) -> Result<Option<usize>, HostError> {
        self.host.read(path, buf)
    }
    fn write(&mut self, path: &[u8], contents: &[u8], mode: u32, owner: Option<(u32, u32)>) -> Result<(), HostError> {
        self.host.write(path, contents, mode, owner)
    }
    fn create_dir(&mut self, path: &[u8], mode: u32) -> Result<bool, HostError> {
        self.host.create_dir(path, mode)
    }
    fn metadata(&mut self, path: &[u8]) -> Result<Option<Metadata>, HostError> {
        self.host.metadata(path)
    }
    fn set_owner_and_mode(&mut self, path: &[u8], uid: u32, gid: u32, mode: u32) -> Result<(), HostError> {
        self.host.set_owner_and_mode(path, uid, gid, mode)
    }
    fn remove(&mut self, path: &[u8]) -> Result<bool, HostError> {
        self.host.remove(path)
    }
    fn list(&mut self, dir: &[u8], visit: &mut dyn FnMut(&[u8])) -> Result<(), HostError> {
        // As the real host: a directory that is not there cannot be listed.
        match self.host.files.get(dir) {
            Some(e) if e.meta.kind == Kind::Directory => self.host.list(dir, visit),
            _ => Err(HostError::NOT_FOUND),
        }
    }
}

impl super::batch::Batch for MemorySystem {
    fn stage(&mut self, path: &[u8], contents: &[u8], mode: u32, owner: Option<(u32, u32)>) -> Result<(), HostError> {
        self.host.call("stage", path)?;
        self.staged.retain(|staged| staged.0 != path);
        self.staged.push((path.to_vec(), contents.to_vec(), mode, owner));
        Ok(())
    }

    fn commit(&mut self) -> Result<(), HostError> {
        self.host.call("commit", b"")?;
        for (path, contents, mode, owner) in core::mem::take(&mut self.staged) {
            self.host.put(&path, &contents, mode, owner.unwrap_or((0, 0)));
        }
        self.commits += 1;
        Ok(())
    }

    fn discard(&mut self) {
        self.staged.clear();
    }
}

impl super::messages::Messages for MemorySystem {
    type Text = std::string::String;

    fn text(&self, args: core::fmt::Arguments<'_>) -> std::string::String {
        std::format!("{args}")
    }

    fn log(&self, args: core::fmt::Arguments<'_>) {
        self.said.borrow_mut().push(std::format!("{args}"));
    }

    fn warn(&self, args: core::fmt::Arguments<'_>) {
        self.said.borrow_mut().push(std::format!("warning: {args}"));
    }

    fn error(&self, args: core::fmt::Arguments<'_>) {
        self.said.borrow_mut().push(std::format!("error: {args}"));
    }

    fn reason(error: HostError) -> impl core::fmt::Display {
        error
    }

    fn shown(bytes: &[u8]) -> impl core::fmt::Display + '_ {
        std::string::String::from_utf8_lossy(bytes)
    }

    fn path_error(&self, path: &[u8], error: HostError) -> std::string::String {
        match error.errno {
            40 => std::format!("{}: a symlink in the path is refused", std::string::String::from_utf8_lossy(path)),
            _ => std::format!("{}: {error}", std::string::String::from_utf8_lossy(path)),
        }
    }

    fn under_root<'p>(&'p self, path: &'p [u8]) -> impl core::fmt::Display + 'p {
        std::string::String::from_utf8_lossy(path)
    }
}

impl From<crate::cloud_config::ConfigError> for std::string::String {
    fn from(e: crate::cloud_config::ConfigError) -> std::string::String {
        std::format!("{e}")
    }
}

impl super::random::Random for MemorySystem {
    fn fill(&mut self, buf: &mut [u8]) -> Result<(), HostError> {
        buf.fill(self.random);
        Ok(())
    }
}

impl super::uts::HostName for MemorySystem {
    fn set_host_name(&mut self, name: &[u8]) -> Result<(), HostError> {
        self.host.call("set_host_name", name)?;
        self.host_name = Some(name.to_vec());
        Ok(())
    }
}

impl super::programs::Programs for MemorySystem {
    fn has_program(&mut self, program: &[u8]) -> bool {
        self.programs.iter().any(|(name, _)| name == program)
    }

    fn run(&mut self, program: &core::ffi::CStr, args: &[&core::ffi::CStr], output: super::programs::Output<'_>) -> Result<bool, super::programs::RunError> {
        let args: Vec<&[u8]> = args.iter().map(|a| a.to_bytes()).collect();
        self.runs.push(args.iter().map(|a| std::string::String::from_utf8_lossy(a)).collect::<Vec<_>>().join(" "));
        let Some(&(_, behave)) = self.programs.iter().find(|(name, _)| name == program.to_bytes()) else {
            return Err(super::programs::RunError::Run(HostError::NOT_FOUND));
        };
        let Some(printed) = behave(&mut self.host, &args) else { return Ok(false) };
        if let super::programs::Output::File(path, mode) = output {
            self.host.put(path, &printed, mode, (0, 0));
        }
        Ok(true)
    }
}
