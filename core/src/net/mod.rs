//! The network with no tools: the wire formats wisp speaks to bring an interface up
//! (rtnetlink to the kernel, DHCPv4 to a server, inside IPv4 and UDP headers since the
//! socket is a packet socket), the DHCP client's state machine, and the decisions of the
//! bring-up (which interface, what to change). No I/O here: os-linux has the sockets,
//! bin the loop.

use core::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Declares an enum whose variants each name a text (`as_str`, and `parse` back), the
/// texts kept in one string: a table of `&str`s would cost 16 bytes a text, a `match` of
/// one arm per text ~20 bytes of code an arm.
macro_rules! worded {
    ($(#[$meta:meta])* $name:ident { $($variant:ident => $text:literal,)* }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum $name {
            $($variant,)*
        }

        impl $name {
            const TEXTS: &'static str = concat!($($text, "\n",)*);

            pub fn as_str(self) -> &'static str {
                $crate::text::nth_part(Self::TEXTS, '\n', self as usize)
            }

            /// The variant whose text is `text`. Past the last newline is an empty
            /// text, which no variant has: `ALL` has no entry there.
            pub fn parse(text: &str) -> Option<$name> {
                const ALL: &[$name] = &[$($name::$variant,)*];
                ALL.get($crate::text::part_index(Self::TEXTS, '\n', text.as_bytes())?).copied()
            }
        }
    };
}
pub(crate) use worded;

pub mod ip_text;
pub mod netlink;
pub mod link;
pub mod address;
pub mod route;

pub mod ipv4_udp;
pub mod dhcp;
pub mod dhcp_client;
pub mod dhcp_exchange;

pub mod bring_up;
pub mod configure;
pub mod ephemeral;
pub mod rtnl;
pub mod network_config;
pub mod network_data;
pub mod eni;
pub mod secondary;
pub mod net_sync;

/// An rtnetlink failure as one of the host's lines, its errno in the host's words.
pub fn said<H: crate::host::messages::Messages>(host: &H, error: rtnl::RtnlError) -> H::Text {
    host.text(format_args!("{}", crate::host::explain::Worded(&error, crate::host::explain::words::<H::Text>)))
}

/// Address families as rtnetlink writes them (AF_INET, AF_INET6).
pub const AF_INET: u8 = 2;
pub const AF_INET6: u8 = 10;

pub(crate) fn family_of(ip: &IpAddr) -> u8 {
    match ip {
        IpAddr::V4(_) => AF_INET,
        IpAddr::V6(_) => AF_INET6,
    }
}

/// An address attribute's value read as the family says.
// Out of line: inlined at its four callers in one dump, each copy built its own IpAddr.
#[inline(never)]
pub(crate) fn ip_from(family: u8, bytes: &[u8]) -> Option<IpAddr> {
    match family {
        AF_INET => <[u8; 4]>::try_from(bytes).ok().map(|b| IpAddr::V4(Ipv4Addr::from(b))),
        AF_INET6 => <[u8; 16]>::try_from(bytes).ok().map(|b| IpAddr::V6(Ipv6Addr::from(b))),
        _ => None,
    }
}

/// Writes an address attribute: 4 or 16 bytes.
pub(crate) fn emit_ip(writer: &mut netlink::Writer<'_>, kind: u16, ip: &IpAddr) {
    match ip {
        IpAddr::V4(v4) => writer.attribute(kind, &v4.octets()),
        IpAddr::V6(v6) => writer.attribute(kind, &v6.octets()),
    }
}
