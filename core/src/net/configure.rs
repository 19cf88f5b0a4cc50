//! A network configuration applied with no tools: which one wins (the kernel command
//! line's `network-config=`, the image's own cloud.cfg.d, the seed's saved copy), each of
//! its interfaces changed through rtnetlink, then /etc/network/interfaces and
//! /etc/resolv.conf written; and, before DHCP, the ethernet links raised with a short
//! wait for a carrier. The parsers are `network_config`'s and `network_data`'s, the
//! changes `bring_up`'s.

use crate::base64;
use crate::host::directory::Directory;
use crate::host::files::Files;
use crate::host::messages::Messages;
use crate::host::netlink::Netlink;
use crate::host::room::Room;
use crate::host::timer::Timer;
use crate::net::link::LinkChange;
use crate::net::rtnl::{Request, Rtnl, RtnlError, State};
use crate::net::{bring_up, eni, network_config, network_data};
use crate::out::{Full, Out};
use crate::system_files;
use crate::text::{Decimal, Plain};
use crate::yaml::{Arena, Node};

/// How long a link just brought up may take to report its carrier.
pub const CARRIER_WAIT_MS: u64 = 2000;
/// How often the links are read again meanwhile.
const CARRIER_POLL_MS: u64 = 50;
/// Most bytes of a network configuration, and of what is read of it.
pub const CONFIG_LIMIT: usize = 16 * 1024;
/// Most YAML nodes of a network configuration: the caller's, mapped, as 28 KiB of them on
/// the stack were probed whole on entry with no configuration at all.
pub const CONFIG_NODES: usize = 1024;
/// Most files read in /etc/cloud/cloud.cfg.d.
pub const SYSTEM_FILES_LIMIT: usize = 32;
/// Largest /etc/network/interfaces and /etc/resolv.conf written.
const ENI_LIMIT: usize = 8192;
const RESOLV_LIMIT: usize = 1024;
/// Most of the kernel command line read.
const CMDLINE_LIMIT: usize = 4096;
/// The host's room for the configuration, its decoded text (which holds the kernel
/// command line before), /etc/network/interfaces, the copy on disk it is compared with,
/// and /etc/resolv.conf: mapped, touched only as far as they fill it, where on the stack
/// they were probed whole on entry however short the files.
pub const ROOM: usize = CONFIG_LIMIT + CONFIG_LIMIT + ENI_LIMIT + ENI_LIMIT + RESOLV_LIMIT;
const _: () = assert!(CMDLINE_LIMIT <= CONFIG_LIMIT);

/// What applying the network configuration came to.
pub enum Configured<T> {
    /// There is none.
    Nothing,
    /// `config: disabled`: the network is left alone.
    Disabled,
    /// Applied; the line says how much.
    Applied(T),
}

/// A link that is down reports no carrier: brings the ethernet links up, then, when one
/// was down, reads them again until one sees its carrier or `CARRIER_WAIT_MS` passed.
pub fn raise_links<N: Netlink, T: Timer>(kernel: &mut Rtnl<'_, N>, timer: &mut T, state: &mut State) -> Result<(), RtnlError> {
    let mut raised = false;
    for link in state.links.iter().filter(|l| l.is_ethernet() && !l.is_up()) {
        kernel.link(Request::LinkUp, LinkChange { index: link.index, up: Some(true), ..Default::default() })?;
        raised = true;
    }
    let waited = timer.now_ms();
    if raised {
        loop {
            kernel.reread_links(state)?;
            if state.links.iter().any(|l| l.is_ethernet() && l.carrier) || timer.now_ms() - waited > CARRIER_WAIT_MS {
                break;
            }
            timer.pause_ms(CARRIER_POLL_MS);
        }
    }
    Ok(())
}

