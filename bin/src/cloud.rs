//! Which cloud this run serves: `--cloud`, else `CLOUD`; `auto` is resolved once (core's
//! `cloud_choice`) and remembered in `$TINY_CLOUD_VAR/.autodetect`.

use wisp_core::cloud_choice;
use wisp_core::config::Cloud;
use wisp_core::detect::Dmi;
use wisp_core::state_files::AUTODETECT;
use wisp_core::text::Plain;

use crate::context::Context;
use crate::features;
use crate::output::{Message, Os, Shown};

/// The cloud, remembering a detected one for the next runs.
#[inline(never)]
pub fn resolve(ctx: &Context<'_>) -> Result<Cloud, Message> {
    let (cloud, remembered) = resolve_read_only(ctx)?;
    if remembered {
        return Ok(cloud);
    }
    let var = ctx.var_dir()?;
    // A lost or cut copy is detected again.
    var.write_volatile(AUTODETECT, cloud_choice::remembrance(cloud).as_bytes(), 0o644)
        .map_err(|e| msg!("cannot save {}: {}", Shown(AUTODETECT), Os(e)))?;
    Ok(cloud)
}

/// The cloud as `resolve` finds it, writing nothing (for the commands that only read),
/// and whether it was configured or remembered rather than detected now.
/// A cloud this build lacks is refused by name, by every command alike.
#[inline(never)]
pub fn resolve_read_only(ctx: &Context<'_>) -> Result<(Cloud, bool), Message> {
    let (cloud, remembered) = configured_or_remembered(ctx)?;
    if let Some(feature) = features::cloud_feature(cloud).filter(|_| !features::has_cloud(cloud)) {
        return Err(msg!("CLOUD={}: wisp was built without {feature}", Plain(cloud.name()), feature = Plain(feature)));
    }
    Ok((cloud, remembered))
}

fn configured_or_remembered(ctx: &Context<'_>) -> Result<(Cloud, bool), Message> {
    let configured = ctx.configured_cloud();
    if configured != Cloud::Auto {
        return Ok((configured, true));
    }
    let mut cached = [0u8; 64];
    if let Some(var) = ctx.existing_var_dir()? {
        if let Ok(Some(len)) = var.read(AUTODETECT, &mut cached) {
            if let Some(cloud) = cloud_choice::remembered(&cached[..len]) {
                return Ok((cloud, true));
            }
        }
    }
    #[cfg(any(feature = "nocloud", feature = "configdrive"))]
    let local = || crate::seed::detect(ctx);
    #[cfg(not(any(feature = "nocloud", feature = "configdrive")))]
    let local = || None;
    #[cfg(feature = "incus")]
    let local = || ctx.guest_socket().map(|_| Cloud::Incus).or_else(local);
    let mut buffers = [[0u8; 128]; 4];
    let mut values: [&[u8]; 4] = [b""; 4];
    for ((path, buf), value) in Dmi::PATHS.iter().zip(buffers.iter_mut()).zip(values.iter_mut()) {
        // Missing or unreadable DMI files (product_uuid is root-only) count as empty.
        if let Ok(Some(text)) = ctx.read(path.as_bytes(), buf) {
            *value = text;
        }
    }
    let dmi = Dmi { sys_vendor: values[0], product_name: values[1], product_uuid: values[2], chassis_asset_tag: values[3] };
    match cloud_choice::detect(&dmi, local) {
        Some(cloud) => Ok((cloud, false)),
        None => Err(msg!("CLOUD=auto found no known cloud in /sys/class/dmi/id: set CLOUD in {}", ctx.config_file_for_messages())),
    }
}
