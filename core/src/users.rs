//! The accounts on the host: the default user, cloud-config's `users` and `groups`, and
//! the keys installed for them. The text edits are `accounts`' and `authorized_keys'`;
//! this module reads and replaces the files, each step checking its own piece so that a
//! rerun after a crash completes what is missing.

use core::fmt;

use crate::accounts::{self, AccountsError, User, DOAS_RULE, SUDOERS_RULE};
use crate::authorized_keys::{self, PublicKey};
use crate::cloud_config::{self, CloudConfig, UserEntry};
use crate::host::files::{Files, Kind};
use crate::host::messages::Messages;
use crate::host::room::Room;
use crate::host::system::System;
use crate::out::Out;
use crate::system_files::{self, call_failed, commit, directory_itself, failed, file_buffers, has_contents, is_directory, joined, said, split_path, SystemFile, FILE_LIMIT, SYMLINK, TOO_LARGE};
use crate::text::{Decimal, Plain};

/// Most keys installed at once.
pub const KEYS_LIMIT: usize = 32;
// The messages name it and FILE_LIMIT as literals, not numbers formatted.
const _: () = assert!(KEYS_LIMIT == 32 && FILE_LIMIT == 32768);
/// Longest home directory path.
pub const HOME_LIMIT: usize = 64;

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
    /// cloud-config's `expiredate` and `inactive`, for an account made now.
    pub expiry: accounts::Expiry,
    /// Asked for by cloud-config's `users`: its name is checked, and uid 0 or an existing
    /// system account (without `system`) is refused before anything is written.
    pub requested: bool,
}

/// The account's uid once it exists as described, and whether an optional group was
/// missing.
pub struct Ensured {
    pub uid: u32,
    pub missing_optional: bool,
}

/// The steps `ensure_account` took, named for the result line.
pub type Done = heapless::Vec<&'static str, 8>;

/// Creates or completes an account, each step checking its own piece so that a rerun
/// after a crash completes what is missing; `done` names the steps taken. The files it
/// changes are staged in the host's batch, for the caller to commit; a new password field
/// is dated `today` (days since 1970).
pub fn ensure_account<H: Files + System + Messages + Room>(host: &mut H, account: &Account<'_>, today: u64, done: &mut Done) -> Result<Ensured, H::Text> {
    let name = account.name;
    let mut room = host.room(4 * FILE_LIMIT, "/etc/passwd, group and shadow")?;
    let [passwd_buf, group_buf, shadow_buf, new] = file_buffers(&mut room);
    let mut passwd = SystemFile::read(host, "/etc/passwd", 0o644, passwd_buf)?;
    let mut group = SystemFile::read(host, "/etc/group", 0o644, group_buf)?;
    let mut shadow = SystemFile::read(host, "/etc/shadow", 0o640, shadow_buf)?;
    if account.requested {
        accounts::check_requested_account(passwd.text(), name, account.uid, account.system).map_err(|e| said(host, &e))?;
    }
    let ids = if account.system { accounts::SYSTEM_IDS } else { accounts::FIRST_ID..=accounts::LAST_ID };
    let (uid, gid, home) = match accounts::find_user(passwd.text(), name) {
        Some(user) => (user.uid, user.gid, home_path(host, user.home)?),
        None => {
            // Checked before anything is written, so a refused user leaves nothing behind.
            if let Some(uid) = account.uid.filter(|&uid| !accounts::uid_is_free(passwd.text(), uid)) {
                return Err(host.text(format_args!("uid {uid} is taken", uid = Decimal(uid as u64))));
            }
            let group_name = account.primary_group.unwrap_or(name);
            let gid = match accounts::find_group(group.text(), group_name) {
                Some(own) => own.gid,
                None => {
                    // A given uid gives its number to the user's own group too, where free.
                    let id = match account.uid {
                        Some(uid) if accounts::gid_is_free(group.text(), uid) => uid,
                        _ => free_id(host, &passwd, &group, ids.clone())?,
                    };
                    let made = accounts::add_group(group.text(), group_name, id, new);
                    stage_step(host, &mut group, made, new, "group", done)?;
                    id
                }
            };
            // The user's number matches its group's where that number is free.
            let uid = match account.uid {
                Some(uid) => uid,
                None if accounts::uid_is_free(passwd.text(), gid) && ids.contains(&gid) => gid,
                None => free_id(host, &passwd, &group, ids)?,
            };
            let home = match account.home {
                Some(home) => home_path(host, home)?,
                None => {
                    let mut home = heapless::Vec::<u8, HOME_LIMIT>::new();
                    let _ = home.extend_from_slice(b"/home/");
                    home.extend_from_slice(name).map_err(|_| host.text(format_args!("home directory name too long")))?;
                    home
                }
            };
            let user = User { name, uid, gid, home: &home, shell: account.shell };
            let made = accounts::add_user(passwd.text(), &user, account.gecos, new);
            stage_step(host, &mut passwd, made, new, "user", done)?;
            (uid, gid, home)
        }
    };
    if !accounts::has_shadow_entry(shadow.text(), name) {
        let made = accounts::add_shadow(shadow.text(), name, account.password, today, account.expiry, new);
        stage_step(host, &mut shadow, made, new, "shadow", done)?;
    } else if account.set_password {
        let made = crate::shadow::set_shadow_password(shadow.text(), name, account.password, today, new);
        stage_step(host, &mut shadow, made, new, "password", done)?;
    }
    let mut missing_optional = false;
    for (&member_of, optional) in account.groups.iter().map(|g| (g, false)).chain(account.optional_groups.iter().map(|g| (g, true))) {
        if !optional && accounts::find_group(group.text(), member_of).is_none() {
            let id = free_id(host, &passwd, &group, accounts::SYSTEM_IDS)?;
            let made = accounts::add_group(group.text(), member_of, id, new);
            stage_step(host, &mut group, made, new, "", done)?;
        }
        match accounts::add_member(group.text(), member_of, name, new) {
            Ok(None) => {}
            Err(AccountsError::MissingGroup) => missing_optional = true,
            Ok(Some(len)) => stage_step(host, &mut group, Ok(len), new, if optional { "wheel" } else { "groups" }, done)?,
            Err(e) => return Err(said(host, &e)),
        }
    }
    if account.create_home && create_home(host, &home, uid, gid)? {
        let _ = done.push("home");
    }
    Ok(Ensured { uid, missing_optional })
}

