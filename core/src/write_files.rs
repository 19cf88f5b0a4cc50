//! cloud-config's `write_files`, as wisp writes each entry: which entries a pass writes
//! (`defer`), who owns the file, its content decoded, and when appending changes nothing
//! (the entry's keys and their shapes are `cloud_config`'s).

use crate::accounts;
use crate::cloud_config::{self, CloudConfig, Encoding, WriteFile};
use crate::host::chosen_files::ChosenFiles;
use crate::host::files::Files;
use crate::host::room::Room;
use crate::system_files::{FILE_LIMIT, TOO_LARGE};
use crate::text::Decimal;
use crate::{base64, gzip};

/// Largest file an entry makes, its old content (when appending) and the new together.
pub const CONTENT_LIMIT: usize = crate::config::USERDATA_LIMIT_MAX as usize;

/// `write_files`: the entries whose `defer` is `deferred`, each written atomically with
/// its mode and owner; `append` adds the content unless the file already ends with it, so
/// a rerun never appends twice. An entry wrong for good is left out (said once, by the
/// first pass); one whose write fails fails the action once the others are written.
#[inline(never)]
pub fn apply<H: Files + ChosenFiles + Room>(host: &mut H, config: &CloudConfig<'_>, deferred: bool) -> Result<H::Text, H::Text> {
    let Some(files) = config.value("write_files") else { return Ok(crate::system_files::no_key(host, "write_files")) };
    let mut written = 0;
    let mut failed: Option<H::Text> = None;
    for entry in cloud_config::items("write_files", files)? {
        let file = match cloud_config::write_file(entry) {
            Ok(file) => file,
            Err(e) if !deferred => {
                host.warn(format_args!("{e}: left out"));
                continue;
            }
            Err(_) => continue,
        };
        if file.defer != deferred {
            continue;
        }
        match write_file(host, &file) {
            Ok(()) => written += 1,
            Err(e) => failed = failed.or(Some(host.text(format_args!("write_files {}: {e}", H::shown(file.path.as_bytes()))))),
        }
    }
    match failed {
        Some(e) => Err(e),
        None => Ok(host.text(format_args!("{written} files written", written = Decimal(written as u64)))),
    }
}

#[inline(never)]
fn write_file<H: Files + ChosenFiles + Room>(host: &mut H, file: &WriteFile<'_>) -> Result<(), H::Text> {
    let owner = owner_ids(host, file.owner)?;
    let path = file.path.as_bytes();
    let split = path.iter().rposition(|&b| b == b'/').unwrap_or(0);
    let (parent, name) = (&path[..split.max(1)], &path[split + 1..]);
    let dir = host.create_dir_no_symlinks(parent)?;
    // Room for the old content (when appending) and the new, decoded.
    let old_size = match (file.append, host.size(&dir, name)) {
        (true, Ok(Some(size))) => usize::try_from(size).unwrap_or(usize::MAX),
        _ => 0,
    };
    let decoded = file.encoding.room(file.content.len());
    let mut room = host.room(old_size.saturating_add(decoded).min(CONTENT_LIMIT), "write_files content")?;
    // Appending: the old content first, the new after it, written together atomically.
    let failed = |host: &H, e| host.text(format_args!("{}", H::reason(e)));
    let old = match file.append {
        false => 0,
        true => match ChosenFiles::read(host, &dir, name, &mut room) {
            Ok(len) => len.unwrap_or(0),
            Err(TOO_LARGE) => return Err(host.text(format_args!("larger than {limit} bytes", limit = Decimal(room.len() as u64)))),
            Err(e) => return Err(failed(host, e)),
        },
    };
    let added = decode_content(host, file, &mut room[old..])?;
    if file.append && appended_already(&room[..old], &room[old..old + added]) {
        return Ok(());
    }
    ChosenFiles::write(host, &dir, name, &room[..old + added], file.permissions, owner).map_err(|e| failed(host, e))
}

