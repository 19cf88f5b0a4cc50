//! The YAML cloud-config is written in, read as PyYAML's `safe_load` reads it: block and
//! flow collections, the five scalar styles, comments, one document. Anchors, aliases,
//! tags, complex and merge keys, directives and further documents are refused with the
//! line and column where they appear, as is everything PyYAML would not load.
//!
//! Nodes and decoded scalar text go into buffers the caller owns (an [`Arena`]); a
//! [`Value`] is a view into them. Plain scalars are resolved as PyYAML's SafeLoader
//! (YAML 1.1) resolves them, with two differences: timestamps stay strings, and an
//! integer beyond 64 bits is an error rather than a big number.

use core::fmt::{self, Write};

/// Deepest nesting of collections.
pub const DEPTH_LIMIT: usize = 64;

/// No child yet (while a collection is parsed).
const NONE: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Scalar,
    Sequence,
    Mapping,
}

/// What a scalar resolved to when it was parsed (quoted and block scalars are strings).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Resolved {
    Str,
    Null,
    Bool,
    Int,
    Float,
}

#[derive(Clone, Copy, Debug)]
pub struct Node {
    kind: Kind,
    resolved: Resolved,
    /// A scalar's decoded text in the arena's text buffer.
    start: u32,
    /// A scalar's text length; a collection's number of children (a mapping's alternate
    /// key and value).
    len: u32,
    /// Links are a node's index plus one, so that 0 is "none" and an unused node is all
    /// zeros: a static array of them then costs no space in the binary (.bss, not .data).
    first_child: u32,
    next_sibling: u32,
    line: u32,
    column: u32,
}

impl Node {
    pub const EMPTY: Node =
        Node { kind: Kind::Scalar, resolved: Resolved::Str, start: 0, len: 0, first_child: 0, next_sibling: 0, line: 0, column: 0 };
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeId(u32);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    InvalidUtf8,
    ControlCharacter,
    /// NEL, LS and PS, which YAML counts as line breaks and wisp does not read.
    LineSeparator,
    Tab,
    Directive,
    SecondDocument,
    Anchor,
    Alias,
    Tag,
    ComplexKey,
    MergeKey,
    /// The plain scalar `=`, which PyYAML resolves to a type it cannot construct.
    ValueKey,
    CollectionKey,
    MultiLineKey,
    BadIndentation,
    ExpectedKey,
    ExpectedEntry,
    MappingValueNotAllowed,
    SequenceEntryNotAllowed,
    UnexpectedText,
    UnexpectedCharacter,
    UnterminatedQuote,
    UnterminatedFlow,
    FlowSyntax,
    BadEscape,
    BadBlockHeader,
    BadInteger,
    TooManyNodes { limit: usize },
    TextFull { limit: usize },
    TooDeep { limit: usize },
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use ErrorKind::*;
        let reason = match *self {
            InvalidUtf8 => "invalid UTF-8",
            ControlCharacter => "control character (YAML allows printable characters, tabs and line breaks)",
            LineSeparator => "Unicode line separators (NEL, LS, PS) are not supported",
            Tab => "tab outside quotes, block scalars and comments (YAML indents and separates with spaces)",
            Directive => "directives (%YAML, %TAG) are not supported",
            SecondDocument => "a second document is not supported",
            Anchor => "anchors (&) are not supported",
            Alias => "aliases (*) are not supported",
            Tag => "tags (! and !!) are not supported",
            ComplexKey => "complex keys (?) are not supported",
            MergeKey => "merge keys (<<) are not supported",
            ValueKey => "the value key (=) is not supported",
            CollectionKey => "a mapping key must be a scalar, not a sequence or mapping",
            MultiLineKey => "a mapping key must fit on one line",
            BadIndentation => "bad indentation",
            ExpectedKey => "expected a mapping entry (key: value)",
            ExpectedEntry => "expected a sequence entry (- value)",
            MappingValueNotAllowed => "a mapping value (:) is not allowed here",
            SequenceEntryNotAllowed => "a sequence entry (-) is not allowed here",
            UnexpectedText => "unexpected text after a value",
            UnexpectedCharacter => "this character cannot start a value",
            UnterminatedQuote => "unterminated quoted scalar",
            UnterminatedFlow => "unterminated flow collection ([ or {)",
            FlowSyntax => "expected , or the closing bracket of a flow collection",
            BadEscape => "invalid escape sequence",
            BadBlockHeader => "invalid block scalar header (| or >, then 1-9 and - or +, then a comment)",
            BadInteger => "integer beyond 64 bits, or without digits",
            TooManyNodes { limit } => return write!(f, "more than {limit} nodes"),
            TextFull { limit } => return write!(f, "more than {limit} bytes of scalar text"),
            TooDeep { limit } => return write!(f, "collections nested deeper than {limit} levels"),
        };
        f.write_str(reason)
    }
}

/// What went wrong, and where: 1-based line and column (in characters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Error {
    pub kind: ErrorKind,
    pub line: u32,
    pub column: u32,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {} column {}: {}", self.line, self.column, self.kind)
    }
}

/// The caller's buffers for nodes and scalar text, filled by [`Arena::parse`].
pub struct Arena<'b> {
    nodes: &'b mut [Node],
    text: &'b mut [u8],
    nodes_used: usize,
    text_used: usize,
}

impl<'b> Arena<'b> {
    pub fn new(nodes: &'b mut [Node], text: &'b mut [u8]) -> Arena<'b> {
        Arena { nodes, text, nodes_used: 0, text_used: 0 }
    }

    /// Parses one document into the arena (after whatever earlier documents hold); the
    /// root's id. A failed parse leaves the arena as it was.
    pub fn parse(&mut self, source: &[u8]) -> Result<NodeId, Error> {
        check_characters(source)?;
        let mut parser = Parser {
            src: source,
            pos: 0,
            line: 1,
            line_start: 0,
            nodes: &mut *self.nodes,
            nodes_used: self.nodes_used,
            text: &mut *self.text,
            text_used: self.text_used,
            depth: 0,
        };
        let root = parser.document()?;
        self.nodes_used = parser.nodes_used;
        self.text_used = parser.text_used;
        Ok(NodeId(root))
    }

    /// The node `id` (which this arena returned).
    pub fn value(&self, id: NodeId) -> Value<'_> {
        Value { nodes: &self.nodes[..self.nodes_used], text: &self.text[..self.text_used], index: id.0 }
    }
}

/// A scalar as PyYAML's SafeLoader constructs it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar<'a> {
    Null,
    Bool(bool),
    Int(i64),
    /// The source text, which [`write_json`] writes as the number Python's `float` reads.
    Float(&'a str),
    Str(&'a str),
}

/// A node, with the arena it lives in.
#[derive(Clone, Copy)]
pub struct Value<'a> {
    nodes: &'a [Node],
    text: &'a [u8],
    index: u32,
}

