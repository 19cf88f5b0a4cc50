//! NoCloud: `ds=nocloud` tokens on the kernel command line or in the DMI serial, and the
//! `meta-data` document (YAML or JSON) of a seed.

use core::fmt;

use crate::json;
use crate::out::{Full, Out};
use crate::text::Decimal;

/// What `ds=nocloud;s=...;h=...;i=...` says; each piece is optional.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tokens<'a> {
    pub seed_from: Option<&'a [u8]>,
    pub hostname: Option<&'a [u8]>,
    pub instance_id: Option<&'a [u8]>,
}

/// The `ds=nocloud` (or `nocloud-net`) token in a command line or DMI serial, if any.
pub fn tokens(text: &[u8]) -> Option<Tokens<'_>> {
    let word = text.split(|b| b.is_ascii_whitespace()).find(|word| {
        let rest = word.strip_prefix(b"ds=").unwrap_or(b"");
        let name = rest.split(|&b| b == b';').next().unwrap_or(rest);
        name == b"nocloud" || name == b"nocloud-net"
    })?;
    let mut found = Tokens::default();
    for option in word.split(|&b| b == b';').skip(1) {
        let (key, value) = match option.iter().position(|&b| b == b'=') {
            Some(eq) => (&option[..eq], &option[eq + 1..]),
            None => continue,
        };
        // Each field's short and long key, in the order of `Tokens`' fields.
        let field = match crate::text::word_index("s seedfrom h local-hostname i instance-id", key).map(|index| index / 2) {
            Some(0) => &mut found.seed_from,
            Some(1) => &mut found.hostname,
            Some(2) => &mut found.instance_id,
            _ => continue,
        };
        *field = Some(value);
    }
    Some(found)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetaDataError {
    /// YAML wisp's reader does not take (anchors, flow collections, deeper nesting...),
    /// at this line.
    Unsupported { line: u32 },
    Json(json::JsonError),
    TooLarge { limit: u32 },
}

impl fmt::Display for MetaDataError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MetaDataError::Unsupported { line } => write!(f, "meta-data line {line}: YAML this reader does not take", line = Decimal((*line).into())),
            MetaDataError::Json(e) => write!(f, "meta-data: {e}"),
            MetaDataError::TooLarge { limit } => write!(f, "meta-data value larger than {limit} bytes", limit = Decimal((*limit).into())),
        }
    }
}

impl From<json::JsonError> for MetaDataError {
    fn from(e: json::JsonError) -> Self {
        MetaDataError::Json(e)
    }
}

impl From<Full> for MetaDataError {
    fn from(full: Full) -> Self {
        MetaDataError::TooLarge { limit: full.limit as u32 }
    }
}

/// The value of `key` in meta-data, written to `out` (public-keys as one key per line,
/// whether the document gives a string, a list or a map); `Ok(None)` when absent.
pub fn value(document: &[u8], key: &str, out: &mut [u8]) -> Result<Option<usize>, MetaDataError> {
    let text = document.trim_ascii_start();
    if text.first() == Some(&b'{') {
        return json_value(text, key, out);
    }
    yaml_value(document, key, out)
}

fn json_value(text: &[u8], key: &str, out: &mut [u8]) -> Result<Option<usize>, MetaDataError> {
    let Some(value) = json::JsonText::find(text, &[key])? else { return Ok(None) };
    let mut writer = Out::new(out);
    match value.text.first() {
        Some(b'[') => {
            let mut items = value.elements()?;
            while let Some(item) = items.next_element() {
                put_string(text, item, &mut writer)?;
                writer.put(b"\n")?;
            }
        }
        Some(b'{') => {
            // A map of name to key: the keys, in order.
            let mut members = value.members()?;
            while let Some((_, item)) = members.next_member() {
                put_string(text, item, &mut writer)?;
                writer.put(b"\n")?;
            }
        }
        _ => put_string(text, value, &mut writer)?,
    }
    Ok(Some(writer.len()))
}

