//! Just enough JSON to read metadata documents: find a value by its path of member
//! names, walk an array, and unescape a string into the caller's buffer. Nothing is
//! copied until asked for, and nothing is allocated. And one writer: a string, quoted.

use core::fmt;

use crate::out::{Full, Out};
use crate::text::{Decimal, Plain};

/// Deepest nesting accepted.
pub const DEPTH_LIMIT: usize = 32;
/// `TooDeep`'s message: the limit as a literal, not formatted at each error; the assertion
/// keeps it saying `DEPTH_LIMIT`.
const TOO_DEEP: &str = "JSON nested deeper than 32 levels";
const _: () = assert!(DEPTH_LIMIT == 32);

/// 8 bytes, so that the `?`s of the document readers move it in a register: sizes as
/// u32 (documents are far below 4 GiB), the expected type named by an enum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JsonError {
    /// Not JSON at this byte offset.
    Syntax { offset: u32 },
    TooDeep { limit: u32 },
    /// A value of another type than the one asked for.
    WrongType { expected: Expected },
    /// An unescaped string does not fit in the caller's buffer, whose size is the limit.
    StringTooLong { limit: u32 },
}

/// What a value was expected to be, as the message says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expected {
    Object,
    Array,
    String,
    Mapping,
    ObjectWithErrors,
    MetaData,
}

impl Expected {
    const fn as_str(self) -> &'static str {
        match self {
            Expected::Object => "an object",
            Expected::Array => "an array",
            Expected::String => "a string",
            Expected::Mapping => "a mapping",
            Expected::ObjectWithErrors => "an object with v1.errors",
            Expected::MetaData => "meta-data",
        }
    }
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            JsonError::Syntax { offset } => write!(f, "invalid JSON at byte {offset}", offset = Decimal(offset.into())),
            JsonError::TooDeep { .. } => f.write_str(TOO_DEEP),
            JsonError::WrongType { expected } => write!(f, "JSON value is not {expected}", expected = Plain(expected.as_str())),
            JsonError::StringTooLong { limit } => write!(f, "JSON string longer than {limit} bytes", limit = Decimal(limit.into())),
        }
    }
}

/// A string that does not fit the caller's buffer.
impl From<Full> for JsonError {
    fn from(full: Full) -> Self {
        JsonError::StringTooLong { limit: full.limit as u32 }
    }
}

/// A value inside a document: its bytes only, 16 bytes, so that `Object::get` returns it
/// in registers. Where it starts (for a bad escape's offset) is its distance from the
/// document, which the caller of `unescape_into` holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JsonText<'a> {
    pub text: &'a [u8],
}

impl<'a> JsonText<'a> {
    /// The whole document, checked to be one well-formed value.
    pub fn parse(document: &'a [u8]) -> Result<JsonText<'a>, JsonError> {
        let start = skip_space(document, 0);
        let end = skip_value(document, start, 0)?;
        if skip_space(document, end) != document.len() {
            return Err(JsonError::Syntax { offset: skip_space(document, end) as u32 });
        }
        Ok(JsonText { text: &document[start..end] })
    }

    /// The value at a path of member names in a document: `parse` and `path` in one
    /// call, so that each caller handles one result, not two.
    pub fn find(document: &'a [u8], names: &[&str]) -> Result<Option<JsonText<'a>>, JsonError> {
        JsonText::parse(document)?.path(names)
    }

    /// This value as an object, whose members can then be looked up without a `?` each.
    pub fn object(&self) -> Result<Object<'a>, JsonError> {
        if self.text.first() != Some(&b'{') {
            return Err(JsonError::WrongType { expected: Expected::Object });
        }
        Ok(Object(*self))
    }

    /// The member `name` of an object; `Ok(None)` when absent (or `null`).
    pub fn get(&self, name: &str) -> Result<Option<JsonText<'a>>, JsonError> {
        Ok(self.object()?.get(name))
    }

