//! `set_ephemeral_network` (tiny-cloud's name), the boot phase's bring-up in its order:
//! the network configuration applied first (`configure`); then, unless an interface
//! already has an address or the seed is local, a DHCP lease on the interface tiny-cloud
//! would choose (`bring_up`), asked for with the last lease's address first, applied
//! through rtnetlink with /etc/resolv.conf. Each step's rules are those modules'; this
//! decides which steps run and what the run says.

use core::net::{IpAddr, Ipv4Addr};

use crate::host::dhcp::DhcpSocket;
use crate::host::directory::Directory;
use crate::host::explain::Worded;
use crate::host::files::Files;
use crate::host::messages::Messages;
use crate::host::netlink::Netlink;
use crate::host::room::Room;
use crate::host::system::System;
use crate::host::timer::Timer;
use crate::host::HostError;
use crate::net::configure::{self, Configured};
use crate::net::dhcp::Lease;
use crate::net::dhcp_client::Event;
use crate::net::link::{self, Link};
use crate::net::rtnl::Rtnl;
use crate::net::{bring_up, dhcp_exchange, ip_text};
use crate::out::Out;
use crate::text::Decimal;
use crate::yaml::Node;

/// The address of the last lease, asked for again first at the next boot (INIT-REBOOT).
pub const LAST_ADDRESS_FILE: &[u8] = b".dhcp-address";
const RESOLV_LIMIT: usize = 1024;

/// What the run knows of the instance.
pub struct Instance<'a> {
    /// The cloud's name, for messages.
    pub cloud: &'a str,
    /// The seed is on the instance (NoCloud, ConfigDrive): no metadata service to reach.
    pub local_seed: bool,
    /// How long DHCP may take (WISP_DHCP_MS).
    pub dhcp_ms: u64,
    /// The YAML nodes a network configuration is parsed in (`configure::CONFIG_NODES`),
    /// the host's room: 28 KiB on a frame were probed whole on entry.
    pub nodes: &'a mut [Node],
}

