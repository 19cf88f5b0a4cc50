//! `wisp net-sync`: on AWS, each ethernet interface gets the addresses the metadata lists
//! for its MAC and loses the global ones it does not list, as tiny-cloud's
//! `imds-net-sync`. What to ask and what to change is `secondary`'s; this is the loop over
//! the interfaces and families, and the order of the kernel's changes.

use crate::config::Cloud;
use crate::host::messages::Messages;
use crate::host::netlink::Netlink;
use crate::text::{Decimal, Plain};
use crate::net::rtnl::{Request, Rtnl, State};
use crate::net::{address, netlink, secondary};

/// Largest metadata answer read (an address list, a CIDR block).
pub const BODY_LIMIT: usize = 2048;
/// The room an answer is received in, its head included.
pub const ANSWER_LIMIT: usize = 4096;

/// The families, each as its address list's key and its subnet's.
const FAMILIES: [(bool, &str, &str); 2] = [(false, "local-ipv4s", "subnet-ipv4-cidr-block"), (true, "ipv6s", "subnet-ipv6-cidr-blocks")];

/// Only AWS's metadata lists an interface's addresses: any other cloud is an error.
pub fn for_aws<H: Messages>(host: &H, cloud: Cloud) -> Result<(), H::Text> {
    match cloud {
        Cloud::Aws => Ok(()),
        _ => Err(host.text(format_args!("{}: only AWS's metadata lists an interface's addresses", H::shown(cloud.name().as_bytes())))),
    }
}

/// `wisp net-sync`: on AWS only, the kernel's state read, then `sync_interfaces`.
#[inline(never)]
pub fn run<H: Messages, N: Netlink, E: core::fmt::Display>(
    host: &H,
    cloud: Cloud,
    kernel: &mut Rtnl<'_, N>,
    fetch: impl for<'b> FnMut(&str, &'b mut [u8; ANSWER_LIMIT]) -> Result<Option<&'b [u8]>, E>,
) -> Result<(), H::Text> {
    for_aws(host, cloud)?;
    let mut state = State::default();
    kernel.reread(&mut state).map_err(|e| super::said(host, e))?;
    sync_interfaces(host, kernel, &state, fetch)
}

/// Each ethernet interface with a MAC synced to what `fetch` (a metadata path, the room
/// of the answer: its body, `None` when the metadata has no such key) says. Interfaces the
/// metadata does not know are left alone; IPv6 is managed only where it lists `ipv6s`.
pub fn sync_interfaces<H: Messages, N: Netlink, E: core::fmt::Display>(
    host: &H,
    kernel: &mut Rtnl<'_, N>,
    state: &State,
    mut fetch: impl for<'b> FnMut(&str, &'b mut [u8; ANSWER_LIMIT]) -> Result<Option<&'b [u8]>, E>,
) -> Result<(), H::Text> {
    let mut raw = [0u8; ANSWER_LIMIT];
    for link in state.links.iter().filter(|l| l.is_ethernet()) {
        let Some(mac) = link.mac else { continue };
        let name = H::shown(link.name());
        let mut sync = secondary::Sync::default();
        // By reference: iterated by value, the table was copied to the stack first.
        for &(ipv6, list, subnet) in &FAMILIES {
            let Some(body) = answer(host, &mut fetch, &mac, &name, list, &mut raw)? else { continue };
            let wanted = secondary::addresses(body).map_err(|line| host.text(format_args!("{name}: {} line {}: not an address", Plain(list), Decimal(line as u64))))?;
            let Some(body) = answer(host, &mut fetch, &mac, &name, subnet, &mut raw)? else { return Err(host.text(format_args!("{name}: the metadata has no {}", Plain(subnet)))) };
            let prefix_len = secondary::prefix_len(body).ok_or_else(|| host.text(format_args!("{name}: {}: not a CIDR block", Plain(subnet))))?;
            secondary::sync(link.index, &secondary::Wanted { ipv6, addresses: &wanted, prefix_len }, &state.addresses, &mut sync);
        }
        for address in &sync.add {
            kernel.address(Request::AddAddress, address, address::RTM_NEWADDR, netlink::F_CREATE | netlink::F_REPLACE).map_err(|e| super::said(host, e))?;
        }
        for address in &sync.remove {
            kernel.address(Request::RemoveAddress, address, address::RTM_DELADDR, 0).map_err(|e| super::said(host, e))?;
        }
        host.log(format_args!("net-sync: {name}: {} added, {} removed", Decimal(sync.add.len() as u64), Decimal(sync.remove.len() as u64)));
    }
    Ok(())
}