/// The entry's content, decoded into `out`; its length.
fn decode_content<H: Room>(host: &H, file: &WriteFile<'_>, out: &mut [u8]) -> Result<usize, H::Text> {
    let content = file.content;
    let said = |e: &dyn core::fmt::Display| crate::system_files::said(host, e);
    match file.encoding {
        Encoding::Text => {
            let limit = out.len();
            out.get_mut(..content.len()).ok_or_else(|| host.text(format_args!("content larger than {limit} bytes", limit = Decimal(limit as u64))))?.copy_from_slice(content);
            Ok(content.len())
        }
        Encoding::Base64 => base64::decode(content, out).map_err(|e| said(&e)),
        Encoding::Gzip | Encoding::GzipBase64 => {
            let (inflated, encoded) = out.split_at_mut(out.len() / 2);
            let gzipped = match file.encoding {
                Encoding::Gzip => content,
                _ => {
                    let len = base64::decode(content, encoded).map_err(|e| said(&e))?;
                    &encoded[..len]
                }
            };
            gzip::decompress(gzipped, inflated).map_err(|e| said(&e))
        }
    }
}

/// `user[:group]` (names or numbers) as ids, from the image's /etc/passwd and /etc/group.
fn owner_ids<H: Files + Room>(host: &mut H, owner: &str) -> Result<(u32, u32), H::Text> {
    let parsed = Owner::parse(owner);
    let mut room = host.room(2 * FILE_LIMIT, "/etc/passwd and /etc/group")?;
    let (passwd, groups) = room.split_at_mut(FILE_LIMIT);
    let passwd = read(host, b"/etc/passwd", passwd)?;
    let uid = parsed.uid(passwd).map_err(|_| host.text(format_args!("owner {}: no such user", H::shown(parsed.user.as_bytes()))))?;
    let groups = match parsed.names_group() {
        true => read(host, b"/etc/group", groups)?,
        false => b"",
    };
    let gid = parsed.gid(uid, groups).map_err(|_| host.text(format_args!("owner {}: no such group", H::shown(owner.as_bytes()))))?;
    Ok((uid.0, gid))
}

/// The file's contents, empty when there is none.
fn read<'b, H: Files + Room>(host: &mut H, path: &[u8], buf: &'b mut [u8]) -> Result<&'b [u8], H::Text> {
    match Files::read(host, path, buf) {
        Ok(len) => Ok(&buf[..len.unwrap_or(0)]),
        Err(e) => Err(host.path_error(path, e)),
    }
}

/// An entry's `owner`: `user[:group]`, names or numbers; the group defaults to the
/// user's own (or, for a user given as a number with no account, the same number).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Owner<'a> {
    pub user: &'a str,
    pub group: Option<&'a str>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OwnerError {
    NoSuchUser,
    NoSuchGroup,
}

