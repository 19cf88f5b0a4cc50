#![no_main]
//! The kernel's rtnetlink answers: a datagram's messages, their attributes, and the link,
//! address and route each describes; what wisp reads of one, written back as a request,
//! reads back the same. The same bytes are then read as the answers to `Rtnl`'s three
//! dumps, several datagrams each: every dump ends (at its NLMSG_DONE, an error, or when
//! the datagrams run out) and keeps only what it asked for.
use libfuzzer_sys::fuzz_target;
use wisp_core::net::address::{Address, RTM_NEWADDR};
use wisp_core::net::link::{Link, LinkChange, NAME_LIMIT};
use wisp_core::net::netlink::{attributes, messages, Message, HEADER_LEN};
use wisp_core::host::netlink::Netlink;
use wisp_core::host::HostError;
use wisp_core::net::route::{Route, RTM_NEWROUTE, TABLE_MAIN};
use wisp_core::net::rtnl::{Rtnl, State, DATAGRAM_LIMIT};
use wisp_fuzz::within;

/// The input as datagrams, each after its length (16 bits, little-endian, cut to what is
/// left); when none is left the socket says EAGAIN, as a non-blocking one would.
struct Datagrams<'a>(&'a [u8]);

impl Netlink for Datagrams<'_> {
    fn send(&mut self, _request: &[u8]) -> Result<(), HostError> {
        Ok(())
    }

    fn recv(&mut self, buf: &mut [u8]) -> Result<usize, HostError> {
        let [low, high, rest @ ..] = self.0 else { return Err(HostError { errno: 11 }) };
        let len = usize::from(u16::from_le_bytes([*low, *high])).min(rest.len()).min(buf.len());
        buf[..len].copy_from_slice(&rest[..len]);
        self.0 = &rest[len..];
        Ok(len)
    }
}

fuzz_target!(|data: &[u8]| {
    let mut buffer = [0u8; 256];
    let mut taken = 0;
    for message in messages(data) {
        let Ok(message) = message else { break };
        let payload = message.payload();
        assert!(within(payload, data));
        taken += HEADER_LEN + payload.len();
        for attribute in attributes(payload) {
            let Ok((_, value)) = attribute else { break };
            assert!(within(value, payload));
        }
        if let Ok(Some(link)) = Link::parse(&message) {
            assert!(link.name().len() <= NAME_LIMIT && !link.name().contains(&0));
            let change = LinkChange { index: link.index, up: Some(link.is_up()), name: Some(link.name()).filter(|n| !n.is_empty()), mtu: Some(link.mtu) };
            let again = Link::parse(&Message::new_checked(change.emit(&mut buffer, 1).unwrap()).unwrap()).unwrap().unwrap();
            assert_eq!((again.index, again.name(), again.mtu, again.is_up()), (link.index, change.name.unwrap_or(b""), link.mtu, link.is_up()));
        }
        if let Ok(Some(address)) = Address::parse(&message) {
            let again = Address::parse(&Message::new_checked(address.emit(&mut buffer, RTM_NEWADDR, 0, 1).unwrap()).unwrap());
            assert_eq!(again, Ok(Some(address)));
        }
        if let Ok(Some(route)) = Route::parse(&message) {
            let again = Route::parse(&Message::new_checked(route.emit(&mut buffer, RTM_NEWROUTE, 0, 1).unwrap()).unwrap()).unwrap().unwrap();
            // What a request cannot say: a table past 255 without RTA_TABLE, a
            // destination beside a prefix length of 0.
            let table = if route.table > 255 { 255 } else { route.table };
            let destination = if route.prefix_len == 0 { again.destination } else { route.destination };
            assert_eq!(again, Route { table, destination, ..route });
        }
    }
    assert!(taken <= data.len());

    let mut answers = [0; DATAGRAM_LIMIT];
    let mut kernel = Rtnl::new(Datagrams(data), &mut answers);
    let mut state = State::default();
    if kernel.reread(&mut state).is_ok() {
        assert!(state.routes.iter().all(|r| r.table == TABLE_MAIN));
        assert!(state.links.iter().all(|l| l.name().len() <= NAME_LIMIT));
    }
});
