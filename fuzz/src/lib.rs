//! What the fuzz targets share: reference encoders for the round trips, and splitting an
//! input in two.

/// RFC 4648 base64 with padding: the reference the decoder's round trip is checked with.
pub fn base64_encode(data: &[u8]) -> Vec<u8> {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, &b)| n | (b as u32) << (16 - 8 * i));
        for i in 0..4 {
            out.push(if i <= chunk.len() { ALPHABET[(n >> (18 - 6 * i) & 63) as usize] } else { b'=' });
        }
    }
    out
}

/// `data` deflated by miniz_oxide and framed as RFC 1952 gzip.
pub fn gzip(data: &[u8], level: u8) -> Vec<u8> {
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3];
    out.extend(miniz_oxide::deflate::compress_to_vec(data, level.min(10)));
    out.extend(crc32(data).to_le_bytes());
    out.extend((data.len() as u32).to_le_bytes());
    out
}

pub fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in data {
        crc ^= byte as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 { crc >> 1 ^ 0xedb8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

/// The first byte picks a split point; the rest is cut there.
pub fn split(data: &[u8]) -> (&[u8], &[u8]) {
    match data.split_first() {
        Some((&at, rest)) => rest.split_at((at as usize * rest.len() / 256).min(rest.len())),
        None => (&[], &[]),
    }
}

/// Whether `inner` lies inside `outer`'s memory: a parser's answer borrowed from its input.
pub fn within(inner: &[u8], outer: &[u8]) -> bool {
    let (start, end) = (outer.as_ptr() as usize, outer.as_ptr() as usize + outer.len());
    inner.is_empty() || (inner.as_ptr() as usize >= start && inner.as_ptr() as usize + inner.len() <= end)
}

/// What a network configuration read from untrusted bytes holds, whichever reader read
/// it, and the /etc/network/interfaces rendered from it: each name and value one word
/// on its own line, so no value can add a line, a stanza or an option of its own.
pub fn check_network_config(config: &wisp_core::net::network_config::NetworkConfig<'_>) {
    use wisp_core::net::{eni, network_config::Prefix};
    let fits = |prefix: &Prefix| prefix.len <= if prefix.ip.is_ipv4() { 32 } else { 128 };
    for interface in &config.interfaces {
        // network_data.json's link ids are ids, not names: configure puts the name of the
        // link found in their place.
        assert!(is_word(interface.name.as_bytes()) && (interface.keep_name || interface.name.len() <= 15), "{:?}", interface.name);
        assert!(interface.match_name.is_none_or(|name| is_word(name.as_bytes())), "{:?}", interface.match_name);
        assert!(interface.mtu.is_none_or(|mtu| (68..=65535).contains(&mtu)), "{:?}", interface.mtu);
        assert!(interface.addresses.iter().all(fits), "{:?}", interface.addresses);
        assert!(interface.routes.iter().all(|route| fits(&route.to) && route.to.ip.is_ipv4() == route.via.is_ipv4()), "{:?}", interface.routes);
        assert!(interface.gateway4.is_none_or(|ip| ip.is_ipv4()) && interface.gateway6.is_none_or(|ip| ip.is_ipv6()));
    }
    assert!(config.search.iter().all(|domain| is_word(domain)), "{:?}", config.search);

    let mut buffer = vec![0u8; 16 * 1024];
    let mut out = wisp_core::out::Out::new(&mut buffer);
    eni::render(config, &mut out).expect("a configuration within the limits fits 16 KiB");
    let text = std::str::from_utf8(out.written()).expect("eni is UTF-8");
    let names: Vec<&str> = config.interfaces.iter().map(|i| i.name).collect();
    let mut autos = 0;
    for line in text.lines() {
        let words: Vec<&str> = line.split(' ').collect();
        if line.is_empty() || line.starts_with("# Written by wisp") {
            continue;
        } else if let Some(name) = line.strip_prefix("auto ") {
            assert!(name == "lo" || names.contains(&name), "{line:?} in\n{text}");
            autos += 1;
        } else if line.starts_with("iface ") {
            assert_eq!(words.len(), 4, "{line:?} in\n{text}");
            assert!(words[1] == "lo" || names.contains(&words[1]), "{line:?} in\n{text}");
            assert!(["inet", "inet6"].contains(&words[2]) && ["loopback", "dhcp", "static", "manual", "auto"].contains(&words[3]), "{line:?}");
        } else {
            let option = line.strip_prefix("    ").unwrap_or_else(|| panic!("{line:?} in\n{text}"));
            let keyword = option.split(' ').next().unwrap();
            assert!(["dns-nameservers", "dns-search", "address", "gateway", "mtu", "post-up", "pre-down", "dhcp"].contains(&keyword), "{line:?} in\n{text}");
            if keyword == "dns-search" {
                assert_eq!(option.split(' ').count(), 1 + config.search.len(), "{line:?}");
            }
        }
        assert!(!line.bytes().any(|b| b.is_ascii_control()), "{line:?}");
    }
    assert_eq!(autos, 1 + config.interfaces.len(), "{text}");
}

/// Printable, without spaces: one word of a line.
fn is_word(text: &[u8]) -> bool {
    !text.is_empty() && text.iter().all(u8::is_ascii_graphic)
}
