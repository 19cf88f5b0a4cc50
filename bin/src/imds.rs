//! The metadata service of the instance's cloud: core's `provider::imds` over Linux's
//! network, for the clouds this wisp was built with.

use core::fmt;

use wisp_core::config::Cloud;
use wisp_core::provider::imds;
use wisp_core::provider::{self, metadata};
use wisp_core::retry::Timeouts;

pub use wisp_core::provider::metadata::USERDATA_RESPONSE;
use wisp_core::provider::metadata::METADATA_SIZE;

use wisp_os_linux::take_once::TakeOnce;
use crate::output::Message;

/// The process's metadata store: its buffers live as long as the process.
pub type Metadata = metadata::Metadata<'static>;

/// A metadata failure, said with the system's words for errnos.
#[derive(Clone, Copy, Debug)]
pub struct ImdsError(pub imds::ImdsError);

impl fmt::Display for ImdsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        wisp_core::host::explain::Explain::explain(&self.0, f, wisp_core::host::explain::words::<Message>)
    }
}

static METADATA: TakeOnce<Option<Metadata>> = TakeOnce::new(None);

/// The process's metadata store, mapped when first needed; an error if it was taken before.
pub fn take_metadata() -> Result<&'static mut Metadata, Message> {
    let slot = METADATA.take().ok_or_else(|| msg!("metadata store already in use"))?;
    Ok(slot.insert(Metadata::new(crate::memory::reserve(METADATA_SIZE, "metadata")?)))
}

/// A conversation with the metadata service of `cloud` (core's), as this wisp was built.
pub fn session(cloud: Cloud, timeouts: &Timeouts, token_ttl: u32) -> imds::Imds<'_> {
    imds::Imds::new(cloud, provider::service::<{ crate::features::FEATURES.bits() }>(cloud), timeouts, token_ttl)
}
