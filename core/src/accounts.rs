//! /etc/passwd, /etc/group and /etc/shadow, read and extended as adduser would, so the
//! default user can be created on an image with no busybox. Lines wisp does not
//! understand are kept byte for byte and never matched.

use core::fmt;

use crate::out::{Full, Out};
use crate::text::{Decimal, Plain};

/// The range adduser picks regular ids from.
pub const FIRST_ID: u32 = 1000;
pub const LAST_ID: u32 = 59_999;
// NoFreeId's message names the range as literals, not numbers formatted.
const _: () = assert!(FIRST_ID == 1000 && LAST_ID == 59_999);

/// 16 bytes: each text is a reference to a static `&str` (`&"..."`), so that the
/// results of the steps that make a user move less.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccountsError {
    /// The new file does not fit in the caller's buffer, whose size is the limit.
    TooLarge { file: &'static &'static str, limit: u32 },
    /// A field for a new line holds ':' or a newline.
    BadField { field: &'static &'static str },
    NoFreeId,
    MissingGroup,
    /// The user has no well-formed line in the file.
    MissingUser { file: &'static &'static str },
    /// A user or group name shadow-utils' useradd would refuse; the reason (its line of
    /// `NAME_REASONS`) says which rule.
    BadName { reason: u8 },
    /// A new account asked of user-data that would be, or take over, a privileged one.
    Privileged { reason: &'static &'static str },
}

impl fmt::Display for AccountsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            AccountsError::TooLarge { file, limit } => write!(f, "{file} would be larger than {limit} bytes", limit = Decimal(limit.into()), file = Plain(file)),
            AccountsError::BadField { field } => write!(f, "the {field} holds ':' or a line break", field = Plain(field)),
            AccountsError::NoFreeId => f.write_str("no free user and group id from 1000 to 59999"),
            AccountsError::MissingGroup => f.write_str("the group does not exist"),
            AccountsError::MissingUser { file } => write!(f, "the user has no line in {file}", file = Plain(file)),
            AccountsError::BadName { reason } => f.write_str(name_reason(reason)),
            AccountsError::Privileged { reason } => f.write_str(reason),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct User<'a> {
    pub name: &'a [u8],
    pub uid: u32,
    pub gid: u32,
    pub home: &'a [u8],
    pub shell: &'a [u8],
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Group<'a> {
    pub name: &'a [u8],
    pub gid: u32,
    pub members: &'a [u8],
}

impl Group<'_> {
    pub fn has_member(&self, user: &[u8]) -> bool {
        self.members.split(|&b| b == b',').any(|member| member == user)
    }
}

pub(crate) fn lines(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    text.split(|&b| b == b'\n')
}

/// The fields of a line with exactly `count` of them, else `None`.
pub(crate) fn fields<const N: usize>(line: &[u8]) -> Option<[&[u8]; N]> {
    let mut out = [&line[..0]; N];
    split_fields(line, &mut out).then_some(out)
}

/// `fields` for any count (`out`'s length), compiled once rather than once per count.
#[inline(never)]
fn split_fields<'a>(line: &'a [u8], out: &mut [&'a [u8]]) -> bool {
    let mut parts = line.split(|&b| b == b':');
    for slot in out.iter_mut() {
        let Some(part) = parts.next() else { return false };
        *slot = part;
    }
    parts.next().is_none()
}

fn number(digits: &[u8]) -> Option<u32> {
    u32::try_from(crate::text::decimal(digits, 10)?).ok()
}

fn parse_user(line: &[u8]) -> Option<User<'_>> {
    let [name, _, uid, gid, _, home, shell] = fields::<7>(line)?;
    Some(User { name, uid: number(uid)?, gid: number(gid)?, home, shell })
}

fn parse_group(line: &[u8]) -> Option<Group<'_>> {
    let [name, _, gid, members] = fields::<4>(line)?;
    Some(Group { name, gid: number(gid)?, members })
}

