//! The IPv4 (RFC 791) and UDP (RFC 768) headers around a DHCP message. wisp's DHCP
//! socket is a packet socket (packet(7), SOCK_DGRAM): it sends and receives whole IP
//! packets, with the kernel adding and removing only the link-layer header, so an
//! interface with no address yet can still be spoken on.

use core::net::Ipv4Addr;

mod field {
    use core::ops::Range;
    pub const VERSION_IHL: usize = 0;
    pub const TOTAL_LEN: Range<usize> = 2..4;
    pub const FRAGMENT: Range<usize> = 6..8;
    pub const TTL: usize = 8;
    pub const PROTOCOL: usize = 9;
    pub const CHECKSUM: Range<usize> = 10..12;
    pub const SOURCE: Range<usize> = 12..16;
    pub const DESTINATION: Range<usize> = 16..20;
    // UDP, from the start of its header.
    pub const SOURCE_PORT: Range<usize> = 0..2;
    pub const DESTINATION_PORT: Range<usize> = 2..4;
    pub const UDP_LEN: Range<usize> = 4..6;
    pub const UDP_CHECKSUM: Range<usize> = 6..8;
}

pub const IPV4_HEADER_LEN: usize = 20;
pub const UDP_HEADER_LEN: usize = 8;
pub const HEADER_LEN: usize = IPV4_HEADER_LEN + UDP_HEADER_LEN;
const PROTOCOL_UDP: u8 = 17;
const TTL: u8 = 64;

/// A UDP datagram carried in an IPv4 packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Datagram<'a> {
    pub source: Ipv4Addr,
    pub destination: Ipv4Addr,
    pub source_port: u16,
    pub destination_port: u16,
    pub payload: &'a [u8],
}

fn be16(bytes: &[u8], range: core::ops::Range<usize>) -> u16 {
    u16::from_be_bytes([bytes[range.start], bytes[range.start + 1]])
}

fn ipv4(bytes: &[u8], range: core::ops::Range<usize>) -> Ipv4Addr {
    Ipv4Addr::new(bytes[range.start], bytes[range.start + 1], bytes[range.start + 2], bytes[range.start + 3])
}

/// The Internet checksum's running sum (RFC 1071), folded at the end by `checksum`.
fn sum(mut acc: u32, bytes: &[u8]) -> u32 {
    let (pairs, rest) = bytes.as_chunks();
    for pair in pairs {
        acc += u16::from_be_bytes(*pair) as u32;
    }
    if let [last] = rest {
        acc += (*last as u32) << 8;
    }
    acc
}

fn checksum(mut acc: u32) -> u16 {
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    !(acc as u16)
}

/// The UDP checksum of `header` and `payload`, over the pseudo-header of `ip`'s addresses.
fn udp_checksum(ip: &[u8; IPV4_HEADER_LEN], header: &[u8; UDP_HEADER_LEN], payload: &[u8]) -> u16 {
    let pseudo = sum(sum(0, &ip[field::SOURCE]), &ip[field::DESTINATION]) + PROTOCOL_UDP as u32 + (UDP_HEADER_LEN + payload.len()) as u32;
    // The header's length is even, so summing it apart from the payload pairs the same bytes.
    match checksum(sum(sum(pseudo, header), payload)) {
        // 0 means "no checksum" in UDP over IPv4: a computed 0 is sent as its complement.
        0 => 0xffff,
        other => other,
    }
}

