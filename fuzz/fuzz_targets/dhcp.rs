#![no_main]
//! A server's DHCP reply as the packet socket hands it over: the IPv4 and UDP headers,
//! then the message, its options and the lease they describe (option 121's classless
//! routes and option 119's search list included).
use libfuzzer_sys::fuzz_target;
use wisp_core::net::dhcp::{ClientMessage, Packet, DNS_LIMIT, NAME_LIMIT};
use wisp_core::net::ipv4_udp::{Datagram, HEADER_LEN};
use wisp_fuzz::within;

fn check(message: &[u8]) {
    let Ok(packet) = Packet::new_checked(message) else { return };
    assert!(message.len() >= 240);
    assert!(within(packet.client_hardware(), message) && packet.client_hardware().len() == 6);
    let mut taken = 0;
    for option in packet.options() {
        let Ok((code, value)) = option else { break };
        assert!(code != 0 && code != 255, "pad and end are not options");
        assert!(within(value, message) && value.len() <= 255);
        taken += 2 + value.len();
    }
    assert!(taken <= message.len() - 240);
    let Ok(lease) = packet.lease() else { return };
    assert!(lease.prefix_len <= 32);
    assert!(lease.dns.len() <= DNS_LIMIT);
    assert!(lease.classless_routes.iter().all(|route| route.prefix_len <= 32));
    // Names go into resolv.conf, /etc/hostname and logs: one printable word each.
    for name in [&lease.domain, &lease.host_name] {
        assert!(name.len() <= NAME_LIMIT && name.iter().all(u8::is_ascii_graphic), "{name:?}");
    }
    let search = &lease.search;
    assert!(search.iter().all(|&b| b.is_ascii_graphic() || b == b' '), "{search:?}");
    assert!(!search.starts_with(b" ") && !search.ends_with(b" ") && !search.windows(2).any(|w| w == b"  "), "{search:?}");
    // The client's REQUEST for this offer reads back as one.
    if let (Some(address), Some(server)) = (lease.address, lease.server) {
        let mac = <[u8; 6]>::try_from(packet.client_hardware()).unwrap();
        let request = ClientMessage { kind: wisp_core::net::dhcp::MessageType::Request, xid: packet.xid(), mac, secs: 0, broadcast: false, requested: Some(address), server: Some(server) };
        let mut buffer = [0u8; 300];
        let sent = Packet::new_checked(request.emit(&mut buffer).unwrap()).unwrap();
        assert_eq!((sent.xid(), sent.client_hardware(), sent.is_reply()), (packet.xid(), &mac[..], false));
        assert_eq!(sent.message_type(), Some(wisp_core::net::dhcp::MessageType::Request));
    }
}

fuzz_target!(|data: &[u8]| {
    if let Some(datagram) = Datagram::parse(data) {
        assert!(within(datagram.payload, data) && datagram.payload.len() + HEADER_LEN <= data.len());
        check(datagram.payload);
    }
    // The message alone, so the fuzzer need not find a checksum to reach the options.
    check(data);
});
