//! wisp: a first-boot bootstrapper for cloud and embedded Linux images, as one static
//! binary with no libc. This crate only wires `wisp-core`'s decisions to
//! `wisp-os-linux`'s system calls.
#![no_std]
#![no_main]
// Failures carry their message in a fixed 1 KiB `Line`: there is no allocator to box it,
// and a failure happens once per run, not in a loop.
#![allow(clippy::result_large_err)]

// Without this the binary has no entry point: origin provides `_start` and the panic handler.
extern crate origin;

/// A message line, formatted into a fixed buffer.
macro_rules! msg {
    ($($arg:tt)*) => {
        $crate::output::Line::format(format_args!($($arg)*))
    };
}

mod actions;
mod apk_repos;
mod azure;
mod cloud_init_status;
mod commands;
mod context;
mod fetch;
mod grow;
mod host_keys;
mod imds;
mod inspect;
mod ntp;
mod once;
mod output;
mod phases;
mod cloud_config;
mod passwords;
mod scripts;
mod system_config;
mod seed;
mod sshd;
mod state;
mod userdata;
mod users;

use wisp_core::cli::{self, Command};
use wisp_core::phase::Phase;
use wisp_os_linux::process::StartInfo;

use crate::context::Context;

pub const EXIT_FAILED: i32 = 1;
pub const EXIT_USAGE: i32 = 2;
/// Most command-line arguments.
const ARGS_LIMIT: usize = 64;

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
            output::error(format_args!("more than {ARGS_LIMIT} arguments"));
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
            output::print(format_args!("wisp {}", env!("CARGO_PKG_VERSION")));
            return 0;
        }
        _ => {}
    }
    let mut ctx = match Context::load(start, &invocation) {
        Ok(ctx) => ctx,
        Err(e) => {
            output::error(format_args!("{e}"));
            return EXIT_USAGE;
        }
    };
    match invocation.command {
        Command::Phase(phase) => phases::run(&mut ctx, &[phase]),
        Command::Bootstrap => phases::run(&mut ctx, &Phase::ALL),
        Command::Imds { keys } => commands::imds(&mut ctx, keys),
        Command::Status { wait } => commands::status(&ctx, wait),
        Command::Mark { complete } => commands::mark(&ctx, complete),
        Command::Grow { target } => grow::command(&mut ctx, target),
        Command::Userdata { file } => inspect::show(&ctx, file),
        Command::Help | Command::Version => 0,
    }
}
