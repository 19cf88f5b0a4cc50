//! The main phase's actions: the default user, the host name, the SSH keys. The
//! decisions and text edits are core's; this module reads and writes the files, each
//! step checking its own piece so that a rerun after a crash completes what is missing.

use wisp_core::accounts::{self, User, DOAS_RULE, SUDOERS_RULE};
use wisp_core::cloud_config::{self, CloudConfig};
#[cfg(feature = "cloud-config")]
use wisp_core::cloud_config::UserEntry;
use wisp_core::authorized_keys::{self, PublicKey};
use wisp_core::hostname::Hostname;
use wisp_core::hosts_file;
use wisp_os_linux::fs::{Batch, Dir};
use wisp_os_linux::memory::Mapping;

use crate::context::Context;
use crate::output::{Line, Os, Shown};

/// Largest /etc/passwd, /etc/group, /etc/shadow, /etc/hosts or authorized_keys: a cloud
/// image's are a few hundred bytes, and several of these buffers live at once.
pub const FILE_LIMIT: usize = 32 * 1024;
/// Most keys installed at once.
const KEYS_LIMIT: usize = 32;

/// A system file read whole, with the mode and owner it must keep when rewritten.
pub struct SystemFile {
    dir: Dir,
    name: &'static [u8],
    path: &'static str,
    /// Mapped, so that only the pages the file fills are touched.
    text: Mapping,
    len: usize,
    mode: u32,
    owner: Option<(u32, u32)>,
}

impl SystemFile {
    pub fn read(ctx: &Context<'_>, directory: &'static str, name: &'static str, path: &'static str, default_mode: u32) -> Result<SystemFile, Line> {
        let dir = ctx.create_dir(directory.as_bytes())?;
        let mut file = SystemFile { dir, name: name.as_bytes(), path, text: crate::memory::map(FILE_LIMIT, path)?, len: 0, mode: default_mode, owner: None };
        if let Some(meta) = file.dir.metadata(file.name).map_err(|e| msg!("{path}: {}", Os(e)))? {
            file.mode = meta.permissions();
            file.owner = Some((meta.uid, meta.gid));
        }
        file.len = match file.dir.read(file.name, file.text.as_mut_slice()) {
            Ok(len) => len.unwrap_or(0),
            Err(wisp_os_linux::fs::ReadError::TooLarge { limit }) => return Err(msg!("{path} is larger than {limit} bytes")),
            Err(wisp_os_linux::fs::ReadError::Io(e)) => return Err(msg!("{path}: {}", Os(e))),
        };
        Ok(file)
    }

    pub fn text(&self) -> &[u8] {
        &self.text.as_slice()[..self.len]
    }

    /// Replaces the file with `new` (keeping mode and owner) when `batch` is committed,
    /// and remembers it.
    pub fn replace(&mut self, new: &[u8], batch: &mut Batch) -> Result<(), Line> {
        let path = self.path;
        self.dir.stage(self.name, new, self.mode, self.owner, batch).map_err(|e| msg!("{path}: {}", Os(e)))?;
        self.text.as_mut_slice()[..new.len()].copy_from_slice(new);
        self.len = new.len();
        Ok(())
    }
}

/// What an account should have. A missing account is created with all of it; an
/// existing one is only given its missing groups, home and (when set) new password.
pub struct Account<'a> {
    pub name: &'a [u8],
    pub gecos: &'a [u8],
    /// `None`: `/home/NAME`.
    pub home: Option<&'a [u8]>,
    pub shell: &'a [u8],
    /// `None`: a group of the user's own name.
    pub primary_group: Option<&'a [u8]>,
    /// Supplementary groups, created when missing.
    pub groups: &'a [&'a [u8]],
    /// Admin groups joined only where the image has them (`wheel`).
    pub optional_groups: &'a [&'a [u8]],
    pub system: bool,
    /// The user's number, when it must be this one.
    pub uid: Option<u32>,
    pub create_home: bool,
    /// The shadow password field: `*` (no password, key logins work), a hash, or `!hash`.
    pub password: &'a [u8],
    /// Whether `password` replaces the field of an existing account.
    pub set_password: bool,
    pub expiry: accounts::Expiry,
}

/// The account's uid once it exists as described, and whether an optional group was
/// missing.
pub struct Ensured {
    pub uid: u32,
    pub missing_optional: bool,
}

