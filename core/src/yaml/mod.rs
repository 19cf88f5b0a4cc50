//! The YAML cloud-config is written in, read as PyYAML's `safe_load` reads it: block and
//! flow collections, the five scalar styles, comments, one document, the explicit tags of
//! YAML 1.1's core types (`!!str`, `!!int`, `!!bool`, `!!float`, `!!null`, `!!binary`,
//! `!!map`, `!!seq`). Anchors, aliases, other tags, complex and merge keys, directives and
//! further documents are refused with the line and column where they appear, as is
//! everything PyYAML would not load.
//!
//! Four parts, one concept each: `parse` reads the text into nodes; `node` holds them in
//! buffers the caller owns (an [`Arena`]) and views them (a [`NodeRef`]); `resolve` says
//! what a plain scalar is, as PyYAML's SafeLoader (YAML 1.1) resolves it, with two
//! differences: timestamps stay strings, and an integer beyond 64 bits is an error rather
//! than a big number; `json` writes a value as Python's `json.dumps` writes what PyYAML
//! loaded.

use core::fmt;

use crate::text::Decimal;

mod json;
mod node;
mod parse;
mod resolve;

pub use json::{write_json, write_json_key};
pub use node::{Arena, Entries, Items, Kind, Node, NodeId, Scalar, NodeRef};
pub use parse::DEPTH_LIMIT;

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
    /// A value that is not of its tag's type (`!!int abc`, `!!map` on a scalar).
    TagMismatch,
    /// `!!binary` content that is not base64.
    BadBinary,
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
    // u32, as the nodes' own offsets are: the error stays 16 bytes, so that every parsing
    // step's result comes back in registers.
    TooManyNodes { limit: u32 },
    TextFull { limit: u32 },
    TooDeep { limit: u32 },
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
            Tag => "tags other than !!str, !!int, !!float, !!bool, !!null, !!binary, !!map and !!seq are not supported",
            TagMismatch => "the value is not of its tag's type",
            BadBinary => "!!binary content is not base64",
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
            TooManyNodes { limit } => return write!(f, "more than {limit} nodes", limit = Decimal(limit as u64)),
            TextFull { limit } => return write!(f, "more than {limit} bytes of scalar text", limit = Decimal(limit as u64)),
            TooDeep { limit } => return write!(f, "collections nested deeper than {limit} levels", limit = Decimal(limit as u64)),
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
        write!(f, "line {} column {}: {}", Decimal(self.line.into()), Decimal(self.column.into()), self.kind)
    }
}

#[cfg(test)]
mod tests;
