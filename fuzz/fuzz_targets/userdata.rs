#![no_main]
//! User-data's first line, content types, include lists and script names.
use libfuzzer_sys::fuzz_target;
use wisp_core::userdata::{from_content_type, include_urls, is_safe_script_name, sniff};
use wisp_fuzz::within;

fuzz_target!(|data: &[u8]| {
    let _ = (sniff(data), from_content_type(data));
    for (url, _) in include_urls(data).take(64) {
        assert!(within(url, data) && !url.contains(&b'\n'));
    }
    if is_safe_script_name(data) {
        assert!(!data.contains(&b'/') && data != b".." && data != b"." && !data.is_empty());
    }
});