/// Creates or completes an account, each step checking its own piece so that a rerun
/// after a crash completes what is missing; `done` names the steps taken.
/// The files it changes are staged in `batch`, for the caller to commit.
pub fn ensure_account(ctx: &Context<'_>, account: &Account<'_>, done: &mut heapless::Vec<&'static str, 8>, batch: &mut Batch) -> Result<Ensured, Line> {
    let name = account.name;
    let mut passwd = SystemFile::read(ctx, "/etc", "passwd", "/etc/passwd", 0o644)?;
    let mut group = SystemFile::read(ctx, "/etc", "group", "/etc/group", 0o644)?;
    let mut shadow = SystemFile::read(ctx, "/etc", "shadow", "/etc/shadow", 0o640)?;
    let mut new = [0u8; FILE_LIMIT];
    let ids = if account.system { accounts::SYSTEM_IDS } else { accounts::FIRST_ID..=accounts::LAST_ID };
    let no_free_id = || msg!("{}", accounts::AccountsError::NoFreeId);
    let (uid, gid, home) = match accounts::find_user(passwd.text(), name) {
        Some(user) => (user.uid, user.gid, home_path(user.home)?),
        None => {
            // Checked before anything is written, so a refused user leaves nothing behind.
            if let Some(uid) = account.uid.filter(|&uid| !accounts::uid_is_free(passwd.text(), uid)) {
                return Err(msg!("uid {uid} is taken"));
            }
            let group_name = account.primary_group.unwrap_or(name);
            let gid = match accounts::find_group(group.text(), group_name) {
                Some(own) => own.gid,
                None => {
                    // A given uid gives its number to the user's own group too, where free.
                    let id = match account.uid {
                        Some(uid) if accounts::gid_is_free(group.text(), uid) => uid,
                        _ => accounts::free_id_in(passwd.text(), group.text(), ids.clone()).ok_or_else(no_free_id)?,
                    };
                    let len = accounts::add_group(group.text(), group_name, id, &mut new).map_err(crate::output::line)?;
                    group.replace(&new[..len], batch)?;
                    let _ = done.push("group");
                    id
                }
            };
            // The user's number matches its group's where that number is free.
            let uid = match account.uid {
                Some(uid) => uid,
                None if accounts::uid_is_free(passwd.text(), gid) && ids.contains(&gid) => gid,
                None => accounts::free_id_in(passwd.text(), group.text(), ids).ok_or_else(no_free_id)?,
            };
            let home = match account.home {
                Some(home) => home_path(home)?,
                None => {
                    let mut home = heapless::Vec::<u8, 64>::new();
                    let _ = home.extend_from_slice(b"/home/");
                    home.extend_from_slice(name).map_err(|_| msg!("home directory name too long"))?;
                    home
                }
            };
            let user = User { name, uid, gid, home: &home, shell: account.shell };
            let len = accounts::add_user(passwd.text(), &user, account.gecos, &mut new).map_err(crate::output::line)?;
            passwd.replace(&new[..len], batch)?;
            let _ = done.push("user");
            (uid, gid, home)
        }
    };
    let days = wisp_os_linux::time::realtime_secs() / wisp_core::clock::SECONDS_PER_DAY;
    if !accounts::has_shadow_entry(shadow.text(), name) {
        let len = accounts::add_shadow(shadow.text(), name, account.password, days, account.expiry, &mut new).map_err(crate::output::line)?;
        shadow.replace(&new[..len], batch)?;
        let _ = done.push("shadow");
    } else if account.set_password {
        let len = wisp_core::shadow::set_shadow_password(shadow.text(), name, account.password, days, &mut new).map_err(crate::output::line)?;
        if new[..len] != *shadow.text() {
            shadow.replace(&new[..len], batch)?;
            let _ = done.push("password");
        }
    }
    let mut missing_optional = false;
    for (&member_of, optional) in account.groups.iter().map(|g| (g, false)).chain(account.optional_groups.iter().map(|g| (g, true))) {
        if !optional && accounts::find_group(group.text(), member_of).is_none() {
            let id = accounts::free_id_in(passwd.text(), group.text(), accounts::SYSTEM_IDS).ok_or_else(no_free_id)?;
            let len = accounts::add_group(group.text(), member_of, id, &mut new).map_err(crate::output::line)?;
            group.replace(&new[..len], batch)?;
        }
        match accounts::add_member(group.text(), member_of, name, &mut new) {
            Ok(Some(len)) => {
                group.replace(&new[..len], batch)?;
                let _ = done.push(if optional { "wheel" } else { "groups" });
            }
            Ok(None) => {}
            Err(accounts::AccountsError::MissingGroup) => missing_optional = true,
            Err(e) => return Err(msg!("{e}")),
        }
    }
    if account.create_home && create_home(ctx, &home, uid, gid)? {
        let _ = done.push("home");
    }
    Ok(Ensured { uid, missing_optional })
}

