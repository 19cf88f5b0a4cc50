//! Room kept for the rest of the run: decoded user-data, which every later action of the
//! run reads back.

use super::messages::Messages;

pub trait Keep: Messages {
    /// `len` zeroed bytes for `what` (named in the error when the host has none), never
    /// given back.
    fn keep(&mut self, len: usize, what: &str) -> Result<&'static mut [u8], Self::Text>;
}
