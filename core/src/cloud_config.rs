//! `#cloud-config`: the keys wisp applies, read from the YAML tree with cloud-init's
//! types and defaults. Several documents merge as cloud-init's default merge does: a
//! later document's top-level key replaces an earlier one's.

use core::fmt;

use crate::out::{Full, Out};
use crate::text::{Decimal, Plain, Shown};
use crate::yaml::{Arena, Kind, NodeId, NodeRef, Scalar};

/// `KNOWN_KEYS`' text, a macro so that `ERROR_KEYS` can end with it.
macro_rules! known_keys {
    () => {
        "hostname fqdn prefer_fqdn_over_hostname preserve_hostname manage_etc_hosts users groups ssh_authorized_keys \
    write_files bootcmd runcmd packages package_update package_upgrade mounts mount_default_fields \
    chpasswd password timezone power_state ssh_deletekeys ssh_genkeytypes ssh_keys ssh_pwauth \
    ntp apk_repos apk merge_how merge_type launch-index"
    };
}

/// The keys wisp knows, separated by spaces (one string, not a table of 30 slices, to
/// keep the binary small); any other top-level key is warned about and left alone. `apk`
/// is tiny-cloud's alpine-config (`apk: repositories:`); `merge_how`, `merge_type` and
/// `launch-index` are read by cloud-init's user-data processing, not by a module.
pub const KNOWN_KEYS: &str = known_keys!();

/// Most cloud-config documents merged.
pub const DOCUMENTS_LIMIT: usize = 16;
// Its message names it as a literal, not a number formatted.
const _: () = assert!(DOCUMENTS_LIMIT == 16);

/// The keys a [`ConfigError`] names: the document itself (first: a key not listed is
/// shown as it), the users' rule keys, then the top-level ones. One word list, read by
/// `text::word_index` and `text::nth_word`.
const ERROR_KEYS: &str = concat!("cloud-config sudo doas ", known_keys!());

/// What is wrong with a value: its text is its line of `PROBLEMS`. The reasons a user or
/// group name is refused (`accounts::name_reason`) follow the variants' numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Problem {
    TooManyDocuments,
    DocumentNotAMapping,
    EntryNotAList,
    RuleHoldsLineBreak,
    RootUid,
    HomedirNotPlain,
    ExpectedTrueOrFalse,
    ExpectedText,
    ExpectedList,
    EntryNotAMapping,
    NoPath,
    PathNotPlain,
    UnknownEncoding,
    PermissionsNotOctal,
    NoUserName,
    UidNotANumber,
    ExpectedMapping,
    NoMode,
    BadMode,
    BadDelay,
    NoBaseUrl,
    UnknownKeyType,
    UnknownKeyName,
    UnknownNtpClient,
    BadNtpServer,
    BadPwauth,
    TooManyGroups,
}

/// The problems' texts, a line each in the order of `Problem`'s variants: one text, found
/// by the problem's number, not a reference per problem.
const PROBLEMS: &str = "\
more than 16 cloud-config documents\n\
the document is not a mapping of keys\n\
an entry is not a list\n\
a sudo or doas rule holds a line break\n\
uid 0 is root's: refused\n\
homedir must be an absolute path without ., .. or //\n\
expected true or false\n\
expected text\n\
expected a list\n\
an entry is not a mapping\n\
an entry has no path\n\
path must be an absolute file path without ., .. or //\n\
unknown encoding (text/plain, b64, gzip, gz+b64)\n\
permissions are not an octal mode\n\
a user has no name\n\
uid is not a number\n\
expected a mapping\n\
mode is missing (poweroff, reboot, halt)\n\
mode must be poweroff, reboot or halt\n\
delay must be now, +MINUTES or MINUTES\n\
a repository needs base_url\n\
not rsa, ecdsa, ed25519 or dsa\n\
not <rsa|ecdsa|ed25519|dsa>_<private|public|certificate>\n\
ntp_client: wisp configures chrony or ntp (busybox) only\n\
a server or pool is a host name or address\n\
not true, false or unchanged\n\
more than 16 groups";

/// The number of the first name reason, after `Problem`'s variants.
const NAME_REASONS_FROM: u32 = Problem::TooManyGroups as u32 + 1;

/// A value of the wrong shape, where it is: 8 bytes, so that a step's result comes back in
/// registers even beside a 16-byte value (`Result<&str, ConfigError>`). The problem's
/// number is kept in the top bits of the line and the key's place in `ERROR_KEYS` in the
/// top bits of the column (user-data is at most 16 MiB, so no line or column reaches
/// those bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConfigError {
    line_and_problem: u32,
    key_and_column: u32,
}

const COLUMN_BITS: u32 = 26;
const LINE_BITS: u32 = 25;
// No line or column of the largest user-data reaches the bits above it.
const _: () = assert!((crate::config::USERDATA_LIMIT_MAX as u64) < 1 << LINE_BITS && LINE_BITS <= COLUMN_BITS);
// Every problem's number, the six name reasons' too, fits above the line.
const _: () = assert!(NAME_REASONS_FROM + 6 <= 1 << (32 - LINE_BITS));

impl ConfigError {
    pub fn key(&self) -> &'static str {
        crate::text::nth_word(ERROR_KEYS, (self.key_and_column >> COLUMN_BITS) as usize)
    }

    pub fn line(&self) -> u32 {
        self.line_and_problem & ((1 << LINE_BITS) - 1)
    }

    pub fn column(&self) -> u32 {
        self.key_and_column & ((1 << COLUMN_BITS) - 1)
    }

    pub fn problem(&self) -> &'static str {
        match self.line_and_problem >> LINE_BITS {
            n if n >= NAME_REASONS_FROM => crate::accounts::name_reason((n - NAME_REASONS_FROM) as u8),
            n => crate::text::nth_part(PROBLEMS, '\n', n as usize),
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cloud-config line {} column {}: {}: {}", Decimal(self.line().into()), Decimal(self.column().into()), Plain(self.key()), Plain(self.problem()))
    }
}

/// `key` is one of `ERROR_KEYS` (a key that is not is shown as `cloud-config`).
pub fn error(key: &'static str, at: NodeRef<'_>, problem: Problem) -> ConfigError {
    numbered_error(key, at, problem as u32)
}

#[inline(never)]
fn numbered_error(key: &'static str, at: NodeRef<'_>, problem: u32) -> ConfigError {
    let index = crate::text::word_index(ERROR_KEYS, key.as_bytes());
    debug_assert!(index.is_some(), "{key} is not among the keys a ConfigError names");
    let key = (index.unwrap_or(0) as u32) << COLUMN_BITS;
    let line = at.line().min((1 << LINE_BITS) - 1) | problem << LINE_BITS;
    ConfigError { line_and_problem: line, key_and_column: key | at.column().min((1 << COLUMN_BITS) - 1) }
}

/// The cloud-config documents of one user-data, merged: a few views into the parsed
/// documents, cheap to copy.
#[derive(Clone, Default)]
pub struct CloudConfig<'a> {
    documents: heapless::Vec<NodeRef<'a>, DOCUMENTS_LIMIT>,
}

impl<'a> CloudConfig<'a> {
    /// Adds a document's root: a mapping, or nothing (an empty document).
    pub fn add(&mut self, root: NodeRef<'a>) -> Result<(), ConfigError> {
        match root.kind() {
            Kind::Mapping => self.documents.push(root).map_err(|_| error("cloud-config", root, Problem::TooManyDocuments)),
            _ if root.is_null() => Ok(()),
            _ => Err(error("cloud-config", root, Problem::DocumentNotAMapping)),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.documents.is_empty()
    }

    /// The value of `key` from the last document that has it.
    pub fn get(&self, key: &str) -> Option<NodeRef<'a>> {
        self.documents.iter().rev().find_map(|root| root.get(key))
    }

