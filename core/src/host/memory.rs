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
    /// Mount points and their filesystems' numbers: a directory is on the filesystem of
    /// the longest mount point above it.
    pub filesystems: BTreeMap<Vec<u8>, u64>,
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

impl super::tree::Tree for MemoryHost {
    fn is_directory(&mut self, path: &[u8]) -> bool {
        self.files.get(path).is_some_and(|e| e.meta.kind == Kind::Directory)
    }

    fn remove_dir(&mut self, path: &[u8]) -> Result<bool, HostError> {
        self.call("remove_dir", path)?;
        let mut prefix = path.to_vec();
        prefix.push(b'/');
        if self.files.keys().any(|p| p.starts_with(&prefix)) {
            return Err(HostError { errno: 39 });
        }
        Ok(self.files.remove(path).is_some())
    }

    fn filesystem_of(&mut self, path: &[u8]) -> Result<Option<u64>, HostError> {
        match self.files.get(path) {
            Some(e) if e.meta.kind == Kind::Directory => {}
            _ => return Ok(None),
        }
        let under = |point: &[u8]| point == b"/" || path == point || (path.starts_with(point) && path.get(point.len()) == Some(&b'/'));
        Ok(self.filesystems.iter().filter(|(point, _)| under(point)).max_by_key(|(point, _)| point.len()).map(|(_, &fs)| fs))
    }

    fn sync_filesystem(&mut self, path: &[u8]) -> Result<(), HostError> {
        self.call("syncfs", path)
    }
}

/// A `MemoryHost` shared by a rule's host and its open directory, so that the calls of
/// both are recorded in one order.
pub struct Shared<'h>(pub &'h core::cell::RefCell<MemoryHost>);

/// One directory of a shared `MemoryHost`.
pub struct SharedDir<'h>(pub &'h core::cell::RefCell<MemoryHost>, pub &'static str);

impl Files for Shared<'_> {
    fn read(&mut self, path: &[u8], buf: &mut [u8]) -> Result<Option<usize>, HostError> {
        self.0.borrow_mut().read(path, buf)
    }
    fn write(&mut self, path: &[u8], contents: &[u8], mode: u32, owner: Option<(u32, u32)>) -> Result<(), HostError> {
        self.0.borrow_mut().write(path, contents, mode, owner)
    }
    fn create_dir(&mut self, path: &[u8], mode: u32) -> Result<bool, HostError> {
        self.0.borrow_mut().create_dir(path, mode)
    }
    fn metadata(&mut self, path: &[u8]) -> Result<Option<Metadata>, HostError> {
        self.0.borrow_mut().metadata(path)
    }
    fn set_owner_and_mode(&mut self, path: &[u8], uid: u32, gid: u32, mode: u32) -> Result<(), HostError> {
        self.0.borrow_mut().set_owner_and_mode(path, uid, gid, mode)
    }
    fn remove(&mut self, path: &[u8]) -> Result<bool, HostError> {
        self.0.borrow_mut().remove(path)
    }
    fn list(&mut self, dir: &[u8], visit: &mut dyn FnMut(&[u8])) -> Result<(), HostError> {
        self.0.borrow_mut().list(dir, visit)
    }
}

impl super::tree::Tree for Shared<'_> {
    fn is_directory(&mut self, path: &[u8]) -> bool {
        self.0.borrow_mut().is_directory(path)
    }
    fn remove_dir(&mut self, path: &[u8]) -> Result<bool, HostError> {
        self.0.borrow_mut().remove_dir(path)
    }
    fn filesystem_of(&mut self, path: &[u8]) -> Result<Option<u64>, HostError> {
        self.0.borrow_mut().filesystem_of(path)
    }
    fn sync_filesystem(&mut self, path: &[u8]) -> Result<(), HostError> {
        self.0.borrow_mut().sync_filesystem(path)
    }
}

