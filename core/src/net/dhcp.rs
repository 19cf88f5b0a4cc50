//! DHCPv4 messages (RFC 2131) and the options wisp reads and sends (RFC 2132, RFC 3397's
//! domain search, RFC 3442's classless static routes): a checked view of a server's reply,
//! the `Lease` it offers, and the DISCOVER and REQUEST a client sends.

use core::net::Ipv4Addr;

mod field {
    use core::ops::Range;
    pub const OP: usize = 0;
    pub const HARDWARE_TYPE: usize = 1;
    pub const HARDWARE_LEN: usize = 2;
    pub const XID: Range<usize> = 4..8;
    pub const SECS: Range<usize> = 8..10;
    pub const FLAGS: Range<usize> = 10..12;
    pub const YOUR_ADDRESS: Range<usize> = 16..20;
    pub const CLIENT_HARDWARE: Range<usize> = 28..34;
    pub const MAGIC: Range<usize> = 236..240;
    pub const OPTIONS: usize = 240;
}

const MAGIC: [u8; 4] = [99, 130, 83, 99];
const OP_REQUEST: u8 = 1;
const OP_REPLY: u8 = 2;
const FLAG_BROADCAST: u16 = 0x8000;
/// BOOTP's smallest message (RFC 1542): some relays drop shorter ones.
const MIN_MESSAGE_LEN: usize = 300;

pub const CLIENT_PORT: u16 = 68;
pub const SERVER_PORT: u16 = 67;

mod option {
    pub const PAD: u8 = 0;
    pub const SUBNET_MASK: u8 = 1;
    pub const ROUTER: u8 = 3;
    pub const DNS: u8 = 6;
    pub const HOST_NAME: u8 = 12;
    pub const DOMAIN_NAME: u8 = 15;
    pub const MTU: u8 = 26;
    pub const REQUESTED_ADDRESS: u8 = 50;
    pub const LEASE_TIME: u8 = 51;
    pub const MESSAGE_TYPE: u8 = 53;
    pub const SERVER_ID: u8 = 54;
    pub const PARAMETERS: u8 = 55;
    pub const MAX_MESSAGE_SIZE: u8 = 57;
    pub const CLIENT_ID: u8 = 61;
    pub const DOMAIN_SEARCH: u8 = 119;
    pub const CLASSLESS_ROUTES: u8 = 121;
    pub const END: u8 = 255;
}

/// What a client asks for (option 55).
const PARAMETERS: [u8; 10] = [
    option::SUBNET_MASK,
    option::ROUTER,
    option::DNS,
    option::HOST_NAME,
    option::DOMAIN_NAME,
    option::MTU,
    option::LEASE_TIME,
    option::SERVER_ID,
    option::DOMAIN_SEARCH,
    option::CLASSLESS_ROUTES,
];

/// Most DNS servers kept: resolv.conf's MAXNS.
pub const DNS_LIMIT: usize = 3;
/// Most classless static routes kept from option 121.
pub const ROUTES_LIMIT: usize = 16;
/// Longest domain name, host name or search list (as text) kept.
pub const NAME_LIMIT: usize = 255;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MessageType {
    Discover = 1,
    Offer = 2,
    Request = 3,
    Decline = 4,
    Ack = 5,
    Nak = 6,
    Release = 7,
    Inform = 8,
}

impl MessageType {
    fn from_byte(byte: u8) -> Option<MessageType> {
        use MessageType::*;
        [Discover, Offer, Request, Decline, Ack, Nak, Release, Inform].into_iter().find(|t| *t as u8 == byte)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// Shorter than a DHCP message, or without the magic cookie.
    NotDhcp,
    /// An option whose length runs past the message, or whose value has the wrong shape.
    BadOption { code: u8 },
    /// An option with more entries than wisp keeps (DNS servers are cut at DNS_LIMIT
    /// instead: resolv.conf reads no more).
    TooMany { code: u8, limit: u16 },
}

impl core::fmt::Display for Error {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Error::NotDhcp => f.write_str("not a DHCP message"),
            // As u32, whose formatting the binary carries anyway; u8's would be more code.
            Error::BadOption { code } => write!(f, "malformed DHCP option {}", crate::text::Decimal((*code).into())),
            Error::TooMany { code, limit } => write!(f, "DHCP option {} has more than {} entries", crate::text::Decimal((*code).into()), crate::text::Decimal((*limit).into())),
        }
    }
}

