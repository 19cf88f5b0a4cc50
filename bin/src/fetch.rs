//! One GET outside the metadata service's conversation (a user-data `#include` URL, a
//! seed's `seedfrom`), over Linux's network.

use wisp_core::host::http::Described;
use wisp_core::retry::Timeouts;
use wisp_core::text::Plain;

use crate::host::{errno_words, Network};

/// One GET of `host` `path` at `address:port`, the body moved to the start of `out`:
/// its length, `None` for a 404, an error naming the URL for any other failure.
#[inline(never)]
pub fn get(address: [u8; 4], port: u16, host: &str, path: &str, out: &mut [u8], timeouts: &Timeouts) -> Result<Option<usize>, crate::output::Message> {
    let mut network = Network { guest_socket: None };
    wisp_core::provider::imds::get(&mut network, address, port, host, path, out, timeouts)
        .map_err(|e| msg!("http://{}{}: {}", Plain(host), Plain(path), Described(&e, errno_words)))
}