/// The subset of YAML meta-data files use: `key: value` at the top, with scalars plain
/// or quoted, and one level of `- item` list or `name: value` map under a bare `key:`.
/// Never inlined: its three callers would each hold a copy and its 16 KiB buffer.
#[inline(never)]
fn put_string(document: &[u8], v: json::JsonText<'_>, writer: &mut Out<'_>) -> Result<(), MetaDataError> {
    let mut buf = [0u8; 16 * 1024];
    let len = v.unescape_into(document, &mut buf)?;
    writer.put(&buf[..len])?;
    Ok(())
}

fn yaml_value(document: &[u8], key: &str, out: &mut [u8]) -> Result<Option<usize>, MetaDataError> {
    let mut writer = Out::new(out);
    let mut inside = false;
    let mut found = false;
    for (index, raw) in document.split(|&b| b == b'\n').enumerate() {
        let line_number = index as u32 + 1;
        let line = strip_comment(raw.strip_suffix(b"\r").unwrap_or(raw));
        if line.trim_ascii().is_empty() || line == b"---" {
            continue;
        }
        let indented = line[0] == b' ' || line[0] == b'\t';
        let content = line.trim_ascii();
        if !indented {
            inside = false;
            let colon = content.iter().position(|&b| b == b':').ok_or(MetaDataError::Unsupported { line: line_number })?;
            let (name, rest) = (content[..colon].trim_ascii(), content[colon + 1..].trim_ascii());
            if name != key.as_bytes() {
                continue;
            }
            found = true;
            if rest.is_empty() {
                inside = true;
            } else {
                writer.put(scalar(rest, line_number)?)?;
            }
            continue;
        }
        if !inside {
            continue;
        }
        let item = match content.strip_prefix(b"- ").or_else(|| (content == b"-").then_some(&b""[..])) {
            Some(item) => item,
            None => {
                let colon = content.iter().position(|&b| b == b':').ok_or(MetaDataError::Unsupported { line: line_number })?;
                content[colon + 1..].trim_ascii()
            }
        };
        writer.put(scalar(item.trim_ascii(), line_number)?)?;
        writer.put(b"\n")?;
    }
    Ok(found.then_some(writer.len()))
}

/// A scalar with its quotes removed; flow collections, anchors, aliases and tags are not
/// taken.
fn scalar(text: &[u8], line: u32) -> Result<&[u8], MetaDataError> {
    let unsupported = MetaDataError::Unsupported { line };
    match text.first() {
        Some(b'"') | Some(b'\'') => {
            let quote = text[0];
            let inner = text[1..].strip_suffix(&[quote]).ok_or(unsupported)?;
            // Escapes inside double quotes are not needed by meta-data; refuse them.
            if quote == b'"' && inner.contains(&b'\\') {
                return Err(unsupported);
            }
            Ok(inner)
        }
        Some(b'[' | b'{' | b'&' | b'*' | b'!' | b'|' | b'>') => Err(unsupported),
        _ => Ok(text),
    }
}