/// A route from option 121: `destination/prefix_len` through `gateway` (0.0.0.0: on-link).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClasslessRoute {
    pub destination: Ipv4Addr,
    pub prefix_len: u8,
    pub gateway: Ipv4Addr,
}

pub type Name = heapless::Vec<u8, NAME_LIMIT>;

/// What a server's OFFER or ACK gives the client.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Lease {
    pub address: Option<Ipv4Addr>,
    pub prefix_len: u8,
    /// The first router of option 3.
    pub router: Option<Ipv4Addr>,
    /// Option 121; when present it replaces the router option (RFC 3442).
    pub classless_routes: heapless::Vec<ClasslessRoute, ROUTES_LIMIT>,
    pub dns: heapless::Vec<Ipv4Addr, DNS_LIMIT>,
    pub domain: Name,
    /// Option 119's names, separated by spaces.
    pub search: Name,
    pub host_name: Name,
    pub mtu: Option<u16>,
    pub lease_seconds: Option<u32>,
    pub server: Option<Ipv4Addr>,
}

/// A server's reply, checked: its fixed part as an array (every field's place is then
/// known to fit), and the options after it.
#[derive(Clone, Copy, Debug)]
pub struct Packet<'a> {
    header: &'a [u8; field::OPTIONS],
    options: &'a [u8],
}

impl<'a> Packet<'a> {
    pub fn new_checked(bytes: &'a [u8]) -> Result<Packet<'a>, Error> {
        match bytes.split_first_chunk() {
            Some((header, options)) if header[field::MAGIC] == MAGIC => Ok(Packet { header, options }),
            _ => Err(Error::NotDhcp),
        }
    }

    pub fn is_reply(&self) -> bool {
        self.header[field::OP] == OP_REPLY
    }

    pub fn xid(&self) -> u32 {
        let [a, b, c, d, ..] = self.header[field::XID] else { return 0 };
        u32::from_be_bytes([a, b, c, d])
    }

    pub fn client_hardware(&self) -> &'a [u8] {
        &self.header[field::CLIENT_HARDWARE]
    }

    pub fn your_address(&self) -> Ipv4Addr {
        let [a, b, c, d, ..] = self.header[field::YOUR_ADDRESS] else { return Ipv4Addr::UNSPECIFIED };
        Ipv4Addr::new(a, b, c, d)
    }

    /// The options: `(code, value)`, pads skipped, up to END.
    pub fn options(&self) -> Options<'a> {
        Options { rest: self.options }
    }

    pub fn message_type(&self) -> Option<MessageType> {
        self.options().flatten().find(|(code, _)| *code == option::MESSAGE_TYPE).and_then(|(_, v)| MessageType::from_byte(*v.first()?))
    }

    /// The lease the options describe.
    // Out of line, as `dhcp_client::Client::step` says why.
    #[inline(never)]
    pub fn lease(&self) -> Result<Lease, Error> {
        let mut lease = Lease::default();
        let yours = self.your_address();
        if !yours.is_unspecified() {
            lease.address = Some(yours);
        }
        for option in self.options() {
            let (code, value) = option?;
            let bad = Error::BadOption { code };
            match code {
                option::SUBNET_MASK => {
                    let mask = u32::from_be_bytes(value.try_into().map_err(|_| bad)?);
                    if mask.leading_ones() + mask.trailing_zeros() != 32 {
                        return Err(bad);
                    }
                    lease.prefix_len = mask.leading_ones() as u8;
                }
                option::ROUTER | option::SERVER_ID => {
                    *if code == option::ROUTER { &mut lease.router } else { &mut lease.server } = Some(address(value.first_chunk().ok_or(bad)?));
                }
                option::DNS => {
                    if value.is_empty() || value.len() % 4 != 0 {
                        return Err(bad);
                    }
                    for server in value.as_chunks().0.iter().take(DNS_LIMIT) {
                        let _ = lease.dns.push(address(server));
                    }
                }
                option::HOST_NAME => name(value, code, &mut lease.host_name)?,
                option::DOMAIN_NAME => name(value, code, &mut lease.domain)?,
                option::MTU => lease.mtu = Some(u16::from_be_bytes(value.try_into().map_err(|_| bad)?)),
                option::LEASE_TIME => lease.lease_seconds = Some(u32::from_be_bytes(value.try_into().map_err(|_| bad)?)),
                option::DOMAIN_SEARCH => search_list(value, &mut lease.search)?,
                option::CLASSLESS_ROUTES => classless_routes(value, &mut lease.classless_routes)?,
                _ => {}
            }
        }
        Ok(lease)
    }
}