pub fn find_user<'a>(passwd: &'a [u8], name: &[u8]) -> Option<User<'a>> {
    lines(passwd).filter_map(parse_user).find(|user| user.name == name)
}

pub fn find_group<'a>(group: &'a [u8], name: &[u8]) -> Option<Group<'a>> {
    lines(group).filter_map(parse_group).find(|group| group.name == name)
}

/// Whether no line of /etc/passwd uses `uid`.
pub fn uid_is_free(passwd: &[u8], uid: u32) -> bool {
    !lines(passwd).filter_map(parse_user).any(|user| user.uid == uid)
}

/// Whether no line of /etc/group uses `gid`.
pub fn gid_is_free(group: &[u8], gid: u32) -> bool {
    !lines(group).filter_map(parse_group).any(|group| group.gid == gid)
}

/// Whether /etc/shadow has an entry for `name`.
pub fn has_shadow_entry(shadow: &[u8], name: &[u8]) -> bool {
    lines(shadow).any(|line| line.split(|&b| b == b':').next() == Some(name) && line.len() > name.len())
}

/// The lowest id in adduser's range used neither as a uid nor as a gid, so the user's
/// own group can share its number.
pub fn free_id(passwd: &[u8], group: &[u8]) -> Option<u32> {
    free_id_in(passwd, group, FIRST_ID..=LAST_ID)
}

/// The range `adduser -S` picks system ids from.
pub const SYSTEM_IDS: core::ops::RangeInclusive<u32> = 100..=999;

/// The lowest id of `range` used neither as a uid nor as a gid.
pub fn free_id_in(passwd: &[u8], group: &[u8], mut range: core::ops::RangeInclusive<u32>) -> Option<u32> {
    let used = |id: u32| {
        lines(passwd).filter_map(parse_user).any(|user| user.uid == id)
            || lines(group).filter_map(parse_group).any(|group| group.gid == id)
    };
    range.find(|&id| !used(id))
}

/// `existing` with a line of `fields` appended, separated by ':' (and a newline before it
/// if the file lacked one).
fn append(existing: &[u8], fields: &[&[u8]], out: &mut [u8], file: &'static &'static str) -> Result<usize, AccountsError> {
    let mut writer = Out::new(out);
    let too_large = |full: Full| AccountsError::TooLarge { file, limit: full.limit as u32 };
    writer.put(existing).map_err(too_large)?;
    if !existing.is_empty() && !existing.ends_with(b"\n") {
        writer.put(b"\n").map_err(too_large)?;
    }
    for (index, field) in fields.iter().enumerate() {
        if index > 0 {
            writer.put(b":").map_err(too_large)?;
        }
        writer.put(field).map_err(too_large)?;
    }
    writer.put(b"\n").map_err(too_large)?;
    Ok(writer.len())
}

/// Longest user or group name: utmp's field, and what useradd accepts by default.
pub const NAME_LIMIT: usize = 32;

/// A user or group name as shadow-utils' useradd and cloud-init accept it: 1 to 32
/// bytes of letters, digits, `.`, `_` and `-` (and a final `$`, for Samba machine
/// accounts), not starting with `-` or `.`, not all digits. Anything else could be a
/// path (`..`, `/`), an option (`-o`), a field separator (`:`) or a uid.
pub fn check_name(name: &[u8]) -> Result<(), AccountsError> {
    let bad = |reason| Err(AccountsError::BadName { reason });
    let body = name.strip_suffix(b"$").unwrap_or(name);
    match (body.first(), body.iter().all(u8::is_ascii_digit)) {
        _ if name.len() > NAME_LIMIT => bad(0),
        (None, _) => bad(1),
        (Some(b'-'), _) => bad(2),
        (Some(b'.'), _) => bad(3),
        (_, true) => bad(4),
        _ if !body.iter().all(|&b| b.is_ascii_alphanumeric() || b == b'.' || b == b'_' || b == b'-') => bad(5),
        _ => Ok(()),
    }
}