/// The first id in `ids` that no user and no group has.
#[inline(never)]
fn free_id<H: Messages>(host: &H, passwd: &SystemFile<'_>, group: &SystemFile<'_>, ids: core::ops::RangeInclusive<u32>) -> Result<u32, H::Text> {
    accounts::free_id_in(passwd.text(), group.text(), ids).ok_or_else(|| said(host, &AccountsError::NoFreeId))
}

/// Stages the text an `accounts` edit made in `new` as `file`'s new contents, and names
/// the step in `done` (an empty name: a step the result line does not name). An edit that
/// changes nothing is no step.
#[inline(never)]
fn stage_step<H: System + Messages>(host: &mut H, file: &mut SystemFile<'_>, made: Result<usize, AccountsError>, new: &[u8], step: &'static str, done: &mut Done) -> Result<(), H::Text> {
    let new = &new[..made.map_err(|e| said(host, &e))?];
    if new != file.text() {
        file.replace(new, host)?;
        if !step.is_empty() {
            let _ = done.push(step);
        }
    }
    Ok(())
}

/// The default user (`name`, from CLOUD_USER), in group `wheel` where the image has one,
/// with sudo's and doas' rules for `wheel` where those tools are.
pub fn create_default_user<H: Files + System + Messages + Room>(host: &mut H, name: &[u8], config: Option<&CloudConfig<'_>>, today: u64) -> Result<H::Text, H::Text> {
    if config.is_some_and(|c| !c.wants_default_user()) {
        return Ok(host.text(format_args!("cloud-config users lists no default: {} not created", H::shown(name))));
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
        requested: false,
    };
    let mut done = Done::new();
    // The account's files and its rules take their new contents together.
    let ensured = ensure_account(host, &account, today, &mut done)?;
    for (directory, path, rule) in [SUDOERS_RULE, DOAS_RULE] {
        // Like tiny-cloud, a rule only where the tool's drop-in directory exists; or where
        // this run's userdata_users makes it, so that a rerun, finding the directory an
        // earlier run made, decides as the first run did.
        let doas = directory == DOAS_RULE.0;
        if !rules_directory(host, directory, config.is_some_and(|c| c.has_user_rules(doas)))? {
            continue;
        }
        let path = path.as_bytes();
        if !has_contents(host, path, rule.as_bytes(), &mut [0u8; 64]) {
            host.stage(path, rule.as_bytes(), 0o440, None).map_err(|e| call_failed(host, path, e))?;
            let _ = done.push(if doas { "doas" } else { "sudo" });
        }
    }
    commit(host)?;
    let user = H::shown(name);
    let note = if ensured.missing_optional { " (no wheel group: no admin rights)" } else { "" };
    Ok(match done.is_empty() {
        true => host.text(format_args!("{user} already exists{note}", note = Plain(note))),
        false => host.text(format_args!("{user} (uid {}):{}{note}", Decimal(ensured.uid as u64), Steps(&done), note = Plain(note))),
    })
}

/// Whether the directory of sudo's or doas' rules is there, made when missing if `make`.
fn rules_directory<H: Files + Messages>(host: &mut H, directory: &str, make: bool) -> Result<bool, H::Text> {
    if !is_directory(host, directory.as_bytes()) {
        if !make {
            return Ok(false);
        }
        system_files::make_dir(host, directory.as_bytes())?;
    }
    Ok(true)
}

/// The steps taken, each after a space.
struct Steps<'a>(&'a [&'static str]);

impl fmt::Display for Steps<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for step in self.0 {
            f.write_str(" ")?;
            f.write_str(step)?;
        }
        Ok(())
    }
}

