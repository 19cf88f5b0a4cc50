#![no_main]
//! Azure: the provisioning CD's ovf-env.xml and the IMDS instance document.
use libfuzzer_sys::fuzz_target;
use wisp_core::provider::azure::{extract, ovf_custom_data, ovf_element, ovf_keys};
use wisp_core::provider::Item;
use wisp_fuzz::within;

fuzz_target!(|data: &[u8]| {
    let mut out = [0u8; 4096];
    if let Some(name) = ovf_element(data, b"HostName") {
        assert!(within(name, data));
    }
    if let Ok(len) = ovf_keys(data, &mut out) {
        assert!(len <= out.len());
    }
    if let Ok(Some(len)) = ovf_custom_data(data, &mut out) {
        assert!(len <= out.len());
    }
    for item in [Item::InstanceId, Item::Hostname, Item::SshKeys, Item::UserData] {
        if let Ok(Some(len)) = extract(data, item, &mut out) {
            assert!(len <= out.len());
        }
    }
});
