//! rtnetlink(7) links: the `ifinfomsg` header and the attributes wisp reads (name, MAC,
//! MTU, carrier) from RTM_NEWLINK, and the RTM_NEWLINK requests it sends to bring a link
//! up or down, rename it (the kernel allows that only while it is down) or set its MTU.

use super::netlink::{self, attributes, u16_at, u32_at, Error, Message, Writer};

mod field {
    use core::ops::Range;
    pub const HARDWARE_TYPE: Range<usize> = 2..4;
    pub const INDEX: Range<usize> = 4..8;
    pub const FLAGS: Range<usize> = 8..12;
}

pub const HEADER_LEN: usize = 16;

pub const RTM_NEWLINK: u16 = 16;
pub const RTM_GETLINK: u16 = 18;

const IFLA_ADDRESS: u16 = 1;
const IFLA_IFNAME: u16 = 3;
const IFLA_MTU: u16 = 4;
const IFLA_CARRIER: u16 = 33;

pub const IFF_UP: u32 = 0x1;
pub const IFF_LOOPBACK: u32 = 0x8;
/// ARPHRD_ETHER: ethernet and what looks like it (virtio-net, veth, ENA).
pub const ARPHRD_ETHER: u16 = 1;

/// IFNAMSIZ less the NUL.
pub const NAME_LIMIT: usize = 15;

pub type Mac = [u8; 6];

/// What wisp reads of one link (RTM_NEWLINK).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Link {
    pub index: u32,
    pub hardware_type: u16,
    pub flags: u32,
    pub(crate) name: [u8; NAME_LIMIT],
    pub(crate) name_len: u8,
    pub mtu: u32,
    pub mac: Option<Mac>,
    pub carrier: bool,
}

impl Link {
    /// The link a RTM_NEWLINK message describes; `None` for any other message.
    pub fn parse(message: &Message<'_>) -> Result<Option<Link>, Error> {
        if message.kind() != RTM_NEWLINK {
            return Ok(None);
        }
        let header = message.payload();
        if header.len() < HEADER_LEN {
            return Err(Error::Truncated);
        }
        let mut link = Link {
            index: u32_at(header, field::INDEX),
            hardware_type: u16_at(header, field::HARDWARE_TYPE),
            flags: u32_at(header, field::FLAGS),
            name: [0; NAME_LIMIT],
            name_len: 0,
            mtu: 0,
            mac: None,
            carrier: false,
        };
        for attribute in attributes(&header[HEADER_LEN..]) {
            let (kind, value) = attribute?;
            match kind {
                IFLA_IFNAME => {
                    let name = value.split(|&b| b == 0).next().unwrap_or(&[]);
                    let len = name.len().min(NAME_LIMIT);
                    link.name[..len].copy_from_slice(&name[..len]);
                    link.name_len = len as u8;
                }
                IFLA_MTU => link.mtu = u32_at(value, 0..4),
                IFLA_ADDRESS => link.mac = value.try_into().ok(),
                IFLA_CARRIER => link.carrier = value.first() == Some(&1),
                _ => {}
            }
        }
        Ok(Some(link))
    }

    pub fn name(&self) -> &[u8] {
        &self.name[..self.name_len as usize]
    }

    pub fn is_up(&self) -> bool {
        self.flags & IFF_UP != 0
    }

    pub fn is_loopback(&self) -> bool {
        self.flags & IFF_LOOPBACK != 0
    }

    pub fn is_ethernet(&self) -> bool {
        self.hardware_type == ARPHRD_ETHER && !self.is_loopback()
    }
}

/// A change to one link, as `ip link set` sends it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkChange<'a> {
    pub index: u32,
    /// `Some(true)` up, `Some(false)` down, `None` as it is.
    pub up: Option<bool>,
    pub name: Option<&'a [u8]>,
    pub mtu: Option<u32>,
}

