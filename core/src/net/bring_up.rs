//! The decisions of the network bring-up, from what the kernel reports (links, addresses,
//! routes) and what a DHCP server leased: whether the instance needs a network at all,
//! which interface to use (tiny-cloud's choice), and which changes the lease still needs,
//! so that applying it twice changes nothing the second time.

use core::net::{IpAddr, Ipv4Addr};

use super::address::{Address, SCOPE_UNIVERSE};
use super::dhcp::{Lease, ROUTES_LIMIT};
use super::network_config::{Interface, ADDRESSES_LIMIT};
use super::route::PROTOCOL_BOOT;
use super::link::Link;
use super::route::{Route, PROTOCOL_DHCP};
use super::ip_text::put_ip;
use crate::out::{Full, Out};

/// A global address on an interface that is not a loopback: the network is configured
/// (by the image's own DHCP client, or an earlier run), and wisp leaves it alone.
pub fn configured_address<'a>(addresses: &'a [Address], links: &[Link]) -> Option<&'a Address> {
    let loopback = |index: u32| links.iter().any(|l| l.index == index && l.is_loopback());
    addresses.iter().find(|a| a.scope == SCOPE_UNIVERSE && !loopback(a.index))
}

/// Whether the boot phase takes a DHCP lease, once the network configuration is applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Need<'a> {
    /// An address is there already: the network is left alone.
    Configured(&'a Address),
    /// The cloud's seed is on the instance and its configuration asks for no DHCP.
    LocalSeed,
    Dhcp,
}

/// An address already configured wins; a local seed needs the network only when its
/// configuration asks for DHCP (`dhcp_asked`); any other cloud's metadata is served
/// over the network.
pub fn need_dhcp<'a>(addresses: &'a [Address], links: &[Link], local_seed: bool, dhcp_asked: bool) -> Need<'a> {
    match configured_address(addresses, links) {
        Some(configured) => Need::Configured(configured),
        None if local_seed && !dhcp_asked => Need::LocalSeed,
        None => Need::Dhcp,
    }
}

/// tiny-cloud's choice: the ethernet interface with a carrier and the lowest ifindex,
/// else the lowest ifindex of all.
pub fn choose_interface(links: &[Link]) -> Option<&Link> {
    let ethernet = || links.iter().filter(|l| l.is_ethernet());
    ethernet().filter(|l| l.carrier).min_by_key(|l| l.index).or_else(|| ethernet().min_by_key(|l| l.index))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeaseError {
    /// An ACK without an address (yiaddr 0.0.0.0).
    NoAddress,
    /// More routes than wisp applies (option 121's limit, plus the routes to gateways).
    TooManyRoutes { limit: usize },
}

impl core::fmt::Display for LeaseError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            LeaseError::NoAddress => f.write_str("the DHCP acknowledgement has no address"),
            LeaseError::TooManyRoutes { limit } => write!(f, "the DHCP lease has more than {} routes", crate::text::Decimal(*limit as u64)),
        }
    }
}

pub const ROUTE_CHANGES_LIMIT: usize = ROUTES_LIMIT + 2;

/// What applying a lease to an interface still has to do.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Changes {
    pub interface: u32,
    /// The name the link is to have, when it has another.
    pub rename: bool,
    pub mtu: Option<u32>,
    pub addresses: heapless::Vec<Address, ADDRESSES_LIMIT>,
    /// In order: a route to a gateway comes before the routes through it.
    pub routes: heapless::Vec<Route, ROUTE_CHANGES_LIMIT>,
}

impl Changes {
    pub fn is_empty(&self) -> bool {
        !self.rename && self.mtu.is_none() && self.addresses.is_empty() && self.routes.is_empty()
    }

    /// `address`, unless the kernel has it already.
    fn add_address(&mut self, address: Address, kernel: &[Address]) {
        if !kernel.iter().any(|a| a.same(&address)) {
            let _ = self.addresses.push(address);
        }
    }

