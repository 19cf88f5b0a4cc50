//! The image's system files as the rules read and replace them: a file read whole with
//! the mode and owner it keeps (`SystemFile`), contents compared and read without
//! following a symlink at the name, and the lines that say why a host call failed.

use core::fmt;

use crate::host::files::{Files, Kind};
use crate::host::messages::Messages;
use crate::host::system::System;
use crate::host::HostError;
use crate::out::Out;
use crate::text::{Decimal, Plain};
use crate::yaml::NodeRef;

/// Largest /etc/passwd, /etc/group, /etc/shadow, /etc/hosts or authorized_keys: a cloud
/// image's are a few hundred bytes, and several of these buffers live at once.
pub const FILE_LIMIT: usize = 32 * 1024;

/// What the file-too-large errno (EFBIG) says: the file did not fit the buffer.
pub const TOO_LARGE: HostError = HostError { errno: 27 };
/// ELOOP: what opening a symlink with O_NOFOLLOW says.
pub const SYMLINK: HostError = HostError { errno: 40 };

/// `N` buffers of `FILE_LIMIT` bytes cut from the host's room for them (`Room::room` of
/// `N * FILE_LIMIT`), for the files a rule reads whole and the new text it writes: mapped,
/// not on the stack, whose probes would touch every page of them however small the files.
pub fn file_buffers<const N: usize>(room: &mut [u8]) -> &mut [[u8; FILE_LIMIT]; N] {
    room.as_chunks_mut().0.first_chunk_mut().unwrap()
}

/// A system file read whole, with the mode and owner it must keep when rewritten.
pub struct SystemFile<'b> {
    path: &'static str,
    text: &'b mut [u8],
    len: usize,
    mode: u32,
    owner: Option<(u32, u32)>,
}

impl<'b> SystemFile<'b> {
    /// `path` (in /etc), into `buf`, whose size is the limit; an absent file is empty.
    pub fn read<H: Files + Messages>(host: &mut H, path: &'static str, default_mode: u32, buf: &'b mut [u8]) -> Result<SystemFile<'b>, H::Text> {
        make_dir(host, b"/etc")?;
        let mut file = SystemFile { path, text: buf, len: 0, mode: default_mode, owner: None };
        let meta = host.metadata(path.as_bytes()).map_err(|e| call_failed(host, path.as_bytes(), e))?;
        if let Some(meta) = meta {
            file.mode = meta.mode;
            file.owner = Some((meta.uid, meta.gid));
            // Never read through a symlink planted at a system file's name.
            if meta.kind == Kind::Symlink {
                return Err(call_failed(host, path.as_bytes(), SYMLINK));
            }
        }
        file.len = match host.read(path.as_bytes(), file.text) {
            Ok(len) => len.unwrap_or(0),
            Err(TOO_LARGE) => {
                let limit = file.text.len();
                return Err(host.text(format_args!("{path} is larger than {limit} bytes", limit = Decimal(limit as u64), path = Plain(path))));
            }
            Err(e) => return Err(call_failed(host, path.as_bytes(), e)),
        };
        Ok(file)
    }

    pub fn text(&self) -> &[u8] {
        &self.text[..self.len]
    }

    /// Replaces the file with `new` (keeping mode and owner) when `host`'s batch is
    /// committed, and remembers it.
    pub fn replace<H: System + Messages>(&mut self, new: &[u8], host: &mut H) -> Result<(), H::Text> {
        let path = self.path;
        host.stage(path.as_bytes(), new, self.mode, self.owner).map_err(|e| call_failed(host, path.as_bytes(), e))?;
        self.text[..new.len()].copy_from_slice(new);
        self.len = new.len();
        Ok(())
    }
}

/// Makes `path` a directory (0755) unless it is one; the error names it. One call for
/// the rules' many directories, not a conversion of the error at each.
#[inline(never)]
pub fn make_dir<H: Files + Messages>(host: &mut H, path: &[u8]) -> Result<(), H::Text> {
    host.create_dir(path, 0o755).map(drop).map_err(|e| host.path_error(path, e))
}

/// `what: reason` (then `note`) for a failed host call: one function for every such line.
#[inline(never)]
pub fn failed<H: Messages>(host: &H, what: &[u8], e: HostError, note: &str) -> H::Text {
    host.text(format_args!("{}: {}{note}", H::shown(what), H::reason(e), note = Plain(note)))
}