/// Why a name is refused, a line each, found by the number `AccountsError::BadName` holds
/// (a `ConfigError` names them too).
const NAME_REASONS: &str = "\
a user or group name is longer than 32 bytes\n\
a user or group name is empty\n\
a user or group name starts with '-'\n\
a user or group name starts with '.'\n\
a user or group name is all digits\n\
a user or group name holds more than letters, digits, '.', '_' and '-'";

pub fn name_reason(reason: u8) -> &'static str {
    crate::text::nth_part(NAME_REASONS, '\n', reason.into())
}


/// What user-data may ask of an account in `passwd`: never uid 0, and never an existing
/// account below the regular range (root, daemon, sshd...) unless it asks for a system
/// account itself, so that a rerun finds the system account it made.
pub fn check_requested_account(passwd: &[u8], name: &[u8], uid: Option<u32>, system: bool) -> Result<(), AccountsError> {
    check_name(name)?;
    let privileged = |reason| Err(AccountsError::Privileged { reason });
    if uid == Some(0) {
        return privileged(&"uid 0 is root's: refused");
    }
    match find_user(passwd, name) {
        Some(user) if user.uid == 0 => privileged(&"the account exists with uid 0: refused"),
        Some(user) if user.uid < FIRST_ID && !system => privileged(&"an existing system account: refused"),
        _ => Ok(()),
    }
}

pub(crate) fn check(field: &'static &'static str, value: &[u8]) -> Result<(), AccountsError> {
    match value.iter().any(|&b| b == b':' || b == b'\n' || b == b'\r' || b == 0) {
        true => Err(AccountsError::BadField { field }),
        false => Ok(()),
    }
}

pub(crate) fn decimal(n: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut out = Out::new(buf);
    let _ = out.put_decimal(n);
    let len = out.len();
    &buf[..len]
}

/// A new user as busybox adduser writes it: `name:x:uid:gid:gecos:home:shell`.
pub fn add_user(passwd: &[u8], user: &User<'_>, gecos: &[u8], out: &mut [u8]) -> Result<usize, AccountsError> {
    check_name(user.name)?;
    for (field, value) in [(&"user name", user.name), (&"gecos", gecos), (&"home", user.home), (&"shell", user.shell)] {
        check(field, value)?;
    }
    let (mut uid, mut gid) = ([0u8; 20], [0u8; 20]);
    let fields = [user.name, b"x", decimal(user.uid.into(), &mut uid), decimal(user.gid.into(), &mut gid), gecos, user.home, user.shell];
    append(passwd, &fields, out, &"/etc/passwd")
}

/// A new group with no members: `name:x:gid:`.
pub fn add_group(group: &[u8], name: &[u8], gid: u32, out: &mut [u8]) -> Result<usize, AccountsError> {
    check_name(name)?;
    let mut digits = [0u8; 20];
    append(group, &[name, b"x", decimal(gid.into(), &mut digits), b""], out, &"/etc/group")
}

/// An account's expiry (shadow(5)'s seventh and eighth fields), as `useradd --inactive
/// DAYS --expiredate YYYY-MM-DD` sets it: cloud-init's per-user `inactive` and
/// `expiredate`, which it applies to the users it creates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Expiry {
    /// Days after the password expires until the account is disabled.
    pub inactive_days: Option<u32>,
    /// The day the account expires, in days since 1970-01-01.
    pub expire_day: Option<u32>,
}