#[inline(never)]
pub fn create_default_user(ctx: &Context<'_>, config: Option<&CloudConfig<'static>>) -> Result<Line, Line> {
    let name = ctx.config.cloud_user.as_bytes();
    if config.is_some_and(|c| !c.wants_default_user()) {
        return Ok(msg!("cloud-config users lists no default: {} not created", Shown(name)));
    }
    let account = Account {
        name,
        gecos: b"Linux User,,,",
        home: None,
        shell: b"/bin/sh",
        primary_group: None,
        groups: &[],
        optional_groups: &[b"wheel"],
        system: false,
        uid: None,
        create_home: true,
        password: b"*",
        set_password: false,
        expiry: accounts::Expiry::default(),
    };
    let mut done: heapless::Vec<&str, 8> = heapless::Vec::new();
    // The account's files and its rules take their new contents together.
    let mut batch = Batch::new();
    let ensured = ensure_account(ctx, &account, &mut done, &mut batch)?;
    for (directory, file, rule) in [SUDOERS_RULE, DOAS_RULE] {
        // Like tiny-cloud, a rule only where the tool's drop-in directory exists; or where
        // this run's userdata_users makes it, so that a rerun, finding the directory an
        // earlier run made, decides as the first run did.
        let doas = directory == DOAS_RULE.0;
        let dir = match ctx.open_dir(directory.as_bytes()) {
            Ok(dir) => dir,
            Err(_) if config.is_some_and(|c| c.has_user_rules(doas)) => ctx.create_dir(directory.as_bytes())?,
            Err(_) => continue,
        };
        if !dir.has_contents(file.as_bytes(), rule.as_bytes()).unwrap_or(false) {
            dir.stage(file.as_bytes(), rule.as_bytes(), 0o440, None, &mut batch).map_err(|e| msg!("{directory}/{file}: {}", Os(e)))?;
            let _ = done.push(if doas { "doas" } else { "sudo" });
        }
    }
    commit(batch)?;
    let user = Shown(name);
    let note = if ensured.missing_optional { " (no wheel group: no admin rights)" } else { "" };
    Ok(match done.is_empty() {
        true => msg!("{user} already exists{note}"),
        false => {
            let mut line = msg!("{user} (uid {}):", ensured.uid);
            for piece in &done {
                let _ = core::fmt::Write::write_fmt(&mut line, format_args!(" {piece}"));
            }
            let _ = core::fmt::Write::write_str(&mut line, note);
            line
        }
    })
}

/// Gives the staged files their names, durably (see `Batch`).
pub fn commit(batch: Batch) -> Result<(), Line> {
    batch.commit().map_err(|e| crate::output::os_error("cannot replace the files", e))
}

fn home_path(home: &[u8]) -> Result<heapless::Vec<u8, 64>, Line> {
    heapless::Vec::from_slice(home).map_err(|_| msg!("home directory {} is too long", Shown(home)))
}

/// The user's home, created if missing and never through a symlink; `Ok(true)` if made.
fn create_home(ctx: &Context<'_>, home: &[u8], uid: u32, gid: u32) -> Result<bool, Line> {
    let (parent, name) = split_home(home)?;
    let parent = ctx.create_dir(parent)?;
    let created = parent.create_dir(name, 0o755).map_err(|e| crate::output::path_error(home, e))?;
    // A home still root's is one a crash left between mkdir and chown: it gets its owner.
    let left_by_crash = matches!(parent.metadata(name), Ok(Some(m)) if m.is_dir() && m.uid == 0 && uid != 0);
    if created || left_by_crash {
        let dir = parent.open_child(name).map_err(|e| crate::output::path_error(home, e))?;
        dir.set_owner_and_mode(uid, gid, 0o755).map_err(|e| crate::output::path_error(home, e))?;
    }
    Ok(created)
}

