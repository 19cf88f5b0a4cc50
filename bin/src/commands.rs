//! The commands that are not phases: `imds`, `status`, `mark`, `clean`, `grow`,
//! `userdata show`, `net-sync`. What they print and how they exit is core's (`imds_keys`,
//! `status`, `completion`, `clean`, `partition::expand`, `userdata_show`, `net::net_sync`).

use wisp_core::clean::Options;
#[cfg(feature = "network")]
use wisp_core::net::rtnl::Rtnl;
use wisp_core::cli::GrowTarget;
use wisp_core::host::explain::{words, Worded};
use wisp_core::instance::INSTANCE_ID_LIMIT;
use wisp_core::state_files::USER_DATA;
use wisp_core::text::ShownUnder;
use wisp_core::{imds_keys, status};
use wisp_os_linux::fs::{self, ReadError};
use wisp_os_linux::nul_terminated::NulTerminated;

use crate::context::Context;
use crate::host::system::System;
use crate::host::{Network, OpenDir};
use crate::imds::{take_metadata, ImdsError, USERDATA_RESPONSE};
use crate::markers;
use crate::output::{self, failed, Message, Shown};
use crate::userdata::{self, Includes};
use crate::{EXIT_FAILED, EXIT_USAGE};

/// `wisp imds KEY...`: each key's value on standard output, in order. Only reads: a
/// detected cloud is not remembered, a seed's extras are not kept.
#[inline(never)]
pub fn imds(ctx: &mut Context<'_>, keys: &[&[u8]]) -> Result<(), i32> {
    let (cloud, _) = crate::cloud::resolve_read_only(ctx, None).map_err(|e| failed(e, EXIT_USAGE))?;
    let timeouts = ctx.config.timeouts();
    let mut imds = crate::imds::session(cloud, &timeouts, ctx.config.imds_token_ttl);
    let socket = ctx.guest_socket();
    let mut network = Network { guest_socket: socket.as_ref().map(NulTerminated::as_cstr) };
    let metadata = take_metadata().map_err(|e| failed(e, EXIT_FAILED))?;
    crate::seed::load_local(ctx, cloud, metadata, None).map_err(|e| failed(e, EXIT_FAILED))?;
    imds.fetch(&mut network, metadata, &imds_keys::items(keys)).map_err(|e| failed(output::line(ImdsError(e)), EXIT_FAILED))?;
    // Mapped, not on the stack, whose probes would touch all of it for `@instance-id` too.
    let raw = crate::memory::reserve(USERDATA_RESPONSE, "a path's value").map_err(|e| failed(e, EXIT_FAILED))?;
    let printed = imds_keys::print(keys, metadata, raw, &mut |path, buf| imds.get_path(&mut network, path, buf).map_err(ImdsError), &mut output::print_raw);
    printed.map_err(|e| failed(output::line(e), e.exit_code()))
}

/// `wisp status [--wait [--timeout S]]`: writes nothing (core's `status`).
#[inline(never)]
pub fn status(ctx: &Context<'_>, wait: bool, timeout_s: Option<u32>) -> Result<i32, Message> {
    let waited = match wait {
        // Without the feature, main answers `--wait` before this.
        #[cfg(feature = "cloud-init-status")]
        true => {
            let read = |path: &[u8], buf: &mut [u8]| Ok(ctx.read(path, buf)?.map(<[u8]>::len));
            let mut result = crate::memory::map(wisp_core::cloud_init_status::DOCUMENT_LIMIT, "result.json")?;
            Some(status::wait_for_result(&mut Network::default(), timeout_s, &mut result, read, Message::format)?)
        }
        _ => None,
    };
    let var = ctx.existing_var_dir()?;
    let mut buf = [0u8; INSTANCE_ID_LIMIT];
    let status = status::read(var.as_ref().map(|dir| OpenDir { dir }).as_mut(), &mut buf).map_err(|e| msg!("{}", Worded(&e, words::<Message>)))?;
    output::print_line(msg!("{status}"));
    Ok(status.exit_code(waited))
}

/// `wisp mark complete|incomplete`.
#[inline(never)]
pub fn mark(ctx: &Context<'_>, complete: bool) -> Result<(), Message> {
    ctx.var_dir().and_then(|var| markers::set_complete(ctx, &var, complete))
}

