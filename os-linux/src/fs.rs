//! Files and directories. Writes are atomic (a temporary file, fsync, rename(2)), so a
//! crash leaves either the old file or the complete new one. The rename itself becomes
//! durable with the directory: callers that need it durable before they go on call
//! `sync_all` once, rather than paying an fsync of the directory per file. Everything done
//! inside a directory goes through a directory descriptor and `*at` calls with
//! `O_NOFOLLOW`, so a symlink planted in a user's home cannot redirect a write or a read.

use core::ffi::CStr;

use rustix::fd::{AsFd, OwnedFd};
use rustix::fs::{AtFlags, Mode, OFlags, ResolveFlags, CWD};
use rustix::io::Errno;

use crate::nul_terminated::NulTerminated;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadError {
    Io(Errno),
    /// The file holds more than the caller's buffer, whose length is the limit.
    TooLarge { limit: usize },
}

/// What lstat(2) says about a directory entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Metadata {
    pub mode: u32,
    pub uid: u32,
    pub gid: u32,
    pub size: u64,
    /// The filesystem it is on: a directory on another one than its parent is a mount point.
    pub dev: u64,
}

impl From<&rustix::fs::Stat> for Metadata {
    fn from(st: &rustix::fs::Stat) -> Self {
        Metadata { mode: st.st_mode, uid: st.st_uid, gid: st.st_gid, size: st.st_size as u64, dev: st.st_dev }
    }
}

impl Metadata {
    pub fn is_dir(&self) -> bool {
        self.mode & 0o170000 == 0o040000
    }
    pub fn is_symlink(&self) -> bool {
        self.mode & 0o170000 == 0o120000
    }
    pub fn is_file(&self) -> bool {
        self.mode & 0o170000 == 0o100000
    }
    pub fn permissions(&self) -> u32 {
        self.mode & 0o7777
    }
}

/// An open directory, the anchor of every `*at` call.
pub struct Dir(OwnedFd);

/// How a path beneath a root directory may be resolved. Either way `..` and absolute
/// symlinks are taken relative to the root, as if it were `/` (RESOLVE_IN_ROOT), so
/// nothing outside it is reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resolve {
    /// Symlinks are followed inside the root: an image's own `/var/run -> /run`.
    InRoot,
    /// No component may be a symlink (RESOLVE_NO_SYMLINKS): paths user-data chose.
    NoSymlinks,
}

