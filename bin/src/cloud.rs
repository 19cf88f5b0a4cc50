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
    let (cloud, remembered) = choose(ctx, Some(&var))?;
    if !remembered {
        // A lost or cut copy is detected again.
        cloud_choice::remember(&mut OpenDir { dir: &var }, cloud).map_err(|e| msg!("cannot save {}: {}", Shown(AUTODETECT), Os(errno(e))))?;
    }
    Ok((cloud, var))
}

/// The cloud as `resolve` finds it, writing nothing (for the commands that only read),
/// and whether it was configured or remembered rather than detected now.
pub fn resolve_read_only(ctx: &Context<'_>) -> Result<(Cloud, bool), Message> {
    let var = if ctx.config.cloud == Cloud::Auto { ctx.existing_var_dir()? } else { None };
    choose(ctx, var.as_ref())
}

/// The cloud as configured, else as `.autodetect` in `var` says, else as detected now.
fn choose(ctx: &Context<'_>, var: Option<&Dir>) -> Result<(Cloud, bool), Message> {
    let read_remembered = |buf: &mut [u8]| Ok(var.and_then(|var| var.read(AUTODETECT, buf).ok().flatten()));
    #[cfg(any(feature = "nocloud", feature = "configdrive"))]
    let local = || wisp_core::seed::local::detect(&mut Sources(Seeds { ctx, keep: None }), &mut OpenDir::root(ctx));
    #[cfg(not(any(feature = "nocloud", feature = "configdrive")))]
    let local = || None;
    let local = || ctx.guest_socket().map(|_| Cloud::Incus).or_else(local);
    let files = &mut OpenDir::root(ctx);
    cloud_choice::choose::<{ crate::features::FEATURES.bits() }, _, _>(files, ctx.config.cloud, read_remembered, local, Message::format, config_file::named(ctx.config_file.as_bytes()))
}
