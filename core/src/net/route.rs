//! rtnetlink(7) routes: the `rtmsg` header, RTM_NEWROUTE as the kernel reports a route
//! and as `ip route add` requests one (default, static through a gateway, on-link),
//! RTM_DELROUTE, and the dump request that reads them back.

use core::net::{IpAddr, Ipv4Addr};

use super::address::{SCOPE_LINK, SCOPE_UNIVERSE};
use super::netlink::{self, attributes, u32_at, Error, Message, Writer};

mod field {
    pub const FAMILY: usize = 0;
    pub const DESTINATION_LEN: usize = 1;
    pub const TABLE: usize = 4;
    pub const PROTOCOL: usize = 5;
    pub const SCOPE: usize = 6;
    pub const KIND: usize = 7;
}

pub const HEADER_LEN: usize = 12;

pub const RTM_NEWROUTE: u16 = 24;
pub const RTM_DELROUTE: u16 = 25;
pub const RTM_GETROUTE: u16 = 26;

const RTA_DST: u16 = 1;
const RTA_OIF: u16 = 4;
const RTA_GATEWAY: u16 = 5;
const RTA_TABLE: u16 = 15;

pub const TABLE_MAIN: u32 = 254;
/// Who made a route: `ip route` says "proto boot" for RTPROT_BOOT, "proto dhcp" for RTPROT_DHCP.
pub const PROTOCOL_BOOT: u8 = 3;
pub const PROTOCOL_DHCP: u8 = 16;
pub const RTN_UNICAST: u8 = 1;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Route {
    /// 0.0.0.0 (or ::) with `prefix_len` 0 is the default route.
    pub destination: IpAddr,
    pub prefix_len: u8,
    /// `None`: on-link, the destination is reached directly on `interface`.
    pub gateway: Option<IpAddr>,
    pub interface: u32,
    pub table: u32,
    pub protocol: u8,
    pub scope: u8,
    pub kind: u8,
}

impl Route {
    /// A unicast route in the main table: through `gateway`, or on-link without one.
    pub fn new(destination: IpAddr, prefix_len: u8, gateway: Option<IpAddr>, interface: u32, protocol: u8) -> Route {
        let scope = if gateway.is_some() { SCOPE_UNIVERSE } else { SCOPE_LINK };
        Route { destination, prefix_len, gateway, interface, table: TABLE_MAIN, protocol, scope, kind: RTN_UNICAST }
    }

    pub fn default_via(gateway: Ipv4Addr, interface: u32, protocol: u8) -> Route {
        Route::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), 0, Some(IpAddr::V4(gateway)), interface, protocol)
    }

    /// The route a RTM_NEWROUTE message describes; `None` for any other message, or one
    /// of a family wisp does not handle.
    pub fn parse(message: &Message<'_>) -> Result<Option<Route>, Error> {
        if message.kind() != RTM_NEWROUTE {
            return Ok(None);
        }
        let header = message.payload();
        if header.len() < HEADER_LEN {
            return Err(Error::Truncated);
        }
        let family = header[field::FAMILY];
        let unspecified = match family {
            super::AF_INET => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            super::AF_INET6 => IpAddr::V6(core::net::Ipv6Addr::UNSPECIFIED),
            _ => return Ok(None),
        };
        let mut route = Route {
            destination: unspecified,
            prefix_len: header[field::DESTINATION_LEN],
            gateway: None,
            interface: 0,
            table: header[field::TABLE] as u32,
            protocol: header[field::PROTOCOL],
            scope: header[field::SCOPE],
            kind: header[field::KIND],
        };
        for attribute in attributes(&header[HEADER_LEN..]) {
            let (kind, value) = attribute?;
            match kind {
                RTA_DST => route.destination = super::ip_from(family, value).unwrap_or(unspecified),
                RTA_GATEWAY => route.gateway = super::ip_from(family, value),
                RTA_OIF => route.interface = u32_at(value, 0..4),
                RTA_TABLE => route.table = u32_at(value, 0..4),
                _ => {}
            }
        }
        Ok(Some(route))
    }

    /// RTM_NEWROUTE (with `netlink::F_CREATE | netlink::F_REPLACE`, say) or RTM_DELROUTE.
    pub fn emit<'b>(&self, buffer: &'b mut [u8], kind: u16, flags: u16, sequence: u32) -> Result<&'b [u8], Error> {
        let mut writer = Writer::new(buffer, kind, netlink::F_REQUEST | netlink::F_ACK | flags, sequence);
        let mut header = [0u8; HEADER_LEN];
        header[field::FAMILY] = super::family_of(&self.destination);
        header[field::DESTINATION_LEN] = self.prefix_len;
        header[field::TABLE] = self.table.min(255) as u8;
        header[field::PROTOCOL] = self.protocol;
        header[field::SCOPE] = self.scope;
        header[field::KIND] = self.kind;
        writer.bytes(&header);
        if self.prefix_len > 0 {
            super::emit_ip(&mut writer, RTA_DST, &self.destination);
        }
        if let Some(gateway) = &self.gateway {
            super::emit_ip(&mut writer, RTA_GATEWAY, gateway);
        }
        writer.attribute_u32(RTA_OIF, self.interface);
        writer.finish()
    }

    /// The same route as far as the kernel's lookup goes: destination, gateway, interface
    /// and table.
    pub fn same(&self, other: &Route) -> bool {
        self.destination == other.destination
            && self.prefix_len == other.prefix_len
            && self.gateway == other.gateway
            && self.interface == other.interface
            && self.table == other.table
    }
}