    /// A key that is present and not null.
    pub fn value(&self, key: &str) -> Option<NodeRef<'a>> {
        self.get(key).filter(|value| !value.is_null())
    }

    /// `key` as a boolean; `default` when absent.
    pub fn flag(&self, key: &'static str, default: bool) -> Result<bool, ConfigError> {
        self.value(key).map_or(Ok(default), |value| flag(key, value))
    }

    /// `key` as text; `None` when absent.
    pub fn text(&self, key: &'static str) -> Result<Option<&'a str>, ConfigError> {
        self.value(key).map(|value| text(key, value)).transpose()
    }

    /// Checks the shape of every key wisp applies, so that a mistake anywhere is found
    /// before anything of the configuration is applied.
    pub fn validate(&self) -> Result<(), ConfigError> {
        // The keys of each shape as word lists: smaller than arrays of slices.
        for key in "preserve_hostname prefer_fqdn_over_hostname package_update package_upgrade".split(' ') {
            self.flag(key, false)?;
        }
        for key in "hostname fqdn timezone password".split(' ') {
            self.text(key)?;
        }
        for key in "bootcmd runcmd".split(' ') {
            if let Some(commands) = self.value(key) {
                items(key, commands)?.try_for_each(|command| check_command(key, command))?;
            }
        }
        for key in "ssh_authorized_keys packages mounts".split(' ') {
            if let Some(list) = self.value(key) {
                items(key, list)?.try_for_each(|item| match item.kind() {
                    Kind::Sequence => item.items().try_for_each(|word| text(key, word).map(drop)),
                    _ if key == "mounts" => Err(error(key, item, Problem::EntryNotAList)),
                    // Another package manager's form (`{apt: [...]}`): left out.
                    Kind::Mapping if key == "packages" => Ok(()),
                    _ => text(key, item).map(drop),
                })?;
            }
        }
        // An entry that is wrong is left out when written (`write_file`), not the document.
        if let Some(files) = self.value("write_files") {
            let _ = items("write_files", files)?;
        }
        if let Some(users) = self.value("users") {
            for_each_user(users, |entry, at| {
                let UserEntry::User(spec) = entry else { return Ok(()) };
                // One rule a line: a line break inside one would write a rule no one wrote.
                let one_line = |rule: &str| match rule.contains(['\n', '\r']) {
                    true => Err(error(USERS, at, Problem::RuleHoldsLineBreak)),
                    false => Ok(()),
                };
                for rules in [spec.sudo, spec.doas].into_iter().flatten() {
                    for_each_line(rules, USERS, one_line)?;
                }
                // Group names are checked as each group is made (accounts::add_group).
                let problem = match crate::accounts::check_name(spec.name.as_bytes()) {
                    Err(crate::accounts::AccountsError::BadName { reason }) => NAME_REASONS_FROM + u32::from(reason),
                    _ if spec.uid == Some(0) => Problem::RootUid as u32,
                    _ if spec.homedir.is_some_and(|home| !is_plain_absolute(home)) => Problem::HomedirNotPlain as u32,
                    _ => return Ok(()),
                };
                Err(numbered_error(USERS, at, problem))
            })?;
        }
        if let Some(state) = self.value("power_state") {
            power_state(state)?;
        }
        Ok(())
    }

    /// Whether the image's default user is wanted: `users` is absent, or lists `default`
    /// (cloud-init creates it, and gives it the metadata's keys, only then).
    pub fn wants_default_user(&self) -> bool {
        self.value("users").is_none() || self.any_user(&|entry| matches!(entry, UserEntry::Default))
    }

    /// Whether an entry of `users` passes `test`; malformed entries do not.
    fn any_user(&self, test: &dyn Fn(&UserEntry<'_>) -> bool) -> bool {
        let Some(users) = self.value("users") else { return false };
        let mut found = false;
        let _ = for_each_user(users, |entry, _| {
            found |= test(entry);
            Ok::<(), ConfigError>(())
        });
        found
    }

    /// Whether some user of `users` has `sudo` rules (`doas: false`) or `doas` rules
    /// (`doas: true`): `userdata_users` then makes the tool's drop-in directory.
    pub fn has_user_rules(&self, doas: bool) -> bool {
        self.any_user(&|entry| matches!(entry, UserEntry::User(spec) if if doas { spec.doas.is_some() } else { spec.sudo.is_some() }))
    }

    /// The merged configuration as JSON (`null` when there is none): each key with the
    /// value of the last document that has it.
    pub fn write_json(&self, out: &mut impl fmt::Write) -> fmt::Result {
        if self.documents.is_empty() {
            return out.write_str("null");
        }
        out.write_char('{')?;
        let mut first = true;
        for (index, root) in self.documents.iter().enumerate() {
            for (key, value) in root.entries() {
                let replaced = self.documents[index + 1..].iter().any(|later| later.entries().any(|(k, _)| k.as_str() == key.as_str()));
                if replaced {
                    continue;
                }
                if !first {
                    out.write_char(',')?;
                }
                first = false;
                crate::yaml::write_json_key(key, out)?;
                out.write_char(':')?;
                crate::yaml::write_json(value, out)?;
            }
        }
        out.write_char('}')
    }

    /// What wisp reads but does not apply, each with its section and where it is:
    /// top-level keys it does not know (section "", once each, at the last document that
    /// has it), per-user keys it does not apply (`ssh_import_id`, `selinux_user`...), and
    /// `users` and `packages` entries of valid cloud-init forms it leaves out
    /// (`{snapuser: ...}`, `{apt: [...]}`), and `users` entries that are wrong (with the
    /// problem: such an entry is left out, the others apply).
    #[inline(never)]
    /// `note(section, user, at, problem)`: `user` names the user whose key it is.
    pub fn for_each_unapplied(&self, note: &mut dyn FnMut(&'static str, Option<&'a str>, NodeRef<'a>, Option<&'static str>)) {
        for (index, root) in self.documents.iter().enumerate() {
            for (key, _) in root.entries() {
                let name = key.as_str().unwrap_or("");
                if crate::text::word_index(KNOWN_KEYS, name.as_bytes()).is_none() && !self.documents[index + 1..].iter().any(|later| later.get(name).is_some()) {
                    note("", None, key, None);
                }
            }
        }
        for key in [USERS, "packages"] {
            let Some(list) = self.value(key) else { continue };
            if list.kind() != Kind::Sequence {
                continue;
            }
            for entry in list.items() {
                if entry.kind() != Kind::Mapping {
                    continue;
                }
                if key == "packages" || user_field(entry, "name").is_none() {
                    note(key, None, entry, None);
                    continue;
                }
                let (user, expiry) = match user_spec(entry) {
                    Ok(UserEntry::User(spec)) => (Some(spec.name), spec.expiry),
                    Ok(UserEntry::Default) => (None, Default::default()),
                    Err(e) => {
                        note(key, None, entry, Some(e.problem()));
                        continue;
                    }
                };
                for (name, value) in entry.entries() {
                    let name_text = name.as_str().unwrap_or("");
                    // Given, but not one: left out of the user.
                    let (at, problem) = match () {
                        _ if !user_key_applied(name_text) => (name, None),
                        _ if value.is_null() || user.is_none() => continue,
                        _ if same_key(name_text, "expiredate") && expiry.expire_day.is_none() => (value, Some("expiredate is not a date (YYYY-MM-DD)")),
                        _ if same_key(name_text, "inactive") && expiry.inactive_days.is_none() => (value, Some("inactive is not a number of days")),
                        _ => continue,
                    };
                    note(key, user, at, problem);
                }
            }
        }
    }
}

/// The cloud-config parts (`(index among the user-data's parts, bytes)`, in order),
/// parsed into `arena` and merged. Every document is parsed before any is merged, so a
/// YAML error anywhere applies nothing. `said` makes the error's line, which names the
/// part (counted from 1 among all the user-data's parts).
pub fn parse_documents<'a, 's, E>(arena: &'a mut Arena<'_>, parts: impl Iterator<Item = (usize, &'s [u8])>, said: impl Fn(fmt::Arguments<'_>) -> E) -> Result<CloudConfig<'a>, E> {
    let mut roots: heapless::Vec<(usize, NodeId), DOCUMENTS_LIMIT> = heapless::Vec::new();
    for (index, bytes) in parts {
        let root = arena.parse(bytes).map_err(|e| said(format_args!("user-data part {}: YAML {e}", Decimal((index + 1) as u64))))?;
        roots.push((index, root)).map_err(|_| said(format_args!("more than 16 cloud-config parts")))?;
    }
    let arena: &'a Arena<'_> = arena;
    let mut config = CloudConfig::default();
    for (index, root) in roots {
        config.add(arena.value(root)).map_err(|e| said(format_args!("user-data part {}: {e}", Decimal((index + 1) as u64))))?;
    }
    Ok(config)
}

