//! The store of everything a bootstrap reads from the metadata service: one value per
//! item, each kept in the buffer its response was received into (no copy), fetched on
//! demand and only once.

use core::fmt;

use super::Item;
use crate::text::{Decimal, Plain};

/// Most keys wisp installs from one instance's listing (AWS's `public-keys/`).
pub const KEYS_LIMIT: usize = 16;

/// The size of each response buffer: head and body together.
pub const SMALL_RESPONSE: usize = 4 * 1024;
/// A key's response: an RSA key of 16384 bits is 2.8 KiB of base64.
pub const KEY_RESPONSE: usize = 4 * 1024;
/// AWS caps user-data at 16 KiB; other clouds allow up to 256 KiB.
pub const USERDATA_RESPONSE: usize = 256 * 1024 + 1024;
/// Room for every key of a listing, one response each.
pub const KEYS_RESPONSE: usize = KEYS_LIMIT * KEY_RESPONSE;
/// Room for a parse of a document cloud's document (Hetzner's YAML text), which would
/// otherwise be the parsing frame's, probed whole on entry however small the document.
pub const PARSE_ROOM: usize = 32 * 1024;
pub type ParseRoom = [u8; PARSE_ROOM];
/// The room of every value together, and the parse's.
pub const METADATA_SIZE: usize = 3 * SMALL_RESPONSE + 2 * USERDATA_RESPONSE + KEYS_RESPONSE + PARSE_ROOM;

/// A value past the room its item has in the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TooLarge {
    pub item: Item,
    pub limit: u32,
}

impl fmt::Display for TooLarge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "metadata {what} larger than {limit} bytes", limit = Decimal(self.limit.into()), what = Plain(self.item.key()))
    }
}

/// One metadata value, stored in the buffer its response was received into.
pub struct StoredValue<'a> {
    pub(crate) buf: &'a mut [u8],
    pub(crate) state: ValueState,
}

/// No state is all zero bytes (the discriminants start at 1), so that a store not made
/// yet (`None::<Metadata>`) is: the binary's static slot for the store then lies in .bss,
/// not in the file (248 bytes, in every build).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub(crate) enum ValueState {
    NotFetched = 1,
    /// The service has no such value (404).
    Absent = 2,
    Present { start: usize, len: usize } = 3,
}

impl ValueState {
    /// The value is the first `len` bytes of its buffer, or absent.
    pub(crate) fn at_start(len: Option<usize>) -> ValueState {
        len.map_or(ValueState::Absent, |len| ValueState::Present { start: 0, len })
    }

    pub(crate) fn range(self) -> Option<core::ops::Range<usize>> {
        match self {
            ValueState::Present { start, len } => Some(start..start + len),
            _ => None,
        }
    }

    /// The value in `buf`, the buffer it was fetched into.
    pub(crate) fn value(self, buf: &[u8]) -> Option<&[u8]> {
        buf.get(self.range()?)
    }
}

impl<'a> StoredValue<'a> {
    /// The first `len` bytes of `space` as a value's buffer; the rest is left in `space`.
    fn new(space: &mut &'a mut [u8], len: usize) -> Self {
        let (buf, rest) = core::mem::take(space).split_at_mut(len);
        *space = rest;
        StoredValue { buf, state: ValueState::NotFetched }
    }

    /// `None` when the service has no such value (404) or it was not fetched.
    pub fn get(&self) -> Option<&[u8]> {
        self.state.range().map(|range| &self.buf[range])
    }

    pub fn is_fetched(&self) -> bool {
        self.state != ValueState::NotFetched
    }
}

/// An item's buffer and state, borrowed for a round.
pub(crate) struct Slot<'m> {
    pub item: Item,
    pub buf: &'m mut [u8],
    pub state: &'m mut ValueState,
}

/// Everything a bootstrap reads from the metadata service, fetched on demand.
pub struct Metadata<'a> {
    /// One per item, in `Item::ALL`'s order; the keys one per line.
    pub(crate) values: [StoredValue<'a>; 5],
    /// The whole document of the clouds that answer with one, and GCP's keys while they
    /// are combined.
    pub(crate) document: StoredValue<'a>,
    /// `PARSE_ROOM`: only a parse writes there.
    pub(crate) parse_room: &'a mut ParseRoom,
}

fn slot<'m>(item: Item, value: &'m mut StoredValue<'_>) -> Slot<'m> {
    Slot { item, buf: &mut *value.buf, state: &mut value.state }
}

impl<'a> Metadata<'a> {
    /// Carves the values' buffers out of `space`, which holds `METADATA_SIZE` bytes.
    pub fn new(mut space: &'a mut [u8]) -> Self {
        let space = &mut space;
        Metadata {
            values: Item::ALL.map(|item| {
                let len = match item {
                    Item::UserData => USERDATA_RESPONSE,
                    Item::SshKeys => KEYS_RESPONSE,
                    _ => SMALL_RESPONSE,
                };
                StoredValue::new(space, len)
            }),
            document: StoredValue::new(space, USERDATA_RESPONSE),
            parse_room: StoredValue::new(space, PARSE_ROOM).buf.try_into().unwrap_or_else(|_| unreachable!()),
        }
    }

    /// Each item's buffer and state, in `Item::ALL`'s order, and the document's: what a
    /// round fills.
    #[inline(always)]
    pub(crate) fn slots(&mut self) -> ([Slot<'_>; 5], &mut StoredValue<'a>) {
        let [a, b, c, d, e] = &mut self.values;
        let slots = [slot(Item::InstanceId, a), slot(Item::Hostname, b), slot(Item::LocalHostname, c), slot(Item::SshKeys, d), slot(Item::UserData, e)];
        (slots, &mut self.document)
    }

    /// `slots`, and the parse's room (written out again: `slots` stays in line in the
    /// clouds' rounds).
    pub(crate) fn slots_and_room(&mut self) -> ([Slot<'_>; 5], &mut StoredValue<'a>, &mut ParseRoom) {
        let [a, b, c, d, e] = &mut self.values;
        let slots = [slot(Item::InstanceId, a), slot(Item::Hostname, b), slot(Item::LocalHostname, c), slot(Item::SshKeys, d), slot(Item::UserData, e)];
        (slots, &mut self.document, self.parse_room)
    }

    pub fn get(&self, item: Item) -> Option<&[u8]> {
        self.values[item as usize].get()
    }

    /// The buffer an item's value is kept in, for filling from a local seed.
    pub fn buffer(&mut self, item: Item) -> &mut [u8] {
        self.values[item as usize].buf
    }

    /// The value is the first `len` bytes of its buffer (`None`: absent).
    pub fn set_len(&mut self, item: Item, len: Option<usize>) {
        self.values[item as usize].state = ValueState::at_start(len);
    }

    /// Sets a value from bytes (a seed's `h=`/`i=` override).
    pub fn set(&mut self, item: Item, value: &[u8]) -> Result<(), TooLarge> {
        let buf = self.buffer(item);
        let limit = buf.len();
        buf.get_mut(..value.len()).ok_or(TooLarge { item, limit: limit as u32 })?.copy_from_slice(value);
        self.set_len(item, Some(value.len()));
        Ok(())
    }

    pub fn is_fetched(&self, item: Item) -> bool {
        self.values[item as usize].is_fetched()
    }

    /// The instance document of the clouds that answer with one, once fetched.
    pub fn document(&self) -> Option<&[u8]> {
        self.document.get()
    }

    /// `document`, and the parse's room (`PARSE_ROOM` bytes).
    pub fn document_and_room(&mut self) -> (Option<&[u8]>, &mut ParseRoom) {
        (self.document.get(), self.parse_room)
    }
}
