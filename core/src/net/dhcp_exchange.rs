//! One DHCP exchange on a socket: the client (`dhcp_client`) says what to send and how long
//! to wait; this runs it against the host's socket and clock until a lease binds or the
//! deadline passes.

use core::fmt;
use core::net::Ipv4Addr;

use super::dhcp::Lease;
use super::dhcp_client::{Client, Event, Failure, Step, PACKET_LIMIT};
use crate::host::explain::{errno_number, ErrnoWords, Explain};
use crate::host::dhcp::DhcpSocket;
use crate::host::HostError;

/// Largest packet received.
const RECEIVED_LIMIT: usize = 2048;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExchangeError {
    Send(HostError),
    Receive(HostError),
    Failed(Failure),
}

impl Explain for ExchangeError {
    fn explain(&self, f: &mut fmt::Formatter<'_>, words: ErrnoWords) -> fmt::Result {
        match *self {
            ExchangeError::Send(error) => {
                f.write_str("DHCP send: ")?;
                words(error, f)
            }
            ExchangeError::Receive(error) => {
                f.write_str("DHCP receive: ")?;
                words(error, f)
            }
            ExchangeError::Failed(failure) => write!(f, "{failure}"),
        }
    }
}

impl fmt::Display for ExchangeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.explain(f, errno_number)
    }
}

/// Takes a lease for `mac` within `timeout_ms`, asking for `previous` first when given
/// (INIT-REBOOT); each offer or refusal is handed to `on_event` as it happens.
pub fn take_lease(
    socket: &mut impl DhcpSocket,
    mac: [u8; 6],
    xid: u32,
    timeout_ms: u64,
    previous: Option<Ipv4Addr>,
    mut on_event: impl FnMut(Event),
) -> Result<Lease, ExchangeError> {
    let mut client = Client::new(mac, xid, socket.now_ms(), timeout_ms, previous);
    let mut out = [0u8; PACKET_LIMIT];
    let mut received = [0u8; RECEIVED_LIMIT];
    let mut received_len = None;
    loop {
        let now = socket.now_ms();
        let step = client.step(now, received_len.take().map(|len| &received[..len]), &mut out);
        if let Some(event) = client.take_event() {
            on_event(event);
        }
        match step {
            Step::Send(packet) => socket.send_broadcast(packet).map_err(ExchangeError::Send)?,
            Step::Wait { until_ms } => received_len = socket.receive(until_ms.saturating_sub(now), &mut received).map_err(ExchangeError::Receive)?,
            Step::Bound(lease) => return Ok(lease),
            Step::Failed(failure) => return Err(ExchangeError::Failed(failure)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::memory::MemoryDhcp;
    use crate::net::dhcp::Packet;
    use crate::net::ipv4_udp::Datagram;
    use std::vec::Vec;

    static OFFER: &[u8] = include_bytes!("captures/dnsmasq-offer.ip");
    static ACK: &[u8] = include_bytes!("captures/dnsmasq-ack.ip");
    const MAC: [u8; 6] = [2, 0, 0, 0, 0, 2];

    fn xid() -> u32 {
        Packet::new_checked(Datagram::parse(OFFER).unwrap().payload).unwrap().xid()
    }

    #[test]
    fn an_offer_then_an_ack_bind_the_lease() {
        let mut server = MemoryDhcp { now_ms: 5000, answers: [OFFER.to_vec(), ACK.to_vec()].into(), ..MemoryDhcp::default() };
        let mut events = Vec::new();
        let lease = take_lease(&mut server, MAC, xid(), 30_000, None, |event| events.push(event)).unwrap();
        assert_eq!(lease.address, Some(Ipv4Addr::new(10, 9, 0, 56)));
        assert_eq!(events, [Event::Offered { address: Ipv4Addr::new(10, 9, 0, 56), server: Ipv4Addr::new(10, 9, 0, 1) }]);
        // DISCOVER at once, REQUEST as the offer arrives.
        let times: Vec<u64> = server.sent.iter().map(|(at, _)| *at).collect();
        assert_eq!(times, [5000, 5010]);
    }

    #[test]
    fn silence_ends_at_the_deadline_after_backing_off() {
        let mut server = MemoryDhcp::default();
        let e = take_lease(&mut server, MAC, 1, 10_000, None, |_| panic!("no event without a server")).unwrap_err();
        assert_eq!(std::format!("{e}"), "no DHCP lease within 10000 ms: no server answered");
        let times: Vec<u64> = server.sent.iter().map(|(at, _)| *at).collect();
        assert_eq!(times, [0, 1000, 3000, 7000]);
    }

    #[test]
    fn a_socket_that_cannot_send_says_so() {
        let mut server = MemoryDhcp { fail_send: Some(HostError { errno: 100 }), ..MemoryDhcp::default() };
        let e = take_lease(&mut server, MAC, 1, 10_000, None, |_| {}).unwrap_err();
        assert_eq!(e, ExchangeError::Send(HostError { errno: 100 }));
        assert_eq!(std::format!("{e}"), "DHCP send: errno 100");
    }
}