/// The bring-up, against the host's files and messages (`host`), its state directory
/// (`var`), the kernel's routing socket, a timer for carriers, and `open_dhcp`, which
/// opens an interface's DHCP socket by its index. The result is the action's note.
// Out of line, with the large steps it calls: their frames stay out of the action loop
// that calls every action, and their callers do not each get a copy.
#[inline(never)]
pub fn set_ephemeral_network<H, D, N, T, S>(
    host: &mut H,
    var: &mut D,
    kernel: &mut Rtnl<'_, N>,
    timer: &mut T,
    open_dhcp: impl FnOnce(u32) -> Result<S, HostError>,
    instance: Instance<'_>,
) -> Result<H::Text, H::Text>
where
    H: Files + Messages + System + Room,
    D: Directory,
    N: Netlink,
    T: Timer,
    S: DhcpSocket,
{
    let said = |host: &H, e| crate::net::said(host, e);
    let mut state = crate::net::rtnl::State::default();
    kernel.reread(&mut state).map_err(|e| said(host, e))?;
    let mut dhcp_on: Option<u32> = None;
    match configure::apply_network_config(host, var, kernel, instance.nodes, &state, &mut dhcp_on)? {
        Configured::Disabled => return Ok(host.text(format_args!("network-config: config disabled: the network is left alone"))),
        Configured::Applied(note) => {
            host.log(format_args!("{note}"));
            kernel.reread(&mut state).map_err(|e| said(host, e))?;
        }
        Configured::Nothing => {}
    }
    match bring_up::need_dhcp(&state.addresses, &state.links, instance.local_seed, dhcp_on.is_some()) {
        bring_up::Need::Configured(configured) => {
            let ip = ip_text::ip_text(&configured.ip);
            return Ok(host.text(format_args!("{} on {}: already configured, left alone", H::shown(&ip), H::shown(state.name_of(configured.index)))));
        }
        bring_up::Need::LocalSeed => return Ok(host.text(format_args!("{}: the seed is local: no network needed", H::shown(instance.cloud.as_bytes())))),
        bring_up::Need::Dhcp => {}
    }
    let link = match dhcp_on.and_then(|index| state.links.iter().find(|l| l.index == index)) {
        Some(link) => *link,
        None => {
            configure::raise_links(kernel, timer, &mut state).map_err(|e| said(host, e))?;
            let Some(link) = bring_up::choose_interface(&state.links).copied() else {
                return Ok(host.text(format_args!("no ethernet interface: nothing to bring up")));
            };
            link
        }
    };
    let name = H::shown(link.name());
    let mut last = [0u8; 16];
    let previous = match var.read(LAST_ADDRESS_FILE, &mut last) {
        Ok(Some(len)) => ip_text::parse_ipv4(&last[..len]),
        _ => None,
    };
    let lease = take_lease(host, &link, previous, open_dhcp, instance.dhcp_ms)?;
    kernel.reread(&mut state).map_err(|e| said(host, e))?;
    let changes = bring_up::lease_changes(&lease, &link, &state.addresses, &state.routes).map_err(|e| host.text(format_args!("{name}: {e}")))?;
    // The link may have been brought up since it was read.
    let mut up = link;
    up.flags |= link::IFF_UP;
    kernel.apply(&changes, &up, link.name()).map_err(|e| said(host, e))?;
    let ip = text(lease.address);
    let mut line: heapless::Vec<u8, 40> = heapless::Vec::from_slice(&ip).unwrap_or_default();
    let _ = line.push(b'\n');
    var.write_volatile(LAST_ADDRESS_FILE, &line, 0o644)
        .map_err(|e| host.text(format_args!("$TINY_CLOUD_VAR/.dhcp-address: {}", H::reason(e))))?;
    let mut resolv = [0u8; RESOLV_LIMIT];
    let mut out = Out::new(&mut resolv);
    let dns = match bring_up::resolv_conf(&lease, link.name(), &mut out) {
        Ok(true) => {
            configure::write_resolv_conf(host, out.written())?;
            lease.dns.len()
        }
        Ok(false) => 0,
        Err(full) => return Err(configure::too_long(host, "/etc/resolv.conf", full)),
    };
    let note = host.text(format_args!(
        "{name}: {}/{} from {} for {} s, {} routes, {} DNS servers",
        H::shown(&ip),
        Decimal(lease.prefix_len.into()),
        H::shown(&text(lease.server)),
        Decimal(lease.lease_seconds.unwrap_or(0).into()),
        Decimal(changes.routes.len() as u64),
        Decimal(dns as u64)
    ));
    Ok(note)
}

/// The DHCP exchange on `link`, within `dhcp_ms`; each offer and refusal is logged.
#[inline(never)]
fn take_lease<H: Messages + System, S: DhcpSocket>(
    host: &mut H,
    link: &Link,
    previous: Option<Ipv4Addr>,
    open_dhcp: impl FnOnce(u32) -> Result<S, HostError>,
    dhcp_ms: u64,
) -> Result<Lease, H::Text> {
    let name = H::shown(link.name());
    let mac = link.mac.ok_or_else(|| host.text(format_args!("{name}: no MAC address")))?;
    let mut socket = open_dhcp(link.index).map_err(|e| host.text(format_args!("{name}: DHCP socket: {}", H::reason(e))))?;
    let mut xid = [0u8; 4];
    host.fill(&mut xid).map_err(|e| host.text(format_args!("getrandom: {}", H::reason(e))))?;
    let on_event = |event| match event {
        Event::Offered { address, server } => {
            host.log(format_args!("{name}: DHCP offer of {} from {}", H::shown(&text(Some(address))), H::shown(&text(Some(server)))))
        }
        Event::Refused { server } => host.log(format_args!("{name}: DHCPNAK from {}: discovering again", H::shown(&text(server)))),
    };
    dhcp_exchange::take_lease(&mut socket, mac, u32::from_ne_bytes(xid), dhcp_ms, previous, on_event)
        .map_err(|e| host.text(format_args!("{name}: {}", Worded(&e, crate::host::explain::words::<H::Text>))))
}

