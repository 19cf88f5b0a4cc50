//! Messages that hold system errors. Core keeps an errno as a number (`HostError`); the
//! words for it (`Permission denied`) are the host's, so an error that holds one is
//! written through `Explain` with the caller's `ErrnoWords`: bin passes the names,
//! `Display` and core's tests the numbers.

use core::fmt;

use super::messages::Line;
use super::HostError;
use crate::text::Decimal;

/// How a message words a system error: bin names the errno (`Permission denied`), core's
/// tests and `Display` give its number (`errno 1`).
pub type ErrnoWords = fn(HostError, &mut fmt::Formatter<'_>) -> fmt::Result;

/// The host's words for an errno, those of its line type `L` (`Line::reason`): the
/// `ErrnoWords` every rule passes for its host, and bin for its `Message`.
pub fn words<L: Line>(e: HostError, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    fmt::Display::fmt(&L::reason(e), f)
}

pub fn errno_number(e: HostError, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    write!(f, "errno {}", Decimal(e.errno.unsigned_abs().into()))
}

/// An error whose message holds system errors, worded by the caller.
pub trait Explain {
    fn explain(&self, f: &mut fmt::Formatter<'_>, words: ErrnoWords) -> fmt::Result;
}

/// `error` as its message, its system errors in `words`.
pub struct Worded<'a, E: Explain>(pub &'a E, pub ErrnoWords);

impl<E: Explain> fmt::Display for Worded<'_, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.explain(f, self.1)
    }
}
