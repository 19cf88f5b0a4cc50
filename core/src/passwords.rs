//! Passwords from cloud-config: users' `passwd`/`hashed_passwd`/`plain_text_passwd`,
//! `password` (the default user's) and `chpasswd`. Plain text is hashed with SHA-512
//! crypt and a random salt before it reaches /etc/shadow; nothing is logged.

use crate::cloud_config::{self, CloudConfig};
use crate::host::files::Files;
use crate::host::messages::Messages;
use crate::host::room::Room;
use crate::host::system::System;
use crate::sha512_crypt;
use crate::system_files::{self, SystemFile, FILE_LIMIT};
use crate::text::{Decimal, Plain};
use crate::yaml::{Kind, NodeRef};

/// Longest `$6$salt$hash` (with a `!` for a locked password).
pub const HASH_LIMIT: usize = 128;
// Its message names it as a literal, not a number formatted.
const _: () = assert!(HASH_LIMIT == 128);

/// The shadow field for a user's password settings: a hash as given, plain text hashed,
/// `!` before it when locked; `None` when no password is set.
pub fn shadow_field<'b, H: Messages + System>(
    host: &mut H,
    hashed: Option<&'b str>,
    plain: Option<&str>,
    lock: bool,
    out: &'b mut [u8; HASH_LIMIT],
) -> Result<Option<&'b [u8]>, H::Text> {
    let start = usize::from(lock);
    out[0] = b'!';
    let len = match (hashed, plain) {
        (Some(hash), _) => {
            let field = out.get_mut(start..start + hash.len()).ok_or_else(|| host.text(format_args!("password hash longer than 128 bytes")))?;
            if hash.bytes().any(|b| b == b':' || b.is_ascii_control()) {
                return Err(host.text(format_args!("a password hash holds ':' or a control character")));
            }
            field.copy_from_slice(hash.as_bytes());
            hash.len()
        }
        (None, Some(plain)) => hash_plain(host, plain.as_bytes(), &mut out[start..])?,
        (None, None) => return Ok(None),
    };
    Ok(Some(&out[..start + len]))
}

/// SHA-512 crypt of `password` with a 16-character random salt.
fn hash_plain<H: Messages + System>(host: &mut H, password: &[u8], out: &mut [u8]) -> Result<usize, H::Text> {
    const SALT_ALPHABET: &[u8; 64] = b"./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let mut salt = [0u8; 16];
    host.fill(&mut salt).map_err(|e| system_files::call_failed(host, b"no random salt", e))?;
    for byte in salt.iter_mut() {
        *byte = SALT_ALPHABET[usize::from(*byte & 63)];
    }
    sha512_crypt::hash(password, &salt, None, out).map_err(|e| system_files::said(host, &e))
}

/// `password` (for `default_user`) and `chpasswd`; the number of passwords set. Every
/// entry is checked (its form, its user's shadow entry) before any password is set; a
/// password that does not expire is dated `today` (days since 1970).
pub fn apply<H: Files + System + Messages + Room>(host: &mut H, default_user: &str, config: &CloudConfig<'_>, today: u64) -> Result<usize, H::Text> {
    passwords(host, default_user, config, today, false)?;
    passwords(host, default_user, config, today, true)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum PasswordType {
    Text,
    Hash,
    Random,
}

/// One password of `chpasswd` or `password`, as found.
struct Entry<'a> {
    name: &'a str,
    password: &'a str,
    kind: PasswordType,
    at: NodeRef<'a>,
}