impl super::directory::Directory for SharedDir<'_> {
    fn exists(&mut self, name: &[u8]) -> Result<bool, HostError> {
        self.0.borrow_mut().dir(self.1).exists(name)
    }
    fn read(&mut self, name: &[u8], buf: &mut [u8]) -> Result<Option<usize>, HostError> {
        self.0.borrow_mut().dir(self.1).read(name, buf)
    }
    fn write_volatile(&mut self, name: &[u8], contents: &[u8], mode: u32) -> Result<(), HostError> {
        self.0.borrow_mut().dir(self.1).write_volatile(name, contents, mode)
    }
    fn remove(&mut self, name: &[u8]) -> Result<bool, HostError> {
        self.0.borrow_mut().dir(self.1).remove(name)
    }
    fn sync(&mut self) -> Result<(), HostError> {
        self.0.borrow_mut().dir(self.1).sync()
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

/// A replacement staged: path, contents, mode and owner (uid, gid).
pub type Staged = (Vec<u8>, Vec<u8>, u32, Option<(u32, u32)>);

/// What running a program does to the files, given its arguments (see `programs`).
pub type Program = fn(&mut MemoryHost, &[&[u8]]) -> Option<Vec<u8>>;

/// A `MemoryHost` with what the accounts' rules ask besides files.
pub struct MemorySystem {
    pub host: MemoryHost,
    /// Staged replacements, applied by `commit`.
    pub staged: Vec<Staged>,
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
    pub programs: Vec<(Vec<u8>, Program)>,
    /// Each program run, as its arguments joined by spaces.
    pub runs: Vec<std::string::String>,
    /// Whether room is refused, as the kernel refuses a mapping (ENOMEM).
    pub no_room: bool,
    /// What user-data's scripts did.
    pub scripts: MemoryScripts,
}

impl MemorySystem {
    pub fn new(host: MemoryHost) -> MemorySystem {
        MemorySystem { host, staged: Vec::new(), commits: 0, said: Default::default(), host_name: None, random: 7, programs: Vec::new(), runs: Vec::new(), no_room: false, scripts: MemoryScripts::default() }
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

impl super::system::System for MemorySystem {
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

    fn set_host_name(&mut self, name: &[u8]) -> Result<(), HostError> {
        self.host.call("set_host_name", name)?;
        self.host_name = Some(name.to_vec());
        Ok(())
    }

    fn fill(&mut self, buf: &mut [u8]) -> Result<(), HostError> {
        buf.fill(self.random);
        Ok(())
    }
}

impl super::room::Room for MemorySystem {
    type Buffer = Vec<u8>;

    fn room(&mut self, len: usize, what: &str) -> Result<Vec<u8>, std::string::String> {
        match self.no_room {
            true => Err(std::format!("cannot reserve {len} bytes for {what}")),
            false => Ok(std::vec![0; len]),
        }
    }

    fn keep(&mut self, len: usize, what: &str) -> Result<&'static mut [u8], std::string::String> {
        match self.no_room {
            true => Err(std::format!("cannot reserve {len} bytes for {what}")),
            // Bounded by the decoder's budget, as the real host's mapping is.
            false => Ok(std::vec![0; len.min(1 << 20)].leak()),
        }
    }
}

impl super::messages::Messages for MemorySystem {
    type Text = std::string::String;

    fn log(&self, args: core::fmt::Arguments<'_>) {
        self.said.borrow_mut().push(std::format!("{args}"));
    }

    fn error(&self, args: core::fmt::Arguments<'_>) {
        self.said.borrow_mut().push(std::format!("error: {args}"));
    }

    fn shown(bytes: &[u8]) -> impl core::fmt::Display + '_ {
        std::string::String::from_utf8_lossy(bytes)
    }

    fn under_root<'p>(&'p self, path: &'p [u8]) -> impl core::fmt::Display + 'p {
        std::string::String::from_utf8_lossy(path)
    }
}

/// Every in-memory host's lines: the formatted text, an errno as its number.
impl super::messages::Line for std::string::String {
    fn format(args: core::fmt::Arguments<'_>) -> std::string::String {
        std::format!("{args}")
    }

    fn reason(error: HostError) -> impl core::fmt::Display {
        error
    }
}

impl From<crate::net::rtnl::RtnlError> for std::string::String {
    fn from(e: crate::net::rtnl::RtnlError) -> std::string::String {
        std::format!("{e}")
    }
}

impl From<crate::cloud_config::ConfigError> for std::string::String {
    fn from(e: crate::cloud_config::ConfigError) -> std::string::String {
        std::format!("{e}")
    }
}

// --- grow: an in-memory disk and mounted filesystem ----------------------------------

/// A disk as bytes. Each call is recorded (`"read 512+512"`, `"write 1024+512"`, `"sync"`,
/// `"resize 1 1048576+2097152"`), and each write kept, so a test can replay the first few
/// onto the old disk: the state a crash after them leaves.
#[derive(Default)]
pub struct MemoryDisk {
    pub bytes: Vec<u8>,
    pub calls: Vec<std::string::String>,
    pub writes: Vec<(u64, Vec<u8>)>,
    /// Offsets whose read fails with this error.
    pub fail_reads: BTreeMap<u64, HostError>,
}

impl MemoryDisk {
    pub fn new(bytes: Vec<u8>) -> MemoryDisk {
        MemoryDisk { bytes, ..MemoryDisk::default() }
    }

    /// The calls that wrote or synced, in order.
    pub fn changes(&self) -> Vec<&str> {
        self.calls.iter().map(|c| c.as_str()).filter(|c| !c.starts_with("read")).collect()
    }
}

impl super::block::BlockDevice for MemoryDisk {
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> Result<(), HostError> {
        self.calls.push(std::format!("read {offset}+{}", buf.len()));
        if let Some(&e) = self.fail_reads.get(&offset) {
            return Err(e);
        }
        let source = self.bytes.get(offset as usize..offset as usize + buf.len()).ok_or(HostError { errno: 5 })?;
        buf.copy_from_slice(source);
        Ok(())
    }

    fn write_at(&mut self, offset: u64, bytes: &[u8]) -> Result<(), HostError> {
        self.calls.push(std::format!("write {offset}+{}", bytes.len()));
        let dest = self.bytes.get_mut(offset as usize..offset as usize + bytes.len()).ok_or(HostError { errno: 28 })?;
        dest.copy_from_slice(bytes);
        self.writes.push((offset, bytes.to_vec()));
        Ok(())
    }

    fn sync(&mut self) -> Result<(), HostError> {
        self.calls.push("sync".into());
        Ok(())
    }

    fn resize_partition(&mut self, number: u32, start: u64, length: u64) -> Result<(), HostError> {
        self.calls.push(std::format!("resize {number} {start}+{length}"));
        Ok(())
    }
}

/// A mounted filesystem's answers, each call recorded as `"ext4_resize 1024"`.
#[derive(Default)]
pub struct MemoryMount {
    pub block_size: u64,
    /// xfs: block size, data blocks, imaxpct; `xfs_grow` sets the data blocks to what
    /// `xfs_grows_to` says (xfs may keep fewer than asked).
    pub xfs: (u32, u64, u32),
    pub xfs_grows_to: Option<u64>,
    /// The error every resize call fails with.
    pub refuse: Option<HostError>,
    pub calls: Vec<std::string::String>,
}

impl super::block::MountedFilesystem for MemoryMount {
    fn block_size(&mut self) -> Result<u64, HostError> {
        self.calls.push("block_size".into());
        Ok(self.block_size)
    }

    fn ext4_resize(&mut self, blocks: u64) -> Result<(), HostError> {
        self.calls.push(std::format!("ext4_resize {blocks}"));
        self.refuse.map_or(Ok(()), Err)
    }

    fn xfs_geometry(&mut self) -> Result<(u32, u64, u32), HostError> {
        self.calls.push("xfs_geometry".into());
        Ok(self.xfs)
    }

    fn xfs_grow(&mut self, blocks: u64, imaxpct: u32) -> Result<(), HostError> {
        self.calls.push(std::format!("xfs_grow {blocks} {imaxpct}"));
        self.refuse.map_or(Ok(()), Err)?;
        self.xfs.1 = self.xfs_grows_to.unwrap_or(blocks);
        Ok(())
    }

    fn btrfs_resize_max(&mut self) -> Result<(), HostError> {
        self.calls.push("btrfs_resize_max".into());
        self.refuse.map_or(Ok(()), Err)
    }
}

// --- network: a routing socket --------------------------------------------------------

/// A routing socket whose kernel acknowledges every change (or refuses the one numbered
/// `refuse_request` with its errno) and answers every dump with an empty NLMSG_DONE.
/// Each request is kept as sent.
#[derive(Default)]
pub struct MemoryNetlink {
    pub sent: Vec<Vec<u8>>,
    pub refuse_request: Option<(usize, i32)>,
    pub answer: Vec<u8>,
}

impl super::netlink::Netlink for MemoryNetlink {
    fn send(&mut self, request: &[u8]) -> Result<(), HostError> {
        self.sent.push(request.to_vec());
        let flags = u16::from_ne_bytes([request[6], request[7]]);
        let is_dump = flags & 0x300 == 0x300;
        let code = match self.refuse_request {
            Some((number, errno)) if number == self.sent.len() => -errno,
            _ => 0,
        };
        let (kind, payload): (u16, Vec<u8>) =
            if is_dump { (3, 0i32.to_ne_bytes().to_vec()) } else { (2, [&code.to_ne_bytes()[..], &request[..16]].concat()) };
        let mut answer = Vec::new();
        answer.extend_from_slice(&(16 + payload.len() as u32).to_ne_bytes());
        answer.extend_from_slice(&kind.to_ne_bytes());
        answer.extend_from_slice(&0u16.to_ne_bytes());
        answer.extend_from_slice(&request[8..12]);
        answer.extend_from_slice(&0u32.to_ne_bytes());
        answer.extend_from_slice(&payload);
        self.answer = answer;
        Ok(())
    }

    fn recv(&mut self, buf: &mut [u8]) -> Result<usize, HostError> {
        let len = self.answer.len();
        buf[..len].copy_from_slice(&self.answer);
        Ok(len)
    }
}

/// A DHCP server's side, scripted: each wait receives the next of `answers` 10 ms later,
/// or lets the whole timeout pass when none is left. Each packet sent is kept with the
/// time it was sent.
#[derive(Default)]
pub struct MemoryDhcp {
    pub now_ms: u64,
    pub answers: std::collections::VecDeque<Vec<u8>>,
    pub sent: Vec<(u64, Vec<u8>)>,
    pub fail_send: Option<HostError>,
}

impl super::dhcp::DhcpSocket for MemoryDhcp {
    fn send_broadcast(&mut self, packet: &[u8]) -> Result<(), HostError> {
        if let Some(e) = self.fail_send {
            return Err(e);
        }
        self.sent.push((self.now_ms, packet.to_vec()));
        Ok(())
    }

    fn receive(&mut self, timeout_ms: u64, buf: &mut [u8]) -> Result<Option<usize>, HostError> {
        match self.answers.pop_front() {
            Some(answer) => {
                self.now_ms += 10;
                buf[..answer.len()].copy_from_slice(&answer);
                Ok(Some(answer.len()))
            }
            None => {
                self.now_ms += timeout_ms;
                Ok(None)
            }
        }
    }

    fn now_ms(&mut self) -> u64 {
        self.now_ms
    }
}

// ---- imds: a metadata service of canned answers ----

use std::collections::VecDeque;
use std::string::String;

use super::clock::Clock;
use super::http::{Cause, Endpoint, Exchange, Failure, Http, Outcome};
use crate::retry::{status_is_retryable, GaveUp, Timeouts};

/// What one canned answer is: a status and a body, or a transport failure.
#[derive(Clone, Debug)]
pub enum Answer {
    Reply(u16, Vec<u8>),
    Fail(Cause),
}

/// A request as the network received it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seen {
    pub endpoint: Endpoint,
    /// `"GET /latest/meta-data/instance-id"`.
    pub line: String,
    /// Each header but `Host`, as `"Name: value"`, in order.
    pub headers: Vec<String>,
    pub host: String,
    pub body: Vec<u8>,
}

