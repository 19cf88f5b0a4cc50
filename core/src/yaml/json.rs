//! A value as JSON, as Python's `json.dumps` writes what PyYAML loaded.

use core::fmt::{self, Write};

use super::node::{Kind, Scalar, NodeRef};
use super::resolve::{decimal_digits, split_sign};
use crate::text::{Decimal, Hex};

/// A node in a test's failure or a `{:?}` is shown as the JSON it stands for.
impl fmt::Debug for NodeRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_json(*self, f)
    }
}

/// Writes `value` as JSON, as Python's `json.dumps` writes what PyYAML loaded: keys as
/// strings (`1`, `true` and `null` keys become "1", "true" and "null"), floats as numbers
/// of the same value (`Infinity`, `-Infinity`, `NaN` for the special ones), and bytes
/// (`!!binary`) as cloud-init's `json_dumps` does.
pub fn write_json(value: NodeRef<'_>, out: &mut dyn Write) -> fmt::Result {
    match value.kind() {
        Kind::Scalar => match value.scalar() {
            Some(Scalar::Str(_) | Scalar::Binary(_)) => write_json_key(value, out),
            scalar => write_scalar(scalar, out),
        },
        Kind::Sequence => {
            out.write_char('[')?;
            for (i, item) in value.items().enumerate() {
                if i > 0 {
                    out.write_char(',')?;
                }
                write_json(item, out)?;
            }
            out.write_char(']')
        }
        Kind::Mapping => {
            out.write_char('{')?;
            for (i, (key, item)) in value.entries().enumerate() {
                if i > 0 {
                    out.write_char(',')?;
                }
                write_json_key(key, out)?;
                out.write_char(':')?;
                write_json(item, out)?;
            }
            out.write_char('}')
        }
    }
}

/// A mapping key as JSON has it: always a string.
pub fn write_json_key(key: NodeRef<'_>, out: &mut dyn Write) -> fmt::Result {
    match key.scalar() {
        Some(Scalar::Str(text)) => write_string(text, out),
        scalar => {
            out.write_char('"')?;
            write_scalar(scalar, out)?;
            out.write_char('"')
        }
    }
}

fn write_scalar(scalar: Option<Scalar<'_>>, out: &mut dyn Write) -> fmt::Result {
    match scalar {
        Some(Scalar::Bool(true)) => out.write_str("true"),
        Some(Scalar::Bool(false)) => out.write_str("false"),
        Some(Scalar::Int(n)) => {
            if n < 0 {
                out.write_char('-')?;
            }
            write!(out, "{}", Decimal(n.unsigned_abs()))
        }
        Some(Scalar::Float(text)) => write_float(text.as_bytes(), out),
        Some(Scalar::Str(text)) => out.write_str(text),
        Some(Scalar::Binary(bytes)) => write_binary(bytes, out),
        Some(Scalar::Null) | None => out.write_str("null"),
    }
}

/// Bytes as cloud-init's `json_dumps` writes them: `ci-b64:` and their base64.
fn write_binary(bytes: &[u8], out: &mut dyn Write) -> fmt::Result {
    out.write_str("ci-b64:")?;
    for group in bytes.chunks(3) {
        let mut four = *b"====";
        crate::base64::encode_unpadded(group, &mut four);
        four.iter().try_for_each(|&b| out.write_char(char::from(b)))?;
    }
    Ok(())
}

fn write_string(text: &str, out: &mut dyn Write) -> fmt::Result {
    out.write_char('"')?;
    for c in text.chars() {
        match c {
            '"' => out.write_str("\\\"")?,
            '\\' => out.write_str("\\\\")?,
            '\n' => out.write_str("\\n")?,
            '\t' => out.write_str("\\t")?,
            '\r' => out.write_str("\\r")?,
            // Also the line separators, which wisp's reader (and YAML 1.1) counts as line breaks.
            c if (c as u32) < 0x20 || matches!(c, '\u{85}' | '\u{2028}' | '\u{2029}') => {
                // `{:04x}` would bring core's padding machinery into the binary.
                let code = c as u32;
                write!(out, "\\u{}{}", Hex((code >> 8) as u8), Hex(code as u8))?
            }
            c => out.write_char(c)?,
        }
    }
    out.write_char('"')
}

/// A YAML 1.1 float (already matched by `is_float`) as a JSON number of the same value:
/// underscores dropped, `.5` and `1.` completed, sexagesimal parts added up.
fn write_float(text: &[u8], out: &mut dyn Write) -> fmt::Result {
    let (negative, body) = split_sign(text);
    if crate::text::eq_ignoring_case(body, b".nan") {
        return out.write_str("NaN");
    }
    if negative {
        out.write_char('-')?;
    }
    if crate::text::eq_ignoring_case(body, b".inf") {
        return out.write_str("Infinity");
    }
    let dot = body.iter().position(|&b| b == b'.').unwrap_or(body.len());
    let digits = |part: &[u8]| part.iter().filter(|&&b| b != b'_').count();
    let whole = &body[..dot];
    if whole.contains(&b':') {
        let sum = whole.split(|&b| b == b':').fold(0u64, |sum, part| sum.saturating_mul(60).saturating_add(decimal_digits(part)));
        write!(out, "{}", Decimal(sum))?;
    } else {
        let significant: &[u8] = whole.iter().position(|&b| b != b'0' && b != b'_').map_or(b"0", |i| &whole[i..]);
        write_digits(significant, out)?;
    }
    let rest = body.get(dot + 1..).unwrap_or(b"");
    let e = rest.iter().position(|&b| b == b'e' || b == b'E').unwrap_or(rest.len());
    out.write_char('.')?;
    if digits(&rest[..e]) == 0 {
        out.write_char('0')?;
    }
    write_digits(&rest[..e], out)?;
    write_digits(&rest[e..], out)
}

fn write_digits(text: &[u8], out: &mut dyn Write) -> fmt::Result {
    text.iter().filter(|&&b| b != b'_').try_for_each(|&b| out.write_char(b as char))
}