/// A shadow entry with `password` (`*`: no password, yet key logins work, which `!`
/// would forbid on sshd without PAM), the day of the last change and the expiry.
pub fn add_shadow(shadow: &[u8], name: &[u8], password: &[u8], days_since_epoch: u64, expiry: Expiry, out: &mut [u8]) -> Result<usize, AccountsError> {
    check(&"user name", name)?;
    check(&"password", password)?;
    let mut digits = [[0u8; 20]; 3];
    let [day, inactive, expire] = &mut digits;
    let inactive = expiry.inactive_days.map_or(&b""[..], |days| decimal(days.into(), inactive));
    let expire = expiry.expire_day.map_or(&b""[..], |day| decimal(day.into(), expire));
    // The minimum, maximum and warning days as adduser writes them, then the expiry, and
    // the reserved field empty.
    let fields = [name, password, decimal(days_since_epoch, day), b"0:99999:7", inactive, expire, b""];
    append(shadow, &fields, out, &"/etc/shadow")
}

/// `group` with `user` added to the members of `group_name`; `Ok(None)` when it is a
/// member already.
pub fn add_member(group: &[u8], group_name: &[u8], user: &[u8], out: &mut [u8]) -> Result<Option<usize>, AccountsError> {
    check(&"user name", user)?;
    let target = find_group(group, group_name).ok_or(AccountsError::MissingGroup)?;
    if target.has_member(user) {
        return Ok(None);
    }
    let too_large = |full: Full| AccountsError::TooLarge { file: &"/etc/group", limit: full.limit as u32 };
    let mut writer = Out::new(out);
    let mut done = false;
    let mut first = true;
    for line in lines(group) {
        if !first {
            writer.put(b"\n").map_err(too_large)?;
        }
        first = false;
        writer.put(line).map_err(too_large)?;
        if !done && parse_group(line).is_some_and(|g| g.name == group_name) {
            let separator: &[u8] = if target.members.is_empty() { b"" } else { b"," };
            writer.put_all(&[separator, user]).map_err(too_large)?;
            done = true;
        }
    }
    Ok(Some(writer.len()))
}

/// The rules tiny-cloud writes for members of `wheel`: (directory, file's path, contents).
pub const SUDOERS_RULE: (&str, &str, &str) = ("/etc/sudoers.d", "/etc/sudoers.d/wheel", "%wheel ALL=(ALL) NOPASSWD: ALL\n");
pub const DOAS_RULE: (&str, &str, &str) = ("/etc/doas.d", "/etc/doas.d/wheel.conf", "permit nopass :wheel\n");

#[cfg(test)]
mod tests {
    use super::*;

    const PASSWD: &[u8] = b"root:x:0:0:root:/root:/bin/sh\nbin:x:1:1:bin:/bin:/sbin/nologin\nnobody:x:65534:65534:nobody:/:/sbin/nologin\n";
    const GROUP: &[u8] = b"root:x:0:root\nwheel:x:10:root\nusers:x:100:games\nnogroup:x:65533:\n";

    #[test]
    fn lookups() {
        let root = find_user(PASSWD, b"root").unwrap();
        assert_eq!((root.uid, root.gid, root.home, root.shell), (0, 0, &b"/root"[..], &b"/bin/sh"[..]));
        assert_eq!(find_user(PASSWD, b"alpine"), None);
        assert_eq!(find_user(PASSWD, b"roo"), None);
        assert!(!gid_is_free(GROUP, 10) && gid_is_free(GROUP, 11));
        let wheel = find_group(GROUP, b"wheel").unwrap();
        assert_eq!(wheel.gid, 10);
        assert!(wheel.has_member(b"root") && !wheel.has_member(b"roo"));
        // Malformed lines are never matched.
        assert_eq!(find_user(b"alpine:x:1000:1000:/home/alpine:/bin/sh\n", b"alpine"), None);
        assert_eq!(find_user(b"alpine:x:10x0:1000::/home/alpine:/bin/sh\n", b"alpine"), None);
    }