/// A network whose services answer from a table: each `"METHOD /path"` has a queue of
/// answers, the last of which repeats; anything else is a 404. Every request is
/// recorded, grouped by the `exchange_all` call (the round) that sent it.
#[derive(Default)]
pub struct MemoryNetwork {
    pub answers: BTreeMap<String, VecDeque<Answer>>,
    pub rounds: Vec<Vec<Seen>>,
    pub now: u64,
}

impl MemoryNetwork {
    pub fn new() -> MemoryNetwork {
        MemoryNetwork::default()
    }

    /// Answers `request` ("GET /path") with `status` and `body`, after the answers
    /// queued before.
    pub fn serve(mut self, request: &str, status: u16, body: &[u8]) -> MemoryNetwork {
        self.answers.entry(request.into()).or_default().push_back(Answer::Reply(status, body.to_vec()));
        self
    }

    pub fn fail(mut self, request: &str, cause: Cause) -> MemoryNetwork {
        self.answers.entry(request.into()).or_default().push_back(Answer::Fail(cause));
        self
    }

    /// Each round's request lines.
    pub fn lines(&self) -> Vec<Vec<String>> {
        self.rounds.iter().map(|round| round.iter().map(|seen| seen.line.clone()).collect()).collect()
    }

    /// Every request, in the order sent.
    pub fn seen(&self) -> Vec<&Seen> {
        self.rounds.iter().flatten().collect()
    }

    fn answer(&mut self, line: &str) -> Answer {
        match self.answers.get_mut(line) {
            Some(queue) if queue.len() > 1 => queue.pop_front().unwrap(),
            Some(queue) => queue.front().unwrap().clone(),
            None => Answer::Reply(404, b"not found".to_vec()),
        }
    }
}

/// The request's line, `Host` and other headers, and body, as written by `http::write_request`.
fn parse_request(endpoint: Endpoint, request: &[u8]) -> Seen {
    let text = String::from_utf8(request.to_vec()).expect("requests are ASCII");
    let (head, body) = text.split_once("\r\n\r\n").expect("a complete head");
    let mut lines = head.split("\r\n");
    let first = lines.next().unwrap();
    let line = first.strip_suffix(" HTTP/1.0").or_else(|| first.strip_suffix(" HTTP/1.1")).unwrap_or(first).into();
    let mut host = String::new();
    let mut headers = Vec::new();
    for header in lines {
        match header.strip_prefix("Host: ") {
            Some(name) => host = name.into(),
            None => headers.push(header.into()),
        }
    }
    Seen { endpoint, line, headers, host, body: body.as_bytes().to_vec() }
}

impl Http for MemoryNetwork {
    fn exchange_all(&mut self, endpoint: Endpoint, exchanges: &mut [Exchange<'_>], timeouts: &Timeouts) {
        let mut round = Vec::new();
        for exchange in exchanges.iter_mut() {
            let seen = parse_request(endpoint, exchange.request);
            let answer = self.answer(&seen.line);
            round.push(seen);
            exchange.outcome = match answer {
                Answer::Fail(cause) => Outcome::Failed(Failure { cause, gave_up: Some(GaveUp::new(3, timeouts.total_ms)) }),
                Answer::Reply(status, _) if status_is_retryable(status) => {
                    Outcome::Failed(Failure { cause: Cause::Status(status), gave_up: Some(GaveUp::new(3, timeouts.total_ms)) })
                }
                Answer::Reply(status, body) => {
                    let mut response = std::format!("HTTP/1.0 {status} X\r\nContent-Length: {}\r\n\r\n", body.len()).into_bytes();
                    response.extend_from_slice(&body);
                    let capacity = exchange.response.len();
                    // As Linux's exchange: an answer that overflows the buffer is too large.
                    if response.len() > capacity {
                        exchange.outcome = Outcome::Failed(Cause::Http(crate::http::Error::BodyTooLarge { limit: capacity as u32 }).into());
                        continue;
                    }
                    exchange.response[..response.len()].copy_from_slice(&response);
                    match crate::http::parse_response(&exchange.response[..response.len()], capacity, true) {
                        Ok(crate::http::Status::Complete(reply)) => Outcome::Reply {
                            status,
                            body_start: reply.body.as_ptr() as usize - exchange.response.as_ptr() as usize,
                            body_len: reply.body.len(),
                        },
                        Ok(crate::http::Status::Partial) => unreachable!("a complete answer"),
                        Err(e) => Outcome::Failed(Cause::Http(e).into()),
                    }
                }
            };
        }
        self.rounds.push(round);
    }
}

impl Clock for MemoryNetwork {
    fn realtime_secs(&mut self) -> u64 {
        self.now
    }
}

// --- local seeds: directories, labelled volumes and URLs, each a map of files. ---

/// Seeds by where they are (`dir:/var/lib/cloud/seed/nocloud`, `label:CIDATA`,
/// `url:10.0.0.2:8000/seed/`), each a map of paths (`openstack/latest/user_data`) to
/// contents; the state files kept, and how many times one was written.
#[derive(Default)]
pub struct MemorySeeds {
    pub seeds: BTreeMap<std::string::String, BTreeMap<std::string::String, Vec<u8>>>,
    pub kept: BTreeMap<Vec<u8>, Vec<u8>>,
    pub writes: usize,
}

impl MemorySeeds {
    pub fn with(mut self, seed: &str, path: &str, contents: &str) -> MemorySeeds {
        self.seeds.entry(seed.into()).or_default().insert(path.into(), contents.as_bytes().to_vec());
        self
    }
}

impl super::seed_media::SeedMedia for MemorySeeds {
    type Seed = std::string::String;
    type Text = std::string::String;

    fn is_directory(&mut self, path: &[u8]) -> bool {
        self.seeds.contains_key(&std::format!("dir:{}", std::string::String::from_utf8_lossy(path)))
    }

    fn directory(&mut self, path: &[u8]) -> Result<std::string::String, std::string::String> {
        let path = std::string::String::from_utf8_lossy(path);
        match self.is_directory(path.as_bytes()) {
            true => Ok(std::format!("dir:{path}")),
            false => Err(std::format!("{path}: {}", HostError::NOT_FOUND)),
        }
    }