impl CloudConfig<'_> {
    /// Says what the documents hold that wisp does not apply, each with its line: keys
    /// wisp does not know, per-user keys and entry forms it leaves out, and (with `keys`,
    /// for `wisp userdata show`; at boot the key actions say it) `write_files` entries and
    /// `ssh_authorized_keys` that are left out.
    #[inline(never)]
    pub fn warn_unapplied(&self, keys: bool, warn: &dyn Fn(fmt::Arguments<'_>)) {
        self.for_each_unapplied(&mut |section, user, at, problem| {
            let (what, end) = match problem {
                Some(problem) => (problem, "left out"),
                None => (at.as_str().unwrap_or("another module's form"), "not applied by wisp"),
            };
            let separator = Plain(if section.is_empty() { "" } else { ": " });
            let (user, user_separator) = user.map_or(("", ""), |user| (user, ": "));
            let (section, user_separator, end) = (Plain(section), Plain(user_separator), Plain(end));
            warn(format_args!("cloud-config line {}: {section}{separator}{}{user_separator}{}: {end}", Decimal(at.line().into()), Shown(user.as_bytes()), Shown(what.as_bytes())))
        });
        if !keys {
            return;
        }
        for entry in self.value("write_files").iter().flat_map(|files| files.items()) {
            if let Err(e) = write_file(entry) {
                warn(format_args!("{e}: left out"));
            }
        }
        let Some(list) = self.value("ssh_authorized_keys") else { return };
        for item in list.items() {
            if let Err(e) = crate::authorized_keys::PublicKey::parse(item.as_str().unwrap_or("").as_bytes()) {
                warn(format_args!("cloud-config line {}: ssh_authorized_keys: {e}: left out", Decimal(item.line().into())));
            }
        }
    }
}

pub fn flag(key: &'static str, value: NodeRef<'_>) -> Result<bool, ConfigError> {
    value.as_bool().ok_or_else(|| error(key, value, Problem::ExpectedTrueOrFalse))
}

/// Any scalar's text (a number is its digits), as cloud-init's `str()` gives it.
pub fn text<'a>(key: &'static str, value: NodeRef<'a>) -> Result<&'a str, ConfigError> {
    match value.kind() {
        Kind::Scalar if !value.is_null() => value.as_str().ok_or_else(|| error(key, value, Problem::ExpectedText)),
        _ => Err(error(key, value, Problem::ExpectedText)),
    }
}

/// The items of a sequence.
pub fn items<'a>(key: &'static str, value: NodeRef<'a>) -> Result<impl Iterator<Item = NodeRef<'a>>, ConfigError> {
    match value.kind() {
        Kind::Sequence => Ok(value.items()),
        _ => Err(error(key, value, Problem::ExpectedList)),
    }
}

/// Names given as a list or as one comma-separated string (`groups: [a, b]`, `"a, b"`).
pub fn for_each_name<'a, E: From<ConfigError>>(key: &'static str, value: NodeRef<'a>, mut visit: impl FnMut(&'a str, NodeRef<'a>) -> Result<(), E>) -> Result<(), E> {
    visiting(|&name, at| visit(name, at), |visit| names(key, value, visit))
}

/// `walk` with `visit` behind a `dyn` callback, so that a walk is compiled once whatever
/// the visitor and its error type: an error of `visit` stops the walk and is returned as
/// it is, one of the walk's own is converted.
fn visiting<'a, T, E: From<ConfigError>>(
    mut visit: impl FnMut(&T, NodeRef<'a>) -> Result<(), E>,
    walk: impl FnOnce(&mut dyn FnMut(&T, NodeRef<'a>) -> bool) -> Result<(), ConfigError>,
) -> Result<(), E> {
    let mut stopped = None;
    walk(&mut |item, at| match visit(item, at) {
        Ok(()) => true,
        Err(e) => {
            stopped = Some(e);
            false
        }
    })?;
    stopped.map_or(Ok(()), Err)
}

/// `for_each_name`'s walk: `visit` says whether to go on.
#[inline(never)]
fn names<'a>(key: &'static str, value: NodeRef<'a>, visit: &mut dyn FnMut(&&'a str, NodeRef<'a>) -> bool) -> Result<(), ConfigError> {
    if value.kind() == Kind::Sequence {
        for item in value.items() {
            if !visit(&text(key, item)?.trim(), item) {
                break;
            }
        }
        return Ok(());
    }
    for name in text(key, value)?.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        if !visit(&name, value) {
            break;
        }
    }
    Ok(())
}

/// An absolute path whose every component is a name: no `.`, `..` or empty one, so the
/// path is the place it spells.
pub fn is_plain_absolute(path: &str) -> bool {
    path.strip_prefix('/').is_some_and(|rest| rest.split('/').all(|part| !part.is_empty() && part != "." && part != ".."))
        && !path.contains('\0')
}

/// One string or a list of strings, each a line (sudo and doas rules).
pub fn for_each_line<'a, E: From<ConfigError>>(value: NodeRef<'a>, key: &'static str, mut visit: impl FnMut(&'a str) -> Result<(), E>) -> Result<(), E> {
    if value.kind() == Kind::Sequence {
        for item in value.items() {
            visit(text(key, item)?)?;
        }
        return Ok(());
    }
    visit(text(key, value)?)
}

/// A `bootcmd` or `runcmd` list as the shell script cloud-init makes of it: a string
/// item is a line as it is; a list item is its words, each single-quoted.
pub fn shell_script(key: &'static str, commands: NodeRef<'_>, out: &mut [u8]) -> Result<usize, ScriptError> {
    let mut out = Out::new(out);
    out.put(b"#!/bin/sh\n")?;
    for command in items(key, commands)? {
        put_command(key, command, &mut out)?;
    }
    Ok(out.len())
}

/// One command (a string for the shell, or a list of words) as a script.
pub fn command_script(key: &'static str, command: NodeRef<'_>, out: &mut [u8]) -> Result<usize, ScriptError> {
    let mut out = Out::new(out);
    out.put(b"#!/bin/sh\n")?;
    put_command(key, command, &mut out)?;
    Ok(out.len())
}

fn check_command(key: &'static str, command: NodeRef<'_>) -> Result<(), ConfigError> {
    match command.kind() {
        Kind::Sequence => command.items().try_for_each(|word| text(key, word).map(drop)),
        Kind::Scalar if command.is_null() => Ok(()),
        _ => text(key, command).map(drop),
    }
}

