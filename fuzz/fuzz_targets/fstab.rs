#![no_main]
//! mounts: an existing /etc/fstab merged with entries, and mount options split as
//! mount(8) does; merging what was merged changes nothing.
use libfuzzer_sys::fuzz_target;
use wisp_core::fstab::{merge, Entry, DEFAULT_FIELDS};
use wisp_fuzz::split;

fuzz_target!(|data: &[u8]| {
    let (fields, existing) = split(data);
    let mut words = fields.split(|&b| b == b'|');
    let mut entry = [None; 6];
    for slot in entry.iter_mut() {
        *slot = words.next().filter(|w| !w.is_empty());
    }
    let entries = [Entry { fields: entry }];
    let mut out = vec![0u8; 8 * 1024];
    if let Ok(merged) = merge(existing, &entries, &DEFAULT_FIELDS, &mut out, |_, _| {}) {
        let first = match merged {
            Some(len) => out[..len].to_vec(),
            None => existing.to_vec(),
        };
        let again = merge(&first, &entries, &DEFAULT_FIELDS, &mut out, |_, _| {});
        assert_eq!(again, Ok(None), "a rerun rewrites nothing");
    }
    let mut data_out = [0u8; 512];
    if let Ok((_, len)) = wisp_core::mount_options::parse(fields, &mut data_out) {
        assert!(len <= data_out.len());
    }
});
