//! `wisp clean`: core's `clean::run` under `--root`.

use wisp_core::clean::{self, Options};
use wisp_core::host::explain::Worded;

use crate::context::Context;
use crate::host::{errno_words, OpenDir};
use crate::output;
use crate::EXIT_FAILED;

#[inline(never)]
pub fn command(ctx: &Context<'_>, options: Options) -> i32 {
    let var_path = ctx.config.var_dir.as_bytes();
    let var = ctx.open_dir(var_path).ok();
    match clean::run(&mut OpenDir::root(ctx), var.as_ref().map(|dir| OpenDir { dir }).as_mut(), var_path, ctx.config.logs_dir.as_bytes(), options) {
        Ok(()) => 0,
        Err(e) => {
            output::error(format_args!("clean: {}", Worded(&e, errno_words)));
            EXIT_FAILED
        }
    }
}