fn put_command(key: &'static str, command: NodeRef<'_>, out: &mut Out<'_>) -> Result<(), ScriptError> {
    match command.kind() {
        Kind::Sequence => {
            for (i, word) in command.items().enumerate() {
                out.put(if i == 0 { b"'" } else { b" '" })?;
                for (j, piece) in text(key, word)?.split('\'').enumerate() {
                    if j > 0 {
                        out.put(b"'\\''")?;
                    }
                    out.put(piece.as_bytes())?;
                }
                out.put(b"'")?;
            }
        }
        // cloud-init skips the nulls that commented-out items leave.
        Kind::Scalar if command.is_null() => return Ok(()),
        _ => out.put(text(key, command)?.as_bytes())?,
    }
    Ok(out.put(b"\n")?)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScriptError {
    Config(ConfigError),
    /// The limit is a u32, so that a `Result<usize, ScriptError>` is 16 bytes, in registers.
    TooLarge { limit: u32 },
}

impl From<ConfigError> for ScriptError {
    fn from(e: ConfigError) -> Self {
        ScriptError::Config(e)
    }
}

impl From<Full> for ScriptError {
    fn from(full: Full) -> Self {
        ScriptError::TooLarge { limit: full.limit as u32 }
    }
}

impl fmt::Display for ScriptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScriptError::Config(e) => e.fmt(f),
            ScriptError::TooLarge { limit } => write!(f, "the script would be larger than {limit} bytes", limit = Decimal((*limit).into())),
        }
    }
}

/// How a `write_files` entry's content is encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    Text,
    Base64,
    /// Bytes (`!!binary`) gzip'd.
    Gzip,
    GzipBase64,
}

impl Encoding {
    /// Room to decode `encoded` bytes of content into: base64 makes 3 bytes of 4, and a
    /// gzip'd one takes twice what it may inflate to (its base64-decoded bytes kept in
    /// the second half while the first is inflated into).
    pub fn room(self, encoded: usize) -> usize {
        let ratio = 2 * crate::gzip::DEFLATE_RATIO_LIMIT;
        match self {
            Encoding::Text => encoded,
            Encoding::Base64 => encoded / 4 * 3 + 3,
            Encoding::Gzip => encoded.saturating_mul(ratio),
            Encoding::GzipBase64 => (encoded / 4 * 3 + 3).saturating_mul(ratio),
        }
    }
}

/// One `write_files` entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteFile<'a> {
    pub path: &'a str,
    /// Text, or the bytes of `!!binary`.
    pub content: &'a [u8],
    pub encoding: Encoding,
    pub permissions: u32,
    /// `user[:group]`, as given.
    pub owner: &'a str,
    pub append: bool,
    pub defer: bool,
}

const WRITE_FILES: &str = "write_files";

/// The names `encoding` takes, any case: the first is empty (`encoding: ""` is text).
const ENCODING_NAMES: &str = " text/plain b64 base64 gz gzip gz+base64 gzip+base64 gz+b64 gzip+b64";

/// A `write_files` entry, with cloud-init's defaults (0644, root:root, text).
pub fn write_file(entry: NodeRef<'_>) -> Result<WriteFile<'_>, ConfigError> {
    if entry.kind() != Kind::Mapping {
        return Err(error(WRITE_FILES, entry, Problem::EntryNotAMapping));
    }
    let field = |name: &str| entry.get(name).filter(|v| !v.is_null());
    let path_value = field("path").ok_or_else(|| error(WRITE_FILES, entry, Problem::NoPath))?;
    let path = text(WRITE_FILES, path_value)?;
    if !is_plain_absolute(path) {
        return Err(error(WRITE_FILES, path_value, Problem::PathNotPlain));
    }
    let encoding = match field("encoding") {
        None => Encoding::Text,
        Some(at) => {
            // Each name's encoding, in the order of `ENCODING_NAMES`.
            use Encoding::{Base64, Gzip, GzipBase64, Text};
            const ENCODINGS: [Encoding; 10] = [Text, Text, Base64, Base64, Gzip, Gzip, GzipBase64, GzipBase64, GzipBase64, GzipBase64];
            let name = text(WRITE_FILES, at)?.trim();
            let index = crate::text::word_index_ignoring_case(ENCODING_NAMES, name.as_bytes());
            index.map(|index| ENCODINGS[index]).ok_or_else(|| error(WRITE_FILES, at, Problem::UnknownEncoding))?
        }
    };
    let permissions = match field("permissions") {
        None => 0o644,
        Some(value) => permissions(value).ok_or_else(|| error(WRITE_FILES, value, Problem::PermissionsNotOctal))?,
    };
    Ok(WriteFile {
        path,
        content: match field("content") {
            Some(value) => match value.scalar() {
                Some(Scalar::Binary(bytes)) => bytes,
                _ => text(WRITE_FILES, value)?.as_bytes(),
            },
            None => b"",
        },
        encoding,
        permissions,
        owner: field("owner").map(|v| text(WRITE_FILES, v)).transpose()?.unwrap_or("root:root"),
        append: field("append").map(|v| flag(WRITE_FILES, v)).transpose()?.unwrap_or(false),
        defer: field("defer").map(|v| flag(WRITE_FILES, v)).transpose()?.unwrap_or(false),
    })
}

/// cloud-init's `decode_perms`: a YAML integer as it is (`0644` is octal in YAML 1.1),
/// text as octal digits.
fn permissions(value: NodeRef<'_>) -> Option<u32> {
    let mode = match value.scalar()? {
        Scalar::Int(n) => u32::try_from(n).ok()?,
        Scalar::Str(digits) => {
            let digits = digits.trim();
            let digits = digits.strip_prefix("0o").unwrap_or(digits);
            if digits.is_empty() || digits.len() > 6 {
                return None;
            }
            digits.bytes().try_fold(0u32, |mode, b| matches!(b, b'0'..=b'7').then(|| mode * 8 + u32::from(b - b'0')))?
        }
        _ => return None,
    };
    (mode <= 0o7777).then_some(mode)
}

/// One entry of `users`.
#[derive(Clone, Copy)]
#[allow(clippy::large_enum_variant)] // Lives on the stack one at a time.
pub enum UserEntry<'a> {
    /// `default`: the image's default user, CLOUD_USER.
    Default,
    User(UserSpec<'a>),
}

/// A user as `users` describes it, with cloud-init's defaults.
#[derive(Clone, Copy)]
pub struct UserSpec<'a> {
    pub name: &'a str,
    pub gecos: Option<&'a str>,
    pub primary_group: Option<&'a str>,
    /// Supplementary groups: a list or a comma-separated string.
    pub groups: Option<NodeRef<'a>>,
    pub shell: Option<&'a str>,
    pub homedir: Option<&'a str>,
    pub system: bool,
    pub no_create_home: bool,
    pub lock_passwd: bool,
    /// The user's number; wisp picks a free one when absent.
    pub uid: Option<u32>,
    /// A password hash (`passwd` or `hashed_passwd`).
    pub hashed_passwd: Option<&'a str>,
    pub plain_text_passwd: Option<&'a str>,
    /// sudoers rules: one string, or a list; `false` or absent: none.
    pub sudo: Option<NodeRef<'a>>,
    /// doas rules (whole lines), a list.
    pub doas: Option<NodeRef<'a>>,
    pub ssh_authorized_keys: Option<NodeRef<'a>>,
    /// `inactive` and `expiredate`, where they are valid.
    pub expiry: crate::accounts::Expiry,
}

const USERS: &str = "users";