fn home_path<H: Messages>(host: &H, home: &[u8]) -> Result<heapless::Vec<u8, HOME_LIMIT>, H::Text> {
    heapless::Vec::from_slice(home).map_err(|_| host.text(format_args!("home directory {} is too long", H::shown(home))))
}

fn split_home<'h, H: Messages>(host: &H, home: &'h [u8]) -> Result<(&'h [u8], &'h [u8]), H::Text> {
    split_path(home).ok_or_else(|| host.text(format_args!("home directory {} is not an absolute path", H::shown(home))))
}

/// The user's home, created if missing and never through a symlink; `Ok(true)` if made.
fn create_home<H: Files + Messages>(host: &mut H, home: &[u8], uid: u32, gid: u32) -> Result<bool, H::Text> {
    let (parent, _) = split_home(host, home)?;
    system_files::make_dir(host, parent)?;
    let home_error = |host: &H, e| call_failed(host, home, e);
    let created = host.create_dir(home, 0o755).map_err(|e| home_error(host, e))?;
    let meta = host.metadata(home).map_err(|e| home_error(host, e))?;
    // A home still root's is one a crash left between mkdir and chown: it gets its owner.
    let left_by_crash = matches!(meta, Some(m) if m.kind == Kind::Directory && m.uid == 0 && uid != 0);
    if created || left_by_crash {
        host.set_owner_and_mode(home, uid, gid, 0o755).map_err(|e| home_error(host, e))?;
    }
    Ok(created)
}

/// The metadata's keys (one a line) and cloud-config's `ssh_authorized_keys`, for the
/// default user `name`. A key that is wrong is left out with a warning.
#[inline(never)]
pub fn set_ssh_keys<H: Files + Messages + Room>(host: &mut H, name: &[u8], value: Option<&[u8]>, config: Option<&CloudConfig<'_>>) -> Result<H::Text, H::Text> {
    let mut keys: heapless::Vec<PublicKey<'_>, KEYS_LIMIT> = heapless::Vec::new();
    for (index, line) in value.unwrap_or(b"").split(|&b| b == b'\n').enumerate() {
        if line.iter().all(|b| b.is_ascii_whitespace()) {
            continue;
        }
        // A key that is wrong is wrong for good: left out, so the others still get in.
        match PublicKey::parse(line) {
            Ok(key) => keys.push(key).map_err(|_| too_many_keys(host))?,
            Err(e) => host.warn(format_args!("set_ssh_keys: metadata key {}: {e}: left out", Decimal((index + 1) as u64))),
        }
    }
    if let Some(listed) = config.and_then(|c| c.value("ssh_authorized_keys")) {
        add_config_keys(host, listed, &mut keys)?;
    }
    if keys.is_empty() {
        return Ok(host.text(format_args!("no keys in the metadata")));
    }
    if config.is_some_and(|c| !c.wants_default_user()) {
        return Ok(host.text(format_args!("no default user (cloud-config users lists no default): {} keys not installed", Decimal(keys.len() as u64))));
    }
    install_keys(host, name, &keys)
}

/// The keys of a cloud-config list, validated as the metadata's are; a wrong one is
/// left out with a warning.
fn add_config_keys<'a, H: Messages>(host: &H, listed: crate::yaml::NodeRef<'a>, keys: &mut heapless::Vec<PublicKey<'a>, KEYS_LIMIT>) -> Result<(), H::Text> {
    for item in cloud_config::items("ssh_authorized_keys", listed)? {
        let text = cloud_config::text("ssh_authorized_keys", item)?;
        match PublicKey::parse(text.as_bytes()) {
            Ok(key) => keys.push(key).map_err(|_| too_many_keys(host))?,
            Err(e) => host.warn(format_args!("cloud-config line {}: ssh_authorized_keys: {e}: left out", Decimal(item.line().into()))),
        }
    }
    Ok(())
}

fn too_many_keys<H: Messages>(host: &H) -> H::Text {
    host.text(format_args!("more than 32 keys"))
}