    /// Follows a path of member names.
    pub fn path(&self, names: &[&str]) -> Result<Option<JsonText<'a>>, JsonError> {
        let mut current = *self;
        for name in names {
            match current.get(name)? {
                Some(value) => current = value,
                None => return Ok(None),
            }
        }
        Ok(Some(current))
    }

    /// The members of an object, as (quoted key, value) pairs.
    pub fn members(&self) -> Result<Members<'a>, JsonError> {
        Ok(self.object()?.members())
    }

    /// The elements of an array.
    pub fn elements(&self) -> Result<Elements<'a>, JsonError> {
        if self.text.first() != Some(&b'[') {
            return Err(JsonError::WrongType { expected: Expected::Array });
        }
        Ok(Elements { value: *self, at: 1 })
    }

    /// A string's bytes, unescaped into `out`; returns the length. `document` is the text
    /// this value was found in: a bad escape's offset is counted from its start.
    pub fn unescape_into(&self, document: &[u8], out: &mut [u8]) -> Result<usize, JsonError> {
        let text = self.text;
        if text.len() < 2 || text[0] != b'"' {
            return Err(JsonError::WrongType { expected: Expected::String });
        }
        let mut out = Out::new(out);
        let body = &text[1..text.len() - 1];
        let mut i = 0;
        while i < body.len() {
            if body[i] != b'\\' {
                let run = body[i..].iter().position(|&b| b == b'\\').unwrap_or(body.len() - i);
                out.put(&body[i..i + run])?;
                i += run;
                continue;
            }
            let syntax = JsonError::Syntax { offset: (self.offset_in(document) + 1 + i) as u32 };
            let escape = *body.get(i + 1).ok_or(syntax)?;
            i += 2;
            let simple = match escape {
                b'"' => b'"',
                b'\\' => b'\\',
                b'/' => b'/',
                b'b' => 0x08,
                b'f' => 0x0c,
                b'n' => b'\n',
                b'r' => b'\r',
                b't' => b'\t',
                b'u' => {
                    let mut code = hex4(body.get(i..i + 4).ok_or(syntax)?).ok_or(syntax)?;
                    i += 4;
                    if (0xd800..0xdc00).contains(&code) && body.get(i..i + 2) == Some(b"\\u") {
                        let low = hex4(body.get(i + 2..i + 6).ok_or(syntax)?).ok_or(syntax)?;
                        if (0xdc00..0xe000).contains(&low) {
                            code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
                            i += 6;
                        }
                    }
                    let c = char::from_u32(code).unwrap_or('\u{fffd}');
                    let mut utf8 = [0u8; 4];
                    out.put(c.encode_utf8(&mut utf8).as_bytes())?;
                    continue;
                }
                _ => return Err(syntax),
            };
            out.put(&[simple])?;
        }
        Ok(out.len())
    }

    /// Where this value starts in `document`, the text it was found in: addresses
    /// compared, not stored, so that the value stays 16 bytes.
    fn offset_in(&self, document: &[u8]) -> usize {
        debug_assert!(document.as_ptr_range().contains(&self.text.as_ptr()), "a value of another document");
        (self.text.as_ptr() as usize).wrapping_sub(document.as_ptr() as usize)
    }
}

/// A value checked to be an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Object<'a>(JsonText<'a>);

impl<'a> Object<'a> {
    /// The member `name`; `None` when absent (or `null`).
    pub fn get(&self, name: &str) -> Option<JsonText<'a>> {
        let mut members = self.members();
        while let Some(key) = members.next_key() {
            let value = members.next_value()?;
            if key_equals(key.text, name.as_bytes()) {
                return (value.text != b"null").then_some(value);
            }
        }
        None
    }

    /// The members, as (quoted key, value) pairs.
    pub fn members(&self) -> Members<'a> {
        Members { value: self.0, at: 1 }
    }
}

/// Iterates an object's members.
pub struct Members<'a> {
    value: JsonText<'a>,
    /// Just past the last item read: 1, after the bracket, before the first.
    at: usize,
}

