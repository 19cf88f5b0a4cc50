//! One GET outside the metadata service's conversation: a user-data `#include` URL.

use super::messages::Messages;
use crate::http::Url;
use crate::retry::Timeouts;

pub trait Fetch: Messages {
    /// The body of `url` at the start of `out`: its length, `None` for a 404; an error
    /// names the URL.
    fn get(&mut self, url: &Url<'_>, out: &mut [u8], timeouts: &Timeouts) -> Result<Option<usize>, Self::Text>;
}