fn address(bytes: &[u8; 4]) -> Ipv4Addr {
    Ipv4Addr::from(*bytes)
}

// The readers below write into the lease's own field, replacing what an earlier copy of
// the option left there: a `Name` returned by value is 256 bytes copied at each call.

/// A name option: printable ASCII with no spaces (it goes into resolv.conf and logs).
fn name(value: &[u8], code: u8, into: &mut Name) -> Result<(), Error> {
    let value = value.strip_suffix(&[0]).unwrap_or(value);
    if value.is_empty() || !value.iter().all(|b| b.is_ascii_graphic()) {
        return Err(Error::BadOption { code });
    }
    into.clear();
    into.extend_from_slice(value).map_err(|_| Error::TooMany { code, limit: NAME_LIMIT as u16 })
}

/// RFC 3442: each route is a prefix width, the destination's significant octets, and
/// the router.
fn classless_routes(mut value: &[u8], routes: &mut heapless::Vec<ClasslessRoute, ROUTES_LIMIT>) -> Result<(), Error> {
    let code = option::CLASSLESS_ROUTES;
    routes.clear();
    while let Some((&width, rest)) = value.split_first() {
        let bad = Error::BadOption { code };
        if width > 32 {
            return Err(bad);
        }
        let (significant, rest) = rest.split_at_checked((width as usize).div_ceil(8)).ok_or(bad)?;
        let (gateway, rest) = rest.split_first_chunk().ok_or(bad)?;
        let mut destination = [0u8; 4];
        destination.get_mut(..significant.len()).ok_or(bad)?.copy_from_slice(significant);
        // Bits past the width in the last significant octet mean nothing, and the kernel
        // refuses a route whose destination has them: they are cleared, not kept.
        let mask = u32::MAX.checked_shl(32 - u32::from(width)).unwrap_or(0);
        let destination = Ipv4Addr::from(u32::from_be_bytes(destination) & mask);
        let route = ClasslessRoute { destination, prefix_len: width, gateway: address(gateway) };
        routes.push(route).map_err(|_| Error::TooMany { code, limit: ROUTES_LIMIT as u16 })?;
        value = rest;
    }
    Ok(())
}

/// RFC 3397: names in DNS wire form (RFC 1035 4.1.4), compression pointers included,
/// written out as text separated by spaces.
fn search_list(value: &[u8], out: &mut Name) -> Result<(), Error> {
    let bad = Error::BadOption { code: option::DOMAIN_SEARCH };
    let too_long = Error::TooMany { code: option::DOMAIN_SEARCH, limit: NAME_LIMIT as u16 };
    out.clear();
    let mut start = 0;
    while start < value.len() {
        if !out.is_empty() {
            out.push(b' ').map_err(|_| too_long)?;
        }
        let mut at = start;
        let mut end_of_name = None;
        let mut first_label = true;
        // Each pointer must land before the last one's target (the first before this
        // name), so a name ends in at most `value.len()` jumps.
        let mut pointer_limit = start;
        loop {
            let &len = value.get(at).ok_or(bad)?;
            match len {
                0 => {
                    end_of_name.get_or_insert(at + 1);
                    break;
                }
                0xc0..=0xff => {
                    let target = (((len & 0x3f) as usize) << 8) | *value.get(at + 1).ok_or(bad)? as usize;
                    end_of_name.get_or_insert(at + 2);
                    if target >= pointer_limit {
                        return Err(bad);
                    }
                    pointer_limit = target;
                    at = target;
                }
                1..=63 => {
                    let label = value.get(at + 1..at + 1 + len as usize).ok_or(bad)?;
                    if !first_label {
                        out.push(b'.').map_err(|_| too_long)?;
                    }
                    first_label = false;
                    if !label.iter().all(|b| b.is_ascii_graphic()) {
                        return Err(bad);
                    }
                    out.extend_from_slice(label).map_err(|_| too_long)?;
                    at += 1 + len as usize;
                }
                _ => return Err(bad),
            }
        }
        if first_label {
            return Err(bad);
        }
        start = end_of_name.unwrap_or(value.len());
    }
    Ok(())
}