/// The body of the metadata's answer for `key` of the interface with `mac` (named `name`
/// in messages), read where it was received; `None` when the metadata has no such key.
fn answer<'r, H: Messages, E: core::fmt::Display>(
    host: &H,
    fetch: &mut impl for<'b> FnMut(&str, &'b mut [u8; ANSWER_LIMIT]) -> Result<Option<&'b [u8]>, E>,
    mac: &[u8; 6],
    name: &impl core::fmt::Display,
    key: &str,
    raw: &'r mut [u8; ANSWER_LIMIT],
) -> Result<Option<&'r [u8]>, H::Text> {
    let mut path = [0u8; 128];
    let path = secondary::path(mac, key, &mut path).map_err(|_| host.text(format_args!("metadata path too long")))?;
    match fetch(path, raw) {
        Ok(Some(value)) if value.len() > BODY_LIMIT => Err(host.text(format_args!("{name}: {}: longer than {} bytes", Plain(key), Decimal(BODY_LIMIT as u64)))),
        Ok(value) => Ok(value),
        Err(e) => Err(host.text(format_args!("{name}: {}: {e}", Plain(key)))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::memory::{MemoryHost, MemoryNetlink, MemorySystem};
    use crate::net::address::Address;
    use crate::net::link::{self, Link};
    use core::net::IpAddr;

    const MAC: [u8; 6] = [2, 0, 0, 0, 0, 1];
    const PREFIX: &str = "/latest/meta-data/network/interfaces/macs/02:00:00:00:00:01/";

    fn state() -> State {
        let mut name = [0u8; link::NAME_LIMIT];
        name[..4].copy_from_slice(b"eth0");
        let mut state = State::default();
        state.links.push(Link { index: 2, hardware_type: link::ARPHRD_ETHER, flags: link::IFF_UP, name, name_len: 4, mtu: 9001, mac: Some(MAC), carrier: true }).unwrap();
        let ip = |text: &str| text.parse::<IpAddr>().unwrap();
        state.addresses.push(Address::new(2, ip("10.0.1.5"), 24)).unwrap();
        state.addresses.push(Address::new(2, ip("10.0.1.99"), 24)).unwrap();
        state
    }

    fn sync(answers: &[(&str, &str)]) -> (Result<(), std::string::String>, std::vec::Vec<u16>, std::vec::Vec<std::string::String>) {
        let host = MemorySystem::new(MemoryHost::new());
        let mut kernel = Rtnl::for_tests(MemoryNetlink::default());
        let mut asked = std::vec::Vec::new();
        let result = sync_interfaces(&host, &mut kernel, &state(), |path, raw| {
            let key = path.strip_prefix(PREFIX).unwrap().to_string();
            asked.push(key.clone());
            Ok::<_, &str>(answers.iter().find(|(k, _)| *k == key).map(|(_, value)| {
                raw[..value.len()].copy_from_slice(value.as_bytes());
                &raw[..value.len()]
            }))
        });
        let kinds = kernel.socket.sent.iter().map(|r| u16::from_ne_bytes([r[4], r[5]])).collect();
        let said = host.said.borrow().clone();
        (result, kinds, said)
    }

    #[test]
    fn listed_addresses_are_added_and_unlisted_global_ones_removed() {
        let (result, kinds, said) = sync(&[("local-ipv4s", "10.0.1.5\n10.0.1.6\n"), ("subnet-ipv4-cidr-block", "10.0.1.0/24")]);
        result.unwrap();
        assert_eq!(kinds, [address::RTM_NEWADDR, address::RTM_DELADDR]);
        assert_eq!(said, ["net-sync: eth0: 1 added, 1 removed"]);
    }

    #[test]
    fn an_unknown_interface_is_left_alone_and_bad_answers_are_named() {
        let (result, kinds, said) = sync(&[]);
        result.unwrap();
        assert!(kinds.is_empty());
        assert_eq!(said, ["net-sync: eth0: 0 added, 0 removed"]);
        let (result, kinds, _) = sync(&[("local-ipv4s", "10.0.1.5\n")]);
        assert_eq!(result.unwrap_err(), "eth0: the metadata has no subnet-ipv4-cidr-block");
        assert!(kinds.is_empty());
        let (result, _, _) = sync(&[("local-ipv4s", "10.0.1.5\nnot-an-ip\n"), ("subnet-ipv4-cidr-block", "10.0.1.0/24")]);
        assert_eq!(result.unwrap_err(), "eth0: local-ipv4s line 2: not an address");
        let (result, _, _) = sync(&[("local-ipv4s", "10.0.1.5\n"), ("subnet-ipv4-cidr-block", "10.0.1.0")]);
        assert_eq!(result.unwrap_err(), "eth0: subnet-ipv4-cidr-block: not a CIDR block");
    }

    #[test]
    fn only_aws_lists_addresses() {
        let host = MemorySystem::new(MemoryHost::new());
        assert_eq!(for_aws(&host, Cloud::Aws), Ok(()));
        assert_eq!(for_aws(&host, Cloud::Gcp).unwrap_err(), "gcp: only AWS's metadata lists an interface's addresses");
        // Another cloud's run stops before the kernel is asked anything.
        let mut kernel = Rtnl::for_tests(MemoryNetlink::default());
        let refused = run(&host, Cloud::Gcp, &mut kernel, |_, _| -> Result<Option<&[u8]>, &str> { panic!("no metadata asked") });
        assert!(refused.is_err() && kernel.socket.sent.is_empty());
        // On AWS the state is read (links, addresses, routes) before the interfaces.
        run(&host, Cloud::Aws, &mut kernel, |_, _| -> Result<Option<&[u8]>, &str> { Ok(None) }).unwrap();
        assert_eq!(kernel.socket.sent.len(), 3);
    }
}
