#![no_main]
//! EC2's public-keys/ listing: indexes, each giving a key path.
use libfuzzer_sys::fuzz_target;
use wisp_core::provider::aws::key_path;
use wisp_core::provider::key_listing::parse_key_listing;

fuzz_target!(|data: &[u8]| {
    if let Ok(indexes) = parse_key_listing(data) {
        for index in indexes {
            assert!(key_path(index).ends_with("/openssh-key"));
        }
    }
});