fn strip_comment(line: &[u8]) -> &[u8] {
    let mut quote = None;
    for (i, &b) in line.iter().enumerate() {
        match (quote, b) {
            (None, b'"' | b'\'') => quote = Some(b),
            (Some(q), _) if b == q => quote = None,
            (None, b'#') if i == 0 || line[i - 1] == b' ' || line[i - 1] == b'\t' => return &line[..i],
            _ => {}
        }
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(document: &[u8], key: &str) -> Option<String> {
        crate::fuzz::seed("nocloud", document);
        let mut out = [0u8; 1024];
        value(document, key, &mut out).unwrap().map(|n| String::from_utf8(out[..n].to_vec()).unwrap())
    }

    #[test]
    fn command_line_tokens() {
        let line = b"BOOT_IMAGE=/vmlinuz root=/dev/vda1 ds=nocloud;s=http://10.0.0.1:8000/;h=web1;i=iid-7 quiet";
        crate::fuzz::seed("nocloud", line);
        assert_eq!(tokens(line), Some(Tokens { seed_from: Some(b"http://10.0.0.1:8000/"), hostname: Some(b"web1"), instance_id: Some(b"iid-7") }));
        assert_eq!(tokens(b"ds=nocloud-net;seedfrom=/srv/seed/;local-hostname=x"), Some(Tokens { seed_from: Some(b"/srv/seed/"), hostname: Some(b"x"), instance_id: None }));
        assert_eq!(tokens(b"ds=nocloud"), Some(Tokens::default()));
        // The long key of each field, and keys that name none (or no value) left alone.
        assert_eq!(
            tokens(b"ds=nocloud;instance-id=iid-9;x=1;seedfrom;S=/up;hostname=no"),
            Some(Tokens { seed_from: None, hostname: None, instance_id: Some(b"iid-9") })
        );
        assert_eq!(tokens(b"root=/dev/vda1 ds=ec2"), None);
        assert_eq!(tokens(b"nods=nocloud"), None);
    }

    #[test]
    fn yaml_meta_data() {
        let doc = b"# written by hand\ninstance-id: iid-local01\nlocal-hostname: 'cloud-img'  # comment\nhostname: \"h.example\"\n\
            public-keys:\n  - ssh-ed25519 AAAA one\n  - \"ssh-rsa BBBB two\"\nother: x\n";
        assert_eq!(get(doc, "instance-id").unwrap(), "iid-local01");
        assert_eq!(get(doc, "local-hostname").unwrap(), "cloud-img");
        assert_eq!(get(doc, "hostname").unwrap(), "h.example");
        assert_eq!(get(doc, "public-keys").unwrap(), "ssh-ed25519 AAAA one\nssh-rsa BBBB two\n");
        assert_eq!(get(doc, "missing"), None);
        let map = b"public-keys:\n  laptop: ssh-ed25519 AAAA one\n  desk: ssh-rsa BBBB two\n";
        assert_eq!(get(map, "public-keys").unwrap(), "ssh-ed25519 AAAA one\nssh-rsa BBBB two\n");
        assert_eq!(get(b"public-keys: ssh-ed25519 AAAA one\n", "public-keys").unwrap(), "ssh-ed25519 AAAA one");
    }

    #[test]
    fn json_meta_data() {
        let doc = br#"{"instance-id": "iid-2", "local-hostname": "j", "public-keys": ["ssh-ed25519 A", "ssh-rsa B"]}"#;
        assert_eq!(get(doc, "instance-id").unwrap(), "iid-2");
        assert_eq!(get(doc, "public-keys").unwrap(), "ssh-ed25519 A\nssh-rsa B\n");
        let map = br#"{"public-keys": {"a": "ssh-ed25519 A", "b": "ssh-rsa B"}}"#;
        assert_eq!(get(map, "public-keys").unwrap(), "ssh-ed25519 A\nssh-rsa B\n");
    }

    #[test]
    fn refusals() {
        let mut out = [0u8; 64];
        assert_eq!(value(b"instance-id: &anchor x\n", "instance-id", &mut out), Err(MetaDataError::Unsupported { line: 1 }));
        assert_eq!(value(b"a: 1\njust text\n", "a", &mut out), Err(MetaDataError::Unsupported { line: 2 }));
        assert_eq!(value(b"k: [1, 2]\n", "k", &mut out), Err(MetaDataError::Unsupported { line: 1 }));
        assert!(matches!(value(b"{\"instance-id\": ", "instance-id", &mut out), Err(MetaDataError::Json(_))));
        let mut small = [0u8; 4];
        assert_eq!(value(b"instance-id: iid-local01\n", "instance-id", &mut small), Err(MetaDataError::TooLarge { limit: 4 }));
    }
}
