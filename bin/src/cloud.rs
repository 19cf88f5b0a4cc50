//! Which cloud this run serves (core's `cloud_choice`): `auto` is resolved once and
//! remembered in `$TINY_CLOUD_VAR/.autodetect`.

use wisp_core::{cloud_choice, config_file};
use wisp_core::config::Cloud;
use wisp_core::state_files::AUTODETECT;
use wisp_os_linux::fs::Dir;

#[cfg(any(feature = "nocloud", feature = "configdrive"))]
use wisp_core::seed::sources::Sources;

use crate::context::Context;
#[cfg(any(feature = "nocloud", feature = "configdrive"))]
use crate::host::seed_sources::Seeds;
use crate::host::{errno, OpenDir};
use crate::output::{Message, Os, Shown};

/// The cloud, remembering a detected one for the next runs in `var`, TINY_CLOUD_VAR,
/// handed back for the run.
#[inline(never)]
pub fn resolve(ctx: &Context<'_>, var: Dir) -> Result<(Cloud, Dir), Message> {
    let (cloud, remembered) = resolve_read_only(ctx, Some(&var))?;
    if !remembered {
        // A lost or cut copy is detected again.
        cloud_choice::remember(&mut OpenDir { dir: &var }, cloud).map_err(|e| msg!("cannot save {}: {}", Shown(AUTODETECT), Os(errno(e))))?;
    }
    Ok((cloud, var))
}

/// The cloud as `resolve` finds it, writing nothing (for the commands that only read),
/// and whether it was configured or remembered rather than detected now: `.autodetect`
/// is read from `var`, else from TINY_CLOUD_VAR if it exists.
#[inline(never)]
pub fn resolve_read_only(ctx: &Context<'_>, var: Option<&Dir>) -> Result<(Cloud, bool), Message> {
    let read_remembered = |buf: &mut [u8]| {
        let existing = match var {
            Some(_) => None,
            None => ctx.existing_var_dir()?,
        };
        Ok(var.or(existing.as_ref()).and_then(|var| var.read(AUTODETECT, buf).ok().flatten()))
    };
    #[cfg(any(feature = "nocloud", feature = "configdrive"))]
    let local = || wisp_core::seed::local::detect(&mut Sources(Seeds { ctx, keep: None }), &mut OpenDir::root(ctx));
    #[cfg(not(any(feature = "nocloud", feature = "configdrive")))]
    let local = || None;
    let local = || ctx.guest_socket().map(|_| Cloud::Incus).or_else(local);
    let files = &mut OpenDir::root(ctx);
    cloud_choice::choose::<{ crate::features::FEATURES.bits() }, _, _>(files, ctx.config.cloud, read_remembered, local, Message::format, config_file::named(ctx.config_file.as_bytes()))
}
