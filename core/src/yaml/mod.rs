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

/// u32, the width of the tag it had while three kinds held their limit: the errors that wrap
/// a yaml error (provider's `DocumentError`) keep their own variants in its unused values,
/// and compile smaller that way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
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
    // The kinds that exceed a limit, which the error holds.
    TooManyNodes,
    TextFull,
    TooDeep,
}

/// The reasons of the kinds without a limit, a line each in the order of their variants,
/// found by the kind's number: one text, not code per kind that loads its reason.
const REASONS: &str = "\
invalid UTF-8\n\
control character (YAML allows printable characters, tabs and line breaks)\n\
Unicode line separators (NEL, LS, PS) are not supported\n\
tab outside quotes, block scalars and comments (YAML indents and separates with spaces)\n\
directives (%YAML, %TAG) are not supported\n\
a second document is not supported\n\
anchors (&) are not supported\n\
aliases (*) are not supported\n\
tags other than !!str, !!int, !!float, !!bool, !!null, !!binary, !!map and !!seq are not supported\n\
the value is not of its tag's type\n\
!!binary content is not base64\n\
complex keys (?) are not supported\n\
merge keys (<<) are not supported\n\
the value key (=) is not supported\n\
a mapping key must be a scalar, not a sequence or mapping\n\
a mapping key must fit on one line\n\
bad indentation\n\
expected a mapping entry (key: value)\n\
expected a sequence entry (- value)\n\
a mapping value (:) is not allowed here\n\
a sequence entry (-) is not allowed here\n\
unexpected text after a value\n\
this character cannot start a value\n\
unterminated quoted scalar\n\
unterminated flow collection ([ or {)\n\
expected , or the closing bracket of a flow collection\n\
invalid escape sequence\n\
invalid block scalar header (| or >, then 1-9 and - or +, then a comment)\n\
integer beyond 64 bits, or without digits";

/// What went wrong, and where: 1-based line and column (in characters). 16 bytes, so that
/// every parsing step's result comes back in registers; the limit is u32, as the nodes' own
/// offsets are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Error {
    pub kind: ErrorKind,
    pub line: u32,
    pub column: u32,
    /// The limit a `TooManyNodes`, `TextFull` or `TooDeep` exceeded; 0 for the other kinds.
    pub limit: u32,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {} column {}: {}", Decimal(self.line.into()), Decimal(self.column.into()), Reason(self))
    }
}

/// What went wrong, without where.
struct Reason<'a>(&'a Error);

impl fmt::Display for Reason<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let limit = Decimal(self.0.limit.into());
        match self.0.kind {
            ErrorKind::TooManyNodes => write!(f, "more than {limit} nodes"),
            ErrorKind::TextFull => write!(f, "more than {limit} bytes of scalar text"),
            ErrorKind::TooDeep => write!(f, "collections nested deeper than {limit} levels"),
            kind => f.write_str(REASONS.split('\n').nth(kind as usize).unwrap_or_default()),
        }
    }
}

#[cfg(test)]
mod tests;
