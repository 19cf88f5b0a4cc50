#![no_main]
//! A host name from the metadata or cloud-config, and /etc/hosts updated with it: an
//! accepted name is a plain DNS name, and a second update changes nothing.
use libfuzzer_sys::fuzz_target;
use wisp_core::hostname::Hostname;
use wisp_core::hosts_file::update;
use wisp_fuzz::split;

fuzz_target!(|data: &[u8]| {
    let (raw, hosts) = split(data);
    let Ok(name) = Hostname::parse(raw) else { return };
    for text in [name.fqdn(), name.short()] {
        assert!(!text.is_empty() && text.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.'));
    }
    let mut out = vec![0u8; 16 * 1024];
    if let Ok(updated) = update(hosts, name.fqdn(), name.short(), &mut out) {
        let first = match updated {
            Some(len) => out[..len].to_vec(),
            None => hosts.to_vec(),
        };
        assert_eq!(update(&first, name.fqdn(), name.short(), &mut out), Ok(None));
    }
});