    /// `route`, unless the kernel or these changes have it already.
    #[inline(never)]
    fn add_route(&mut self, route: Route, kernel: &[Route]) -> Result<(), LeaseError> {
        if kernel.iter().chain(&self.routes).any(|r| r.same(&route)) {
            return Ok(());
        }
        self.routes.push(route).map_err(|_| LeaseError::TooManyRoutes { limit: ROUTE_CHANGES_LIMIT })
    }
}

/// What the lease asks for on `link` and is not there yet. The address is permanent (no
/// lifetimes): wisp does not renew leases (see the README).
pub fn lease_changes(lease: &Lease, link: &Link, addresses: &[Address], routes: &[Route]) -> Result<Changes, LeaseError> {
    let ip = lease.address.ok_or(LeaseError::NoAddress)?;
    // 576 is IPv4's smallest MTU every host must accept (RFC 2132 5.1's minimum, 68, is
    // too small to be meant).
    let mtu = lease.mtu.map(u32::from).filter(|&mtu| mtu >= 576 && mtu != link.mtu);
    let mut changes = Changes { interface: link.index, mtu, ..Changes::default() };
    let prefix_len = if lease.prefix_len == 0 { 32 } else { lease.prefix_len };
    changes.add_address(Address::new(link.index, IpAddr::V4(ip), prefix_len), addresses);
    lease_routes(lease, link.index, &Subnet { ip, prefix_len }, routes, &mut changes)?;
    Ok(changes)
}

/// The link a configured interface means: the one with its MAC, else the one its
/// `match: name` names, else the one with its name.
#[inline(never)]
pub fn find_link<'l>(interface: &Interface<'_>, links: &'l [Link]) -> Option<&'l Link> {
    let name = interface.match_name.unwrap_or(interface.name).as_bytes();
    match interface.mac {
        Some(mac) => links.iter().find(|l| l.mac == Some(mac)),
        None => links.iter().find(|l| l.name() == name || l.name() == interface.name.as_bytes()),
    }
}

/// What a configured interface still needs on `link`: its name, MTU, addresses, the
/// default routes through its gateways and its static routes.
#[inline(never)]
pub fn config_changes(interface: &Interface<'_>, link: &Link, addresses: &[Address], routes: &[Route]) -> Result<Changes, LeaseError> {
    let mut changes = Changes {
        interface: link.index,
        rename: !interface.keep_name && link.name() != interface.name.as_bytes(),
        mtu: interface.mtu.filter(|&mtu| mtu != link.mtu),
        ..Changes::default()
    };
    for prefix in &interface.addresses {
        changes.add_address(Address::new(link.index, prefix.ip, prefix.len), addresses);
    }
    let defaults = [(&interface.gateway4, IpAddr::V4(Ipv4Addr::UNSPECIFIED)), (&interface.gateway6, IpAddr::V6(core::net::Ipv6Addr::UNSPECIFIED))];
    for (gateway, any) in defaults {
        if let Some(gateway) = gateway {
            changes.add_route(Route::new(any, 0, Some(*gateway), link.index, PROTOCOL_BOOT), routes)?;
        }
    }
    for route in &interface.routes {
        changes.add_route(Route::new(route.to.ip, route.to.len, Some(route.via), link.index, PROTOCOL_BOOT), routes)?;
    }
    Ok(changes)
}

struct Subnet {
    ip: Ipv4Addr,
    prefix_len: u8,
}

impl Subnet {
    fn contains(&self, other: Ipv4Addr) -> bool {
        let mask = u32::MAX.checked_shl(32 - self.prefix_len as u32).unwrap_or(0);
        u32::from(self.ip) & mask == u32::from(other) & mask
    }
}

