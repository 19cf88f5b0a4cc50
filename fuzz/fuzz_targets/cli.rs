#![no_main]
//! The command line, split into arguments at NUL bytes.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let args: Vec<&[u8]> = data.split(|&b| b == 0).take(16).collect();
    let _ = wisp_core::cli::parse(&args);
});
