//! The commands that are not phases: `imds`, `status`, `mark`.

use wisp_core::provider::Item;
use wisp_core::text::Plain;

use crate::cloud_init_status;
use crate::context::Context;
use crate::imds::{take_metadata, Imds, USERDATA_RESPONSE};
use crate::output::{self, Shown};
use crate::state;
use crate::instance_id;
use crate::{EXIT_FAILED, EXIT_USAGE};

/// `wisp imds KEY...`: each value on standard output, in order. Known keys print the
/// value (keys one per line, user-data byte for byte); any other key is a path of the
/// provider, printed as served.
#[inline(never)]
pub fn imds(ctx: &mut Context<'_>, keys: &[&[u8]]) -> i32 {
    // Only reads: a detected cloud is not remembered, a seed's extras are not kept.
    let cloud = match crate::cloud::resolve_read_only(ctx) {
        Ok((cloud, _)) => cloud,
        Err(e) => {
            output::error(format_args!("{e}"));
            return EXIT_USAGE;
        }
    };
    let timeouts = ctx.timeouts;
    let mut imds = Imds::new(cloud, &timeouts, ctx.config.imds_token_ttl);
    #[cfg(feature = "incus")]
    {
        imds.socket = ctx.guest_socket();
    }
    let metadata = match take_metadata() {
        Ok(metadata) => metadata,
        Err(e) => {
            crate::output::error(format_args!("{e}"));
            return EXIT_FAILED;
        }
    };
    #[cfg(any(feature = "nocloud", feature = "configdrive"))]
    if matches!(cloud, wisp_core::config::Cloud::Nocloud | wisp_core::config::Cloud::Configdrive) {
        if let Err(e) = crate::seed::load(ctx, cloud, metadata, None) {
            output::error(format_args!("{}: {e}", cloud.name()));
            return EXIT_FAILED;
        }
    }
    #[cfg(feature = "azure")]
    if cloud == wisp_core::config::Cloud::Azure {
        if let Err(e) = crate::seed::load_azure_custom_data(ctx, metadata) {
            output::error(format_args!("azure: {e}"));
            return EXIT_FAILED;
        }
    }
    let items: heapless::Vec<Item, 5> = keys.iter().filter_map(|key| Item::from_key(key)).collect();
    if let Err(e) = imds.fetch(metadata, &items) {
        output::error(format_args!("{e}"));
        return EXIT_FAILED;
    }
    let mut raw = [0u8; USERDATA_RESPONSE];
    for key in keys {
        match Item::from_key(key) {
            Some(Item::UserData) => output::print_raw(metadata.get(Item::UserData).unwrap_or(b"")),
            Some(item) => print_line(metadata.get(item).unwrap_or(b"")),
            None if key.first() == Some(&b'@') => {
                output::error(format_args!("unknown key {}: known keys are @instance-id @hostname @local-hostname @ssh-keys @userdata", Shown(key)));
                return EXIT_USAGE;
            }
            None => {
                let Ok(path) = core::str::from_utf8(key) else {
                    output::error(format_args!("path {} is not UTF-8", Shown(key)));
                    return EXIT_USAGE;
                };
                let mut absolute = heapless::String::<512>::new();
                let prefix = if path.starts_with('/') { "" } else { "/" };
                if absolute.push_str(prefix).and_then(|()| absolute.push_str(path)).is_err() {
                    output::error(format_args!("path longer than 511 bytes"));
                    return EXIT_USAGE;
                }
                match imds.get_path(&absolute, &mut raw) {
                    Ok(Some(body)) => print_line(body),
                    Ok(None) => {
                        output::error(format_args!("{}: not found", Shown(key)));
                        return EXIT_FAILED;
                    }
                    Err(e) => {
                        output::error(format_args!("{e}"));
                        return EXIT_FAILED;
                    }
                }
            }
        }
    }
    0
}

fn print_line(value: &[u8]) {
    output::print_raw(value);
    if !value.is_empty() && !value.ends_with(b"\n") {
        output::print_raw(b"\n");
    }
}

/// `wisp status`: "complete" or "incomplete", then the saved instance-id. `--wait` first
/// waits for this boot's `result.json` (for at most `timeout_s`), as `cloud-init status
/// --wait` does, and exits by its errors. Writes nothing.
#[inline(never)]
pub fn status(ctx: &Context<'_>, wait: bool, timeout_s: Option<u32>) -> i32 {
    let mut failed = false;
    if wait {
        match cloud_init_status::wait_for_result(ctx, timeout_s) {
            Ok(clean) => failed = !clean,
            Err(e) => {
                output::error(format_args!("{e}"));
                return EXIT_FAILED;
            }
        }
    }
    let var = match ctx.existing_var_dir() {
        Ok(var) => var,
        Err(e) => {
            output::error(format_args!("{e}"));
            return EXIT_FAILED;
        }
    };
    let complete = match var.as_ref().map(state::is_complete).unwrap_or(Ok(false)) {
        Ok(complete) => complete,
        Err(e) => {
            output::error(format_args!("{e}"));
            return EXIT_FAILED;
        }
    };
    let mut buf = [0u8; instance_id::INSTANCE_ID_LIMIT];
    let word = if complete { "complete" } else { "incomplete" };
    match var.as_ref().and_then(|var| instance_id::saved(var, &mut buf)) {
        Some(id) => output::print(format_args!("{word} {}", Shown(id), word = Plain(word))),
        None => output::print(format_args!("{word}", word = Plain(word))),
    }
    if failed || !(wait || complete) { EXIT_FAILED } else { 0 }
}

/// `wisp mark complete|incomplete`.
#[inline(never)]
pub fn mark(ctx: &Context<'_>, complete: bool) -> i32 {
    match ctx.var_dir().and_then(|var| state::set_complete(ctx, &var, complete)) {
        Ok(()) => 0,
        Err(e) => {
            output::error(format_args!("{e}"));
            EXIT_FAILED
        }
    }
}