/// The kernel command line's `network-config=` (base64), else the image's cloud.cfg.d
/// (`system_network`), else the seed's network configuration saved in `var`
/// (TINY_CLOUD_VAR/network-config), applied through rtnetlink and kept as
/// `/etc/network/interfaces` and `/etc/resolv.conf`. An interface with `dhcp4` is the one
/// DHCP runs on (`dhcp_on`), if nothing else gives an address. A YAML configuration is
/// parsed in `nodes` (`CONFIG_NODES` of them).
#[inline(never)]
pub fn apply_network_config<H: Files + Messages + Room, D: Directory, N: Netlink>(
    host: &mut H,
    var: &mut D,
    kernel: &mut Rtnl<'_, N>,
    nodes: &mut [Node],
    state: &State,
    dhcp_on: &mut Option<u32>,
) -> Result<Configured<H::Text>, H::Text> {
    let mut room = host.room(ROOM, "the network configuration")?;
    // The host's room is ROOM bytes: as an array, the splits below need no checks.
    let Some(room) = room.first_chunk_mut::<ROOM>() else { return Ok(Configured::Nothing) };
    let (document, rest) = room.split_at_mut(CONFIG_LIMIT);
    let (text, rest) = rest.split_at_mut(CONFIG_LIMIT);
    let (interfaces, rest) = rest.split_at_mut(ENI_LIMIT);
    let (on_disk, resolv) = rest.split_at_mut(ENI_LIMIT);
    let cmdline = &mut text[..CMDLINE_LIMIT];
    let cmdline_len = host.read(b"/proc/cmdline", cmdline).ok().flatten();
    let encoded = cmdline_len.and_then(|len| cmdline.get(..len)).and_then(network_config::from_cmdline);
    let len = match encoded {
        Some(encoded) => base64::decode(encoded, document).map_err(|e| host.text(format_args!("network-config= on the kernel command line: {e}")))?,
        None => match system_network(host, document, nodes, text)? {
            Some(len) => len,
            None => match var.read(b"network-config", document) {
                Ok(Some(len)) => len,
                Ok(None) => return Ok(Configured::Nothing),
                Err(_) => return Err(host.text(format_args!("$TINY_CLOUD_VAR/network-config: unreadable, or longer than {} bytes", Decimal(CONFIG_LIMIT as u64)))),
            },
        },
    };
    let document = document.get(..len).unwrap_or_default();
    let mut arena = Arena::new(nodes, text);
    // ConfigDrive's network_data.json is kept under the same name: JSON is an object.
    let mut config = network_config::NetworkConfig::default();
    if document.trim_ascii_start().first() == Some(&b'{') {
        network_data::parse_into(document, &mut config).map_err(|e| host.text(format_args!("{e}")))?;
    } else {
        let root = arena.parse(document).map_err(|e| host.text(format_args!("network-config: {e}")))?;
        network_config::parse_into(arena.value(root), &mut config).map_err(|e| host.text(format_args!("{e}")))?;
    }
    if config.disabled {
        return Ok(Configured::Disabled);
    }
    for (kind, name) in &config.refused {
        host.log(format_args!("network-config: {} {}: not supported by wisp: skipped", Plain(kind), H::shown(name.as_bytes())));
    }
    let mut applied: u64 = 0;
    for interface in config.interfaces.iter_mut() {
        let Some(link) = bring_up::find_link(interface, &state.links) else {
            host.log(format_args!("network-config: {}: no such interface: skipped", H::shown(interface.name.as_bytes())));
            continue;
        };
        if interface.keep_name {
            interface.name = core::str::from_utf8(link.name()).unwrap_or(interface.name);
        }
        let link = *link;
        let name = interface.name.as_bytes();
        let changes = bring_up::config_changes(interface, &link, &state.addresses, &state.routes)
            .map_err(|e| host.text(format_args!("network-config: {}: {e}", H::shown(name))))?;
        kernel.apply(&changes, &link, name).map_err(|e| super::said(host, e))?;
        if interface.dhcp4 && dhcp_on.is_none() {
            *dhcp_on = Some(link.index);
        }
        if interface.dhcp6 {
            host.warn(format_args!(
                "network-config: {}: dhcp6 not applied: wisp has no DHCPv6 client (the kernel's SLAAC still runs); written to /etc/network/interfaces for the image's own",
                H::shown(name)
            ));
        }
        applied += 1;
    }
    let mut out = Out::new(interfaces);
    eni::render(&config, &mut out).map_err(|full| too_long(host, "/etc/network/interfaces", full))?;
    write_if_changed(host, b"/etc/network", b"/etc/network/interfaces", out.written(), on_disk)?;
    let mut out = Out::new(resolv);
    match bring_up::write_resolv_conf(&[b"the network configuration"], &config.search, &config.nameservers, &mut out) {
        Ok(true) => write_resolv_conf(host, out.written())?,
        Ok(false) => {}
        Err(full) => return Err(too_long(host, "/etc/resolv.conf", full)),
    }
    Ok(Configured::Applied(host.text(format_args!("network-config: {} of {} interfaces applied", Decimal(applied), Decimal(config.interfaces.len() as u64)))))
}