fn split_home(home: &[u8]) -> Result<(&[u8], &[u8]), Line> {
    match home.iter().rposition(|&b| b == b'/') {
        Some(i) if home[0] == b'/' && i + 1 < home.len() => Ok((if i == 0 { b"/" } else { &home[..i] }, &home[i + 1..])),
        _ => Err(msg!("home directory {} is not an absolute path", Shown(home))),
    }
}

/// The host name, from the metadata and cloud-config's `hostname`, `fqdn` and
/// `prefer_fqdn_over_hostname` as cloud-init chooses it (core's `short_and_full`), unless
/// cloud-config sets `preserve_hostname`; `manage_etc_hosts: false` leaves /etc/hosts
/// alone. A name that is not a valid host name is left out with a warning: wrong for good,
/// it must not fail the boot.
#[inline(never)]
pub fn set_hostname(ctx: &Context<'_>, value: Option<&[u8]>, config: Option<&CloudConfig<'static>>) -> Result<Line, Line> {
    let mut manage_hosts = true;
    let (mut short, mut full, mut prefer_full) = (None, None, false);
    if let Some(config) = config {
        if config.flag("preserve_hostname", false).map_err(crate::output::line)? {
            return Ok(msg!("preserve_hostname: left as it is"));
        }
        full = config.text("fqdn").map_err(crate::output::line)?.map(str::as_bytes);
        short = config.text("hostname").map_err(crate::output::line)?.map(str::as_bytes);
        prefer_full = config.flag("prefer_fqdn_over_hostname", false).map_err(crate::output::line)?;
        manage_hosts = config.value("manage_etc_hosts").is_none_or(|v| v.as_bool() != Some(false));
    }
    let (short, full) = wisp_core::hostname::short_and_full(short, full, value.unwrap_or(b""));
    if short.is_empty() {
        return Ok(msg!("no hostname in the metadata: left as it is"));
    }
    let full = if full.trim_ascii().is_empty() { short } else { full };
    let (short, full) = match (Hostname::parse(short), Hostname::parse(full)) {
        (Ok(short), Ok(full)) => (short.fqdn(), full.fqdn()),
        (Err(e), _) | (_, Err(e)) => {
            ctx.warn(format_args!("set_hostname: {} ({}): {e}: left out", Shown(short.trim_ascii_end()), Shown(full.trim_ascii_end())));
            return Ok(msg!("left as it is"));
        }
    };
    let name = if prefer_full { full } else { short };
    if name.len() > wisp_core::hostname::KERNEL_LIMIT {
        ctx.warn(format_args!("set_hostname: {name}: over 64 bytes: left out"));
        return Ok(msg!("left as it is"));
    }
    let etc = ctx.create_dir(b"/etc")?;
    let mut hostname_line = heapless::Vec::<u8, 80>::new();
    let _ = hostname_line.extend_from_slice(name.as_bytes());
    let _ = hostname_line.push(b'\n');
    let mut batch = Batch::new();
    if !etc.has_contents(b"hostname", &hostname_line).unwrap_or(false) {
        etc.stage(b"hostname", &hostname_line, 0o644, None, &mut batch).map_err(|e| crate::output::os_error("/etc/hostname", e))?;
    }
    if manage_hosts {
        let batch = &mut batch;
        let mut hosts = SystemFile::read(ctx, "/etc", "hosts", "/etc/hosts", 0o644)?;
        let mut new = [0u8; FILE_LIMIT];
        if let Some(len) = hosts_file::update(hosts.text(), full, short, &mut new).map_err(crate::output::line)? {
            hosts.replace(&new[..len], batch)?;
        }
    }
    commit(batch)?;
    wisp_os_linux::system::set_hostname(name.as_bytes()).map_err(|e| crate::output::os_error("sethostname", e))?;
    Ok(msg!("{name} ({full})"))
}

