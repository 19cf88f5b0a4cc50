//! The main phase's actions: the default user, the host name, the SSH keys. The
//! decisions and text edits are core's; this module reads and writes the files, each
//! step checking its own piece so that a rerun after a crash completes what is missing.

use wisp_core::accounts::{self, User, DOAS_RULE, SUDOERS_RULE};
use wisp_core::authorized_keys::{self, PublicKey};
use wisp_core::hostname::Hostname;
use wisp_core::hosts_file;
use wisp_os_linux::fs::Dir;

use crate::context::Context;
use crate::output::{Line, Os, Shown};

/// Largest /etc/passwd, /etc/group, /etc/shadow, /etc/hosts or authorized_keys: a cloud
/// image's are a few hundred bytes, and several of these buffers live at once.
const FILE_LIMIT: usize = 32 * 1024;
/// Most keys installed at once.
const KEYS_LIMIT: usize = 32;

/// A system file read whole, with the mode and owner it must keep when rewritten.
struct SystemFile {
    dir: Dir,
    name: &'static [u8],
    path: &'static str,
    text: [u8; FILE_LIMIT],
    len: usize,
    mode: u32,
    owner: Option<(u32, u32)>,
}

impl SystemFile {
    fn read(ctx: &Context<'_>, directory: &'static str, name: &'static str, path: &'static str, default_mode: u32) -> Result<SystemFile, Line> {
        let dir = ctx.create_dir(directory.as_bytes())?;
        let mut file = SystemFile { dir, name: name.as_bytes(), path, text: [0; FILE_LIMIT], len: 0, mode: default_mode, owner: None };
        if let Some(meta) = file.dir.metadata(file.name).map_err(|e| msg!("{path}: {}", Os(e)))? {
            file.mode = meta.permissions();
            file.owner = Some((meta.uid, meta.gid));
        }
        file.len = match file.dir.read(file.name, &mut file.text) {
            Ok(len) => len.unwrap_or(0),
            Err(wisp_os_linux::fs::ReadError::TooLarge { limit }) => return Err(msg!("{path} is larger than {limit} bytes")),
            Err(wisp_os_linux::fs::ReadError::Io(e)) => return Err(msg!("{path}: {}", Os(e))),
        };
        Ok(file)
    }

    fn text(&self) -> &[u8] {
        &self.text[..self.len]
    }

    /// Replaces the file with `new` (keeping mode and owner) and remembers it.
    fn replace(&mut self, new: &[u8]) -> Result<(), Line> {
        let path = self.path;
        self.dir.write_atomic(self.name, new, self.mode, self.owner).map_err(|e| msg!("{path}: {}", Os(e)))?;
        self.text[..new.len()].copy_from_slice(new);
        self.len = new.len();
        Ok(())
    }
}