/// The image's own cloud-init configuration, which an image moving from cloud-init keeps
/// (`network: {config: disabled}` in cloud.cfg.d is the usual line): the last of
/// /etc/cloud/cloud.cfg and /etc/cloud/cloud.cfg.d/*.cfg, in name order, whose top level
/// has `network:`, read into `document` (each parsed in `nodes` and `text`, the caller's).
/// It wins over the seed's, as in cloud-init. A file wisp cannot read is cloud-init's,
/// not wisp's to judge: it is said and skipped.
pub fn system_network<H: Files + Messages>(host: &mut H, document: &mut [u8], nodes: &mut [Node], text: &mut [u8]) -> Result<Option<usize>, H::Text> {
    let mut names: heapless::Vec<heapless::Vec<u8, 64>, SYSTEM_FILES_LIMIT> = heapless::Vec::new();
    let _ = host.list(b"/etc/cloud/cloud.cfg.d", &mut |name| {
        if name.ends_with(b".cfg") {
            let _ = heapless::Vec::from_slice(name).map(|n| names.push(n));
        }
    });
    sort_by_insertion(&mut names);
    let mut found = None;
    // cloud.cfg first, then each of cloud.cfg.d's (a name is at most 64 bytes: its path fits).
    for at in 0..=names.len() {
        let mut path: heapless::Vec<u8, 96> = heapless::Vec::new();
        let (directory, name): (&[u8], &[u8]) = match at.checked_sub(1) {
            None => (b"/etc/cloud/cloud.cfg", b""),
            Some(at) => (b"/etc/cloud/cloud.cfg.d/", &names[at]),
        };
        let _ = path.extend_from_slice(directory).and_then(|_| path.extend_from_slice(name));
        let Some(read) = host.read(&path, document).ok().flatten().and_then(|len| document.get(..len)) else { continue };
        let mut arena = Arena::new(nodes, text);
        match arena.parse(read) {
            Ok(root) if network_config::has_network(arena.value(root)) => found = Some(path),
            Ok(_) => {}
            Err(e) => host.error(format_args!("{}: {e}: skipped", H::shown(&path))),
        }
    }
    let Some(path) = found else { return Ok(None) };
    host.read(&path, document).map_err(|e| host.path_error(&path, e))
}

/// By insertion: at most SYSTEM_FILES_LIMIT names, and core's sort_unstable is 2 KB of
/// code. Each pass walks the names up to `sorted` from their end, as slices, so that no
/// index is checked.
fn sort_by_insertion<T: PartialOrd>(names: &mut [T]) {
    for sorted in 1..names.len() {
        let mut at = &mut names[..=sorted];
        while let Some((last, rest)) = at.split_last_mut() {
            match rest.last_mut() {
                Some(before) if before > last => core::mem::swap(before, last),
                _ => break,
            }
            at = rest;
        }
    }
}

