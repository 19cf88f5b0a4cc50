#![no_main]
//! gzip'd user-data: anything accepted has the CRC and length its trailer promises, and
//! what miniz_oxide compresses comes back unchanged.
use libfuzzer_sys::fuzz_target;
use miniz_oxide::inflate::core::DecompressorOxide;
use wisp_core::gzip::decompress;
use wisp_fuzz::{crc32, gzip, split};

fuzz_target!(|data: &[u8]| {
    let mut out = vec![0u8; 64 * 1024];
    let mut state = DecompressorOxide::new();
    if let Ok(len) = decompress(data, &mut out, &mut state) {
        let trailer = &data[data.len() - 8..];
        assert_eq!(crc32(&out[..len]).to_le_bytes(), trailer[..4]);
        assert_eq!((len as u32).to_le_bytes(), trailer[4..]);
    }
    let (level, plain) = split(data);
    let packed = gzip(plain, level.len() as u8 % 11);
    let mut state = DecompressorOxide::new();
    let len = decompress(&packed, &mut out, &mut state).expect("a well-formed gzip stream");
    assert_eq!(&out[..len], plain);
});
