#![no_main]
//! base64 as user-data, write_files and the clouds use it: what decodes fits 3 bytes per
//! 4 characters, and decode(encode(x)) == x.
use libfuzzer_sys::fuzz_target;
use wisp_core::base64::decode;
use wisp_fuzz::base64_encode;

fuzz_target!(|data: &[u8]| {
    let mut out = vec![0u8; data.len()];
    if let Ok(len) = decode(data, &mut out) {
        assert!(len * 4 <= data.len() * 3 + 3);
        let _ = base64_encode(&out[..len]);
    }
    let encoded = base64_encode(data);
    let mut decoded = vec![0u8; data.len()];
    let len = decode(&encoded, &mut decoded).expect("canonical base64 decodes");
    assert_eq!(&decoded[..len], data);
});
