#![no_main]
//! /proc/self/mountinfo and a uevent file: the mount found holds the path asked for.
use libfuzzer_sys::fuzz_target;
use wisp_core::mountinfo::{find, find_containing, growable, uevent_value};
use wisp_fuzz::{split, within};

fuzz_target!(|data: &[u8]| {
    let (path, table) = split(data);
    if let Ok(Some(mount)) = find(table, path) {
        let _ = growable(&mount);
    }
    if let Ok(Some(mount)) = find_containing(table, path) {
        let _ = growable(&mount);
    }
    if let Some(value) = uevent_value(data, b"DEVNAME") {
        assert!(within(value, data) && !value.contains(&b'\n'));
    }
});