impl<'a> Members<'a> {
    /// `None` after the last member. The value was checked whole by `parse`, so a
    /// member that does not parse cannot occur; it would end the walk.
    pub fn next_member(&mut self) -> Option<(JsonText<'a>, JsonText<'a>)> {
        let key = self.next_key()?;
        Some((key, self.next_value()?))
    }

    /// The next member's key: `next_member` in two halves, each returned in registers
    /// (the pair, 32 bytes, goes through memory).
    fn next_key(&mut self) -> Option<JsonText<'a>> {
        let text = self.value.text;
        let mut at = skip_space(text, self.at);
        if self.at != 1 {
            if text.get(at) != Some(&b',') {
                return None;
            }
            at = skip_space(text, at + 1);
        }
        let key_end = skip_value(text, at, 0).ok()?;
        if text[at] != b'"' {
            return None;
        }
        self.at = key_end;
        Some(JsonText { text: &text[at..key_end] })
    }

    /// The value of the key `next_key` just read.
    fn next_value(&mut self) -> Option<JsonText<'a>> {
        let text = self.value.text;
        let start = skip_space(text, skip_space(text, self.at) + 1);
        let end = skip_value(text, start, 0).ok()?;
        self.at = end;
        Some(JsonText { text: &text[start..end] })
    }
}

/// Iterates an array's elements.
pub struct Elements<'a> {
    value: JsonText<'a>,
    /// Just past the last item read: 1, after the bracket, before the first.
    at: usize,
}

impl<'a> Elements<'a> {
    /// `None` after the last element (checked by `parse`, as `Members::next_member` says).
    pub fn next_element(&mut self) -> Option<JsonText<'a>> {
        let text = self.value.text;
        let mut at = skip_space(text, self.at);
        if self.at != 1 {
            if text.get(at) != Some(&b',') {
                return None;
            }
            at = skip_space(text, at + 1);
        }
        let end = skip_value(text, at, 0).ok()?;
        self.at = end;
        Some(JsonText { text: &text[at..end] })
    }
}

/// `text` as a JSON string: quoted, with `"`, `\\` and control characters escaped.
pub fn put_string(out: &mut Out<'_>, text: &str) -> Result<(), Full> {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.put(b"\"")?;
    for &byte in text.as_bytes() {
        match byte {
            b'"' | b'\\' => out.put(&[b'\\', byte])?,
            0..0x20 => out.put(&[b'\\', b'u', b'0', b'0', HEX[usize::from(byte >> 4)], HEX[usize::from(byte & 15)]])?,
            _ => out.put(&[byte])?,
        }
    }
    out.put(b"\"")
}

fn key_equals(quoted: &[u8], name: &[u8]) -> bool {
    quoted.len() == name.len() + 2 && &quoted[1..quoted.len() - 1] == name
}

fn hex4(digits: &[u8]) -> Option<u32> {
    digits.iter().try_fold(0u32, |n, &d| Some(n * 16 + (d as char).to_digit(16)?))
}