impl LinkChange<'_> {
    pub fn emit<'b>(&self, buffer: &'b mut [u8], sequence: u32) -> Result<&'b [u8], Error> {
        let mut writer = Writer::new(buffer, RTM_NEWLINK, netlink::F_REQUEST | netlink::F_ACK, sequence);
        let (flags, change) = match self.up {
            Some(true) => (IFF_UP, IFF_UP),
            Some(false) => (0, IFF_UP),
            None => (0, 0),
        };
        let mut header = [0u8; HEADER_LEN];
        header[field::INDEX].copy_from_slice(&self.index.to_ne_bytes());
        header[field::FLAGS].copy_from_slice(&flags.to_ne_bytes());
        header[12..16].copy_from_slice(&change.to_ne_bytes());
        writer.bytes(&header);
        if let Some(name) = self.name {
            if name.is_empty() || name.len() > NAME_LIMIT {
                return Err(Error::NameTooLong);
            }
            let mut with_nul = [0u8; NAME_LIMIT + 1];
            with_nul[..name.len()].copy_from_slice(name);
            writer.attribute(IFLA_IFNAME, &with_nul[..name.len() + 1]);
        }
        if let Some(mtu) = self.mtu {
            writer.attribute_u32(IFLA_MTU, mtu);
        }
        writer.finish()
    }
}

/// RTM_GETLINK with NLM_F_DUMP: every link.
pub fn dump_request(buffer: &mut [u8], sequence: u32) -> Result<&[u8], Error> {
    let mut writer = Writer::new(buffer, RTM_GETLINK, netlink::F_REQUEST | netlink::F_DUMP, sequence);
    writer.bytes(&[0; HEADER_LEN]);
    writer.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEQ: u32 = 0x6b05_1fbf;

    /// `ip link set vc name eth7`, `ip link set eth7 mtu 1400`, `ip link set eth7 up`
    /// (iproute2 6.1, `strace -e write=3`), on ifindex 5.
    static SET_NAME: [u8; 44] = [
        0x2c, 0, 0, 0, 0x10, 0, 0x05, 0, 0xbf, 0x1f, 0x05, 0x6b, 0, 0, 0, 0, //
        0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, //
        9, 0, 3, 0, b'e', b't', b'h', b'7', 0, 0, 0, 0,
    ];
    static SET_MTU: [u8; 40] = [
        0x28, 0, 0, 0, 0x10, 0, 0x05, 0, 0xbf, 0x1f, 0x05, 0x6b, 0, 0, 0, 0, //
        0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, //
        8, 0, 4, 0, 0x78, 0x05, 0, 0,
    ];
    static SET_UP: [u8; 32] = [
        0x20, 0, 0, 0, 0x10, 0, 0x05, 0, 0xbf, 0x1f, 0x05, 0x6b, 0, 0, 0, 0, //
        0, 0, 0, 0, 5, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0,
    ];

    /// The kernel's RTM_NEWLINK for that veth after the changes (1136 bytes).
    static NEWLINK: &[u8] = include_bytes!("captures/newlink-veth.bin");

    #[test]
    fn requests_match_iproute2() {
        let mut buf = [0u8; 64];
        let name = LinkChange { index: 5, name: Some(b"eth7"), ..Default::default() };
        assert_eq!(name.emit(&mut buf, SEQ).unwrap(), SET_NAME);
        let mtu = LinkChange { index: 5, mtu: Some(1400), ..Default::default() };
        assert_eq!(mtu.emit(&mut buf, SEQ).unwrap(), SET_MTU);
        let up = LinkChange { index: 5, up: Some(true), ..Default::default() };
        assert_eq!(up.emit(&mut buf, SEQ).unwrap(), SET_UP);
    }

    #[test]
    fn long_names_are_refused() {
        let mut buf = [0u8; 64];
        let change = LinkChange { index: 5, name: Some(b"a-sixteen-bytes!"), ..Default::default() };
        assert_eq!(change.emit(&mut buf, 1).unwrap_err(), Error::NameTooLong);
    }

    #[test]
    fn parses_the_kernels_link() {
        crate::fuzz::seed("netlink", NEWLINK);
        let message = Message::new_checked(NEWLINK).unwrap();
        let link = Link::parse(&message).unwrap().unwrap();
        assert_eq!(link.index, 5);
        assert_eq!(link.name(), b"eth7");
        assert_eq!(link.mtu, 1400);
        assert_eq!(link.mac, Some([2, 0, 0, 0, 0, 2]));
        assert!(link.carrier && link.is_up() && link.is_ethernet());
    }

    #[test]
    fn truncated_link_is_an_error() {
        let mut bytes = NEWLINK[..28].to_vec();
        bytes[0..4].copy_from_slice(&28u32.to_ne_bytes());
        let message = Message::new_checked(&bytes).unwrap();
        assert_eq!(Link::parse(&message).unwrap_err(), Error::Truncated);
    }
}