/// The metadata's keys and cloud-config's `ssh_authorized_keys`, for the default user.
#[inline(never)]
pub fn set_ssh_keys(ctx: &Context<'_>, value: Option<&[u8]>, config: Option<&CloudConfig<'static>>) -> Result<Line, Line> {
    let mut keys: heapless::Vec<PublicKey<'_>, KEYS_LIMIT> = heapless::Vec::new();
    for (index, line) in value.unwrap_or(b"").split(|&b| b == b'\n').enumerate() {
        if line.iter().all(|b| b.is_ascii_whitespace()) {
            continue;
        }
        // A key that is wrong is wrong for good: left out, so the others still get in.
        match PublicKey::parse(line) {
            Ok(key) => keys.push(key).map_err(|_| msg!("more than {KEYS_LIMIT} keys"))?,
            Err(e) => ctx.warn(format_args!("set_ssh_keys: metadata key {}: {e}: left out", index + 1)),
        }
    }
    if let Some(listed) = config.and_then(|c| c.value("ssh_authorized_keys")) {
        add_config_keys(ctx, listed, &mut keys)?;
    }
    if keys.is_empty() {
        return Ok(msg!("no keys in the metadata"));
    }
    if config.is_some_and(|c| !c.wants_default_user()) {
        return Ok(msg!("no default user (cloud-config users lists no default): {} keys not installed", keys.len()));
    }
    install_keys(ctx, ctx.config.cloud_user.as_bytes(), &keys)
}

/// The keys of a cloud-config list, validated as the metadata's are; a wrong one is
/// left out with a warning.
fn add_config_keys<'a>(ctx: &Context<'_>, listed: wisp_core::yaml::Value<'a>, keys: &mut heapless::Vec<PublicKey<'a>, KEYS_LIMIT>) -> Result<(), Line> {
    for item in cloud_config::items("ssh_authorized_keys", listed).map_err(crate::output::line)? {
        let text = cloud_config::text("ssh_authorized_keys", item).map_err(crate::output::line)?;
        match PublicKey::parse(text.as_bytes()) {
            Ok(key) => keys.push(key).map_err(|_| msg!("more than {KEYS_LIMIT} keys"))?,
            Err(e) => ctx.warn(format_args!("cloud-config line {}: ssh_authorized_keys: {e}: left out", item.line())),
        }
    }
    Ok(())
}

/// Merges `keys` into the user's `~/.ssh/authorized_keys`, never following a symlink.
fn install_keys(ctx: &Context<'_>, name: &[u8], keys: &[PublicKey<'_>]) -> Result<Line, Line> {
    let passwd = SystemFile::read(ctx, "/etc", "passwd", "/etc/passwd", 0o644)?;
    let user = accounts::find_user(passwd.text(), name).ok_or_else(|| msg!("user {} does not exist", Shown(name)))?;
    let (parent, home_name) = split_home(user.home)?;
    let home = ctx.open_dir(parent)?.open_child(home_name).map_err(|e| crate::output::path_error(user.home, e))?;
    home.create_dir(b".ssh", 0o700).map_err(|e| crate::output::os_error("~/.ssh", e))?;
    // O_NOFOLLOW: a symlink planted at ~/.ssh is refused, not followed.
    let ssh = home.open_child(b".ssh").map_err(|e| msg!("~/.ssh: {} (a symlink is refused)", Os(e)))?;
    ssh.set_owner_and_mode(user.uid, user.gid, 0o700).map_err(|e| crate::output::os_error("~/.ssh", e))?;
    let mut existing = [0u8; FILE_LIMIT];
    let existing_len = match ssh.read(b"authorized_keys", &mut existing) {
        Ok(len) => len.unwrap_or(0),
        Err(wisp_os_linux::fs::ReadError::TooLarge { limit }) => return Err(msg!("authorized_keys is larger than {limit} bytes")),
        Err(wisp_os_linux::fs::ReadError::Io(e)) => return Err(msg!("~/.ssh/authorized_keys: {} (a symlink is refused)", Os(e))),
    };
    let mut new = [0u8; FILE_LIMIT];
    let owner = Some((user.uid, user.gid));
    let count = keys.len();
    match authorized_keys::merge(&existing[..existing_len], keys, &mut new).map_err(crate::output::line)? {
        Some(len) => {
            ssh.write_atomic(b"authorized_keys", &new[..len], 0o600, owner).map_err(|e| crate::output::os_error("authorized_keys", e))?;
            Ok(msg!("{count} keys for {}", Shown(name)))
        }
        None => {
            // The keys are there; still make sure of mode and owner.
            let meta = ssh.metadata(b"authorized_keys").map_err(|e| crate::output::os_error("authorized_keys", e))?;
            if meta.is_some_and(|m| m.permissions() != 0o600 || (m.uid, m.gid) != (user.uid, user.gid)) {
                ssh.write_atomic(b"authorized_keys", &existing[..existing_len], 0o600, owner)
                    .map_err(|e| crate::output::os_error("authorized_keys", e))?;
            }
            Ok(msg!("{count} keys for {}: all present already", Shown(name)))
        }
    }
}

