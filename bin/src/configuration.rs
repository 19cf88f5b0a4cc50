//! The configuration's loading: `--config FILE`'s bytes read as given, handed to core's
//! `config_file`, which says which file counts and what it means.

use wisp_core::config::Config;
use wisp_core::config_file::{self, Given, Source};
use wisp_os_linux::fs;
use wisp_os_linux::nul_terminated::NulTerminated;

use crate::context::Context;
use crate::host::read_error;
use crate::host::system::System;
use crate::output::Message;

#[inline(never)]
pub fn load(ctx: &mut Context<'_>, given: Option<&[u8]>) -> Result<(), Message> {
    let mut text = [0u8; config_file::FILE_LIMIT];
    let given = match given {
        Some(path) => {
            ctx.config_file = NulTerminated::from_parts(&[path]).map_err(|e| msg!("--config: {e}"))?;
            let read = fs::read_file(ctx.config_file.as_cstr(), &mut text).map_err(read_error);
            Some(Given { path, read })
        }
        None => None,
    };
    let mut config = Config::default();
    if let Source::UnderRoot(file) = config_file::load(&mut System::new(ctx), given, &mut text, &mut config)? {
        ctx.config_file = ctx.path(file.as_bytes())?;
    }
    ctx.timeouts = config.timeouts();
    ctx.config = config;
    Ok(())
}
