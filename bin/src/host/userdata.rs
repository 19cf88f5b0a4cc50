//! What saving and decoding user-data ask of Linux besides files: TINY_CLOUD_VAR's saved
//! copies, room kept for the run, and the GET of an `#include` URL.

use wisp_core::host::HostError;
use wisp_core::http::Url;
use wisp_core::retry::Timeouts;

use super::system::System;
use super::{host_error, OpenDir};
use crate::output::Message;

impl wisp_core::host::keep::Keep for System<'_> {
    fn keep(&mut self, len: usize, what: &str) -> Result<&'static mut [u8], Message> {
        crate::memory::reserve(len, what)
    }
}

impl wisp_core::host::fetch::Fetch for System<'_> {
    fn get(&mut self, url: &Url<'_>, out: &mut [u8], timeouts: &Timeouts) -> Result<Option<usize>, Message> {
        super::http::get(url.address, url.port, url.host, url.path, out, timeouts)
    }
}

impl wisp_core::host::saved_copies::SavedCopies for OpenDir<'_> {
    fn file_mode(&mut self, name: &[u8]) -> Option<u32> {
        self.dir.metadata(name).ok().flatten().filter(|found| found.is_file()).map(|found| found.permissions())
    }

    fn has_contents(&mut self, name: &[u8], contents: &[u8]) -> bool {
        self.dir.has_contents(name, contents).unwrap_or(false)
    }

    fn write_durably(&mut self, name: &[u8], contents: &[u8], mode: u32) -> Result<(), HostError> {
        self.dir.write_atomic(name, contents, mode, None).map_err(host_error)
    }
}