/// Where the sudo and doas rules of cloud-config's users go: whole files, rewritten from
/// the configuration each time, so a rerun never adds a rule twice.
const SUDOERS_USERS: (&str, &str) = ("/etc/sudoers.d", "wisp-users");
const DOAS_USERS: (&str, &str) = ("/etc/doas.d", "wisp-users.conf");
/// Most supplementary groups of one user.
const GROUPS_LIMIT: usize = 16;

/// `userdata_users`: cloud-config's `groups`, then `users` (the default user is
/// `create_default_user`'s), each with its groups, password, sudo and doas rules and
/// keys; then `password` and `chpasswd`.
#[inline(never)]
#[cfg(feature = "cloud-config")]
pub fn apply_users(ctx: &Context<'_>, config: &CloudConfig<'static>) -> Result<Line, Line> {
    let mut groups_made = 0;
    if let Some(groups) = config.value("groups") {
        groups_made = apply_groups(ctx, groups)?;
    }
    let mut sudoers = [0u8; 8 * 1024];
    let mut sudoers_out = wisp_core::out::Out::new(&mut sudoers);
    let mut doas = [0u8; 8 * 1024];
    let mut doas_out = wisp_core::out::Out::new(&mut doas);
    let mut users = 0;
    // A user that cannot be made fails the action once the others are made.
    let mut failed: Option<Line> = None;
    if let Some(list) = config.value("users") {
        cloud_config::for_each_user(list, |entry, at| -> Result<(), Line> {
            let UserEntry::User(spec) = entry else { return Ok(()) };
            let full = |_| msg!("cloud-config line {}: users: too many sudo or doas rules", at.line());
            if let Err(e) = apply_user(ctx, &spec) {
                failed = failed.or(Some(e));
                return Ok(());
            }
            if let Some(rules) = spec.sudo {
                cloud_config::for_each_line(rules, "sudo", |rule| {
                    sudoers_out.put_all(&[spec.name.as_bytes(), b" ", rule.as_bytes(), b"\n"]).map_err(full)
                })?;
            }
            if let Some(rules) = spec.doas {
                cloud_config::for_each_line(rules, "doas", |rule| doas_out.put_all(&[rule.as_bytes(), b"\n"]).map_err(full))?;
            }
            users += 1;
            Ok(())
        })?;
    }
    for ((directory, file), rules) in [(SUDOERS_USERS, sudoers_out.written()), (DOAS_USERS, doas_out.written())] {
        let dir = match ctx.open_dir(directory.as_bytes()) {
            Ok(dir) => dir,
            Err(_) if rules.is_empty() => continue,
            Err(_) => ctx.create_dir(directory.as_bytes())?,
        };
        if rules.is_empty() {
            dir.remove(file.as_bytes()).map_err(|e| msg!("{directory}/{file}: {}", Os(e)))?;
        } else if !dir.has_contents(file.as_bytes(), rules).unwrap_or(false) {
            dir.write_atomic(file.as_bytes(), rules, 0o440, None).map_err(|e| msg!("{directory}/{file}: {}", Os(e)))?;
        }
    }
    let passwords = crate::passwords::apply(ctx, config)?;
    match failed {
        Some(e) => Err(e),
        None => Ok(msg!("{users} users, {groups_made} groups, {passwords} passwords")),
    }
}

