#![no_main]
//! base64 as user-data, write_files and the clouds use it: what decodes fits 3 bytes per
//! 4 characters, decode(encode(x)) == x, and decoding in place (YAML's `!!binary`, the
//! clouds' user-data) gives what decoding into another buffer gives.
use libfuzzer_sys::fuzz_target;
use wisp_core::base64::{decode, decode_in_place};
use wisp_fuzz::base64_encode;

fuzz_target!(|data: &[u8]| {
    let mut out = vec![0u8; data.len()];
    let decoded = decode(data, &mut out);
    if let Ok(len) = decoded {
        assert!(len * 4 <= data.len() * 3 + 3);
        let _ = base64_encode(&out[..len]);
    }
    let mut in_place = data.to_vec();
    match (decode_in_place(&mut in_place), decoded) {
        (Ok(len), Ok(expected)) => assert_eq!(&in_place[..len], &out[..expected]),
        (Ok(_), Err(e)) => panic!("decoded in place what decode refuses: {e:?}"),
        _ => {}
    }
    let encoded = base64_encode(data);
    let mut decoded = vec![0u8; data.len()];
    let len = decode(&encoded, &mut decoded).expect("canonical base64 decodes");
    assert_eq!(&decoded[..len], data);
});