impl<'a> Value<'a> {
    fn node(&self) -> &'a Node {
        &self.nodes[self.index as usize]
    }

    pub fn kind(&self) -> Kind {
        self.node().kind
    }

    pub fn line(&self) -> u32 {
        self.node().line
    }

    pub fn column(&self) -> u32 {
        self.node().column
    }

    /// Any scalar's decoded text, whatever it resolved to (`0644` as written, not 420).
    pub fn as_str(&self) -> Option<&'a str> {
        let node = self.node();
        let bytes = self.text.get(node.start as usize..(node.start + node.len) as usize)?;
        (node.kind == Kind::Scalar).then(|| core::str::from_utf8(bytes).unwrap_or(""))
    }

    pub fn scalar(&self) -> Option<Scalar<'a>> {
        let text = self.as_str()?;
        Some(match self.node().resolved {
            Resolved::Null => Scalar::Null,
            Resolved::Bool => Scalar::Bool(matches!(text.as_bytes(), [b'y' | b'Y' | b't' | b'T', ..] | [b'o' | b'O', b'n' | b'N'])),
            Resolved::Int => Scalar::Int(int_value(text.as_bytes())?.ok()?),
            Resolved::Float => Scalar::Float(text),
            Resolved::Str => Scalar::Str(text),
        })
    }

    /// A plain `yes`/`no`/`true`/`false`/`on`/`off` (lowercase, capitalised or uppercase).
    pub fn as_bool(&self) -> Option<bool> {
        match self.scalar()? {
            Scalar::Bool(b) => Some(b),
            _ => None,
        }
    }

    /// A plain YAML 1.1 integer: decimal, `0x`, `0b`, `0` octal, `1:30` sexagesimal.
    pub fn as_int(&self) -> Option<i64> {
        match self.scalar()? {
            Scalar::Int(n) => Some(n),
            _ => None,
        }
    }

    /// A plain `~`, `null`, `Null`, `NULL`, or nothing at all.
    pub fn is_null(&self) -> bool {
        self.scalar() == Some(Scalar::Null)
    }

    /// The value of the string key `key` in a mapping; a key written `1` or `true` is not
    /// the string "1" or "true", as in Python. The last of duplicate keys wins.
    pub fn get(&self, key: &str) -> Option<Value<'a>> {
        self.pairs().filter(|(k, _)| k.scalar() == Some(Scalar::Str(key))).last().map(|(_, v)| v)
    }

    /// A mapping's entries as Python's dict holds them: each key once, where it first
    /// appears, with the value it was given last.
    pub fn entries(&self) -> Entries<'a> {
        let first = if self.kind() == Kind::Mapping { self.node().first_child } else { 0 };
        Entries { map: *self, next: first }
    }

    /// A sequence's items.
    pub fn items(&self) -> Items<'a> {
        let first = if self.kind() == Kind::Sequence { self.node().first_child } else { 0 };
        Items { of: *self, next: first }
    }

    /// Items of a sequence, entries of a mapping (duplicates counted once), 0 for a scalar.
    pub fn len(&self) -> usize {
        match self.kind() {
            Kind::Scalar => 0,
            Kind::Sequence => self.node().len as usize,
            Kind::Mapping => self.entries().count(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn children(&self) -> impl Iterator<Item = Value<'a>> + 'a {
        let this = *self;
        let mut next = if this.kind() == Kind::Scalar { 0 } else { this.node().first_child };
        core::iter::from_fn(move || {
            let index = next.checked_sub(1)?;
            next = this.nodes.get(index as usize)?.next_sibling;
            Some(Value { index, ..this })
        })
    }

    fn pairs(&self) -> impl Iterator<Item = (Value<'a>, Value<'a>)> + 'a {
        let mapping = self.kind() == Kind::Mapping;
        let mut children = self.children();
        core::iter::from_fn(move || if mapping { Some((children.next()?, children.next()?)) } else { None })
    }
}

/// A mapping's entries (`Value::entries`): a type of its own with one out-of-line `next`,
/// so that the many loops over entries do not each carry a copy of it.
pub struct Entries<'a> {
    map: Value<'a>,
    /// The next key's node index plus one; 0 at the end.
    next: u32,
}

impl<'a> Iterator for Entries<'a> {
    type Item = (Value<'a>, Value<'a>);

    #[inline(never)]
    fn next(&mut self) -> Option<(Value<'a>, Value<'a>)> {
        while let Some(index) = self.next.checked_sub(1) {
            let key = Value { index, ..self.map };
            let value = self.map.nodes.get(index as usize)?.next_sibling.checked_sub(1)?;
            self.next = self.map.nodes.get(value as usize)?.next_sibling;
            if self.map.pairs().take_while(|(k, _)| k.index != index).any(|(earlier, _)| same_key(earlier, key)) {
                continue;
            }
            return self.map.pairs().filter(|(k, _)| same_key(*k, key)).last().map(|(_, value)| (key, value));
        }
        None
    }
}

/// A sequence's items (`Value::items`), with one out-of-line `next`.
pub struct Items<'a> {
    of: Value<'a>,
    next: u32,
}

impl<'a> Iterator for Items<'a> {
    type Item = Value<'a>;

    #[inline(never)]
    fn next(&mut self) -> Option<Value<'a>> {
        let index = self.next.checked_sub(1)?;
        self.next = self.of.nodes.get(index as usize)?.next_sibling;
        Some(Value { index, ..self.of })
    }
}

impl fmt::Debug for Value<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_json(*self, f)
    }
}

/// Python's dict keys: equal strings, or equal numbers (`True == 1`).
fn same_key(a: Value<'_>, b: Value<'_>) -> bool {
    let number = |s| match s {
        Some(Scalar::Int(n)) => Some(n),
        Some(Scalar::Bool(b)) => Some(i64::from(b)),
        _ => None,
    };
    let (x, y) = (a.scalar(), b.scalar());
    match (number(x), number(y)) {
        (Some(m), Some(n)) => m == n,
        _ => x.is_some() && x == y,
    }
}

