//! User-data, decoded whole by cloud-init's rules before any of it is used: gunzipped,
//! its MIME tree walked, base64 parts decoded, gzip'd parts inflated, and `#include`s
//! replaced by the documents they name. A document that does not decode, or an include
//! that cannot be fetched, is an error: nothing of it is run or written. A build without
//! the `userdata` feature reads one plain document only (`plain.rs`).

// One decoder or the other: the whole of cloud-init's rules, or a single plain document.
#[cfg_attr(not(feature = "userdata"), path = "userdata/plain.rs")]
mod decoder;

pub use decoder::decode;
#[cfg(feature = "userdata")]
pub use decoder::DEFLATE_RATIO_LIMIT;

use wisp_core::mime;
use wisp_core::retry::Timeouts;
use wisp_core::text::Decimal;
use wisp_core::userdata::{Kind, ScriptName};
use wisp_os_linux::fs::{Dir, ReadError};

use wisp_core::state_files::USER_DATA;
use crate::context::Context;
use crate::output::Message;

/// The size of wisp's user-data buffers; `WISP_USERDATA_LIMIT` may set a lower bound.
pub const USER_DATA_LIMIT: usize = wisp_core::config::USERDATA_LIMIT_MAX as usize;

/// One leaf of the document: what it is, and its decoded bytes.
pub struct Part {
    pub kind: Kind,
    /// The MIME type it came with (or `text/plain`), for the log.
    pub media_type: heapless::String<64>,
    /// Its `filename` parameter, when that is a safe script name.
    pub filename: Option<ScriptName>,
    pub bytes: &'static [u8],
    /// The part is the whole saved `user-data` file (no MIME, no include).
    pub whole: bool,
}

pub struct UserData {
    pub parts: heapless::Vec<Part, { mime::PARTS_LIMIT }>,
}

impl UserData {
    pub fn of_kind(&self, kind: Kind) -> impl Iterator<Item = (usize, &Part)> {
        self.parts.iter().enumerate().filter(move |(_, part)| part.kind == kind)
    }
}

/// How `#include` URLs are resolved.
#[derive(Clone, Copy)]
pub enum Includes<'t> {
    /// Fetched (`#include-once` only when not fetched before) and kept for later phases.
    Fetch(&'t Timeouts),
    /// Read back from what an earlier phase fetched.
    Kept,
    /// Left as parts of their own, not followed (`wisp userdata show`).
    Listed,
}

/// The saved user-data, decoded; `None` when there is none (or it is empty).
pub fn load(ctx: &Context<'_>, var: &Dir, includes: Includes<'_>) -> Result<Option<UserData>, Message> {
    let size = match var.metadata(USER_DATA) {
        Ok(Some(found)) => found.size,
        Ok(None) => return Ok(None),
        Err(e) => return Err(crate::output::os_error("cannot read user-data", e)),
    };
    load_with(ctx, includes, size, |saved| match var.read(USER_DATA, saved) {
        Ok(len) => Ok(len),
        Err(ReadError::TooLarge { limit }) => Err(msg!("saved user-data is larger than {limit} bytes", limit = Decimal(limit as u64))),
        Err(ReadError::Io(e)) => Err(crate::output::os_error("cannot read user-data", e)),
    })
}

/// User-data that `read` puts in a buffer of `size` bytes (at most the largest user-data
/// wisp reads), decoded; `None` when it reads none or nothing.
pub fn load_with(
    ctx: &Context<'_>,
    includes: Includes<'_>,
    size: u64,
    read: impl FnOnce(&mut [u8]) -> Result<Option<usize>, Message>,
) -> Result<Option<UserData>, Message> {
    let size = size.min(USER_DATA_LIMIT as u64) as usize;
    let saved = crate::memory::reserve(size, "user-data")?;
    match read(saved)? {
        None | Some(0) => Ok(None),
        Some(len) => decode(ctx, &saved[..len], includes).map(Some),
    }
}

/// `$TINY_CLOUD_VAR/name`, as an absolute path inside the instance.
pub fn var_child(ctx: &Context<'_>, name: &[u8]) -> Result<wisp_os_linux::nul_terminated::NulTerminated, Message> {
    wisp_os_linux::nul_terminated::NulTerminated::from_parts(&[ctx.config.var_dir.as_bytes(), b"/", name]).map_err(crate::output::line)
}

/// A part of a kind that needs a feature this build lacks is refused by name: applying
/// the rest of the document without it would drop part of what the owner asked for.
fn check_built(kind: Kind, number: usize) -> Result<(), Message> {
    match kind {
        Kind::CloudConfig if !cfg!(feature = "cloud-config") => {
            let what = msg!("user-data part {number} is cloud-config", number = Decimal(number as u64));
            Err(crate::features::missing(what.text(), "cloud-config"))
        }
        _ => Ok(()),
    }
}