    fn url(&mut self, url: &crate::http::Url<'_>, _: &[u8]) -> Result<std::string::String, std::string::String> {
        Ok(std::format!("url:{}{}", url.host, url.path))
    }

    fn labelled(&mut self, label: &[u8]) -> Option<std::string::String> {
        self.seeds.keys().find(|k| k.strip_prefix("label:").is_some_and(|l| l.as_bytes().eq_ignore_ascii_case(label))).cloned()
    }

    fn holding(&mut self, name: &[u8]) -> Option<std::string::String> {
        let name = std::string::String::from_utf8_lossy(name);
        self.seeds.iter().find(|(seed, files)| seed.starts_with("label:") && files.contains_key(name.as_ref())).map(|(seed, _)| seed.clone())
    }

    fn read(&mut self, seed: &mut std::string::String, path: &[&[u8]], out: &mut [u8]) -> Result<Option<usize>, std::string::String> {
        let path = path.iter().map(|p| std::string::String::from_utf8_lossy(p)).collect::<Vec<_>>().join("/");
        let Some(contents) = self.seeds.get(seed.as_str()).and_then(|files| files.get(&path)) else { return Ok(None) };
        out.get_mut(..contents.len()).ok_or(std::format!("{seed}/{path}: too large"))?.copy_from_slice(contents);
        Ok(Some(contents.len()))
    }

    fn describe(&self, seed: &std::string::String) -> std::string::String {
        seed.clone()
    }

    fn kept(&mut self, name: &[u8], contents: &[u8]) -> bool {
        self.kept.get(name).is_some_and(|kept| kept == contents)
    }

    fn keep(&mut self, name: &[u8], contents: &[u8]) -> Result<(), std::string::String> {
        self.writes += 1;
        self.kept.insert(name.to_vec(), contents.to_vec());
        Ok(())
    }
}

// --- a monotonic clock that moves only when paused ---

#[derive(Default)]
pub struct MemoryTimer {
    pub now: u64,
    pub pauses: Vec<u64>,
}

impl super::timer::Timer for MemoryTimer {
    fn now_ms(&mut self) -> u64 {
        self.now
    }

    fn pause_ms(&mut self, ms: u64) {
        self.pauses.push(ms);
        self.now += ms;
    }
}

// --- userdata: the scripts' log, runs and markers -------------------------------------

/// What user-data's scripts did on a `MemorySystem`: each run recorded, and ended as
/// `ends` says from its arguments.
pub struct MemoryScripts {
    /// Each `open_log`: whether it started the log afresh.
    pub logs_opened: Vec<bool>,
    /// Each run, as its arguments joined by spaces (its `env` after a `|`).
    pub runs: Vec<std::string::String>,
    /// Each file saved: its path, contents and mode.
    pub saved: Vec<(std::string::String, Vec<u8>, u32)>,
    pub ends: fn(&[&[u8]]) -> crate::script_exit::Ended,
    /// Whether the markers were opened, and those set, as `"work item"`.
    pub markers_open: bool,
    pub marked: std::collections::BTreeSet<std::string::String>,
}

impl Default for MemoryScripts {
    /// Every program exits 0.
    fn default() -> MemoryScripts {
        MemoryScripts { logs_opened: Vec::new(), runs: Vec::new(), saved: Vec::new(), ends: |_| crate::script_exit::Ended::Exited(0), markers_open: false, marked: Default::default() }
    }
}

impl super::scripts::Scripts for MemorySystem {
    const PARTS: bool = true;

    fn open_log(&mut self, fresh: bool) -> Result<(), HostError> {
        self.scripts.logs_opened.push(fresh);
        Ok(())
    }

    fn run(&mut self, _: &core::ffi::CStr, args: &[&core::ffi::CStr], env: Option<&core::ffi::CStr>) -> Result<crate::script_exit::Ended, HostError> {
        let args: Vec<&[u8]> = args.iter().map(|a| a.to_bytes()).collect();
        let mut line = args.iter().map(|a| std::string::String::from_utf8_lossy(a)).collect::<Vec<_>>().join(" ");
        if let Some(env) = env {
            line = std::format!("{line} | {}", env.to_string_lossy());
        }
        self.scripts.runs.push(line);
        Ok((self.scripts.ends)(&args))
    }

    fn save(&mut self, path: &[u8], contents: &[u8], mode: u32) -> Result<(), HostError> {
        self.scripts.saved.push((std::string::String::from_utf8_lossy(path).into_owned(), contents.to_vec(), mode));
        Ok(())
    }

    fn open_markers(&mut self) -> Result<(), std::string::String> {
        self.scripts.markers_open = true;
        Ok(())
    }

    fn is_done(&mut self, work: &str, item: Option<&str>) -> Result<bool, std::string::String> {
        assert!(self.scripts.markers_open, "markers asked before they were opened");
        Ok(self.scripts.marked.contains(&std::format!("{work} {}", item.unwrap_or(""))))
    }

    fn mark_done(&mut self, work: &str, item: Option<&str>) -> Result<(), std::string::String> {
        assert!(self.scripts.markers_open, "markers set before they were opened");
        self.scripts.marked.insert(std::format!("{work} {}", item.unwrap_or("")));
        Ok(())
    }
}

/// A `MemorySystem` that user-data is decoded against: room kept for the run, and the
/// documents `#include` URLs serve (by URL path; each GET recorded).
pub struct MemoryDecoding {
    pub system: MemorySystem,
    pub served: BTreeMap<std::string::String, Vec<u8>>,
    pub gets: Vec<std::string::String>,
}

impl MemoryDecoding {
    pub fn new(system: MemorySystem) -> MemoryDecoding {
        MemoryDecoding { system, served: BTreeMap::new(), gets: Vec::new() }
    }

    pub fn serve(mut self, path: &str, body: &[u8]) -> MemoryDecoding {
        self.served.insert(path.into(), body.to_vec());
        self
    }
}

impl super::files::HasFiles for MemoryDecoding {
    type Files = MemorySystem;

    fn files(&mut self) -> &mut MemorySystem {
        &mut self.system
    }
}

impl super::messages::Messages for MemoryDecoding {
    type Text = std::string::String;

    fn log(&self, args: core::fmt::Arguments<'_>) {
        self.system.log(args)
    }
    fn error(&self, args: core::fmt::Arguments<'_>) {
        self.system.error(args)
    }
    fn shown(bytes: &[u8]) -> impl core::fmt::Display + '_ {
        std::string::String::from_utf8_lossy(bytes)
    }
    fn under_root<'p>(&'p self, path: &'p [u8]) -> impl core::fmt::Display + 'p {
        std::string::String::from_utf8_lossy(path)
    }
}

impl super::room::Room for MemoryDecoding {
    type Buffer = Vec<u8>;

    fn room(&mut self, len: usize, what: &str) -> Result<Vec<u8>, std::string::String> {
        self.system.room(len, what)
    }

    fn keep(&mut self, len: usize, what: &str) -> Result<&'static mut [u8], std::string::String> {
        self.system.keep(len, what)
    }
}

impl super::fetch::Fetch for MemoryDecoding {
    fn get(&mut self, url: &crate::http::Url<'_>, out: &mut [u8], _: &crate::retry::Timeouts) -> Result<Option<usize>, std::string::String> {
        self.gets.push(std::format!("{}{}", url.host, url.path));
        let Some(body) = self.served.get(url.path) else { return Ok(None) };
        let room = out.len();
        out.get_mut(..body.len()).ok_or_else(|| std::format!("http://{}{}: larger than {room} bytes", url.host, url.path))?.copy_from_slice(body);
        Ok(Some(body.len()))
    }
}