/// Writes `value` as JSON, as Python's `json.dumps` writes what PyYAML loaded: keys as
/// strings (`1`, `true` and `null` keys become "1", "true" and "null"), floats as numbers
/// of the same value (`Infinity`, `-Infinity`, `NaN` for the special ones).
pub fn write_json(value: Value<'_>, out: &mut impl Write) -> fmt::Result {
    match value.kind() {
        Kind::Scalar => match value.scalar() {
            Some(Scalar::Str(text)) => write_string(text, out),
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
pub fn write_json_key(key: Value<'_>, out: &mut impl Write) -> fmt::Result {
    match key.scalar() {
        Some(Scalar::Str(text)) => write_string(text, out),
        scalar => {
            out.write_char('"')?;
            write_scalar(scalar, out)?;
            out.write_char('"')
        }
    }
}

fn write_scalar(scalar: Option<Scalar<'_>>, out: &mut impl Write) -> fmt::Result {
    match scalar {
        Some(Scalar::Bool(true)) => out.write_str("true"),
        Some(Scalar::Bool(false)) => out.write_str("false"),
        Some(Scalar::Int(n)) => write!(out, "{n}"),
        Some(Scalar::Float(text)) => write_float(text.as_bytes(), out),
        Some(Scalar::Str(text)) => out.write_str(text),
        Some(Scalar::Null) | None => out.write_str("null"),
    }
}

fn write_string(text: &str, out: &mut impl Write) -> fmt::Result {
    out.write_char('"')?;
    for c in text.chars() {
        match c {
            '"' => out.write_str("\\\"")?,
            '\\' => out.write_str("\\\\")?,
            '\n' => out.write_str("\\n")?,
            '\t' => out.write_str("\\t")?,
            '\r' => out.write_str("\\r")?,
            c if (c as u32) < 0x20 => write!(out, "\\u{:04x}", c as u32)?,
            c => out.write_char(c)?,
        }
    }
    out.write_char('"')
}

/// A YAML 1.1 float (already matched by `is_float`) as a JSON number of the same value:
/// underscores dropped, `.5` and `1.` completed, sexagesimal parts added up.
fn write_float(text: &[u8], out: &mut impl Write) -> fmt::Result {
    let (negative, body) = split_sign(text);
    if body.eq_ignore_ascii_case(b".nan") {
        return out.write_str("NaN");
    }
    if negative {
        out.write_char('-')?;
    }
    if body.eq_ignore_ascii_case(b".inf") {
        return out.write_str("Infinity");
    }
    let dot = body.iter().position(|&b| b == b'.').unwrap_or(body.len());
    let digits = |part: &[u8]| part.iter().filter(|&&b| b != b'_').count();
    let whole = &body[..dot];
    if whole.contains(&b':') {
        let sum = whole.split(|&b| b == b':').fold(0u64, |sum, part| sum.saturating_mul(60).saturating_add(decimal_digits(part)));
        write!(out, "{sum}")?;
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

fn write_digits(text: &[u8], out: &mut impl Write) -> fmt::Result {
    text.iter().filter(|&&b| b != b'_').try_for_each(|&b| out.write_char(b as char))
}

fn decimal_digits(text: &[u8]) -> u64 {
    text.iter().filter(|b| b.is_ascii_digit()).fold(0u64, |n, &d| n.saturating_mul(10).saturating_add(u64::from(d - b'0')))
}

fn split_sign(text: &[u8]) -> (bool, &[u8]) {
    match text {
        [b'-', rest @ ..] => (true, rest),
        [b'+', rest @ ..] => (false, rest),
        _ => (false, text),
    }
}

/// PyYAML's SafeLoader resolvers, for a plain scalar's text.
fn resolve(text: &[u8]) -> Result<Resolved, ErrorKind> {
    Ok(match text {
        b"" | b"~" | b"null" | b"Null" | b"NULL" => Resolved::Null,
        b"yes" | b"Yes" | b"YES" | b"no" | b"No" | b"NO" | b"true" | b"True" | b"TRUE" | b"false" | b"False" | b"FALSE" | b"on"
        | b"On" | b"ON" | b"off" | b"Off" | b"OFF" => Resolved::Bool,
        b"<<" => return Err(ErrorKind::MergeKey),
        b"=" => return Err(ErrorKind::ValueKey),
        _ if is_float(text) => Resolved::Float,
        _ => match int_value(text) {
            Some(Ok(_)) => Resolved::Int,
            Some(Err(())) => return Err(ErrorKind::BadInteger),
            None => Resolved::Str,
        },
    })
}

fn digit_or_underscore(b: &u8) -> bool {
    b.is_ascii_digit() || *b == b'_'
}

/// `[-+]?([0-9][0-9_]*)?\.[0-9_]*([eE][-+][0-9]+)?` (the part before the dot may also
/// be sexagesimal), `[-+]?\.inf` and `\.nan` in their three spellings; a bare `.5` takes
/// no sign, as in PyYAML's expression.
fn is_float(text: &[u8]) -> bool {
    let (_, body) = split_sign(text);
    let signed = body.len() < text.len();
    if matches!(body, b".inf" | b".Inf" | b".INF") || (!signed && matches!(body, b".nan" | b".NaN" | b".NAN")) {
        return true;
    }
    let span = |from: usize, class: fn(&u8) -> bool| body.get(from..).map_or(0, |rest| rest.iter().take_while(|b| class(b)).count());
    let mut i;
    if body.first().is_some_and(u8::is_ascii_digit) {
        i = span(0, digit_or_underscore);
        let mut sexagesimal = false;
        while body.get(i) == Some(&b':') {
            let digits = span(i + 1, u8::is_ascii_digit);
            if !(digits == 1 || digits == 2 && body[i + 1] <= b'5') {
                return false;
            }
            i += 1 + digits;
            sexagesimal = true;
        }
        if body.get(i) != Some(&b'.') {
            return false;
        }
        i += 1 + span(i + 1, digit_or_underscore);
        if sexagesimal {
            return i == body.len();
        }
    } else {
        if signed || body.first() != Some(&b'.') || !body.get(1).is_some_and(u8::is_ascii_digit) {
            return false;
        }
        i = 1 + span(1, digit_or_underscore);
    }
    if matches!(body.get(i), Some(b'e' | b'E')) {
        let digits = span(i + 2, u8::is_ascii_digit);
        if !matches!(body.get(i + 1), Some(b'+' | b'-')) || digits == 0 {
            return false;
        }
        i += 2 + digits;
    }
    i == body.len()
}

/// A YAML 1.1 integer's value: `None` when `text` is not one, `Some(Err)` when it is but
/// has no digits (`0x_`, which PyYAML fails on too) or does not fit in 64 bits.
fn int_value(text: &[u8]) -> Option<Result<i64, ()>> {
    let (negative, body) = split_sign(text);
    let (radix, digits) = match body {
        [b'0', b'b', rest @ ..] => (2, rest),
        [b'0', b'x', rest @ ..] => (16, rest),
        [b'0', rest @ ..] if !rest.is_empty() => (8, rest),
        [b'1'..=b'9', ..] => (10, body),
        [b'0'] => (10, body),
        _ => return None,
    };
    if digits.is_empty() {
        return None;
    }
    let mut value: Option<u64> = Some(0);
    let mut seen_digit = false;
    let mut segments = digits.split(|&b| b == b':');
    let first = segments.next().unwrap_or(b"");
    for &b in first {
        if b == b'_' {
            continue;
        }
        let digit = (b as char).to_digit(radix)?;
        value = value.and_then(|v| v.checked_mul(u64::from(radix))?.checked_add(u64::from(digit)));
        seen_digit = true;
    }
    for segment in segments {
        if radix != 10 || !(segment.len() == 1 || segment.len() == 2 && segment[0] <= b'5') || !segment.iter().all(u8::is_ascii_digit) {
            return None;
        }
        value = value.and_then(|v| v.checked_mul(60)?.checked_add(decimal_digits(segment)));
    }
    // An octal `0_` is 0 to PyYAML, which only fails on `0b_` and `0x_`.
    if !seen_digit && radix != 8 {
        return Some(Err(()));
    }
    let value = value.ok_or(());
    Some(value.and_then(|v| if negative { 0i64.checked_sub_unsigned(v).ok_or(()) } else { i64::try_from(v).map_err(|_| ()) }))
}

/// Refuses what PyYAML's reader refuses (and the line separators wisp does not read).
fn check_characters(src: &[u8]) -> Result<(), Error> {
    let (text, invalid_at) = match core::str::from_utf8(src) {
        Ok(text) => (text, None),
        Err(e) => (core::str::from_utf8(&src[..e.valid_up_to()]).unwrap_or(""), Some(e.valid_up_to())),
    };
    for (i, c) in text.char_indices() {
        let kind = match c {
            '\u{85}' | '\u{2028}' | '\u{2029}' => ErrorKind::LineSeparator,
            '\t' | '\n' | '\r' | ' '..='~' | '\u{a0}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}' | '\u{10000}'.. => continue,
            _ => ErrorKind::ControlCharacter,
        };
        return Err(located(src, i, kind));
    }
    match invalid_at {
        Some(at) => Err(located(src, at, ErrorKind::InvalidUtf8)),
        None => Ok(()),
    }
}

/// The error at byte `pos`, its line and column counted from the start.
fn located(src: &[u8], pos: usize, kind: ErrorKind) -> Error {
    let mut line = 1;
    let mut line_start = 0;
    for (i, &b) in src[..pos].iter().enumerate() {
        if b == b'\n' || (b == b'\r' && src.get(i + 1) != Some(&b'\n')) {
            line += 1;
            line_start = i + 1;
        }
    }
    Error { kind, line, column: char_column(src, line_start, pos) }
}

fn char_column(src: &[u8], line_start: usize, pos: usize) -> u32 {
    1 + src[line_start..pos].iter().filter(|&&b| b & 0xc0 != 0x80).count() as u32
}

fn is_break(b: u8) -> bool {
    b == b'\n' || b == b'\r'
}

/// What may follow an indicator (`-`, `:`, `?`) for it to be one: white space, a line
/// break or the end (0: the input holds no NUL, `check_characters` saw to that).
fn is_blank(b: u8) -> bool {
    matches!(b, 0 | b' ' | b'\t' | b'\n' | b'\r')
}

/// A position to come back to.
#[derive(Clone, Copy)]
struct Mark {
    pos: usize,
    line: u32,
    line_start: usize,
}

struct Parser<'s, 'b> {
    src: &'s [u8],
    pos: usize,
    line: u32,
    line_start: usize,
    nodes: &'b mut [Node],
    nodes_used: usize,
    text: &'b mut [u8],
    text_used: usize,
    depth: usize,
}

impl Parser<'_, '_> {
    fn at(&self, ahead: usize) -> u8 {
        self.src.get(self.pos + ahead).copied().unwrap_or(0)
    }

    fn peek(&self) -> u8 {
        self.at(0)
    }

    /// Columns count bytes: indentation is spaces, so they only differ in messages.
    fn column(&self) -> usize {
        self.pos - self.line_start
    }

    fn mark(&self) -> Mark {
        Mark { pos: self.pos, line: self.line, line_start: self.line_start }
    }

    fn reset(&mut self, mark: Mark) {
        (self.pos, self.line, self.line_start) = (mark.pos, mark.line, mark.line_start);
    }

    fn error_at(&self, mark: Mark, kind: ErrorKind) -> Error {
        Error { kind, line: mark.line, column: char_column(self.src, mark.line_start, mark.pos) }
    }

    fn error(&self, kind: ErrorKind) -> Error {
        self.error_at(self.mark(), kind)
    }

    fn take_break(&mut self) {
        self.pos += if self.peek() == b'\r' && self.at(1) == b'\n' { 2 } else { 1 };
        self.line += 1;
        self.line_start = self.pos;
    }

    fn skip_spaces(&mut self) {
        while self.peek() == b' ' {
            self.pos += 1;
        }
    }

    fn at_document_marker(&self) -> bool {
        let rest = &self.src[self.pos..];
        self.pos == self.line_start && (rest.starts_with(b"---") || rest.starts_with(b"...")) && is_blank(self.at(3))
    }

    /// At the end of the input or of the document: every block collection ends here.
    fn at_block_end(&self) -> bool {
        self.peek() == 0 || self.at_document_marker()
    }

    /// Skips spaces, comments and line breaks to the next content (or the end).
    fn skip_to_content(&mut self) -> Result<(), Error> {
        loop {
            self.skip_spaces();
            if self.peek() == b'#' {
                while !is_break(self.peek()) && self.peek() != 0 {
                    self.pos += 1;
                }
            }
            match self.peek() {
                b'\t' => return Err(self.error(ErrorKind::Tab)),
                b if is_break(b) => self.take_break(),
                _ => return Ok(()),
            }
        }
    }

    /// After a complete value: nothing but a comment may follow on its line.
    fn end_line(&mut self) -> Result<(), Error> {
        self.skip_spaces();
        match self.peek() {
            0 | b'\n' | b'\r' | b'#' => self.skip_to_content(),
            b'\t' => Err(self.error(ErrorKind::Tab)),
            b':' if is_blank(self.at(1)) => Err(self.error(ErrorKind::MappingValueNotAllowed)),
            _ => Err(self.error(ErrorKind::UnexpectedText)),
        }
    }

    fn enter(&mut self) -> Result<(), Error> {
        self.depth += 1;
        if self.depth > DEPTH_LIMIT {
            return Err(self.error(ErrorKind::TooDeep { limit: DEPTH_LIMIT }));
        }
        Ok(())
    }

    fn push(&mut self, kind: Kind, resolved: Resolved, text_start: usize, at: Mark) -> Result<u32, Error> {
        let limit = self.nodes.len();
        if self.nodes_used >= limit {
            return Err(self.error_at(at, ErrorKind::TooManyNodes { limit }));
        }
        self.nodes[self.nodes_used] = Node {
            kind,
            resolved,
            start: text_start as u32,
            len: if kind == Kind::Scalar { (self.text_used - text_start) as u32 } else { 0 },
            first_child: 0,
            next_sibling: 0,
            line: at.line,
            column: char_column(self.src, at.line_start, at.pos),
        };
        self.nodes_used += 1;
        Ok(self.nodes_used as u32 - 1)
    }

    fn push_null(&mut self, at: Mark) -> Result<u32, Error> {
        self.push(Kind::Scalar, Resolved::Null, self.text_used, at)
    }

    fn push_text(&mut self, bytes: &[u8]) -> Result<(), Error> {
        let limit = self.text.len();
        let end = self.text_used + bytes.len();
        if end > limit {
            return Err(self.error(ErrorKind::TextFull { limit }));
        }
        self.text[self.text_used..end].copy_from_slice(bytes);
        self.text_used = end;
        Ok(())
    }

    fn push_breaks(&mut self, count: usize) -> Result<(), Error> {
        (0..count).try_for_each(|_| self.push_text(b"\n"))
    }

    fn append(&mut self, parent: u32, last: &mut u32, child: u32) {
        match *last {
            NONE => self.nodes[parent as usize].first_child = child + 1,
            previous => self.nodes[previous as usize].next_sibling = child + 1,
        }
        self.nodes[parent as usize].len += 1;
        *last = child;
    }

    fn document(&mut self) -> Result<u32, Error> {
        if self.src.starts_with("\u{feff}".as_bytes()) {
            self.pos = 3;
            self.line_start = 3;
        }
        self.skip_to_content()?;
        if self.peek() == b'%' {
            return Err(self.error(ErrorKind::Directive));
        }
        let root = if self.src[self.pos..].starts_with(b"---") && self.at_document_marker() {
            self.pos += 3;
            self.skip_spaces();
            if matches!(self.peek(), 0 | b'\n' | b'\r' | b'#') {
                self.skip_to_content()?;
                self.root()?
            } else {
                // `--- value` takes a scalar or flow collection, not a block collection.
                self.block_node(-1, false)?
            }
        } else if self.src[self.pos..].starts_with(b"...") && self.at_document_marker() {
            // PyYAML wants a node (or `---`) before a document end marker.
            return Err(self.error(ErrorKind::UnexpectedCharacter));
        } else {
            self.root()?
        };
        let ended = self.src[self.pos..].starts_with(b"...") && self.at_document_marker();
        if ended {
            self.pos += 3;
            self.end_line()?;
        }
        if self.peek() == 0 {
            return Ok(root);
        }
        let kind = if ended || self.at_document_marker() {
            ErrorKind::SecondDocument
        } else if (self.column() as u32) < self.nodes[root as usize].column {
            ErrorKind::BadIndentation
        } else {
            ErrorKind::UnexpectedText
        };
        Err(self.error(kind))
    }

    fn root(&mut self) -> Result<u32, Error> {
        if self.at_block_end() {
            return self.push_null(self.mark());
        }
        self.block_node(-1, true)
    }

    /// The node at the current position (its first character). `indent` is the column of
    /// the enclosing block collection (-1 at the root): a block scalar's lines and a plain
    /// scalar's continuation lines must be indented more. `collection_ok` is false on the
    /// line of a mapping key, where a block collection cannot start.
    fn block_node(&mut self, indent: i32, collection_ok: bool) -> Result<u32, Error> {
        let start = self.mark();
        match self.peek() {
            b'-' if is_blank(self.at(1)) => {
                if !collection_ok {
                    return Err(self.error(ErrorKind::SequenceEntryNotAllowed));
                }
                return self.block_sequence(false);
            }
            b'|' | b'>' => {
                let node = self.block_scalar(indent)?;
                self.skip_to_content()?;
                return Ok(node);
            }
            _ => {}
        }
        let (node, single_line) = self.inline_node(indent)?;
        if self.key_follows() {
            if self.nodes[node as usize].kind != Kind::Scalar {
                return Err(self.error_at(start, ErrorKind::CollectionKey));
            }
            if !collection_ok {
                return Err(self.error(ErrorKind::MappingValueNotAllowed));
            }
            if !single_line {
                return Err(self.error_at(start, ErrorKind::MultiLineKey));
            }
            return self.block_mapping(start, node);
        }
        self.end_line()?;
        Ok(node)
    }

    /// Whether `: ` follows (after spaces), leaving the position at the colon if so.
    fn key_follows(&mut self) -> bool {
        let after = self.mark();
        self.skip_spaces();
        if self.peek() == b':' && is_blank(self.at(1)) {
            return true;
        }
        self.reset(after);
        false
    }

    /// A scalar (other than a block scalar) or a flow collection; whether it is on one line.
    fn inline_node(&mut self, indent: i32) -> Result<(u32, bool), Error> {
        match self.peek() {
            b'"' | b'\'' => self.quoted(),
            b'[' | b'{' => Ok((self.flow()?, true)),
            _ if self.plain_starts(false) => self.plain(indent, false),
            _ => Err(self.cannot_start()),
        }
    }

    fn cannot_start(&self) -> Error {
        self.error(match self.peek() {
            b'&' => ErrorKind::Anchor,
            b'*' => ErrorKind::Alias,
            b'!' => ErrorKind::Tag,
            b'?' => ErrorKind::ComplexKey,
            b'\t' => ErrorKind::Tab,
            b'-' => ErrorKind::SequenceEntryNotAllowed,
            _ => ErrorKind::UnexpectedCharacter,
        })
    }

    /// The mapping whose first key was just read, at `start`; the position is at its colon.
    fn block_mapping(&mut self, start: Mark, first_key: u32) -> Result<u32, Error> {
        self.enter()?;
        let column = start.pos - start.line_start;
        let mapping = self.push(Kind::Mapping, Resolved::Str, 0, start)?;
        let mut last = NONE;
        let mut key = first_key;
        loop {
            self.pos += 1;
            let value = self.value_after(column, true)?;
            self.append(mapping, &mut last, key);
            self.append(mapping, &mut last, value);
            if self.at_block_end() || self.column() < column {
                break;
            }
            if self.column() > column {
                return Err(self.error(ErrorKind::BadIndentation));
            }
            let key_start = self.mark();
            if matches!(self.peek(), b'|' | b'>') || (self.peek() == b'-' && is_blank(self.at(1))) {
                return Err(self.error(ErrorKind::ExpectedKey));
            }
            let (node, single_line) = self.inline_node(column as i32)?;
            if !self.key_follows() {
                return Err(self.error_at(key_start, ErrorKind::ExpectedKey));
            }
            if self.nodes[node as usize].kind != Kind::Scalar {
                return Err(self.error_at(key_start, ErrorKind::CollectionKey));
            }
            if !single_line {
                return Err(self.error_at(key_start, ErrorKind::MultiLineKey));
            }
            key = node;
        }
        self.depth -= 1;
        Ok(mapping)
    }

    /// The sequence whose first `-` is at the current position.
    fn block_sequence(&mut self, indentless: bool) -> Result<u32, Error> {
        self.enter()?;
        let column = self.column();
        let sequence = self.push(Kind::Sequence, Resolved::Str, 0, self.mark())?;
        let mut last = NONE;
        loop {
            self.pos += 1;
            let item = self.value_after(column, false)?;
            self.append(sequence, &mut last, item);
            if self.at_block_end() || self.column() < column {
                break;
            }
            if self.column() == column && self.peek() == b'-' && is_blank(self.at(1)) {
                continue;
            }
            if self.column() == column && indentless {
                break;
            }
            return Err(self.error(if self.column() > column { ErrorKind::BadIndentation } else { ErrorKind::ExpectedEntry }));
        }
        self.depth -= 1;
        Ok(sequence)
    }

    /// The value after a mapping's `:` or a sequence's `-` at `column`: on the same line,
    /// on the lines below indented more, or (a mapping's) a sequence at the key's column.
    fn value_after(&mut self, column: usize, mapping: bool) -> Result<u32, Error> {
        let empty = self.mark();
        self.skip_spaces();
        if !matches!(self.peek(), 0 | b'\n' | b'\r' | b'#') {
            return self.block_node(column as i32, !mapping);
        }
        self.skip_to_content()?;
        if !self.at_block_end() {
            if self.column() > column {
                return self.block_node(column as i32, true);
            }
            if mapping && self.column() == column && self.peek() == b'-' && is_blank(self.at(1)) {
                return self.block_sequence(true);
            }
            // PyYAML also takes a block scalar at the key's column (its lines indented more).
            if mapping && self.column() == column && matches!(self.peek(), b'|' | b'>') {
                return self.block_node(column as i32, false);
            }
        }
        self.push_null(empty)
    }

    /// PyYAML's `check_plain`: what may start a plain scalar.
    fn plain_starts(&self, flow: bool) -> bool {
        let c = self.peek();
        if is_blank(c) {
            return false;
        }
        if b"-?:,[]{}#&*!|>'\"%@`".contains(&c) {
            return !is_blank(self.at(1)) && (c == b'-' || (!flow && (c == b'?' || c == b':')));
        }
        true
    }

    /// A plain scalar, folded as PyYAML folds it: a line break between two lines is a
    /// space, blank lines are line breaks, and trailing spaces are dropped.
    fn plain(&mut self, indent: i32, flow: bool) -> Result<(u32, bool), Error> {
        let start = self.mark();
        let src = self.src;
        let text_start = self.text_used;
        let mut end = start;
        // What joins the previous run of text to the next: spaces from the source, or a
        // number of line breaks (0: the space a single line break folds into).
        let mut joint: Option<Result<(usize, usize), usize>> = None;
        loop {
            let run = self.pos;
            loop {
                let c = self.peek();
                let ends_here = is_blank(c)
                    || (c == b':' && (is_blank(self.at(1)) || (flow && b",[]{}".contains(&self.at(1)))))
                    || (flow && b",?[]{}".contains(&c));
                if ends_here {
                    break;
                }
                self.pos += 1;
            }
            if self.pos == run {
                self.reset(end);
                break;
            }
            match joint {
                Some(Ok((from, to))) => self.push_text(&src[from..to])?,
                Some(Err(0)) => self.push_text(b" ")?,
                Some(Err(breaks)) => self.push_breaks(breaks)?,
                None => {}
            }
            self.push_text(&src[run..self.pos])?;
            end = self.mark();
            let spaces = self.pos;
            self.skip_spaces();
            if is_break(self.peek()) {
                let mut breaks = 0;
                self.take_break();
                let mut ended = false;
                loop {
                    if self.at_document_marker() {
                        ended = true;
                        break;
                    }
                    self.skip_spaces();
                    if !is_break(self.peek()) {
                        break;
                    }
                    breaks += 1;
                    self.take_break();
                }
                if ended || self.peek() == b'#' || (!flow && (self.column() as i32) <= indent) {
                    self.reset(end);
                    break;
                }
                joint = Some(Err(breaks));
            } else if self.pos > spaces && self.peek() != b'#' {
                joint = Some(Ok((spaces, self.pos)));
            } else {
                self.reset(end);
                break;
            }
        }
        let resolved = resolve(&self.text[text_start..self.text_used]).map_err(|kind| self.error_at(start, kind))?;
        Ok((self.push(Kind::Scalar, resolved, text_start, start)?, end.line == start.line))
    }

    /// A single- or double-quoted scalar, folded as PyYAML folds it.
    fn quoted(&mut self) -> Result<(u32, bool), Error> {
        let start = self.mark();
        let src = self.src;
        let text_start = self.text_used;
        let quote = self.peek();
        let double = quote == b'"';
        let mut single_line = true;
        self.pos += 1;
        loop {
            let run = self.pos;
            while !matches!(self.peek(), b'\'' | b'"' | b'\\' | b' ' | b'\t' | b'\n' | b'\r' | 0) {
                self.pos += 1;
            }
            self.push_text(&src[run..self.pos])?;
            let c = self.peek();
            if c == quote && !(quote == b'\'' && self.at(1) == b'\'') {
                self.pos += 1;
                break;
            }
            match c {
                b'\'' if !double => {
                    self.push_text(b"'")?;
                    self.pos += 2;
                }
                b'\\' if double => self.escape()?,
                b'\'' | b'"' | b'\\' => {
                    self.push_text(&[c])?;
                    self.pos += 1;
                }
                b' ' | b'\t' | b'\n' | b'\r' => {
                    let spaces = self.pos;
                    while matches!(self.peek(), b' ' | b'\t') {
                        self.pos += 1;
                    }
                    if is_break(self.peek()) {
                        self.take_break();
                        let breaks = self.quoted_breaks(start)?;
                        if breaks == 0 {
                            self.push_text(b" ")?;
                        }
                        self.push_breaks(breaks)?;
                        single_line = false;
                    } else {
                        self.push_text(&src[spaces..self.pos])?;
                    }
                }
                _ => return Err(self.error_at(start, ErrorKind::UnterminatedQuote)),
            }
        }
        Ok((self.push(Kind::Scalar, Resolved::Str, text_start, start)?, single_line))
    }

    /// Blank lines inside a quoted scalar (after its first line break): how many.
    fn quoted_breaks(&mut self, start: Mark) -> Result<usize, Error> {
        let mut breaks = 0;
        loop {
            if self.at_document_marker() {
                return Err(self.error_at(start, ErrorKind::UnterminatedQuote));
            }
            while matches!(self.peek(), b' ' | b'\t') {
                self.pos += 1;
            }
            if !is_break(self.peek()) {
                return Ok(breaks);
            }
            breaks += 1;
            self.take_break();
        }
    }

    /// A double-quoted scalar's escape sequence, at its backslash.
    fn escape(&mut self) -> Result<(), Error> {
        let bad = self.error(ErrorKind::BadEscape);
        let e = self.at(1);
        let code = match e {
            b'0' => 0,
            b'a' => 7,
            b'b' => 8,
            b't' | b'\t' => 9,
            b'n' => 10,
            b'v' => 11,
            b'f' => 12,
            b'r' => 13,
            b'e' => 0x1b,
            b' ' | b'"' | b'\\' | b'/' => u32::from(e),
            b'N' => 0x85,
            b'_' => 0xa0,
            b'L' => 0x2028,
            b'P' => 0x2029,
            b'x' | b'u' | b'U' => {
                let width = match e {
                    b'x' => 2,
                    b'u' => 4,
                    _ => 8,
                };
                let digits = self.src.get(self.pos + 2..self.pos + 2 + width).ok_or(bad)?;
                let code = digits.iter().try_fold(0u32, |n, &d| Some(n * 16 + (d as char).to_digit(16)?)).ok_or(bad)?;
                self.pos += width;
                code
            }
            b'\n' | b'\r' => {
                self.pos += 1;
                self.take_break();
                let start = self.mark();
                let breaks = self.quoted_breaks(start)?;
                return self.push_breaks(breaks);
            }
            _ => return Err(bad),
        };
        self.pos += 2;
        let c = char::from_u32(code).ok_or(bad)?;
        self.push_text(c.encode_utf8(&mut [0; 4]).as_bytes())
    }

    /// A literal (`|`) or folded (`>`) block scalar, exactly as PyYAML's scanner reads it.
    fn block_scalar(&mut self, indent: i32) -> Result<u32, Error> {
        let start = self.mark();
        let src = self.src;
        let folded = self.peek() == b'>';
        self.pos += 1;
        // None: clip the final line breaks to one; Some(true): keep them; Some(false): strip.
        let mut keep: Option<bool> = None;
        let mut increment = 0;
        for _ in 0..2 {
            match self.peek() {
                b'+' | b'-' if keep.is_none() => keep = Some(self.peek() == b'+'),
                b'1'..=b'9' if increment == 0 => increment = usize::from(self.peek() - b'0'),
                _ => break,
            }
            self.pos += 1;
        }
        if !matches!(self.peek(), b' ' | b'\n' | b'\r' | 0) {
            return Err(self.error(ErrorKind::BadBlockHeader));
        }
        self.skip_spaces();
        if self.peek() == b'#' {
            while !is_break(self.peek()) && self.peek() != 0 {
                self.pos += 1;
            }
        }
        match self.peek() {
            0 => {}
            b if is_break(b) => self.take_break(),
            _ => return Err(self.error(ErrorKind::BadBlockHeader)),
        }
        let min_indent = (indent + 1).max(1) as usize;
        let text_start = self.text_used;
        let (block_indent, mut breaks) = if increment == 0 {
            let mut most = 0;
            let mut breaks = 0;
            loop {
                match self.peek() {
                    b' ' => {
                        self.pos += 1;
                        most = most.max(self.column());
                    }
                    b if is_break(b) => {
                        self.take_break();
                        breaks += 1;
                    }
                    _ => break,
                }
            }
            (min_indent.max(most), breaks)
        } else {
            let block_indent = min_indent + increment - 1;
            (block_indent, self.block_breaks(block_indent))
        };
        let mut line_break = false;
        while self.column() == block_indent && self.peek() != 0 {
            self.push_breaks(breaks)?;
            let leading_non_space = !matches!(self.peek(), b' ' | b'\t');
            let run = self.pos;
            while !is_break(self.peek()) && self.peek() != 0 {
                self.pos += 1;
            }
            self.push_text(&src[run..self.pos])?;
            line_break = is_break(self.peek());
            if line_break {
                self.take_break();
            }
            breaks = self.block_breaks(block_indent);
            if self.column() != block_indent || self.peek() == 0 {
                break;
            }
            // The specification's folding, as PyYAML does it: lines starting with white
            // space keep their line breaks.
            if folded && leading_non_space && !matches!(self.peek(), b' ' | b'\t') {
                if breaks == 0 {
                    self.push_text(b" ")?;
                }
            } else {
                self.push_text(b"\n")?;
            }
        }
        if line_break && keep != Some(false) {
            self.push_text(b"\n")?;
        }
        if keep == Some(true) {
            self.push_breaks(breaks)?;
        }
        self.push(Kind::Scalar, Resolved::Str, text_start, start)
    }

    /// Empty lines in a block scalar (each line's indentation taken up to `indent`).
    fn block_breaks(&mut self, indent: usize) -> usize {
        let mut breaks = 0;
        loop {
            while self.column() < indent && self.peek() == b' ' {
                self.pos += 1;
            }
            if !is_break(self.peek()) {
                return breaks;
            }
            self.take_break();
            breaks += 1;
        }
    }

    /// Spaces, line breaks and comments inside a flow collection (which may span lines
    /// at any indentation, as in PyYAML).
    fn flow_space(&mut self, start: Mark) -> Result<(), Error> {
        self.skip_to_content()?;
        if self.at_block_end() {
            return Err(self.error_at(start, ErrorKind::UnterminatedFlow));
        }
        Ok(())
    }

    /// A flow sequence `[...]` or mapping `{...}`; a sequence's `key: value` entries are
    /// mappings of one entry.
    fn flow(&mut self) -> Result<u32, Error> {
        self.enter()?;
        let start = self.mark();
        let is_mapping = self.peek() == b'{';
        let close = if is_mapping { b'}' } else { b']' };
        let collection = self.push(if is_mapping { Kind::Mapping } else { Kind::Sequence }, Resolved::Str, 0, start)?;
        let mut last = NONE;
        self.pos += 1;
        loop {
            self.flow_space(start)?;
            if self.peek() == close {
                self.pos += 1;
                break;
            }
            let entry = self.mark();
            let key = self.flow_node()?;
            self.flow_space(start)?;
            if self.peek() == b':' {
                if self.nodes[key as usize].kind != Kind::Scalar {
                    return Err(self.error_at(entry, ErrorKind::CollectionKey));
                }
                self.pos += 1;
                self.flow_space(start)?;
                let value = if self.peek() == b',' || self.peek() == close { self.push_null(self.mark())? } else { self.flow_node()? };
                let mapping = if is_mapping { collection } else { self.push(Kind::Mapping, Resolved::Str, 0, entry)? };
                let mut pair_last = if is_mapping { last } else { NONE };
                self.append(mapping, &mut pair_last, key);
                self.append(mapping, &mut pair_last, value);
                if is_mapping {
                    last = pair_last;
                } else {
                    self.append(collection, &mut last, mapping);
                }
                self.flow_space(start)?;
            } else {
                if is_mapping && self.nodes[key as usize].kind != Kind::Scalar {
                    return Err(self.error_at(entry, ErrorKind::CollectionKey));
                }
                self.append(collection, &mut last, key);
                if is_mapping {
                    let value = self.push_null(self.mark())?;
                    self.append(collection, &mut last, value);
                }
            }
            match self.peek() {
                b',' => self.pos += 1,
                c if c == close => {}
                _ => return Err(self.error(ErrorKind::FlowSyntax)),
            }
        }
        self.depth -= 1;
        Ok(collection)
    }

    fn flow_node(&mut self) -> Result<u32, Error> {
        match self.peek() {
            b'"' | b'\'' => Ok(self.quoted()?.0),
            b'[' | b'{' => self.flow(),
            _ if self.plain_starts(true) => Ok(self.plain(-1, true)?.0),
            _ => Err(self.cannot_start()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(source: &[u8]) -> Result<String, Error> {
        let mut nodes = [Node::EMPTY; 256];
        let mut text = [0u8; 4096];
        let mut arena = Arena::new(&mut nodes, &mut text);
        let root = arena.parse(source)?;
        let mut out = String::new();
        write_json(arena.value(root), &mut out).unwrap();
        Ok(out)
    }

    fn error(source: &[u8]) -> (ErrorKind, u32, u32) {
        let e = json(source).unwrap_err();
        (e.kind, e.line, e.column)
    }

    const CLOUD_CONFIG: &[u8] = b"#cloud-config
# a comment line
hostname: web-1   # trailing comment
users:
  - default
  - name: alice
    sudo: ALL=(ALL) NOPASSWD:ALL
    groups: [wheel, 'adm']
    ssh_authorized_keys:
    - ssh-ed25519 AAAA alice@laptop
write_files:
- path: /etc/motd
  permissions: '0644'
  owner: 0755
  content: |
    Welcome.
      indented

    # not a comment
- {path: /etc/x, content: \"a\\tb\\n\"}
runcmd:
  - [sh, -c, echo hi]
  - echo \"quoted\" 'and' plain
package_update: yes
swap: {size: 1.5e+3, file: ~}
bootcmd:
  - >-
    folded
    into one

    line
";

    #[test]
    fn cloud_config_document() {
        assert_eq!(
            json(CLOUD_CONFIG).unwrap(),
            concat!(
                r#"{"hostname":"web-1","users":["default",{"name":"alice","sudo":"ALL=(ALL) NOPASSWD:ALL","groups":["wheel","adm"],"#,
                r#""ssh_authorized_keys":["ssh-ed25519 AAAA alice@laptop"]}],"write_files":[{"path":"/etc/motd","permissions":"0644","#,
                r#""owner":493,"content":"Welcome.\n  indented\n\n# not a comment\n"},{"path":"/etc/x","content":"a\tb\n"}],"#,
                r#""runcmd":[["sh","-c","echo hi"],"echo \"quoted\" 'and' plain"],"package_update":true,"#,
                r#""swap":{"size":1.5e+3,"file":null},"bootcmd":["folded into one\nline"]}"#
            )
        );
    }

    #[test]
    fn values_and_lookups() {
        let mut nodes = [Node::EMPTY; 64];
        let mut text = [0u8; 512];
        let mut arena = Arena::new(&mut nodes, &mut text);
        let root = arena.parse(b"a: 1\nb: [x, y]\na: 2\n2: two\ntrue: t\nn:\ns: 'yes'\n").unwrap();
        let doc = arena.value(root);
        assert_eq!(doc.kind(), Kind::Mapping);
        assert_eq!((doc.line(), doc.column()), (1, 1));
        assert_eq!(doc.get("a").unwrap().as_int(), Some(2));
        assert_eq!(doc.get("a").unwrap().line(), 3);
        assert!(doc.get("2").is_none() && doc.get("true").is_none() && doc.get("zz").is_none());
        assert!(doc.get("n").unwrap().is_null());
        assert_eq!(doc.get("s").unwrap().as_bool(), None);
        assert_eq!(doc.get("s").unwrap().as_str(), Some("yes"));
        let b = doc.get("b").unwrap();
        assert_eq!((b.kind(), b.len(), b.line(), b.column()), (Kind::Sequence, 2, 2, 4));
        let items: Vec<_> = b.items().map(|v| v.as_str().unwrap()).collect();
        assert_eq!(items, ["x", "y"]);
        assert_eq!(doc.len(), 6);
        let keys: Vec<_> = doc.entries().map(|(k, _)| k.as_str().unwrap()).collect();
        assert_eq!(keys, ["a", "b", "2", "true", "n", "s"]);
        assert_eq!(doc.entries().next().unwrap().1.as_int(), Some(2));
        assert!(b.get("x").is_none());
        assert_eq!(doc.items().count(), 0);
        assert_eq!(doc.as_str(), None);
        assert_eq!(format!("{:?}", b), r#"["x","y"]"#);
        // A second document goes after the first; both stay readable.
        let second = arena.parse(b"- z").unwrap();
        assert_eq!(arena.value(second).items().next().unwrap().as_str(), Some("z"));
        assert_eq!(arena.value(root).get("a").unwrap().as_int(), Some(2));
    }

    #[test]
    fn scalars_resolve_as_pyyaml_safe_loader() {
        use Scalar::*;
        let cases: [(&str, Scalar<'_>); 42] = [
            ("~", Null),
            ("null", Null),
            ("NULL", Null),
            ("nULL", Str("nULL")),
            ("yes", Bool(true)),
            ("Off", Bool(false)),
            ("ON", Bool(true)),
            ("n", Str("n")),
            ("True", Bool(true)),
            ("tRUE", Str("tRUE")),
            ("0", Int(0)),
            ("-17", Int(-17)),
            ("+1_000", Int(1000)),
            ("0755", Int(493)),
            ("0_", Int(0)),
            ("09", Str("09")),
            ("0x1F", Int(31)),
            ("-0b101", Int(-5)),
            ("1:30", Int(90)),
            ("1:60", Str("1:60")),
            ("0:30", Str("0:30")),
            ("9223372036854775807", Int(i64::MAX)),
            ("-9223372036854775808", Int(i64::MIN)),
            ("1.5", Float("1.5")),
            (".5", Float(".5")),
            ("-.5", Str("-.5")),
            ("1.", Float("1.")),
            ("1e5", Str("1e5")),
            ("1.0e5", Str("1.0e5")),
            ("1.0e+5", Float("1.0e+5")),
            ("1:30.5", Float("1:30.5")),
            ("-.inf", Float("-.inf")),
            (".NaN", Float(".NaN")),
            ("+.nan", Str("+.nan")),
            ("1.2.3", Str("1.2.3")),
            ("2024-01-02", Str("2024-01-02")),
            ("0o17", Str("0o17")),
            ("a b", Str("a b")),
            ("'1'", Str("1")),
            ("\"true\"", Str("true")),
            ("''", Str("")),
            ("", Null),
        ];
        for (text, expected) in cases {
            let source = format!("k: {text}\n");
            let mut nodes = [Node::EMPTY; 8];
            let mut buf = [0u8; 64];
            let mut arena = Arena::new(&mut nodes, &mut buf);
            let root = arena.parse(source.as_bytes()).unwrap();
            assert_eq!(arena.value(root).get("k").unwrap().scalar(), Some(expected), "{text}");
        }
    }

    #[test]
    fn json_as_python_writes_it() {
        let cases: [(&[u8], &str); 12] = [
            (b"1: a\n\"true\": b\n~: c\n1.5: d", r#"{"1":"a","true":"b","null":"c","1.5":"d"}"#),
            (b"[.5, -1., 1_0.2_5, 1.5e-3, 1:30.25, -.INF, .inf, .nan, 00.1]", "[0.5,-1.0,10.25,1.5e-3,90.25,-Infinity,Infinity,NaN,0.1]"),
            (b"a: 1\nA: 2\na: 3", r#"{"a":3,"A":2}"#),
            (b"1: a\ntrue: b", r#"{"1":"b"}"#),
            (b"\"\\0\\x1f\\\\\\\"\\u00e9\\U0001F600\\N\\L\"", "\"\\u0000\\u001f\\\\\\\"\u{e9}\u{1f600}\u{85}\u{2028}\""),
            (b"", "null"),
            (b"# only a comment\n", "null"),
            (b"---\n...\n", "null"),
            (b"- \n-\n- # c", "[null,null,null]"),
            (b"{}", "{}"),
            (b"a: []", r#"{"a":[]}"#),
            (b"\xef\xbb\xbfa: b", r#"{"a":"b"}"#),
        ];
        for (source, expected) in cases {
            assert_eq!(json(source).unwrap(), expected, "{}", String::from_utf8_lossy(source));
        }
    }

    #[test]
    fn block_structure() {
        let cases: [(&[u8], &str); 16] = [
            (b"- - a\n  - b\n- c", r#"[["a","b"],"c"]"#),
            (b"- a: 1\n  b: 2\n- c: 3", r#"[{"a":1,"b":2},{"c":3}]"#),
            (b"a:\n- 1\n- 2\nb: 3", r#"{"a":[1,2],"b":3}"#),
            (b"a:\n  - 1\n  -\n    b: 2", r#"{"a":[1,{"b":2}]}"#),
            (b"a:\n  b:\n    c: d\ne: f", r#"{"a":{"b":{"c":"d"}},"e":"f"}"#),
            (b"  a: 1\n  b: 2", r#"{"a":1,"b":2}"#),
            (b"a:\nb:\n", r#"{"a":null,"b":null}"#),
            (b"a: b\n  c\n\n  d\ne: f", r#"{"a":"b c\nd","e":"f"}"#),
            (b"- a\n -b", r#"["a -b"]"#),
            (b"plain text\nover lines # comment", r#""plain text over lines""#),
            (b"a: x:y z#w", r#"{"a":"x:y z#w"}"#),
            (b"'a''b': \"c\"  # d", r#"{"a'b":"c"}"#),
            (b"a : b", r#"{"a":"b"}"#),
            (b"--- # doc\na: 1\n... # end\n# more\n", r#"{"a":1}"#),
            (b"--- text", r#""text""#),
            (b"a: b\r\nc:\r\n  - d\r\n", r#"{"a":"b","c":["d"]}"#),
        ];
        for (source, expected) in cases {
            assert_eq!(json(source).unwrap(), expected, "{}", String::from_utf8_lossy(source));
        }
    }

    #[test]
    fn flow_collections() {
        let cases: [(&[u8], &str); 9] = [
            (b"[a, b c, 'd', \"e\"]", r#"["a","b c","d","e"]"#),
            (b"{a: 1, b: [2, {c: 3}], d}", r#"{"a":1,"b":[2,{"c":3}],"d":null}"#),
            (b"[a: b, c]", r#"[{"a":"b"},"c"]"#),
            (b"{\"a\":b, 'c':d}", r#"{"a":"b","c":"d"}"#),
            (b"[a,\n  b, # comment\nc,\n]", r#"["a","b","c"]"#),
            (b"{a:b, c: }", r#"{"a:b":null,"c":null}"#),
            (b"[-, -a, a#b, http://x]", r#"["-","-a","a#b","http://x"]"#),
            (b"key: [a\n  b]", r#"{"key":["a b"]}"#),
            (b"[[[]]]", "[[[]]]"),
        ];
        for (source, expected) in cases {
            assert_eq!(json(source).unwrap(), expected, "{}", String::from_utf8_lossy(source));
        }
    }

    #[test]
    fn quoted_and_block_scalars() {
        let cases: [(&[u8], &str); 17] = [
            (b"'a\n  b\n\n  c '", r#""a b\nc ""#),
            (b"\"a \\\n   b\\\n\n c\"", r#""a b\nc""#),
            (b"\"\\t\\a\\b\\e\\f\\r\\v\\/\\ \\_\"", "\"\\t\\u0007\\u0008\\u001b\\u000c\\r\\u000b/ \u{a0}\""),
            (b"\"tab\there\"", r#""tab\there""#),
            (b"a: |\n  x\n    y\n\n  z\n\n\nb: 1", r#"{"a":"x\n  y\n\nz\n","b":1}"#),
            (b"a: |-\n  x\n\n", r#"{"a":"x"}"#),
            (b"a: |+\n  x\n\n", r#"{"a":"x\n\n"}"#),
            (b"a: >\n  one\n  two\n\n  three\n    more\n  four\n", r#"{"a":"one two\nthree\n  more\nfour\n"}"#),
            (b"a: >-\n  x\n  y", r#"{"a":"x y"}"#),
            (b"a: |2\n   x\n  y\n", r#"{"a":" x\ny\n"}"#),
            (b"a: |1-\n  x", r#"{"a":" x"}"#),
            (b"- |\n  x\n- >+\n\n- |  # comment\n  \ty", r#"["x\n","\n","\ty"]"#),
            (b"a: |\nb: c", r#"{"a":"","b":"c"}"#),
            (b"--- |\n  root\n", r#""root\n""#),
            (b"a: |\n  x\r\n  y\r\n", r#"{"a":"x\ny\n"}"#),
            (b"- a: |\n    x\n  b: y", r#"[{"a":"x\n","b":"y"}]"#),
            (b"a:\n|\n x\nb: >\n c", r#"{"a":"x\n","b":"c"}"#),
        ];
        for (source, expected) in cases {
            assert_eq!(json(source).unwrap(), expected, "{}", String::from_utf8_lossy(source));
        }
    }

    #[test]
    fn errors_name_the_construct_and_where() {
        use ErrorKind::*;
        let cases: [(&[u8], ErrorKind, u32, u32); 41] = [
            (b"a: b\n\xff", InvalidUtf8, 2, 1),
            (b"a: \x01", ControlCharacter, 1, 4),
            (b"a: \xc3\xa9\x7f", ControlCharacter, 1, 5),
            (b"a: b\xc2\x85c", LineSeparator, 1, 5),
            (b"a:\n\tb: c", Tab, 2, 1),
            (b"a: b\t", Tab, 1, 5),
            (b"%YAML 1.1\n---\na", Directive, 1, 1),
            (b"a: 1\n---\nb: 2", SecondDocument, 2, 1),
            (b"a\n...\nb", SecondDocument, 3, 1),
            (b"# c\n...", UnexpectedCharacter, 2, 1),
            (b"a: &x 1", Anchor, 1, 4),
            (b"- *x", Alias, 1, 3),
            (b"a: !!str 1", Tag, 1, 4),
            (b"[!x a]", Tag, 1, 2),
            (b"? a\n: b", ComplexKey, 1, 1),
            (b"{? a}", ComplexKey, 1, 2),
            (b"b: 1\n<<: {a: 1}", MergeKey, 2, 1),
            (b"a: =", ValueKey, 1, 4),
            (b"[a]: b", CollectionKey, 1, 1),
            (b"{[a]: b}", CollectionKey, 1, 2),
            (b"a: 1\nb\n c: 2", MultiLineKey, 2, 1),
            (b"a:\n  b: 1\n c: 2", BadIndentation, 3, 2),
            (b"a: 1\n  b: 2", MappingValueNotAllowed, 2, 4),
            (b"a: 1\nb\n", ExpectedKey, 2, 1),
            (b"- a\nb: c", ExpectedEntry, 2, 1),
            (b"a: b: c", MappingValueNotAllowed, 1, 5),
            (b"a: - b", SequenceEntryNotAllowed, 1, 4),
            (b"a: 'b' c", UnexpectedText, 1, 8),
            (b"a: @b", UnexpectedCharacter, 1, 4),
            (b"a: 'b\n\n", UnterminatedQuote, 1, 4),
            (b"a: \"b\n---\nc\"", UnterminatedQuote, 1, 4),
            (b"a: [b,\n  c", UnterminatedFlow, 1, 4),
            (b"{a: 1 b: 2}", FlowSyntax, 1, 8),
            (b"[a, b}", FlowSyntax, 1, 6),
            (b"\"\\q\"", BadEscape, 1, 2),
            (b"\"\\x4\"", BadEscape, 1, 2),
            (b"\"\\ud800\"", BadEscape, 1, 2),
            (b"a: |0\n x", BadBlockHeader, 1, 5),
            (b"a: | x", BadBlockHeader, 1, 6),
            (b"a: 9223372036854775808", BadInteger, 1, 4),
            (b"a: 0x_", BadInteger, 1, 4),
        ];
        for (source, kind, line, column) in cases {
            assert_eq!(error(source), (kind, line, column), "{}", String::from_utf8_lossy(source));
        }
        let e = json(b"a:\n  - x\n  - &y z").unwrap_err();
        assert_eq!(e.to_string(), "line 3 column 5: anchors (&) are not supported");
    }

    #[test]
    fn limits() {
        let mut nodes = [Node::EMPTY; 4];
        let mut text = [0u8; 8];
        let mut arena = Arena::new(&mut nodes, &mut text);
        assert_eq!(arena.parse(b"[a, b, c, d]").unwrap_err().kind, ErrorKind::TooManyNodes { limit: 4 });
        assert_eq!(arena.parse(b"\"123456789\"").unwrap_err().kind, ErrorKind::TextFull { limit: 8 });
        // A failed parse leaves the arena as it was.
        let root = arena.parse(b"[ab, cd, ef]").unwrap();
        assert_eq!(arena.value(root).len(), 3);
        assert_eq!(arena.parse(b"x").unwrap_err().kind, ErrorKind::TooManyNodes { limit: 4 });
        assert_eq!(arena.value(root).items().nth(2).unwrap().as_str(), Some("ef"));
        let deep = "[".repeat(DEPTH_LIMIT + 1) + &"]".repeat(DEPTH_LIMIT + 1);
        assert_eq!(error(deep.as_bytes()).0, ErrorKind::TooDeep { limit: DEPTH_LIMIT });
        let ok = "[".repeat(DEPTH_LIMIT) + &"]".repeat(DEPTH_LIMIT);
        assert!(json(ok.as_bytes()).is_ok());
        let mut block = String::new();
        for level in 0..=DEPTH_LIMIT {
            block += &" ".repeat(level);
            block += "- \n";
        }
        block += &" ".repeat(DEPTH_LIMIT + 1);
        block += "x\n";
        let mut nodes = [Node::EMPTY; 256];
        let mut text = [0u8; 16];
        assert_eq!(Arena::new(&mut nodes, &mut text).parse(block.as_bytes()).unwrap_err().kind, ErrorKind::TooDeep { limit: DEPTH_LIMIT });
    }

    #[test]
    fn garbage_never_panics() {
        let pieces: [&[u8]; 24] = [
            b"a", b": ", b"- ", b"\n", b"  ", b"'", b"\"", b"\\", b"[", b"]", b"{", b"}", b",", b"#", b"|", b">-", b"\t", b"?", b"&",
            b"1", b"\r", b"---", b"\xc3", b"x: |2\n",
        ];
        let mut garbage = crate::fuzz::Garbage::new(29);
        let mut nodes = [Node::EMPTY; 64];
        let mut text = [0u8; 256];
        for _ in 0..20000 {
            let source = garbage.text(&pieces, 24);
            let mut arena = Arena::new(&mut nodes, &mut text);
            if let Ok(root) = arena.parse(&source) {
                let mut out = String::new();
                write_json(arena.value(root), &mut out).unwrap();
                assert!(crate::json::Value::parse(out.as_bytes()).is_ok() || out.contains("NaN") || out.contains("Infinity"), "{out}");
                let _ = arena.value(root).get("a").map(|v| v.len());
            }
        }
        crate::fuzz::seed("yaml_json", CLOUD_CONFIG);
        crate::fuzz::seed("cloud_config", CLOUD_CONFIG);
        for _ in 0..3000 {
            let source = garbage.mutated(CLOUD_CONFIG, 0..CLOUD_CONFIG.len(), 3);
            let mut nodes = [Node::EMPTY; 256];
            let mut text = [0u8; 4096];
            let mut arena = Arena::new(&mut nodes, &mut text);
            if let Ok(root) = arena.parse(&source) {
                write_json(arena.value(root), &mut String::new()).unwrap();
            }
        }
    }
}