/// The entries of `users`: a list of names and mappings, or a comma-separated string.
pub fn for_each_user<'a, E: From<ConfigError>>(users: NodeRef<'a>, visit: impl FnMut(&UserEntry<'a>, NodeRef<'a>) -> Result<(), E>) -> Result<(), E> {
    visiting(visit, |visit| user_entries(users, visit))
}

/// `for_each_user`'s walk: `visit` says whether to go on.
#[inline(never)]
fn user_entries<'a>(users: NodeRef<'a>, visit: &mut dyn FnMut(&UserEntry<'a>, NodeRef<'a>) -> bool) -> Result<(), ConfigError> {
    if users.kind() != Kind::Sequence {
        return names(USERS, users, &mut |&name, at| visit(&named(name), at));
    }
    for item in users.items() {
        let entry = match item.kind() {
            // Another module's form (`{snapuser: ...}`) or a wrong entry: left out, and
            // said by `for_each_unapplied`.
            Kind::Mapping => match user_spec(item) {
                Ok(entry) => entry,
                Err(_) => continue,
            },
            _ => named(text(USERS, item)?.trim()),
        };
        if !visit(&entry, item) {
            break;
        }
    }
    Ok(())
}

fn named(name: &str) -> UserEntry<'_> {
    match name {
        "default" => UserEntry::Default,
        name => UserEntry::User(UserSpec {
            name,
            gecos: None,
            primary_group: None,
            groups: None,
            shell: None,
            homedir: None,
            system: false,
            no_create_home: false,
            lock_passwd: true,
            uid: None,
            hashed_passwd: None,
            plain_text_passwd: None,
            sudo: None,
            doas: None,
            ssh_authorized_keys: None,
            expiry: crate::accounts::Expiry { inactive_days: None, expire_day: None },
        }),
    }
}

/// The per-user keys wisp applies (one string, not a table, to keep the binary small).
const USER_KEYS: &str = "name gecos primary_group groups shell homedir system no_create_home lock_passwd \
    hashed_passwd passwd plain_text_passwd uid sudo doas ssh_authorized_keys expiredate inactive";

fn user_key_applied(key: &str) -> bool {
    USER_KEYS.split(' ').any(|known| same_key(key, known))
}

/// `key` is `name` written with `_` or `-` (cloud-init reads `lock-passwd` as `lock_passwd`).
fn same_key(key: &str, name: &str) -> bool {
    key.len() == name.len() && key.bytes().zip(name.bytes()).all(|(k, n)| k == n || (k == b'-' && n == b'_'))
}

/// A user's key, written with `_` or `-` (cloud-init reads `lock-passwd` as `lock_passwd`).
fn user_field<'a>(item: NodeRef<'a>, name: &str) -> Option<NodeRef<'a>> {
    item.entries().filter(|(key, _)| key.as_str().is_some_and(|key| same_key(key, name))).map(|(_, value)| value).last().filter(|v| !v.is_null())
}

fn user_spec(item: NodeRef<'_>) -> Result<UserEntry<'_>, ConfigError> {
    let field = |name: &str| user_field(item, name);
    let text_field = |name: &str| field(name).map(|v| text(USERS, v)).transpose();
    let name_value = field("name").ok_or_else(|| error(USERS, item, Problem::NoUserName))?;
    let UserEntry::User(mut spec) = named(text(USERS, name_value)?) else {
        return Ok(UserEntry::Default);
    };
    // A key that is present replaces cloud-init's default (`named`'s); checked in this
    // order, so the first wrong one is the one said. Loops over the fields, not code per field.
    for (slot, name) in [(&mut spec.gecos, "gecos"), (&mut spec.primary_group, "primary_group"), (&mut spec.shell, "shell"), (&mut spec.homedir, "homedir")] {
        if let Some(value) = field(name) {
            *slot = Some(text(USERS, value)?);
        }
    }
    spec.groups = field("groups");
    for (slot, name) in [(&mut spec.system, "system"), (&mut spec.no_create_home, "no_create_home"), (&mut spec.lock_passwd, "lock_passwd")] {
        if let Some(value) = field(name) {
            *slot = flag(USERS, value)?;
        }
    }
    spec.hashed_passwd = match text_field("hashed_passwd")? {
        Some(hash) => Some(hash),
        None => text_field("passwd")?,
    };
    spec.plain_text_passwd = text_field("plain_text_passwd")?;
    spec.uid = match field("uid") {
        None => None,
        Some(uid) => Some(uid.as_int().and_then(|n| u32::try_from(n).ok()).ok_or_else(|| error(USERS, uid, Problem::UidNotANumber))?),
    };
    spec.sudo = field("sudo").filter(|v| v.as_bool() != Some(false));
    spec.doas = field("doas");
    spec.ssh_authorized_keys = field("ssh_authorized_keys");
    spec.expiry = crate::accounts::Expiry {
        inactive_days: field("inactive").and_then(inactive_days),
        expire_day: field("expiredate").and_then(expire_day),
    };
    Ok(UserEntry::User(spec))
}

/// `inactive`: days, as useradd's `--inactive` takes them (cloud-init passes text only;
/// a YAML number's digits are taken too).
fn inactive_days(value: NodeRef<'_>) -> Option<u32> {
    crate::text::decimal(value.as_str()?.as_bytes(), 9).map(|days| days as u32)
}

/// `expiredate`: `YYYY-MM-DD`, as days since 1970-01-01.
fn expire_day(value: NodeRef<'_>) -> Option<u32> {
    crate::clock::days_from_date(value.as_str()?.as_bytes()).map(|day| day as u32)
}

/// `power_state`: what to do once the bootstrap is complete.
#[derive(Clone, Copy, Debug)]
pub struct PowerState<'a> {
    pub mode: PowerMode,
    /// Seconds to wait first (`now`: 0; `+N`: N minutes, as shutdown(8) reads it).
    pub delay_seconds: u64,
    pub message: Option<&'a str>,
    /// `condition`: true, false, or a command whose exit status decides.
    pub condition: Condition<'a>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PowerMode {
    Poweroff,
    Reboot,
    Halt,
}