// --- seeds (issue #12, third round): block devices as images in memory, seed
// directories and URLs as maps of files, for `seed::sources`. ---

/// An image in memory, as a block device.
pub struct MemoryImage(pub Vec<u8>);

impl crate::seed::Device for MemoryImage {
    fn read(&mut self, offset: u64, buf: &mut [u8]) -> Result<(), crate::seed::SeedError> {
        (&self.0[..]).read(offset, buf)
    }
}

/// Block devices by name in listing order, each an image (`None`: it cannot be opened);
/// seed directories by path and URLs (`10.0.0.2:8000/seed/meta-data`), each a map of
/// files; the state files kept. Every device opened and every URL fetched is recorded.
#[derive(Default)]
pub struct MemorySeedSources {
    pub devices: Vec<(&'static str, Option<Vec<u8>>)>,
    pub directories: BTreeMap<std::string::String, BTreeMap<std::string::String, Vec<u8>>>,
    pub urls: BTreeMap<std::string::String, Vec<u8>>,
    pub kept: BTreeMap<Vec<u8>, Vec<u8>>,
    pub opened: Vec<&'static str>,
    pub fetched: Vec<std::string::String>,
}

impl super::seed_sources::SeedSources for MemorySeedSources {
    type Device = MemoryImage;
    type Directory = std::string::String;
    type Text = std::string::String;
    const ISO9660: bool = true;
    const VFAT: bool = true;
    const UDF: bool = true;
    const NOCLOUD: bool = true;
    const CONFIGDRIVE: bool = true;

    fn block_devices(&mut self, visit: &mut dyn FnMut(&[u8])) {
        for (name, _) in &self.devices {
            visit(name.as_bytes());
        }
    }

    fn open_block_device(&mut self, name: &[u8]) -> Result<(MemoryImage, u64), HostError> {
        let (name, image) = self.devices.iter().find(|(n, _)| n.as_bytes() == name).ok_or(HostError::NOT_FOUND)?;
        self.opened.push(name);
        let image = image.clone().ok_or(HostError { errno: 13 })?;
        let len = image.len() as u64;
        Ok((MemoryImage(image), len))
    }

    fn open_directory(&mut self, path: &[u8]) -> Result<std::string::String, std::string::String> {
        let path = std::string::String::from_utf8_lossy(path).into_owned();
        match self.directories.contains_key(&path) {
            true => Ok(path),
            false => Err(std::format!("{path}: {}", HostError::NOT_FOUND)),
        }
    }

    fn read_beneath(&mut self, directory: &std::string::String, relative: &[u8], out: &mut [u8]) -> Result<Option<usize>, HostError> {
        let relative = std::string::String::from_utf8_lossy(relative);
        let Some(contents) = self.directories[directory].get(relative.as_ref()) else { return Ok(None) };
        out.get_mut(..contents.len()).ok_or(HostError { errno: 27 })?.copy_from_slice(contents);
        Ok(Some(contents.len()))
    }

    fn directory_path<'a>(&'a self, directory: &'a std::string::String) -> impl core::fmt::Display + 'a {
        directory
    }

    fn get(&mut self, address: [u8; 4], port: u16, host: &str, path: &str, out: &mut [u8]) -> Result<Option<usize>, std::string::String> {
        let [a, b, c, d] = address;
        self.fetched.push(std::format!("{a}.{b}.{c}.{d}:{port} {host}{path}"));
        let Some(contents) = self.urls.get(&std::format!("{host}{path}")) else { return Ok(None) };
        out.get_mut(..contents.len()).ok_or(std::format!("http://{host}{path}: too large"))?.copy_from_slice(contents);
        Ok(Some(contents.len()))
    }

    fn kept(&mut self, name: &[u8], contents: &[u8]) -> bool {
        self.kept.get(name).is_some_and(|kept| kept == contents)
    }

    fn keep(&mut self, name: &[u8], contents: &[u8]) -> Result<(), HostError> {
        self.kept.insert(name.to_vec(), contents.to_vec());
        Ok(())
    }
}

// ---- host (issue #12, third round): sockets whose peers follow a script ----

/// What the peer of one connection does.
#[derive(Clone, Debug)]
pub enum Peer {
    /// connect(2) fails with this error.
    Refuses(HostError),
    /// The connection never completes.
    Silent,
    /// Connects, takes the request, answers `bytes`, then closes the connection (or keeps
    /// it open, sending nothing more, unless `closes`).
    Answers { bytes: Vec<u8>, closes: bool },
}

impl Peer {
    /// An HTTP/1.0 answer with `status` and `body`, then the end of the stream.
    pub fn http(status: u16, body: &str) -> Peer {
        let bytes = std::format!("HTTP/1.0 {status} X\r\nContent-Length: {}\r\n\r\n{body}", body.len()).into_bytes();
        Peer::Answers { bytes, closes: true }
    }
}

/// Sockets whose connections each take the next peer of a script (the last one repeats),
/// on a clock that moves only while poll waits with nothing ready: peers answer at once,
/// and a silent one costs exactly the time waited for it.
#[derive(Default)]
pub struct MemorySockets {
    pub peers: VecDeque<Peer>,
    pub now: u64,
    /// Each connect, as `"connect at 300"`.
    pub calls: Vec<String>,
    /// Each request as the peers received it, in the order the connections were opened.
    pub received: Vec<Vec<u8>>,
    /// Most bytes one send or receive moves (0: any number), for answers in pieces.
    pub chunk: usize,
    connections: Vec<(Peer, usize)>,
}

impl MemorySockets {
    pub fn new(peers: impl IntoIterator<Item = Peer>) -> MemorySockets {
        MemorySockets { peers: peers.into_iter().collect(), ..MemorySockets::default() }
    }

    fn piece(&self, len: usize) -> usize {
        if self.chunk == 0 { len } else { len.min(self.chunk) }
    }
}

impl super::timer::Timer for MemorySockets {
    fn now_ms(&mut self) -> u64 {
        self.now
    }

    fn pause_ms(&mut self, ms: u64) {
        self.now += ms;
    }
}

impl super::sockets::Sockets for MemorySockets {
    type Socket = usize;

    fn connect(&mut self, _: Endpoint) -> Result<usize, HostError> {
        self.calls.push(std::format!("connect at {}", self.now));
        let peer = if self.peers.len() > 1 { self.peers.pop_front() } else { self.peers.front().cloned() };
        match peer.expect("a peer for each connection") {
            Peer::Refuses(e) => Err(e),
            peer => {
                self.connections.push((peer, 0));
                self.received.push(Vec::new());
                Ok(self.connections.len() - 1)
            }
        }
    }

    fn has_route(&mut self, _: Endpoint) -> bool {
        true
    }

    fn connect_result(&mut self, _: &usize) -> Result<(), HostError> {
        Ok(())
    }

    fn send(&mut self, socket: &usize, bytes: &[u8]) -> Result<usize, HostError> {
        let n = self.piece(bytes.len());
        self.received[*socket].extend_from_slice(&bytes[..n]);
        Ok(n)
    }

