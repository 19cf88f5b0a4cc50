//! AWS secondary addresses, as tiny-cloud's `imds-net-sync` keeps them: each interface
//! carries exactly the addresses the metadata lists for its MAC (`local-ipv4s`, `ipv6s`),
//! with the prefix of its subnet. This says where to ask and what to add and remove.

use core::net::IpAddr;

use super::address::{Address, SCOPE_UNIVERSE};
use super::ip_text::parse_ip;
use crate::out::{Full, Out};

/// Most addresses one interface is given (EC2's largest instances allow 50 IPv4 and 50
/// IPv6 per interface; wisp keeps the first 32 of each list).
pub const ADDRESSES_LIMIT: usize = 32;

pub type Addresses = heapless::Vec<IpAddr, ADDRESSES_LIMIT>;

/// `/latest/meta-data/network/interfaces/macs/<mac>/<key>`.
pub fn path<'b>(mac: &[u8; 6], key: &str, buf: &'b mut [u8; 128]) -> Result<&'b str, Full> {
    let mut out = Out::new(buf);
    out.put(b"/latest/meta-data/network/interfaces/macs/")?;
    for (i, byte) in mac.iter().enumerate() {
        let hex = b"0123456789abcdef";
        let octet = [b':', hex[(byte >> 4) as usize], hex[(byte & 0xf) as usize]];
        out.put(&octet[(i == 0) as usize..])?;
    }
    out.put_all(&[b"/", key.as_bytes()])?;
    let len = out.len();
    Ok(core::str::from_utf8(&buf[..len]).unwrap_or(""))
}

/// A list of addresses, one a line; `None` names the first line that is none.
pub fn addresses(body: &[u8]) -> Result<Addresses, usize> {
    let mut list = Addresses::new();
    for (i, line) in body.split(|&b| b == b'\n').map(|l| l.trim_ascii()).filter(|l| !l.is_empty()).enumerate() {
        let ip = parse_ip(line).ok_or(i + 1)?;
        if !list.contains(&ip) && list.push(ip).is_err() {
            break;
        }
    }
    Ok(list)
}

/// The prefix length of a subnet's CIDR block (`10.0.1.0/24`), the first when there are
/// several (`subnet-ipv6-cidr-blocks`).
pub fn prefix_len(body: &[u8]) -> Option<u8> {
    let first = body.split(|&b| b == b'\n').next()?.trim_ascii();
    let slash = first.iter().position(|&b| b == b'/')?;
    let len = crate::text::decimal(&first[slash + 1..], 3)?;
    (len <= 128).then_some(len as u8)
}

/// What one interface's addresses of one family should become.
pub struct Wanted<'w> {
    pub ipv6: bool,
    pub addresses: &'w [IpAddr],
    pub prefix_len: u8,
}

#[derive(Debug, Default, PartialEq, Eq)]
pub struct Sync {
    pub add: heapless::Vec<Address, ADDRESSES_LIMIT>,
    pub remove: heapless::Vec<Address, ADDRESSES_LIMIT>,
}

/// Adds what the metadata lists and the interface lacks; removes the interface's global
/// addresses of that family the metadata does not list (link-local ones stay).
pub fn sync(index: u32, wanted: &Wanted<'_>, existing: &[Address], into: &mut Sync) {
    let of_family = |a: &&Address| a.index == index && a.ip.is_ipv6() == wanted.ipv6 && a.scope == SCOPE_UNIVERSE;
    for ip in wanted.addresses.iter().filter(|ip| ip.is_ipv6() == wanted.ipv6) {
        if !existing.iter().filter(of_family).any(|a| a.ip == *ip) {
            let _ = into.add.push(Address::new(index, *ip, wanted.prefix_len));
        }
    }
    for address in existing.iter().filter(of_family) {
        if !wanted.addresses.contains(&address.ip) {
            let _ = into.remove.push(*address);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn metadata_paths_and_values() {
        let mut buf = [0u8; 128];
        assert_eq!(
            path(&[0x02, 0, 0, 0x77, 0xab, 2], "local-ipv4s", &mut buf).unwrap(),
            "/latest/meta-data/network/interfaces/macs/02:00:00:77:ab:02/local-ipv4s"
        );
        assert_eq!(addresses(b"10.0.1.5\n10.0.1.20\n10.0.1.5\n").unwrap().as_slice(), [ip("10.0.1.5"), ip("10.0.1.20")]);
        assert_eq!(addresses(b"10.0.1.5\nnot-an-address\n"), Err(2));
        assert_eq!(prefix_len(b"10.0.1.0/24"), Some(24));
        assert_eq!(prefix_len(b"2600:1f18:1::/64\n2600:1f18:2::/64\n"), Some(64));
        assert_eq!(prefix_len(b"10.0.1.0"), None);
        assert_eq!(prefix_len(b"10.0.1.0/999"), None);
        assert_eq!(prefix_len(b"10.0.1.0/129"), None);
        assert_eq!(prefix_len(b"10.0.0.0/0128"), None);
        assert_eq!(prefix_len(b"10.0.1.0/"), None);
        assert_eq!(prefix_len(b"10.0.1.0/+8"), None);
        assert_eq!(prefix_len(b"::/0\n"), Some(0));
    }

    #[test]
    fn adds_what_is_listed_and_removes_what_is_not() {
        let mut link_local = Address::new(2, ip("fe80::1"), 64);
        link_local.scope = 253;
        let existing = [
            Address::new(2, ip("10.0.1.5"), 24),
            Address::new(2, ip("10.0.1.30"), 24),
            Address::new(3, ip("10.0.2.5"), 24),
            Address::new(2, ip("2600:1f18::5"), 64),
            link_local,
        ];
        let v4 = [ip("10.0.1.5"), ip("10.0.1.20")];
        let mut result = Sync::default();
        sync(2, &Wanted { ipv6: false, addresses: &v4, prefix_len: 24 }, &existing, &mut result);
        assert_eq!(result.add.as_slice(), [Address::new(2, ip("10.0.1.20"), 24)]);
        assert_eq!(result.remove.as_slice(), [Address::new(2, ip("10.0.1.30"), 24)]);
        let mut v6 = Sync::default();
        sync(2, &Wanted { ipv6: true, addresses: &[], prefix_len: 64 }, &existing, &mut v6);
        assert_eq!((v6.add.len(), v6.remove.as_slice()), (0, &[existing[3]][..]));
        let mut again = Sync::default();
        let now = [existing[0], Address::new(2, ip("10.0.1.20"), 24)];
        sync(2, &Wanted { ipv6: false, addresses: &v4, prefix_len: 24 }, &now, &mut again);
        assert_eq!(again, Sync::default());
    }
}