#[inline(never)]
pub fn create_default_user(ctx: &Context<'_>) -> Result<Line, Line> {
    let name = ctx.config.cloud_user.as_bytes();
    let mut passwd = SystemFile::read(ctx, "/etc", "passwd", "/etc/passwd", 0o644)?;
    let mut group = SystemFile::read(ctx, "/etc", "group", "/etc/group", 0o644)?;
    let mut shadow = SystemFile::read(ctx, "/etc", "shadow", "/etc/shadow", 0o640)?;
    let mut new = [0u8; FILE_LIMIT];
    let mut done: heapless::Vec<&str, 6> = heapless::Vec::new();

    let (uid, gid, home) = match accounts::find_user(passwd.text(), name) {
        Some(user) => (user.uid, user.gid, home_path(user.home)?),
        None => {
            let gid = match accounts::find_group(group.text(), name) {
                Some(own) => own.gid,
                None => {
                    let id = accounts::free_id(passwd.text(), group.text()).ok_or_else(|| msg!("{}", accounts::AccountsError::NoFreeId))?;
                    let len = accounts::add_group(group.text(), name, id, &mut new).map_err(|e| msg!("{e}"))?;
                    group.replace(&new[..len])?;
                    let _ = done.push("group");
                    id
                }
            };
            // The user's number matches its group's where that number is free.
            let uid = match accounts::uid_is_free(passwd.text(), gid) {
                true => gid,
                false => accounts::free_id(passwd.text(), group.text()).ok_or_else(|| msg!("{}", accounts::AccountsError::NoFreeId))?,
            };
            let mut home = heapless::Vec::<u8, 64>::new();
            let _ = home.extend_from_slice(b"/home/");
            home.extend_from_slice(name).map_err(|_| msg!("home directory name too long"))?;
            let user = User { name, uid, gid, home: &home, shell: b"/bin/sh" };
            let len = accounts::add_user(passwd.text(), &user, b"Linux User,,,", &mut new).map_err(|e| msg!("{e}"))?;
            passwd.replace(&new[..len])?;
            let _ = done.push("user");
            (uid, gid, home)
        }
    };
    if !accounts::has_shadow_entry(shadow.text(), name) {
        let days = wisp_os_linux::time::realtime_secs() / wisp_core::clock::SECONDS_PER_DAY;
        let len = accounts::add_shadow(shadow.text(), name, b"*", days, &mut new).map_err(|e| msg!("{e}"))?;
        shadow.replace(&new[..len])?;
        let _ = done.push("shadow");
    }
    let wheel = match accounts::add_member(group.text(), "wheel", name, &mut new) {
        Ok(Some(len)) => {
            group.replace(&new[..len])?;
            let _ = done.push("wheel");
            true
        }
        Ok(None) => true,
        Err(accounts::AccountsError::MissingGroup { .. }) => false,
        Err(e) => return Err(msg!("{e}")),
    };
    if create_home(ctx, &home, uid, gid)? {
        let _ = done.push("home");
    }
    for (directory, file, rule) in [SUDOERS_RULE, DOAS_RULE] {
        // Like tiny-cloud: a rule only where the tool's drop-in directory exists.
        let Ok(dir) = ctx.open_dir(directory.as_bytes()) else { continue };
        if !dir.has_contents(file.as_bytes(), rule.as_bytes()).unwrap_or(false) {
            dir.write_atomic(file.as_bytes(), rule.as_bytes(), 0o440, None).map_err(|e| msg!("{directory}/{file}: {}", Os(e)))?;
            let _ = done.push(if directory == DOAS_RULE.0 { "doas" } else { "sudo" });
        }
    }
    let user = Shown(name);
    let note = if wheel { "" } else { " (no wheel group: no admin rights)" };
    Ok(match done.is_empty() {
        true => msg!("{user} already exists{note}"),
        false => {
            let mut line = msg!("{user} (uid {uid}):");
            for piece in &done {
                let _ = core::fmt::Write::write_fmt(&mut line, format_args!(" {piece}"));
            }
            let _ = core::fmt::Write::write_str(&mut line, note);
            line
        }
    })
}

fn home_path(home: &[u8]) -> Result<heapless::Vec<u8, 64>, Line> {
    heapless::Vec::from_slice(home).map_err(|_| msg!("home directory {} is too long", Shown(home)))
}

/// The user's home, created if missing and never through a symlink; `Ok(true)` if made.
fn create_home(ctx: &Context<'_>, home: &[u8], uid: u32, gid: u32) -> Result<bool, Line> {
    let (parent, name) = split_home(home)?;
    let parent = ctx.create_dir(parent)?;
    let created = parent.create_dir(name, 0o755).map_err(|e| msg!("{}: {}", Shown(home), Os(e)))?;
    if created {
        let dir = parent.open_child(name).map_err(|e| msg!("{}: {}", Shown(home), Os(e)))?;
        dir.set_owner_and_mode(uid, gid, 0o755).map_err(|e| msg!("{}: {}", Shown(home), Os(e)))?;
    }
    Ok(created)
}

fn split_home(home: &[u8]) -> Result<(&[u8], &[u8]), Line> {
    match home.iter().rposition(|&b| b == b'/') {
        Some(i) if home[0] == b'/' && i + 1 < home.len() => Ok((if i == 0 { b"/" } else { &home[..i] }, &home[i + 1..])),
        _ => Err(msg!("home directory {} is not an absolute path", Shown(home))),
    }
}

