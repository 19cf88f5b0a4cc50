//! The DHCPv4 client as a state machine (RFC 2131 4.4): INIT-REBOOT when an earlier
//! lease's address is known, else SELECTING (DISCOVER, take the first OFFER), then
//! REQUESTING until an ACK binds or a NAK starts over; retransmissions back off
//! exponentially, and the whole exchange has one deadline. No I/O and no clock: the caller
//! passes the time and what it received, and sends what it is given.
//!
//! Once bound the client is done: wisp applies the lease and exits, as tiny-cloud's
//! `udhcpc -q` does (see the README's "Network" for what that means when the lease ends).

use core::net::Ipv4Addr;

use crate::text::Decimal;

use super::dhcp::{self, ClientMessage, Lease, MessageType, Packet};
use super::ipv4_udp::{self, Datagram};

/// RFC 2131 4.1 waits 4 s first, for 10 Mb/s networks; a cloud's server answers at once,
/// so wisp starts at 1 s and doubles up to `RETRANSMIT_MAX_MS`.
pub const RETRANSMIT_FIRST_MS: u64 = 1000;
pub const RETRANSMIT_MAX_MS: u64 = 16000;
/// REQUESTs sent for one offer before discovering again (and for an INIT-REBOOT
/// REQUEST before giving the old address up).
const REQUEST_ATTEMPTS: u32 = 3;
/// Most packets one exchange sends and ignores, whatever the deadline.
const IGNORED_LIMIT: u32 = 1000;
// Failure::TooManyIgnored says it in words: a literal costs less than formatting it.
const _: () = assert!(IGNORED_LIMIT == 1000);
/// The largest packet the client builds (IP and UDP headers, 300-byte DHCP message).
pub const PACKET_LIMIT: usize = ipv4_udp::HEADER_LEN + 300;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Rebooting { address: Ipv4Addr },
    Selecting,
    Requesting { address: Ipv4Addr, server: Ipv4Addr },
    Bound,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// The deadline passed with no lease; `offers` and `naks` say what was heard, and
    /// `ignored` why the last reply that was not used was refused.
    NoLease { waited_ms: u64, offers: u32, naks: u32, ignored: Option<dhcp::Error> },
    /// Too many replies that could not be used (a flood, or a broken server).
    TooManyIgnored,
}

impl core::fmt::Display for Failure {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Failure::NoLease { waited_ms, offers, naks, ignored } => {
                write!(f, "no DHCP lease within {} ms", Decimal(*waited_ms))?;
                match (offers, naks) {
                    (0, 0) => f.write_str(": no server answered")?,
                    (_, 0) => write!(f, ": {} offers, no acknowledgement", Decimal((*offers).into()))?,
                    _ => write!(f, ": the server refused (DHCPNAK) {} times", Decimal((*naks).into()))?,
                }
                if let Some(e) = ignored {
                    write!(f, "; a reply was ignored: {e}")?;
                }
                Ok(())
            }
            Failure::TooManyIgnored => f.write_str("more than 1000 unusable DHCP replies"),
        }
    }
}

/// What the caller does next.
// A lease is returned once per exchange: its size is not worth a second call.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, PartialEq, Eq)]
pub enum Step<'b> {
    /// Send this IPv4 packet on the interface, to the link-layer broadcast address.
    Send(&'b [u8]),
    /// Wait for a packet until this time, then call `step` again.
    Wait { until_ms: u64 },
    /// An ACK: apply the lease.
    Bound(Lease),
    Failed(Failure),
}

/// What happened, for the log: the caller may print it after each `step`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    Offered { address: Ipv4Addr, server: Ipv4Addr },
    Refused { server: Option<Ipv4Addr> },
}

pub struct Client {
    mac: [u8; 6],
    xid: u32,
    state: State,
    started_ms: u64,
    deadline_ms: u64,
    next_send_ms: u64,
    attempts: u32,
    offers: u32,
    naks: u32,
    ignored: u32,
    last_ignored: Option<dhcp::Error>,
    /// The last thing worth logging, taken by `take_event`.
    event: Option<Event>,
}

