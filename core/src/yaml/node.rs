//! Nodes in the caller's buffers, and the views into them that cloud-config reads.

use super::resolve::{int_value, Resolved};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Scalar,
    Sequence,
    Mapping,
}

#[derive(Clone, Copy, Debug)]
pub struct Node {
    pub(super) kind: Kind,
    pub(super) resolved: Resolved,
    /// A scalar's decoded text in the arena's text buffer.
    pub(super) start: u32,
    /// A scalar's text length; a collection's number of children (a mapping's alternate
    /// key and value).
    pub(super) len: u32,
    /// Links are a node's index plus one, so that 0 is "none" and an unused node is all
    /// zeros: a static array of them then costs no space in the binary (.bss, not .data).
    pub(super) first_child: u32,
    pub(super) next_sibling: u32,
    pub(super) line: u32,
    pub(super) column: u32,
}

impl Node {
    pub const EMPTY: Node =
        Node { kind: Kind::Scalar, resolved: Resolved::Str, start: 0, len: 0, first_child: 0, next_sibling: 0, line: 0, column: 0 };
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeId(pub(super) u32);

/// The caller's buffers for nodes and scalar text, filled by [`Arena::parse`].
pub struct Arena<'b> {
    pub(super) nodes: &'b mut [Node],
    pub(super) text: &'b mut [u8],
    pub(super) nodes_used: usize,
    pub(super) text_used: usize,
}

impl<'b> Arena<'b> {
    pub fn new(nodes: &'b mut [Node], text: &'b mut [u8]) -> Arena<'b> {
        Arena { nodes, text, nodes_used: 0, text_used: 0 }
    }

    /// The node `id` (which this arena returned).
    pub fn value(&self, id: NodeId) -> NodeRef<'_> {
        NodeRef { arena: self, index: id.0 }
    }
}