/// Option 121's routes when the lease has them (RFC 3442: they replace the router
/// option), else a default route through the router, added to `changes` unless the
/// kernel (`kernel`) or `changes` have them. A gateway outside the subnet (GCP leases a
/// /32) gets an on-link route to itself first, as dhcpcd does.
fn lease_routes(lease: &Lease, interface: u32, subnet: &Subnet, kernel: &[Route], changes: &mut Changes) -> Result<(), LeaseError> {
    let mut via = |destination: Ipv4Addr, prefix_len: u8, gateway: Ipv4Addr| {
        if gateway.is_unspecified() {
            return changes.add_route(Route::new(IpAddr::V4(destination), prefix_len, None, interface, PROTOCOL_DHCP), kernel);
        }
        if !subnet.contains(gateway) {
            changes.add_route(Route::new(IpAddr::V4(gateway), 32, None, interface, PROTOCOL_DHCP), kernel)?;
        }
        changes.add_route(Route::new(IpAddr::V4(destination), prefix_len, Some(IpAddr::V4(gateway)), interface, PROTOCOL_DHCP), kernel)
    };
    if lease.classless_routes.is_empty() {
        if let Some(router) = lease.router.filter(|r| !r.is_unspecified()) {
            via(Ipv4Addr::UNSPECIFIED, 0, router)?;
        }
    }
    for route in &lease.classless_routes {
        via(route.destination, route.prefix_len, route.gateway)?;
    }
    Ok(())
}

/// `/etc/resolv.conf` from the lease: its search list (else its domain) and its DNS
/// servers. `Ok(false)` when the lease has neither, and the file is left as it is.
pub fn resolv_conf(lease: &Lease, interface: &[u8], out: &mut Out<'_>) -> Result<bool, Full> {
    let search = if lease.search.is_empty() { &lease.domain } else { &lease.search };
    let mut servers = [IpAddr::V4(Ipv4Addr::UNSPECIFIED); super::dhcp::DNS_LIMIT];
    for (slot, server) in servers.iter_mut().zip(&lease.dns) {
        *slot = IpAddr::V4(*server);
    }
    let searches = [&search[..]];
    let search_list: &[&[u8]] = if search.is_empty() { &[] } else { &searches };
    write_resolv_conf(&[b"the DHCP lease on ", interface], search_list, &servers[..lease.dns.len()], out)
}

