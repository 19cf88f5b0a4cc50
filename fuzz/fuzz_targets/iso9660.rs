#![no_main]
//! A iso9660 seed image: opened, searched and read as wisp reads a seed disk; what is read
//! fits the caller's buffer.
use libfuzzer_sys::fuzz_target;
use wisp_core::seed::iso9660::Volume;

fuzz_target!(|data: &[u8]| {
    let Ok(volume) = Volume::open(&mut &data[..], data.len() as u64) else { return };
    for path in [&[&b"meta-data"[..]][..], &[b"openstack", b"latest", b"meta_data.json"], &[b"ovf-env.xml"], &[b"user-data"]] {
        if let Ok(Some(file)) = volume.find(&mut &data[..], path) {
            let mut out = [0u8; 4096];
            if let Ok(len) = volume.read(&mut &data[..], file, &mut out) {
                assert!(len <= out.len());
            }
        }
    }
});
