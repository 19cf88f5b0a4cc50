//! The configuration file: tiny-cloud's shell-style `KEY=value` lines. The files are
//! written to be sourced by a shell, so wisp reads what such files really hold (quotes,
//! escapes, `export`, comments, `$VAR` of earlier lines) and refuses, with the line
//! number, what it cannot honour faithfully (command substitution, a line that is not an
//! assignment) rather than guess.

use core::fmt;

use heapless::String;

use crate::config_variables::{FIRST_INIT_ACTIONS, CLOUD, CLOUD_USER, HOTPLUG_MODULES, HOTPLUG_TYPE, LINE, SKIP_INIT_ACTIONS, TINY_CLOUD_LOGS, TINY_CLOUD_VAR, VALUE, VARIABLES};
use crate::phase::{action_names, Action, Phase};
use crate::text::{Decimal, Plain};

/// Longest value of a path or list variable.
pub const VALUE_LIMIT: usize = 256;
/// Longest line.
pub const LINE_LIMIT: usize = 1024;
// `LineTooLong` and `ValueTooLong` name the limits as literals, not numbers carried and
// formatted.
const _: () = assert!(LINE_LIMIT == 1024 && VALUE_LIMIT == 256);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cloud {
    Auto,
    Aws,
    Azure,
    Gcp,
    Oci,
    Nocloud,
    Configdrive,
    Openstack,
    Hetzner,
    Digitalocean,
    Scaleway,
    Incus,
    Vultr,
}

/// The names of `Cloud`, in the order of its variants (`Cloud::name`).
const CLOUD_NAMES: &str = "auto aws azure gcp oci nocloud configdrive openstack hetzner digitalocean scaleway incus vultr";

impl Cloud {
    pub const ALL: [Cloud; 13] = [
        Cloud::Auto,
        Cloud::Aws,
        Cloud::Azure,
        Cloud::Gcp,
        Cloud::Oci,
        Cloud::Nocloud,
        Cloud::Configdrive,
        Cloud::Openstack,
        Cloud::Hetzner,
        Cloud::Digitalocean,
        Cloud::Scaleway,
        Cloud::Incus,
        Cloud::Vultr,
    ];

    pub fn name(self) -> &'static str {
        crate::text::nth_word(CLOUD_NAMES, self as usize)
    }

    pub fn from_name(name: &[u8]) -> Option<Cloud> {
        crate::text::word_index(CLOUD_NAMES, name).and_then(|index| Cloud::ALL.get(index).copied())
    }
}

/// For messages about a bad cloud name.
pub const CLOUD_NAMES_MESSAGE: &str = "expected auto, aws, azure, gcp, oci, nocloud, configdrive, openstack, hetzner, digitalocean, scaleway, incus or vultr";

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    pub cloud: Cloud,
    pub cloud_user: String<32>,
    pub imds_token_ttl: u32,
    pub var_dir: String<VALUE_LIMIT>,
    pub logs_dir: String<VALUE_LIMIT>,
    pub skip_actions: String<VALUE_LIMIT>,
    /// `INIT_ACTIONS_BOOT` ... `_FINAL`, indexed by `Phase as usize`; `None` when unset,
    /// which is not the same as set to nothing.
    pub init_actions: [Option<String<VALUE_LIMIT>>; 4],
    pub http_connect_ms: u32,
    pub http_read_ms: u32,
    pub http_total_ms: u32,
    pub http_backoff_ms: u32,
    pub http_backoff_max_ms: u32,
    /// Most bytes one user-data document may decode to, gunzipped parts and includes
    /// together: the bound that stops a decompression bomb.
    pub userdata_limit: u32,
    /// The lines that set `INIT_ACTIONS_<PHASE>` (by `Phase as usize`) and, last,
    /// `SKIP_INIT_ACTIONS`: for `check_actions`'s message.
    pub action_lines: [u32; 5],
    /// How long the boot phase waits for a DHCP lease, all retransmissions included.
    pub dhcp_ms: u32,
}

/// A name in `INIT_ACTIONS_<PHASE>` or `SKIP_INIT_ACTIONS` that is no action.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnknownAction<'c> {
    pub line: u32,
    pub variable: &'static str,
    pub word: &'c str,
}

impl fmt::Display for UnknownAction<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The list is split at white space, so the word holds none for Shown to keep.
        write!(f, "{}: {} names an unknown action '{}'", Decimal(self.line.into()), Plain(self.variable), crate::text::Shown(self.word.as_bytes()))
    }
}