fn text(ip: Option<Ipv4Addr>) -> heapless::Vec<u8, { ip_text::IP_TEXT_LIMIT }> {
    ip_text::ip_text(&IpAddr::V4(ip.unwrap_or(Ipv4Addr::UNSPECIFIED)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::memory::{MemoryDhcp, MemoryHost, MemorySystem, MemoryTimer};
    use crate::net::address::{self, Address};
    use crate::net::dhcp::{MessageType, Packet};
    use crate::net::ipv4_udp::Datagram;
    use crate::net::netlink::{NLMSG_DONE, NLMSG_ERROR};
    use std::string::String;
    use std::vec::Vec;

    /// eth7, ifindex 5, up, with a carrier and MAC 02:00:00:00:00:02, as the kernel said it.
    static ETH7: &[u8] = include_bytes!("captures/newlink-veth.bin");
    static OFFER: &[u8] = include_bytes!("captures/dnsmasq-offer.ip");
    static ACK: &[u8] = include_bytes!("captures/dnsmasq-ack.ip");
    /// The byte MemorySystem's randomness is made of: every xid is four of it.
    const RANDOM: u8 = 0x5a;

    /// The kernel as rtnetlink shows it: dumps answer with these links and addresses
    /// (no routes); every change is acknowledged and kept in `sent`.
    #[derive(Default)]
    struct Kernel {
        links: Vec<&'static [u8]>,
        addresses: Vec<Address>,
        sent: Vec<Vec<u8>>,
        answer: Vec<u8>,
    }

    fn header(kind: u16, sequence: &[u8], payload: &[u8]) -> Vec<u8> {
        let mut message = (16 + payload.len() as u32).to_ne_bytes().to_vec();
        message.extend_from_slice(&kind.to_ne_bytes());
        message.extend_from_slice(&0u16.to_ne_bytes());
        message.extend_from_slice(sequence);
        message.extend_from_slice(&0u32.to_ne_bytes());
        message.extend_from_slice(payload);
        message
    }

    impl Netlink for Kernel {
        fn send(&mut self, request: &[u8]) -> Result<(), HostError> {
            self.sent.push(request.to_vec());
            let kind = u16::from_ne_bytes([request[4], request[5]]);
            let sequence = u32::from_ne_bytes(request[8..12].try_into().unwrap());
            self.answer.clear();
            match kind {
                link::RTM_GETLINK => {
                    for message in &self.links {
                        let mut message = message.to_vec();
                        message[8..12].copy_from_slice(&sequence.to_ne_bytes());
                        self.answer.extend_from_slice(&message);
                    }
                }
                address::RTM_GETADDR => {
                    for a in &self.addresses {
                        let mut buf = [0u8; 128];
                        self.answer.extend_from_slice(a.emit(&mut buf, address::RTM_NEWADDR, 0, sequence).unwrap());
                    }
                }
                crate::net::route::RTM_GETROUTE => {}
                _ => {
                    let ack = [&0i32.to_ne_bytes()[..], &request[..16]].concat();
                    self.answer = header(NLMSG_ERROR, &request[8..12], &ack);
                    return Ok(());
                }
            }
            let done = header(NLMSG_DONE, &request[8..12], &0i32.to_ne_bytes());
            self.answer.extend_from_slice(&done);
            Ok(())
        }

        fn recv(&mut self, buf: &mut [u8]) -> Result<usize, HostError> {
            buf[..self.answer.len()].copy_from_slice(&self.answer);
            Ok(self.answer.len())
        }
    }

    /// A server's reply, addressed to the xid MemorySystem's randomness makes.
    fn reply(packet: &[u8]) -> Vec<u8> {
        let mut packet = packet.to_vec();
        packet[28 + 4..28 + 8].fill(RANDOM);
        packet
    }

    /// The scripted server, kept by the test once the run is over.
    struct Server(std::rc::Rc<std::cell::RefCell<MemoryDhcp>>);

    impl DhcpSocket for Server {
        fn send_broadcast(&mut self, packet: &[u8]) -> Result<(), HostError> {
            self.0.borrow_mut().send_broadcast(packet)
        }
        fn receive(&mut self, timeout_ms: u64, buf: &mut [u8]) -> Result<Option<usize>, HostError> {
            self.0.borrow_mut().receive(timeout_ms, buf)
        }
        fn now_ms(&mut self) -> u64 {
            self.0.borrow_mut().now_ms()
        }
    }

    struct Run {
        result: Result<String, String>,
        host: MemorySystem,
        var: MemoryHost,
        kernel: Kernel,
        sent: Vec<Vec<u8>>,
    }

    fn run(kernel: Kernel, mut var: MemoryHost, server: Option<MemoryDhcp>, local_seed: bool) -> Run {
        let mut host = MemorySystem::new(MemoryHost::new());
        host.random = RANDOM;
        let mut rtnl = Rtnl::for_tests(kernel);
        let server = server.map(|server| std::rc::Rc::new(std::cell::RefCell::new(server)));
        let open = |index| {
            assert_eq!(index, 5);
            Ok(Server(server.clone().expect("no DHCP here")))
        };
        let nodes = &mut std::vec![Node::EMPTY; configure::CONFIG_NODES];
        let instance = Instance { cloud: if local_seed { "nocloud" } else { "aws" }, local_seed, dhcp_ms: 10_000, nodes };
        let result = set_ephemeral_network(&mut host, &mut var.dir("/var/lib/cloud"), &mut rtnl, &mut MemoryTimer::default(), open, instance);
        let sent = server.map_or_else(Vec::new, |server| server.borrow().sent.iter().map(|(_, packet)| packet.clone()).collect());
        Run { result, host, var, kernel: rtnl.socket, sent }
    }

    fn eth7() -> Kernel {
        Kernel { links: Vec::from([ETH7]), ..Kernel::default() }
    }

    #[test]
    fn a_disabled_configuration_leaves_the_network_alone() {
        let var = MemoryHost::new().with_file("/var/lib/cloud/network-config", b"network: {config: disabled}\n");
        let run = run(eth7(), var, None, false);
        assert_eq!(run.result.unwrap(), "network-config: config disabled: the network is left alone");
        assert_eq!(run.kernel.sent.len(), 3, "the state was read, nothing changed");
    }

    #[test]
    fn an_address_already_there_is_left_alone_and_a_local_seed_needs_none() {
        let mut kernel = eth7();
        kernel.addresses.push(Address::new(5, "10.0.0.5".parse().unwrap(), 24));
        assert_eq!(run(kernel, MemoryHost::new(), None, false).result.unwrap(), "10.0.0.5 on eth7: already configured, left alone");
        assert_eq!(run(eth7(), MemoryHost::new(), None, true).result.unwrap(), "nocloud: the seed is local: no network needed");
        assert_eq!(run(Kernel::default(), MemoryHost::new(), None, false).result.unwrap(), "no ethernet interface: nothing to bring up");
    }

    #[test]
    fn a_lease_on_the_chosen_link_is_applied_kept_and_asked_for_first_next_time() {
        let server = MemoryDhcp { answers: [reply(OFFER), reply(ACK)].into(), ..MemoryDhcp::default() };
        let run = run(eth7(), MemoryHost::new(), Some(server), false);
        let note = run.result.unwrap();
        assert!(note.starts_with("eth7: 10.9.0.56/24 from 10.9.0.1 for "), "{note}");
        assert_eq!(run.host.said.borrow().as_slice(), ["eth7: DHCP offer of 10.9.0.56 from 10.9.0.1"]);
        assert_eq!(run.var.contents("/var/lib/cloud/.dhcp-address"), Some(&b"10.9.0.56\n"[..]));
        // The address went to the kernel (after the three dumps of each read).
        assert!(run.kernel.sent.iter().any(|r| u16::from_ne_bytes([r[4], r[5]]) == address::RTM_NEWADDR));
        // The next boot asks for that address at once: a REQUEST, no DISCOVER.
        let server = MemoryDhcp { answers: [reply(ACK)].into(), ..MemoryDhcp::default() };
        let again = self::run(eth7(), run.var, Some(server), false);
        assert!(again.result.is_ok(), "{:?}", again.result);
        let message = Packet::new_checked(Datagram::parse(&again.sent[0]).unwrap().payload).unwrap();
        assert_eq!(message.message_type(), Some(MessageType::Request));
    }

    #[test]
    fn a_silent_server_is_an_error_naming_the_interface() {
        let run = run(eth7(), MemoryHost::new(), Some(MemoryDhcp::default()), false);
        assert_eq!(run.result.unwrap_err(), "eth7: no DHCP lease within 10000 ms: no server answered");
        assert_eq!(run.var.contents("/var/lib/cloud/.dhcp-address"), None);
    }
}