    fn receive(&mut self, socket: &usize, buf: &mut [u8]) -> Result<usize, HostError> {
        let n = self.piece(buf.len());
        let (peer, sent) = &mut self.connections[*socket];
        match peer {
            Peer::Answers { bytes, closes } => {
                let n = n.min(bytes.len() - *sent);
                if n == 0 && !*closes {
                    return Err(HostError::WOULD_BLOCK);
                }
                buf[..n].copy_from_slice(&bytes[*sent..*sent + n]);
                *sent += n;
                Ok(n)
            }
            _ => Err(HostError::WOULD_BLOCK),
        }
    }

    fn poll(&mut self, sockets: &[(&usize, super::sockets::Interest)], ready: &mut [bool], timeout_ms: u32) -> Result<(), HostError> {
        for ((socket, interest), ready) in sockets.iter().zip(ready.iter_mut()) {
            *ready = match (&self.connections[**socket], interest) {
                ((Peer::Answers { .. }, _), super::sockets::Interest::Write) => true,
                ((Peer::Answers { bytes, closes }, sent), super::sockets::Interest::Read) => *sent < bytes.len() || *closes,
                _ => false,
            };
        }
        if !ready.contains(&true) {
            self.now += u64::from(timeout_ms);
        }
        Ok(())
    }
}

// ---- host (issue #12, third round): grow's disks, images and mount points ----

/// The kernel's side of the disks: the size it gives each device by name (`vda`,
/// `vda1`), which BLKPG changes, and each BLKPG asked, as `"vda: resize 1 1048576+2097152"`.
#[derive(Default)]
pub struct Kernel {
    pub sizes: BTreeMap<String, u64>,
    pub told: Vec<String>,
}

/// `MemorySystem`'s files and messages, with disks and image files (each a `MemoryDisk`
/// by its name or path), the logical sector size of every disk, and mount points.
pub struct MemoryDevices {
    pub system: MemorySystem,
    pub kernel: std::rc::Rc<core::cell::RefCell<Kernel>>,
    pub disks: BTreeMap<String, std::rc::Rc<core::cell::RefCell<MemoryDisk>>>,
    pub sector_size: u32,
    pub mounts: BTreeMap<String, MemoryMount>,
    /// Each device opened and size asked, in order: `"open vda"`, `"size vda1"`, `"mount /"`.
    pub calls: Vec<String>,
}

impl MemoryDevices {
    pub fn new(system: MemorySystem) -> MemoryDevices {
        MemoryDevices { system, kernel: Default::default(), disks: BTreeMap::new(), sector_size: 512, mounts: BTreeMap::new(), calls: Vec::new() }
    }

    /// A disk (or, by its path, an image file) of these bytes; the kernel gives it their length.
    pub fn with_disk(self, name: &str, bytes: Vec<u8>) -> MemoryDevices {
        let mut devices = self.with_device(name, bytes.len() as u64);
        devices.disks.insert(name.into(), std::rc::Rc::new(core::cell::RefCell::new(MemoryDisk::new(bytes))));
        devices
    }

    /// A device the kernel gives `size` bytes (a partition), with no bytes of its own.
    pub fn with_device(self, name: &str, size: u64) -> MemoryDevices {
        self.kernel.borrow_mut().sizes.insert(name.into(), size);
        self
    }

    pub fn with_mount(mut self, path: &str, mount: MemoryMount) -> MemoryDevices {
        self.mounts.insert(path.into(), mount);
        self
    }

    pub fn disk(&self, name: &str) -> std::cell::Ref<'_, MemoryDisk> {
        self.disks[name].borrow()
    }

    fn open(&mut self, name: &str) -> Result<DeviceOpen, HostError> {
        self.calls.push(std::format!("open {name}"));
        let disk = self.disks.get(name).cloned();
        match (disk, self.kernel.borrow().sizes.contains_key(name)) {
            (disk, true) => Ok(DeviceOpen { name: name.into(), disk, kernel: self.kernel.clone() }),
            (_, false) => Err(HostError::NOT_FOUND),
        }
    }
}

/// A device `MemoryDevices` opened: its bytes, when it has any, and the kernel it tells.
pub struct DeviceOpen {
    pub name: String,
    disk: Option<std::rc::Rc<core::cell::RefCell<MemoryDisk>>>,
    kernel: std::rc::Rc<core::cell::RefCell<Kernel>>,
}

impl DeviceOpen {
    fn bytes(&self) -> Result<std::cell::RefMut<'_, MemoryDisk>, HostError> {
        self.disk.as_ref().map(|disk| disk.borrow_mut()).ok_or(HostError { errno: 5 })
    }
}

impl super::block::BlockDevice for DeviceOpen {
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> Result<(), HostError> {
        self.bytes()?.read_at(offset, buf)
    }

    fn write_at(&mut self, offset: u64, bytes: &[u8]) -> Result<(), HostError> {
        self.bytes()?.write_at(offset, bytes)
    }

    fn sync(&mut self) -> Result<(), HostError> {
        self.bytes()?.sync()
    }

    fn resize_partition(&mut self, number: u32, start: u64, length: u64) -> Result<(), HostError> {
        let mut kernel = self.kernel.borrow_mut();
        kernel.told.push(std::format!("{}: resize {number} {start}+{length}", self.name));
        kernel.sizes.insert(std::format!("{}{number}", self.name), length);
        Ok(())
    }
}

impl super::devices::Devices for MemoryDevices {
    type Disk = DeviceOpen;
    type Mount = MemoryMount;

    fn open_device(&mut self, name: &[u8]) -> Result<DeviceOpen, HostError> {
        self.open(core::str::from_utf8(name).unwrap())
    }

    fn open_image(&mut self, path: &[u8]) -> Result<(DeviceOpen, u64), HostError> {
        let image = self.open(core::str::from_utf8(path).unwrap())?;
        let len = image.bytes()?.bytes.len() as u64;
        Ok((image, len))
    }

    fn sector_size(&mut self, disk: &mut DeviceOpen) -> Result<u32, HostError> {
        self.calls.push(std::format!("sector size {}", disk.name));
        Ok(self.sector_size)
    }

    fn size_bytes(&mut self, disk: &mut DeviceOpen) -> Result<u64, HostError> {
        self.calls.push(std::format!("size {}", disk.name));
        Ok(self.kernel.borrow().sizes[&disk.name])
    }

    fn open_mount(&mut self, path: &[u8]) -> Result<MemoryMount, HostError> {
        let path = core::str::from_utf8(path).unwrap();
        self.calls.push(std::format!("mount {path}"));
        self.mounts.remove(path).ok_or(HostError::NOT_FOUND)
    }
}

impl super::files::HasFiles for MemoryDevices {
    type Files = MemorySystem;

    fn files(&mut self) -> &mut MemorySystem {
        &mut self.system
    }
}

impl super::room::Room for MemoryDevices {
    type Buffer = Vec<u8>;

    fn room(&mut self, len: usize, what: &str) -> Result<Vec<u8>, String> {
        self.system.room(len, what)
    }

    fn keep(&mut self, len: usize, what: &str) -> Result<&'static mut [u8], String> {
        self.system.keep(len, what)
    }
}

impl super::messages::Messages for MemoryDevices {
    type Text = String;

    fn log(&self, args: core::fmt::Arguments<'_>) {
        self.system.log(args)
    }
    fn error(&self, args: core::fmt::Arguments<'_>) {
        self.system.error(args)
    }
    fn shown(bytes: &[u8]) -> impl core::fmt::Display + '_ {
        MemorySystem::shown(bytes)
    }
    fn under_root<'p>(&'p self, path: &'p [u8]) -> impl core::fmt::Display + 'p {
        self.system.under_root(path)
    }
}

