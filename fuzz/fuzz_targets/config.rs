#![no_main]
//! /etc/wisp.conf (or tiny-cloud's): parsing is deterministic and keeps its bounds.
use libfuzzer_sys::fuzz_target;
use wisp_core::config::{parse, Config};

fuzz_target!(|data: &[u8]| {
    let (mut first, mut second) = (Config::default(), Config::default());
    let a = parse(data, &mut first, &mut |_| {}).is_ok();
    let b = parse(data, &mut second, &mut |_| {}).is_ok();
    assert_eq!(a, b);
    assert_eq!(first, second);
});
