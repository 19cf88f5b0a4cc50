//! rtnetlink(7) addresses: the `ifaddrmsg` header, RTM_NEWADDR as the kernel reports an
//! address and as `ip addr add` requests one (IPv4 or IPv6, with lifetimes in
//! IFA_CACHEINFO), RTM_DELADDR, and the dump request that reads them all back.

use core::net::IpAddr;

use super::netlink::{self, attributes, u32_at, Error, Message, Writer};

mod field {
    use core::ops::Range;
    pub const FAMILY: usize = 0;
    pub const PREFIX_LEN: usize = 1;
    pub const FLAGS: usize = 2;
    pub const SCOPE: usize = 3;
    pub const INDEX: Range<usize> = 4..8;
}

pub const HEADER_LEN: usize = 8;

pub const RTM_NEWADDR: u16 = 20;
pub const RTM_DELADDR: u16 = 21;
pub const RTM_GETADDR: u16 = 22;

const IFA_ADDRESS: u16 = 1;
const IFA_LOCAL: u16 = 2;
const IFA_CACHEINFO: u16 = 6;

/// rtnetlink's scopes: global addresses and routes, and on-link ones.
pub const SCOPE_UNIVERSE: u8 = 0;
pub const SCOPE_LINK: u8 = 253;
pub const SCOPE_HOST: u8 = 254;

/// IFA_F_NODAD: an IPv6 address usable at once, without duplicate address detection.
pub const IFA_F_NODAD: u8 = 0x02;

/// Seconds; `u32::MAX` is "forever".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lifetimes {
    pub preferred: u32,
    pub valid: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Address {
    pub index: u32,
    pub ip: IpAddr,
    pub prefix_len: u8,
    pub scope: u8,
    pub flags: u8,
    /// `None` sends no IFA_CACHEINFO: the address is permanent.
    pub lifetimes: Option<Lifetimes>,
}

impl Address {
    /// A permanent global address.
    pub const fn new(index: u32, ip: IpAddr, prefix_len: u8) -> Address {
        Address { index, ip, prefix_len, scope: SCOPE_UNIVERSE, flags: 0, lifetimes: None }
    }

    /// The address a RTM_NEWADDR message describes; `None` for any other message, or one
    /// of a family wisp does not handle.
    pub fn parse(message: &Message<'_>) -> Result<Option<Address>, Error> {
        if message.kind() != RTM_NEWADDR {
            return Ok(None);
        }
        let header = message.payload();
        if header.len() < HEADER_LEN {
            return Err(Error::Truncated);
        }
        let family = header[field::FAMILY];
        let (mut local, mut address, mut lifetimes) = (None, None, None);
        for attribute in attributes(&header[HEADER_LEN..]) {
            let (kind, value) = attribute?;
            match kind {
                IFA_LOCAL => local = super::ip_from(family, value),
                IFA_ADDRESS => address = super::ip_from(family, value),
                IFA_CACHEINFO if value.len() >= 8 => {
                    lifetimes = Some(Lifetimes { preferred: u32_at(value, 0..4), valid: u32_at(value, 4..8) })
                }
                _ => {}
            }
        }
        // IFA_ADDRESS is the peer's on a point-to-point link: IFA_LOCAL is ours.
        let Some(ip) = local.or(address) else { return Ok(None) };
        Ok(Some(Address {
            index: u32_at(header, field::INDEX),
            ip,
            prefix_len: header[field::PREFIX_LEN],
            scope: header[field::SCOPE],
            flags: header[field::FLAGS],
            lifetimes,
        }))
    }

    /// RTM_NEWADDR (with `netlink::F_CREATE | netlink::F_REPLACE`, say) or RTM_DELADDR.
    pub fn emit<'b>(&self, buffer: &'b mut [u8], kind: u16, flags: u16, sequence: u32) -> Result<&'b [u8], Error> {
        let mut writer = Writer::new(buffer, kind, netlink::F_REQUEST | netlink::F_ACK | flags, sequence);
        let mut header = [0u8; HEADER_LEN];
        header[field::FAMILY] = super::family_of(&self.ip);
        header[field::PREFIX_LEN] = self.prefix_len;
        header[field::FLAGS] = self.flags;
        header[field::SCOPE] = self.scope;
        header[field::INDEX].copy_from_slice(&self.index.to_ne_bytes());
        writer.bytes(&header);
        super::emit_ip(&mut writer, IFA_LOCAL, &self.ip);
        super::emit_ip(&mut writer, IFA_ADDRESS, &self.ip);
        if let Some(lifetimes) = self.lifetimes {
            let mut cacheinfo = [0u8; 16];
            cacheinfo[0..4].copy_from_slice(&lifetimes.preferred.to_ne_bytes());
            cacheinfo[4..8].copy_from_slice(&lifetimes.valid.to_ne_bytes());
            writer.attribute(IFA_CACHEINFO, &cacheinfo);
        }
        writer.finish()
    }

    /// The same address (interface, address, prefix), whatever its flags and lifetimes.
    pub fn same(&self, other: &Address) -> bool {
        self.index == other.index && self.ip == other.ip && self.prefix_len == other.prefix_len
    }
}

