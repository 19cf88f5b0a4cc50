//! The parser: YAML text into nodes, with the line and column of what it refuses.

use super::node::{Arena, Kind, Node, NodeId};
use super::resolve::{resolve, resolve_tagged, Resolved, Tag};
use super::{Error, ErrorKind};

/// Deepest nesting of collections.
pub const DEPTH_LIMIT: usize = 64;

/// No child yet (while a collection is parsed).
const NONE: u32 = u32::MAX;

impl Arena<'_> {
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
            tag: None,
            error: Error { kind: ErrorKind::InvalidUtf8, line: 0, column: 0, limit: 0 },
        };
        let Ok(root) = parser.document() else { return Err(parser.error) };
        self.nodes_used = parser.nodes_used;
        self.text_used = parser.text_used;
        Ok(NodeId(root))
    }
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
    Error { kind, line, column: char_column(src, line_start, pos), limit: 0 }
}

fn char_column(src: &[u8], line_start: usize, pos: usize) -> u32 {
    1 + src[line_start..pos].iter().filter(|&&b| b & 0xc0 != 0x80).count() as u32
}

fn is_break(b: u8) -> bool {
    b == b'\n' || b == b'\r'
}

/// What may follow an indicator (`-`, `:`, `?`) for it to be one: white space, a line
/// break or the end (0: the input holds no NUL, `check_characters` saw to that).
/// Out of line: asked after every indicator and at every end of a plain scalar.
#[inline(never)]
fn is_blank(b: u8) -> bool {
    matches!(b, 0 | b' ' | b'\t' | b'\n' | b'\r')
}

/// A position to come back to: 12 bytes, passed in registers (the text's offsets fit in
/// 32 bits, as the nodes' do).
#[derive(Clone, Copy)]
struct Mark {
    pos: u32,
    line: u32,
    line_start: u32,
}

impl Mark {
    fn pos(self) -> usize {
        self.pos as usize
    }

    fn line_start(self) -> usize {
        self.line_start as usize
    }
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
    /// A tag read and not yet given to its node: the next node pushed takes it.
    tag: Option<(Tag, Mark)>,
    /// Why the parse stopped, once a step returns `Stop`.
    error: Error,
}

/// A parse that stopped: its error is in the parser (`Parser::error`), so that a step's
/// result is a node id and a flag, one register, and `?` moves nothing else.
struct Stop;

impl Parser<'_, '_> {
    /// Out of line, as `peek` is: the bounds check is the same code at each of the many
    /// places that look at a byte.
    #[inline(never)]
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

    /// Out of line: a mark is taken at every node and every error.
    #[inline(never)]
    fn mark(&self) -> Mark {
        Mark { pos: self.pos as u32, line: self.line, line_start: self.line_start as u32 }
    }

    fn reset(&mut self, mark: Mark) {
        (self.pos, self.line, self.line_start) = (mark.pos(), mark.line, mark.line_start());
    }

    /// Out of line: counting the column is the same code at each of its many callers.
    #[inline(never)]
    fn fail_at(&mut self, mark: Mark, kind: ErrorKind) -> Stop {
        self.error = Error { kind, line: mark.line, column: char_column(self.src, mark.line_start(), mark.pos()), limit: 0 };
        Stop
    }

    fn fail(&mut self, kind: ErrorKind) -> Stop {
        self.fail_at(self.mark(), kind)
    }

