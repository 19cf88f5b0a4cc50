//! wisp: a first-boot bootstrapper for cloud and embedded Linux images, as one static
//! binary with no libc. This crate only wires `wisp-core`'s decisions to
//! `wisp-os-linux`'s system calls.
#![no_std]
#![no_main]
// A build without some features leaves helpers that only the others call: the full build
// keeps every warning.
#![cfg_attr(
    not(all(
        feature = "aws", feature = "azure", feature = "gcp", feature = "oci", feature = "nocloud",
        feature = "configdrive", feature = "cloud-config", feature = "cloud-init-status", feature = "vfat",
        feature = "ssh", feature = "ntp", feature = "apk-repos"
    )),
    allow(dead_code, unused_imports, unused_variables)
)]

// Without this the binary has no entry point: origin provides `_start` and the panic handler.
extern crate origin;

/// A message line, formatted into a fixed buffer.
macro_rules! msg {
    ($($arg:tt)*) => {
        $crate::output::Message::format(format_args!($($arg)*))
    };
}

mod actions;
#[cfg(feature = "azure")]
mod azure;
mod cloud_init_status;
mod commands;
mod cloud;
mod context;
mod features;
mod host;
mod imds;
mod markers;
mod memory;
#[cfg(feature = "network")]
mod network;
mod output;
mod phases;
#[cfg(feature = "cloud-config")]
mod cloud_config;
mod session;
mod seed;
mod userdata;

use wisp_core::cli::{self, Command, Invocation};
use wisp_core::config::Config;
use wisp_core::config_file::{self, Given, Source};
use wisp_core::phase::Phase;
use wisp_os_linux::nul_terminated::NulTerminated;
use wisp_os_linux::process::StartInfo;

use crate::context::Context;
use crate::host::read_error;
use crate::host::system::System;

pub use wisp_core::cli::{EXIT_FAILED, EXIT_USAGE};
/// Most command-line arguments.
const ARGS_LIMIT: usize = 64;
const _: () = assert!(ARGS_LIMIT == 64, "the message says 64");

#[unsafe(no_mangle)]
fn origin_main(argc: usize, argv: *mut *mut u8, envp: *mut *mut u8) -> i32 {
    // SAFETY: these are the values origin received from the kernel, passed on unchanged.
    let start = unsafe { StartInfo::new(argc, argv, envp) };
    main(&start)
}

fn main(start: &StartInfo) -> i32 {
    let mut args: heapless::Vec<&[u8], ARGS_LIMIT> = heapless::Vec::new();
    for arg in start.args().skip(1) {
        if args.push(arg).is_err() {
            output::error(format_args!("more than 64 arguments"));
            return EXIT_USAGE;
        }
    }
    let invocation = match cli::parse(&args) {
        Ok(invocation) => invocation,
        Err(e) => {
            output::error(format_args!("{e}"));
            output::error(format_args!("try 'wisp --help'"));
            return EXIT_USAGE;
        }
    };
    match invocation.command {
        Command::Help => {
            output::print_raw(cli::USAGE.as_bytes());
            return 0;
        }
        Command::Version => {
            output::print_raw(&features::VERSION_LINE);
            return 0;
        }
        _ => {}
    }
    let mut ctx = match Context::open(start, &invocation) {
        Ok(ctx) => ctx,
        Err(e) => return output::failed(e, EXIT_USAGE),
    };
    if let Err(e) = load_configuration(&mut ctx, &invocation) {
        return output::failed(e, EXIT_USAGE);
    }
    match invocation.command {
        Command::Phase(phase) => phases::run(&mut ctx, &[phase]),
        Command::Bootstrap => phases::run(&mut ctx, &Phase::ALL),
        Command::Imds { keys } => commands::imds(&mut ctx, keys).err().unwrap_or(0),
        #[cfg(not(feature = "cloud-init-status"))]
        Command::Status { wait: true, .. } => missing_feature(invocation.command),
        Command::Status { wait, timeout_s } => commands::status(&ctx, wait, timeout_s).unwrap_or_else(|e| output::failed(e, EXIT_FAILED)),
        Command::Mark { complete } => commands::mark(&ctx, complete).map_or_else(|e| output::failed(e, EXIT_FAILED), |()| 0),
        Command::Clean(options) => commands::clean(&ctx, options),
        #[cfg(feature = "grow")]
        Command::Grow { target } => commands::grow(&ctx, target),
        #[cfg(feature = "cloud-config")]
        Command::Userdata { file } => commands::userdata_show(&ctx, file).map_or_else(|e| output::failed(e, EXIT_FAILED), |()| 0),
        #[cfg(feature = "network")]
        Command::NetSync => commands::net_sync(&mut ctx),
        // Help and Version are answered above: what is left, this build lacks.
        #[allow(unreachable_patterns)]
        command => missing_feature(command),
    }
}

/// `WHAT: wisp was built without FEATURE`, for a command this build lacks.
fn missing_feature(command: Command<'_>) -> i32 {
    let (what, feature) = command.needs().unwrap_or_default();
    output::failed(features::missing(what, feature), EXIT_USAGE)
}

/// Reads the configuration: `--config FILE` as given, else the file core's
/// `config_file` finds under the root, which also says what it means.
#[inline(never)]
fn load_configuration(ctx: &mut Context<'_>, invocation: &Invocation<'_>) -> Result<(), output::Message> {
    // Mapped: on the stack, the 16 KiB were probed whole by every command, however short
    // the file (or with none).
    let mut text = memory::map(config_file::FILE_LIMIT, "the configuration file")?;
    let given = match invocation.config {
        Some(path) => {
            ctx.config_file = NulTerminated::from_parts(&[path]).map_err(|e| msg!("--config: {e}"))?;
            Some(Given { path, read: wisp_os_linux::fs::read_file(ctx.config_file.as_cstr(), &mut text).map_err(read_error) })
        }
        None => None,
    };
    let mut config = Config::default();
    // The host dropped before `?`, not on each of its paths: 48 bytes.
    let source = config_file::load(&mut System::new(ctx), given, &mut text, &mut config);
    if let Source::UnderRoot(file) = source? {
        ctx.config_file = ctx.path(file.as_bytes())?;
    }
    // `--cloud` beats CLOUD.
    config.cloud = invocation.cloud.unwrap_or(config.cloud);
    ctx.config = config;
    Ok(())
}
