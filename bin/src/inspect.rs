//! `wisp userdata show [FILE]`: the user-data read (includes listed, not fetched) and
//! core's `userdata_show` document on standard output, its warnings on standard error.

use wisp_core::out::Chunked;
use wisp_core::state_files::USER_DATA;
use wisp_core::text::Decimal;
use wisp_os_linux::fs::{self, ReadError};
use wisp_os_linux::nul_terminated::NulTerminated;

use crate::context::Context;
use crate::output::{self, Message, Shown};
use crate::userdata::{self, Includes};
use crate::EXIT_FAILED;

#[inline(never)]
pub fn show(ctx: &Context<'_>, file: Option<&[u8]>) -> Result<(), i32> {
    show_document(ctx, file).map_err(|e| output::failed(e, EXIT_FAILED))
}

fn show_document(ctx: &Context<'_>, file: Option<&[u8]>) -> Result<(), Message> {
    let decoded = userdata::load_with(ctx, Includes::Listed, u64::MAX, |buf| read(ctx, file, buf).map(Some))?;
    let config = match &decoded {
        Some(decoded) => crate::cloud_config::parse(decoded)?,
        None => Default::default(),
    };
    // A document's JSON can be larger than any buffer.
    let mut buf = [0; 4096];
    let mut out = Chunked::new(&mut buf, output::print_raw);
    let parts = decoded.iter().flat_map(|d| d.parts.iter()).map(|part| (part.kind, part.media_type, part.bytes.len()));
    let _ = wisp_core::userdata_show::write(&mut out, parts, &config);
    out.flush();
    wisp_core::userdata_show::warn(&config, &|args| output::error(format_args!("warning: {args}")));
    Ok(())
}

/// FILE as given, else `$TINY_CLOUD_VAR/user-data` under the root.
fn read(ctx: &Context<'_>, file: Option<&[u8]>, buf: &mut [u8]) -> Result<usize, Message> {
    let Some(file) = file else {
        let path = userdata::var_child(ctx, USER_DATA)?;
        return ctx.read(path.as_bytes(), buf)?.map(<[u8]>::len).ok_or_else(|| msg!("no user-data saved in {}", Shown(ctx.config.var_dir.as_bytes())));
    };
    let path = NulTerminated::from_parts(&[file]).map_err(|e| msg!("{}: {e}", Shown(file)))?;
    match fs::read_file(path.as_cstr(), buf) {
        Ok(Some(len)) => Ok(len),
        Ok(None) => Err(msg!("{}: no such file", Shown(file))),
        Err(ReadError::TooLarge { limit }) => Err(msg!("{}: larger than {limit} bytes", Shown(file), limit = Decimal(limit as u64))),
        Err(ReadError::Io(e)) => Err(crate::output::path_error(file, e)),
    }
}