impl Config {
    /// Every name in the action lists. Checked once the file is read, so that every
    /// command (`status` too, not only the phases) refuses a misspelt one, naming its
    /// line and the word: a misspelt skip would otherwise run the very action meant to be
    /// skipped.
    pub fn check_actions(&self) -> Result<(), UnknownAction<'_>> {
        for (index, &line) in self.action_lines.iter().enumerate() {
            // `VARIABLES` lists INIT_ACTIONS_<PHASE> in the order of `Phase`, then
            // SKIP_INIT_ACTIONS, as `action_lines` holds their lines.
            let variable = crate::text::nth_word(VARIABLES, FIRST_INIT_ACTIONS + index);
            let list = match self.init_actions.get(index) {
                Some(list) => list.as_deref().unwrap_or(""),
                None => self.skip_actions.as_str(),
            };
            if let Some(word) = action_names(list).find(|word| Action::from_name(word.as_bytes()).is_none()) {
                return Err(UnknownAction { line, variable, word });
            }
        }
        Ok(())
    }
}

/// The largest `WISP_USERDATA_LIMIT`, and its default: the size of wisp's buffers.
pub const USERDATA_LIMIT_MAX: u32 = 16 << 20;

impl Default for Config {
    fn default() -> Self {
        let timeouts = crate::retry::Timeouts::default();
        Config {
            cloud: Cloud::Auto,
            cloud_user: string("alpine"),
            imds_token_ttl: 5,
            var_dir: string("/var/lib/cloud"),
            logs_dir: string("/var/log"),
            skip_actions: String::new(),
            init_actions: [None, None, None, None],
            http_connect_ms: timeouts.connect_ms,
            http_read_ms: timeouts.read_ms,
            http_total_ms: timeouts.total_ms,
            http_backoff_ms: timeouts.backoff_initial_ms,
            http_backoff_max_ms: timeouts.backoff_max_ms,
            userdata_limit: USERDATA_LIMIT_MAX,
            action_lines: [0; 5],
            dhcp_ms: 30_000,
        }
    }
}

fn string<const N: usize>(text: &str) -> String<N> {
    String::try_from(text).unwrap_or_default()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Error {
    pub line: u32,
    pub kind: ErrorKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    NotAnAssignment,
    /// `KEY = value`: a shell would run a command named KEY.
    SpaceAroundEquals,
    UnterminatedQuote,
    /// `$(...)` or backticks: only a shell can run them.
    CommandSubstitution,
    /// `$NAME` of a variable not set earlier in the file.
    UndefinedVariable,
    /// White space outside quotes in a value: a shell would run a command.
    UnquotedSpace,
    /// Longer than `LINE_LIMIT`.
    LineTooLong,
    /// Longer than `VALUE_LIMIT`.
    ValueTooLong { name: Name },
    BadCloud,
    BadUserName,
    BadNumber { name: Name },
    OutOfRange { name: Name, min: u32, max: u32 },
    NotAbsolute { name: Name },
}

/// What an error names: a variable, or the line or value itself. A word of `VARIABLES` by
/// its index, one byte where a `&str` is sixteen: the `Error` is then 16 bytes and comes
/// back from `parse` and its steps in registers, not through memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Name(u8);

impl Name {
    const LINE: Name = Name(LINE as u8);
    const VALUE: Name = Name(VALUE as u8);

    pub fn as_str(self) -> &'static str {
        crate::text::nth_word(VARIABLES, self.0.into())
    }
}

/// `ErrorKind`'s messages after the line number and the variable's name, a line each in
/// the order of its variants: one text read by index, not a `write_str` of its own per
/// variant. `OutOfRange` adds its bounds.
const MESSAGES: &str = "\
not a KEY=value line
no spaces allowed around '='
unterminated quote
command substitution is not supported
$ names a variable not set earlier in this file
white space in a value must be quoted
 longer than 1024 bytes
 longer than 256 bytes
CLOUD: 
CLOUD_USER is not a valid user name
 is not a number
 must be from 
 must be an absolute path";

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The messages about one variable start with its name, written once.
        let (name, index) = match self.kind {
            ErrorKind::NotAnAssignment => (None, 0),
            ErrorKind::SpaceAroundEquals => (None, 1),
            ErrorKind::UnterminatedQuote => (None, 2),
            ErrorKind::CommandSubstitution => (None, 3),
            ErrorKind::UndefinedVariable => (None, 4),
            ErrorKind::UnquotedSpace => (None, 5),
            ErrorKind::LineTooLong => (Some(Name::LINE), 6),
            ErrorKind::ValueTooLong { name } => (Some(name), 7),
            ErrorKind::BadCloud => (None, 8),
            ErrorKind::BadUserName => (None, 9),
            ErrorKind::BadNumber { name } => (Some(name), 10),
            ErrorKind::OutOfRange { name, .. } => (Some(name), 11),
            ErrorKind::NotAbsolute { name } => (Some(name), 12),
        };
        let name = name.map_or("", Name::as_str);
        write!(f, "{}: {}{}", Decimal(self.line.into()), Plain(name), Plain(crate::text::nth_part(MESSAGES, '\n', index)))?;
        match self.kind {
            ErrorKind::BadCloud => f.write_str(CLOUD_NAMES_MESSAGE),
            ErrorKind::OutOfRange { min, max, .. } => write!(f, "{min} to {max}", min = Decimal(min as u64), max = Decimal(max as u64)),
            _ => Ok(()),
        }
    }
}

