//! The commands that are not phases: `imds`, `status`, `mark`. What they print and how
//! they exit is core's (`imds_keys`, `status`, `completion`).

use core::fmt::Display;

use wisp_core::host::explain::Worded;
use wisp_core::instance::INSTANCE_ID_LIMIT;
use wisp_core::{imds_keys, status};

use crate::cloud_init_status;
use crate::context::Context;
use crate::host::{errno_words, OpenDir};
use crate::imds::{take_metadata, Imds, USERDATA_RESPONSE};
use crate::output;
use crate::markers;
use crate::{EXIT_FAILED, EXIT_USAGE};

/// `wisp imds KEY...`: each key's value on standard output, in order. Only reads: a
/// detected cloud is not remembered, a seed's extras are not kept.
#[inline(never)]
pub fn imds(ctx: &mut Context<'_>, keys: &[&[u8]]) -> i32 {
    let cloud = match crate::cloud::resolve_read_only(ctx) {
        Ok((cloud, _)) => cloud,
        Err(e) => return failed(e, EXIT_USAGE),
    };
    let timeouts = ctx.timeouts;
    let mut imds = Imds::new(cloud, &timeouts, ctx.config.imds_token_ttl);
    #[cfg(feature = "incus")]
    {
        imds.socket = ctx.guest_socket();
    }
    let metadata = match take_metadata() {
        Ok(metadata) => metadata,
        Err(e) => return failed(e, EXIT_FAILED),
    };
    #[cfg(any(feature = "nocloud", feature = "configdrive"))]
    if matches!(cloud, wisp_core::config::Cloud::Nocloud | wisp_core::config::Cloud::Configdrive) {
        if let Err(e) = crate::seed::load(ctx, cloud, metadata, None) {
            return failed(format_args!("{}: {e}", wisp_core::text::Plain(cloud.name())), EXIT_FAILED);
        }
    }
    #[cfg(feature = "azure")]
    if cloud == wisp_core::config::Cloud::Azure {
        if let Err(e) = crate::seed::load_azure_custom_data(ctx, metadata) {
            return failed(format_args!("azure: {e}"), EXIT_FAILED);
        }
    }
    if let Err(e) = imds.fetch(metadata, &imds_keys::items(keys)) {
        return failed(e, EXIT_FAILED);
    }
    let mut raw = [0u8; USERDATA_RESPONSE];
    match imds_keys::print(keys, metadata, &mut raw, &mut |path, buf| imds.get_path(path, buf), &mut output::print_raw) {
        Ok(()) => 0,
        Err(e) => failed(e, e.exit_code()),
    }
}

/// `wisp status [--wait [--timeout S]]`: writes nothing; `--wait` first waits for this
/// boot's `result.json`, as `cloud-init status --wait` does.
#[inline(never)]
pub fn status(ctx: &Context<'_>, wait: bool, timeout_s: Option<u32>) -> i32 {
    let mut waited = None;
    if wait {
        match cloud_init_status::wait_for_result(ctx, timeout_s) {
            Ok(clean) => waited = Some(clean),
            Err(e) => return failed(e, EXIT_FAILED),
        }
    }
    let var = match ctx.existing_var_dir() {
        Ok(var) => var,
        Err(e) => return failed(e, EXIT_FAILED),
    };
    let mut buf = [0u8; INSTANCE_ID_LIMIT];
    match status::read(var.as_ref().map(|dir| OpenDir { dir }).as_mut(), &mut buf) {
        Ok(status) => {
            output::print(format_args!("{status}"));
            status.exit_code(waited)
        }
        Err(e) => failed(Worded(&e, errno_words), EXIT_FAILED),
    }
}

/// `wisp mark complete|incomplete`.
#[inline(never)]
pub fn mark(ctx: &Context<'_>, complete: bool) -> i32 {
    match ctx.var_dir().and_then(|var| markers::set_complete(ctx, &var, complete)) {
        Ok(()) => 0,
        Err(e) => failed(e, EXIT_FAILED),
    }
}

fn failed(e: impl Display, exit_code: i32) -> i32 {
    output::error(format_args!("{e}"));
    exit_code
}
