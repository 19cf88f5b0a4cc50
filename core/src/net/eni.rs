//! `/etc/network/interfaces` from a network configuration, as cloud-init's `eni` renderer
//! writes it (ifupdown and ifupdown-ng read it, and tiny-cloud writes the same file), so
//! an image with ifupdown brings up what wisp applied; the nameservers go on `lo`'s
//! stanza as cloud-init puts them.

use super::ip_text::put_ip;
use super::network_config::{NetworkConfig, Prefix, Slaac, StaticRoute};
use crate::out::{Full, Out};

const HEADER: &[u8] = b"# Written by wisp from the instance's network configuration; rewritten at every boot.\n\n";

fn put_prefix(out: &mut Out<'_>, prefix: &Prefix) -> Result<(), Full> {
    put_ip(out, &prefix.ip)?;
    out.put(b"/")?;
    out.put_decimal(prefix.len as u64)
}

fn put_route(out: &mut Out<'_>, route: &StaticRoute) -> Result<(), Full> {
    for hook in [&b"    post-up route add "[..], b"    pre-down route del "] {
        out.put(hook)?;
        if route.to.ip.is_ipv6() {
            out.put(b"-A inet6 ")?;
        }
        if route.to.len == 0 {
            out.put(b"default")?;
        } else {
            out.put(if route.to.ip.is_ipv6() { b"" } else { b"-net " })?;
            put_prefix(out, &route.to)?;
        }
        out.put(b" gw ")?;
        put_ip(out, &route.via)?;
        out.put(b" || true\n")?;
    }
    Ok(())
}

/// `iface NAME FAMILY METHOD`, the line that opens a stanza.
fn put_iface(out: &mut Out<'_>, name: &[u8], inet: &[u8], method: &[u8]) -> Result<(), Full> {
    out.put_all(&[b"iface ", name, b" ", inet, b" ", method, b"\n"])
}