impl Client {
    /// A client for the interface with `mac`, starting now; `previous` is the address of
    /// an earlier lease, asked for again first. `xid` should be random.
    pub fn new(mac: [u8; 6], xid: u32, now_ms: u64, timeout_ms: u64, previous: Option<Ipv4Addr>) -> Client {
        Client {
            mac,
            xid,
            state: match previous {
                Some(address) => State::Rebooting { address },
                None => State::Selecting,
            },
            started_ms: now_ms,
            deadline_ms: now_ms + timeout_ms,
            next_send_ms: now_ms,
            attempts: 0,
            offers: 0,
            naks: 0,
            ignored: 0,
            last_ignored: None,
            event: None,
        }
    }

    pub fn take_event(&mut self) -> Option<Event> {
        self.event.take()
    }

    /// Takes what was received (an IPv4 packet), if anything, and says what to do next;
    /// the packet to send goes into `out`.
    // `step` and `Packet::lease` stay out of line: inlined into the exchange loop they
    // made one function too large for its values to stay in registers (904 bytes more
    // with `receive`, which inlined into `step` alone costs 120 bytes less than its call).
    #[inline(never)]
    pub fn step<'b>(&mut self, now_ms: u64, received: Option<&[u8]>, out: &'b mut [u8; PACKET_LIMIT]) -> Step<'b> {
        if let Some(packet) = received {
            if let Some(lease) = self.receive(now_ms, packet) {
                self.state = State::Bound;
                return Step::Bound(lease);
            }
            if self.ignored > IGNORED_LIMIT {
                return Step::Failed(Failure::TooManyIgnored);
            }
        }
        if self.state == State::Bound || now_ms >= self.deadline_ms {
            return Step::Failed(Failure::NoLease {
                waited_ms: self.deadline_ms - self.started_ms,
                offers: self.offers,
                naks: self.naks,
                ignored: self.last_ignored,
            });
        }
        if now_ms < self.next_send_ms {
            return Step::Wait { until_ms: self.next_send_ms.min(self.deadline_ms) };
        }
        // Out of attempts for this address: discover again.
        if matches!(self.state, State::Rebooting { .. } | State::Requesting { .. }) && self.attempts >= REQUEST_ATTEMPTS {
            self.state = State::Selecting;
            self.attempts = 0;
        }
        let (kind, requested, server) = match self.state {
            State::Rebooting { address } => (MessageType::Request, Some(address), None),
            State::Requesting { address, server } => (MessageType::Request, Some(address), Some(server)),
            _ => (MessageType::Discover, None, None),
        };
        let message = ClientMessage {
            kind,
            xid: self.xid,
            mac: self.mac,
            secs: ((now_ms - self.started_ms) / 1000).min(u16::MAX as u64) as u16,
            broadcast: true,
            requested,
            server,
        };
        let backoff = RETRANSMIT_FIRST_MS.checked_shl(self.attempts).unwrap_or(RETRANSMIT_MAX_MS).min(RETRANSMIT_MAX_MS);
        self.attempts += 1;
        self.next_send_ms = now_ms + backoff;
        let mut dhcp_message = [0u8; PACKET_LIMIT - ipv4_udp::HEADER_LEN];
        let payload = message.emit(&mut dhcp_message).unwrap_or(&[]);
        let datagram = Datagram {
            source: Ipv4Addr::UNSPECIFIED,
            destination: Ipv4Addr::BROADCAST,
            source_port: dhcp::CLIENT_PORT,
            destination_port: dhcp::SERVER_PORT,
            payload,
        };
        // Both buffers have the sizes the messages need: neither emit can fail.
        datagram.emit(out).map_or(Step::Wait { until_ms: self.next_send_ms }, Step::Send)
    }

    /// A reply for this client moves the state on; the lease when it binds.
    fn receive(&mut self, now_ms: u64, packet: &[u8]) -> Option<Lease> {
        let datagram = Datagram::parse(packet).filter(|d| d.destination_port == dhcp::CLIENT_PORT)?;
        let reply = Packet::new_checked(datagram.payload).ok()?;
        if !reply.is_reply() || reply.xid() != self.xid || reply.client_hardware() != self.mac {
            return None;
        }
        let lease = match reply.lease() {
            Ok(lease) => lease,
            Err(e) => {
                self.ignored += 1;
                self.last_ignored = Some(e);
                return None;
            }
        };
        match (reply.message_type(), self.state) {
            (Some(MessageType::Offer), State::Selecting) => {
                let (Some(address), Some(server)) = (lease.address, lease.server) else {
                    self.ignored += 1;
                    return None;
                };
                self.offers += 1;
                self.event = Some(Event::Offered { address, server });
                self.state = State::Requesting { address, server };
                self.attempts = 0;
                self.next_send_ms = now_ms;
                None
            }
            (Some(MessageType::Ack), State::Requesting { address, server }) if lease.server == Some(server) => {
                (lease.address == Some(address)).then_some(lease)
            }
            (Some(MessageType::Ack), State::Rebooting { address }) => (lease.address == Some(address)).then_some(lease),
            (Some(MessageType::Nak), State::Requesting { .. } | State::Rebooting { .. }) => {
                self.naks += 1;
                self.event = Some(Event::Refused { server: lease.server });
                self.state = State::Selecting;
                self.attempts = 0;
                self.next_send_ms = now_ms;
                None
            }
            _ => {
                self.ignored += 1;
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static OFFER: &[u8] = include_bytes!("captures/dnsmasq-offer.ip");
    static ACK: &[u8] = include_bytes!("captures/dnsmasq-ack.ip");
    const MAC: [u8; 6] = [2, 0, 0, 0, 0, 2];

    fn xid() -> u32 {
        Packet::new_checked(Datagram::parse(OFFER).unwrap().payload).unwrap().xid()
    }

    /// The DHCP message in a packet the client sent.
    fn sent(step: Step<'_>) -> (MessageType, Vec<(u8, Vec<u8>)>) {
        let Step::Send(packet) = step else { panic!("expected a packet, got {step:?}") };
        let datagram = Datagram::parse(packet).unwrap();
        assert_eq!((datagram.destination, datagram.destination_port), (Ipv4Addr::BROADCAST, 67));
        let message = Packet::new_checked(datagram.payload).unwrap();
        let options = message.options().map(|o| o.map(|(c, v)| (c, v.to_vec())).unwrap()).collect();
        (message.message_type().unwrap(), options)
    }

    /// The server's reply with its message type (option 53, the first) replaced.
    fn as_type(packet: &[u8], kind: MessageType) -> Vec<u8> {
        let mut bytes = packet.to_vec();
        let at = 28 + 240;
        assert_eq!(bytes[at], 53);
        bytes[at + 2] = kind as u8;
        bytes
    }

    #[test]
    fn discover_offer_request_ack() {
        let mut out = [0u8; PACKET_LIMIT];
        let mut client = Client::new(MAC, xid(), 0, 30_000, None);
        assert_eq!(sent(client.step(0, None, &mut out)).0, MessageType::Discover);
        assert_eq!(client.step(10, None, &mut out), Step::Wait { until_ms: 1000 });
        let (kind, options) = sent(client.step(20, Some(OFFER), &mut out));
        assert_eq!(kind, MessageType::Request);
        assert!(options.contains(&(50, vec![10, 9, 0, 56])) && options.contains(&(54, vec![10, 9, 0, 1])));
        assert_eq!(client.take_event(), Some(Event::Offered { address: Ipv4Addr::new(10, 9, 0, 56), server: Ipv4Addr::new(10, 9, 0, 1) }));
        let Step::Bound(lease) = client.step(30, Some(ACK), &mut out) else { panic!() };
        assert_eq!(lease.address, Some(Ipv4Addr::new(10, 9, 0, 56)));
        assert_eq!(lease.classless_routes.len(), 2);
    }

    #[test]
    fn retransmits_with_backoff_until_the_deadline() {
        let mut out = [0u8; PACKET_LIMIT];
        let mut client = Client::new(MAC, 1, 0, 10_000, None);
        let mut sends = vec![];
        let mut now = 0;
        loop {
            match client.step(now, None, &mut out) {
                Step::Send(_) => sends.push(now),
                Step::Wait { until_ms } => now = until_ms,
                Step::Failed(failure) => {
                    assert_eq!(failure, Failure::NoLease { waited_ms: 10_000, offers: 0, naks: 0, ignored: None });
                    assert_eq!(failure.to_string(), "no DHCP lease within 10000 ms: no server answered");
                    assert_eq!(Failure::TooManyIgnored.to_string(), "more than 1000 unusable DHCP replies");
                    break;
                }
                Step::Bound(_) => panic!(),
            }
        }
        assert_eq!(sends, [0, 1000, 3000, 7000]);
    }

    #[test]
    fn nak_starts_over_with_discover() {
        let mut out = [0u8; PACKET_LIMIT];
        let mut client = Client::new(MAC, xid(), 0, 30_000, Some(Ipv4Addr::new(10, 9, 0, 99)));
        let (kind, options) = sent(client.step(0, None, &mut out));
        assert_eq!(kind, MessageType::Request);
        assert!(options.contains(&(50, vec![10, 9, 0, 99])));
        assert!(!options.iter().any(|(code, _)| *code == 54));
        let nak = as_type(ACK, MessageType::Nak);
        assert_eq!(sent(client.step(5, Some(&nak), &mut out)).0, MessageType::Discover);
        assert_eq!(client.take_event(), Some(Event::Refused { server: Some(Ipv4Addr::new(10, 9, 0, 1)) }));
        sent(client.step(6, Some(OFFER), &mut out));
        assert!(matches!(client.step(7, Some(ACK), &mut out), Step::Bound(_)));
    }

    #[test]
    fn naks_until_the_deadline_say_so() {
        let mut out = [0u8; PACKET_LIMIT];
        let mut client = Client::new(MAC, xid(), 0, 5_000, None);
        let nak = as_type(ACK, MessageType::Nak);
        sent(client.step(0, None, &mut out));
        sent(client.step(1, Some(OFFER), &mut out));
        sent(client.step(2, Some(&nak), &mut out));
        let Step::Failed(failure) = client.step(5_000, None, &mut out) else { panic!() };
        assert_eq!(failure.to_string(), "no DHCP lease within 5000 ms: the server refused (DHCPNAK) 1 times");
    }

    #[test]
    fn replies_for_others_are_ignored() {
        let mut out = [0u8; PACKET_LIMIT];
        let mut client = Client::new([2, 0, 0, 0, 0, 9], xid(), 0, 30_000, None);
        sent(client.step(0, None, &mut out));
        assert_eq!(client.step(1, Some(OFFER), &mut out), Step::Wait { until_ms: 1000 });
        let mut other_xid = Client::new(MAC, xid() ^ 1, 0, 30_000, None);
        sent(other_xid.step(0, None, &mut out));
        assert_eq!(other_xid.step(1, Some(OFFER), &mut out), Step::Wait { until_ms: 1000 });
        // An ACK while selecting, and garbage, change nothing.
        let mut client = Client::new(MAC, xid(), 0, 30_000, None);
        sent(client.step(0, None, &mut out));
        assert_eq!(client.step(1, Some(ACK), &mut out), Step::Wait { until_ms: 1000 });
        assert_eq!(client.step(2, Some(&[0x45; 40]), &mut out), Step::Wait { until_ms: 1000 });
    }

    #[test]
    fn damaged_replies_never_bind_another_address() {
        let mut garbage = crate::fuzz::Garbage::new(2131);
        let mut out = [0u8; PACKET_LIMIT];
        for _ in 0..3000 {
            let mut client = Client::new(MAC, xid(), 0, 30_000, None);
            sent(client.step(0, None, &mut out));
            let offer = garbage.mutated(OFFER, 28..OFFER.len(), 3);
            let _ = client.step(1, Some(&offer), &mut out);
            let ack = garbage.mutated(ACK, 28..ACK.len(), 3);
            if let Step::Bound(lease) = client.step(2, Some(&ack), &mut out) {
                // Only a reply that still says what the client asked for binds.
                assert!(lease.address.is_some());
            }
        }
    }

    #[test]
    fn gives_up_on_a_silent_offerer() {
        let mut out = [0u8; PACKET_LIMIT];
        let mut client = Client::new(MAC, xid(), 0, 60_000, None);
        sent(client.step(0, None, &mut out));
        assert_eq!(sent(client.step(1, Some(OFFER), &mut out)).0, MessageType::Request);
        assert_eq!(sent(client.step(1001, None, &mut out)).0, MessageType::Request);
        assert_eq!(sent(client.step(3001, None, &mut out)).0, MessageType::Request);
        assert_eq!(sent(client.step(7001, None, &mut out)).0, MessageType::Discover);
    }
}