// --- config: cloud-config's system keys (symlinks followed, logged commands, mounts, power) ---
// `MemorySystem` again: a symlink's contents are its target; a command is one of its
// `programs` (a script is `/bin/sh NAME`); a mount point is mounted when it is one of the
// `MemoryHost`'s filesystems (a mount fails as the source's `fail` says); each command,
// mount and power call is one of its `runs`.

impl super::links::Links for MemorySystem {
    fn followed(&mut self, path: &[u8]) -> Option<Kind> {
        let mut path = path.to_vec();
        for _ in 0..8 {
            let entry = self.host.files.get(&path)?;
            if entry.meta.kind != Kind::Symlink {
                return Some(entry.meta.kind);
            }
            path = entry.contents.clone();
        }
        None
    }

    fn read_link(&mut self, path: &[u8], buf: &mut [u8]) -> Result<Option<usize>, HostError> {
        self.host.call("read_link", path)?;
        match self.host.files.get(path) {
            Some(entry) if entry.meta.kind == Kind::Symlink => {
                buf[..entry.contents.len()].copy_from_slice(&entry.contents);
                Ok(Some(entry.contents.len()))
            }
            _ => Ok(None),
        }
    }

    fn replace_symlink(&mut self, target: &[u8], path: &[u8]) -> Result<(), HostError> {
        self.host.call("replace_symlink", path)?;
        let meta = Metadata { kind: Kind::Symlink, mode: 0o777, uid: 0, gid: 0, len: target.len() as u64 };
        self.host.files.insert(path.to_vec(), Entry { contents: target.to_vec(), meta });
        Ok(())
    }

    fn create_symlink(&mut self, target: &[u8], path: &[u8]) -> Result<bool, HostError> {
        self.host.call("create_symlink", path)?;
        if self.host.files.contains_key(path) {
            return Ok(false);
        }
        let meta = Metadata { kind: Kind::Symlink, mode: 0o777, uid: 0, gid: 0, len: target.len() as u64 };
        self.host.files.insert(path.to_vec(), Entry { contents: target.to_vec(), meta });
        Ok(true)
    }
}

impl super::commands::Commands for MemorySystem {
    fn has_program(&mut self, program: &[u8]) -> bool {
        self.programs.iter().any(|(name, _)| name == program)
    }

    fn run(&mut self, program: &core::ffi::CStr, args: &[&core::ffi::CStr], output: super::commands::Output<'_>) -> Result<bool, super::commands::RunError> {
        let args: Vec<&[u8]> = args.iter().map(|a| a.to_bytes()).collect();
        self.runs.push(args.iter().map(|a| std::string::String::from_utf8_lossy(a)).collect::<Vec<_>>().join(" "));
        let Some(&(_, behave)) = self.programs.iter().find(|(name, _)| name == program.to_bytes()) else {
            return Err(super::commands::RunError::Run(HostError::NOT_FOUND));
        };
        let Some(printed) = behave(&mut self.host, &args) else { return Ok(false) };
        if let super::commands::Output::File(path, mode) = output {
            self.host.put(path, &printed, mode, (0, 0));
        }
        Ok(true)
    }

    fn run_logged(&mut self, program: &core::ffi::CStr, args: &[&core::ffi::CStr], what: &str) -> Result<(), std::string::String> {
        match super::commands::Commands::run(self, program, args, super::commands::Output::StandardError) {
            Ok(true) => Ok(()),
            Ok(false) => Err(std::format!("{what} exited with status 1 (output in user-data.log)")),
            Err(_) => Err(std::format!("cannot run {what}: no such program")),
        }
    }

    fn run_script(&mut self, name: &[u8], script: &[u8]) -> Result<bool, std::string::String> {
        let path = [&b"/scripts/"[..], name].concat();
        self.host.put(&path, script, 0o700, (0, 0));
        let name = std::ffi::CString::new(name).unwrap();
        match super::commands::Commands::run(self, c"/bin/sh", &[c"sh", &name], super::commands::Output::StandardError) {
            Ok(exited_0) => Ok(exited_0),
            Err(_) => Err(std::format!("cannot run {}", name.to_string_lossy())),
        }
    }

    fn sync_all(&mut self) {
        self.runs.push("sync".into());
    }

    fn sleep_ms(&mut self, ms: u32) {
        self.runs.push(std::format!("sleep {ms}"));
    }

    fn reboot(&mut self, mode: crate::cloud_config::PowerMode) -> HostError {
        self.runs.push(std::format!("reboot(2) {mode:?}"));
        HostError { errno: 1 }
    }
}

impl super::mounts::Mounts for MemorySystem {
    type Point = Vec<u8>;

    fn open_mount_point(&mut self, path: &[u8]) -> Result<(Vec<u8>, bool), std::string::String> {
        use super::messages::Messages;
        self.host.create_dir(path, 0o755).map_err(|e| self.path_error(path, e))?;
        Ok((path.to_vec(), self.host.filesystems.contains_key(path)))
    }

    fn mount(&mut self, source: super::mounts::Source<'_>, point: &Vec<u8>, fs_type: &[u8], flags: u32, data: &[u8]) -> Result<(), HostError> {
        let (super::mounts::Source::Path(source) | super::mounts::Source::Name(source)) = source;
        let data = std::string::String::from_utf8_lossy(data);
        let said = std::format!("mount {} {} {} {flags:#x} {data}", std::string::String::from_utf8_lossy(source), std::string::String::from_utf8_lossy(point), std::string::String::from_utf8_lossy(fs_type));
        self.runs.push(said);
        self.host.call("mount", source)?;
        let next = self.host.filesystems.len() as u64 + 100;
        self.host.filesystems.insert(point.clone(), next);
        Ok(())
    }
}

impl super::chosen_files::ChosenFiles for MemorySystem {
    type Dir = Vec<u8>;

    fn create_dir_no_symlinks(&mut self, path: &[u8]) -> Result<Vec<u8>, std::string::String> {
        use super::messages::Messages;
        for end in (1..=path.len()).filter(|&end| end == path.len() || path[end] == b'/') {
            let prefix = &path[..end];
            match self.host.files.get(prefix).map(|e| e.meta.kind) {
                Some(Kind::Symlink) => return Err(self.path_error(path, HostError { errno: 40 })),
                Some(_) => {}
                None => drop(self.host.create_dir(prefix, 0o755)),
            }
        }
        Ok(path.to_vec())
    }

    fn size(&mut self, dir: &Vec<u8>, name: &[u8]) -> Result<Option<u64>, HostError> {
        Ok(self.host.files.get(&chosen_path(dir, name)).map(|e| e.meta.len))
    }

    fn read(&mut self, dir: &Vec<u8>, name: &[u8], buf: &mut [u8]) -> Result<Option<usize>, HostError> {
        self.host.read(&chosen_path(dir, name), buf)
    }

    fn write(&mut self, dir: &Vec<u8>, name: &[u8], contents: &[u8], mode: u32, owner: (u32, u32)) -> Result<(), HostError> {
        self.host.write(&chosen_path(dir, name), contents, mode, Some(owner))
    }
}

/// `dir/name`, the root's entries as `/name`.
fn chosen_path(dir: &[u8], name: &[u8]) -> Vec<u8> {
    [dir.strip_suffix(b"/").unwrap_or(dir), b"/", name].concat()
}