/// Merges `keys` into the user's `~/.ssh/authorized_keys`, never through a symlink (at
/// the home, at `.ssh` or at the file).
pub fn install_keys<H: Files + Messages + Room>(host: &mut H, name: &[u8], keys: &[PublicKey<'_>]) -> Result<H::Text, H::Text> {
    let mut room = host.room(3 * FILE_LIMIT, "/etc/passwd and authorized_keys")?;
    let [passwd_buf, existing, new] = file_buffers(&mut room);
    let passwd = SystemFile::read(host, "/etc/passwd", 0o644, passwd_buf)?;
    let user = accounts::find_user(passwd.text(), name).ok_or_else(|| host.text(format_args!("user {} does not exist", H::shown(name))))?;
    let (parent, _) = split_home(host, user.home)?;
    let ssh_error = |host: &H, e| call_failed(host, b"~/.ssh", e);
    let refused = |host: &H, what: &str, e| failed(host, what.as_bytes(), e, " (a symlink is refused)");
    if let Err(e) = host.list(parent, &mut |_| {}) {
        return Err(host.path_error(parent, e));
    }
    directory_itself(host, user.home).map_err(|e| call_failed(host, user.home, e))?;
    let mut ssh = [0u8; HOME_LIMIT + 8];
    let ssh = joined(&mut ssh, &[user.home, b"/.ssh"]);
    let mut file = [0u8; HOME_LIMIT + 24];
    let file = joined(&mut file, &[ssh, b"/authorized_keys"]);
    host.create_dir(ssh, 0o700).map_err(|e| ssh_error(host, e))?;
    // A symlink planted at ~/.ssh is refused, not followed.
    directory_itself(host, ssh).map_err(|e| refused(host, "~/.ssh", e))?;
    host.set_owner_and_mode(ssh, user.uid, user.gid, 0o700).map_err(|e| ssh_error(host, e))?;
    let meta = host.metadata(file).map_err(|e| refused(host, "~/.ssh/authorized_keys", e))?;
    if meta.is_some_and(|m| m.kind == Kind::Symlink) {
        return Err(refused(host, "~/.ssh/authorized_keys", SYMLINK));
    }
    let existing_len = match host.read(file, existing) {
        Ok(len) => len.unwrap_or(0),
        Err(TOO_LARGE) => return Err(host.text(format_args!("authorized_keys is larger than 32768 bytes"))),
        Err(e) => return Err(refused(host, "~/.ssh/authorized_keys", e)),
    };
    let owner = Some((user.uid, user.gid));
    let count = keys.len();
    let write_error = |host: &H, e| call_failed(host, b"authorized_keys", e);
    let present = match authorized_keys::merge(&existing[..existing_len], keys, new).map_err(|e| said(host, &e))? {
        Some(len) => {
            host.write(file, &new[..len], 0o600, owner).map_err(|e| write_error(host, e))?;
            ""
        }
        None => {
            // The keys are there; still make sure of mode and owner.
            if meta.is_some_and(|m| m.mode != 0o600 || (m.uid, m.gid) != (user.uid, user.gid)) {
                host.write(file, &existing[..existing_len], 0o600, owner).map_err(|e| write_error(host, e))?;
            }
            ": all present already"
        }
    };
    Ok(host.text(format_args!("{count} keys for {}{}", H::shown(name), Plain(present), count = Decimal(count as u64))))
}

/// Where the sudo and doas rules of cloud-config's users go: whole files, rewritten from
/// the configuration each time, so a rerun never adds a rule twice.
const SUDOERS_USERS: (&str, &str) = ("/etc/sudoers.d", "/etc/sudoers.d/wisp-users");
const DOAS_USERS: (&str, &str) = ("/etc/doas.d", "/etc/doas.d/wisp-users.conf");
/// Most supplementary groups of one user.
const GROUPS_LIMIT: usize = 16;
/// Largest file of the users' sudo rules, and of their doas rules.
const RULES_LIMIT: usize = 8 * 1024;

/// `userdata_users`: cloud-config's `groups`, then `users` (the default user is
/// `create_default_user`'s), each with its groups, password, sudo and doas rules and
/// keys; then `password` and `chpasswd` for `default_user`. Dates are `today`'s.
#[inline(never)]
pub fn apply_users<H: Files + System + Messages + Room>(host: &mut H, default_user: &str, config: &CloudConfig<'_>, today: u64) -> Result<H::Text, H::Text> {
    let mut groups_made = 0;
    if let Some(groups) = config.value("groups") {
        groups_made = apply_groups(host, groups)?;
    }
    // The two files' new text, and room to compare one with what is on disk.
    let mut room = host.room(3 * RULES_LIMIT + 1, "sudo and doas rules")?;
    let (rules, on_disk) = room.split_at_mut_checked(2 * RULES_LIMIT).unwrap_or_default();
    let (sudoers, doas) = rules.split_at_mut(rules.len() / 2);
    let mut sudoers_out = Out::new(sudoers);
    let mut doas_out = Out::new(doas);
    let mut users = 0;
    // A user that cannot be made fails the action once the others are made.
    let mut first_failure: Option<H::Text> = None;
    if let Some(list) = config.value("users") {
        cloud_config::for_each_user(list, |entry, at| -> Result<(), H::Text> {
            let UserEntry::User(spec) = entry else { return Ok(()) };
            if let Err(e) = apply_user(host, spec, today) {
                first_failure.get_or_insert(e);
                return Ok(());
            }
            let full = |_| system_files::at_line(host, at, "users: too many sudo or doas rules");
            // A sudoers line starts with the user's name; a doas rule names it itself.
            let name = spec.name.as_bytes();
            for (key, rules, out, user, space) in [("sudo", spec.sudo, &mut sudoers_out, name, &b" "[..]), ("doas", spec.doas, &mut doas_out, b"", b"")] {
                if let Some(rules) = rules {
                    cloud_config::for_each_line(rules, key, |rule| out.put_all(&[user, space, rule.as_bytes(), b"\n"]).map_err(full))?;
                }
            }
            users += 1;
            Ok(())
        })?;
    }
    for ((directory, path), rules) in [(SUDOERS_USERS, sudoers_out.written()), (DOAS_USERS, doas_out.written())] {
        if !rules_directory(host, directory, !rules.is_empty())? {
            continue;
        }
        let path = path.as_bytes();
        let rules_error = |host: &H, e| call_failed(host, path, e);
        if rules.is_empty() {
            host.remove(path).map_err(|e| rules_error(host, e))?;
        } else if !has_contents(host, path, rules, on_disk) {
            host.write(path, rules, 0o440, None).map_err(|e| rules_error(host, e))?;
        }
    }
    let passwords = crate::passwords::apply(host, default_user, config, today)?;
    match first_failure {
        Some(e) => Err(e),
        None => Ok(host.text(format_args!("{users} users, {groups_made} groups, {passwords} passwords", users = Decimal(users as u64), groups_made = Decimal(groups_made as u64), passwords = Decimal(passwords as u64)))),
    }
}

/// One user of `users`.
#[inline(never)]
fn apply_user<H: Files + System + Messages + Room>(host: &mut H, spec: &cloud_config::UserSpec<'_>, today: u64) -> Result<(), H::Text> {
    let mut groups: heapless::Vec<&[u8], GROUPS_LIMIT> = heapless::Vec::new();
    if let Some(listed) = spec.groups {
        cloud_config::for_each_name("users", listed, |name, at| groups.push(name.as_bytes()).map_err(|_| cloud_config::error("users", at, cloud_config::Problem::TooManyGroups)))
            .map_err(|e| said(host, &e))?;
    }
    let mut hash = [0u8; crate::passwords::HASH_LIMIT];
    let password = crate::passwords::shadow_field(host, spec.hashed_passwd, spec.plain_text_passwd, spec.lock_passwd, &mut hash)?;
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
        requested: true,
    };
    let mut done = Done::new();
    let in_user = |host: &H, e| host.text(format_args!("user {}: {e}", H::shown(spec.name.as_bytes())));
    if let Err(e) = ensure_account(host, &account, today, &mut done).and_then(|_| commit(host)) {
        // The next user starts from the files as they are, without this one's pieces.
        host.discard();
        return Err(in_user(host, e));
    }
    if let Some(listed) = spec.ssh_authorized_keys {
        let mut keys: heapless::Vec<PublicKey<'_>, KEYS_LIMIT> = heapless::Vec::new();
        add_config_keys(host, listed, &mut keys)?;
        install_keys(host, spec.name.as_bytes(), &keys).map_err(|e| in_user(host, e))?;
    }
    Ok(())
}

