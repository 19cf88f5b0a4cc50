#![no_main]
//! Key lines from the metadata and an existing authorized_keys: a key accepted is one
//! line, and merging it twice adds nothing the second time.
use libfuzzer_sys::fuzz_target;
use wisp_core::authorized_keys::{merge, PublicKey};
use wisp_fuzz::split;

fuzz_target!(|data: &[u8]| {
    let (existing, lines) = split(data);
    let keys: Vec<PublicKey<'_>> = lines.split(|&b| b == b'\n').filter_map(|l| PublicKey::parse(l).ok()).take(32).collect();
    let mut out = vec![0u8; 64 * 1024];
    if let Ok(merged) = merge(existing, &keys, &mut out) {
        let len = merged.unwrap_or(existing.len());
        let first = if merged.is_some() { out[..len].to_vec() } else { existing.to_vec() };
        assert_eq!(merge(&first, &keys, &mut out), Ok(None), "a second merge adds nothing");
    }
});