// --- phases (issue #12, third round): a run of phases over TINY_CLOUD_VAR in a
// `MemoryHost`, a metadata service of fixed answers, and actions that only record ---

/// An item the memory service could not give.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryFetchError(pub crate::provider::Item);

impl core::fmt::Display for MemoryFetchError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}: timed out", self.0.key())
    }
}

/// A run of phases: every call recorded in `said` (the log and the host's records, in
/// order), each round of fetches in `rounds`.
pub struct MemoryPhases<'h> {
    pub var: MemoryDir<'h>,
    /// The service's answers (an item it lacks is absent); `failing` times out.
    pub service: Vec<(crate::provider::Item, Vec<u8>)>,
    pub failing: Vec<crate::provider::Item>,
    pub fetched: Vec<(crate::provider::Item, Vec<u8>)>,
    pub rounds: Vec<Vec<crate::provider::Item>>,
    /// What the DMI says of the saved instance-id.
    pub dmi: Option<bool>,
    /// Actions that fail; `bootstrap_complete` sets the marker in `var`.
    pub failing_actions: Vec<crate::phase::Action>,
    pub ran: Vec<crate::phase::Action>,
    pub progress: crate::instance::Progress,
    /// What the earlier phases of this boot recorded failing (`stage_started`).
    pub earlier: crate::phase::Failed,
    pub said: Vec<std::string::String>,
    /// Whether an earlier phase of the boot kept its metadata; how often it was read.
    pub kept: bool,
    pub kept_loaded: usize,
    pub kept_for_later: usize,
    pub later_boot: bool,
}

impl<'h> MemoryPhases<'h> {
    pub fn new(var: MemoryDir<'h>) -> MemoryPhases<'h> {
        MemoryPhases {
            var,
            service: Vec::new(),
            failing: Vec::new(),
            fetched: Vec::new(),
            rounds: Vec::new(),
            dmi: None,
            failing_actions: Vec::new(),
            ran: Vec::new(),
            progress: Default::default(),
            earlier: Default::default(),
            said: Vec::new(),
            kept: false,
            kept_loaded: 0,
            kept_for_later: 0,
            later_boot: false,
        }
    }
}

impl super::actions::Actions for MemoryPhases<'_> {
    type Text = std::string::String;

    fn run(&mut self, action: crate::phase::Action) -> Result<std::string::String, std::string::String> {
        self.ran.push(action);
        if self.failing_actions.contains(&action) {
            return Err("refused".into());
        }
        if action == crate::phase::Action::BootstrapComplete {
            self.var.write_volatile(crate::state_files::MARKER, b"", 0o600).map_err(|e| std::format!("{e:?}"))?;
        }
        Ok("done".into())
    }

    fn progress(&mut self) -> &mut crate::instance::Progress {
        &mut self.progress
    }

    fn log(&mut self, args: core::fmt::Arguments<'_>) {
        self.said.push(std::format!("{args}"));
    }

    fn now_ms(&mut self) -> u64 {
        0
    }

    fn requests(&self) -> u32 {
        self.rounds.len() as u32
    }

    fn crash_point(&mut self) {}
}

impl<'h> super::phases::Phases for MemoryPhases<'h> {
    type FetchError = MemoryFetchError;
    type Var = MemoryDir<'h>;
    type Start = Self;

    fn var(&mut self) -> &mut MemoryDir<'h> {
        &mut self.var
    }

    fn os_error(&self, what: &str, error: HostError) -> std::string::String {
        std::format!("{what}: errno {}", error.errno)
    }

    fn plan(&mut self, phase: crate::phase::Phase) -> Result<crate::phase::Plan, std::string::String> {
        phase.plan(None, "").map_err(|e| std::format!("{e}"))
    }

    /// One round for the items not fetched yet; the first failing item fails it, after
    /// the others, and what the service has of it, arrived.
    fn fetch(&mut self, items: &[crate::provider::Item]) -> Result<(), MemoryFetchError> {
        let wanted: Vec<_> = items.iter().copied().filter(|item| !self.fetched.iter().any(|(got, _)| got == item)).collect();
        if wanted.is_empty() {
            return Ok(());
        }
        self.rounds.push(wanted.clone());
        let mut failed = None;
        for item in wanted {
            // A failing item keeps what arrived of it (some of the keys).
            if self.failing.contains(&item) {
                failed = failed.or(Some(MemoryFetchError(item)));
            }
            let value = self.service.iter().find(|(has, _)| *has == item).map(|(_, value)| value.clone());
            self.fetched.push((item, value.unwrap_or_default()));
        }
        failed.map_or(Ok(()), Err)
    }

    fn failed_item(error: &MemoryFetchError) -> Option<crate::provider::Item> {
        Some(error.0)
    }

    fn fetched(&self, item: crate::provider::Item) -> Option<&[u8]> {
        self.fetched.iter().find(|(got, _)| *got == item).map(|(_, value)| value.as_slice()).filter(|value| !value.is_empty())
    }

    fn dmi_same_instance(&mut self, _: &[u8]) -> Option<bool> {
        self.dmi
    }

    fn load_kept(&mut self) -> bool {
        self.kept_loaded += 1;
        self.kept
    }

    fn keep_for_later(&mut self) {
        self.kept_for_later += 1;
    }

    fn later_boot(&mut self) {
        self.later_boot = true;
    }

    fn start(&mut self) -> &mut Self {
        self
    }

    fn report_failure(&mut self, reason: &std::string::String) {
        self.said.push(std::format!("reported failure: {reason}"));
    }

    fn report_ready(&mut self, instance_id: &[u8]) {
        self.said.push(std::format!("reported ready: {}", std::string::String::from_utf8_lossy(instance_id)));
    }

    fn settle_markers(&mut self) -> Result<(), std::string::String> {
        self.said.push("settled".into());
        Ok(())
    }
}

// --- phases (the run before its first phase, and each phase's records): `MemoryPhases` ---

impl crate::phases_start::Starting for MemoryPhases<'_> {
    type Text = std::string::String;

    fn log(&mut self, args: core::fmt::Arguments<'_>) {
        self.said.push(std::format!("{args}"));
    }

    fn stage_started(&mut self, phase: crate::phase::Phase, _: Option<crate::config::Cloud>) -> crate::phase::Failed {
        self.said.push(std::format!("started {}", phase.name()));
        self.earlier
    }

    fn stage_finished(&mut self, phase: crate::phase::Phase, _: Option<crate::config::Cloud>, failure: Option<&std::string::String>) {
        self.said.push(std::format!("finished {}: {failure:?}", phase.name()));
    }
}

// --- actions: TINY_CLOUD_VAR's saved copies, over a `MemoryDir` (each write recorded) ---

impl super::saved_copies::SavedCopies for MemoryDir<'_> {
    fn file_mode(&mut self, name: &[u8]) -> Option<u32> {
        let path = self.child(name);
        self.host.files.get(&path).filter(|e| e.meta.kind == Kind::File).map(|e| e.meta.mode)
    }

    fn has_contents(&mut self, name: &[u8], contents: &[u8]) -> bool {
        let path = self.child(name);
        self.host.files.get(&path).is_some_and(|e| e.contents == contents)
    }

    fn write_durably(&mut self, name: &[u8], contents: &[u8], mode: u32) -> Result<(), HostError> {
        let path = self.child(name);
        self.host.call("write_durably", &path)?;
        self.host.put(&path, contents, mode, (0, 0));
        Ok(())
    }
}
