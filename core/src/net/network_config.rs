//! cloud-init's network configuration, versions 1 and 2, as a seed's `network-config`
//! carries it (YAML, with or without a top-level `network:`), read into one model:
//! ethernet interfaces (matched by MAC or name, renamed, MTU, static IPv4 and IPv6
//! addresses, gateways, routes, DHCP) and the nameservers. Bonds, bridges and VLANs are
//! listed as refused, with their names, so the rest still applies.

use core::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::ip_text::{netmask_len, parse_ip, parse_ipv4, parse_mac, parse_prefix_len};
use crate::yaml::{Items, Kind, NodeRef};

pub const INTERFACES_LIMIT: usize = 4;
pub const ADDRESSES_LIMIT: usize = 4;
pub const ROUTES_LIMIT: usize = 8;
pub const NAMESERVERS_LIMIT: usize = 3;
pub const SEARCH_LIMIT: usize = 6;
pub const REFUSED_LIMIT: usize = 8;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Prefix {
    pub ip: IpAddr,
    pub len: u8,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StaticRoute {
    pub to: Prefix,
    pub via: IpAddr,
}

/// Addresses from IPv6 router advertisements (SLAAC): the kernel configures them itself
/// on a link that is up, so wisp only brings the link up and writes the stanza.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Slaac {
    #[default]
    Off,
    /// v1 `ipv6_slaac`: eni's `inet6 auto` with `dhcp 0`.
    On,
    /// v1 `ipv6_dhcpv6-stateless`: SLAAC, and stateless DHCPv6 for what the
    /// advertisements leave out (eni's `dhcp 1`).
    WithStatelessDhcp,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Interface<'a> {
    /// The name it has once configured (v1 `name`, v2 `set-name` or its key).
    pub name: &'a str,
    /// v1 `mac_address`, v2 `match: macaddress`: the interface is found by it.
    pub mac: Option<[u8; 6]>,
    /// v2 `match: name`: the interface is found by this name (and renamed to `name`,
    /// as cloud-init's renderers name it).
    pub match_name: Option<&'a str>,
    /// Keep the name the machine gave the interface found (network_data.json names its
    /// links by ids, not interface names).
    pub keep_name: bool,
    pub mtu: Option<u32>,
    pub dhcp4: bool,
    /// DHCPv6, which wisp has no client for: written to /etc/network/interfaces only.
    pub dhcp6: bool,
    pub slaac: Slaac,
    pub addresses: heapless::Vec<Prefix, ADDRESSES_LIMIT>,
    pub gateway4: Option<IpAddr>,
    pub gateway6: Option<IpAddr>,
    pub routes: heapless::Vec<StaticRoute, ROUTES_LIMIT>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NetworkConfig<'a> {
    /// `network: {config: disabled}`: wisp leaves the network alone.
    pub disabled: bool,
    pub interfaces: heapless::Vec<Interface<'a>, INTERFACES_LIMIT>,
    pub nameservers: heapless::Vec<IpAddr, NAMESERVERS_LIMIT>,
    /// Search domains, each one word (`is_word`).
    pub search: heapless::Vec<&'a [u8], SEARCH_LIMIT>,
    /// Entries wisp does not apply: (kind, name), e.g. ("bond", "bond0").
    pub refused: heapless::Vec<(&'a str, &'a str), REFUSED_LIMIT>,
}

impl NetworkConfig<'_> {
    /// A nameserver, from any source and in any form, unless already listed. resolv.conf
    /// reads three: more are dropped, not an error, as cloud-init writes them all.
    pub(crate) fn add_nameserver(&mut self, address: IpAddr) {
        if !self.nameservers.contains(&address) {
            let _ = self.nameservers.push(address);
        }
    }
}

