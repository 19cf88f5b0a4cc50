#![no_main]
//! NoCloud: the ds= token on the kernel command line, and meta-data (JSON or YAML).
use libfuzzer_sys::fuzz_target;
use wisp_core::seed::nocloud::{tokens, value};

fuzz_target!(|data: &[u8]| {
    let _ = tokens(data);
    let mut out = [0u8; 2048];
    for key in ["instance-id", "local-hostname", "public-keys"] {
        if let Ok(Some(len)) = value(data, key, &mut out) {
            assert!(len <= out.len());
        }
    }
});