    /// A failure of a kind that exceeds `limit`.
    fn exceeded(&mut self, mark: Mark, kind: ErrorKind, limit: usize) -> Stop {
        let stop = self.fail_at(mark, kind);
        self.error.limit = limit as u32;
        stop
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
    fn skip_to_content(&mut self) -> Result<(), Stop> {
        loop {
            self.skip_spaces();
            if self.peek() == b'#' {
                while !is_break(self.peek()) && self.peek() != 0 {
                    self.pos += 1;
                }
            }
            match self.peek() {
                b'\t' => return Err(self.fail(ErrorKind::Tab)),
                b if is_break(b) => self.take_break(),
                _ => return Ok(()),
            }
        }
    }

    /// After a complete value: nothing but a comment may follow on its line.
    fn end_line(&mut self) -> Result<(), Stop> {
        self.skip_spaces();
        match self.peek() {
            0 | b'\n' | b'\r' | b'#' => self.skip_to_content(),
            b'\t' => Err(self.fail(ErrorKind::Tab)),
            b':' if is_blank(self.at(1)) => Err(self.fail(ErrorKind::MappingValueNotAllowed)),
            _ => Err(self.fail(ErrorKind::UnexpectedText)),
        }
    }

    fn enter(&mut self) -> Result<(), Stop> {
        self.depth += 1;
        if self.depth > DEPTH_LIMIT {
            return Err(self.exceeded(self.mark(), ErrorKind::TooDeep, DEPTH_LIMIT));
        }
        Ok(())
    }

    fn push(&mut self, kind: Kind, resolved: Resolved, text_start: usize, at: Mark) -> Result<u32, Stop> {
        let limit = self.nodes.len();
        if self.nodes_used >= limit {
            return Err(self.exceeded(at, ErrorKind::TooManyNodes, limit));
        }
        self.nodes[self.nodes_used] = Node {
            kind,
            resolved,
            start: text_start as u32,
            len: if kind == Kind::Scalar { (self.text_used - text_start) as u32 } else { 0 },
            first_child: 0,
            next_sibling: 0,
            line: at.line,
            column: char_column(self.src, at.line_start(), at.pos()),
        };
        self.nodes_used += 1;
        let node = self.nodes_used as u32 - 1;
        if let Some((tag, at)) = self.tag.take() {
            self.apply_tag(node, tag, at)?;
        }
        Ok(node)
    }

    fn push_null(&mut self, at: Mark) -> Result<u32, Stop> {
        self.push(Kind::Scalar, Resolved::Null, self.text_used, at)
    }

    fn push_text(&mut self, bytes: &[u8]) -> Result<(), Stop> {
        let limit = self.text.len();
        let end = self.text_used + bytes.len();
        if end > limit {
            return Err(self.exceeded(self.mark(), ErrorKind::TextFull, limit));
        }
        self.text[self.text_used..end].copy_from_slice(bytes);
        self.text_used = end;
        Ok(())
    }

    fn push_breaks(&mut self, count: usize) -> Result<(), Stop> {
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

    fn document(&mut self) -> Result<u32, Stop> {
        if self.src.starts_with("\u{feff}".as_bytes()) {
            self.pos = 3;
            self.line_start = 3;
        }
        self.skip_to_content()?;
        if self.peek() == b'%' {
            return Err(self.fail(ErrorKind::Directive));
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
            return Err(self.fail(ErrorKind::UnexpectedCharacter));
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
        Err(self.fail(kind))
    }

    fn root(&mut self) -> Result<u32, Stop> {
        if self.at_block_end() {
            return self.push_null(self.mark());
        }
        self.block_node(-1, true)
    }

    /// The node at the current position (its first character). `indent` is the column of
    /// the enclosing block collection (-1 at the root): a block scalar's lines and a plain
    /// scalar's continuation lines must be indented more. `collection_ok` is false on the
    /// line of a mapping key, where a block collection cannot start.
    fn block_node(&mut self, indent: i32, collection_ok: bool) -> Result<u32, Stop> {
        let start = self.mark();
        self.read_tag()?;
        if let Some((tag, at)) = self.tag {
            if matches!(self.peek(), 0 | b'\n' | b'\r' | b'#') {
                // The tag is the whole node's, not its first key's.
                self.tag = None;
                let node = self.node_below(indent, !collection_ok, at)?;
                self.apply_tag(node, tag, at)?;
                return Ok(node);
            }
        }
        match self.peek() {
            b'-' if is_blank(self.at(1)) => {
                if !collection_ok || self.tag.is_some() {
                    return Err(self.fail(ErrorKind::SequenceEntryNotAllowed));
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
                return Err(self.fail_at(start, ErrorKind::CollectionKey));
            }
            if !collection_ok {
                return Err(self.fail(ErrorKind::MappingValueNotAllowed));
            }
            if !single_line {
                return Err(self.fail_at(start, ErrorKind::MultiLineKey));
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

    /// A tagged node whose content starts on the lines below its tag (`key: !!map` and
    /// the mapping under it), or an empty one. `mapping_value`: a sequence may start at
    /// the key's column, as after `key:`.
    fn node_below(&mut self, indent: i32, mapping_value: bool, tag_at: Mark) -> Result<u32, Stop> {
        self.skip_to_content()?;
        if self.at_block_end() {
            return self.push_null(tag_at);
        }
        let column = self.column() as i32;
        if column > indent {
            return self.block_node(indent, true);
        }
        if mapping_value && column == indent && self.peek() == b'-' && is_blank(self.at(1)) {
            return self.block_sequence(true);
        }
        self.push_null(tag_at)
    }

    /// A scalar (other than a block scalar) or a flow collection; whether it is on one line.
    fn inline_node(&mut self, indent: i32) -> Result<(u32, bool), Stop> {
        match self.peek() {
            b'"' | b'\'' => self.quoted(),
            b'[' | b'{' => Ok((self.flow()?, true)),
            _ if self.plain_starts(false) => self.plain(indent, false),
            _ => Err(self.cannot_start()),
        }
    }

    /// A node's tag, at `!`, kept for the node (`tag`); the spaces after it skipped.
    fn read_tag(&mut self) -> Result<(), Stop> {
        if self.peek() != b'!' {
            return Ok(());
        }
        let at = self.mark();
        while !is_blank(self.peek()) {
            self.pos += 1;
        }
        let tag = Tag::parse(&self.src[at.pos()..self.pos]).ok_or_else(|| self.fail_at(at, ErrorKind::Tag))?;
        self.tag = Some((tag, at));
        self.skip_spaces();
        Ok(())
    }

    /// Constructs `node` as its explicit tag says, as PyYAML does: a scalar's text read as
    /// the tag's type, `!!binary`'s base64 decoded in place; a collection must be of the
    /// tag's kind.
    fn apply_tag(&mut self, node: u32, tag: Tag, at: Mark) -> Result<(), Stop> {
        let Node { kind, start, len, .. } = self.nodes[node as usize];
        let constructed = match (tag, kind) {
            (Tag::Map, Kind::Mapping) | (Tag::Seq, Kind::Sequence) => return Ok(()),
            (_, Kind::Scalar) => resolve_tagged(tag, &mut self.text[start as usize..(start + len) as usize]),
            _ => None,
        };
        let (resolved, len) = constructed.ok_or_else(|| {
            let kind = if tag == Tag::Binary && kind == Kind::Scalar { ErrorKind::BadBinary } else { ErrorKind::TagMismatch };
            self.fail_at(at, kind)
        })?;
        // Decoded bytes are fewer than their base64: the text buffer takes back the rest.
        if (start + self.nodes[node as usize].len) as usize == self.text_used {
            self.text_used = start as usize + len;
        }
        let node = &mut self.nodes[node as usize];
        (node.resolved, node.len) = (resolved, len as u32);
        Ok(())
    }

    fn cannot_start(&mut self) -> Stop {
        let kind = match self.peek() {
            b'&' => ErrorKind::Anchor,
            b'*' => ErrorKind::Alias,
            b'!' => ErrorKind::Tag,
            b'?' => ErrorKind::ComplexKey,
            b'\t' => ErrorKind::Tab,
            b'-' => ErrorKind::SequenceEntryNotAllowed,
            _ => ErrorKind::UnexpectedCharacter,
        };
        self.fail(kind)
    }

    /// The mapping whose first key was just read, at `start`; the position is at its colon.
    fn block_mapping(&mut self, start: Mark, first_key: u32) -> Result<u32, Stop> {
        self.enter()?;
        let column = start.pos() - start.line_start();
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
                return Err(self.fail(ErrorKind::BadIndentation));
            }
            let key_start = self.mark();
            if matches!(self.peek(), b'|' | b'>') || (self.peek() == b'-' && is_blank(self.at(1))) {
                return Err(self.fail(ErrorKind::ExpectedKey));
            }
            self.read_tag()?;
            let (node, single_line) = self.inline_node(column as i32)?;
            if !self.key_follows() {
                return Err(self.fail_at(key_start, ErrorKind::ExpectedKey));
            }
            if self.nodes[node as usize].kind != Kind::Scalar {
                return Err(self.fail_at(key_start, ErrorKind::CollectionKey));
            }
            if !single_line {
                return Err(self.fail_at(key_start, ErrorKind::MultiLineKey));
            }
            key = node;
        }
        self.depth -= 1;
        Ok(mapping)
    }

    /// The sequence whose first `-` is at the current position.
    fn block_sequence(&mut self, indentless: bool) -> Result<u32, Stop> {
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
            return Err(self.fail(if self.column() > column { ErrorKind::BadIndentation } else { ErrorKind::ExpectedEntry }));
        }
        self.depth -= 1;
        Ok(sequence)
    }

    /// The value after a mapping's `:` or a sequence's `-` at `column`: on the same line,
    /// on the lines below indented more, or (a mapping's) a sequence at the key's column.
    fn value_after(&mut self, column: usize, mapping: bool) -> Result<u32, Stop> {
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
    /// A tagged one is what its tag says, not what the resolvers would.
    fn plain(&mut self, indent: i32, flow: bool) -> Result<(u32, bool), Stop> {
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
        let resolved = match self.tag {
            Some(_) => Resolved::Str,
            None => resolve(&self.text[text_start..self.text_used]).map_err(|kind| self.fail_at(start, kind))?,
        };
        Ok((self.push(Kind::Scalar, resolved, text_start, start)?, end.line == start.line))
    }

    /// A single- or double-quoted scalar, folded as PyYAML folds it.
    fn quoted(&mut self) -> Result<(u32, bool), Stop> {
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
                _ => return Err(self.fail_at(start, ErrorKind::UnterminatedQuote)),
            }
        }
        Ok((self.push(Kind::Scalar, Resolved::Str, text_start, start)?, single_line))
    }

    /// Blank lines inside a quoted scalar (after its first line break): how many.
    fn quoted_breaks(&mut self, start: Mark) -> Result<usize, Stop> {
        let mut breaks = 0;
        loop {
            if self.at_document_marker() {
                return Err(self.fail_at(start, ErrorKind::UnterminatedQuote));
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
    fn escape(&mut self) -> Result<(), Stop> {
        let at = self.mark();
        let src = self.src;
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
                let digits = src.get(self.pos + 2..self.pos + 2 + width).ok_or_else(|| self.fail_at(at, ErrorKind::BadEscape))?;
                let code = digits.iter().try_fold(0u32, |n, &d| Some(n * 16 + (d as char).to_digit(16)?)).ok_or_else(|| self.fail_at(at, ErrorKind::BadEscape))?;
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
            _ => return Err(self.fail_at(at, ErrorKind::BadEscape)),
        };
        self.pos += 2;
        let c = char::from_u32(code).ok_or_else(|| self.fail_at(at, ErrorKind::BadEscape))?;
        self.push_text(c.encode_utf8(&mut [0; 4]).as_bytes())
    }

    /// A literal (`|`) or folded (`>`) block scalar, exactly as PyYAML's scanner reads it.
    fn block_scalar(&mut self, indent: i32) -> Result<u32, Stop> {
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
            return Err(self.fail(ErrorKind::BadBlockHeader));
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
            _ => return Err(self.fail(ErrorKind::BadBlockHeader)),
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
    fn flow_space(&mut self, start: Mark) -> Result<(), Stop> {
        self.skip_to_content()?;
        if self.at_block_end() {
            return Err(self.fail_at(start, ErrorKind::UnterminatedFlow));
        }
        Ok(())
    }

    /// A flow sequence `[...]` or mapping `{...}`; a sequence's `key: value` entries are
    /// mappings of one entry.
    fn flow(&mut self) -> Result<u32, Stop> {
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
                    return Err(self.fail_at(entry, ErrorKind::CollectionKey));
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
                    return Err(self.fail_at(entry, ErrorKind::CollectionKey));
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
                _ => return Err(self.fail(ErrorKind::FlowSyntax)),
            }
        }
        self.depth -= 1;
        Ok(collection)
    }

    fn flow_node(&mut self) -> Result<u32, Stop> {
        self.read_tag()?;
        if let Some((_, at)) = self.tag {
            self.flow_space(at)?;
        }
        match self.peek() {
            b'"' | b'\'' => Ok(self.quoted()?.0),
            b'[' | b'{' => self.flow(),
            // A tagged empty node (`[!!str , 1]`).
            b',' | b']' | b'}' if self.tag.is_some() => self.push_null(self.mark()),
            _ if self.plain_starts(true) => Ok(self.plain(-1, true)?.0),
            _ => Err(self.cannot_start()),
        }
    }
}