pub struct Options<'a> {
    rest: &'a [u8],
}

impl<'a> Iterator for Options<'a> {
    type Item = Result<(u8, &'a [u8]), Error>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let (&code, rest) = self.rest.split_first()?;
            match code {
                option::PAD => self.rest = rest,
                option::END => {
                    self.rest = &[];
                    return None;
                }
                _ => {
                    let Some((&len, rest)) = rest.split_first().filter(|(len, rest)| **len as usize <= rest.len()) else {
                        self.rest = &[];
                        return Some(Err(Error::BadOption { code }));
                    };
                    let (value, rest) = rest.split_at(len as usize);
                    self.rest = rest;
                    return Some(Ok((code, value)));
                }
            }
        }
    }
}

/// A client's DISCOVER or REQUEST.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientMessage {
    pub kind: MessageType,
    pub xid: u32,
    pub mac: [u8; 6],
    pub secs: u16,
    /// Asks the server to broadcast its reply (RFC 2131 4.1), as a client with no
    /// address yet should when it cannot receive unicast.
    pub broadcast: bool,
    /// Option 50: the address wanted (the offer's, or the last lease's).
    pub requested: Option<Ipv4Addr>,
    /// Option 54: the server whose offer is taken.
    pub server: Option<Ipv4Addr>,
}

