//! IP addresses as text, both ways, small: IPv4 dotted decimal, IPv6 as eight groups
//! (written unshortened, read with `::`). core::net's formatter and parser would cost
//! about 4 KB of the binary. Also read here: the prefix lengths and MAC addresses that
//! network-config and network_data.json write beside them, shared by both readers and
//! without core's integer parsing.

use core::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::out::{Full, Out};

/// Dotted decimal.
pub fn put_ipv4(out: &mut Out<'_>, ip: Ipv4Addr) -> Result<(), Full> {
    for (i, octet) in ip.octets().into_iter().enumerate() {
        if i > 0 {
            out.put(b".")?;
        }
        out.put_decimal(octet as u64)?;
    }
    Ok(())
}

/// Longest text of an address: eight groups of four hex digits.
pub const IP_TEXT_LIMIT: usize = 39;

/// An address as text for logs and files: IPv4 dotted, IPv6 as eight hex groups, not
/// shortened (valid RFC 4291 text; core's formatter would cost 1.5 KB).
pub fn put_ip(out: &mut Out<'_>, ip: &IpAddr) -> Result<(), Full> {
    match ip {
        IpAddr::V4(v4) => put_ipv4(out, *v4),
        IpAddr::V6(v6) => v6.segments().into_iter().enumerate().try_for_each(|(i, group)| {
            if i > 0 {
                out.put(b":")?;
            }
            let digits = [12, 8, 4, 0].map(|shift| b"0123456789abcdef"[(group >> shift) as usize & 0xf]);
            let first = digits.iter().position(|&d| d != b'0').unwrap_or(3);
            out.put(&digits[first..])
        }),
    }
}

/// `put_ip` as its own text.
pub fn ip_text(ip: &IpAddr) -> heapless::Vec<u8, IP_TEXT_LIMIT> {
    let mut buf = [0u8; IP_TEXT_LIMIT];
    let mut out = Out::new(&mut buf);
    let _ = put_ip(&mut out, ip);
    heapless::Vec::from_slice(out.written()).unwrap_or_default()
}

/// Dotted decimal back, as `ip_text` writes it (surrounding whitespace ignored).
pub fn parse_ipv4(text: &[u8]) -> Option<Ipv4Addr> {
    let mut octets = [0u8; 4];
    let mut parts = text.trim_ascii().split(|&b| b == b'.');
    for octet in octets.iter_mut() {
        let part = parts.next().filter(|p| !p.is_empty() && p.len() <= 3 && p.iter().all(u8::is_ascii_digit))?;
        let value = part.iter().fold(0u32, |n, d| n * 10 + (d - b'0') as u32);
        *octet = u8::try_from(value).ok()?;
    }
    parts.next().is_none().then_some(Ipv4Addr::from(octets))
}

/// RFC 4291 2.2 text: eight hex groups, `::` once for a run of zero groups (an IPv4
/// tail, `::ffff:1.2.3.4`, is not read).
pub fn parse_ipv6(text: &[u8]) -> Option<Ipv6Addr> {
    let text = text.trim_ascii();
    let (head, tail) = match text.windows(2).position(|w| w == b"::").and_then(|at| text.split_at_checked(at)) {
        Some((head, tail)) => (head, tail.get(2..)),
        None => (text, None),
    };
    let mut groups = [0u16; 8];
    let mut count = 0;
    let read = |part: &[u8], into: &mut [u16; 8], count: &mut usize| -> Option<()> {
        if part.is_empty() {
            return Some(());
        }
        for group in part.split(|&b| b == b':') {
            if group.is_empty() || group.len() > 4 || *count == 8 {
                return None;
            }
            into[*count] = group.iter().try_fold(0u16, |n, &d| Some(n << 4 | (d as char).to_digit(16)? as u16))?;
            *count += 1;
        }
        Some(())
    };
    read(head, &mut groups, &mut count)?;
    let Some(tail) = tail else { return (count == 8).then(|| Ipv6Addr::from(groups)) };
    let head_count = count;
    let mut tail_groups = [0u16; 8];
    let mut tail_count = 0;
    read(tail, &mut tail_groups, &mut tail_count)?;
    if head_count + tail_count > 7 {
        return None;
    }
    groups[8 - tail_count..].copy_from_slice(&tail_groups[..tail_count]);
    Some(Ipv6Addr::from(groups))
}

/// Either family.
pub fn parse_ip(text: &[u8]) -> Option<IpAddr> {
    match text.contains(&b':') {
        true => parse_ipv6(text).map(IpAddr::V6),
        false => parse_ipv4(text).map(IpAddr::V4),
    }
}

/// An unsigned number as `str::parse` reads one: digits after an optional `+`, leading
/// zeros however many. `None` past 19 significant digits, far more than the callers'
/// types hold (u8, u32).
pub fn parse_unsigned(text: &[u8]) -> Option<u64> {
    let digits = text.strip_prefix(b"+").unwrap_or(text);
    let zeros = digits.iter().take_while(|&&d| d == b'0').count();
    // All zeros: the last one is the number.
    crate::text::decimal(&digits[zeros.min(digits.len().saturating_sub(1))..], 19)
}