/// RTM_GETADDR with NLM_F_DUMP: every address of every family.
pub fn dump_request(buffer: &mut [u8], sequence: u32) -> Result<&[u8], Error> {
    let mut writer = Writer::new(buffer, RTM_GETADDR, netlink::F_REQUEST | netlink::F_DUMP, sequence);
    writer.bytes(&[0; HEADER_LEN]);
    writer.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::net::{Ipv4Addr, Ipv6Addr};

    const SEQ: u32 = 0x6b05_1fbf;
    const CREATE_EXCL: u16 = netlink::F_CREATE | netlink::F_EXCL;

    /// `ip addr add 10.9.0.56/24 dev eth7 valid_lft 3600 preferred_lft 3600`.
    static ADD_V4: [u8; 60] = [
        0x3c, 0, 0, 0, 0x14, 0, 0x05, 0x06, 0xbf, 0x1f, 0x05, 0x6b, 0, 0, 0, 0, //
        2, 24, 0, 0, 5, 0, 0, 0, //
        8, 0, 2, 0, 10, 9, 0, 56, 8, 0, 1, 0, 10, 9, 0, 56, //
        0x14, 0, 6, 0, 0x10, 0x0e, 0, 0, 0x10, 0x0e, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    ];
    /// `ip addr add 2001:db8::5/64 dev eth7 nodad`.
    static ADD_V6: [u8; 64] = [
        0x40, 0, 0, 0, 0x14, 0, 0x05, 0x06, 0xbf, 0x1f, 0x05, 0x6b, 0, 0, 0, 0, //
        10, 64, 2, 0, 5, 0, 0, 0, //
        0x14, 0, 2, 0, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5, //
        0x14, 0, 1, 0, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5,
    ];
    /// `ip addr del 2001:db8::5/64 dev eth7`.
    static DEL_V6: [u8; 64] = [
        0x40, 0, 0, 0, 0x15, 0, 0x05, 0x00, 0xbf, 0x1f, 0x05, 0x6b, 0, 0, 0, 0, //
        10, 64, 0, 0, 5, 0, 0, 0, //
        0x14, 0, 2, 0, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5, //
        0x14, 0, 1, 0, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5,
    ];

    /// One datagram of `ip addr show`'s dump: lo's 127.0.0.1/8, eth7's 10.9.0.56/24 (with
    /// 3600 s left), lo's ::1, eth7's fe80::ff:fe00:2.
    static DUMP: &[u8] = include_bytes!("captures/dump-addr.bin");

    fn v6() -> IpAddr {
        IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 5))
    }

    #[test]
    fn requests_match_iproute2() {
        let mut buf = [0u8; 80];
        let mut v4 = Address::new(5, IpAddr::V4(Ipv4Addr::new(10, 9, 0, 56)), 24);
        v4.lifetimes = Some(Lifetimes { preferred: 3600, valid: 3600 });
        assert_eq!(v4.emit(&mut buf, RTM_NEWADDR, CREATE_EXCL, SEQ).unwrap(), ADD_V4);
        let mut add = Address::new(5, v6(), 64);
        add.flags = IFA_F_NODAD;
        assert_eq!(add.emit(&mut buf, RTM_NEWADDR, CREATE_EXCL, SEQ).unwrap(), ADD_V6);
        assert_eq!(Address::new(5, v6(), 64).emit(&mut buf, RTM_DELADDR, 0, SEQ).unwrap(), DEL_V6);
    }

    #[test]
    fn parses_the_kernels_dump() {
        crate::fuzz::seed("netlink", DUMP);
        let found: Vec<Address> = netlink::messages(DUMP)
            .map(|m| Address::parse(&m.unwrap()).unwrap().unwrap())
            .collect();
        assert_eq!(found.len(), 4);
        assert_eq!(found[0].ip, IpAddr::V4(Ipv4Addr::LOCALHOST));
        assert_eq!((found[0].index, found[0].prefix_len, found[0].scope), (1, 8, SCOPE_HOST));
        assert_eq!(found[1].ip, IpAddr::V4(Ipv4Addr::new(10, 9, 0, 56)));
        assert_eq!((found[1].index, found[1].prefix_len, found[1].scope), (5, 24, SCOPE_UNIVERSE));
        assert_eq!(found[1].lifetimes, Some(Lifetimes { preferred: 3600, valid: 3600 }));
        assert_eq!(found[2].ip, IpAddr::V6(Ipv6Addr::LOCALHOST));
        assert_eq!(found[3].ip, IpAddr::V6(Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0xff, 0xfe00, 2)));
        assert_eq!(found[3].scope, SCOPE_LINK);
    }
}