/// `/etc/resolv.conf` with a first comment naming where it comes from; `Ok(false)`, and
/// nothing written, when there is neither a search list nor a server.
#[inline(never)]
pub fn write_resolv_conf(origin: &[&[u8]], search: &[&[u8]], servers: &[IpAddr], out: &mut Out<'_>) -> Result<bool, Full> {
    if search.is_empty() && servers.is_empty() {
        return Ok(false);
    }
    out.put(b"# Written by wisp from ")?;
    out.put_all(origin)?;
    out.put(b".\n")?;
    if !search.is_empty() {
        out.put(b"search")?;
        for domain in search {
            out.put_all(&[b" ", domain])?;
        }
        out.put(b"\n")?;
    }
    for server in servers {
        out.put(b"nameserver ")?;
        put_ip(out, server)?;
        out.put(b"\n")?;
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::dhcp::{ClasslessRoute, Packet};
    use crate::net::ipv4_udp::Datagram;
    use crate::net::netlink;

    static NEWLINK: &[u8] = include_bytes!("captures/newlink-veth.bin");
    static DUMP_ADDR: &[u8] = include_bytes!("captures/dump-addr.bin");
    static DUMP_ROUTE: &[u8] = include_bytes!("captures/dump-route.bin");
    static ACK: &[u8] = include_bytes!("captures/dnsmasq-ack.ip");

    #[test]
    fn dhcp_runs_unless_an_address_is_there_or_a_local_seed_asks_for_none() {
        let links = [veth()];
        let global = [Address::new(links[0].index, IpAddr::V4(core::net::Ipv4Addr::new(10, 0, 0, 5)), 24)];
        for local_seed in [false, true] {
            for dhcp_asked in [false, true] {
                assert_eq!(need_dhcp(&global, &links, local_seed, dhcp_asked), Need::Configured(&global[0]));
            }
        }
        assert_eq!(need_dhcp(&[], &links, true, false), Need::LocalSeed);
        assert_eq!(need_dhcp(&[], &links, true, true), Need::Dhcp);
        assert_eq!(need_dhcp(&[], &links, false, false), Need::Dhcp);
    }

    fn veth() -> Link {
        Link::parse(&netlink::Message::new_checked(NEWLINK).unwrap()).unwrap().unwrap()
    }

    fn lease() -> Lease {
        Packet::new_checked(Datagram::parse(ACK).unwrap().payload).unwrap().lease().unwrap()
    }

    fn v4(a: u8, b: u8, c: u8, d: u8) -> Ipv4Addr {
        Ipv4Addr::new(a, b, c, d)
    }

    fn with(link: Link, index: u32, carrier: bool) -> Link {
        Link { index, carrier, ..link }
    }

    #[test]
    fn chooses_as_tiny_cloud() {
        let eth = veth();
        let lo = Link { hardware_type: 772, flags: 0x9, index: 1, ..eth };
        assert_eq!(choose_interface(&[lo]), None);
        let links = [lo, with(eth, 7, false), with(eth, 3, false), with(eth, 9, true), with(eth, 8, true)];
        assert_eq!(choose_interface(&links).unwrap().index, 8);
        let links = [lo, with(eth, 7, false), with(eth, 3, false)];
        assert_eq!(choose_interface(&links).unwrap().index, 3);
    }

    #[test]
    fn a_configured_address_is_found_and_loopbacks_are_not() {
        let addresses: Vec<Address> = netlink::messages(DUMP_ADDR).map(|m| Address::parse(&m.unwrap()).unwrap().unwrap()).collect();
        let lo = Link { hardware_type: 772, flags: 0x9, index: 1, ..veth() };
        assert_eq!(configured_address(&addresses, &[lo, veth()]).unwrap().ip, IpAddr::V4(v4(10, 9, 0, 56)));
        // Only lo's addresses and eth7's link-local one: nothing configured. The metadata
        // address a test puts on lo (169.254.169.254/32, scope global) does not count.
        let mut metadata = Address::new(1, IpAddr::V4(v4(169, 254, 169, 254)), 32);
        metadata.scope = SCOPE_UNIVERSE;
        let unconfigured = [addresses[0], addresses[2], addresses[3], metadata];
        assert_eq!(configured_address(&unconfigured, &[lo, veth()]), None);
    }

    #[test]
    fn classless_routes_replace_the_router() {
        let changes = lease_changes(&lease(), &with(veth(), 5, true), &[], &[]).unwrap();
        assert_eq!(changes.mtu, None, "the veth's MTU is already 1400");
        assert_eq!(changes.addresses.as_slice(), [Address::new(5, IpAddr::V4(v4(10, 9, 0, 56)), 24)]);
        let gateway = Some(IpAddr::V4(v4(10, 9, 0, 1)));
        assert_eq!(
            changes.routes.as_slice(),
            [
                Route::new(IpAddr::V4(v4(169, 254, 169, 254)), 32, gateway, 5, PROTOCOL_DHCP),
                Route::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), 0, gateway, 5, PROTOCOL_DHCP),
            ]
        );
    }

    #[test]
    fn applying_twice_changes_nothing() {
        let link = veth();
        let addresses: Vec<Address> = netlink::messages(DUMP_ADDR).map(|m| Address::parse(&m.unwrap()).unwrap().unwrap()).collect();
        let routes: Vec<Route> = netlink::messages(DUMP_ROUTE).map(|m| Route::parse(&m.unwrap()).unwrap().unwrap()).collect();
        let changes = lease_changes(&lease(), &link, &addresses, &routes).unwrap();
        assert!(changes.is_empty(), "{changes:?}");
    }

    #[test]
    fn router_outside_the_subnet_gets_an_on_link_route() {
        let mut lease = lease();
        lease.classless_routes.clear();
        lease.prefix_len = 32;
        lease.mtu = Some(1460);
        let changes = lease_changes(&lease, &veth(), &[], &[]).unwrap();
        assert_eq!(changes.mtu, Some(1460));
        let gateway = IpAddr::V4(v4(10, 9, 0, 1));
        assert_eq!(
            changes.routes.as_slice(),
            [
                Route::new(gateway, 32, None, 5, PROTOCOL_DHCP),
                Route::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), 0, Some(gateway), 5, PROTOCOL_DHCP),
            ]
        );
        // An on-link classless route has no gateway.
        lease.classless_routes.push(ClasslessRoute { destination: v4(10, 20, 0, 0), prefix_len: 16, gateway: Ipv4Addr::UNSPECIFIED }).unwrap();
        let changes = lease_changes(&lease, &veth(), &[], &[]).unwrap();
        assert_eq!(changes.routes.as_slice(), [Route::new(IpAddr::V4(v4(10, 20, 0, 0)), 16, None, 5, PROTOCOL_DHCP)]);
        lease.address = None;
        assert_eq!(lease_changes(&lease, &veth(), &[], &[]).unwrap_err(), LeaseError::NoAddress);
    }

    #[test]
    fn configured_interface_found_by_mac_and_renamed() {
        use crate::net::network_config::{Prefix, StaticRoute};
        let link = veth();
        let mut interface = Interface { name: "lan0", mac: Some([2, 0, 0, 0, 0, 2]), mtu: Some(1400), ..Interface::default() };
        interface.addresses.push(Prefix { ip: IpAddr::V4(v4(10, 9, 0, 56)), len: 24 }).unwrap();
        interface.addresses.push(Prefix { ip: "2001:db8::5".parse().unwrap(), len: 64 }).unwrap();
        interface.gateway4 = Some(IpAddr::V4(v4(10, 9, 0, 1)));
        interface.routes.push(StaticRoute { to: Prefix { ip: IpAddr::V4(v4(10, 99, 0, 0)), len: 16 }, via: IpAddr::V4(v4(10, 9, 0, 3)) }).unwrap();
        assert_eq!(find_link(&interface, &[link]).unwrap().index, 5);
        let addresses: Vec<Address> = netlink::messages(DUMP_ADDR).map(|m| Address::parse(&m.unwrap()).unwrap().unwrap()).collect();
        let routes: Vec<Route> = netlink::messages(DUMP_ROUTE).map(|m| Route::parse(&m.unwrap()).unwrap().unwrap()).collect();
        let changes = config_changes(&interface, &link, &addresses, &routes).unwrap();
        // The IPv4 address, the MTU and the default route are there already.
        assert!(changes.rename && changes.mtu.is_none());
        assert_eq!(changes.addresses.as_slice(), [Address::new(5, "2001:db8::5".parse().unwrap(), 64)]);
        assert_eq!(changes.routes.as_slice(), [Route::new(IpAddr::V4(v4(10, 99, 0, 0)), 16, Some(IpAddr::V4(v4(10, 9, 0, 3))), 5, PROTOCOL_BOOT)]);
        let by_name = Interface { name: "eth7", ..Interface::default() };
        assert_eq!(find_link(&by_name, &[link]).unwrap().index, 5);
        assert!(config_changes(&by_name, &link, &[], &[]).unwrap().is_empty());
        assert_eq!(find_link(&Interface { name: "eth9", ..Interface::default() }, &[link]), None);
    }

    #[test]
    fn resolv_conf_from_the_lease() {
        let mut buf = [0u8; 256];
        let mut out = Out::new(&mut buf);
        assert!(resolv_conf(&lease(), b"eth7", &mut out).unwrap());
        assert_eq!(
            core::str::from_utf8(out.written()).unwrap(),
            "# Written by wisp from the DHCP lease on eth7.\nsearch a.test b.test\nnameserver 10.9.0.1\nnameserver 10.9.0.2\n"
        );
        let mut empty = lease();
        empty.dns.clear();
        empty.search.clear();
        empty.domain.clear();
        assert!(!resolv_conf(&empty, b"eth7", &mut Out::new(&mut buf)).unwrap());
        let mut small = [0u8; 20];
        assert_eq!(resolv_conf(&lease(), b"eth7", &mut Out::new(&mut small)).unwrap_err(), Full { limit: 20 });
    }
}