super::worded! {
    /// What is wrong. Named by an enum rather than its text so that the error is 8 bytes
    /// (24 with a `&str`): the readers' many `?`s move it.
    Mistake {
        NotMapping => "a mapping is expected",
        NoVersion => "version 1 or 2 is expected",
        NoConfigList => "version 1 needs a config list",
        EntryWithoutType => "an entry needs a type",
        TypeNotName => "type is a name",
        PhysicalWithoutName => "a physical entry needs a name",
        NameNotName => "name is a name",
        TooManyInterfaces => "more than 4 interfaces",
        UnknownType => "type is physical, nameserver, bond, bridge, vlan or route",
        SubnetWithoutType => "a subnet needs a type",
        StaticWithoutAddress => "a static subnet needs an address",
        TooManyAddresses => "more than 4 addresses",
        RouteWithoutNetwork => "a route needs a network",
        RouteWithoutGateway => "a route needs a gateway",
        TooManyRoutes => "more than 8 routes",
        UnknownSubnetType => "subnet type is static, static6, dhcp, dhcp4, dhcp6, ipv6_slaac, ipv6_dhcpv6-stateless, ipv6_dhcpv6-stateful or manual",
        NoInterfaceId => "an interface id is expected",
        MatchNameNotName => "match name is a name",
        SetNameNotName => "set-name is a name",
        Gateway4NotIpv4 => "gateway4 is an IPv4 address",
        Gateway6NotIpv6 => "gateway6 is an IPv6 address",
        RouteWithoutToVia => "a route needs to and via",
        BadInterfaceName => "bad interface name (at most 15 printable characters, no spaces)",
        BadPrefixLength => "bad prefix length",
        RouteMixesFamilies => "a route mixes IPv4 and IPv6",
        NoAddress => "an address is expected",
        NotIpAddress => "not an IP address",
        NoNetmask => "a netmask is expected",
        BadNetmask => "bad netmask",
        NoMac => "a MAC address is expected",
        BadMac => "bad MAC address",
        MtuOutOfRange => "mtu is a number from 68 to 65535",
        TooManySearchDomains => "too many search domains",
        NoName => "a name is expected",
        BadSearchDomain => "bad search domain",
    }
}

super::worded! {
    /// A version 1 entry's `type`.
    EntryType {
        Physical => "physical",
        Nameserver => "nameserver",
        Bond => "bond",
        Bridge => "bridge",
        Vlan => "vlan",
        Route => "route",
    }
}

super::worded! {
    /// A version 1 subnet's `type`, and network_data.json's network `type` (cloud-init's
    /// names, some of them the same): each reader takes its own.
    SubnetType {
        Dhcp => "dhcp",
        Dhcp4 => "dhcp4",
        Dhcp6 => "dhcp6",
        Dhcpv6Stateful => "ipv6_dhcpv6-stateful",
        Slaac => "ipv6_slaac",
        Dhcpv6Stateless => "ipv6_dhcpv6-stateless",
        Manual => "manual",
        Static => "static",
        Static6 => "static6",
        Ipv4Dhcp => "ipv4_dhcp",
        Ipv6Dhcp => "ipv6_dhcp",
        Ipv4 => "ipv4",
        Ipv6 => "ipv6",
    }
}

/// What is wrong, and the line it is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConfigError {
    pub line: u32,
    pub what: Mistake,
}

impl core::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "network-config line {}: {}", crate::text::Decimal(self.line.into()), crate::text::Plain(self.what.as_str()))
    }
}

#[inline(never)]
fn fail(at: &NodeRef<'_>, what: Mistake) -> ConfigError {
    ConfigError { line: at.line(), what }
}

fn error<T>(at: &NodeRef<'_>, what: Mistake) -> Result<T, ConfigError> {
    Err(fail(at, what))
}

/// `NodeRef::get`, kept out of line: the readers below ask for some forty keys.
#[inline(never)]
fn get<'a>(value: &NodeRef<'a>, key: &str) -> Option<NodeRef<'a>> {
    value.get(key)
}

fn text<'a>(value: NodeRef<'a>, what: Mistake) -> Result<&'a str, ConfigError> {
    match value.as_str() {
        Some(s) if value.kind() == Kind::Scalar && !s.is_empty() => Ok(s),
        _ => error(&value, what),
    }
}

/// A name written as one word of /etc/network/interfaces and resolv.conf: printable
/// ASCII without spaces, so no value can end a line or add a word to it.
pub(crate) fn is_word(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_graphic())
}

/// An interface name the kernel takes (IFNAMSIZ less its NUL), and one word.
fn interface_name<'a>(value: NodeRef<'a>, what: Mistake) -> Result<&'a str, ConfigError> {
    let name = text(value, what)?;
    if !is_word(name) || name.len() > super::link::NAME_LIMIT {
        return error(&value, Mistake::BadInterfaceName);
    }
    Ok(name)
}

/// Whether a prefix length fits its address's family.
pub(crate) fn fits(ip: &IpAddr, len: u8) -> bool {
    len <= if ip.is_ipv4() { 32 } else { 128 }
}