fn skip_space(text: &[u8], mut at: usize) -> usize {
    while matches!(text.get(at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        at += 1;
    }
    at
}

/// The end of the value starting at `at`, checking it on the way.
fn skip_value(text: &[u8], at: usize, depth: usize) -> Result<usize, JsonError> {
    let syntax = |offset: usize| JsonError::Syntax { offset: offset as u32 };
    if depth > DEPTH_LIMIT {
        return Err(JsonError::TooDeep { limit: DEPTH_LIMIT as u32 });
    }
    match text.get(at) {
        Some(b'"') => {
            let mut i = at + 1;
            loop {
                match text.get(i) {
                    Some(b'"') => return Ok(i + 1),
                    Some(b'\\') => i += 2,
                    Some(&b) if b < 0x20 => return Err(syntax(i)),
                    Some(_) => i += 1,
                    None => return Err(syntax(i)),
                }
            }
        }
        Some(&open @ (b'{' | b'[')) => {
            let close = if open == b'{' { b'}' } else { b']' };
            let mut i = skip_space(text, at + 1);
            if text.get(i) == Some(&close) {
                return Ok(i + 1);
            }
            loop {
                if open == b'{' {
                    if text.get(i) != Some(&b'"') {
                        return Err(syntax(i));
                    }
                    i = skip_space(text, skip_value(text, i, depth + 1)?);
                    if text.get(i) != Some(&b':') {
                        return Err(syntax(i));
                    }
                    i = skip_space(text, i + 1);
                }
                i = skip_space(text, skip_value(text, i, depth + 1)?);
                match text.get(i) {
                    Some(b',') => i = skip_space(text, i + 1),
                    Some(&b) if b == close => return Ok(i + 1),
                    _ => return Err(syntax(i)),
                }
            }
        }
        Some(b'-' | b'0'..=b'9') => {
            let rest = text.get(at..).unwrap_or_default();
            let len = rest.iter().position(|b| !matches!(b, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')).unwrap_or(rest.len());
            Ok(at + len)
        }
        // The literals, as a table: one compare loop, not three.
        _ => match [&b"true"[..], b"false", b"null"].into_iter().find(|word| text.get(at..).unwrap_or_default().starts_with(word)) {
            Some(word) => Ok(at + word.len()),
            None => Err(syntax(at)),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn string(document: &[u8], value: JsonText<'_>) -> String {
        let mut out = [0u8; 256];
        let n = value.unescape_into(document, &mut out).unwrap();
        String::from_utf8(out[..n].to_vec()).unwrap()
    }

    const AZURE: &[u8] = br#"{"compute": {"vmId": "02aab8a4-74ef-476e-8182-f6d2ba4166a6", "osProfile": {"computerName": "examplevmname", "adminUsername": "azureuser"},
        "publicKeys": [{"keyData": "ssh-rsa 0\r\n", "path": "/home/user/.ssh/authorized_keys"}, {"keyData": "ssh-ed25519 1", "path": "x"}],
        "tags": "", "userData": "IyEvYmluL3NoCg==", "zone": null}, "network": {"interface": [1.5e3, -2, true, false]}}"#;

    #[test]
    fn paths_and_strings() {
        let doc = JsonText::parse(AZURE).unwrap();
        assert_eq!(string(AZURE, doc.path(&["compute", "osProfile", "computerName"]).unwrap().unwrap()), "examplevmname");
        assert_eq!(string(AZURE, doc.path(&["compute", "vmId"]).unwrap().unwrap()), "02aab8a4-74ef-476e-8182-f6d2ba4166a6");
        assert_eq!(doc.path(&["compute", "zone"]).unwrap(), None);
        assert_eq!(doc.path(&["compute", "nothing", "here"]).unwrap(), None);
        let mut keys = doc.path(&["compute", "publicKeys"]).unwrap().unwrap().elements().unwrap();
        let first = keys.next_element().unwrap();
        assert_eq!(string(AZURE, first.get("keyData").unwrap().unwrap()), "ssh-rsa 0\r\n");
        assert_eq!(string(AZURE, keys.next_element().unwrap().get("keyData").unwrap().unwrap()), "ssh-ed25519 1");
        assert_eq!(keys.next_element(), None);
    }

    #[test]
    fn escapes() {
        let document = br#"{"a": "q\"b\\s\/\b\f\n\r\t\u00e9\ud83d\ude00 \u2028"}"#;
        let doc = JsonText::parse(document).unwrap();
        assert_eq!(string(document, doc.get("a").unwrap().unwrap()), "q\"b\\s/\u{8}\u{c}\n\r\té😀 \u{2028}");
        let mut small = [0u8; 3];
        assert_eq!(doc.get("a").unwrap().unwrap().unescape_into(document, &mut small), Err(JsonError::StringTooLong { limit: 3 }));
    }

    #[test]
    fn errors() {
        assert_eq!(JsonText::parse(b"{\"a\": }"), Err(JsonError::Syntax { offset: 6 }));
        assert_eq!(JsonText::parse(b"{\"a\": 1} x"), Err(JsonError::Syntax { offset: 9 }));
        assert_eq!(JsonText::parse(b"[1, 2"), Err(JsonError::Syntax { offset: 5 }));
        assert_eq!(JsonText::parse(b"\"raw\nline\""), Err(JsonError::Syntax { offset: 4 }));
        let deep = "[".repeat(DEPTH_LIMIT + 2) + &"]".repeat(DEPTH_LIMIT + 2);
        assert_eq!(JsonText::parse(deep.as_bytes()), Err(JsonError::TooDeep { limit: DEPTH_LIMIT as u32 }));
        assert_eq!(JsonError::TooDeep { limit: DEPTH_LIMIT as u32 }.to_string(), std::format!("JSON nested deeper than {DEPTH_LIMIT} levels"));
        let document = b"{\"a\": [1], \"s\": 5}";
        let doc = JsonText::parse(document).unwrap();
        assert_eq!(doc.get("a").unwrap().unwrap().get("x"), Err(JsonError::WrongType { expected: Expected::Object }));
        assert_eq!(doc.get("a").unwrap().unwrap().object(), Err(JsonError::WrongType { expected: Expected::Object }));
        assert_eq!(doc.object().unwrap().get("s").map(|s| s.text), Some(&b"5"[..]));
        assert_eq!(doc.object().unwrap().get("x"), None);
        assert_eq!(doc.get("s").unwrap().unwrap().elements().err(), Some(JsonError::WrongType { expected: Expected::Array }));
        assert_eq!(doc.get("s").unwrap().unwrap().unescape_into(document, &mut [0; 8]), Err(JsonError::WrongType { expected: Expected::String }));
        let bad = b"\"\\x\"";
        let bad_escape = JsonText::parse(bad).unwrap();
        assert_eq!(bad_escape.unescape_into(bad, &mut [0; 8]), Err(JsonError::Syntax { offset: 1 }));
        // Inside a document, the offset is the document's, not the string's.
        let nested = b"{\"a\": [1, \"ok\", \"\\u12x4\"]}";
        let mut elements = JsonText::find(nested, &["a"]).unwrap().unwrap().elements().unwrap();
        let third = [elements.next_element(), elements.next_element(), elements.next_element()][2].unwrap();
        assert_eq!(third.unescape_into(nested, &mut [0; 8]), Err(JsonError::Syntax { offset: 17 }));
        assert_eq!(JsonError::Syntax { offset: 17 }.to_string(), "invalid JSON at byte 17");
    }

    #[test]
    fn strings_written_read_back() {
        let mut buf = [0u8; 64];
        let mut out = Out::new(&mut buf);
        put_string(&mut out, "a\"b\\c\n\x1b é").unwrap();
        assert_eq!(out.written(), r#""a\"b\\c\u000a\u001b é""#.as_bytes());
        let mut back = [0u8; 64];
        let len = JsonText::parse(out.written()).unwrap().unescape_into(out.written(), &mut back).unwrap();
        assert_eq!(&back[..len], "a\"b\\c\n\x1b é".as_bytes());
        assert_eq!(put_string(&mut Out::new(&mut [0u8; 3]), "abc"), Err(Full { limit: 3 }));
    }

    #[test]
    fn garbage_never_panics() {
        let pieces: [&[u8]; 12] = [b"{", b"}", b"[", b"]", b"\"", b"\\", b":", b",", b"1", b"true", b"u", b" "];
        let mut garbage = crate::fuzz::Garbage::new(17);
        for _ in 0..5000 {
            let text = garbage.text(&pieces, 20);
            crate::fuzz::seed("json", &text);
            if let Ok(doc) = JsonText::parse(&text) {
                let _ = doc.get("a");
                let mut out = [0; 16];
                if let Ok(len) = doc.unescape_into(&text, &mut out) {
                    assert!(len <= text.len());
                }
                if let Ok(mut elements) = doc.elements() {
                    let mut count = 0;
                    while elements.next_element().is_some() {
                        count += 1;
                    }
                    // Each element takes at least one byte of the text.
                    assert!(count <= text.len());
                }
            }
        }
    }
}