#[inline(never)]
pub fn render(config: &NetworkConfig<'_>, out: &mut Out<'_>) -> Result<(), Full> {
    out.put(HEADER)?;
    out.put(b"auto lo\niface lo inet loopback\n")?;
    if !config.nameservers.is_empty() {
        out.put(b"    dns-nameservers")?;
        for server in &config.nameservers {
            out.put(b" ")?;
            put_ip(out, server)?;
        }
        out.put(b"\n")?;
    }
    if !config.search.is_empty() {
        out.put(b"    dns-search")?;
        for domain in &config.search {
            out.put_all(&[b" ", domain])?;
        }
        out.put(b"\n")?;
    }
    for interface in &config.interfaces {
        let name = interface.name.as_bytes();
        out.put_all(&[b"\nauto ", name, b"\n"])?;
        let mut stanzas = 0;
        for family in [false, true] {
            let dhcp = if family { interface.dhcp6 } else { interface.dhcp4 };
            let inet: &[u8] = if family { b"inet6" } else { b"inet" };
            let gateway = if family { &interface.gateway6 } else { &interface.gateway4 };
            if dhcp {
                put_iface(out, name, inet, b"dhcp")?;
                stanzas += 1;
            }
            // As cloud-init's renderer: `dhcp` says whether stateless DHCPv6 runs too.
            let stateless_dhcp: &[u8] = match interface.slaac {
                Slaac::On => b"    dhcp 0\n",
                Slaac::WithStatelessDhcp => b"    dhcp 1\n",
                Slaac::Off => b"",
            };
            if family && !stateless_dhcp.is_empty() {
                put_iface(out, name, inet, b"auto")?;
                out.put(stateless_dhcp)?;
                stanzas += 1;
            }
            // The gateway and routes go on the family's first static stanza only.
            let mut first = true;
            for address in interface.addresses.iter().filter(|a| a.ip.is_ipv6() == family) {
                if stanzas > 0 {
                    out.put(b"\n")?;
                }
                put_iface(out, name, inet, b"static")?;
                out.put(b"    address ")?;
                put_prefix(out, address)?;
                out.put(b"\n")?;
                if let Some(gateway) = gateway.as_ref().filter(|_| first) {
                    out.put(b"    gateway ")?;
                    put_ip(out, gateway)?;
                    out.put(b"\n")?;
                }
                if let Some(mtu) = interface.mtu.filter(|_| stanzas == 0) {
                    out.put(b"    mtu ")?;
                    out.put_decimal(mtu as u64)?;
                    out.put(b"\n")?;
                }
                for route in interface.routes.iter().filter(|r| first && r.via.is_ipv6() == family) {
                    put_route(out, route)?;
                }
                first = false;
                stanzas += 1;
            }
        }
        if stanzas == 0 {
            put_iface(out, name, b"inet", b"manual")?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::network_config::parse;
    use crate::yaml::{Arena, Node};

    fn render_yaml(source: &str) -> String {
        let mut nodes = vec![Node::EMPTY; 512];
        let mut text = vec![0u8; 8192];
        let mut arena = Arena::new(&mut nodes, &mut text);
        crate::fuzz::seed("network_config", source.as_bytes());
        let root = arena.parse(source.as_bytes()).unwrap();
        let config = parse(arena.value(root)).unwrap();
        let mut buf = [0u8; 4096];
        let mut out = Out::new(&mut buf);
        render(&config, &mut out).unwrap();
        String::from_utf8(out.written().to_vec()).unwrap()
    }

    #[test]
    fn as_cloud_inits_eni_renderer() {
        let source = "version: 2
ethernets:
  id0:
    match: {macaddress: \"02:00:00:77:00:02\"}
    set-name: lan0
    mtu: 1400
    addresses: [10.77.0.5/24, \"2001:db8::5/64\"]
    gateway4: 10.77.0.1
    gateway6: 2001:db8::1
    routes: [{to: 10.99.0.0/16, via: 10.77.0.3}]
    nameservers: {addresses: [10.77.0.1], search: [wisp.test]}
  eth1: {dhcp4: true}
";
        assert_eq!(
            render_yaml(source),
            "# Written by wisp from the instance's network configuration; rewritten at every boot.\n\n\
             auto lo\niface lo inet loopback\n    dns-nameservers 10.77.0.1\n    dns-search wisp.test\n\n\
             auto lan0\niface lan0 inet static\n    address 10.77.0.5/24\n    gateway 10.77.0.1\n    mtu 1400\n\
             \x20   post-up route add -net 10.99.0.0/16 gw 10.77.0.3 || true\n\
             \x20   pre-down route del -net 10.99.0.0/16 gw 10.77.0.3 || true\n\n\
             iface lan0 inet6 static\n    address 2001:db8:0:0:0:0:0:5/64\n    gateway 2001:db8:0:0:0:0:0:1\n\n\
             auto eth1\niface eth1 inet dhcp\n"
        );
    }

    #[test]
    fn full_buffer_is_an_error() {
        let mut nodes = vec![Node::EMPTY; 64];
        let mut text = vec![0u8; 1024];
        let mut arena = Arena::new(&mut nodes, &mut text);
        let root = arena.parse(b"version: 2\nethernets: {eth0: {dhcp4: true}}\n").unwrap();
        let config = parse(arena.value(root)).unwrap();
        let mut buf = [0u8; 100];
        assert_eq!(render(&config, &mut Out::new(&mut buf)).unwrap_err(), Full { limit: 100 });
    }

    #[test]
    fn slaac_and_dhcp6_as_cloud_init_writes_them() {
        let v1 = "version: 1
config:
  - {type: physical, name: eth0, subnets: [{type: ipv6_slaac}]}
  - {type: physical, name: eth1, subnets: [{type: ipv6_dhcpv6-stateless}, {type: static6, address: 2001:db8::5/64}]}
  - {type: physical, name: eth2, subnets: [{type: dhcp4}, {type: ipv6_dhcpv6-stateful}]}
";
        let eni = render_yaml(v1);
        assert!(eni.ends_with(
            "auto eth0\niface eth0 inet6 auto\n    dhcp 0\n\n\
             auto eth1\niface eth1 inet6 auto\n    dhcp 1\n\niface eth1 inet6 static\n    address 2001:db8:0:0:0:0:0:5/64\n\n\
             auto eth2\niface eth2 inet dhcp\niface eth2 inet6 dhcp\n"
        ), "{eni}");
        let v2 = render_yaml("version: 2\nethernets: {eth0: {dhcp6: true}}\n");
        assert!(v2.ends_with("auto eth0\niface eth0 inet6 dhcp\n"), "{v2}");
    }
}