/// `prefix` with the length a netmask gives it, checked against its family.
fn masked(mut prefix: Prefix, netmask: NodeRef<'_>) -> Result<Prefix, ConfigError> {
    prefix.len = mask(netmask)?;
    if !fits(&prefix.ip, prefix.len) {
        return error(&netmask, Mistake::BadPrefixLength);
    }
    Ok(prefix)
}

/// A route through `via`, both of one family.
fn route(to: Prefix, via: NodeRef<'_>) -> Result<StaticRoute, ConfigError> {
    let route = StaticRoute { to, via: ip(via)? };
    if route.to.ip.is_ipv4() != route.via.is_ipv4() {
        return error(&via, Mistake::RouteMixesFamilies);
    }
    Ok(route)
}

fn push<T, const N: usize>(vec: &mut heapless::Vec<T, N>, item: T, at: &NodeRef<'_>, what: Mistake) -> Result<(), ConfigError> {
    vec.push(item).or_else(|_| error(at, what))
}

/// An address, `ADDRESS/PREFIX` or alone (a host: /32 or /128).
fn prefix(value: NodeRef<'_>) -> Result<Prefix, ConfigError> {
    let s = text(value, Mistake::NoAddress)?;
    let (ip, len) = s.split_once('/').unwrap_or((s, ""));
    let ip = parse_ip(ip.as_bytes()).ok_or_else(|| fail(&value, Mistake::NotIpAddress))?;
    let max = if ip.is_ipv4() { 32 } else { 128 };
    let len = if len.is_empty() { max } else { parse_prefix_len(len).filter(|&l| l <= max).map_or_else(|| error(&value, Mistake::BadPrefixLength), Ok)? };
    Ok(Prefix { ip, len })
}

fn ip(value: NodeRef<'_>) -> Result<IpAddr, ConfigError> {
    parse_ip(text(value, Mistake::NoAddress)?.as_bytes()).ok_or_else(|| fail(&value, Mistake::NotIpAddress))
}

/// A netmask (`255.255.0.0`) or prefix length (`16`) as a prefix length.
fn mask(value: NodeRef<'_>) -> Result<u8, ConfigError> {
    let s = text(value, Mistake::NoNetmask)?;
    if let Some(len) = parse_prefix_len(s) {
        return if len <= 128 { Ok(len) } else { error(&value, Mistake::BadPrefixLength) };
    }
    parse_ipv4(s.as_bytes()).and_then(|mask| netmask_len(IpAddr::V4(mask))).ok_or_else(|| fail(&value, Mistake::BadNetmask))
}

fn mac(value: NodeRef<'_>) -> Result<[u8; 6], ConfigError> {
    parse_mac(text(value, Mistake::NoMac)?.as_bytes()).ok_or_else(|| fail(&value, Mistake::BadMac))
}

fn mtu(value: NodeRef<'_>) -> Result<u32, ConfigError> {
    match value.as_int() {
        Some(n) if (68..=65535).contains(&n) => Ok(n as u32),
        _ => error(&value, Mistake::MtuOutOfRange),
    }
}

/// A list's items, a scalar being a list of one.
struct Listed<'a> {
    scalar: Option<NodeRef<'a>>,
    items: Items<'a>,
}

fn listed(value: NodeRef<'_>) -> Listed<'_> {
    Listed { scalar: (value.kind() == Kind::Scalar).then_some(value), items: value.items() }
}

impl<'a> Iterator for Listed<'a> {
    type Item = NodeRef<'a>;

    // Out of line: a `Chain` inlined into each of its two loops cost more.
    #[inline(never)]
    fn next(&mut self) -> Option<NodeRef<'a>> {
        self.scalar.take().or_else(|| self.items.next())
    }
}

fn strings<'a, const N: usize>(value: NodeRef<'a>, into: &mut heapless::Vec<&'a [u8], N>) -> Result<(), ConfigError> {
    for item in listed(value) {
        push(into, domain(item)?.as_bytes(), &item, Mistake::TooManySearchDomains)?;
    }
    Ok(())
}

fn domain(value: NodeRef<'_>) -> Result<&str, ConfigError> {
    let name = text(value, Mistake::NoName)?;
    if !is_word(name) {
        return error(&value, Mistake::BadSearchDomain);
    }
    Ok(name)
}

fn nameservers(value: NodeRef<'_>, config: &mut NetworkConfig<'_>) -> Result<(), ConfigError> {
    for item in listed(value) {
        config.add_nameserver(ip(item)?);
    }
    Ok(())
}