    #[test]
    fn free_ids_skip_used_uids_and_gids() {
        assert_eq!(free_id(PASSWD, GROUP), Some(1000));
        let passwd = b"a:x:1000:1000::/:/bin/sh\n";
        let group = b"g:x:1001:\n";
        assert_eq!(free_id(passwd, group), Some(1002));
        assert!(!uid_is_free(passwd, 1000) && uid_is_free(passwd, 1001));
        assert_eq!(AccountsError::NoFreeId.to_string(), "no free user and group id from 1000 to 59999");
    }

    #[test]
    fn create_like_adduser() {
        let mut out = [0u8; 512];
        let user = User { name: b"alpine", uid: 1000, gid: 1000, home: b"/home/alpine", shell: b"/bin/sh" };
        let n = add_user(PASSWD, &user, b"Linux User,,,", &mut out).unwrap();
        let mut expected = PASSWD.to_vec();
        expected.extend_from_slice(b"alpine:x:1000:1000:Linux User,,,:/home/alpine:/bin/sh\n");
        assert_eq!(&out[..n], expected.as_slice());
        assert_eq!(find_user(&out[..n], b"alpine"), Some(user));

        let n = add_group(b"root:x:0:root", b"alpine", 1000, &mut out).unwrap();
        assert_eq!(&out[..n], b"root:x:0:root\nalpine:x:1000:\n");

        let n = add_shadow(b"", b"alpine", b"*", 20_414, Expiry::default(), &mut out).unwrap();
        assert_eq!(&out[..n], b"alpine:*:20414:0:99999:7:::\n");
        assert!(has_shadow_entry(&out[..n], b"alpine"));
        assert!(!has_shadow_entry(&out[..n], b"alp") && !has_shadow_entry(b"alpine\n", b"alpine"));
        let expiry = Expiry { inactive_days: Some(5), expire_day: Some(22_280) };
        let n = add_shadow(b"root:*::0:::::\n", b"carol", b"!$6$s$h", 20_414, expiry, &mut out).unwrap();
        assert_eq!(&out[..n], b"root:*::0:::::\ncarol:!$6$s$h:20414:0:99999:7:5:22280:\n");
    }

    #[test]
    fn membership() {
        let mut out = [0u8; 512];
        let n = add_member(GROUP, b"wheel", b"alpine", &mut out).unwrap().unwrap();
        assert_eq!(&out[..n], b"root:x:0:root\nwheel:x:10:root,alpine\nusers:x:100:games\nnogroup:x:65533:\n");
        let again = out[..n].to_vec();
        assert_eq!(add_member(&again, b"wheel", b"alpine", &mut out), Ok(None));
        let n = add_member(b"wheel:x:10:", b"wheel", b"alpine", &mut out).unwrap().unwrap();
        assert_eq!(&out[..n], b"wheel:x:10:alpine");
        assert_eq!(add_member(b"root:x:0:\n", b"wheel", b"alpine", &mut out), Err(AccountsError::MissingGroup));
    }

    #[test]
    fn names_as_useradd_takes_them() {
        for good in [&b"alpine"[..], b"a", b"Bob.Smith", b"_svc", b"web-1", b"host$", b"x9", &[b'a'; 32]] {
            assert_eq!(check_name(good), Ok(()), "{}", String::from_utf8_lossy(good));
        }
        let cases: [(&[u8], &str); 14] = [
            (b"", "is empty"),
            (b"$", "is empty"),
            (b"..", "starts with '.'"),
            (b"../../root", "starts with '.'"),
            (b".hidden", "starts with '.'"),
            (b"-o", "starts with '-'"),
            (b"1000", "is all digits"),
            (b"a/b", "holds more than letters, digits, '.', '_' and '-'"),
            (b"a:0", "holds more than letters, digits, '.', '_' and '-'"),
            (b"a b", "holds more than letters, digits, '.', '_' and '-'"),
            (b"a\tb", "holds more than letters, digits, '.', '_' and '-'"),
            (b"a\nroot", "holds more than letters, digits, '.', '_' and '-'"),
            (b"a$b", "holds more than letters, digits, '.', '_' and '-'"),
            (&[b'a'; 33], "is longer than 32 bytes"),
        ];
        for (name, reason) in cases {
            let Err(AccountsError::BadName { reason: said }) = check_name(name) else { panic!("{name:?} accepted") };
            assert_eq!(name_reason(said).strip_prefix("a user or group name "), Some(reason));
        }
        assert!(check_name("é".as_bytes()).is_err() && check_name(b"a\0").is_err());
    }