impl<'a> Owner<'a> {
    pub fn parse(owner: &'a str) -> Owner<'a> {
        let (user, group) = owner.split_once(':').map_or((owner, None), |(u, g)| (u, Some(g)));
        Owner { user, group }
    }

    /// The uid, from /etc/passwd's contents, and the user's own gid when it has an account.
    pub fn uid(&self, passwd: &[u8]) -> Result<(u32, Option<u32>), OwnerError> {
        match (accounts::find_user(passwd, self.user.as_bytes()), self.user.parse::<u32>()) {
            (Some(found), _) => Ok((found.uid, Some(found.gid))),
            (None, Ok(uid)) => Ok((uid, None)),
            (None, Err(_)) => Err(OwnerError::NoSuchUser),
        }
    }

    /// Whether the gid needs /etc/group: a group is named.
    pub fn names_group(&self) -> bool {
        !matches!(self.group, None | Some(""))
    }

    /// The gid, given what `uid` found and (when `names_group`) /etc/group's contents.
    pub fn gid(&self, (uid, users_gid): (u32, Option<u32>), groups: &[u8]) -> Result<u32, OwnerError> {
        match self.group {
            None | Some("") => Ok(users_gid.unwrap_or(uid)),
            Some(group) => match (accounts::find_group(groups, group.as_bytes()), group.parse::<u32>()) {
                (Some(found), _) => Ok(found.gid),
                (None, Ok(gid)) => Ok(gid),
                (None, Err(_)) => Err(OwnerError::NoSuchGroup),
            },
        }
    }
}

/// Whether appending `added` to a file that holds `old` is done already: nothing to add,
/// or the file ends with it, so a rerun never appends twice.
pub fn appended_already(old: &[u8], added: &[u8]) -> bool {
    old.ends_with(added)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PASSWD: &[u8] = b"root:x:0:0:root:/root:/bin/sh\nalpine:x:1000:1000::/home/alpine:/bin/sh\n";
    const GROUP: &[u8] = b"root:x:0:\nwheel:x:10:alpine\n";

    fn ids(owner: &str) -> Result<(u32, u32), OwnerError> {
        let owner = Owner::parse(owner);
        let uid = owner.uid(PASSWD)?;
        Ok((uid.0, owner.gid(uid, if owner.names_group() { GROUP } else { b"" })?))
    }

    #[test]
    fn owners_by_name_or_number() {
        assert_eq!(ids("alpine"), Ok((1000, 1000)));
        assert_eq!(ids("alpine:wheel"), Ok((1000, 10)));
        assert_eq!(ids("alpine:"), Ok((1000, 1000)));
        assert_eq!(ids("root:1234"), Ok((0, 1234)));
        // A number with no account: its group is the same number.
        assert_eq!(ids("2000"), Ok((2000, 2000)));
        assert_eq!(ids("nobody"), Err(OwnerError::NoSuchUser));
        assert_eq!(ids("alpine:staff"), Err(OwnerError::NoSuchGroup));
        assert!(!Owner::parse("alpine:").names_group() && Owner::parse("a:b").names_group());
    }

    #[test]
    fn appending_twice_changes_nothing() {
        assert!(appended_already(b"a\nline\n", b"line\n"));
        assert!(appended_already(b"anything", b""));
        assert!(!appended_already(b"line\n", b"other\n"));
        assert!(!appended_already(b"ne\n", b"line\n"));
    }

    use crate::host::memory::{MemoryHost, MemorySystem};
    use crate::users::tests::with_config;

    fn image() -> MemorySystem {
        MemorySystem::new(MemoryHost::new()).with_file("/etc/passwd", std::str::from_utf8(PASSWD).unwrap()).with_file("/etc/group", std::str::from_utf8(GROUP).unwrap())
    }

    fn run(host: &mut MemorySystem, source: &str, deferred: bool) -> Result<std::string::String, std::string::String> {
        with_config(source, |config| apply(host, config, deferred))
    }

    const FILES: &str = "write_files:\n  - path: /etc/app/conf\n    content: a=1\n    owner: alpine:wheel\n    permissions: '0600'\n  - path: /etc/motd\n    content: aGVsbG8K\n    encoding: b64\n    append: true\n  - path: /srv/late\n    content: x\n    defer: true\n  - content: no path\n";

    #[test]
    fn each_pass_writes_its_entries_with_mode_owner_and_encoding() {
        let mut host = image().with_file("/etc/motd", "welcome\n");
        assert_eq!(run(&mut host, FILES, false).unwrap(), "2 files written");
        assert_eq!(host.contents("/etc/app/conf"), Some("a=1"));
        let meta = host.meta("/etc/app/conf");
        assert_eq!((meta.mode, meta.uid, meta.gid), (0o600, 1000, 10));
        assert_eq!(host.contents("/etc/motd"), Some("welcome\nhello\n"));
        assert_eq!(host.contents("/srv/late"), None);
        // The entry without a path is said once, by the first pass.
        assert_eq!(host.said.borrow().len(), 1, "{:?}", host.said.borrow());
        assert!(host.said.borrow()[0].ends_with(": left out"));
        assert_eq!(run(&mut host, FILES, true).unwrap(), "1 files written");
        assert_eq!(host.contents("/srv/late"), Some("x"));
        assert_eq!(host.said.borrow().len(), 1);
        // A rerun appends nothing twice.
        assert_eq!(run(&mut host, FILES, false).unwrap(), "2 files written");
        assert_eq!(host.contents("/etc/motd"), Some("welcome\nhello\n"));
    }

    #[test]
    fn a_failed_entry_fails_the_pass_after_the_others() {
        let mut host = image().with_symlink("/opt");
        let source = "write_files:\n  - path: /opt/x\n    content: a\n  - path: /etc/b\n    content: b\n    owner: nobody\n  - path: /etc/c\n    content: c\n";
        assert_eq!(run(&mut host, source, false).unwrap_err(), "write_files /opt/x: /opt: a symlink in the path is refused");
        assert_eq!(host.contents("/etc/c"), Some("c"));
        assert_eq!(host.contents("/etc/b"), None);
        let gzip = "write_files:\n  - path: /etc/z\n    encoding: gzip\n    content: !!binary |\n      bm90IGd6aXA=\n";
        assert!(run(&mut image(), gzip, false).unwrap_err().starts_with("write_files /etc/z: "));
        assert_eq!(run(&mut image(), "runcmd: [ls]\n", false).unwrap(), "no write_files");
    }
}