/// RTM_GETROUTE with NLM_F_DUMP: every route of every family and table.
pub fn dump_request(buffer: &mut [u8], sequence: u32) -> Result<&[u8], Error> {
    let mut writer = Writer::new(buffer, RTM_GETROUTE, netlink::F_REQUEST | netlink::F_DUMP, sequence);
    writer.bytes(&[0; HEADER_LEN]);
    writer.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEQ: u32 = 0x6b05_1fbf;
    const CREATE_EXCL: u16 = netlink::F_CREATE | netlink::F_EXCL;

    /// `ip route add default via 10.9.0.1 dev eth7` (eth7 is ifindex 5).
    static ADD_DEFAULT: [u8; 44] = [
        0x2c, 0, 0, 0, 0x18, 0, 0x05, 0x06, 0xbf, 0x1f, 0x05, 0x6b, 0, 0, 0, 0, //
        2, 0, 0, 0, 0xfe, 3, 0, 1, 0, 0, 0, 0, //
        8, 0, 5, 0, 10, 9, 0, 1, 8, 0, 4, 0, 5, 0, 0, 0,
    ];
    /// `ip route add 169.254.169.254/32 via 10.9.0.1 dev eth7`.
    static ADD_STATIC: [u8; 52] = [
        0x34, 0, 0, 0, 0x18, 0, 0x05, 0x06, 0xbf, 0x1f, 0x05, 0x6b, 0, 0, 0, 0, //
        2, 32, 0, 0, 0xfe, 3, 0, 1, 0, 0, 0, 0, //
        8, 0, 1, 0, 169, 254, 169, 254, 8, 0, 5, 0, 10, 9, 0, 1, 8, 0, 4, 0, 5, 0, 0, 0,
    ];
    /// `ip route add 10.10.0.0/16 dev eth7 scope link`.
    static ADD_ON_LINK: [u8; 44] = [
        0x2c, 0, 0, 0, 0x18, 0, 0x05, 0x06, 0xbf, 0x1f, 0x05, 0x6b, 0, 0, 0, 0, //
        2, 16, 0, 0, 0xfe, 3, 0xfd, 1, 0, 0, 0, 0, //
        8, 0, 1, 0, 10, 10, 0, 0, 8, 0, 4, 0, 5, 0, 0, 0,
    ];
    /// `ip route del 10.10.0.0/16 dev eth7`: protocol, scope and type left as wildcards.
    static DEL_ON_LINK: [u8; 44] = [
        0x2c, 0, 0, 0, 0x19, 0, 0x05, 0x00, 0xbf, 0x1f, 0x05, 0x6b, 0, 0, 0, 0, //
        2, 16, 0, 0, 0xfe, 0, 0xff, 0, 0, 0, 0, 0, //
        8, 0, 1, 0, 10, 10, 0, 0, 8, 0, 4, 0, 5, 0, 0, 0,
    ];

    /// One datagram of `ip route show`'s dump: the three routes above, as the kernel
    /// reports them (default via 10.9.0.1, 10.9.0.0/24 proto kernel, 169.254.169.254).
    static DUMP: &[u8] = include_bytes!("captures/dump-route.bin");

    fn v4(a: u8, b: u8, c: u8, d: u8) -> IpAddr {
        IpAddr::V4(Ipv4Addr::new(a, b, c, d))
    }

    #[test]
    fn requests_match_iproute2() {
        let mut buf = [0u8; 64];
        let default = Route::default_via(Ipv4Addr::new(10, 9, 0, 1), 5, PROTOCOL_BOOT);
        assert_eq!(default.emit(&mut buf, RTM_NEWROUTE, CREATE_EXCL, SEQ).unwrap(), ADD_DEFAULT);
        let host = Route::new(v4(169, 254, 169, 254), 32, Some(v4(10, 9, 0, 1)), 5, PROTOCOL_BOOT);
        assert_eq!(host.emit(&mut buf, RTM_NEWROUTE, CREATE_EXCL, SEQ).unwrap(), ADD_STATIC);
        let on_link = Route::new(v4(10, 10, 0, 0), 16, None, 5, PROTOCOL_BOOT);
        assert_eq!(on_link.emit(&mut buf, RTM_NEWROUTE, CREATE_EXCL, SEQ).unwrap(), ADD_ON_LINK);
        let delete = Route { protocol: 0, scope: 255, kind: 0, ..on_link };
        assert_eq!(delete.emit(&mut buf, RTM_DELROUTE, 0, SEQ).unwrap(), DEL_ON_LINK);
    }

    #[test]
    fn parses_the_kernels_dump() {
        crate::fuzz::seed("netlink", DUMP);
        let found: Vec<Route> = netlink::messages(DUMP).map(|m| Route::parse(&m.unwrap()).unwrap().unwrap()).collect();
        assert_eq!(found.len(), 3);
        assert!(found[0].same(&Route::default_via(Ipv4Addr::new(10, 9, 0, 1), 5, PROTOCOL_BOOT)));
        assert_eq!((found[1].destination, found[1].prefix_len, found[1].gateway), (v4(10, 9, 0, 0), 24, None));
        assert_eq!((found[1].protocol, found[1].scope, found[1].table), (2, SCOPE_LINK, TABLE_MAIN));
        assert!(found[2].same(&Route::new(v4(169, 254, 169, 254), 32, Some(v4(10, 9, 0, 1)), 5, PROTOCOL_BOOT)));
    }
}
