//! The metadata service of the instance's cloud: core's `provider::imds` over Linux's
//! network, for the clouds this wisp was built with.

use core::fmt;

use wisp_core::config::Cloud;
use wisp_core::provider::imds;
use wisp_core::provider::{self, metadata, Item};
#[cfg(feature = "incus")]
use wisp_os_linux::nul_terminated::NulTerminated;
use wisp_core::retry::Timeouts;

pub use wisp_core::provider::metadata::USERDATA_RESPONSE;
use wisp_core::provider::metadata::METADATA_SIZE;

use crate::host::{errno_words, Network};
use wisp_os_linux::take_once::TakeOnce;
use crate::output::Message;

/// The process's metadata store: its buffers live as long as the process.
pub type Metadata = metadata::Metadata<'static>;

/// A metadata failure, said with the system's words for errnos.
#[derive(Clone, Copy, Debug)]
pub struct ImdsError(pub imds::ImdsError);

impl fmt::Display for ImdsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.describe(f, errno_words)
    }
}

static METADATA: TakeOnce<Option<Metadata>> = TakeOnce::new(None);

/// The process's metadata store, mapped when first needed; an error if it was taken before.
pub fn take_metadata() -> Result<&'static mut Metadata, Message> {
    let slot = METADATA.take().ok_or_else(|| msg!("metadata store already in use"))?;
    Ok(slot.insert(Metadata::new(crate::memory::reserve(METADATA_SIZE, "metadata")?)))
}

/// A conversation with the metadata service (core's), and where this instance's guest
/// API socket is.
pub struct Imds<'c> {
    session: imds::Imds<'c>,
    /// The guest API's socket, for the clouds served over one (Incus).
    #[cfg(feature = "incus")]
    pub socket: Option<NulTerminated>,
}

impl<'c> core::ops::Deref for Imds<'c> {
    type Target = imds::Imds<'c>;
    fn deref(&self) -> &Self::Target {
        &self.session
    }
}

impl<'c> Imds<'c> {
    pub fn new(cloud: Cloud, timeouts: &'c Timeouts, token_ttl: u32) -> Self {
        Imds {
            session: imds::Imds::new(cloud, provider::service::<{ crate::features::FEATURES.bits() }>(cloud), timeouts, token_ttl),
            #[cfg(feature = "incus")]
            socket: None,
        }
    }

    /// The session, and the network with this instance's guest API socket.
    fn parts(&mut self) -> (&mut imds::Imds<'c>, Network<'_>) {
        #[cfg(feature = "incus")]
        let guest_socket = self.socket.as_ref().map(NulTerminated::as_cstr);
        #[cfg(not(feature = "incus"))]
        let guest_socket = None;
        (&mut self.session, Network { guest_socket })
    }

    /// Fetches the items not fetched yet, all at once.
    pub fn fetch(&mut self, metadata: &mut Metadata, items: &[Item]) -> Result<(), ImdsError> {
        let (session, mut network) = self.parts();
        session.fetch(&mut network, metadata, items).map_err(ImdsError)
    }

    /// GETs `path` into `buf`: the body, or `None` for 404.
    pub fn get_path<'b>(&mut self, path: &str, buf: &'b mut [u8]) -> Result<Option<&'b [u8]>, ImdsError> {
        let (session, mut network) = self.parts();
        session.get_path(&mut network, path, buf).map_err(ImdsError)
    }
}