/// The nameservers and search domains `node` lists under its keys `servers` and `search`.
fn dns<'a>(node: &NodeRef<'a>, servers: &str, search: &str, config: &mut NetworkConfig<'a>) -> Result<(), ConfigError> {
    if let Some(value) = get(node, servers) {
        nameservers(value, config)?;
    }
    if let Some(value) = get(node, search) {
        strings(value, &mut config.search)?;
    }
    Ok(())
}

/// The value of `network-config=` on the kernel command line (base64 of a document, as
/// cloud-init reads it), which wins over a seed's.
pub fn from_cmdline(cmdline: &[u8]) -> Option<&[u8]> {
    cmdline.split(|b| b.is_ascii_whitespace()).find_map(|word| word.strip_prefix(b"network-config=")).filter(|v| !v.is_empty())
}

/// Whether a cloud-init system configuration (cloud.cfg) has a top-level `network:`.
pub fn has_network(root: NodeRef<'_>) -> bool {
    root.kind() == Kind::Mapping && get(&root, "network").is_some()
}

/// Reads a network configuration document (its root node).
pub fn parse(root: NodeRef<'_>) -> Result<NetworkConfig<'_>, ConfigError> {
    let mut config = NetworkConfig::default();
    parse_into(root, &mut config)?;
    Ok(config)
}

/// `parse` into a configuration the caller holds (a new one): a `NetworkConfig` is some
/// 2 KB, which a return by value would copy.
#[inline(never)]
pub fn parse_into<'a>(root: NodeRef<'a>, config: &mut NetworkConfig<'a>) -> Result<(), ConfigError> {
    let root = get(&root, "network").unwrap_or(root);
    if root.kind() != Kind::Mapping {
        return error(&root, Mistake::NotMapping);
    }
    if get(&root, "config").and_then(|c| c.as_str()) == Some("disabled") {
        config.disabled = true;
        return Ok(());
    }
    match get(&root, "version").and_then(|v| v.as_int()) {
        Some(1) => parse_v1(root, config),
        Some(2) => parse_v2(root, config),
        _ => error(&root, Mistake::NoVersion),
    }
}

// The readers below but v1's own are kept out of line: inlined into `parse` they made
// one function too large for its values to stay in registers (424 bytes more). `parse_v1`
// alone inlined costs 24 bytes less than its call (measured with the others out of line).
fn parse_v1<'a>(root: NodeRef<'a>, config: &mut NetworkConfig<'a>) -> Result<(), ConfigError> {
    let Some(entries) = get(&root, "config") else { return error(&root, Mistake::NoConfigList) };
    for entry in entries.items() {
        let kind = get(&entry, "type").map_or_else(|| error(&entry, Mistake::EntryWithoutType), |t| text(t, Mistake::TypeNotName))?;
        match EntryType::parse(kind) {
            Some(EntryType::Physical) => {
                let mut interface = Interface { name: get(&entry, "name").map_or_else(|| error(&entry, Mistake::PhysicalWithoutName), |n| interface_name(n, Mistake::NameNotName))?, ..Interface::default() };
                if let Some(value) = get(&entry, "mac_address") {
                    interface.mac = Some(mac(value)?);
                }
                if let Some(value) = get(&entry, "mtu") {
                    interface.mtu = Some(mtu(value)?);
                }
                if let Some(list) = get(&entry, "subnets") {
                    for subnet in list.items() {
                        v1_subnet(subnet, &mut interface, config)?;
                    }
                }
                push(&mut config.interfaces, interface, &entry, Mistake::TooManyInterfaces)?;
            }
            Some(EntryType::Nameserver) => {
                dns(&entry, "address", "search", config)?;
            }
            Some(EntryType::Bond | EntryType::Bridge | EntryType::Vlan | EntryType::Route) => {
                let name = get(&entry, "name").and_then(|n| n.as_str()).unwrap_or("");
                let _ = config.refused.push((kind, name));
            }
            _ => return error(&entry, Mistake::UnknownType),
        }
    }
    Ok(())
}