impl<'a> Datagram<'a> {
    /// The datagram in an IPv4 packet, or `None` for anything else: another protocol, a
    /// fragment, a truncated packet or one whose checksums do not hold.
    pub fn parse(packet: &'a [u8]) -> Option<Datagram<'a>> {
        // Each part is split off checked, so reading a field needs no bounds check.
        let (ip, _) = packet.split_first_chunk::<IPV4_HEADER_LEN>()?;
        let header_len = ((ip[field::VERSION_IHL] & 0x0f) as usize) * 4;
        // More-fragments set, or a fragment offset: DHCP replies are never fragmented.
        if ip[field::VERSION_IHL] >> 4 != 4 || ip[field::PROTOCOL] != PROTOCOL_UDP || be16(ip, field::FRAGMENT) & 0x3fff != 0 {
            return None;
        }
        let packet = packet.get(..be16(ip, field::TOTAL_LEN) as usize)?;
        let (header, udp) = packet.split_at_checked(header_len)?;
        if header_len < IPV4_HEADER_LEN || checksum(sum(0, header)) != 0 {
            return None;
        }
        let (udp_header, rest) = udp.split_first_chunk::<UDP_HEADER_LEN>()?;
        // The UDP checksum is not checked: a packet socket sees packets whose checksum
        // the sender's stack left to offload (veth, virtio-net) still unfinished, as in
        // the captures here. The IP header's checksum, DHCP's xid and the client's MAC
        // are what tell a reply apart.
        let payload = rest.get(..(be16(udp_header, field::UDP_LEN) as usize).checked_sub(UDP_HEADER_LEN)?)?;
        Some(Datagram {
            source: ipv4(ip, field::SOURCE),
            destination: ipv4(ip, field::DESTINATION),
            source_port: be16(udp_header, field::SOURCE_PORT),
            destination_port: be16(udp_header, field::DESTINATION_PORT),
            payload,
        })
    }

    /// The packet: headers into `buffer[..HEADER_LEN]`, the payload after them. `None`
    /// when the buffer is too small.
    pub fn emit<'b>(&self, buffer: &'b mut [u8]) -> Option<&'b [u8]> {
        let packet = buffer.get_mut(..HEADER_LEN + self.payload.len())?;
        // The headers as fixed-size arrays: every field's place is then known to fit.
        let (headers, payload) = packet.split_first_chunk_mut::<HEADER_LEN>()?;
        payload.copy_from_slice(self.payload);
        let (ip, udp) = headers.split_first_chunk_mut::<IPV4_HEADER_LEN>()?;
        let udp: &mut [u8; UDP_HEADER_LEN] = udp.try_into().ok()?;
        *ip = [0; IPV4_HEADER_LEN];
        *udp = [0; UDP_HEADER_LEN];
        ip[field::VERSION_IHL] = 0x45;
        ip[field::TOTAL_LEN].copy_from_slice(&((HEADER_LEN + self.payload.len()) as u16).to_be_bytes());
        ip[field::TTL] = TTL;
        ip[field::PROTOCOL] = PROTOCOL_UDP;
        ip[field::SOURCE].copy_from_slice(&self.source.octets());
        ip[field::DESTINATION].copy_from_slice(&self.destination.octets());
        let header_sum = checksum(sum(0, ip));
        ip[field::CHECKSUM].copy_from_slice(&header_sum.to_be_bytes());
        udp[field::SOURCE_PORT].copy_from_slice(&self.source_port.to_be_bytes());
        udp[field::DESTINATION_PORT].copy_from_slice(&self.destination_port.to_be_bytes());
        udp[field::UDP_LEN].copy_from_slice(&((UDP_HEADER_LEN + self.payload.len()) as u16).to_be_bytes());
        let udp_sum = udp_checksum(ip, udp, self.payload);
        udp[field::UDP_CHECKSUM].copy_from_slice(&udp_sum.to_be_bytes());
        Some(packet)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// busybox udhcpc's DHCPDISCOVER and dnsmasq's DHCPOFFER, from tcpdump (see captures/).
    static DISCOVER: &[u8] = include_bytes!("captures/udhcpc-discover.ip");
    static OFFER: &[u8] = include_bytes!("captures/dnsmasq-offer.ip");

    #[test]
    fn parses_and_re_emits_udhcpcs_discover() {
        let datagram = Datagram::parse(DISCOVER).unwrap();
        assert_eq!((datagram.source, datagram.destination), (Ipv4Addr::UNSPECIFIED, Ipv4Addr::BROADCAST));
        assert_eq!((datagram.source_port, datagram.destination_port), (68, 67));
        assert_eq!(datagram.payload.len(), 300);
        let mut buf = [0u8; 400];
        assert_eq!(datagram.emit(&mut buf).unwrap(), DISCOVER);
    }

    #[test]
    fn parses_dnsmasqs_offer() {
        let datagram = Datagram::parse(OFFER).unwrap();
        assert_eq!(datagram.source, Ipv4Addr::new(10, 9, 0, 1));
        assert_eq!(datagram.destination, Ipv4Addr::new(10, 9, 0, 56));
        assert_eq!((datagram.source_port, datagram.destination_port), (67, 68));
        assert_eq!(datagram.payload.len(), 344);
    }

    #[test]
    fn damaged_packets_are_dropped() {
        let mut bad_header = OFFER.to_vec();
        bad_header[8] ^= 1;
        assert_eq!(Datagram::parse(&bad_header), None);
        assert_eq!(Datagram::parse(&OFFER[..OFFER.len() - 1]), None);
        assert_eq!(Datagram::parse(&OFFER[..10]), None);
        let mut fragment = OFFER.to_vec();
        fragment[6] |= 0x20;
        assert_eq!(Datagram::parse(&fragment), None);
    }

    #[test]
    fn too_small_a_buffer_is_none() {
        let datagram = Datagram::parse(DISCOVER).unwrap();
        assert!(datagram.emit(&mut [0u8; 100]).is_none());
    }
}