/// `write: false` checks everything and changes nothing.
fn passwords<H: Files + System + Messages + Room>(host: &mut H, default_user: &str, config: &CloudConfig<'_>, today: u64, write: bool) -> Result<usize, H::Text> {
    let chpasswd = config.value("chpasswd");
    let field = |name: &str| chpasswd.and_then(|c| c.get(name)).filter(|v| !v.is_null());
    let expire = field("expire").map(|v| cloud_config::flag("chpasswd", v)).transpose()?.unwrap_or(true);
    let mut set = 0;
    let mut one = |host: &mut H, entry: Entry<'_>| -> Result<(), H::Text> {
        let mut out = [0u8; HASH_LIMIT];
        let (hash, plain) = match entry.kind {
            PasswordType::Random => {
                return Err(system_files::at_line(host, entry.at, "chpasswd: RANDOM passwords are not supported (wisp does not print secrets)"));
            }
            PasswordType::Hash => (Some(entry.password), None),
            PasswordType::Text => (None, Some(entry.password)),
        };
        let hashed = shadow_field(host, hash, plain, false, &mut out)?;
        set_shadow(host, entry.name.as_bytes(), hashed.unwrap_or(b"*"), if expire { 0 } else { today }, write)?;
        set += 1;
        Ok(())
    };
    let mut any = false;
    if let Some(list) = field("users") {
        for entry in cloud_config::items("chpasswd", list)? {
            let get = |key: &str| entry.get(key).filter(|v| !v.is_null()).map(|v| cloud_config::text("chpasswd", v)).transpose();
            let line = entry.line();
            let name = get("name")?.ok_or_else(|| system_files::at_line(host, entry, "chpasswd: a user has no name"))?;
            const TYPES: [PasswordType; 3] = [PasswordType::Text, PasswordType::Hash, PasswordType::Random];
            let kind = match crate::text::word_index("text hash RANDOM", get("type")?.unwrap_or("hash").as_bytes()) {
                Some(index) => TYPES[index],
                None => return Err(system_files::at_line(host, entry, "chpasswd: type must be text, hash or RANDOM")),
            };
            let password = match kind {
                PasswordType::Random => "",
                _ => get("password")?.ok_or_else(|| host.text(format_args!("cloud-config line {line}: chpasswd: {name} has no password", line = Decimal(line.into()), name = Plain(name))))?,
            };
            one(host, Entry { name, password, kind, at: entry })?;
            any = true;
        }
    }
    if let Some(list) = field("list") {
        let mut line_of = |host: &mut H, line: &str, at: NodeRef<'_>| -> Result<(), H::Text> {
            let (name, password) = line.split_once(':').ok_or_else(|| system_files::at_line(host, at, "chpasswd: an entry is not user:password"))?;
            let kind = match password {
                "R" | "RANDOM" => PasswordType::Random,
                p if is_crypt_hash(p) => PasswordType::Hash,
                _ => PasswordType::Text,
            };
            one(host, Entry { name, password, kind, at })?;
            any = true;
            Ok(())
        };
        match list.kind() {
            Kind::Sequence => {
                for item in list.items() {
                    line_of(host, cloud_config::text("chpasswd", item)?, item)?;
                }
            }
            _ => {
                for line in cloud_config::text("chpasswd", list)?.lines().filter(|l| !l.trim().is_empty()) {
                    line_of(host, line, list)?;
                }
            }
        }
    }
    if let (false, Some(value)) = (any, config.value("password")) {
        let password = cloud_config::text("password", value)?;
        let kind = if is_crypt_hash(password) { PasswordType::Hash } else { PasswordType::Text };
        one(host, Entry { name: default_user, password, kind, at: value })?;
    }
    Ok(set)
}

/// cloud-init's test for a hash in `chpasswd`'s list: `$1$`, `$2a$`, `$2y$`, `$5$` or
/// `$6$` followed by two `$`-separated fields, and no ':'.
fn is_crypt_hash(text: &str) -> bool {
    sha512_crypt::is_hashed(text.as_bytes()) && !text.contains(':')
}

