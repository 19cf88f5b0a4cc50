//! OpenStack's `network_data.json` (ConfigDrive and the metadata service), read into the
//! same model as cloud-init's network-config: `links` (found by their MAC, keeping the
//! name the machine gave them), `networks` (static IPv4 and IPv6 with routes, DHCP) and
//! `services` (DNS). Bonds, VLANs and bridges are refused by name, as for network-config.

use core::net::IpAddr;

use super::ip_text::{netmask_len, parse_ip, parse_mac, parse_prefix_len, parse_unsigned};
use super::network_config::{fits, is_word, EntryType, Interface, NetworkConfig, Prefix, Slaac, StaticRoute, SubnetType};
use crate::json::{JsonError, JsonText};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataError {
    Json(JsonError),
    /// A member missing, with a value of the wrong shape, or one too many; `what` names it.
    Bad { what: Mistake },
}

super::worded! {
    /// What is missing, of the wrong shape, or more than the configuration holds. Named by an enum rather than its text so that
    /// the error is 8 bytes: the parser's many `?`s move it.
    Mistake {
        NotPlainString => "a member that should be a plain string is not",
        NotUtf8 => "a string is not UTF-8",
        MtuNotNumber => "mtu is not a number",
        NotIpAddress => "an address is not an IP address",
        BadNetmask => "bad netmask",
        BadMac => "bad MAC address",
        LinkWithoutId => "a link has no id",
        BadLinkId => "bad link id",
        LinkWithoutMac => "a link has no ethernet_mac_address",
        MtuOutOfRange => "mtu is a number from 68 to 65535",
        NetworkWithoutLink => "a network has no link",
        StaticWithoutAddress => "a static network has no ip_address",
        BadPrefixLength => "bad prefix length",
        RouteWithoutNetwork => "a route has no network",
        RouteWithoutGateway => "a route has no gateway",
        RouteMixesFamilies => "a route mixes IPv4 and IPv6",
        TooManyLinks => "too many links",
        TooManyAddresses => "too many addresses",
        TooManyRoutes => "too many routes",
    }
}

impl From<JsonError> for DataError {
    fn from(e: JsonError) -> DataError {
        DataError::Json(e)
    }
}

impl core::fmt::Display for DataError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            DataError::Json(e) => write!(f, "network_data.json: {e}"),
            DataError::Bad { what } => write!(f, "network_data.json: {what}", what = crate::text::Plain(what.as_str())),
        }
    }
}

fn bad(what: Mistake) -> DataError {
    DataError::Bad { what }
}

/// A string member without escapes (ids, addresses and MACs have none).
fn string<'a>(object: &JsonText<'a>, name: &str) -> Result<Option<&'a str>, DataError> {
    object.get(name)?.map(plain).transpose()
}

/// A string value without escapes, as text: its 16-byte result comes back in registers,
/// where `string`'s 24 go through memory.
fn plain(value: JsonText<'_>) -> Result<&str, DataError> {
    let text = value.text;
    if text.len() < 2 || text[0] != b'"' || text.contains(&b'\\') {
        return Err(bad(Mistake::NotPlainString));
    }
    core::str::from_utf8(&text[1..text.len() - 1]).map_err(|_| bad(Mistake::NotUtf8))
}

/// A string member that must be there: `missing` when it is not.
fn required<'a>(object: &JsonText<'a>, name: &str, missing: Mistake) -> Result<&'a str, DataError> {
    string(object, name)?.ok_or(bad(missing))
}

/// Inlined, as `address`, `prefix_len` and `mac` are: each is one check and its error,
/// smaller in place than a call whose result comes back through memory (an `IpAddr`'s is
/// 20 bytes). The four inlined save 144 bytes of the full build.
#[inline(always)]
fn number(object: &JsonText<'_>, name: &str) -> Result<Option<u32>, DataError> {
    let Some(value) = object.get(name)? else { return Ok(None) };
    let number = parse_unsigned(value.text).and_then(|n| u32::try_from(n).ok());
    number.map(Some).ok_or(bad(Mistake::MtuNotNumber))
}

#[inline(always)]
fn address(text: &str) -> Result<IpAddr, DataError> {
    parse_ip(text.as_bytes()).ok_or(bad(Mistake::NotIpAddress))
}