/// `failed` without a note: the line most failed calls say, one call with two arguments
/// fewer at each of their sites.
#[inline(never)]
pub fn call_failed<H: Messages>(host: &H, what: &[u8], e: HostError) -> H::Text {
    failed(host, what, e, "")
}

/// What a rule says when its key is absent: "no KEY". One out-of-line line for the rules
/// rather than a format of each.
#[inline(never)]
pub fn no_key<H: Messages>(host: &H, key: &'static str) -> H::Text {
    host.text(format_args!("no {}", Plain(key)))
}

/// A cloud-config value that is wrong, at its line: `problem` starts with its key
/// ("mounts: more than six fields"). One out-of-line format for the rules' such lines.
#[inline(never)]
pub fn at_line<H: Messages>(host: &H, at: NodeRef<'_>, problem: &str) -> H::Text {
    host.text(format_args!("cloud-config line {}: {}", Decimal(at.line().into()), Plain(problem)))
}

/// A rule's error in its own words.
#[inline(never)]
pub fn said<H: Messages>(host: &H, e: &dyn fmt::Display) -> H::Text {
    host.text(format_args!("{e}"))
}

/// Gives the staged files their names, durably (see `System`).
pub fn commit<H: System + Messages>(host: &mut H) -> Result<(), H::Text> {
    host.commit().map_err(|e| call_failed(host, b"cannot replace the files", e))
}

/// Whether `path` is a regular file (not a symlink) holding exactly `expected`.
pub fn has_contents<H: Files>(host: &mut H, path: &[u8], expected: &[u8], buf: &mut [u8]) -> bool {
    matches!(host.metadata(path), Ok(Some(m)) if m.kind == Kind::File)
        && matches!(host.read(path, buf), Ok(Some(len)) if buf[..len] == *expected)
}

/// Writes `contents` to `path` (0644, a file of its own) unless it holds them already,
/// so that a rerun leaves the file as it is; the old contents are read into `buf` (a file
/// larger than it is rewritten).
#[inline(never)]
pub fn write_if_changed<H: Files + Messages>(host: &mut H, path: &[u8], contents: &[u8], buf: &mut [u8]) -> Result<(), H::Text> {
    if !has_contents(host, path, contents, buf) {
        host.write(path, contents, 0o644, None).map_err(|e| call_failed(host, path, e))?;
    }
    Ok(())
}

/// The whole file at `path` into `buf` as `Files::read`, but never through a symlink
/// at `path` itself (the error O_NOFOLLOW gives).
pub fn read_file_itself<H: Files>(host: &mut H, path: &[u8], buf: &mut [u8]) -> Result<Option<usize>, HostError> {
    if host.metadata(path)?.is_some_and(|m| m.kind == Kind::Symlink) {
        return Err(SYMLINK);
    }
    host.read(path, buf)
}

/// Whether `path` opens as a directory (its symlinks followed inside the root).
pub fn is_directory<H: Files>(host: &mut H, path: &[u8]) -> bool {
    host.list(path, &mut |_| {}).is_ok()
}

/// That `path` is a directory itself, not a symlink to one: the error opening it with
/// O_NOFOLLOW would give otherwise.
pub fn directory_itself<H: Files>(host: &mut H, path: &[u8]) -> Result<(), HostError> {
    match host.metadata(path)?.map(|m| m.kind) {
        Some(Kind::Directory) => Ok(()),
        Some(Kind::Symlink) => Err(SYMLINK),
        Some(_) => Err(HostError { errno: 20 }),
        None => Err(HostError::NOT_FOUND),
    }
}

/// `/a/b/name` as (`/a/b`, `name`), the root's own entries as (`/`, `name`).
pub fn split_path(path: &[u8]) -> Option<(&[u8], &[u8])> {
    match path.iter().rposition(|&b| b == b'/') {
        Some(i) if path.first() == Some(&b'/') && i + 1 < path.len() => Some((if i == 0 { b"/" } else { &path[..i] }, &path[i + 1..])),
        _ => None,
    }
}

/// `parts` joined into `buf`; a path too long for it is cut, and then not found.
pub fn joined<'b>(buf: &'b mut [u8], parts: &[&[u8]]) -> &'b [u8] {
    let mut out = Out::new(buf);
    for part in parts {
        let _ = out.put(part);
    }
    let len = out.len();
    &buf[..len]
}
