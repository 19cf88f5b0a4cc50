//! User-data, read from TINY_CLOUD_VAR and decoded by core's `userdata_decode` (its plain
//! decoder in a build without `userdata`).

use wisp_core::state_files::USER_DATA;
use wisp_core::text::Decimal;
use wisp_core::userdata_decode::{self, Decoding};
use wisp_os_linux::fs::{Dir, ReadError};

pub use wisp_core::userdata_decode::Includes;

use crate::context::Context;
use crate::host::system::System;
use crate::output::Message;

/// The size of wisp's user-data buffers; `WISP_USERDATA_LIMIT` may set a lower bound.
pub const USER_DATA_LIMIT: usize = wisp_core::config::USERDATA_LIMIT_MAX as usize;

pub type UserData = wisp_core::userdata::UserData<'static>;

/// The saved user-data, decoded; `None` when there is none (or it is empty).
pub fn load(ctx: &Context<'_>, var: &Dir, includes: Includes<'_>) -> Result<Option<UserData>, Message> {
    let size = var.metadata(USER_DATA).map_err(|e| crate::output::path_error(b"cannot read user-data", e))?;
    let Some(size) = size.map(|found| found.size) else { return Ok(None) };
    load_with(ctx, includes, size, |saved| match var.read(USER_DATA, saved) {
        Ok(len) => Ok(len),
        Err(ReadError::TooLarge { limit }) => Err(msg!("saved user-data is larger than {limit} bytes", limit = Decimal(limit as u64))),
        Err(ReadError::Io(e)) => Err(crate::output::path_error(b"cannot read user-data", e)),
    })
}

/// User-data that `read` puts in a buffer of `size` bytes (at most the largest user-data
/// wisp reads), decoded; `None` when it reads none or nothing.
pub fn load_with(ctx: &Context<'_>, includes: Includes<'_>, size: u64, read: impl FnOnce(&mut [u8]) -> Result<Option<usize>, Message>) -> Result<Option<UserData>, Message> {
    let saved = crate::memory::reserve(size.min(USER_DATA_LIMIT as u64) as usize, "user-data")?;
    let Some(saved) = read(saved)?.filter(|&len| len > 0).and_then(|len| saved.get(..len)) else { return Ok(None) };
    decode(ctx, saved, includes).map(Some)
}

fn decode(ctx: &Context<'_>, saved: &'static [u8], includes: Includes<'_>) -> Result<UserData, Message> {
    let decoding = Decoding { var_dir: ctx.config.var_dir.as_bytes(), limit: ctx.config.userdata_limit as usize, includes, cloud_config: cfg!(feature = "cloud-config") };
    userdata_decode::decode_any::<{ cfg!(feature = "userdata") }, _>(&mut System::new(ctx), saved, decoding)
}
