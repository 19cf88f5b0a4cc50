#![no_main]
//! OpenStack's network_data.json, and the /etc/network/interfaces wisp renders from it.
use libfuzzer_sys::fuzz_target;
use wisp_core::net::network_data::parse;

fuzz_target!(|data: &[u8]| {
    if let Ok(config) = parse(data) {
        wisp_fuzz::check_network_config(&config);
    }
});