    #[test]
    fn privileged_accounts_are_not_for_user_data() {
        let passwd = b"root:x:0:0:root:/root:/bin/sh\ntoor:x:0:0::/root:/bin/sh\nsshd:x:22:22::/var/empty:/sbin/nologin\nsvc:x:150:150::/:/sbin/nologin\nbob:x:1001:1001::/home/bob:/bin/sh\n";
        let privileged = |reason| Err(AccountsError::Privileged { reason });
        assert_eq!(check_requested_account(passwd, b"root", None, false), privileged(&"the account exists with uid 0: refused"));
        assert_eq!(check_requested_account(passwd, b"toor", None, true), privileged(&"the account exists with uid 0: refused"));
        assert_eq!(check_requested_account(passwd, b"sshd", None, false), privileged(&"an existing system account: refused"));
        assert_eq!(check_requested_account(passwd, b"new", Some(0), false), privileged(&"uid 0 is root's: refused"));
        assert_eq!(check_requested_account(passwd, b"new", Some(0), true), privileged(&"uid 0 is root's: refused"));
        assert!(matches!(check_requested_account(passwd, b"../../root", None, false), Err(AccountsError::BadName { .. })));
        // A rerun finds the system account the first run made; regular accounts are fine.
        assert_eq!(check_requested_account(passwd, b"svc", None, true), Ok(()));
        assert_eq!(check_requested_account(passwd, b"bob", None, false), Ok(()));
        assert_eq!(check_requested_account(passwd, b"new", Some(2000), false), Ok(()));
    }

    #[test]
    fn refusals_and_limits() {
        let mut out = [0u8; 512];
        let evil = User { name: b"alpine", uid: 1000, gid: 1000, home: b"/home/a:0:0", shell: b"/bin/sh" };
        assert_eq!(add_user(b"", &evil, b"", &mut out), Err(AccountsError::BadField { field: &"home" }));
        assert!(matches!(add_group(b"", b"a\nroot:x:0:", 5, &mut out), Err(AccountsError::BadName { .. })));
        let line_len = b"alpine:x:1000:\n".len();
        let mut exact = vec![0u8; line_len];
        assert_eq!(add_group(b"", b"alpine", 1000, &mut exact), Ok(line_len));
        let mut short = vec![0u8; line_len - 1];
        assert_eq!(
            add_group(b"", b"alpine", 1000, &mut short),
            Err(AccountsError::TooLarge { file: &"/etc/group", limit: line_len as u32 - 1 })
        );
    }

    #[test]
    fn garbage_never_panics() {
        let mut garbage = crate::fuzz::Garbage::new(3);
        for _ in 0..300 {
            let text = garbage.text(&[b"a", b":", b"x", b"0", b"\n", b"9", b","], 300);
            let _ = find_user(&text, b"a");
            let _ = find_group(&text, b"a");
            let _ = free_id(&text, &text);
            let _ = free_id_in(&text, &text, SYSTEM_IDS);
            let mut out = [0u8; 512];
            crate::fuzz::seed_pair("accounts", b"u", &text);
            if let Ok(Some(len)) = add_member(&text, b"a", b"u", &mut out) {
                assert!(find_group(&out[..len], b"a").is_some_and(|group| group.has_member(b"u")));
            }
            if let Some(id) = free_id_in(&text, &text, SYSTEM_IDS) {
                assert!(uid_is_free(&text, id) && gid_is_free(&text, id) && SYSTEM_IDS.contains(&id));
            }
        }
    }
}