/// One user of `users`.
#[cfg(feature = "cloud-config")]
fn apply_user(ctx: &Context<'_>, spec: &cloud_config::UserSpec<'static>) -> Result<(), Line> {
    let mut groups: heapless::Vec<&[u8], GROUPS_LIMIT> = heapless::Vec::new();
    if let Some(listed) = spec.groups {
        cloud_config::for_each_name("users", listed, |name, at| {
            groups.push(name.as_bytes()).map_err(|_| cloud_config::error("users", at, "more than 16 groups"))
        })
        .map_err(crate::output::line)?;
    }
    let mut hash = [0u8; 128];
    let password = crate::passwords::shadow_field(spec.hashed_passwd, spec.plain_text_passwd, spec.lock_passwd, &mut hash)?;
    let account = Account {
        name: spec.name.as_bytes(),
        gecos: spec.gecos.unwrap_or("").as_bytes(),
        home: spec.homedir.map(str::as_bytes),
        shell: spec.shell.unwrap_or("/bin/sh").as_bytes(),
        primary_group: spec.primary_group.map(str::as_bytes),
        groups: &groups,
        optional_groups: &[],
        system: spec.system,
        uid: spec.uid,
        create_home: !spec.no_create_home && !spec.system,
        password: password.unwrap_or(b"*"),
        set_password: password.is_some(),
        expiry: spec.expiry,
    };
    let mut passwd = [0u8; FILE_LIMIT];
    let passwd = ctx.read(b"/etc/passwd", &mut passwd)?.unwrap_or(b"");
    accounts::check_requested_account(passwd, account.name, spec.uid, spec.system).map_err(|e| msg!("user {}: {e}", Shown(account.name)))?;
    let mut done: heapless::Vec<&str, 8> = heapless::Vec::new();
    let mut batch = Batch::new();
    ensure_account(ctx, &account, &mut done, &mut batch).and_then(|_| commit(batch)).map_err(|e| msg!("user {}: {e}", Shown(spec.name.as_bytes())))?;
    if let Some(listed) = spec.ssh_authorized_keys {
        let mut keys: heapless::Vec<PublicKey<'_>, KEYS_LIMIT> = heapless::Vec::new();
        add_config_keys(ctx, listed, &mut keys)?;
        install_keys(ctx, spec.name.as_bytes(), &keys).map_err(|e| msg!("user {}: {e}", Shown(spec.name.as_bytes())))?;
    }
    Ok(())
}

/// cloud-config's `groups`: names, or `{group: [members]}`; members that are not users
/// are left out, as cloud-init does.
#[cfg(feature = "cloud-config")]
fn apply_groups(ctx: &Context<'_>, groups: wisp_core::yaml::Value<'static>) -> Result<usize, Line> {
    let mut made = 0;
    // Read once for every group: /etc/group is kept up to date as groups are added.
    let passwd = SystemFile::read(ctx, "/etc", "passwd", "/etc/passwd", 0o644)?;
    let mut group = SystemFile::read(ctx, "/etc", "group", "/etc/group", 0o644)?;
    let mut new = [0u8; FILE_LIMIT];
    // Every group's change is one rewrite of /etc/group, made when all are known.
    let mut staged = Batch::new();
    let batch = &mut staged;
    let mut ensure = |name: &str, members: Option<wisp_core::yaml::Value<'static>>| -> Result<(), Line> {
        if accounts::find_group(group.text(), name.as_bytes()).is_none() {
            let id = accounts::free_id_in(passwd.text(), group.text(), accounts::SYSTEM_IDS).ok_or_else(|| msg!("{}", accounts::AccountsError::NoFreeId))?;
            let len = accounts::add_group(group.text(), name.as_bytes(), id, &mut new).map_err(|e| msg!("group {}: {e}", Shown(name.as_bytes())))?;
            group.replace(&new[..len], batch)?;
            made += 1;
        }
        if let Some(members) = members {
            cloud_config::for_each_name("groups", members, |member, _| -> Result<(), Line> {
                if accounts::find_user(passwd.text(), member.as_bytes()).is_none() {
                    crate::output::error(format_args!("groups: {}: no user {}: not added", Shown(name.as_bytes()), Shown(member.as_bytes())));
                    return Ok(());
                }
                if let Some(len) = accounts::add_member(group.text(), name.as_bytes(), member.as_bytes(), &mut new).map_err(crate::output::line)? {
                    group.replace(&new[..len], batch)?;
                }
                Ok(())
            })?;
        }
        Ok(())
    };
    match cloud_config::items("groups", groups) {
        Ok(items) => {
            for item in items {
                if item.kind() == wisp_core::yaml::Kind::Mapping {
                    for (name, members) in item.entries() {
                        ensure(cloud_config::text("groups", name).map_err(crate::output::line)?, Some(members).filter(|m| !m.is_null()))?;
                    }
                } else {
                    ensure(cloud_config::text("groups", item).map_err(crate::output::line)?, None)?;
                }
            }
        }
        // One string of comma-separated names, as cloud-init also takes.
        Err(_) => cloud_config::for_each_name("groups", groups, |name, _| ensure(name, None))?,
    }
    commit(staged)?;
    Ok(made)
}
