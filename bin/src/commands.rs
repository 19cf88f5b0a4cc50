//! The commands that are not phases: `imds`, `status`, `mark`.

use wisp_core::provider::Item;

use crate::cloud_init_status;
use crate::context::Context;
use crate::imds::{take_metadata, Imds, USERDATA_RESPONSE};
use crate::output::{self, Line, Shown};
use crate::state;
use crate::{EXIT_FAILED, EXIT_USAGE};

/// `wisp imds KEY...`: each value on standard output, in order. Known keys print the
/// value (keys one per line, user-data byte for byte); any other key is a path of the
/// provider, printed as served.
pub fn imds(ctx: &mut Context<'_>, keys: &[&[u8]]) -> i32 {
    let cloud = match ctx.cloud() {
        Ok(cloud) => cloud,
        Err(e) => {
            output::error(format_args!("{e}"));
            return EXIT_USAGE;
        }
    };
    let timeouts = ctx.timeouts;
    let mut imds = Imds::new(cloud, &timeouts, ctx.config.imds_token_ttl);
    imds.socket = ctx.guest_socket();
    let Some(metadata) = take_metadata() else { return EXIT_FAILED };
    if matches!(cloud, wisp_core::config::Cloud::Nocloud | wisp_core::config::Cloud::Configdrive) {
        if let Err(e) = crate::seed::load(ctx, cloud, metadata) {
            output::error(format_args!("{}: {e}", cloud.name()));
            return EXIT_FAILED;
        }
    }
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
/// waits for this boot's `result.json`, as `cloud-init status --wait` does, and exits by
/// its errors.
pub fn status(ctx: &Context<'_>, wait: bool) -> i32 {
    let mut failed = false;
    if wait {
        match wait_for_result(ctx) {
            Ok(clean) => failed = !clean,
            Err(e) => {
                output::error(format_args!("{e}"));
                return EXIT_FAILED;
            }
        }
    }
    let var = match ctx.var_dir() {
        Ok(var) => var,
        Err(e) => {
            output::error(format_args!("{e}"));
            return EXIT_FAILED;
        }
    };
    let complete = match state::is_complete(&var) {
        Ok(complete) => complete,
        Err(e) => {
            output::error(format_args!("{e}"));
            return EXIT_FAILED;
        }
    };
    let mut buf = [0u8; state::INSTANCE_ID_LIMIT];
    let word = if complete { "complete" } else { "incomplete" };
    match state::saved_instance_id(&var, &mut buf) {
        Some(id) => output::print(format_args!("{word} {}", Shown(id))),
        None => output::print(format_args!("{word}")),
    }
    if failed || !(wait || complete) { EXIT_FAILED } else { 0 }
}

/// Polls for `result.json` every 250 ms, as cloud-init's command does; says whether its
/// list of errors (which the log has too) is empty. Out of line: inlined into `main`, it
/// costs 200 bytes more.
#[inline(never)]
fn wait_for_result(ctx: &Context<'_>) -> Result<bool, Line> {
    let mut buf = [0u8; cloud_init_status::DOCUMENT_LIMIT];
    loop {
        if let Some(document) = ctx.read(cloud_init_status::RESULT_PATH, &mut buf)? {
            let errors = wisp_core::cloud_init_status::result_has_errors(document);
            return errors.map(|any| !any).map_err(|e| msg!("{}: {e}", Shown(cloud_init_status::RESULT_PATH)));
        }
        wisp_os_linux::time::sleep_ms(250);
    }
}

/// `wisp mark complete|incomplete`.
pub fn mark(ctx: &Context<'_>, complete: bool) -> i32 {
    match ctx.var_dir().and_then(|var| state::set_complete(&var, complete)) {
        Ok(()) => 0,
        Err(e) => {
            output::error(format_args!("{e}"));
            EXIT_FAILED
        }
    }
}