/// `wisp clean`: core's `clean::run` under `--root`.
#[inline(never)]
pub fn clean(ctx: &Context<'_>, options: Options) -> i32 {
    let var_path = ctx.config.var_dir.as_bytes();
    let var = ctx.open_dir(var_path).ok();
    match wisp_core::clean::run(&mut OpenDir::root(ctx), var.as_ref().map(|dir| OpenDir { dir }).as_mut(), var_path, ctx.config.logs_dir.as_bytes(), options) {
        Ok(()) => 0,
        Err(e) => {
            output::error(format_args!("clean: {}", Worded(&e, words::<Message>)));
            EXIT_FAILED
        }
    }
}

/// `wisp grow MOUNTPOINT` and `wisp grow --image FILE --partition N`: core's
/// `partition::expand` on the root's devices (`host::block`).
#[cfg(feature = "grow")]
#[inline(never)]
pub fn grow(ctx: &Context<'_>, target: GrowTarget<'_>) -> i32 {
    match wisp_core::partition::expand::command(&mut System::new(ctx), target) {
        Ok(note) => {
            output::print_line(note);
            0
        }
        Err(e) => {
            output::error(format_args!("grow: {e}"));
            EXIT_FAILED
        }
    }
}

/// `wisp net-sync`: on AWS, each interface's addresses made what the metadata lists.
#[cfg(feature = "network")]
#[inline(never)]
pub fn net_sync(ctx: &mut Context<'_>) -> i32 {
    let timeouts = ctx.config.timeouts();
    let synced = ctx.var_dir().and_then(|var| crate::cloud::resolve(ctx, var)).and_then(|(cloud, _)| {
        let mut imds = crate::imds::session(cloud, &timeouts, ctx.config.imds_token_ttl);
        // The answer's head comes first in `raw`: core reads the body where it is.
        let (socket, answers) = crate::network::open_kernel()?;
        wisp_core::net::net_sync::run(&System::new(ctx), cloud, &mut Rtnl::new(socket, answers), |path, raw| imds.get_path(&mut Network::default(), path, raw).map_err(ImdsError))
    });
    let Err(e) = synced else { return 0 };
    output::error(format_args!("net-sync: {e}"));
    EXIT_FAILED
}

/// `wisp userdata show [FILE]`: the user-data read (includes listed, not fetched) and
/// core's `userdata_show` document on standard output, its warnings on standard error.
#[cfg(feature = "cloud-config")]
#[inline(never)]
pub fn userdata_show(ctx: &Context<'_>, file: Option<&[u8]>) -> Result<(), Message> {
    let decoded = userdata::load_with(ctx, Includes::Listed, u64::MAX, |buf| read_userdata(ctx, file, buf).map(Some))?;
    let config = match &decoded {
        Some(decoded) => crate::cloud_config::parse(decoded)?,
        None => Default::default(),
    };
    wisp_core::userdata_show::show(decoded.as_ref(), &config, output::print_raw, &|args| output::error(format_args!("warning: {args}")));
    Ok(())
}

/// FILE as given, else `$TINY_CLOUD_VAR/user-data` under the root.
fn read_userdata(ctx: &Context<'_>, file: Option<&[u8]>, buf: &mut [u8]) -> Result<usize, Message> {
    let Some(file) = file else {
        let path = NulTerminated::from_parts(&[ctx.config.var_dir.as_bytes(), b"/", USER_DATA]).map_err(output::line)?;
        return ctx.read(path.as_bytes(), buf)?.map(<[u8]>::len).ok_or_else(|| msg!("no user-data saved in {}", Shown(ctx.config.var_dir.as_bytes())));
    };
    let path = NulTerminated::from_parts(&[file]).map_err(|e| msg!("{}: {e}", Shown(file)))?;
    match fs::read_file(path.as_cstr(), buf) {
        Ok(Some(len)) => Ok(len),
        Ok(None) => Err(msg!("{}: no such file", Shown(file))),
        Err(ReadError::TooLarge { limit }) => Err(crate::context::too_large(ShownUnder { root: b"", path: file }, limit)),
        Err(ReadError::Io(e)) => Err(crate::output::path_error(file, e)),
    }
}