/// cloud-config's `groups`: names, or `{group: [members]}`; members that are not users
/// are left out, as cloud-init does. The number of groups made.
fn apply_groups<H: Files + System + Messages + Room>(host: &mut H, groups: crate::yaml::NodeRef<'_>) -> Result<usize, H::Text> {
    let mut made = 0;
    // Read once for every group: /etc/group is kept up to date as groups are added.
    let mut room = host.room(3 * FILE_LIMIT, "/etc/passwd and group")?;
    let [passwd_buf, group_buf, new] = file_buffers(&mut room);
    let passwd = SystemFile::read(host, "/etc/passwd", 0o644, passwd_buf)?;
    let mut group = SystemFile::read(host, "/etc/group", 0o644, group_buf)?;
    // Every group's change is one rewrite of /etc/group, made when all are known.
    let mut ensure = |host: &mut H, name: &str, members: Option<crate::yaml::NodeRef<'_>>| -> Result<(), H::Text> {
        if accounts::find_group(group.text(), name.as_bytes()).is_none() {
            let id = free_id(host, &passwd, &group, accounts::SYSTEM_IDS)?;
            let len = accounts::add_group(group.text(), name.as_bytes(), id, new).map_err(|e| host.text(format_args!("group {}: {e}", H::shown(name.as_bytes()))))?;
            group.replace(&new[..len], host)?;
            made += 1;
        }
        if let Some(members) = members {
            cloud_config::for_each_name("groups", members, |member, _| -> Result<(), H::Text> {
                if accounts::find_user(passwd.text(), member.as_bytes()).is_none() {
                    host.error(format_args!("groups: {}: no user {}: not added", H::shown(name.as_bytes()), H::shown(member.as_bytes())));
                    return Ok(());
                }
                if let Some(len) = accounts::add_member(group.text(), name.as_bytes(), member.as_bytes(), new).map_err(|e| said(host, &e))? {
                    group.replace(&new[..len], host)?;
                }
                Ok(())
            })?;
        }
        Ok(())
    };
    match cloud_config::items("groups", groups) {
        Ok(items) => {
            for item in items {
                if item.kind() == crate::yaml::Kind::Mapping {
                    for (name, members) in item.entries() {
                        ensure(host, cloud_config::text("groups", name)?, Some(members).filter(|m| !m.is_null()))?;
                    }
                } else {
                    ensure(host, cloud_config::text("groups", item)?, None)?;
                }
            }
        }
        // One string of comma-separated names, as cloud-init also takes.
        Err(_) => cloud_config::for_each_name("groups", groups, |name, _| ensure(host, name, None))?,
    }
    commit(host)?;
    Ok(made)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::host::memory::{MemoryHost, MemorySystem};
    use crate::host::HostError;
    use crate::yaml::{Arena, Node};

    const KEY_A: &str = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIP6zWIGFsiIt1uW2eXmASHnCRo/IiaNJBUNBBBA8SwbT alice@laptop";
    const KEY_B: &str = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8g bob@desk";
    const TODAY: u64 = 20_000;

    /// An image with root and a few system accounts, `/etc` and `/home`.
    fn image() -> MemorySystem {
        MemorySystem::new(MemoryHost::new())
            .with_dir("/etc", (0, 0))
            .with_dir("/home", (0, 0))
            .with_file("/etc/passwd", "root:x:0:0:root:/root:/bin/sh\ndaemon:x:2:2::/:/sbin/nologin\n")
            .with_file("/etc/group", "root:x:0:\nwheel:x:10:root\n")
            .with_file("/etc/shadow", "root:*:19000:0:::::\n")
    }

    /// `source` as cloud-config, for `check`.
    pub fn with_config<R>(source: &str, check: impl FnOnce(&CloudConfig<'_>) -> R) -> R {
        let mut nodes = std::vec![Node::EMPTY; 512];
        let mut text = std::vec![0u8; 4096];
        let mut arena = Arena::new(&mut nodes, &mut text);
        let root = arena.parse(source.as_bytes()).unwrap();
        let mut config = CloudConfig::default();
        config.add(arena.value(root)).unwrap();
        check(&config)
    }

    #[test]
    fn the_default_user_takes_the_first_free_number_for_user_and_group_and_owns_its_home() {
        let mut host = image();
        let said = create_default_user(&mut host, b"alpine", None, TODAY).unwrap();
        assert_eq!(said, "alpine (uid 1000): group user shadow wheel home");
        assert!(host.contents("/etc/passwd").unwrap().ends_with("alpine:x:1000:1000:Linux User,,,:/home/alpine:/bin/sh\n"));
        assert!(host.contents("/etc/group").unwrap().contains("wheel:x:10:root,alpine\nalpine:x:1000:\n"));
        assert!(host.contents("/etc/shadow").unwrap().ends_with("alpine:*:20000:0:99999:7:::\n"));
        let home = host.meta("/home/alpine");
        assert_eq!((home.uid, home.gid, home.mode), (1000, 1000, 0o755));
        // The three files took their new contents in one commit (/etc/group, staged
        // twice, once).
        assert_eq!(host.commits, 1);
        assert_eq!(host.host.calls.iter().filter(|c| c.starts_with("stage")).count(), 4);
    }

    #[test]
    fn a_rerun_finds_the_account_and_changes_nothing() {
        let mut host = image();
        create_default_user(&mut host, b"alpine", None, TODAY).unwrap();
        let files = host.host.files.clone();
        assert_eq!(create_default_user(&mut host, b"alpine", None, TODAY + 1).unwrap(), "alpine already exists");
        assert_eq!(host.host.files, files);
    }

    #[test]
    fn taken_numbers_are_skipped_and_the_user_takes_its_groups_number_where_free() {
        let mut host = image()
            .with_file("/etc/passwd", "root:x:0:0:root:/root:/bin/sh\nann:x:1000:1000::/home/ann:/bin/sh\nbob:x:1002:1002::/home/bob:/bin/sh\n")
            .with_file("/etc/group", "root:x:0:\nann:x:1000:\nstaff:x:1001:\n");
        let said = create_default_user(&mut host, b"alpine", None, TODAY).unwrap();
        // 1000 and 1001 are groups', 1002 a user's: both numbers are 1003.
        assert_eq!(said, "alpine (uid 1003): group user shadow home (no wheel group: no admin rights)");
        assert!(host.contents("/etc/passwd").unwrap().ends_with("alpine:x:1003:1003:Linux User,,,:/home/alpine:/bin/sh\n"));
    }

    #[test]
    fn an_existing_group_of_the_users_name_gives_its_number() {
        let mut host = image().with_file("/etc/group", "root:x:0:\nalpine:x:1500:\n");
        create_default_user(&mut host, b"alpine", None, TODAY).unwrap();
        assert!(host.contents("/etc/passwd").unwrap().ends_with("alpine:x:1500:1500:Linux User,,,:/home/alpine:/bin/sh\n"));
    }

    #[test]
    fn a_home_a_crash_left_owned_by_root_gets_its_owner_on_the_rerun() {
        let mut host = image().with_dir("/home/alpine", (0, 0));
        let said = create_default_user(&mut host, b"alpine", None, TODAY).unwrap();
        // Not made by this run, so not said; but owned by the user now.
        assert_eq!(said, "alpine (uid 1000): group user shadow wheel");
        assert_eq!((host.meta("/home/alpine").uid, host.meta("/home/alpine").gid), (1000, 1000));
    }

    #[test]
    fn a_symlink_at_the_home_is_never_given_to_the_user() {
        let mut host = image().with_symlink("/home/alpine");
        create_default_user(&mut host, b"alpine", None, TODAY).unwrap();
        assert_eq!(host.meta("/home/alpine").uid, 0);
        assert!(!host.host.calls.iter().any(|c| c.starts_with("set_owner_and_mode")));
    }

    #[test]
    fn the_sudo_rule_goes_only_where_sudo_is() {
        let mut host = image().with_dir("/etc/sudoers.d", (0, 0));
        let said = create_default_user(&mut host, b"alpine", None, TODAY).unwrap();
        assert_eq!(said, "alpine (uid 1000): group user shadow wheel home sudo");
        assert_eq!(host.contents("/etc/sudoers.d/wheel"), Some("%wheel ALL=(ALL) NOPASSWD: ALL\n"));
        assert_eq!(host.meta("/etc/sudoers.d/wheel").mode, 0o440);
        assert!(host.contents("/etc/doas.d/wheel.conf").is_none());
    }

    #[test]
    fn room_the_host_refuses_is_said_by_name_and_changes_nothing() {
        let mut host = image();
        host.no_room = true;
        let files = host.host.files.clone();
        let e = create_default_user(&mut host, b"alpine", None, TODAY).unwrap_err();
        assert_eq!(e, "cannot reserve 131072 bytes for /etc/passwd, group and shadow");
        assert_eq!(host.host.files, files);
        assert_eq!(host.commits, 0);
        let e = install_keys(&mut host, b"root", &[]).unwrap_err();
        assert_eq!(e, "cannot reserve 98304 bytes for /etc/passwd and authorized_keys");
    }

    #[test]
    fn limits_are_said_with_their_numbers() {
        assert_eq!(too_many_keys(&image()), "more than 32 keys");
        let mut host = image();
        create_default_user(&mut host, b"alpine", None, TODAY).unwrap();
        let mut host = host.with_dir("/home/alpine/.ssh", (1000, 1000)).with_file("/home/alpine/.ssh/authorized_keys", &"#".repeat(FILE_LIMIT + 1));
        assert_eq!(install_keys(&mut host, b"alpine", &[]).unwrap_err(), "authorized_keys is larger than 32768 bytes");
    }

    #[test]
    fn a_failed_host_call_commits_nothing() {
        let mut host = image();
        host.host.fail.insert(b"/etc/shadow".to_vec(), HostError { errno: 28 });
        let files = host.host.files.clone();
        // The metadata call of /etc/shadow fails: nothing was committed.
        let e = create_default_user(&mut host, b"alpine", None, TODAY).unwrap_err();
        assert_eq!(e, "/etc/shadow: errno 28");
        assert_eq!(host.host.files, files);
        assert_eq!(host.commits, 0);
    }

    #[test]
    fn users_with_refused_names_or_uid_0_are_refused_and_leave_nothing_behind() {
        for (users, error) in [
            ("users: [{name: evil, uid: 0}]", "user evil: uid 0 is root's: refused"),
            ("users: [{name: root}]", "user root: the account exists with uid 0: refused"),
            ("users: [{name: daemon}]", "user daemon: an existing system account: refused"),
            ("users: [{name: ann, uid: 2}]", "user ann: uid 2 is taken"),
        ] {
            with_config(users, |config| {
                let mut host = image();
                let files = host.host.files.clone();
                let e = apply_users(&mut host, "alpine", config, TODAY).unwrap_err();
                assert_eq!(e, error);
                assert_eq!(host.host.files, files, "{users}");
            });
        }
        with_config("users: [{name: \"-rf\"}]", |config| {
            let e = apply_users(&mut image(), "alpine", config, TODAY).unwrap_err();
            assert!(e.starts_with("user -rf: "), "{e}");
        });
    }

    #[test]
    fn a_user_of_cloud_config_gets_its_uid_groups_rules_and_keys() {
        let source = std::format!(
            "users:\n  - default\n  - name: gina\n    uid: 2000\n    groups: [adm, wheel]\n    sudo: ALL=(ALL) ALL\n    ssh_authorized_keys: [\"{KEY_A}\", \"not a key\"]\n"
        );
        with_config(&source, |config| {
            let mut host = image().with_dir("/etc/sudoers.d", (0, 0));
            let said = apply_users(&mut host, "alpine", config, TODAY).unwrap();
            assert_eq!(said, "1 users, 0 groups, 0 passwords");
            let passwd = host.contents("/etc/passwd").unwrap();
            assert!(passwd.ends_with("gina:x:2000:2000::/home/gina:/bin/sh\n"), "{passwd}");
            let group = host.contents("/etc/group").unwrap();
            assert!(group.contains("wheel:x:10:root,gina\n") && group.contains("adm:x:100:gina\n"), "{group}");
            assert_eq!(host.contents("/etc/sudoers.d/wisp-users"), Some("gina ALL=(ALL) ALL\n"));
            assert_eq!(host.contents("/home/gina/.ssh/authorized_keys").unwrap(), std::format!("{KEY_A}\n"));
            let keys = host.meta("/home/gina/.ssh/authorized_keys");
            assert_eq!((keys.mode, keys.uid, keys.gid), (0o600, 2000, 2000));
            let said = host.said.borrow();
            assert_eq!(said.len(), 1);
            assert!(said[0].starts_with("warning: cloud-config line 7: ssh_authorized_keys: ") && said[0].ends_with(": left out"), "{said:?}");
        });
    }

    #[test]
    fn a_user_that_fails_leaves_none_of_its_pieces_to_the_next() {
        let long = "/x".repeat(40);
        let source = std::format!("users:\n  - name: ann\n    homedir: {long}\n  - name: bob\n");
        with_config(&source, |config| {
            // bob is there already: his run stages nothing, and commits.
            let mut host = image()
                .with_file("/etc/passwd", "root:x:0:0:root:/root:/bin/sh\nbob:x:1000:1000::/home/bob:/bin/sh\n")
                .with_file("/etc/group", "root:x:0:\nbob:x:1000:\n")
                .with_file("/etc/shadow", "root:*:19000:0:::::\nbob:*:19000:0:99999:7:::\n")
                .with_dir("/home/bob", (1000, 1000));
            let e = apply_users(&mut host, "alpine", config, TODAY).unwrap_err();
            assert_eq!(e, std::format!("user ann: home directory {long} is too long"));
            // ann's group was staged before her home was refused: it is not committed
            // with bob's (empty) batch.
            assert_eq!(host.contents("/etc/group"), Some("root:x:0:\nbob:x:1000:\n"));
            assert_eq!(host.commits, 1);
        });
    }

    #[test]
    fn groups_are_made_with_the_members_that_exist() {
        with_config("groups:\n  - admins: [root, nobody]\n  - cloud\n", |config| {
            let mut host = image();
            assert_eq!(apply_users(&mut host, "alpine", config, TODAY).unwrap(), "0 users, 2 groups, 0 passwords");
            assert!(host.contents("/etc/group").unwrap().ends_with("admins:x:100:root\ncloud:x:101:\n"));
            assert_eq!(*host.said.borrow(), ["error: groups: admins: no user nobody: not added"]);
        });
    }

    #[test]
    fn keys_are_installed_with_the_bad_ones_left_out() {
        let mut host = image();
        create_default_user(&mut host, b"alpine", None, TODAY).unwrap();
        let metadata = std::format!("{KEY_A}\nssh-rsa AAAA!!!\n\n{KEY_B}\n");
        let said = set_ssh_keys(&mut host, b"alpine", Some(metadata.as_bytes()), None).unwrap();
        assert_eq!(said, "2 keys for alpine");
        assert_eq!(host.contents("/home/alpine/.ssh/authorized_keys").unwrap(), std::format!("{KEY_A}\n{KEY_B}\n"));
        assert_eq!(host.meta("/home/alpine/.ssh").mode, 0o700);
        assert_eq!(host.meta("/home/alpine/.ssh").uid, 1000);
        let said = host.said.borrow().clone();
        assert_eq!(said.len(), 1);
        assert!(said[0].starts_with("warning: set_ssh_keys: metadata key 2: ") && said[0].ends_with(": left out"), "{said:?}");
        // Again: nothing to add, and the file is not rewritten.
        let writes = host.host.calls.iter().filter(|c| c.starts_with("write")).count();
        assert_eq!(set_ssh_keys(&mut host, b"alpine", Some(metadata.as_bytes()), None).unwrap(), "2 keys for alpine: all present already");
        assert_eq!(host.host.calls.iter().filter(|c| c.starts_with("write")).count(), writes);
    }

    #[test]
    fn keys_are_never_written_through_a_symlink() {
        let mut host = image();
        create_default_user(&mut host, b"alpine", None, TODAY).unwrap();
        let mut planted = std::mem::replace(&mut host, image()).with_symlink("/home/alpine/.ssh");
        let e = set_ssh_keys(&mut planted, b"alpine", Some(KEY_A.as_bytes()), None).unwrap_err();
        assert_eq!(e, "~/.ssh: errno 40 (a symlink is refused)");
        let mut planted = image().with_dir("/home/alpine", (1000, 1000)).with_dir("/home/alpine/.ssh", (1000, 1000)).with_symlink("/home/alpine/.ssh/authorized_keys");
        planted = planted.with_file("/etc/passwd", "alpine:x:1000:1000::/home/alpine:/bin/sh\n");
        let e = set_ssh_keys(&mut planted, b"alpine", Some(KEY_A.as_bytes()), None).unwrap_err();
        assert_eq!(e, "~/.ssh/authorized_keys: errno 40 (a symlink is refused)");
    }

    #[test]
    fn keys_wait_for_their_user() {
        let e = set_ssh_keys(&mut image(), b"alpine", Some(KEY_A.as_bytes()), None).unwrap_err();
        assert_eq!(e, "user alpine does not exist");
        assert_eq!(set_ssh_keys(&mut image(), b"alpine", Some(b"\n \n"), None).unwrap(), "no keys in the metadata");
    }
}