#[inline(never)]
fn v1_subnet<'a>(subnet: NodeRef<'a>, interface: &mut Interface<'a>, config: &mut NetworkConfig<'a>) -> Result<(), ConfigError> {
    let kind = get(&subnet, "type").map_or_else(|| error(&subnet, Mistake::SubnetWithoutType), |t| text(t, Mistake::TypeNotName))?;
    match SubnetType::parse(kind) {
        Some(SubnetType::Dhcp | SubnetType::Dhcp4) => interface.dhcp4 = true,
        Some(SubnetType::Dhcp6 | SubnetType::Dhcpv6Stateful) => interface.dhcp6 = true,
        Some(SubnetType::Slaac) => interface.slaac = Slaac::On,
        Some(SubnetType::Dhcpv6Stateless) => interface.slaac = Slaac::WithStatelessDhcp,
        Some(SubnetType::Manual) => {}
        Some(SubnetType::Static | SubnetType::Static6) => {
            let Some(address) = get(&subnet, "address") else { return error(&subnet, Mistake::StaticWithoutAddress) };
            let mut address = prefix(address)?;
            if let Some(netmask) = get(&subnet, "netmask") {
                address = masked(address, netmask)?;
            }
            push(&mut interface.addresses, address, &subnet, Mistake::TooManyAddresses)?;
            if let Some(gateway) = get(&subnet, "gateway") {
                let gateway = ip(gateway)?;
                *if gateway.is_ipv4() { &mut interface.gateway4 } else { &mut interface.gateway6 } = Some(gateway);
            }
            if let Some(list) = get(&subnet, "routes") {
                for route in list.items() {
                    push(&mut interface.routes, v1_route(route)?, &route, Mistake::TooManyRoutes)?;
                }
            }
            dns(&subnet, "dns_nameservers", "dns_search", config)?;
        }
        _ => return error(&subnet, Mistake::UnknownSubnetType),
    }
    Ok(())
}

/// A v1 route: `network` (or `destination`), `netmask` (or `prefix`), `gateway`.
#[inline(never)]
fn v1_route(route: NodeRef<'_>) -> Result<StaticRoute, ConfigError> {
    let Some(network) = get(&route, "network").or(get(&route, "destination")) else { return error(&route, Mistake::RouteWithoutNetwork) };
    let mut to = prefix(network)?;
    if let Some(netmask) = get(&route, "netmask").or(get(&route, "prefix")) {
        to = masked(to, netmask)?;
    }
    let Some(via) = get(&route, "gateway") else { return error(&route, Mistake::RouteWithoutGateway) };
    self::route(to, via)
}