impl ClientMessage {
    /// The message, padded to BOOTP's 300 bytes; `None` if `buffer` is smaller.
    pub fn emit<'b>(&self, buffer: &'b mut [u8]) -> Option<&'b [u8]> {
        let message = buffer.get_mut(..MIN_MESSAGE_LEN)?;
        message.fill(0);
        let (header, options) = message.split_first_chunk_mut::<{ field::OPTIONS }>()?;
        header[field::OP] = OP_REQUEST;
        header[field::HARDWARE_TYPE] = 1;
        header[field::HARDWARE_LEN] = 6;
        header[field::XID].copy_from_slice(&self.xid.to_be_bytes());
        header[field::SECS].copy_from_slice(&self.secs.to_be_bytes());
        let flags = if self.broadcast { FLAG_BROADCAST } else { 0 };
        header[field::FLAGS].copy_from_slice(&flags.to_be_bytes());
        header[field::CLIENT_HARDWARE].copy_from_slice(&self.mac);
        header[field::MAGIC].copy_from_slice(&MAGIC);
        // The options below take 42 bytes of the 60 after the header: `put` cannot fail.
        let mut out = crate::out::Out::new(options);
        let mut put = |code: u8, value: &[u8]| {
            let _ = out.put_all(&[&[code, value.len() as u8], value]);
        };
        put(option::MESSAGE_TYPE, &[self.kind as u8]);
        let mut client_id = [1u8; 7];
        client_id[1..].copy_from_slice(&self.mac);
        put(option::CLIENT_ID, &client_id);
        if let Some(requested) = self.requested {
            put(option::REQUESTED_ADDRESS, &requested.octets());
        }
        if let Some(server) = self.server {
            put(option::SERVER_ID, &server.octets());
        }
        put(option::MAX_MESSAGE_SIZE, &576u16.to_be_bytes());
        put(option::PARAMETERS, &PARAMETERS);
        let _ = out.put(&[option::END]);
        Some(message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::ipv4_udp::Datagram;

    static DISCOVER: &[u8] = include_bytes!("captures/udhcpc-discover.ip");
    static OFFER: &[u8] = include_bytes!("captures/dnsmasq-offer.ip");
    static ACK: &[u8] = include_bytes!("captures/dnsmasq-ack.ip");
    const MAC: [u8; 6] = [2, 0, 0, 0, 0, 2];

    fn packet(ip: &[u8]) -> Packet<'_> {
        Packet::new_checked(Datagram::parse(ip).unwrap().payload).unwrap()
    }

    #[test]
    fn reads_dnsmasqs_ack() {
        for capture in [DISCOVER, OFFER, ACK] {
            crate::fuzz::seed("dhcp", capture);
        }
        let ack = packet(ACK);
        assert!(ack.is_reply());
        assert_eq!(ack.xid(), packet(DISCOVER).xid());
        assert_eq!(ack.client_hardware(), MAC);
        assert_eq!(ack.message_type(), Some(MessageType::Ack));
        let lease = ack.lease().unwrap();
        let net = |d| Ipv4Addr::new(10, 9, 0, d);
        assert_eq!(lease.address, Some(net(56)));
        assert_eq!(lease.prefix_len, 24);
        assert_eq!(lease.router, Some(net(1)));
        assert_eq!(lease.server, Some(net(1)));
        assert_eq!(lease.dns.as_slice(), [net(1), net(2)]);
        assert_eq!(lease.domain.as_slice(), b"example.test");
        assert_eq!(lease.search.as_slice(), b"a.test b.test");
        assert_eq!(lease.host_name.as_slice(), b"cap");
        assert_eq!(lease.mtu, Some(1400));
        assert_eq!(lease.lease_seconds, Some(3600));
        assert_eq!(
            lease.classless_routes.as_slice(),
            [
                ClasslessRoute { destination: Ipv4Addr::new(169, 254, 169, 254), prefix_len: 32, gateway: net(1) },
                ClasslessRoute { destination: Ipv4Addr::UNSPECIFIED, prefix_len: 0, gateway: net(1) },
            ]
        );
    }

    #[test]
    fn reads_dnsmasqs_offer() {
        let offer = packet(OFFER);
        assert_eq!(offer.message_type(), Some(MessageType::Offer));
        assert_eq!(offer.lease().unwrap().address, Some(Ipv4Addr::new(10, 9, 0, 56)));
    }

    #[test]
    fn discover_has_udhcpcs_fixed_part() {
        let theirs = packet(DISCOVER);
        let message = ClientMessage {
            kind: MessageType::Discover,
            xid: theirs.xid(),
            mac: MAC,
            secs: 0,
            broadcast: false,
            requested: None,
            server: None,
        };
        let mut buf = [0u8; 400];
        let ours = message.emit(&mut buf).unwrap();
        let udhcpc = Datagram::parse(DISCOVER).unwrap().payload;
        assert_eq!(ours.len(), udhcpc.len());
        assert_eq!(ours[..field::OPTIONS], udhcpc[..field::OPTIONS]);
        let parsed = Packet::new_checked(ours).unwrap();
        assert_eq!(parsed.message_type(), Some(MessageType::Discover));
        let codes: Vec<u8> = parsed.options().map(|o| o.unwrap().0).collect();
        assert_eq!(codes, [53, 61, 57, 55]);
    }

    #[test]
    fn request_carries_address_and_server() {
        let message = ClientMessage {
            kind: MessageType::Request,
            xid: 7,
            mac: MAC,
            secs: 3,
            broadcast: true,
            requested: Some(Ipv4Addr::new(10, 9, 0, 56)),
            server: Some(Ipv4Addr::new(10, 9, 0, 1)),
        };
        let mut buf = [0u8; 300];
        let bytes = message.emit(&mut buf).unwrap();
        assert_eq!(&bytes[10..12], [0x80, 0]);
        let options: Vec<(u8, Vec<u8>)> = Packet::new_checked(bytes).unwrap().options().map(|o| o.map(|(c, v)| (c, v.to_vec())).unwrap()).collect();
        assert!(options.contains(&(50, vec![10, 9, 0, 56])));
        assert!(options.contains(&(54, vec![10, 9, 0, 1])));
        assert!(options.contains(&(53, vec![3])));
        assert!(message.emit(&mut [0u8; 299]).is_none());
    }

    fn with_options(options: &[u8]) -> Vec<u8> {
        let mut bytes = vec![0u8; 240];
        bytes[0] = OP_REPLY;
        bytes[236..240].copy_from_slice(&MAGIC);
        bytes.extend_from_slice(options);
        bytes
    }

    #[test]
    fn classless_routes_of_rfc3442() {
        // 10.0.0.0/8 via 10.0.0.1, 10.17.0.0/16 on-link, 192.168.3.0/24 via 1.2.3.4.
        let bytes = with_options(&[121, 21, 8, 10, 10, 0, 0, 1, 16, 10, 17, 0, 0, 0, 0, 24, 192, 168, 3, 1, 2, 3, 4, 255]);
        crate::fuzz::seed("dhcp", &bytes);
        let routes = Packet::new_checked(&bytes).unwrap().lease().unwrap().classless_routes;
        assert_eq!(routes[0], ClasslessRoute { destination: Ipv4Addr::new(10, 0, 0, 0), prefix_len: 8, gateway: Ipv4Addr::new(10, 0, 0, 1) });
        assert_eq!(routes[1], ClasslessRoute { destination: Ipv4Addr::new(10, 17, 0, 0), prefix_len: 16, gateway: Ipv4Addr::UNSPECIFIED });
        assert_eq!(routes[2].destination, Ipv4Addr::new(192, 168, 3, 0));
        // 10.128.0.0/9 written with a stray bit past its width (10.255/9) on-link, and a
        // default route (width 0): the destination keeps only the bits of its prefix.
        let bytes = with_options(&[121, 12, 9, 10, 255, 0, 0, 0, 0, 0, 192, 168, 0, 1]);
        let routes = Packet::new_checked(&bytes).unwrap().lease().unwrap().classless_routes;
        assert_eq!(routes[0], ClasslessRoute { destination: Ipv4Addr::new(10, 128, 0, 0), prefix_len: 9, gateway: Ipv4Addr::UNSPECIFIED });
        assert_eq!(routes[1], ClasslessRoute { destination: Ipv4Addr::UNSPECIFIED, prefix_len: 0, gateway: Ipv4Addr::new(192, 168, 0, 1) });
        for bad in [&[121, 2, 33, 0][..], &[121, 4, 24, 10, 0, 0]] {
            let bytes = with_options(bad);
            assert_eq!(Packet::new_checked(&bytes).unwrap().lease().unwrap_err(), Error::BadOption { code: 121 });
        }
    }

    #[test]
    fn bad_options_are_named() {
        let cases: [(&[u8], Error); 5] = [
            (&[1, 4, 255, 0, 255, 0], Error::BadOption { code: 1 }),
            (&[6, 3, 1, 1, 1], Error::BadOption { code: 6 }),
            (&[26, 9, 1], Error::BadOption { code: 26 }),
            (&[119, 3, 0xc0, 0x05, 0], Error::BadOption { code: 119 }),
            (&[119, 4, 1, b'a', 0xc0, 0x00], Error::BadOption { code: 119 }),
        ];
        for (options, error) in cases {
            let bytes = with_options(options);
            assert_eq!(Packet::new_checked(&bytes).unwrap().lease().unwrap_err(), error, "{options:?}");
        }
        assert_eq!(Packet::new_checked(&[0u8; 239]).unwrap_err(), Error::NotDhcp);
    }

    #[test]
    fn any_bytes_parse_without_panic() {
        let mut state = 0x9e37_79b9u32;
        for _ in 0..3000 {
            let mut options = [0u8; 48];
            for b in options.iter_mut() {
                state = state.wrapping_mul(1_103_515_245).wrapping_add(12345);
                *b = match (state >> 24) % 4 {
                    0 => [1, 3, 6, 119, 121, 26, 51][(state >> 8) as usize % 7],
                    _ => (state >> 16) as u8 % 40,
                };
            }
            let bytes = with_options(&options);
            let _ = Packet::new_checked(&bytes).unwrap().lease();
        }
    }
}