/// A prefix length as `str::parse::<u8>` reads one.
pub fn parse_prefix_len(text: &str) -> Option<u8> {
    parse_unsigned(text.as_bytes()).and_then(|n| u8::try_from(n).ok())
}

/// A netmask's prefix length: its ones, when they are all in front (`255.255.240.0`: 20).
pub fn netmask_len(mask: IpAddr) -> Option<u8> {
    let bits: u128 = match mask {
        IpAddr::V4(v4) => (u32::from(v4) as u128) << 96,
        IpAddr::V6(v6) => u128::from(v6),
    };
    (bits.leading_ones() + bits.trailing_zeros() == 128).then_some(bits.leading_ones() as u8)
}

/// A MAC address: six pairs of hex digits between colons (`52:54:00:12:34:56`).
pub fn parse_mac(text: &[u8]) -> Option<[u8; 6]> {
    if text.len() != 17 {
        return None;
    }
    let mut mac = [0u8; 6];
    for (i, byte) in mac.iter_mut().enumerate() {
        let pair = &text[i * 3..i * 3 + 2];
        if i > 0 && text[i * 3 - 1] != b':' {
            return None;
        }
        let digit = |b: u8| char::from(b).to_digit(16);
        *byte = (digit(pair[0])? * 16 + digit(pair[1])?) as u8;
    }
    Some(mac)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v4(a: u8, b: u8, c: u8, d: u8) -> Ipv4Addr {
        Ipv4Addr::new(a, b, c, d)
    }

    #[test]
    fn addresses_as_text_and_back() {
        assert_eq!(ip_text(&IpAddr::V4(v4(10, 0, 255, 7))).as_slice(), b"10.0.255.7");
        let v6 = IpAddr::V6(core::net::Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0xff, 0xfe00, 2));
        assert_eq!(ip_text(&v6).as_slice(), b"2001:db8:0:0:0:ff:fe00:2");
        assert_eq!(parse_ip(&ip_text(&v6)), Some(v6));
        assert_eq!(parse_ipv4(b"10.77.0.56\n"), Some(v4(10, 77, 0, 56)));
        for bad in [&b"10.77.0"[..], b"10.77.0.256", b"10.77.0.5.1", b"1..2.3", b"a.b.c.d", b""] {
            assert_eq!(parse_ipv4(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn prefix_lengths_read_as_str_parse_reads_them() {
        for text in ["24", "+24", "0024", "0", "255", "256", "-1", "+", "", "2 4", " 24", "24 ", "++4", "0x10", "99999999999999999999",
            "000000000000000000000024", "00000000000000000000000", "+000", "0+", "+-1", "1000"] {
            assert_eq!(parse_prefix_len(text), text.parse::<u8>().ok(), "{text:?}");
            assert_eq!(parse_unsigned(text.as_bytes()), text.parse::<u64>().ok(), "{text:?}");
        }
        for text in ["4294967295", "4294967296", "+0", "00000000000000000000004294967295", "18446744073709551615", "1500\n"] {
            assert_eq!(parse_unsigned(text.as_bytes()).and_then(|n| u32::try_from(n).ok()), text.parse::<u32>().ok(), "{text:?}");
        }
    }

    #[test]
    fn netmasks_as_prefix_lengths() {
        let len = |text: &str| netmask_len(text.parse().unwrap());
        let cases = [("0.0.0.0", Some(0)), ("255.0.0.0", Some(8)), ("255.255.240.0", Some(20)), ("255.255.255.255", Some(32)),
            ("255.0.255.0", None), ("0.0.0.255", None), ("::", Some(0)), ("ffff:ffff:ffff:ffff::", Some(64)),
            ("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", Some(128)), ("ffff::ffff", None), ("::ffff:255.255.255.0", None)];
        for (text, expected) in cases {
            assert_eq!(len(text), expected, "{text}");
        }
    }

    #[test]
    fn mac_addresses() {
        assert_eq!(parse_mac(b"52:54:00:aB:Cd:ef"), Some([0x52, 0x54, 0, 0xab, 0xcd, 0xef]));
        for bad in ["", "52:54:00:ab:cd", "52:54:00:ab:cd:ef:01", "52:54:00:ab:cd:e", "52-54-00-ab-cd-ef", "52:54:00:ab:cd:eg", "5:254:00:ab:cd:ef", "+2:54:00:ab:cd:ef", "52:54:00:ab:cd:éf"] {
            assert_eq!(parse_mac(bad.as_bytes()), None, "{bad}");
        }
    }

    #[test]
    fn ipv6_as_written() {
        for text in ["::", "::1", "2001:db8::5", "fe80::ff:fe00:2", "2001:db8:0:0:1:0:0:1", "1::", "a:b:c:d:e:f:0:1", "2001:DB8::A"] {
            let expected: Ipv6Addr = text.parse().unwrap();
            assert_eq!(parse_ipv6(text.as_bytes()), Some(expected), "{text}");
        }
        for bad in ["", ":", "1:2", "::1::", "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7::8", "12345::", "g::", "1:::2", "::ffff:1.2.3.4"] {
            assert_eq!(parse_ipv6(bad.as_bytes()), None, "{bad}");
        }
    }
}