#[inline(never)]
pub fn set_hostname(ctx: &Context<'_>, value: Option<&[u8]>) -> Result<Line, Line> {
    let Some(raw) = value.filter(|raw| !raw.is_empty()) else {
        return Ok(msg!("no hostname in the metadata: left as it is"));
    };
    let name = Hostname::parse(raw).map_err(|e| msg!("{e}"))?;
    let etc = ctx.create_dir(b"/etc")?;
    let mut hostname_line = heapless::Vec::<u8, 80>::new();
    let _ = hostname_line.extend_from_slice(name.short().as_bytes());
    let _ = hostname_line.push(b'\n');
    if !etc.has_contents(b"hostname", &hostname_line).unwrap_or(false) {
        etc.write_atomic(b"hostname", &hostname_line, 0o644, None).map_err(|e| msg!("/etc/hostname: {}", Os(e)))?;
    }
    let mut hosts = SystemFile::read(ctx, "/etc", "hosts", "/etc/hosts", 0o644)?;
    let mut new = [0u8; FILE_LIMIT];
    if let Some(len) = hosts_file::update(hosts.text(), name.fqdn(), name.short(), &mut new).map_err(|e| msg!("{e}"))? {
        hosts.replace(&new[..len])?;
    }
    wisp_os_linux::system::set_hostname(name.short().as_bytes()).map_err(|e| msg!("sethostname: {}", Os(e)))?;
    Ok(msg!("{} ({})", name.short(), name.fqdn()))
}

#[inline(never)]
pub fn set_ssh_keys(ctx: &Context<'_>, value: Option<&[u8]>) -> Result<Line, Line> {
    let mut keys: heapless::Vec<PublicKey<'_>, KEYS_LIMIT> = heapless::Vec::new();
    for (index, line) in value.unwrap_or(b"").split(|&b| b == b'\n').enumerate() {
        if line.iter().all(|b| b.is_ascii_whitespace()) {
            continue;
        }
        let key = PublicKey::parse(line).map_err(|e| msg!("key {}: {e}", index + 1))?;
        keys.push(key).map_err(|_| msg!("more than {KEYS_LIMIT} keys"))?;
    }
    if keys.is_empty() {
        return Ok(msg!("no keys in the metadata"));
    }
    let name = ctx.config.cloud_user.as_bytes();
    let passwd = SystemFile::read(ctx, "/etc", "passwd", "/etc/passwd", 0o644)?;
    let user = accounts::find_user(passwd.text(), name).ok_or_else(|| msg!("user {} does not exist", Shown(name)))?;
    let (parent, home_name) = split_home(user.home)?;
    let home = ctx.open_dir(parent)?.open_child(home_name).map_err(|e| msg!("{}: {}", Shown(user.home), Os(e)))?;
    home.create_dir(b".ssh", 0o700).map_err(|e| msg!("~/.ssh: {}", Os(e)))?;
    // O_NOFOLLOW: a symlink planted at ~/.ssh is refused, not followed.
    let ssh = home.open_child(b".ssh").map_err(|e| msg!("~/.ssh: {} (a symlink is refused)", Os(e)))?;
    ssh.set_owner_and_mode(user.uid, user.gid, 0o700).map_err(|e| msg!("~/.ssh: {}", Os(e)))?;
    let mut existing = [0u8; FILE_LIMIT];
    let existing_len = match ssh.read(b"authorized_keys", &mut existing) {
        Ok(len) => len.unwrap_or(0),
        Err(wisp_os_linux::fs::ReadError::TooLarge { limit }) => return Err(msg!("authorized_keys is larger than {limit} bytes")),
        Err(wisp_os_linux::fs::ReadError::Io(e)) => return Err(msg!("~/.ssh/authorized_keys: {} (a symlink is refused)", Os(e))),
    };
    let mut new = [0u8; FILE_LIMIT];
    let owner = Some((user.uid, user.gid));
    let count = keys.len();
    match authorized_keys::merge(&existing[..existing_len], &keys, &mut new).map_err(|e| msg!("{e}"))? {
        Some(len) => {
            ssh.write_atomic(b"authorized_keys", &new[..len], 0o600, owner).map_err(|e| msg!("authorized_keys: {}", Os(e)))?;
            Ok(msg!("{count} keys for {}", Shown(name)))
        }
        None => {
            // The keys are there; still make sure of mode and owner.
            let meta = ssh.metadata(b"authorized_keys").map_err(|e| msg!("authorized_keys: {}", Os(e)))?;
            if meta.is_some_and(|m| m.permissions() != 0o600 || (m.uid, m.gid) != (user.uid, user.gid)) {
                ssh.write_atomic(b"authorized_keys", &existing[..existing_len], 0o600, owner)
                    .map_err(|e| msg!("authorized_keys: {}", Os(e)))?;
            }
            Ok(msg!("{count} keys for {}: all present already", Shown(name)))
        }
    }
}