impl PowerMode {
    /// The image's own tool for it, so that services stop cleanly (a path inside the
    /// root), and its name: run as `NAME -d SECONDS`.
    pub fn program(self) -> (&'static core::ffi::CStr, &'static core::ffi::CStr) {
        match self {
            PowerMode::Poweroff => (c"/sbin/poweroff", c"poweroff"),
            PowerMode::Reboot => (c"/sbin/reboot", c"reboot"),
            PowerMode::Halt => (c"/sbin/halt", c"halt"),
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub enum Condition<'a> {
    Always,
    Never,
    Command(NodeRef<'a>),
}

const POWER_STATE: &str = "power_state";

pub fn power_state(value: NodeRef<'_>) -> Result<PowerState<'_>, ConfigError> {
    if value.kind() != Kind::Mapping {
        return Err(error(POWER_STATE, value, Problem::ExpectedMapping));
    }
    let field = |name: &str| value.get(name).filter(|v| !v.is_null());
    let mode_value = field("mode").ok_or_else(|| error(POWER_STATE, value, Problem::NoMode))?;
    const MODES: [PowerMode; 3] = [PowerMode::Poweroff, PowerMode::Reboot, PowerMode::Halt];
    let mode = crate::text::word_index("poweroff reboot halt", text(POWER_STATE, mode_value)?.as_bytes())
        .map(|index| MODES[index])
        .ok_or_else(|| error(POWER_STATE, mode_value, Problem::BadMode))?;
    let delay_seconds = match field("delay") {
        None => 0,
        Some(delay) => match (delay.scalar(), delay.as_str().map(str::trim)) {
            (_, Some("now")) => 0,
            (Some(Scalar::Int(minutes)), _) if minutes >= 0 => minutes as u64 * 60,
            (_, Some(text)) => text
                .strip_prefix('+')
                .and_then(|m| crate::text::decimal(m.as_bytes(), 6))
                .map(|minutes| minutes * 60)
                .ok_or_else(|| error(POWER_STATE, delay, Problem::BadDelay))?,
            _ => return Err(error(POWER_STATE, delay, Problem::BadDelay)),
        },
    };
    let condition = match field("condition") {
        None => Condition::Always,
        Some(c) if c.as_bool() == Some(true) => Condition::Always,
        Some(c) if c.as_bool() == Some(false) => Condition::Never,
        Some(c) => Condition::Command(c),
    };
    Ok(PowerState { mode, delay_seconds, message: field("message").map(|m| text(POWER_STATE, m)).transpose()?, condition })
}


#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{Arena, Node};

    /// Parses each document into one arena and merges them, as the binary does.
    fn with_config(documents: &[&str], check: impl FnOnce(&CloudConfig<'_>)) {
        let mut nodes = vec![Node::EMPTY; 512];
        let mut text = vec![0u8; 4096];
        let mut arena = Arena::new(&mut nodes, &mut text);
        let roots: Vec<_> = documents.iter().map(|d| arena.parse(d.as_bytes()).unwrap()).collect();
        let mut config = CloudConfig::default();
        for root in roots {
            config.add(arena.value(root)).unwrap();
        }
        check(&config);
    }

    #[test]
    fn later_documents_replace_top_level_keys() {
        with_config(&["hostname: a\nruncmd: [one]\nfrob: 1\n", "runcmd: [two]\n", "#cloud-config\n"], |config| {
            assert_eq!(config.text("hostname"), Ok(Some("a")));
            assert_eq!(config.get("runcmd").unwrap().items().next().unwrap().as_str(), Some("two"));
            let mut unknown = Vec::new();
            config.for_each_unapplied(&mut |section, _, key, _| unknown.push((section, key.as_str().unwrap().to_string())));
            assert_eq!(unknown, [("", "frob".to_string())]);
            let mut json = String::new();
            config.write_json(&mut json).unwrap();
            assert_eq!(json, r#"{"hostname":"a","frob":1,"runcmd":["two"]}"#);
        });
        with_config(&[], |config| {
            let mut json = String::new();
            config.write_json(&mut json).unwrap();
            assert_eq!(json, "null");
        });
    }

    #[test]
    fn shell_scripts_as_cloud_init_writes_them() {
        with_config(&["runcmd:\n  - echo 'a b'\n  - [ls, -l, \"it's\"]\n  -\n  - 42\n"], |config| {
            let mut out = [0u8; 256];
            let len = shell_script("runcmd", config.get("runcmd").unwrap(), &mut out).unwrap();
            assert_eq!(&out[..len], b"#!/bin/sh\necho 'a b'\n'ls' '-l' 'it'\\''s'\n42\n");
            let mut small = [0u8; 12];
            assert_eq!(shell_script("runcmd", config.get("runcmd").unwrap(), &mut small), Err(ScriptError::TooLarge { limit: 12 }));
        });
    }

    #[test]
    fn every_encoding_name_in_any_case() {
        let names = [
            ("''", Encoding::Text), ("text/plain", Encoding::Text), ("TEXT/PLAIN", Encoding::Text), ("b64", Encoding::Base64), ("Base64", Encoding::Base64),
            ("gz", Encoding::Gzip), ("GZIP", Encoding::Gzip), ("gz+base64", Encoding::GzipBase64), ("gzip+base64", Encoding::GzipBase64),
            ("gz+b64", Encoding::GzipBase64), ("Gzip+B64", Encoding::GzipBase64), ("' gzip '", Encoding::Gzip), ("' '", Encoding::Text),
        ];
        for (name, encoding) in names {
            let doc = std::format!("write_files:\n  - {{path: /a, encoding: {name}}}\n");
            with_config(&[&doc], |config| {
                let entry = config.get("write_files").unwrap().items().next().unwrap();
                assert_eq!(write_file(entry).map(|file| file.encoding).ok(), Some(encoding), "{name}");
            });
        }
        for name in ["text", "b 64", "gzip+", "gz b64"] {
            let doc = std::format!("write_files:\n  - {{path: /a, encoding: {name}}}\n");
            with_config(&[&doc], |config| {
                let entry = config.get("write_files").unwrap().items().next().unwrap();
                assert!(write_file(entry).is_err(), "{name}");
            });
        }
    }

    #[test]
    fn write_files_entries_and_defaults() {
        let doc = "write_files:\n  - path: /etc/a\n  - path: /etc/b\n    encoding: GZ+B64\n    permissions: 0750\n    owner: app:app\n    append: true\n    defer: yes\n  - {path: /etc/c, permissions: '644', encoding: base64}\n";
        with_config(&[doc], |config| {
            let entries: Vec<_> = config.get("write_files").unwrap().items().map(|e| write_file(e).unwrap()).collect();
            assert_eq!(entries[0], WriteFile { path: "/etc/a", content: b"", encoding: Encoding::Text, permissions: 0o644, owner: "root:root", append: false, defer: false });
            assert_eq!((entries[1].encoding, entries[1].permissions, entries[1].owner, entries[1].append, entries[1].defer), (Encoding::GzipBase64, 0o750, "app:app", true, true));
            assert_eq!((entries[2].encoding, entries[2].permissions), (Encoding::Base64, 0o644));
        });
        // `!!binary` content is bytes, gzip'd or not, as PyYAML gives cloud-init.
        let doc = "write_files:\n  - {path: /a, encoding: gzip, content: !!binary H4sIAAAAAAAAA0sEAEO+t+gBAAAA}\n  - {path: /b, encoding: Gz, content: x}\n  - {path: /c, content: !!binary AP8=}\n";
        with_config(&[doc], |config| {
            let entries: Vec<_> = config.get("write_files").unwrap().items().map(|e| write_file(e).unwrap()).collect();
            assert_eq!((entries[0].encoding, entries[0].content.len(), &entries[0].content[..2]), (Encoding::Gzip, 21, &[0x1f, 0x8b][..]));
            assert_eq!((entries[1].encoding, entries[1].content), (Encoding::Gzip, &b"x"[..]));
            assert_eq!((entries[2].encoding, entries[2].content), (Encoding::Text, &[0, 255][..]));
        });
        for (doc, problem) in [
            ("write_files:\n  - path: etc/x\n", "path must be an absolute file path without ., .. or //"),
            ("write_files:\n  - path: /a/../b\n", "path must be an absolute file path without ., .. or //"),
            ("write_files:\n  - content: x\n", "an entry has no path"),
            ("write_files:\n  - path: /x\n    permissions: 0800\n", "permissions are not an octal mode"),
            ("write_files:\n  - path: /x\n    encoding: zstd\n", "unknown encoding (text/plain, b64, gzip, gz+b64)"),
            ("write_files:\n  - /x\n", "an entry is not a mapping"),
        ] {
            with_config(&[doc], |config| {
                let entry = config.get("write_files").unwrap().items().next().unwrap();
                assert_eq!(write_file(entry).unwrap_err().problem(), problem, "{doc}");
            });
        }
    }

    #[test]
    fn users_in_every_form() {
        let doc = "users:\n  - default\n  - bob\n  - name: carol\n    lock-passwd: false\n    uid: 2000\n    sudo: false\n    groups: a, b\n";
        with_config(&[doc], |config| {
            let mut seen = Vec::new();
            for_each_user(config.get("users").unwrap(), |entry, _| {
                seen.push(match entry {
                    UserEntry::Default => ("default".to_string(), true, None, false),
                    UserEntry::User(spec) => (spec.name.to_string(), spec.lock_passwd, spec.uid, spec.sudo.is_some()),
                });
                Ok::<(), ConfigError>(())
            })
            .unwrap();
            assert_eq!(seen, [("default".into(), true, None, false), ("bob".into(), true, None, false), ("carol".into(), false, Some(2000), false)]);
        });
        with_config(&["users: [bob]\n"], |config| assert!(!config.wants_default_user()));
        with_config(&["hostname: h\n"], |config| assert!(config.wants_default_user()));
        with_config(&["users: [default, {name: a, sudo: \"ALL=(ALL) ALL\"}, {name: b, sudo: false}]\n"], |config| {
            assert!(config.has_user_rules(false) && !config.has_user_rules(true));
        });
        with_config(&["users: [{name: b, sudo: false, doas: [permit b]}]\n"], |config| {
            assert!(!config.has_user_rules(false) && config.has_user_rules(true));
        });
        with_config(&["hostname: h\n"], |config| assert!(!config.has_user_rules(false) && !config.has_user_rules(true)));
        with_config(&["users: \"default, dave\"\n"], |config| {
            assert!(config.wants_default_user());
            let mut names = Vec::new();
            for_each_user(config.get("users").unwrap(), |entry, _| {
                names.push(matches!(entry, UserEntry::Default));
                Ok::<(), ConfigError>(())
            })
            .unwrap();
            assert_eq!(names, [true, false]);
        });
    }

    #[test]
    fn forms_and_keys_wisp_does_not_apply_are_named_and_left_out() {
        let doc = "users:\n  - default\n  - {snapuser: joe@example.com}\n  - name: carol\n    expiredate: '2030-02-30'\n    ssh-import-id: [gh:carol]\n    lock-passwd: false\n    inactive: '7'\n  - {name: dan, expiredate: 2031-01-01, inactive: soon}\npackages:\n  - mg\n  - {apt: [mg]}\n  - [curl, '8.0']\n";
        let wrong = "users:\n  - {name: dave, uid: many}\n  - erin\n";
        with_config(&[wrong], |config| {
            assert_eq!(config.validate(), Ok(()));
            let mut noted = Vec::new();
            config.for_each_unapplied(&mut |key, _, at, problem| noted.push((key, at.line(), problem)));
            assert_eq!(noted, [("users", 2, Some("uid is not a number"))]);
            let mut names = Vec::new();
            for_each_user(config.get("users").unwrap(), |entry, _| {
                names.push(matches!(entry, UserEntry::User(spec) if spec.name == "erin"));
                Ok::<(), ConfigError>(())
            })
            .unwrap();
            assert_eq!(names, [true]);
        });
        with_config(&[doc], |config| {
            assert_eq!(config.validate(), Ok(()));
            let mut noted = Vec::new();
            config.for_each_unapplied(&mut |key, user, at, problem| noted.push((key, user, at.line(), problem.or(at.as_str()).map(str::to_string))));
            assert_eq!(
                noted,
                [
                    ("users", None, 3, None),
                    ("users", Some("carol"), 5, Some("expiredate is not a date (YYYY-MM-DD)".to_string())),
                    ("users", Some("carol"), 6, Some("ssh-import-id".to_string())),
                    ("users", Some("dan"), 9, Some("inactive is not a number of days".to_string())),
                    ("packages", None, 12, None),
                ]
            );
            let mut names = Vec::new();
            for_each_user(config.get("users").unwrap(), |entry, _| {
                names.push(match entry {
                    UserEntry::Default => "default",
                    UserEntry::User(spec) => spec.name,
                });
                Ok::<(), ConfigError>(())
            })
            .unwrap();
            assert_eq!(names, ["default", "carol", "dan"]);
            let mut expiries = Vec::new();
            for_each_user(config.get("users").unwrap(), |entry, _| {
                if let UserEntry::User(spec) = entry {
                    expiries.push(spec.expiry);
                }
                Ok::<(), ConfigError>(())
            })
            .unwrap();
            use crate::accounts::Expiry;
            assert_eq!(expiries, [Expiry { inactive_days: Some(7), expire_day: None }, Expiry { inactive_days: None, expire_day: Some(22_280) }]);
        });
    }

    #[test]
    fn power_state_forms() {
        with_config(&["power_state: {mode: reboot, delay: '+5', message: bye, condition: false}\n"], |config| {
            let state = power_state(config.get("power_state").unwrap()).unwrap();
            assert_eq!((state.mode, state.delay_seconds, state.message), (PowerMode::Reboot, 300, Some("bye")));
            assert!(matches!(state.condition, Condition::Never));
        });
        with_config(&["power_state: {mode: halt, delay: now}\n"], |config| {
            let state = power_state(config.get("power_state").unwrap()).unwrap();
            assert_eq!((state.mode, state.delay_seconds), (PowerMode::Halt, 0));
            assert!(matches!(state.condition, Condition::Always));
        });
        // Each mode is the image's own tool of that name.
        for (mode, name) in [(PowerMode::Poweroff, "poweroff"), (PowerMode::Reboot, "reboot"), (PowerMode::Halt, "halt")] {
            let (program, argument0) = mode.program();
            assert_eq!((program.to_str().unwrap().strip_prefix("/sbin/"), argument0.to_str().unwrap()), (Some(name), name));
        }
        for mode in ["Reboot", "shutdown", "reboot halt"] {
            with_config(&[&std::format!("power_state: {{mode: {mode}}}\n")], |config| {
                assert_eq!(power_state(config.get("power_state").unwrap()).unwrap_err().problem(), "mode must be poweroff, reboot or halt", "{mode}");
            });
        }
        with_config(&["power_state: {mode: reboot, delay: soon}\n"], |config| {
            assert_eq!(power_state(config.get("power_state").unwrap()).unwrap_err().problem(), "delay must be now, +MINUTES or MINUTES");
        });
    }

    #[test]
    fn an_error_keeps_its_key_line_and_column() {
        with_config(&["a: 1\nb:   [x]\n"], |config| {
            let at = config.get("b").unwrap();
            for key in ERROR_KEYS.split(' ') {
                let e = error(key, at, Problem::ExpectedText);
                assert_eq!((e.key(), e.line(), e.column(), e.problem()), (key, 2, 6, "expected text"));
                assert_eq!(e.to_string(), format!("cloud-config line 2 column 6: {key}: expected text"));
            }
            assert!(ERROR_KEYS.split(' ').count() < 1 << (32 - COLUMN_BITS));
        });
    }

    #[test]
    fn each_problem_has_its_line() {
        assert_eq!(PROBLEMS.split('\n').count(), NAME_REASONS_FROM as usize);
        with_config(&["a: 1\n"], |config| {
            let at = config.get("a").unwrap();
            assert_eq!(error("users", at, Problem::TooManyDocuments).problem(), "more than 16 cloud-config documents");
            assert_eq!(error("users", at, Problem::TooManyGroups).problem(), "more than 16 groups");
            assert_eq!(numbered_error("users", at, NAME_REASONS_FROM + 5).problem(), crate::accounts::name_reason(5));
            assert_eq!(numbered_error("users", at, NAME_REASONS_FROM).to_string(), "cloud-config line 1 column 4: users: a user or group name is longer than 32 bytes");
        });
    }

    #[test]
    fn validation_finds_a_mistake_anywhere() {
        for (doc, key, problem, line) in [
            ("hostname: [a]\n", "hostname", "expected text", 1),
            ("a: 1\nruncmd:\n  - {x: 1}\n", "runcmd", "expected text", 3),
            ("package_update: maybe\n", "package_update", "expected true or false", 1),
            ("mounts:\n  - /dev/vdb\n", "mounts", "an entry is not a list", 2),
            ("users:\n  - name: x\n    doas: \"permit x\\npermit y\"\n", "users", "a sudo or doas rule holds a line break", 2),
        ] {
            with_config(&[doc], |config| {
                let e = config.validate().unwrap_err();
                assert_eq!((e.key(), e.problem(), e.line()), (key, problem, line), "{doc}");
            });
        }
        with_config(&["hostname: h\nruncmd: [a, [b, c]]\nusers: [default]\n"], |config| assert_eq!(config.validate(), Ok(())));
    }

    #[test]
    fn hostile_accounts_refused_before_anything_is_applied() {
        let name = "a user or group name starts with '.'";
        let chars = "a user or group name holds more than letters, digits, '.', '_' and '-'";
        for (doc, key, problem, line) in [
            ("users:\n  - name: ../../root\n    ssh_authorized_keys: [k]\n", "users", name, 2),
            ("users: [default, ../root]\n", "users", name, 1),
            ("users: \"default, a/b\"\n", "users", chars, 1),
            ("users:\n  - name: -o\n", "users", "a user or group name starts with '-'", 2),
            ("users:\n  - name: \"a b\"\n", "users", chars, 2),
            ("users:\n  - name: \"a:0:0\"\n", "users", chars, 2),
            ("users:\n  - name: \"12345\"\n", "users", "a user or group name is all digits", 2),
            ("users:\n  - name: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n", "users", "a user or group name is longer than 32 bytes", 2),
            ("users:\n  - name: evil\n    uid: 0\n", "users", "uid 0 is root's: refused", 2),
            ("users:\n  - name: bob\n    homedir: /home/../root\n", "users", "homedir must be an absolute path without ., .. or //", 2),
            ("users:\n  - name: bob\n    homedir: home/bob\n", "users", "homedir must be an absolute path without ., .. or //", 2),
        ] {
            with_config(&[doc], |config| {
                let e = config.validate().unwrap_err();
                assert_eq!((e.key(), e.problem(), e.line()), (key, problem, line), "{doc}");
            });
        }
        // A write_files entry is refused on its own (left out with a warning), not the
        // document.
        for doc in ["write_files:\n  - path: /etc/./x\n", "write_files:\n  - path: /etc//x\n", "write_files:\n  - path: /etc/../x\n"] {
            with_config(&[doc], |config| {
                assert_eq!(config.validate(), Ok(()), "{doc}");
                let entry = items("write_files", config.value("write_files").unwrap()).unwrap().next().unwrap();
                let e = write_file(entry).map(drop).unwrap_err();
                assert_eq!((e.key(), e.problem(), e.line()), ("write_files", "path must be an absolute file path without ., .. or //", 2), "{doc}");
            });
        }
        let fine = "users:\n  - default\n  - name: svc.web-1\n    homedir: /srv/web\n    groups: [a, b]\ngroups: [{admins: [svc.web-1]}, ops]\n";
        with_config(&[fine], |config| assert_eq!(config.validate(), Ok(())));
        assert!(is_plain_absolute("/a/b") && !is_plain_absolute("/") && !is_plain_absolute("/a/") && !is_plain_absolute("/a/./b"));
    }

    #[test]
    fn garbage_never_panics() {
        const SAMPLE: &[u8] = b"users:\n  - default\n  - {name: a, groups: [b], sudo: x, uid: 5}\nwrite_files:\n  - {path: /a, permissions: 0644, encoding: b64}\nruncmd: [[a, b], c]\npower_state: {mode: reboot, delay: 1, condition: [x]}\nmounts: [[a, /b]]\n";
        crate::fuzz::seed("cloud_config", SAMPLE);
        crate::fuzz::seed("yaml_json", SAMPLE);
        let mut garbage = crate::fuzz::Garbage::new(7);
        let mut valid = 0;
        for _ in 0..2000 {
            let doc = garbage.mutated(SAMPLE, 0..SAMPLE.len(), 4);
            let mut nodes = vec![Node::EMPTY; 256];
            let mut text = vec![0u8; 2048];
            let mut arena = Arena::new(&mut nodes, &mut text);
            let Ok(root) = arena.parse(&doc) else { continue };
            let mut config = CloudConfig::default();
            if config.add(arena.value(root)).is_ok() {
                let mut json = String::new();
                config.write_json(&mut json).unwrap();
                if config.validate().is_ok() {
                    valid += 1;
                    assert!(crate::json::JsonText::parse(json.as_bytes()).is_ok() || json.contains("NaN") || json.contains("Infinity"), "{json}");
                }
                if let Some(users) = config.get("users") {
                    let _ = for_each_user(users, |_, _| Ok::<(), ConfigError>(()));
                }
            }
        }
        // Four random bytes in this short sample rarely leave it valid, but some do.
        assert!(valid > 0, "{valid}");
    }

    #[test]
    fn room_to_decode_write_files_content() {
        assert_eq!(Encoding::Text.room(10), 10);
        assert_eq!(Encoding::Base64.room(8), 9);
        assert_eq!(Encoding::Gzip.room(10), 10 * 2 * crate::gzip::DEFLATE_RATIO_LIMIT);
        assert_eq!(Encoding::GzipBase64.room(8), 9 * 2 * crate::gzip::DEFLATE_RATIO_LIMIT);
        assert_eq!(Encoding::Gzip.room(usize::MAX), usize::MAX);
    }

    fn documents(parts: &[&str]) -> Result<std::vec::Vec<std::string::String>, std::string::String> {
        let mut nodes = std::vec![Node::EMPTY; 256];
        let mut text = std::vec![0u8; 1024];
        let mut arena = Arena::new(&mut nodes, &mut text);
        let config = parse_documents(&mut arena, parts.iter().map(|p| p.as_bytes()).enumerate(), |args| std::format!("{args}"))?;
        let said = core::cell::RefCell::new(std::vec::Vec::new());
        config.warn_unapplied(true, &|args| said.borrow_mut().push(std::format!("{args}")));
        Ok(said.into_inner())
    }

    #[test]
    fn every_document_is_parsed_before_any_is_merged() {
        assert_eq!(documents(&["hostname: a\n", "key: [unclosed\n"]).unwrap_err(), "user-data part 2: YAML line 1 column 6: unterminated flow collection ([ or {)");
        assert_eq!(documents(&["hostname: a\n", "- a list\n"]).unwrap_err(), "user-data part 2: cloud-config line 1 column 1: cloud-config: the document is not a mapping of keys");
        let many: std::vec::Vec<&str> = std::iter::repeat_n("a: 1\n", DOCUMENTS_LIMIT + 1).collect();
        assert_eq!(documents(&many).unwrap_err(), "more than 16 cloud-config parts");
    }

    #[test]
    fn what_is_not_applied_is_said_with_its_line() {
        let said = documents(&["snap: {}\nusers:\n  - name: bob\n    ssh_import_id: [gh:bob]\n", "write_files:\n  - content: x\nssh_authorized_keys: [nonsense]\n"]).unwrap();
        assert_eq!(said[0], "cloud-config line 1: snap: not applied by wisp");
        assert_eq!(said[1], "cloud-config line 4: users: bob: ssh_import_id: not applied by wisp");
        assert!(said[2].ends_with(": left out") && said[2].contains("write_files"), "{said:?}");
        assert!(said[3].starts_with("cloud-config line 3: ssh_authorized_keys: "), "{said:?}");
        assert_eq!(said.len(), 4);
    }
}
