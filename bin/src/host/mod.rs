//! core's host traits over os-linux, one file a concern as in core's `host/`. Each struct
//! is the resource its calls go to, so it lives exactly as long as that resource is open.
//! Each method is the system calls it names and nothing else; every decision is core's.

use wisp_core::host::HostError;
use wisp_os_linux::nul_terminated::NulTerminated;
use wisp_os_linux::Errno;

use crate::output::{Message, Os};

#[cfg(feature = "grow")]
pub mod block;
pub mod files;
pub mod http;
#[cfg(feature = "network")]
pub mod net;
pub mod scripts;
pub mod system;
#[cfg(any(feature = "nocloud", feature = "configdrive", feature = "azure"))]
pub mod seed_sources;
// config: cloud-config's write_files and mounts
#[cfg(feature = "cloud-config")]
mod chosen_files;

pub use files::OpenDir;
pub use http::Network;

/// core's lines are wisp's messages, an errno said by its name.
impl wisp_core::host::messages::Line for Message {
    fn format(args: core::fmt::Arguments<'_>) -> Message {
        Message::format(args)
    }

    fn reason(error: HostError) -> impl core::fmt::Display {
        Os(errno(error))
    }
}

pub fn host_error(e: Errno) -> HostError {
    HostError { errno: e.raw_os_error() }
}

/// A failed read as core's error: a file past the buffer is EFBIG.
pub fn read_error(e: wisp_os_linux::fs::ReadError) -> HostError {
    match e {
        wisp_os_linux::fs::ReadError::Io(e) => host_error(e),
        wisp_os_linux::fs::ReadError::TooLarge { .. } => host_error(Errno::FBIG),
    }
}

/// `parts` joined for a system call: a path past the limit is refused as the kernel would.
pub fn c_path(parts: &[&[u8]]) -> Result<NulTerminated, HostError> {
    NulTerminated::from_parts(parts).map_err(|_| host_error(Errno::NAMETOOLONG))
}

pub fn errno(e: HostError) -> Errno {
    Errno::from_raw_os_error(e.errno)
}