/// A netmask (`255.255.255.0`, `ffff:ffff::`) or a prefix length as text.
#[inline(always)]
fn prefix_len(mask: &str) -> Result<u8, DataError> {
    if let Some(len) = parse_prefix_len(mask) {
        return Ok(len);
    }
    parse_ip(mask.as_bytes()).and_then(netmask_len).ok_or(bad(Mistake::BadNetmask))
}

#[inline(always)]
fn mac(text: &str) -> Result<[u8; 6], DataError> {
    parse_mac(text.as_bytes()).ok_or(bad(Mistake::BadMac))
}

pub fn parse(document: &[u8]) -> Result<NetworkConfig<'_>, DataError> {
    let mut config = NetworkConfig::default();
    parse_into(document, &mut config)?;
    Ok(config)
}

/// `parse` into a configuration the caller holds (a new one): a `NetworkConfig` is some
/// 2 KB, which a return by value would copy.
#[inline(never)]
pub fn parse_into<'a>(document: &'a [u8], config: &mut NetworkConfig<'a>) -> Result<(), DataError> {
    let root = JsonText::parse(document)?.object()?;
    if let Some(links) = root.get("links") {
        let mut elements = links.elements()?;
        while let Some(link) = elements.next_element() {
            let id = required(&link, "id", Mistake::LinkWithoutId)?;
            let kind = string(&link, "type")?.unwrap_or("phy");
            if matches!(EntryType::parse(kind), Some(EntryType::Bond | EntryType::Vlan | EntryType::Bridge)) {
                let _ = config.refused.push((kind, id));
                continue;
            }
            // The id is /etc/network/interfaces' name for a link wisp does not find.
            if !is_word(id) {
                return Err(bad(Mistake::BadLinkId));
            }
            let address = required(&link, "ethernet_mac_address", Mistake::LinkWithoutMac)?;
            let mtu = number(&link, "mtu")?;
            if mtu.is_some_and(|mtu| !(68..=65535).contains(&mtu)) {
                return Err(bad(Mistake::MtuOutOfRange));
            }
            let interface = Interface { name: id, mac: Some(mac(address)?), keep_name: true, mtu, ..Interface::default() };
            config.interfaces.push(interface).map_err(|_| bad(Mistake::TooManyLinks))?;
        }
    }
    if let Some(networks) = root.get("networks") {
        let mut elements = networks.elements()?;
        while let Some(network) = elements.next_element() {
            let link = required(&network, "link", Mistake::NetworkWithoutLink)?;
            // A network on a refused link (a VLAN, a bond) goes with it.
            let Some(interface) = config.interfaces.iter_mut().find(|i| i.name == link) else { continue };
            match SubnetType::parse(string(&network, "type")?.unwrap_or("")) {
                Some(SubnetType::Ipv4Dhcp | SubnetType::Dhcp4) => interface.dhcp4 = true,
                Some(SubnetType::Ipv6Dhcp | SubnetType::Dhcpv6Stateful) => interface.dhcp6 = true,
                Some(SubnetType::Slaac) => interface.slaac = Slaac::On,
                Some(SubnetType::Dhcpv6Stateless) => interface.slaac = Slaac::WithStatelessDhcp,
                Some(SubnetType::Ipv4 | SubnetType::Ipv6) => static_network(&network, interface)?,
                _ => {}
            }
        }
    }
    if let Some(services) = root.get("services") {
        let mut elements = services.elements()?;
        while let Some(service) = elements.next_element() {
            if string(&service, "type")? == Some("dns") {
                if let Some(server) = string(&service, "address")? {
                    config.add_nameserver(address(server)?);
                }
            }
        }
    }
    Ok(())
}