/// A variable wisp does not know, which it ignores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Warning<'a> {
    pub line: u32,
    pub name: &'a [u8],
}

impl fmt::Display for Warning<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The name is a shell variable's (letters, digits, `_`: split_assignment), which
        // Shown writes as it is.
        write!(f, "{}: unknown variable {} (ignored)", Decimal(self.line as u64), crate::text::Shown(self.name))
    }
}

/// Most variables a file may set (each remembered for `$NAME` in later lines).
pub const VARIABLES_LIMIT: usize = 32;

/// Applies the assignments in `text` to `config`, line by line.
#[inline(never)]
pub fn parse<'t>(text: &'t [u8], config: &mut Config, on_warning: &mut dyn FnMut(Warning<'t>)) -> Result<(), Error> {
    let mut seen: heapless::Vec<(&'t [u8], Value), VARIABLES_LIMIT> = heapless::Vec::new();
    let mut value = Value::new();
    for (index, raw) in text.split(|&b| b == b'\n').enumerate() {
        let line = index as u32 + 1;
        let fail = |kind| Error { line, kind };
        if raw.len() > LINE_LIMIT {
            return Err(fail(ErrorKind::LineTooLong));
        }
        let Some((name, raw_value)) = split_assignment(raw).map_err(fail)? else { continue };
        value.clear();
        unquote(raw_value, &seen, &mut value).map_err(fail)?;
        let text = core::str::from_utf8(&value).map_err(|_| fail(ErrorKind::NotAnAssignment))?;
        if !apply(config, name, text, line).map_err(fail)? {
            on_warning(Warning { line, name });
        }
        // Past the limit a variable is still applied, only not available to `$`.
        let slot = match seen.iter().position(|(known, _)| *known == name) {
            Some(at) => seen.get_mut(at),
            None => seen.push((name, Value::new())).ok().and_then(|()| seen.last_mut()),
        };
        if let Some((_, old)) = slot {
            old.clear();
            // Both hold at most VALUE_LIMIT bytes.
            let _ = old.extend_from_slice(&value);
        }
    }
    Ok(())
}

/// A value as the shell sees it, in bytes.
type Value = heapless::Vec<u8, VALUE_LIMIT>;

/// A line's variable name and its raw value.
type Assignment<'t> = (&'t [u8], &'t [u8]);

/// `Ok(None)` for blank and comment lines.
#[inline(never)]
fn split_assignment(raw: &[u8]) -> Result<Option<Assignment<'_>>, ErrorKind> {
    let line = <[u8]>::trim_ascii_start(raw.strip_suffix(b"\r").unwrap_or(raw));
    if line.is_empty() || line[0] == b'#' {
        return Ok(None);
    }
    // A slice, not a 6-byte array: the array compiles its own strip_prefix (58 bytes).
    let line = match line.strip_prefix(b"export".as_slice()) {
        Some(rest) if rest.first().is_some_and(|b| *b == b' ' || *b == b'\t') => <[u8]>::trim_ascii_start(rest),
        _ => line,
    };
    let name_end = line.iter().position(|&b| !(b.is_ascii_alphanumeric() || b == b'_')).unwrap_or(line.len());
    let name = &line[..name_end];
    match line.get(name_end) {
        Some(b'=') if !name.is_empty() && !name[0].is_ascii_digit() => Ok(Some((name, &line[name_end + 1..]))),
        Some(b' ' | b'\t') if <[u8]>::trim_ascii_start(&line[name_end..]).first() == Some(&b'=') => Err(ErrorKind::SpaceAroundEquals),
        _ => Err(ErrorKind::NotAnAssignment),
    }
}

/// The value as the shell would see it: quotes removed, escapes and `$NAME` of earlier
/// variables applied, an unquoted `#` after white space starting a comment.
#[inline(never)]
fn unquote(raw: &[u8], seen: &[(&[u8], Value)], value: &mut Value) -> Result<(), ErrorKind> {
    let too_long = ErrorKind::ValueTooLong { name: Name::VALUE };
    let mut push = |bytes: &[u8]| value.extend_from_slice(bytes).map_err(|_| too_long);
    let mut i = 0;
    while i < raw.len() {
        match raw[i] {
            b'\'' => {
                let end = raw[i + 1..].iter().position(|&b| b == b'\'').ok_or(ErrorKind::UnterminatedQuote)?;
                push(&raw[i + 1..i + 1 + end])?;
                i += end + 2;
            }
            b'"' => {
                i += 1;
                loop {
                    match raw.get(i) {
                        None => return Err(ErrorKind::UnterminatedQuote),
                        Some(b'"') => break,
                        Some(b'\\') if matches!(raw.get(i + 1), Some(b'"' | b'\\' | b'$' | b'`')) => {
                            push(&raw[i + 1..i + 2])?;
                            i += 2;
                        }
                        Some(b'$') => i = expand(raw, i, seen, &mut push)?,
                        Some(b'`') => return Err(ErrorKind::CommandSubstitution),
                        Some(_) => {
                            push(&raw[i..i + 1])?;
                            i += 1;
                        }
                    }
                }
                i += 1;
            }
            b'\\' if i + 1 < raw.len() => {
                push(&raw[i + 1..i + 2])?;
                i += 2;
            }
            b'$' => i = expand(raw, i, seen, &mut push)?,
            b'`' => return Err(ErrorKind::CommandSubstitution),
            b' ' | b'\t' => {
                let rest = <[u8]>::trim_ascii_start(&raw[i..]);
                if rest.is_empty() || rest[0] == b'#' {
                    break;
                }
                return Err(ErrorKind::UnquotedSpace);
            }
            b'\r' if i + 1 == raw.len() => break,
            _ => {
                push(&raw[i..i + 1])?;
                i += 1;
            }
        }
    }
    Ok(())
}

