//! The commands that are not phases: `imds`, `status`, `mark`. What they print and how
//! they exit is core's (`imds_keys`, `status`, `completion`).

use wisp_core::host::explain::Worded;
use wisp_core::instance::INSTANCE_ID_LIMIT;
use wisp_core::{imds_keys, status};

use crate::cloud_init_status;
use crate::context::Context;
use crate::host::{errno_words, OpenDir};
use crate::imds::{take_metadata, Imds, USERDATA_RESPONSE};
use crate::output::{self, failed};
use crate::state;
use crate::{EXIT_FAILED, EXIT_USAGE};

/// `wisp imds KEY...`: each key's value on standard output, in order. Only reads: a
/// detected cloud is not remembered, a seed's extras are not kept.
#[inline(never)]
pub fn imds(ctx: &mut Context<'_>, keys: &[&[u8]]) -> Result<(), i32> {
    let (cloud, _) = crate::cloud::resolve_read_only(ctx).map_err(|e| failed(e, EXIT_USAGE))?;
    let timeouts = ctx.timeouts;
    let mut imds = Imds::new(cloud, &timeouts, ctx.config.imds_token_ttl);
    #[cfg(feature = "incus")]
    {
        imds.socket = ctx.guest_socket();
    }
    let metadata = take_metadata().map_err(|e| failed(e, EXIT_FAILED))?;
    #[cfg(any(feature = "nocloud", feature = "configdrive"))]
    if matches!(cloud, wisp_core::config::Cloud::Nocloud | wisp_core::config::Cloud::Configdrive) {
        let loaded = crate::seed::load(ctx, cloud, metadata, None);
        loaded.map_err(|e| failed(format_args!("{}: {e}", wisp_core::text::Plain(cloud.name())), EXIT_FAILED))?;
    }
    #[cfg(feature = "azure")]
    if cloud == wisp_core::config::Cloud::Azure {
        crate::seed::load_azure_custom_data(ctx, metadata).map_err(|e| failed(format_args!("azure: {e}"), EXIT_FAILED))?;
    }
    imds.fetch(metadata, &imds_keys::items(keys)).map_err(|e| failed(e, EXIT_FAILED))?;
    let mut raw = [0u8; USERDATA_RESPONSE];
    let printed = imds_keys::print(keys, metadata, &mut raw, &mut |path, buf| imds.get_path(path, buf), &mut output::print_raw);
    printed.map_err(|e| failed(e, e.exit_code()))
}

/// `wisp status [--wait [--timeout S]]`: writes nothing; `--wait` first waits for this
/// boot's `result.json`, as `cloud-init status --wait` does.
#[inline(never)]
pub fn status(ctx: &Context<'_>, wait: bool, timeout_s: Option<u32>) -> Result<i32, i32> {
    let waited = match wait {
        true => Some(cloud_init_status::wait_for_result(ctx, timeout_s).map_err(|e| failed(e, EXIT_FAILED))?),
        false => None,
    };
    let var = ctx.existing_var_dir().map_err(|e| failed(e, EXIT_FAILED))?;
    let mut buf = [0u8; INSTANCE_ID_LIMIT];
    let status = status::read(var.as_ref().map(|dir| OpenDir { dir }).as_mut(), &mut buf).map_err(|e| failed(Worded(&e, errno_words), EXIT_FAILED))?;
    output::print(format_args!("{status}"));
    Ok(status.exit_code(waited))
}

/// `wisp mark complete|incomplete`.
#[inline(never)]
pub fn mark(ctx: &Context<'_>, complete: bool) -> Result<(), i32> {
    ctx.var_dir().and_then(|var| state::set_complete(ctx, &var, complete)).map_err(|e| failed(e, EXIT_FAILED))
}