/// A static network's address, its gateways and routes, onto its link's interface.
fn static_network(network: &JsonText<'_>, interface: &mut Interface<'_>) -> Result<(), DataError> {
    let text = required(network, "ip_address", Mistake::StaticWithoutAddress)?;
    let (ip, len) = text.split_once('/').unwrap_or((text, ""));
    let ip = address(ip)?;
    let len = match (len, string(network, "netmask")?) {
        ("", Some(mask)) => prefix_len(mask)?,
        ("", None) => if ip.is_ipv4() { 32 } else { 128 },
        (len, _) => parse_prefix_len(len).ok_or(bad(Mistake::BadPrefixLength))?,
    };
    if !fits(&ip, len) {
        return Err(bad(Mistake::BadPrefixLength));
    }
    interface.addresses.push(Prefix { ip, len }).map_err(|_| bad(Mistake::TooManyAddresses))?;
    if let Some(routes) = network.get("routes")? {
        let mut routes = routes.elements()?;
        while let Some(route) = routes.next_element() {
            let to = address(required(&route, "network", Mistake::RouteWithoutNetwork)?)?;
            let len = prefix_len(string(&route, "netmask")?.unwrap_or("0"))?;
            let via = address(required(&route, "gateway", Mistake::RouteWithoutGateway)?)?;
            if !fits(&to, len) {
                return Err(bad(Mistake::BadNetmask));
            }
            if to.is_ipv4() != via.is_ipv4() {
                return Err(bad(Mistake::RouteMixesFamilies));
            }
            if len == 0 {
                *if via.is_ipv4() { &mut interface.gateway4 } else { &mut interface.gateway6 } = Some(via);
            } else {
                interface.routes.push(StaticRoute { to: Prefix { ip: to, len }, via }).map_err(|_| bad(Mistake::TooManyRoutes))?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::Expected;

    /// From OpenStack's documentation of the config drive, shortened.
    const DOCUMENT: &str = r#"{
  "links": [
    {"id": "tapb9d4e7f6-5c", "type": "ovs", "ethernet_mac_address": "fa:16:3e:9c:bf:3d", "mtu": 1450, "vif_id": "b9d4e7f6"},
    {"id": "bond0", "type": "bond", "bond_links": ["a", "b"], "ethernet_mac_address": "fa:16:3e:00:00:01"},
    {"id": "tap2", "type": "phy", "ethernet_mac_address": "fa:16:3e:00:00:02"}
  ],
  "networks": [
    {"id": "network0", "type": "ipv4", "link": "tapb9d4e7f6-5c", "ip_address": "10.0.0.5", "netmask": "255.255.255.0",
     "routes": [{"network": "0.0.0.0", "netmask": "0.0.0.0", "gateway": "10.0.0.1"},
                {"network": "192.168.0.0", "netmask": "255.255.0.0", "gateway": "10.0.0.254"}],
     "network_id": "da5bb487"},
    {"id": "network1", "type": "ipv6", "link": "tapb9d4e7f6-5c", "ip_address": "2001:db8::5/64",
     "routes": [{"network": "::", "netmask": "::", "gateway": "2001:db8::1"}]},
    {"id": "network2", "type": "ipv4_dhcp", "link": "tap2"},
    {"id": "network3", "type": "ipv4", "link": "bond0", "ip_address": "10.9.9.9", "netmask": "255.0.0.0"}
  ],
  "services": [{"type": "dns", "address": "8.8.8.8"}, {"type": "ntp", "address": "10.0.0.2"}]
}"#;

    #[test]
    fn openstack_example() {
        crate::fuzz::seed("network_data", DOCUMENT.as_bytes());
        let config = parse(DOCUMENT.as_bytes()).unwrap();
        assert_eq!(config.interfaces.len(), 2);
        let first = &config.interfaces[0];
        assert_eq!((first.mac, first.mtu, first.keep_name), (Some([0xfa, 0x16, 0x3e, 0x9c, 0xbf, 0x3d]), Some(1450), true));
        let p = |ip: &str, len| Prefix { ip: ip.parse().unwrap(), len };
        assert_eq!(first.addresses.as_slice(), [p("10.0.0.5", 24), p("2001:db8::5", 64)]);
        assert_eq!(first.gateway4, Some("10.0.0.1".parse().unwrap()));
        assert_eq!(first.gateway6, Some("2001:db8::1".parse().unwrap()));
        assert_eq!(first.routes.as_slice(), [StaticRoute { to: p("192.168.0.0", 16), via: "10.0.0.254".parse().unwrap() }]);
        assert!(config.interfaces[1].dhcp4);
        assert_eq!(config.refused.as_slice(), [("bond", "bond0")]);
        assert_eq!(config.nameservers.as_slice(), ["8.8.8.8".parse::<IpAddr>().unwrap()]);
    }

    #[test]
    fn mutations_are_errors_not_panics() {
        let mut garbage = crate::fuzz::Garbage::new(3442);
        let mut refused = 0;
        for _ in 0..3000 {
            let document = garbage.mutated(DOCUMENT.as_bytes(), 0..DOCUMENT.len(), 2);
            let result = parse(&document).map(|config| config.interfaces.len());
            match result {
                Ok(interfaces) => assert!(interfaces <= 3),
                Err(_) => refused += 1,
            }
        }
        assert!(refused > 0);
    }

    #[test]
    fn mistakes_are_named() {
        let cases: [(&str, DataError); 13] = [
            (r#"{"links": [{"id": "x", "ethernet_mac_address": "fa:16:3e:00:00:02", "mtu": "1500"}]}"#, bad(Mistake::MtuNotNumber)),
            (r#"{"links": [{"id": "x", "ethernet_mac_address": "fa:16:3e:00:00:02", "mtu": 4294967296}]}"#, bad(Mistake::MtuNotNumber)),
            (r#"{"links": [{"id": "x", "ethernet_mac_address": "fa:16"}]}"#, bad(Mistake::BadMac)),
            (r#"{"links": [{"type": "phy"}]}"#, bad(Mistake::LinkWithoutId)),
            (r#"{"links": [{"id": "x", "ethernet_mac_address": "fa:16:3e:00:00:02"}], "networks": [{"type": "ipv4", "link": "x", "ip_address": "10.0.0.5", "netmask": "255.0.255.0"}]}"#, bad(Mistake::BadNetmask)),
            (r#"{"links": [}"#, DataError::Json(JsonError::Syntax { offset: 11 })),
            (r#"["links"]"#, DataError::Json(JsonError::WrongType { expected: Expected::Object })),
            (r#"{"links": [1]}"#, DataError::Json(JsonError::WrongType { expected: Expected::Object })),
            // The fuzz target network_data's finding (crash-fe97d37f: an id with a space adds
            // words to /etc/network/interfaces), and values the kernel would refuse later.
            (r#"{"links": [{"id": " tap2", "ethernet_mac_address": "fa:16:3e:00:00:02"}]}"#, bad(Mistake::BadLinkId)),
            (r#"{"links": [{"id": "x", "ethernet_mac_address": "fa:16:3e:00:00:02", "mtu": 0}]}"#, bad(Mistake::MtuOutOfRange)),
            (r#"{"links": [{"id": "x", "ethernet_mac_address": "fa:16:3e:00:00:02"}], "networks": [{"type": "ipv4", "link": "x", "ip_address": "10.0.0.5/99"}]}"#, bad(Mistake::BadPrefixLength)),
            (r#"{"links": [{"id": "x", "ethernet_mac_address": "fa:16:3e:00:00:02"}], "networks": [{"type": "ipv4", "link": "x", "ip_address": "10.0.0.5/24", "routes": [{"network": "10.9.0.0", "netmask": "ffff:ffff:ffff::", "gateway": "10.0.0.1"}]}]}"#, bad(Mistake::BadNetmask)),
            (r#"{"links": [{"id": "x", "ethernet_mac_address": "fa:16:3e:00:00:02"}], "networks": [{"type": "ipv4", "link": "x", "ip_address": "10.0.0.5/24", "routes": [{"network": "10.9.0.0", "netmask": "16", "gateway": "fe80::1"}]}]}"#, bad(Mistake::RouteMixesFamilies)),
        ];
        for (document, error) in cases {
            assert_eq!(parse(document.as_bytes()).unwrap_err(), error, "{document}");
        }
    }

    #[test]
    fn mistakes_are_worded() {
        let worded = |what| DataError::Bad { what }.to_string();
        assert_eq!(worded(Mistake::NotPlainString), "network_data.json: a member that should be a plain string is not");
        assert_eq!(worded(Mistake::RouteMixesFamilies), "network_data.json: a route mixes IPv4 and IPv6");
        assert_eq!(worded(Mistake::TooManyRoutes), "network_data.json: too many routes");
    }

    #[test]
    fn ipv6_network_types_as_cloud_init_reads_them() {
        let document = br#"{"links": [{"id": "a", "type": "phy", "ethernet_mac_address": "fa:16:3e:00:00:10"},
            {"id": "b", "type": "phy", "ethernet_mac_address": "fa:16:3e:00:00:11"},
            {"id": "c", "type": "phy", "ethernet_mac_address": "fa:16:3e:00:00:12"}],
          "networks": [{"type": "ipv6_slaac", "link": "a"}, {"type": "ipv6_dhcpv6-stateless", "link": "b"},
            {"type": "ipv6_dhcp", "link": "c"}]}"#;
        crate::fuzz::seed("network_data", document);
        let config = parse(document).unwrap();
        let kinds: Vec<(Slaac, bool)> = config.interfaces.iter().map(|i| (i.slaac, i.dhcp6)).collect();
        assert_eq!(kinds, [(Slaac::On, false), (Slaac::WithStatelessDhcp, false), (Slaac::Off, true)]);
    }
}