/// Expands `$NAME` or `${NAME}` at `raw[at]`; returns where the text continues.
#[inline(never)]
fn expand(
    raw: &[u8],
    at: usize,
    seen: &[(&[u8], Value)],
    push: &mut impl FnMut(&[u8]) -> Result<(), ErrorKind>,
) -> Result<usize, ErrorKind> {
    let rest = &raw[at + 1..];
    let (name, next) = match rest.first() {
        Some(b'(') => return Err(ErrorKind::CommandSubstitution),
        Some(b'{') => {
            let end = rest.iter().position(|&b| b == b'}').ok_or(ErrorKind::UnterminatedQuote)?;
            (&rest[1..end], at + 1 + end + 1)
        }
        _ => {
            let len = rest.iter().position(|&b| !(b.is_ascii_alphanumeric() || b == b'_')).unwrap_or(rest.len());
            if len == 0 {
                // A lone `$` is literal, as in the shell.
                push(b"$")?;
                return Ok(at + 1);
            }
            (&rest[..len], at + 1 + len)
        }
    };
    let (_, value) = seen.iter().find(|(known, _)| *known == name).ok_or(ErrorKind::UndefinedVariable)?;
    push(value)?;
    Ok(next)
}

/// The numeric variables, as `VARIABLES` names them: each one's smallest and largest
/// value, and its field. A table rather than a match arm each: one lookup instead of eight.
type NumberField = fn(&mut Config) -> &mut u32;
const NUMBERS: [(u32, u32, NumberField); 8] = [
    (1, 21_600, |c| &mut c.imds_token_ttl),
    (1, 600_000, |c| &mut c.http_connect_ms),
    (1, 600_000, |c| &mut c.http_read_ms),
    (1, 3_600_000, |c| &mut c.http_total_ms),
    (0, 600_000, |c| &mut c.http_backoff_ms),
    (0, 600_000, |c| &mut c.http_backoff_max_ms),
    (1000, 600_000, |c| &mut c.dhcp_ms),
    (1024, USERDATA_LIMIT_MAX, |c| &mut c.userdata_limit),
];

/// Sets a known variable, set on `line`; `Ok(false)` for an unknown one.
#[inline(never)]
fn apply(config: &mut Config, name: &[u8], value: &str, line: u32) -> Result<bool, ErrorKind> {
    let Some(index) = crate::text::word_index(VARIABLES, name) else { return Ok(false) };
    let name = Name(index as u8);
    if let Some(&(min, max, field)) = NUMBERS.get(index) {
        *field(config) = number(name, value, min, max)?;
        return Ok(true);
    }
    if let Some(&phase) = Phase::ALL.get(index.wrapping_sub(FIRST_INIT_ACTIONS)) {
        set(config.init_actions[phase as usize].get_or_insert_with(String::new), name, value)?;
        config.action_lines[phase as usize] = line;
        return Ok(true);
    }
    match index {
        CLOUD => config.cloud = Cloud::from_name(value.as_bytes()).ok_or(ErrorKind::BadCloud)?,
        CLOUD_USER => {
            if !is_user_name(value) {
                return Err(ErrorKind::BadUserName);
            }
            config.cloud_user = String::try_from(value).map_err(|_| ErrorKind::BadUserName)?;
        }
        TINY_CLOUD_VAR => absolute(&mut config.var_dir, name, value)?,
        TINY_CLOUD_LOGS => absolute(&mut config.logs_dir, name, value)?,
        SKIP_INIT_ACTIONS => {
            set(&mut config.skip_actions, name, value)?;
            config.action_lines[SKIP_INIT_ACTIONS - FIRST_INIT_ACTIONS] = line;
        }
        // tiny-cloud's hotplug settings: wisp installs no hotplug handlers (see README).
        HOTPLUG_TYPE | HOTPLUG_MODULES => {}
        // `line` and `value`: words of messages, not variables.
        _ => return Ok(false),
    }
    Ok(true)
}

