#![no_main]
//! gzip'd user-data: anything accepted has the CRC and length its trailer promises, what
//! miniz_oxide compresses comes back unchanged, and wisp's inflate agrees with
//! miniz_oxide's on every raw deflate stream both decode.
use libfuzzer_sys::fuzz_target;
use wisp_core::gzip::decompress;
use wisp_core::inflate::inflate;
use wisp_fuzz::{crc32, gzip, split};

fuzz_target!(|data: &[u8]| {
    let mut out = vec![0u8; 64 * 1024];
    if let Ok(len) = decompress(data, &mut out) {
        let trailer = &data[data.len() - 8..];
        assert_eq!(crc32(&out[..len]).to_le_bytes(), trailer[..4]);
        assert_eq!((len as u32).to_le_bytes(), trailer[4..]);
    }
    // The same bytes as a raw deflate stream, against the reference inflater: whenever
    // either one decodes it, the other gives the same bytes.
    let ours = inflate(data, &mut out, 0).map(|(_, end)| out[..end].to_vec());
    let reference = miniz_oxide::inflate::decompress_to_vec_with_limit(data, out.len());
    match (&ours, &reference) {
        (Ok(a), Ok(b)) => assert_eq!(a, b),
        (Err(_), Err(_)) => {}
        _ => panic!("inflate {:?} but miniz_oxide {:?}", ours.as_ref().map(Vec::len), reference.as_ref().map(Vec::len)),
    }
    let (level, plain) = split(data);
    let packed = gzip(plain, level.len() as u8 % 11);
    let len = decompress(&packed, &mut out).expect("a well-formed gzip stream");
    assert_eq!(&out[..len], plain);
});
