//! Passwords from cloud-config: users' `passwd`/`hashed_passwd`/`plain_text_passwd`,
//! `password` (the default user's) and `chpasswd`. Plain text is hashed with SHA-512
//! crypt and a random salt before it reaches /etc/shadow; nothing is logged.

use wisp_core::cloud_config::{self, CloudConfig};
use wisp_core::sha512_crypt;
use wisp_core::yaml::{Kind, Value};

use crate::context::Context;
use crate::output::{Line, Shown};
use crate::users::{SystemFile, FILE_LIMIT};

/// Longest `$6$salt$hash` (with a `!` for a locked password).
pub const HASH_LIMIT: usize = 128;

/// The shadow field for a user's password settings: a hash as given, plain text hashed,
/// `!` before it when locked; `None` when no password is set.
pub fn shadow_field<'b>(hashed: Option<&'b str>, plain: Option<&str>, lock: bool, out: &'b mut [u8; HASH_LIMIT]) -> Result<Option<&'b [u8]>, Line> {
    let start = usize::from(lock);
    out[0] = b'!';
    let len = match (hashed, plain) {
        (Some(hash), _) => {
            let field = out.get_mut(start..start + hash.len()).ok_or_else(|| msg!("password hash longer than {HASH_LIMIT} bytes"))?;
            if hash.bytes().any(|b| b == b':' || b.is_ascii_control()) {
                return Err(msg!("a password hash holds ':' or a control character"));
            }
            field.copy_from_slice(hash.as_bytes());
            hash.len()
        }
        (None, Some(plain)) => hash_plain(plain.as_bytes(), &mut out[start..])?,
        (None, None) => return Ok(None),
    };
    Ok(Some(&out[..start + len]))
}

/// SHA-512 crypt of `password` with a 16-character random salt.
fn hash_plain(password: &[u8], out: &mut [u8]) -> Result<usize, Line> {
    const SALT_ALPHABET: &[u8; 64] = b"./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let mut salt = [0u8; 16];
    wisp_os_linux::system::random_bytes(&mut salt).map_err(|e| crate::output::os_error("no random salt", e))?;
    for byte in salt.iter_mut() {
        *byte = SALT_ALPHABET[usize::from(*byte & 63)];
    }
    sha512_crypt::hash(password, &salt, None, out).map_err(crate::output::line)
}

/// `password` and `chpasswd`; the number of passwords set. Every entry is checked (its
/// form, its user's shadow entry) before any password is set.
pub fn apply(ctx: &Context<'_>, config: &CloudConfig<'static>) -> Result<usize, Line> {
    passwords(ctx, config, false)?;
    passwords(ctx, config, true)
}

/// `write: false` checks everything and changes nothing.
#[inline(never)]
fn passwords(ctx: &Context<'_>, config: &CloudConfig<'static>, write: bool) -> Result<usize, Line> {
    let chpasswd = config.value("chpasswd");
    let field = |name: &str| chpasswd.and_then(|c| c.get(name)).filter(|v| !v.is_null());
    let expire = field("expire").map(|v| cloud_config::flag("chpasswd", v)).transpose().map_err(crate::output::line)?.unwrap_or(true);
    let mut set = 0;
    let mut one = |name: &str, password: &str, kind: PasswordType, at: Value<'_>| -> Result<(), Line> {
        let mut out = [0u8; HASH_LIMIT];
        let hashed = match kind {
            PasswordType::Random => return Err(msg!("cloud-config line {}: chpasswd: RANDOM passwords are not supported (wisp does not print secrets)", at.line())),
            PasswordType::Hash => shadow_field(Some(password), None, false, &mut out)?,
            PasswordType::Text => shadow_field(None, Some(password), false, &mut out)?,
        };
        set_shadow(ctx, name.as_bytes(), hashed.unwrap_or(b"*"), expire, write)?;
        set += 1;
        Ok(())
    };
    let mut any = false;
    if let Some(users) = field("users") {
        for entry in cloud_config::items("chpasswd", users).map_err(crate::output::line)? {
            let get = |key: &str| entry.get(key).filter(|v| !v.is_null()).map(|v| cloud_config::text("chpasswd", v)).transpose().map_err(crate::output::line);
            let name = get("name")?.ok_or_else(|| msg!("cloud-config line {}: chpasswd: a user has no name", entry.line()))?;
            let kind = match get("type")?.unwrap_or("hash") {
                "text" => PasswordType::Text,
                "hash" => PasswordType::Hash,
                "RANDOM" => PasswordType::Random,
                _ => return Err(msg!("cloud-config line {}: chpasswd: type must be text, hash or RANDOM", entry.line())),
            };
            let password = if kind == PasswordType::Random { "" } else { get("password")?.ok_or_else(|| msg!("cloud-config line {}: chpasswd: {name} has no password", entry.line()))? };
            one(name, password, kind, entry)?;
            any = true;
        }
    }
    if let Some(list) = field("list") {
        let mut line_of = |line: &str, at: Value<'_>| -> Result<(), Line> {
            let (name, password) = line.split_once(':').ok_or_else(|| msg!("cloud-config line {}: chpasswd: an entry is not user:password", at.line()))?;
            let kind = match password {
                "R" | "RANDOM" => PasswordType::Random,
                p if is_crypt_hash(p) => PasswordType::Hash,
                _ => PasswordType::Text,
            };
            one(name, password, kind, at)?;
            any = true;
            Ok(())
        };
        match list.kind() {
            Kind::Sequence => {
                for item in list.items() {
                    line_of(cloud_config::text("chpasswd", item).map_err(crate::output::line)?, item)?;
                }
            }
            _ => {
                for line in cloud_config::text("chpasswd", list).map_err(crate::output::line)?.lines().filter(|l| !l.trim().is_empty()) {
                    line_of(line, list)?;
                }
            }
        }
    }
    if let (false, Some(value)) = (any, config.value("password")) {
        let password = cloud_config::text("password", value).map_err(crate::output::line)?;
        let name = ctx.config.cloud_user.as_str();
        one(name, password, if is_crypt_hash(password) { PasswordType::Hash } else { PasswordType::Text }, value)?;
    }
    Ok(set)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum PasswordType {
    Text,
    Hash,
    Random,
}

/// cloud-init's test for a hash in `chpasswd`'s list: `$1$`, `$2a$`, `$2y$`, `$5$` or
/// `$6$` followed by two `$`-separated fields, and no ':'.
fn is_crypt_hash(text: &str) -> bool {
    sha512_crypt::is_hashed(text.as_bytes()) && !text.contains(':')
}

/// Replaces the user's password field; `expire` sets the last change to day 0, which
/// makes the user choose a new one at the next login.
fn set_shadow(ctx: &Context<'_>, name: &[u8], field: &[u8], expire: bool, write: bool) -> Result<(), Line> {
    let mut shadow = SystemFile::read(ctx, "/etc", "shadow", "/etc/shadow", 0o640)?;
    let days = if expire { 0 } else { wisp_os_linux::time::realtime_secs() / wisp_core::clock::SECONDS_PER_DAY };
    let mut new = [0u8; FILE_LIMIT];
    let len = wisp_core::shadow::set_shadow_password(shadow.text(), name, field, days, &mut new)
        .map_err(|e| msg!("chpasswd {}: {e}", Shown(name)))?;
    if !write {
        return Ok(());
    }
    let mut batch = wisp_os_linux::fs::Batch::new();
    shadow.replace(&new[..len], &mut batch)?;
    crate::users::commit(batch)
}