fn number(name: Name, value: &str, min: u32, max: u32) -> Result<u32, ErrorKind> {
    let n = crate::text::decimal(value.as_bytes(), 9).ok_or(ErrorKind::BadNumber { name })? as u32;
    if n < min || n > max {
        return Err(ErrorKind::OutOfRange { name, min, max });
    }
    Ok(n)
}

fn absolute(field: &mut String<VALUE_LIMIT>, name: Name, value: &str) -> Result<(), ErrorKind> {
    if !value.starts_with('/') {
        return Err(ErrorKind::NotAbsolute { name });
    }
    set(field, name, value)
}

/// Replaces the field's text (a failure leaves the configuration unusable anyway).
fn set(field: &mut String<VALUE_LIMIT>, name: Name, value: &str) -> Result<(), ErrorKind> {
    field.clear();
    field.push_str(value).map_err(|_| ErrorKind::ValueTooLong { name })
}

/// POSIX portable user names, as adduser accepts them: `[a-z_][a-z0-9_-]*`, an optional
/// trailing `$`, at most 32 bytes.
pub fn is_user_name(name: &str) -> bool {
    let body = name.strip_suffix('$').unwrap_or(name);
    let mut bytes = body.bytes();
    let first_ok = bytes.next().is_some_and(|b| b.is_ascii_lowercase() || b == b'_');
    first_ok && bytes.all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-') && name.len() <= 32
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `Name` of a word of `VARIABLES`.
    fn variable(word: &str) -> Name {
        Name(crate::text::word_index(VARIABLES, word.as_bytes()).unwrap() as u8)
    }

    #[test]
    fn each_other_variable_is_named_at_its_index() {
        let named = [(CLOUD, "CLOUD"), (CLOUD_USER, "CLOUD_USER"), (TINY_CLOUD_VAR, "TINY_CLOUD_VAR"), (TINY_CLOUD_LOGS, "TINY_CLOUD_LOGS"), (SKIP_INIT_ACTIONS, "SKIP_INIT_ACTIONS")];
        for (index, name) in named {
            assert_eq!(crate::text::nth_word(VARIABLES, index), name);
        }
        for (index, phase) in Phase::ALL.into_iter().enumerate() {
            assert_eq!(crate::text::nth_word(VARIABLES, FIRST_INIT_ACTIONS + index), std::format!("INIT_ACTIONS_{}", phase.name().to_uppercase()));
        }
        assert_eq!([HOTPLUG_TYPE, HOTPLUG_MODULES, LINE, VALUE].map(|index| crate::text::nth_word(VARIABLES, index)), ["HOTPLUG_TYPE", "HOTPLUG_MODULES", "line", "value"]);
        // The words of messages are no variables: set, they are warned about as unknown.
        assert_eq!(parse_ok(b"line=1\nvalue=2").1, [(1, b"line".to_vec()), (2, b"value".to_vec())]);
        let (config, warnings) = parse_ok(b"CLOUD=aws\nCLOUD_USER=ec2-user\nTINY_CLOUD_VAR=/v\nTINY_CLOUD_LOGS=/l\nSKIP_INIT_ACTIONS=set_hostname\nHOTPLUG_TYPE=mdev\nHOTPLUG_MODULES=x\nCLOUDS=x");
        assert_eq!((config.cloud, config.cloud_user.as_str(), config.var_dir.as_str(), config.logs_dir.as_str()), (Cloud::Aws, "ec2-user", "/v", "/l"));
        assert_eq!((config.skip_actions.as_str(), config.action_lines[4]), ("set_hostname", 5));
        assert_eq!(warnings, [(8, b"CLOUDS".to_vec())]);
        assert_eq!(parse_err(b"TINY_CLOUD_LOGS=l").kind, ErrorKind::NotAbsolute { name: variable("TINY_CLOUD_LOGS") });
    }

    #[test]
    fn each_cloud_has_its_own_name_in_the_list() {
        assert_eq!(CLOUD_NAMES.split(' ').count(), Cloud::ALL.len());
        for cloud in Cloud::ALL {
            assert_eq!(Cloud::from_name(cloud.name().as_bytes()), Some(cloud));
        }
        assert_eq!(Cloud::Auto.name(), "auto");
        assert_eq!(Cloud::Digitalocean.name(), "digitalocean");
        assert_eq!(Cloud::Vultr.name(), "vultr");
        assert_eq!(Cloud::from_name(b"vult"), None);
    }

    fn parse_ok(text: &[u8]) -> (Config, Vec<(u32, Vec<u8>)>) {
        let mut config = Config::default();
        let mut warnings = Vec::new();
        parse(text, &mut config, &mut |w| warnings.push((w.line, w.name.to_vec()))).unwrap();
        (config, warnings)
    }

    fn parse_err(text: &[u8]) -> Error {
        parse(text, &mut Config::default(), &mut |_| {}).unwrap_err()
    }

    #[test]
    fn defaults() {
        let config = Config::default();
        assert_eq!(config.cloud, Cloud::Auto);
        assert_eq!(config.cloud_user, "alpine");
        assert_eq!(config.imds_token_ttl, 5);
        assert_eq!(config.var_dir, "/var/lib/cloud");
        assert_eq!(config.logs_dir, "/var/log");
        assert_eq!(config.init_actions, [None, None, None, None]);
        assert_eq!((config.http_connect_ms, config.http_total_ms), (1000, 30_000));
    }

    #[test]
    fn tiny_cloud_style_file() {
        let text = b"# Tiny Cloud configuration\r\n\
            \n\
            CLOUD=aws\n\
            export CLOUD_USER='ec2-user'\n\
            \tIMDS_TOKEN_TTL=\"60\"   # seconds\n\
            TINY_CLOUD_VAR=/srv/cloud\n\
            TINY_CLOUD_LOGS=${TINY_CLOUD_VAR}/log\r\n\
            SKIP_INIT_ACTIONS=\"expand_root enable_sshd\"\n\
            INIT_ACTIONS_MAIN=\n\
            HOTPLUG_TYPE=mdev\n\
            WISP_HTTP_TOTAL_MS=3000\n\
            WISP_DHCP_MS=5000\n\
            WISP_USERDATA_LIMIT=65536\n";
        let (config, warnings) = parse_ok(text);
        assert!(warnings.is_empty());
        assert_eq!(config.cloud, Cloud::Aws);
        assert_eq!(config.cloud_user, "ec2-user");
        assert_eq!(config.dhcp_ms, 5000);
        assert_eq!(config.imds_token_ttl, 60);
        assert_eq!(config.var_dir, "/srv/cloud");
        assert_eq!(config.logs_dir, "/srv/cloud/log");
        assert_eq!(config.skip_actions, "expand_root enable_sshd");
        assert_eq!(config.init_actions[2].as_deref(), Some(""));
        assert_eq!(config.init_actions[0], None);
        assert_eq!(config.http_total_ms, 3000);
        assert_eq!(config.userdata_limit, 65536);
    }

    #[test]
    fn quoting_and_escapes() {
        let (config, _) = parse_ok(br#"TINY_CLOUD_VAR="/a \"b\" \\ \$x 'c'"'"d"'"#);
        assert_eq!(config.var_dir, r#"/a "b" \ $x 'c'"d""#);
        let (config, _) = parse_ok(b"TINY_CLOUD_VAR=/a\\ b$ #comment");
        assert_eq!(config.var_dir, "/a b$");
        let (config, _) = parse_ok(b"SKIP_INIT_ACTIONS=expand_root\nSKIP_INIT_ACTIONS=\"$SKIP_INIT_ACTIONS enable_sshd\"");
        assert_eq!(config.skip_actions, "expand_root enable_sshd");
    }

    #[test]
    fn unknown_variables_warn() {
        let (config, warnings) = parse_ok(b"CLOUD=gcp\nFOO=1\n\nBAR_BAZ='x'\n");
        assert_eq!(config.cloud, Cloud::Gcp);
        assert_eq!(warnings, vec![(2, b"FOO".to_vec()), (4, b"BAR_BAZ".to_vec())]);
        // A later line may use an unknown variable.
        let (config, _) = parse_ok(b"BASE=/opt\nTINY_CLOUD_VAR=$BASE/cloud");
        assert_eq!(config.var_dir, "/opt/cloud");
    }

    #[test]
    fn errors_name_the_line() {
        let cases: [(&[u8], Error); 14] = [
            (b"CLOUD=aws\nthis is not\n", Error { line: 2, kind: ErrorKind::NotAnAssignment }),
            (b"CLOUD = aws", Error { line: 1, kind: ErrorKind::SpaceAroundEquals }),
            (b"\n\nCLOUD=\"aws", Error { line: 3, kind: ErrorKind::UnterminatedQuote }),
            (b"CLOUD='aws", Error { line: 1, kind: ErrorKind::UnterminatedQuote }),
            (b"CLOUD=$(curl x)", Error { line: 1, kind: ErrorKind::CommandSubstitution }),
            (b"CLOUD=`curl x`", Error { line: 1, kind: ErrorKind::CommandSubstitution }),
            (b"CLOUD=\"a`b`\"", Error { line: 1, kind: ErrorKind::CommandSubstitution }),
            (b"TINY_CLOUD_VAR=$NOPE/x", Error { line: 1, kind: ErrorKind::UndefinedVariable }),
            (b"CLOUD=aws cmd", Error { line: 1, kind: ErrorKind::UnquotedSpace }),
            (b"CLOUD=azur", Error { line: 1, kind: ErrorKind::BadCloud }),
            (b"CLOUD_USER=Root", Error { line: 1, kind: ErrorKind::BadUserName }),
            (b"IMDS_TOKEN_TTL=five", Error { line: 1, kind: ErrorKind::BadNumber { name: variable("IMDS_TOKEN_TTL") } }),
            (b"IMDS_TOKEN_TTL=21601", Error { line: 1, kind: ErrorKind::OutOfRange { name: variable("IMDS_TOKEN_TTL"), min: 1, max: 21_600 } }),
            (b"TINY_CLOUD_LOGS=var/log", Error { line: 1, kind: ErrorKind::NotAbsolute { name: variable("TINY_CLOUD_LOGS") } }),
        ];
        for (text, error) in cases {
            assert_eq!(parse_err(text), error, "{:?}", std::string::String::from_utf8_lossy(text));
        }
        assert_eq!(
            Error { line: 7, kind: ErrorKind::NotAnAssignment }.to_string(),
            "7: not a KEY=value line"
        );
    }

    #[test]
    fn an_error_about_a_variable_names_it_after_the_line() {
        let message = |kind| Error { line: 4, kind }.to_string();
        assert_eq!(message(ErrorKind::LineTooLong), "4: line longer than 1024 bytes");
        assert_eq!(message(ErrorKind::ValueTooLong { name: variable("TINY_CLOUD_VAR") }), "4: TINY_CLOUD_VAR longer than 256 bytes");
        assert_eq!(message(ErrorKind::BadNumber { name: variable("IMDS_TOKEN_TTL") }), "4: IMDS_TOKEN_TTL is not a number");
        assert_eq!(message(ErrorKind::OutOfRange { name: variable("IMDS_TOKEN_TTL"), min: 1, max: 21_600 }), "4: IMDS_TOKEN_TTL must be from 1 to 21600");
        assert_eq!(message(ErrorKind::NotAbsolute { name: variable("TINY_CLOUD_LOGS") }), "4: TINY_CLOUD_LOGS must be an absolute path");
        assert_eq!(message(ErrorKind::UnterminatedQuote), "4: unterminated quote");
        assert!(message(ErrorKind::BadCloud).starts_with("4: CLOUD: expected auto, aws, "));
    }

    #[test]
    fn each_error_reads_as_its_message() {
        let message = |kind| Error { line: 12, kind }.to_string();
        assert_eq!(message(ErrorKind::NotAnAssignment), "12: not a KEY=value line");
        assert_eq!(message(ErrorKind::SpaceAroundEquals), "12: no spaces allowed around '='");
        assert_eq!(message(ErrorKind::UnterminatedQuote), "12: unterminated quote");
        assert_eq!(message(ErrorKind::CommandSubstitution), "12: command substitution is not supported");
        assert_eq!(message(ErrorKind::UndefinedVariable), "12: $ names a variable not set earlier in this file");
        assert_eq!(message(ErrorKind::UnquotedSpace), "12: white space in a value must be quoted");
        assert_eq!(message(ErrorKind::LineTooLong), "12: line longer than 1024 bytes");
        assert_eq!(message(ErrorKind::ValueTooLong { name: variable("value") }), "12: value longer than 256 bytes");
        assert_eq!(message(ErrorKind::BadCloud), std::format!("12: CLOUD: {CLOUD_NAMES_MESSAGE}"));
        assert_eq!(message(ErrorKind::BadUserName), "12: CLOUD_USER is not a valid user name");
        assert_eq!(message(ErrorKind::BadNumber { name: variable("WISP_DHCP_MS") }), "12: WISP_DHCP_MS is not a number");
        assert_eq!(message(ErrorKind::OutOfRange { name: variable("WISP_DHCP_MS"), min: 1000, max: 600_000 }), "12: WISP_DHCP_MS must be from 1000 to 600000");
        assert_eq!(message(ErrorKind::NotAbsolute { name: variable("TINY_CLOUD_VAR") }), "12: TINY_CLOUD_VAR must be an absolute path");
    }

    #[test]
    fn unknown_actions_name_line_and_word() {
        let cases: [(&[u8], UnknownAction); 4] = [
            (b"CLOUD=aws\n\nSKIP_INIT_ACTIONS=\"expand_root set_hostnme\"", UnknownAction { line: 3, variable: "SKIP_INIT_ACTIONS", word: "set_hostnme" }),
            (b"INIT_ACTIONS_EARLY=save_userdata,bogus", UnknownAction { line: 1, variable: "INIT_ACTIONS_EARLY", word: "bogus" }),
            (b"X=1\nINIT_ACTIONS_FINAL='run_userdata expand-root'", UnknownAction { line: 2, variable: "INIT_ACTIONS_FINAL", word: "expand-root" }),
            // The last assignment counts, as in the shell.
            (b"SKIP_INIT_ACTIONS=nope\nSKIP_INIT_ACTIONS=enable_sshd\nINIT_ACTIONS_MAIN=x", UnknownAction { line: 3, variable: "INIT_ACTIONS_MAIN", word: "x" }),
        ];
        for (text, unknown) in cases {
            let (config, _) = parse_ok(text);
            assert_eq!(config.check_actions(), Err(unknown));
        }
        let (config, _) = parse_ok(b"SKIP_INIT_ACTIONS=expand_root\nINIT_ACTIONS_BOOT=");
        assert_eq!(config.check_actions(), Ok(()));
        assert_eq!(Config::default().check_actions(), Ok(()));
        let error = UnknownAction { line: 3, variable: "SKIP_INIT_ACTIONS", word: "set_hostnme" };
        assert_eq!(error.to_string(), "3: SKIP_INIT_ACTIONS names an unknown action 'set_hostnme'");
        assert_eq!(UnknownAction { word: "a\x1bb", ..error }.to_string(), "3: SKIP_INIT_ACTIONS names an unknown action 'a\\x1bb'");
    }

    #[test]
    fn limits_at_the_boundary() {
        let fits = format!("TINY_CLOUD_VAR=/{}", "a".repeat(VALUE_LIMIT - 1));
        assert_eq!(parse_ok(fits.as_bytes()).0.var_dir.len(), VALUE_LIMIT);
        let over = format!("TINY_CLOUD_VAR=/{}", "a".repeat(VALUE_LIMIT));
        assert_eq!(parse_err(over.as_bytes()).kind, ErrorKind::ValueTooLong { name: variable("value") });
        let long_line = format!("# {}", "x".repeat(LINE_LIMIT - 2));
        assert!(parse(long_line.as_bytes(), &mut Config::default(), &mut |_| {}).is_ok());
        let too_long = format!("# {}", "x".repeat(LINE_LIMIT - 1));
        assert_eq!(parse_err(too_long.as_bytes()).kind, ErrorKind::LineTooLong);
        assert!(is_user_name(&"a".repeat(32)));
        assert!(!is_user_name(&"a".repeat(33)));
        assert!(is_user_name("_svc-1$"));
        assert!(!is_user_name("1abc") && !is_user_name("") && !is_user_name("a:b"));
    }

    #[test]
    fn each_number_sets_its_own_field_within_its_own_range() {
        type Field = fn(&Config) -> u32;
        let numbers: [(&'static str, Field, u32, u32); 8] = [
            ("IMDS_TOKEN_TTL", |c| c.imds_token_ttl, 1, 21_600),
            ("WISP_HTTP_CONNECT_MS", |c| c.http_connect_ms, 1, 600_000),
            ("WISP_HTTP_READ_MS", |c| c.http_read_ms, 1, 600_000),
            ("WISP_HTTP_TOTAL_MS", |c| c.http_total_ms, 1, 3_600_000),
            ("WISP_HTTP_BACKOFF_MS", |c| c.http_backoff_ms, 0, 600_000),
            ("WISP_HTTP_BACKOFF_MAX_MS", |c| c.http_backoff_max_ms, 0, 600_000),
            ("WISP_DHCP_MS", |c| c.dhcp_ms, 1000, 600_000),
            ("WISP_USERDATA_LIMIT", |c| c.userdata_limit, 1024, USERDATA_LIMIT_MAX),
        ];
        let defaults = Config::default();
        for (name, field, min, max) in numbers {
            for value in [min, max] {
                let (config, warnings) = parse_ok(format!("{name}={value}").as_bytes());
                assert!(warnings.is_empty(), "{name}");
                assert_eq!(field(&config), value, "{name}");
                for (other, other_field, _, _) in numbers {
                    if other != name {
                        assert_eq!(other_field(&config), other_field(&defaults), "{name} set {other}");
                    }
                }
            }
            assert_eq!(parse_err(format!("{name}={}", max + 1).as_bytes()).kind, ErrorKind::OutOfRange { name: variable(name), min, max });
            if min > 0 {
                assert_eq!(parse_err(format!("{name}={}", min - 1).as_bytes()).kind, ErrorKind::OutOfRange { name: variable(name), min, max });
            }
            assert_eq!(parse_err(format!("{name}=x").as_bytes()).kind, ErrorKind::BadNumber { name: variable(name) });
        }
    }

    #[test]
    fn garbage_never_panics() {
        let pieces: [&[u8]; 12] = [b"A", b"=", b"\"", b"'", b"$", b"{", b"}", b"\\", b" ", b"#", b"\n", b"\xff"];
        let mut garbage = crate::fuzz::Garbage::new(7);
        for _ in 0..3000 {
            let text = garbage.text(&pieces, 24);
            crate::fuzz::seed("config", &text);
            let mut config = Config::default();
            if parse(&text, &mut config, &mut |_| {}).is_ok() {
                // Only `A` is ever set here, an unknown variable: a warning, nothing changed.
                assert_eq!(config, Config::default());
            }
        }
    }
}