/// Replaces the user's password field, its last change dated `days` (0 makes the user
/// choose a new one at the next login).
fn set_shadow<H: Files + System + Room>(host: &mut H, name: &[u8], field: &[u8], days: u64, write: bool) -> Result<(), H::Text> {
    let mut room = host.room(2 * FILE_LIMIT, "/etc/shadow")?;
    let [shadow_buf, new] = system_files::file_buffers(&mut room);
    let mut shadow = SystemFile::read(host, "/etc/shadow", 0o640, shadow_buf)?;
    let len = crate::shadow::set_shadow_password(shadow.text(), name, field, days, new)
        .map_err(|e| host.text(format_args!("chpasswd {}: {e}", H::shown(name))))?;
    if !write {
        return Ok(());
    }
    shadow.replace(&new[..len], host)?;
    system_files::commit(host)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::memory::{MemoryHost, MemorySystem};
    use crate::users::tests::with_config;

    const HASH: &str = "$6$salt$IxDD3jeSOb5eB1CX5LBsqZFVkJdido3OUILO5Ifz5iwMuTS4XMS130MTSuDDl3aCI6WouIL9AjRbLCelDCy.g.";

    fn image() -> MemorySystem {
        MemorySystem::new(MemoryHost::new())
            .with_dir("/etc", (0, 0))
            .with_file("/etc/shadow", "root:*:19000:0:::::\nalpine:*:19000:0:99999:7:::\nann:!:19000:0:99999:7:::\n")
    }

    fn field(host: &MemorySystem, user: &str) -> (std::string::String, std::string::String) {
        let shadow = host.contents("/etc/shadow").unwrap();
        let line = shadow.lines().find(|l| l.starts_with(&std::format!("{user}:"))).unwrap();
        let mut fields = line.split(':').skip(1);
        (fields.next().unwrap().into(), fields.next().unwrap().into())
    }

    #[test]
    fn a_given_hash_is_kept_plain_text_is_hashed_and_a_lock_is_a_bang() {
        let mut host = image();
        let mut out = [0u8; HASH_LIMIT];
        assert_eq!(shadow_field(&mut host, Some(HASH), None, true, &mut out).unwrap().unwrap(), std::format!("!{HASH}").as_bytes());
        let hashed = shadow_field(&mut host, None, Some("secret"), false, &mut out).unwrap().unwrap().to_vec();
        // The salt is 16 characters of the host's randomness (7 & 63 is '5').
        assert!(hashed.starts_with(b"$6$5555555555555555$"), "{}", std::string::String::from_utf8_lossy(&hashed));
        assert!(shadow_field(&mut host, None, None, true, &mut out).unwrap().is_none());
        let e = shadow_field(&mut host, Some("$6$a:b"), None, false, &mut out).unwrap_err();
        assert_eq!(e, "a password hash holds ':' or a control character");
        let long = "x".repeat(HASH_LIMIT);
        // With its `!`, a hash of the whole limit does not fit.
        assert!(shadow_field(&mut host, Some(&long), None, false, &mut out).is_ok());
        assert_eq!(shadow_field(&mut host, Some(&long), None, true, &mut out).unwrap_err(), "password hash longer than 128 bytes");
    }

    #[test]
    fn chpasswd_sets_each_password_and_expires_them_unless_told() {
        let source = std::format!("chpasswd:\n  list: |\n    alpine:{HASH}\n    ann:plain\n");
        with_config(&source, |config| {
            let mut host = image();
            assert_eq!(apply(&mut host, "alpine", config, 20_000).unwrap(), 2);
            assert_eq!(field(&host, "alpine"), (HASH.into(), "0".into()));
            let (ann, changed) = field(&host, "ann");
            assert!(ann.starts_with("$6$5555555555555555$") && changed == "0", "{ann}");
        });
        let source = std::format!("chpasswd:\n  expire: false\n  users:\n    - {{name: ann, password: {HASH}}}\n");
        with_config(&source, |config| {
            let mut host = image();
            assert_eq!(apply(&mut host, "alpine", config, 20_000).unwrap(), 1);
            assert_eq!(field(&host, "ann"), (HASH.into(), "20000".into()));
        });
        let source = std::format!("chpasswd:\n  users:\n    - {{name: ann, password: plain, type: text}}\n    - {{name: alpine, password: {HASH}, type: hash}}\n");
        with_config(&source, |config| {
            let mut host = image();
            assert_eq!(apply(&mut host, "alpine", config, 20_000).unwrap(), 2);
            assert!(field(&host, "ann").0.starts_with("$6$5555555555555555$"));
            assert_eq!(field(&host, "alpine").0, HASH);
        });
    }

    #[test]
    fn password_is_the_default_users_when_chpasswd_names_none() {
        with_config(&std::format!("password: {HASH}\n"), |config| {
            let mut host = image();
            assert_eq!(apply(&mut host, "alpine", config, 20_000).unwrap(), 1);
            assert_eq!(field(&host, "alpine").0, HASH);
        });
    }

    #[test]
    fn one_refused_entry_sets_no_password_at_all() {
        for (source, error) in [
            ("chpasswd:\n  list: [\"alpine:x\", \"ann:R\"]\n", "cloud-config line 2: chpasswd: RANDOM passwords are not supported (wisp does not print secrets)"),
            ("chpasswd:\n  list: [\"alpine:x\", \"nobody:y\"]\n", "chpasswd nobody: the user has no line in /etc/shadow"),
            ("chpasswd:\n  users:\n    - {name: alpine, password: x, type: clear}\n", "cloud-config line 3: chpasswd: type must be text, hash or RANDOM"),
            ("chpasswd:\n  list: [\"alpine\"]\n", "cloud-config line 2: chpasswd: an entry is not user:password"),
            ("chpasswd:\n  users:\n    - {name: alpine, type: RANDOM}\n", "cloud-config line 3: chpasswd: RANDOM passwords are not supported (wisp does not print secrets)"),
            ("chpasswd:\n  users:\n    - {name: alpine, password: x, type: TEXT}\n", "cloud-config line 3: chpasswd: type must be text, hash or RANDOM"),
        ] {
            with_config(source, |config| {
                let mut host = image();
                let files = host.host.files.clone();
                assert_eq!(apply(&mut host, "alpine", config, 20_000).unwrap_err(), error, "{source}");
                assert_eq!(host.host.files, files);
                assert_eq!(host.commits, 0);
            });
        }
    }
}