impl Dir {
    /// open(2) with O_DIRECTORY, following symlinks in `path` (system directories such
    /// as /var/lib may be links).
    pub fn open(path: &CStr) -> Result<Dir, Errno> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        rustix::fs::openat(CWD, path, flags, Mode::empty()).map(Dir)
    }

    /// The directory at `path` beneath this one (see `Resolve`): openat2(2) with
    /// RESOLVE_IN_ROOT, and RESOLVE_NO_SYMLINKS for `Resolve::NoSymlinks`. `path` may
    /// start with `/`; empty is this directory itself.
    pub fn open_beneath(&self, path: &[u8], resolve: Resolve) -> Result<Dir, Errno> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        self.open_path_beneath(path, flags, resolve).map(Dir)
    }

    /// The regular file at `path` beneath this directory, for reading (see `open_beneath`).
    pub fn open_file_beneath(&self, path: &[u8], resolve: Resolve) -> Result<OwnedFd, Errno> {
        self.open_path_beneath(path, OFlags::RDONLY | OFlags::CLOEXEC, resolve)
    }

    /// fstat(2) of what `path` beneath this directory names (see `open_beneath`), opened
    /// with O_PATH so that any kind of file is reached (a socket, a program that is only
    /// executable), its final symlink followed inside the root; `Ok(None)` when it does
    /// not exist. Where openat2(2) is missing, O_PATH with O_NOFOLLOW opens a final
    /// symlink itself: refused (ELOOP), as that walk refuses every other symlink.
    pub fn metadata_beneath(&self, path: &[u8], resolve: Resolve) -> Result<Option<Metadata>, Errno> {
        match self.open_path_beneath(path, OFlags::PATH | OFlags::CLOEXEC, resolve) {
            Ok(fd) => match Metadata::from(&rustix::fs::fstat(&fd)?) {
                found if found.is_symlink() => Err(Errno::LOOP),
                found => Ok(Some(found)),
            },
            Err(Errno::NOENT) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The directory at `path` beneath this one, created (with `mode`) where missing,
    /// each created component opened with O_NOFOLLOW.
    pub fn create_beneath(&self, path: &[u8], mode: u32, resolve: Resolve) -> Result<Dir, Errno> {
        match self.open_beneath(path, resolve) {
            Err(Errno::NOENT) => {}
            other => return other,
        }
        let trimmed = trim_slashes(path);
        let (parent, name) = match trimmed.iter().rposition(|&b| b == b'/') {
            Some(i) => (&trimmed[..i], &trimmed[i + 1..]),
            None => (&b""[..], trimmed),
        };
        let parent = self.create_beneath(parent, mode, resolve)?;
        parent.create_dir(name, mode)?;
        parent.open_child(name)
    }

    fn open_path_beneath(&self, path: &[u8], flags: OFlags, resolve: Resolve) -> Result<OwnedFd, Errno> {
        let relative = trim_slashes(path);
        let relative = if relative.is_empty() { &b"."[..] } else { relative };
        let c_path = NulTerminated::from_parts(&[relative]).map_err(|_| Errno::NAMETOOLONG)?;
        let how = match resolve {
            Resolve::InRoot => ResolveFlags::IN_ROOT | ResolveFlags::NO_MAGICLINKS,
            Resolve::NoSymlinks => ResolveFlags::IN_ROOT | ResolveFlags::NO_SYMLINKS,
        };
        match rustix::fs::openat2(&self.0, c_path.as_cstr(), flags, Mode::empty(), how) {
            // Kernels before 5.6 have no openat2(2): walk the path, refusing every symlink.
            Err(Errno::NOSYS) => self.open_walking(relative, flags),
            other => other,
        }
    }

    /// openat(2) one component at a time with O_NOFOLLOW, `..` refused: what
    /// `open_beneath` does where openat2(2) is missing, stricter (no symlink at all).
    fn open_walking(&self, path: &[u8], flags: OFlags) -> Result<OwnedFd, Errno> {
        let (parents, last) = match path.iter().rposition(|&b| b == b'/') {
            Some(i) => (&path[..i], &path[i + 1..]),
            None => (&b""[..], path),
        };
        let mut dir = Dir(rustix::io::fcntl_dupfd_cloexec(&self.0, 0)?);
        for name in parents.split(|&b| b == b'/').filter(|n| !n.is_empty() && *n != b".") {
            dir = dir.open_child(name)?;
        }
        match last {
            b"." => Ok(dir.0),
            _ => rustix::fs::openat(&dir.0, c_name(last)?.as_cstr(), flags | OFlags::NOFOLLOW, Mode::empty()),
        }
    }

    /// openat(2) of the subdirectory `name`, refusing a symlink there (ELOOP or ENOTDIR).
    pub fn open_child(&self, name: &[u8]) -> Result<Dir, Errno> {
        let name = c_name(name)?;
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        rustix::fs::openat(&self.0, name.as_cstr(), flags, Mode::empty()).map(Dir)
    }

    /// mkdirat(2); `Ok(false)` when `name` already exists (whatever it is).
    pub fn create_dir(&self, name: &[u8], mode: u32) -> Result<bool, Errno> {
        let name = c_name(name)?;
        match rustix::fs::mkdirat(&self.0, name.as_cstr(), Mode::from_raw_mode(mode)) {
            Ok(()) => Ok(true),
            Err(Errno::EXIST) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// fstatat(2) with AT_SYMLINK_NOFOLLOW; `Ok(None)` when `name` does not exist.
    pub fn metadata(&self, name: &[u8]) -> Result<Option<Metadata>, Errno> {
        let name = c_name(name)?;
        match rustix::fs::statat(&self.0, name.as_cstr(), AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => Ok(Some(Metadata::from(&st))),
            Err(Errno::NOENT) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Reads the whole regular file `name` into `buf` without following a symlink;
    /// `Ok(None)` when it does not exist.
    pub fn read(&self, name: &[u8], buf: &mut [u8]) -> Result<Option<usize>, ReadError> {
        let name = c_name(name).map_err(ReadError::Io)?;
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        match rustix::fs::openat(&self.0, name.as_cstr(), flags, Mode::empty()) {
            Ok(fd) => read_to_end(&fd, buf).map(Some),
            Err(Errno::NOENT) => Ok(None),
            Err(e) => Err(ReadError::Io(e)),
        }
    }

    /// Reads the start of the regular file `name`, at most `buf.len()` bytes, without
    /// following a symlink; `Ok(None)` when it does not exist.
    pub fn read_start(&self, name: &[u8], buf: &mut [u8]) -> Result<Option<usize>, Errno> {
        let name = c_name(name)?;
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = match rustix::fs::openat(&self.0, name.as_cstr(), flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => return Ok(None),
            Err(e) => return Err(e),
        };
        let mut filled = 0;
        while filled < buf.len() {
            match retry_intr(|| rustix::io::read(&fd, &mut buf[filled..]))? {
                0 => break,
                n => filled += n,
            }
        }
        Ok(Some(filled))
    }

    /// Replaces `name` with `contents` atomically: the file is complete, owned and
    /// moded before it takes the name, and a symlink at `name` is replaced, never followed.
    pub fn write_atomic(
        &self,
        name: &[u8],
        contents: &[u8],
        mode: u32,
        owner: Option<(u32, u32)>,
    ) -> Result<(), Errno> {
        self.replace(name, contents, mode, owner, true)
    }

    /// `write_atomic` without the fsync(2): for files on a tmpfs (`/run`), which a crash
    /// loses anyway, and for scripts a bootstrap writes afresh each time it runs (the sync
    /// before the completion marker makes them durable with the rest).
    pub fn write_volatile(&self, name: &[u8], contents: &[u8], mode: u32) -> Result<(), Errno> {
        self.replace(name, contents, mode, None, false)
    }

    fn replace(&self, name: &[u8], contents: &[u8], mode: u32, owner: Option<(u32, u32)>, durable: bool) -> Result<(), Errno> {
        let final_name = c_name(name)?;
        let temp_name = NulTerminated::from_parts(&[b".", name, b".wisp-new"]).map_err(|_| Errno::NAMETOOLONG)?;
        let result = self.write_temp(temp_name.as_cstr(), contents, mode, owner, durable).and_then(|()| {
            rustix::fs::renameat(&self.0, temp_name.as_cstr(), &self.0, final_name.as_cstr())
        });
        if result.is_err() {
            let _ = rustix::fs::unlinkat(&self.0, temp_name.as_cstr(), AtFlags::empty());
        }
        result
    }

    fn write_temp(
        &self,
        temp_name: &CStr,
        contents: &[u8],
        mode: u32,
        owner: Option<(u32, u32)>,
        durable: bool,
    ) -> Result<(), Errno> {
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::TRUNC | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(&self.0, temp_name, flags, Mode::from_raw_mode(0o600))?;
        crate::stdio::write_all(fd.as_fd(), contents)?;
        if let Some((uid, gid)) = owner {
            set_owner(&fd, uid, gid)?;
        }
        // After fchown, which clears set-id bits; and regardless of the umask.
        rustix::fs::fchmod(&fd, Mode::from_raw_mode(mode))?;
        if durable {
            rustix::fs::fsync(&fd)?;
        }
        Ok(())
    }

    /// Opens `name` for appending, creating it with `mode`; never through a symlink.
    pub fn open_append(&self, name: &[u8], mode: u32) -> Result<OwnedFd, Errno> {
        let name = c_name(name)?;
        let flags = OFlags::WRONLY | OFlags::APPEND | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        rustix::fs::openat(&self.0, name.as_cstr(), flags, Mode::from_raw_mode(mode))
    }

    /// Creates or truncates `name` for writing; never through a symlink.
    pub fn create_truncate(&self, name: &[u8], mode: u32) -> Result<OwnedFd, Errno> {
        let name = c_name(name)?;
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::TRUNC | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        rustix::fs::openat(&self.0, name.as_cstr(), flags, Mode::from_raw_mode(mode))
    }

    /// unlinkat(2) of a file; `Ok(false)` when it did not exist.
    pub fn remove(&self, name: &[u8]) -> Result<bool, Errno> {
        let name = c_name(name)?;
        match rustix::fs::unlinkat(&self.0, name.as_cstr(), AtFlags::empty()) {
            Ok(()) => Ok(true),
            Err(Errno::NOENT) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// unlinkat(2) with AT_REMOVEDIR, of an empty directory; `Ok(false)` when it did not exist.
    pub fn remove_dir(&self, name: &[u8]) -> Result<bool, Errno> {
        let name = c_name(name)?;
        match rustix::fs::unlinkat(&self.0, name.as_cstr(), AtFlags::REMOVEDIR) {
            Ok(()) => Ok(true),
            Err(Errno::NOENT) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// symlinkat(2): creates `name` pointing at `target`; `Ok(false)` when `name` exists.
    pub fn create_symlink(&self, target: &[u8], name: &[u8]) -> Result<bool, Errno> {
        let name = c_name(name)?;
        let target = NulTerminated::from_parts(&[target]).map_err(|_| Errno::NAMETOOLONG)?;
        match rustix::fs::symlinkat(target.as_cstr(), &self.0, name.as_cstr()) {
            Ok(()) => Ok(true),
            Err(Errno::EXIST) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Points `name` at `target`, replacing whatever `name` was atomically: symlinkat(2)
    /// to a temporary name, then renameat(2) over it.
    pub fn replace_symlink(&self, target: &[u8], name: &[u8]) -> Result<(), Errno> {
        let final_name = c_name(name)?;
        let temp_name = NulTerminated::from_parts(&[b".", name, b".wisp-new"]).map_err(|_| Errno::NAMETOOLONG)?;
        let target = NulTerminated::from_parts(&[target]).map_err(|_| Errno::NAMETOOLONG)?;
        let _ = rustix::fs::unlinkat(&self.0, temp_name.as_cstr(), AtFlags::empty());
        rustix::fs::symlinkat(target.as_cstr(), &self.0, temp_name.as_cstr())?;
        rustix::fs::renameat(&self.0, temp_name.as_cstr(), &self.0, final_name.as_cstr())
    }

    /// readlinkat(2): where the symlink `name` points, in `buf`; `Ok(None)` when `name`
    /// is missing or not a symlink.
    pub fn read_link<'b>(&self, name: &[u8], buf: &'b mut [u8]) -> Result<Option<&'b [u8]>, Errno> {
        let name = c_name(name)?;
        match rustix::fs::readlinkat_raw(&self.0, name.as_cstr(), &mut *buf) {
            Ok(len) => Ok(Some(&buf[..len.min(buf.len())])),
            Err(Errno::NOENT | Errno::INVAL) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Whether the regular file `name` holds exactly `expected`, read in small pieces so
    /// that comparing costs no second buffer the size of the file; never through a symlink.
    pub fn has_contents(&self, name: &[u8], expected: &[u8]) -> Result<bool, Errno> {
        let name = c_name(name)?;
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = match rustix::fs::openat(&self.0, name.as_cstr(), flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::NOENT) | Err(Errno::LOOP) => return Ok(false),
            Err(e) => return Err(e),
        };
        let mut chunk = [0u8; 4096];
        let mut offset = 0;
        loop {
            let n = retry_intr(|| rustix::io::read(&fd, &mut chunk))?;
            if n == 0 {
                return Ok(offset == expected.len());
            }
            if expected.get(offset..offset + n) != Some(&chunk[..n]) {
                return Ok(false);
            }
            offset += n;
        }
    }

    /// getdents64(2): calls `visit` with the name of every entry but `.` and `..`.
    pub fn for_each_entry(&self, mut visit: impl FnMut(&[u8])) -> Result<(), Errno> {
        // lseek(2) back to the start, so that a second listing sees every entry again.
        rustix::fs::seek(&self.0, rustix::fs::SeekFrom::Start(0))?;
        let mut buf = [core::mem::MaybeUninit::<u8>::uninit(); 2048];
        let mut entries = rustix::fs::RawDir::new(&self.0, &mut buf);
        while let Some(entry) = entries.next() {
            let entry = entry?;
            let name = entry.file_name().to_bytes();
            if name != b"." && name != b".." {
                visit(name);
            }
        }
        Ok(())
    }

    /// fchown(2) and fchmod(2) of the directory itself.
    pub fn set_owner_and_mode(&self, uid: u32, gid: u32, mode: u32) -> Result<(), Errno> {
        set_owner(&self.0, uid, gid)?;
        rustix::fs::fchmod(&self.0, Mode::from_raw_mode(mode))
    }

    /// fstat(2) of the directory itself.
    pub fn stat(&self) -> Result<Metadata, Errno> {
        rustix::fs::fstat(&self.0).map(|st| Metadata::from(&st))
    }

    /// `/proc/self/fd/N`: a path that names exactly this open directory, for calls that
    /// take only a path (mount(2)), so that nothing is resolved a second time.
    pub fn proc_path(&self) -> NulTerminated {
        let mut path = NulTerminated::new();
        let _ = path.push(b"/proc/self/fd/");
        let fd = rustix::fd::AsRawFd::as_raw_fd(&self.0).unsigned_abs();
        let _ = path.push(crate::decimal_digits(fd.into(), &mut [0; 20]));
        path
    }

    /// fsync(2) of the directory, making renames and creations in it durable.
    pub fn sync(&self) -> Result<(), Errno> {
        rustix::fs::fsync(&self.0)
    }

    /// syncfs(2): everything written to the filesystem holding this directory, and only
    /// that filesystem, reaches the disk.
    pub fn sync_filesystem(&self) -> Result<(), Errno> {
        rustix::fs::syncfs(&self.0)
    }

    /// fstat(2) of the directory: the filesystem it is on.
    pub fn filesystem(&self) -> Result<u64, Errno> {
        rustix::fs::fstat(&self.0).map(|st| st.st_dev)
    }

    /// Writes `contents` to `name`'s temporary file for `batch`, which gives it the name
    /// when committed; staging `name` again rewrites that file. ENOBUFS past `BATCH_LIMIT`
    /// files.
    pub fn stage(&self, name: &[u8], contents: &[u8], mode: u32, owner: Option<(u32, u32)>, batch: &mut Batch) -> Result<(), Errno> {
        c_name(name)?;
        let st = rustix::fs::fstat(&self.0)?;
        let key = (st.st_dev, st.st_ino);
        if !batch.staged.iter().any(|staged| staged.directory == key && staged.name == name) {
            let staged_name = heapless::Vec::from_slice(name).map_err(|_| Errno::NAMETOOLONG)?;
            let dir = rustix::io::fcntl_dupfd_cloexec(&self.0, 0)?;
            batch.staged.push(Staged { dir, directory: key, name: staged_name }).map_err(|_| Errno::NOBUFS)?;
        }
        let temp_name = NulTerminated::from_parts(&[b".", name, b".wisp-new"]).map_err(|_| Errno::NAMETOOLONG)?;
        self.write_temp(temp_name.as_cstr(), contents, mode, owner, false)
    }

}

/// Most files one batch replaces together.
pub const BATCH_LIMIT: usize = 8;

/// Files replaced together, as one step: each is written to its temporary name when
/// staged (`Dir::stage`), and `commit` makes them all durable with one syncfs(2) per
/// filesystem, then renames each over its old name. A crash before the renames leaves
/// every old file; after, complete new ones. Discarded or dropped uncommitted (or after a
/// failed commit), it removes its temporary files.
pub struct Batch {
    staged: heapless::Vec<Staged, BATCH_LIMIT>,
}

struct Staged {
    dir: OwnedFd,
    /// The directory's (device, inode).
    directory: (u64, u64),
    name: heapless::Vec<u8, 255>,
}

impl Staged {
    fn temp_name(&self) -> Result<NulTerminated, Errno> {
        NulTerminated::from_parts(&[b".", &self.name, b".wisp-new"]).map_err(|_| Errno::NAMETOOLONG)
    }
}

impl Batch {
    pub const fn new() -> Batch {
        Batch { staged: heapless::Vec::new() }
    }

    /// One syncfs(2) per filesystem staged on, then renameat(2) of each file, in the
    /// order staged.
    pub fn commit(&mut self) -> Result<(), Errno> {
        for (i, staged) in self.staged.iter().enumerate() {
            if !self.staged[..i].iter().any(|earlier| earlier.directory.0 == staged.directory.0) {
                rustix::fs::syncfs(&staged.dir)?;
            }
        }
        for staged in &self.staged {
            let name = NulTerminated::from_parts(&[&staged.name]).map_err(|_| Errno::NAMETOOLONG)?;
            rustix::fs::renameat(&staged.dir, staged.temp_name()?.as_cstr(), &staged.dir, name.as_cstr())?;
        }
        // Renamed: nothing is left for `drop` to remove (after a failure, what was renamed
        // is gone from its temporary name, and removing it there finds nothing).
        self.staged.clear();
        Ok(())
    }

    /// Removes the staged temporary files, and forgets them.
    pub fn discard(&mut self) {
        for staged in &self.staged {
            if let Ok(temp) = staged.temp_name() {
                let _ = rustix::fs::unlinkat(&staged.dir, temp.as_cstr(), AtFlags::empty());
            }
        }
        self.staged.clear();
    }
}

impl Default for Batch {
    fn default() -> Batch {
        Batch::new()
    }
}

impl Drop for Batch {
    fn drop(&mut self) {
        self.discard();
    }
}

/// Reads the whole file at `path`, following symlinks; `Ok(None)` when it does not exist.
pub fn read_file(path: &CStr, buf: &mut [u8]) -> Result<Option<usize>, ReadError> {
    match rustix::fs::openat(CWD, path, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty()) {
        Ok(fd) => read_to_end(&fd, buf).map(Some),
        Err(Errno::NOENT) => Ok(None),
        Err(e) => Err(ReadError::Io(e)),
    }
}

/// open(2) for reading and writing, following symlinks (device nodes, image files).
pub fn open_read_write(path: &CStr) -> Result<OwnedFd, Errno> {
    rustix::fs::openat(CWD, path, OFlags::RDWR | OFlags::CLOEXEC, Mode::empty())
}

/// open(2) of a directory, following symlinks: a handle for ioctls on its filesystem.
pub fn open_directory(path: &CStr) -> Result<OwnedFd, Errno> {
    rustix::fs::openat(CWD, path, OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())
}

/// sync(2): everything written so far, on every filesystem, reaches the disk.
pub fn sync_all() {
    rustix::fs::sync()
}

/// open(2) for reading, following symlinks.
pub fn open_read(path: &CStr) -> Result<OwnedFd, Errno> {
    rustix::fs::openat(CWD, path, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())
}

/// read(2) until end of file. A file that fills `buf` is probed for one more byte, so a
/// file of exactly `buf.len()` bytes is accepted and a longer one is refused, not cut.
pub fn read_to_end<Fd: AsFd>(fd: Fd, buf: &mut [u8]) -> Result<usize, ReadError> {
    let mut filled = 0;
    loop {
        if filled == buf.len() {
            let mut probe = [0u8; 1];
            return match retry_intr(|| rustix::io::read(&fd, &mut probe)) {
                Ok(0) => Ok(filled),
                Ok(_) => Err(ReadError::TooLarge { limit: buf.len() }),
                Err(e) => Err(ReadError::Io(e)),
            };
        }
        match retry_intr(|| rustix::io::read(&fd, &mut buf[filled..])) {
            Ok(0) => return Ok(filled),
            Ok(n) => filled += n,
            Err(e) => return Err(ReadError::Io(e)),
        }
    }
}

fn retry_intr<T>(mut call: impl FnMut() -> Result<T, Errno>) -> Result<T, Errno> {
    loop {
        match call() {
            Err(Errno::INTR) => {}
            other => return other,
        }
    }
}

fn set_owner<Fd: AsFd>(fd: Fd, uid: u32, gid: u32) -> Result<(), Errno> {
    let (uid, gid) = (rustix::fs::Uid::from_raw(uid), rustix::fs::Gid::from_raw(gid));
    rustix::fs::fchown(fd, Some(uid), Some(gid))
}

fn trim_slashes(mut path: &[u8]) -> &[u8] {
    while let [b'/', rest @ ..] = path {
        path = rest;
    }
    while let [rest @ .., b'/'] = path {
        path = rest;
    }
    path
}

/// A single path component as a C string: '/' is refused so that `*at` calls stay in
/// their directory.
fn c_name(name: &[u8]) -> Result<NulTerminated, Errno> {
    if name.is_empty() || name.contains(&b'/') || name == b"." || name == b".." {
        return Err(Errno::INVAL);
    }
    NulTerminated::from_parts(&[name]).map_err(|_| Errno::NAMETOOLONG)
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::os::unix::fs::symlink;
    use std::path::PathBuf;

    /// A scratch root with `a/b`, `in -> /a` (meant for the image), `out -> <host>` and
    /// `up -> ../../..`, and a host directory beside it.
    fn scratch(test: &str) -> (PathBuf, Dir) {
        let base = std::env::temp_dir().join(std::format!("wisp-fs-{test}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let root = base.join("root");
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::create_dir_all(base.join("host/a/b")).unwrap();
        symlink("/a", root.join("in")).unwrap();
        symlink(base.join("host"), root.join("out")).unwrap();
        symlink("../../..", root.join("up")).unwrap();
        let c_root = NulTerminated::from_parts(&[root.as_os_str().as_encoded_bytes()]).unwrap();
        (base, Dir::open(c_root.as_cstr()).unwrap())
    }

    fn inode(dir: &Dir) -> u64 {
        rustix::fs::fstat(&dir.0).unwrap().st_ino
    }

    #[test]
    fn paths_beneath_the_root_stay_in_it() {
        let (base, root) = scratch("beneath");
        let a_b = root.open_beneath(b"/a/b", Resolve::InRoot).unwrap();
        assert_eq!(inode(&root.open_beneath(b"/in/b", Resolve::InRoot).unwrap()), inode(&a_b));
        // `..` and absolute links stop at the root: /up/a/b is /a/b, /out/a is not the host's.
        assert_eq!(inode(&root.open_beneath(b"/up/a/b/", Resolve::InRoot).unwrap()), inode(&a_b));
        assert_eq!(inode(&root.open_beneath(b"/../../a/b", Resolve::InRoot).unwrap()), inode(&a_b));
        assert_eq!(root.open_beneath(b"/out/a", Resolve::InRoot).err(), Some(Errno::NOENT));
        // No symlink at all for paths user-data chose, nor in the walk old kernels get.
        assert_eq!(root.open_beneath(b"/in/b", Resolve::NoSymlinks).err(), Some(Errno::LOOP));
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        assert!(root.open_walking(b"a/b", flags).is_ok());
        assert!(root.open_walking(b"in/b", flags).is_err() && root.open_walking(b"out", flags).is_err());
        assert_eq!(root.open_walking(b"a/../a", flags).err(), Some(Errno::INVAL));
        // Creating follows the same rules: nothing appears outside the root.
        root.create_beneath(b"/a/new/deeper", 0o755, Resolve::NoSymlinks).unwrap();
        assert!(base.join("root/a/new/deeper").is_dir());
        assert_eq!(root.create_beneath(b"/out/a/x", 0o755, Resolve::NoSymlinks).err(), Some(Errno::LOOP));
        assert!(root.create_beneath(b"/out/x", 0o755, Resolve::InRoot).is_err());
        assert!(!base.join("host/x").exists() && !base.join("host/a/x").exists());
        std::fs::remove_dir_all(&base).unwrap();
    }
}