/// A scalar as PyYAML's SafeLoader constructs it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar<'a> {
    Null,
    Bool(bool),
    Int(i64),
    /// The source text, which the JSON writer (`json.rs`) writes as the number Python's `float` reads.
    Float(&'a str),
    Str(&'a str),
    /// `!!binary`'s bytes (Python's `bytes`).
    Binary(&'a [u8]),
}

/// A node, with the arena it lives in: a pointer and an index, 16 bytes, so that a view
/// passes and returns in two registers (the nodes' and text's slices in it made it 40
/// bytes, copied through the stack at every call that took or gave one).
#[derive(Clone, Copy)]
pub struct NodeRef<'a> {
    /// Only nodes this arena's parses made are reachable from an id, so the nodes and text
    /// past what they used are never looked at.
    arena: &'a Arena<'a>,
    index: u32,
}

impl<'a> NodeRef<'a> {
    fn nodes(&self) -> &'a [Node] {
        self.arena.nodes
    }

    fn node(&self) -> &'a Node {
        &self.nodes()[self.index as usize]
    }

    /// Out of line: asked at almost every step of reading the configuration.
    #[inline(never)]
    pub fn kind(&self) -> Kind {
        self.node().kind
    }

    pub fn line(&self) -> u32 {
        self.node().line
    }

    pub fn column(&self) -> u32 {
        self.node().column
    }

    /// Any scalar's decoded text, whatever it resolved to (`0644` as written, not 420);
    /// `None` for a collection and for `!!binary`'s bytes.
    pub fn as_str(&self) -> Option<&'a str> {
        match self.node().resolved {
            Resolved::Binary => None,
            _ => core::str::from_utf8(self.as_bytes()?).ok(),
        }
    }

    /// Any scalar's bytes: its text, or what `!!binary` decoded to.
    pub fn as_bytes(&self) -> Option<&'a [u8]> {
        let node = self.node();
        let text: &'a [u8] = self.arena.text;
        let bytes = text.get(node.start as usize..(node.start + node.len) as usize)?;
        (node.kind == Kind::Scalar).then_some(bytes)
    }

    pub fn scalar(&self) -> Option<Scalar<'a>> {
        if self.node().resolved == Resolved::Binary {
            return Some(Scalar::Binary(self.as_bytes()?));
        }
        let text = self.as_str()?;
        Some(match self.node().resolved {
            Resolved::Null => Scalar::Null,
            Resolved::Bool => Scalar::Bool(matches!(text.as_bytes(), [b'y' | b'Y' | b't' | b'T', ..] | [b'o' | b'O', b'n' | b'N'])),
            Resolved::Int => Scalar::Int(int_value(text.as_bytes())?.ok()?),
            Resolved::Float => Scalar::Float(text),
            Resolved::Str | Resolved::Binary => Scalar::Str(text),
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
        self.resolved() == Some(Resolved::Null)
    }

    /// What a scalar resolved to; `None` for a collection. Asked instead of `scalar` where
    /// only the type matters, so that no value is made to be compared.
    fn resolved(&self) -> Option<Resolved> {
        let node = self.node();
        (node.kind == Kind::Scalar).then_some(node.resolved)
    }

    /// The value of the string key `key` in a mapping; a key written `1` or `true` is not
    /// the string "1" or "true", as in Python. The last of duplicate keys wins.
    pub fn get(&self, key: &str) -> Option<NodeRef<'a>> {
        self.pairs().filter(|(k, _)| k.resolved() == Some(Resolved::Str) && k.as_str() == Some(key)).last().map(|(_, v)| v)
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

    fn children(&self) -> impl Iterator<Item = NodeRef<'a>> + 'a {
        let this = *self;
        let mut next = if this.kind() == Kind::Scalar { 0 } else { this.node().first_child };
        core::iter::from_fn(move || {
            let index = next.checked_sub(1)?;
            next = this.nodes().get(index as usize)?.next_sibling;
            Some(NodeRef { index, ..this })
        })
    }

    fn pairs(&self) -> impl Iterator<Item = (NodeRef<'a>, NodeRef<'a>)> + 'a {
        let mapping = self.kind() == Kind::Mapping;
        let mut children = self.children();
        core::iter::from_fn(move || if mapping { Some((children.next()?, children.next()?)) } else { None })
    }
}

/// A mapping's entries (`NodeRef::entries`): a type of its own with one out-of-line `next`,
/// so that the many loops over entries do not each carry a copy of it.
pub struct Entries<'a> {
    map: NodeRef<'a>,
    /// The next key's node index plus one; 0 at the end.
    next: u32,
}

impl<'a> Iterator for Entries<'a> {
    type Item = (NodeRef<'a>, NodeRef<'a>);

    #[inline(never)]
    fn next(&mut self) -> Option<(NodeRef<'a>, NodeRef<'a>)> {
        while let Some(index) = self.next.checked_sub(1) {
            let key = NodeRef { index, ..self.map };
            let value = self.map.nodes().get(index as usize)?.next_sibling.checked_sub(1)?;
            self.next = self.map.nodes().get(value as usize)?.next_sibling;
            if self.map.pairs().take_while(|(k, _)| k.index != index).any(|(earlier, _)| same_key(earlier, key)) {
                continue;
            }
            return self.map.pairs().filter(|(k, _)| same_key(*k, key)).last().map(|(_, value)| (key, value));
        }
        None
    }
}

/// A sequence's items (`NodeRef::items`), with one out-of-line `next`.
pub struct Items<'a> {
    of: NodeRef<'a>,
    next: u32,
}

impl<'a> Iterator for Items<'a> {
    type Item = NodeRef<'a>;

    #[inline(never)]
    fn next(&mut self) -> Option<NodeRef<'a>> {
        let index = self.next.checked_sub(1)?;
        self.next = self.of.nodes().get(index as usize)?.next_sibling;
        Some(NodeRef { index, ..self.of })
    }
}

/// Python's dict keys: equal strings, or equal numbers (`True == 1`).
fn same_key(a: NodeRef<'_>, b: NodeRef<'_>) -> bool {
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