#[inline(never)]
fn parse_v2<'a>(root: NodeRef<'a>, config: &mut NetworkConfig<'a>) -> Result<(), ConfigError> {
    // Read in place: an array literal here is built on the stack at each call.
    static REFUSED: [(&str, &str); 4] = [("bonds", "bond"), ("bridges", "bridge"), ("vlans", "vlan"), ("wifis", "wifi")];
    for &(key, kind) in &REFUSED {
        if let Some(list) = get(&root, key) {
            for (name, _) in list.entries() {
                let _ = config.refused.push((kind, name.as_str().unwrap_or("")));
            }
        }
    }
    // Iterated once found, not through `Option::iter().flat_map`, whose flattening
    // costs more code than the loop (the same below).
    let Some(ethernets) = get(&root, "ethernets") else { return Ok(()) };
    for (key, entry) in ethernets.entries() {
        let id = text(key, Mistake::NoInterfaceId)?;
        let mut interface = Interface { name: id, ..Interface::default() };
        if let Some(matching) = get(&entry, "match") {
            if let Some(value) = get(&matching, "macaddress") {
                interface.mac = Some(mac(value)?);
            }
            if let Some(value) = get(&matching, "name") {
                interface.match_name = Some(interface_name(value, Mistake::MatchNameNotName)?);
            }
        }
        interface.name = match get(&entry, "set-name") {
            Some(value) => interface_name(value, Mistake::SetNameNotName)?,
            None => interface_name(key, Mistake::NoInterfaceId)?,
        };
        if let Some(value) = get(&entry, "mtu") {
            interface.mtu = Some(mtu(value)?);
        }
        interface.dhcp4 = get(&entry, "dhcp4").and_then(|v| v.as_bool()).unwrap_or(false);
        interface.dhcp6 = get(&entry, "dhcp6").and_then(|v| v.as_bool()).unwrap_or(false);
        if let Some(list) = get(&entry, "addresses") {
            for address in list.items() {
                push(&mut interface.addresses, prefix(address)?, &address, Mistake::TooManyAddresses)?;
            }
        }
        if let Some(value) = get(&entry, "gateway4") {
            let gateway = ip(value)?;
            if !gateway.is_ipv4() {
                return error(&value, Mistake::Gateway4NotIpv4);
            }
            interface.gateway4 = Some(gateway);
        }
        if let Some(value) = get(&entry, "gateway6") {
            let gateway = ip(value)?;
            if !gateway.is_ipv6() {
                return error(&value, Mistake::Gateway6NotIpv6);
            }
            interface.gateway6 = Some(gateway);
        }
        if let Some(list) = get(&entry, "routes") {
            for route in list.items() {
                let (Some(to), Some(via)) = (get(&route, "to"), get(&route, "via")) else { return error(&route, Mistake::RouteWithoutToVia) };
                // netplan's `default` is 0.0.0.0/0 or ::/0, as the gateway's family says.
                let to = match to.as_str() {
                    Some("default") if ip(via)?.is_ipv6() => Prefix { ip: IpAddr::V6(Ipv6Addr::UNSPECIFIED), len: 0 },
                    Some("default") => Prefix { ip: IpAddr::V4(Ipv4Addr::UNSPECIFIED), len: 0 },
                    _ => prefix(to)?,
                };
                push(&mut interface.routes, self::route(to, via)?, &route, Mistake::TooManyRoutes)?;
            }
        }
        if let Some(nameservers) = get(&entry, "nameservers") {
            dns(&nameservers, "addresses", "search", config)?;
        }
        push(&mut config.interfaces, interface, &entry, Mistake::TooManyInterfaces)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{Arena, Node};

    fn with_config<R>(source: &str, check: impl FnOnce(Result<NetworkConfig<'_>, ConfigError>) -> R) -> R {
        let mut nodes = vec![Node::EMPTY; 512];
        let mut text = vec![0u8; 8192];
        let mut arena = Arena::new(&mut nodes, &mut text);
        crate::fuzz::seed("network_config", source.as_bytes());
        let root = arena.parse(source.as_bytes()).unwrap();
        check(parse(arena.value(root)))
    }

    fn p(s: &str) -> Prefix {
        let (ip, len) = s.split_once('/').unwrap();
        Prefix { ip: ip.parse().unwrap(), len: len.parse().unwrap() }
    }

    const V1: &str = "version: 1
config:
  - type: physical
    name: eth0
    mac_address: \"02:00:00:77:00:02\"
    mtu: 1400
    subnets:
      - type: static
        address: 10.77.0.5
        netmask: 255.255.255.0
        gateway: 10.77.0.1
        dns_nameservers: [10.77.0.1]
        routes:
          - network: 10.99.0.0
            netmask: 255.255.0.0
            gateway: 10.77.0.3
      - type: static6
        address: 2001:db8::5/64
        gateway: 2001:db8::1
  - type: physical
    name: eth1
    subnets: [{type: dhcp}]
  - type: bond
    name: bond0
  - type: nameserver
    address: [10.77.0.2]
    search: [wisp.test]
";

    #[test]
    fn version_1() {
        with_config(V1, |config| {
            let config = config.unwrap();
            let eth0 = &config.interfaces[0];
            assert_eq!((eth0.name, eth0.mac, eth0.mtu), ("eth0", Some([2, 0, 0, 0x77, 0, 2]), Some(1400)));
            assert_eq!(eth0.addresses.as_slice(), [p("10.77.0.5/24"), p("2001:db8::5/64")]);
            assert_eq!(eth0.gateway4, Some("10.77.0.1".parse().unwrap()));
            assert_eq!(eth0.gateway6, Some("2001:db8::1".parse().unwrap()));
            assert_eq!(eth0.routes.as_slice(), [StaticRoute { to: p("10.99.0.0/16"), via: "10.77.0.3".parse().unwrap() }]);
            assert!(config.interfaces[1].dhcp4 && config.interfaces[1].addresses.is_empty());
            assert_eq!(config.nameservers.as_slice(), ["10.77.0.1".parse::<IpAddr>().unwrap(), "10.77.0.2".parse().unwrap()]);
            assert_eq!(config.search.as_slice(), [b"wisp.test"]);
            assert_eq!(config.refused.as_slice(), [("bond", "bond0")]);
        });
    }

    #[test]
    fn version_2_with_network_key() {
        let source = "network:
  version: 2
  ethernets:
    id0:
      match: {macaddress: \"02:00:00:77:00:02\"}
      set-name: lan0
      addresses: [10.77.0.5/24]
      gateway4: 10.77.0.1
      routes: [{to: default, via: 10.77.0.9}]
      nameservers: {addresses: [10.77.0.1], search: [a.test, b.test]}
    eth1: {match: {name: ens4}, dhcp4: true}
  bridges:
    br0: {interfaces: [eth1]}
";
        with_config(source, |config| {
            let config = config.unwrap();
            let lan0 = &config.interfaces[0];
            assert_eq!((lan0.name, lan0.mac), ("lan0", Some([2, 0, 0, 0x77, 0, 2])));
            assert_eq!(lan0.routes[0].to, p("0.0.0.0/0"));
            assert_eq!((config.interfaces[1].name, config.interfaces[1].match_name), ("eth1", Some("ens4")));
            assert!(config.interfaces[1].dhcp4);
            assert_eq!(config.search.as_slice(), [b"a.test", b"b.test"]);
            assert_eq!(config.refused.as_slice(), [("bridge", "br0")]);
        });
    }

    #[test]
    fn a_nameserver_listed_twice_is_kept_once_in_either_form() {
        let ns = |s: &str| s.parse::<IpAddr>().unwrap();
        let v1 = "version: 1
config:
  - type: nameserver
    address: [10.77.0.1, 10.77.0.2]
  - type: nameserver
    address: 10.77.0.1
  - type: nameserver
    address: 10.77.0.3
";
        with_config(v1, |config| assert_eq!(config.unwrap().nameservers.as_slice(), [ns("10.77.0.1"), ns("10.77.0.2"), ns("10.77.0.3")]));
        let v2 = "version: 2
ethernets:
  eth0: {nameservers: {addresses: 10.77.0.1}}
  eth1: {nameservers: {addresses: [10.77.0.2, 10.77.0.1]}}
  eth2: {nameservers: {addresses: 10.77.0.2}}
";
        with_config(v2, |config| assert_eq!(config.unwrap().nameservers.as_slice(), [ns("10.77.0.1"), ns("10.77.0.2")]));
    }

    #[test]
    fn type_names_read_back() {
        for kind in [SubnetType::Dhcp, SubnetType::Dhcpv6Stateless, SubnetType::Static6, SubnetType::Ipv6] {
            assert_eq!(SubnetType::parse(kind.as_str()), Some(kind));
        }
        assert_eq!((SubnetType::Dhcpv6Stateful.as_str(), EntryType::Route.as_str()), ("ipv6_dhcpv6-stateful", "route"));
        for unknown in ["", "static\n", "Static", "ipv6_", "physical"] {
            assert_eq!(SubnetType::parse(unknown), None, "{unknown:?}");
        }
        assert_eq!(EntryType::parse("physical"), Some(EntryType::Physical));
    }

    #[test]
    fn kernel_command_line() {
        assert_eq!(from_cmdline(b"root=/dev/vda1 network-config=dmVyc2lvbjogMgo= quiet\n"), Some(&b"dmVyc2lvbjogMgo="[..]));
        assert_eq!(from_cmdline(b"root=/dev/vda1 xnetwork-config=abc network-config=\n"), None);
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        let mut garbage = crate::fuzz::Garbage::new(121);
        let pieces: [&[u8]; 16] = [b"version: 1\n", b"version: 2\n", b"config:\n", b"  - type: physical\n", b"    name: e\n",
            b"    subnets: [{type: static, address: ", b"10.0.0.1/24", b"::1/200", b"}]\n", b"ethernets:\n", b"  e: {addresses: [",
            b"], routes: [{to: default, via: ", b"fe80::1", b"}]}\n", b"    mac_address: 02:00\n", b"network: {config: disabled}\n"];
        let mut parsed = 0;
        for _ in 0..3000 {
            let source = garbage.text(&pieces, 8);
            let mut nodes = vec![Node::EMPTY; 512];
            let mut text = vec![0u8; 8192];
            let mut arena = Arena::new(&mut nodes, &mut text);
            let Ok(root) = arena.parse(&source) else { continue };
            if parse(arena.value(root)).is_ok() {
                parsed += 1;
            }
        }
        assert!(parsed > 0, "some documents are valid");
    }

    #[test]
    fn mutations_of_a_valid_document() {
        let mut garbage = crate::fuzz::Garbage::new(7);
        for _ in 0..2000 {
            let source = garbage.mutated(V1.as_bytes(), 0..V1.len(), 2);
            let mut nodes = vec![Node::EMPTY; 512];
            let mut text = vec![0u8; 8192];
            let mut arena = Arena::new(&mut nodes, &mut text);
            if let Ok(root) = arena.parse(&source) {
                if let Ok(config) = parse(arena.value(root)) {
                    assert!(config.interfaces.len() <= INTERFACES_LIMIT);
                }
            }
        }
    }

    #[test]
    fn system_configuration_with_or_without_network() {
        with_config("network: {config: disabled}\n", |config| assert!(config.unwrap().disabled));
        let mut nodes = vec![Node::EMPTY; 64];
        let mut text = vec![0u8; 1024];
        let mut arena = Arena::new(&mut nodes, &mut text);
        let root = arena.parse(b"datasource_list: [NoCloud]\nnetwork:\n  config: disabled\n").unwrap();
        assert!(has_network(arena.value(root)));
        let root = arena.parse(b"datasource_list: [NoCloud]\n").unwrap();
        assert!(!has_network(arena.value(root)));
    }

    #[test]
    fn default_route_takes_its_gateways_family() {
        with_config("version: 2\nethernets:\n  eth0:\n    routes: [{to: default, via: \"2001:db8::1\"}]\n", |config| {
            assert_eq!(config.unwrap().interfaces[0].routes[0].to, p("::/0"));
        });
    }

    #[test]
    fn disabled() {
        with_config("network: {config: disabled}\n", |config| assert!(config.unwrap().disabled));
    }

    #[test]
    fn mistakes_name_their_line() {
        let cases = [
            ("version: 3\n", 1, "version 1 or 2 is expected"),
            ("version: 2\nethernets:\n  eth0:\n    addresses: [10.0.0.300/24]\n", 4, "not an IP address"),
            ("version: 2\nethernets:\n  eth0:\n    addresses: [10.0.0.3/33]\n", 4, "bad prefix length"),
            ("version: 2\nethernets:\n  eth0:\n    match: {macaddress: 02:00}\n", 4, "bad MAC address"),
            ("version: 2\nethernets:\n  eth0:\n    mtu: 10\n", 4, "mtu is a number from 68 to 65535"),
            ("version: 1\nconfig:\n  - type: physical\n    name: eth0\n    subnets: [{type: static, address: 10.0.0.5, netmask: 255.0.255.0}]\n", 5, "bad netmask"),
            ("version: 1\nconfig:\n  - type: wireless\n", 3, "type is physical, nameserver, bond, bridge, vlan or route"),
            // What the fuzz targets assert of every configuration read: no value that would
            // add a line or a word to /etc/network/interfaces, no prefix past its family's,
            // no route mixing families.
            ("version: 2\nethernets:\n  eth0:\n    set-name: \"lan0\\nup reboot\"\n", 4, "bad interface name (at most 15 printable characters, no spaces)"),
            ("version: 2\nethernets:\n  \"eth0 inet dhcp\": {dhcp4: true}\n", 3, "bad interface name (at most 15 printable characters, no spaces)"),
            ("version: 2\nethernets:\n  a-sixteen-bytes!: {dhcp4: true}\n", 3, "bad interface name (at most 15 printable characters, no spaces)"),
            ("version: 2\nethernets:\n  eth0:\n    nameservers: {search: [\"a.test\\0b\"]}\n", 4, "bad search domain"),
            ("version: 1\nconfig:\n  - type: physical\n    name: eth0\n    subnets: [{type: static, address: 10.0.0.5, netmask: 64}]\n", 5, "bad prefix length"),
            ("version: 2\nethernets:\n  eth0:\n    routes: [{to: 10.0.0.0/8, via: \"fe80::1\"}]\n", 4, "a route mixes IPv4 and IPv6"),
            // ci/fuzz network_config, crash-d8b00aee: gateway4 given an IPv6 address.
            ("version: 2\nethernets:\n  id0:\n    gateway4: 2001:1b::8d\n", 4, "gateway4 is an IPv4 address"),
            ("version: 2\nethernets:\n  id0:\n    gateway6: 10.77.0.1\n", 4, "gateway6 is an IPv6 address"),
        ];
        for (source, line, what) in cases {
            with_config(source, |config| {
                let error = config.unwrap_err();
                assert_eq!((error.line, error.what.as_str()), (line, what), "{source}");
            });
        }
    }
}
