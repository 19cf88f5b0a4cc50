//! What decoding user-data asks of Linux besides files: room kept for the run, and the
//! GET of an `#include` URL.

use wisp_core::http::Url;
use wisp_core::retry::Timeouts;

use super::system::System;
use crate::output::Message;

impl wisp_core::host::keep::Keep for System<'_> {
    fn keep(&mut self, len: usize, what: &str) -> Result<&'static mut [u8], Message> {
        crate::memory::reserve(len, what)
    }
}

impl wisp_core::host::fetch::Fetch for System<'_> {
    fn get(&mut self, url: &Url<'_>, out: &mut [u8], timeouts: &Timeouts) -> Result<Option<usize>, Message> {
        crate::fetch::get(url.address, url.port, url.host, url.path, out, timeouts)
    }
}