/// A file that did not fit the room it is rendered in.
pub(crate) fn too_long<H: Messages>(host: &H, path: &str, full: Full) -> H::Text {
    host.text(format_args!("{}: longer than {} bytes", Plain(path), Decimal(full.limit as u64)))
}

/// `/etc/resolv.conf` replaced by `text`, unless it holds that already.
pub fn write_resolv_conf<H: Files + Messages>(host: &mut H, text: &[u8]) -> Result<(), H::Text> {
    write_if_changed(host, b"/etc", b"/etc/resolv.conf", text, &mut [0u8; RESOLV_LIMIT])
}

fn write_if_changed<H: Files + Messages>(host: &mut H, dir: &[u8], path: &[u8], text: &[u8], buf: &mut [u8]) -> Result<(), H::Text> {
    host.create_dir(dir, 0o755).map_err(|e| host.path_error(dir, e))?;
    system_files::write_if_changed(host, path, text, buf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::memory::{MemoryHost, MemoryNetlink, MemorySystem, MemoryTimer};
    use crate::net::link::{self, Link};

    fn eth0(flags: u32, dhcp_config_mac: Option<[u8; 6]>) -> Link {
        let mut name = [0u8; link::NAME_LIMIT];
        name[..4].copy_from_slice(b"eth0");
        Link { index: 2, hardware_type: link::ARPHRD_ETHER, flags, name, name_len: 4, mtu: 1500, mac: dhcp_config_mac, carrier: false }
    }

    fn kinds(sent: &[std::vec::Vec<u8>]) -> std::vec::Vec<u16> {
        sent.iter().map(|request| u16::from_ne_bytes([request[4], request[5]])).collect()
    }

    #[test]
    fn links_that_are_down_are_raised_then_the_carrier_is_awaited_at_most_two_seconds() {
        let mut kernel = Rtnl::for_tests(MemoryNetlink::default());
        let mut timer = MemoryTimer { now: 1_000_000, ..MemoryTimer::default() };
        let mut state = State::default();
        state.links.push(eth0(0, None)).unwrap();
        raise_links(&mut kernel, &mut timer, &mut state).unwrap();
        // The link raised, then the links read again (a dump each time) until the wait ends.
        assert_eq!(kinds(&kernel.socket.sent[..2]), [link::RTM_NEWLINK, link::RTM_GETLINK]);
        assert_eq!(timer.pauses.len() as u64, CARRIER_WAIT_MS / CARRIER_POLL_MS + 1);
        assert!(timer.pauses.iter().all(|&ms| ms == CARRIER_POLL_MS));
        // Links already up: nothing is sent, nothing awaited.
        let mut kernel = Rtnl::for_tests(MemoryNetlink::default());
        let mut timer = MemoryTimer::default();
        let mut state = State::default();
        state.links.push(eth0(link::IFF_UP, None)).unwrap();
        raise_links(&mut kernel, &mut timer, &mut state).unwrap();
        assert!(kernel.socket.sent.is_empty() && timer.pauses.is_empty());
    }

    fn image() -> MemorySystem {
        MemorySystem::new(MemoryHost::new()).with_dir("/etc", (0, 0)).with_file("/proc/cmdline", "console=ttyS0\n")
    }

    fn system_choice(host: &mut MemorySystem) -> Option<std::string::String> {
        let mut document = [0u8; CONFIG_LIMIT];
        let mut nodes = std::vec![Node::EMPTY; CONFIG_NODES];
        system_network(host, &mut document, &mut nodes, &mut [0u8; CONFIG_LIMIT]).unwrap().map(|len| std::string::String::from_utf8(document[..len].to_vec()).unwrap())
    }

    #[test]
    fn names_are_sorted_whatever_order_the_directory_lists_them_in() {
        // The in-memory host lists in order already: the sort is checked on its own.
        for listed in [&["b", "a"][..], &["c", "b", "a"], &["a", "c", "b"], &["b", "c", "a", "a"], &["a"], &[]] {
            let mut names = listed.to_vec();
            sort_by_insertion(&mut names);
            let mut expected = listed.to_vec();
            expected.sort();
            assert_eq!(names, expected, "{listed:?}");
        }
        let mut names = [b"99-x.cfg".as_slice(), b"10-net.cfg", b"50-other.cfg", b"05-z.cfg"];
        sort_by_insertion(&mut names);
        assert_eq!(names, [b"05-z.cfg".as_slice(), b"10-net.cfg", b"50-other.cfg", b"99-x.cfg"]);
    }

    #[test]
    fn the_last_system_file_with_network_wins_in_name_order() {
        let mut host = image()
            .with_file("/etc/cloud/cloud.cfg", "network:\n  config: disabled\n")
            .with_dir("/etc/cloud/cloud.cfg.d", (0, 0))
            .with_file("/etc/cloud/cloud.cfg.d/10-net.cfg", "network: {version: 2}\n")
            .with_file("/etc/cloud/cloud.cfg.d/90-other.cfg", "datasource_list: [NoCloud]\n")
            .with_file("/etc/cloud/cloud.cfg.d/95-net.cfg.bak", "network: {version: 1}\n");
        assert_eq!(system_choice(&mut host).as_deref(), Some("network: {version: 2}\n"));
        let mut host = image().with_file("/etc/cloud/cloud.cfg", "network:\n  config: disabled\n");
        assert_eq!(system_choice(&mut host).as_deref(), Some("network:\n  config: disabled\n"));
        assert_eq!(system_choice(&mut image()), None);
    }

    fn apply(host: &mut MemorySystem, var: &mut MemoryHost, kernel: &mut Rtnl<'_, MemoryNetlink>, state: &State, dhcp_on: &mut Option<u32>) -> Result<std::string::String, std::string::String> {
        match apply_network_config(host, &mut var.dir("/var/lib/cloud"), kernel, &mut std::vec![Node::EMPTY; CONFIG_NODES], state, dhcp_on)? {
            Configured::Nothing => Ok("nothing".into()),
            Configured::Disabled => Ok("disabled".into()),
            Configured::Applied(line) => Ok(line),
        }
    }

    const V1: &str = "version: 1\nconfig:\n  - type: physical\n    name: eth0\n    mac_address: '02:00:00:00:00:01'\n    subnets:\n      - type: dhcp\n  - type: physical\n    name: eth1\n  - type: nameserver\n    address: [10.0.0.2]\n";

    #[test]
    fn the_saved_configuration_is_applied_to_the_links_there() {
        let mut host = image();
        let mut var = MemoryHost::new().with_file("/var/lib/cloud/network-config", V1.as_bytes());
        let mut kernel = Rtnl::for_tests(MemoryNetlink::default());
        let mut state = State::default();
        state.links.push(eth0(0, Some([2, 0, 0, 0, 0, 1]))).unwrap();
        let mut dhcp_on = None;
        assert_eq!(apply(&mut host, &mut var, &mut kernel, &state, &mut dhcp_on).unwrap(), "network-config: 1 of 2 interfaces applied");
        assert_eq!(dhcp_on, Some(2));
        assert!(!kernel.socket.sent.is_empty());
        assert_eq!(host.said.borrow().as_slice(), ["network-config: eth1: no such interface: skipped"]);
        assert!(host.contents("/etc/network/interfaces").unwrap().contains("iface eth0 inet dhcp"));
        assert!(host.contents("/etc/resolv.conf").unwrap().contains("nameserver 10.0.0.2\n"));
        // A rerun writes neither file again.
        let writes = host.host.calls.iter().filter(|c| c.starts_with("write")).count();
        apply(&mut host, &mut var, &mut Rtnl::for_tests(MemoryNetlink::default()), &state, &mut None).unwrap();
        assert_eq!(host.host.calls.iter().filter(|c| c.starts_with("write")).count(), writes);
    }

    #[test]
    fn the_command_line_wins_then_the_system_files_then_the_saved_copy() {
        let state = State::default();
        let mut var = MemoryHost::new().with_file("/var/lib/cloud/network-config", V1.as_bytes());
        // `network: {config: disabled}` base64-encoded on the kernel command line.
        let mut host = image().with_file("/proc/cmdline", "ro network-config=bmV0d29yazoge2NvbmZpZzogZGlzYWJsZWR9Cg==\n");
        assert_eq!(apply(&mut host, &mut var, &mut Rtnl::for_tests(MemoryNetlink::default()), &state, &mut None).unwrap(), "disabled");
        let mut host = image().with_file("/etc/cloud/cloud.cfg", "network:\n  config: disabled\n");
        assert_eq!(apply(&mut host, &mut var, &mut Rtnl::for_tests(MemoryNetlink::default()), &state, &mut None).unwrap(), "disabled");
        assert!(host.contents("/etc/network/interfaces").is_none());
        let mut empty = MemoryHost::new();
        assert_eq!(apply(&mut image(), &mut empty, &mut Rtnl::for_tests(MemoryNetlink::default()), &state, &mut None).unwrap(), "nothing");
        let mut host = image().with_file("/proc/cmdline", "network-config=!!!\n");
        assert!(apply(&mut host, &mut var, &mut Rtnl::for_tests(MemoryNetlink::default()), &state, &mut None).unwrap_err().starts_with("network-config= on the kernel command line: "));
    }

    #[test]
    fn room_the_host_refuses_is_said_by_name_before_anything_is_read_or_sent() {
        let mut host = image();
        host.no_room = true;
        let mut var = MemoryHost::new().with_file("/var/lib/cloud/network-config", V1.as_bytes());
        let mut kernel = Rtnl::for_tests(MemoryNetlink::default());
        let error = apply(&mut host, &mut var, &mut kernel, &State::default(), &mut None).unwrap_err();
        assert_eq!(error, "cannot reserve 50176 bytes for the network configuration");
        assert!(host.host.calls.is_empty() && var.calls.is_empty() && kernel.socket.sent.is_empty());
    }

    #[test]
    fn dhcp6_is_written_with_one_warning_naming_the_interface_and_slaac_is_left_to_the_kernel() {
        let config = "version: 1\nconfig:\n  - type: physical\n    name: eth0\n    mac_address: '02:00:00:00:00:01'\n    subnets:\n      - type: dhcp6\n      - type: ipv6_slaac\n";
        let mut host = image();
        let mut var = MemoryHost::new().with_file("/var/lib/cloud/network-config", config.as_bytes());
        let mut kernel = Rtnl::for_tests(MemoryNetlink::default());
        let mut state = State::default();
        state.links.push(eth0(0, Some([2, 0, 0, 0, 0, 1]))).unwrap();
        let mut dhcp_on = None;
        assert_eq!(apply(&mut host, &mut var, &mut kernel, &state, &mut dhcp_on).unwrap(), "network-config: 1 of 1 interfaces applied");
        assert_eq!(
            host.said.borrow().as_slice(),
            ["warning: network-config: eth0: dhcp6 not applied: wisp has no DHCPv6 client (the kernel's SLAAC still runs); written to /etc/network/interfaces for the image's own"]
        );
        // No DHCPv4 for it, and the link is brought up (SLAAC needs nothing more from wisp).
        assert_eq!(dhcp_on, None);
        assert_eq!(kinds(&kernel.socket.sent), [link::RTM_NEWLINK]);
        let interfaces = host.contents("/etc/network/interfaces").unwrap();
        assert!(interfaces.contains("auto eth0\niface eth0 inet6 dhcp\niface eth0 inet6 auto\n    dhcp 0\n"), "{interfaces}");
    }
}
