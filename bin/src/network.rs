//! `set_ephemeral_network`: the network with no tools. When the cloud serves its metadata
//! over the network and no interface has an address yet, wisp takes a DHCP lease on the
//! interface tiny-cloud would choose and applies it through rtnetlink, with resolv.conf.
//! The decisions are core's (`wisp_core::net::bring_up`); this is the loop around the two
//! sockets.

use core::net::{IpAddr, Ipv4Addr};

use wisp_core::config::Cloud;
use wisp_core::net::address;
use wisp_core::net::bring_up::{self, Need};
use wisp_core::base64;
use wisp_core::net::{eni, ip_text, network_config, network_data, secondary};
use wisp_core::provider::Item;
use wisp_core::yaml::{Arena, Node};
use wisp_os_linux::fs::Dir;
use wisp_core::net::dhcp::Lease;
use wisp_core::net::dhcp_client::Event;
use wisp_core::net::dhcp_exchange;
use wisp_core::host::explain::Worded;
use wisp_core::net::link::{self, Link, LinkChange};
use wisp_core::net::netlink;
use wisp_core::net::rtnl::{Rtnl, RtnlError, State};
use wisp_core::out::Out;
use wisp_os_linux::time::monotonic_ms;
use wisp_os_linux::packet;

use crate::context::Context;
use crate::host::dhcp::DhcpOn;
use crate::host::errno_words;
use crate::host::netlink::RouteSocket;
use crate::imds::Metadata;
use crate::output::{os_error, Line, Shown};

/// How long a link just brought up may take to report its carrier.
const CARRIER_WAIT_MS: u64 = 2000;
/// The address of the last lease, asked for again first at the next boot (INIT-REBOOT).
const LAST_ADDRESS_FILE: &[u8] = b".dhcp-address";

pub fn set_ephemeral_network(ctx: &mut Context<'_>, metadata: &mut Metadata) -> Result<Line, Line> {
    let cloud = crate::cloud::resolve(ctx)?;
    let local_seed = matches!(cloud, Cloud::Nocloud | Cloud::Configdrive);
    let var = ctx.var_dir()?;
    // `wisp boot` alone has not read the seed yet: its network-config is needed now.
    #[cfg(any(feature = "nocloud", feature = "configdrive"))]
    if local_seed && metadata.get(Item::InstanceId).is_none() {
        if let Err(e) = crate::seed::load(ctx, cloud, metadata, Some(&var)) {
            ctx.log.line(format_args!("{}: {e}: using the saved network-config, if any", cloud.name()));
        }
    }
    let mut kernel = open_kernel()?;
    let mut state = kernel.read_state()?;
    let mut dhcp_on: Option<u32> = None;
    match apply_network_config(ctx, &var, &mut kernel, &state, &mut dhcp_on)? {
        Configured::Disabled => return Ok(msg!("network-config: config disabled: the network is left alone")),
        Configured::Applied(note) => {
            ctx.log.line(format_args!("{note}"));
            state = kernel.read_state()?;
        }
        Configured::Nothing => {}
    }
    match bring_up::need_dhcp(&state.addresses, &state.links, local_seed, dhcp_on.is_some()) {
        Need::Configured(configured) => {
            return Ok(msg!("{} on {}: already configured, left alone", Shown(&ip_text::ip_text(&configured.ip)), Shown(state.name_of(configured.index))))
        }
        Need::LocalSeed => return Ok(msg!("{}: the seed is local: no network needed", cloud.name())),
        Need::Dhcp => {}
    }
    let link = match dhcp_on.and_then(|index| state.links.iter().find(|l| l.index == index)) {
        Some(link) => *link,
        None => {
            raise_links(&mut kernel, &mut state)?;
            let Some(link) = bring_up::choose_interface(&state.links).copied() else {
                return Ok(msg!("no ethernet interface: nothing to bring up"));
            };
            link
        }
    };
    let name = Shown(link.name());
    let mac = link.mac.ok_or_else(|| msg!("{name}: no MAC address"))?;
    let mut last = [0u8; 16];
    let previous = match var.read(LAST_ADDRESS_FILE, &mut last) {
        Ok(Some(len)) => ip_text::parse_ipv4(&last[..len]),
        _ => None,
    };
    let lease = take_lease(ctx, &link, mac, previous)?;
    let state = kernel.read_state()?;
    let changes = bring_up::lease_changes(&lease, &link, &state.addresses, &state.routes).map_err(|e| msg!("{name}: {e}"))?;
    // The link may have been brought up since it was read.
    let mut up = link;
    up.flags |= link::IFF_UP;
    kernel.apply(&changes, &up, link.name())?;
    let ip = text(lease.address);
    let mut line: heapless::Vec<u8, 40> = heapless::Vec::from_slice(&ip).unwrap_or_default();
    let _ = line.push(b'\n');
    var.write_atomic(LAST_ADDRESS_FILE, &line, 0o644, None).map_err(|e| os_error("$TINY_CLOUD_VAR/.dhcp-address", e))?;
    let mut resolv = [0u8; 1024];
    let mut out = Out::new(&mut resolv);
    let dns = match bring_up::resolv_conf(&lease, link.name(), &mut out) {
        Ok(true) => {
            write_resolv_conf(ctx, out.written())?;
            lease.dns.len()
        }
        Ok(false) => 0,
        Err(full) => return Err(msg!("/etc/resolv.conf: longer than {} bytes", full.limit)),
    };
    Ok(msg!(
        "{name}: {}/{} from {} for {} s, {} routes, {dns} DNS servers",
        Shown(&ip),
        lease.prefix_len,
        Shown(&text(lease.server)),
        lease.lease_seconds.unwrap_or(0),
        changes.routes.len()
    ))
}

/// `wisp net-sync`: on AWS, each interface gets the addresses the metadata lists for its
/// MAC and loses the global ones it does not list, as tiny-cloud's `imds-net-sync`.
/// Interfaces the metadata does not know are left alone; IPv6 is managed only where the
/// metadata lists `ipv6s`.
#[inline(never)]
pub fn net_sync(ctx: &mut Context<'_>) -> i32 {
    match sync_addresses(ctx) {
        Ok(()) => 0,
        Err(e) => {
            crate::output::error(format_args!("net-sync: {e}"));
            crate::EXIT_FAILED
        }
    }
}

fn sync_addresses(ctx: &mut Context<'_>) -> Result<(), Line> {
    let cloud = crate::cloud::resolve(ctx)?;
    if cloud != Cloud::Aws {
        return Err(msg!("{}: only AWS's metadata lists an interface's addresses", cloud.name()));
    }
    let timeouts = ctx.timeouts;
    let mut imds = crate::imds::Imds::new(cloud, &timeouts, ctx.config.imds_token_ttl);
    let mut kernel = open_kernel()?;
    let state = kernel.read_state()?;
    let mut body = [0u8; 2048];
    for link in state.links.iter().filter(|l| l.is_ethernet()) {
        let Some(mac) = link.mac else { continue };
        let name = Shown(link.name());
        let mut fetch = |key: &str, body: &mut [u8; 2048]| -> Result<Option<usize>, Line> {
            let mut path = [0u8; 128];
            let path = secondary::path(&mac, key, &mut path).map_err(|_| msg!("metadata path too long"))?;
            // The answer's head comes first in `raw`: the body is copied out of it.
            let mut raw = [0u8; 4096];
            match imds.get_path(path, &mut raw) {
                Ok(Some(value)) => {
                    let target = body.get_mut(..value.len()).ok_or_else(|| msg!("{name}: {key}: longer than 2048 bytes"))?;
                    target.copy_from_slice(value);
                    Ok(Some(value.len()))
                }
                Ok(None) => Ok(None),
                Err(e) => Err(msg!("{name}: {key}: {e}")),
            }
        };
        let mut sync = secondary::Sync::default();
        for (ipv6, list, subnet) in [(false, "local-ipv4s", "subnet-ipv4-cidr-block"), (true, "ipv6s", "subnet-ipv6-cidr-blocks")] {
            let Some(len) = fetch(list, &mut body)? else { continue };
            let wanted = secondary::addresses(&body[..len]).map_err(|line| msg!("{name}: {list} line {line}: not an address"))?;
            let Some(len) = fetch(subnet, &mut body)? else { return Err(msg!("{name}: the metadata has no {subnet}")) };
            let prefix_len = secondary::prefix_len(&body[..len]).ok_or_else(|| msg!("{name}: {subnet}: not a CIDR block"))?;
            secondary::sync(link.index, &secondary::Wanted { ipv6, addresses: &wanted, prefix_len }, &state.addresses, &mut sync);
        }
        for address in &sync.add {
            kernel.change("add address", &mut |buf, seq| address.emit(buf, address::RTM_NEWADDR, netlink::F_CREATE | netlink::F_REPLACE, seq))?;
        }
        for address in &sync.remove {
            kernel.change("remove address", &mut |buf, seq| address.emit(buf, address::RTM_DELADDR, 0, seq))?;
        }
        ctx.log.line(format_args!("net-sync: {name}: {} added, {} removed", sync.add.len(), sync.remove.len()));
    }
    Ok(())
}

/// A link that is down reports no carrier: brings the ethernet links up, then waits a
/// little for one to see its carrier.
fn raise_links(kernel: &mut Rtnl<RouteSocket>, state: &mut State) -> Result<(), Line> {
    let mut raised = false;
    for link in state.links.iter().filter(|l| l.is_ethernet() && !l.is_up()) {
        kernel.link("link up", LinkChange { index: link.index, up: Some(true), ..Default::default() })?;
        raised = true;
    }
    let waited = monotonic_ms();
    if raised {
        loop {
            state.links = kernel.read_links()?;
            if state.links.iter().any(|l| l.is_ethernet() && l.carrier) || monotonic_ms() - waited > CARRIER_WAIT_MS {
                break;
            }
            let _ = wisp_os_linux::net::poll(&mut [], 50);
        }
    }
    Ok(())
}

enum Configured {
    Nothing,
    Disabled,
    Applied(Line),
}

/// Most bytes of a saved network-config, and of what is read of it.
const CONFIG_LIMIT: usize = 16 * 1024;
const CONFIG_NODES: usize = 1024;

/// The kernel command line's `network-config=`, else the seed's network configuration
/// (saved in `$TINY_CLOUD_VAR/network-config`), applied
/// through rtnetlink and kept as `/etc/network/interfaces` and `/etc/resolv.conf`. An
/// interface with `dhcp4` is the one DHCP runs on, if nothing else gives an address.
fn apply_network_config(ctx: &mut Context<'_>, var: &Dir, kernel: &mut Rtnl<RouteSocket>, state: &State, dhcp_on: &mut Option<u32>) -> Result<Configured, Line> {
    let mut document = [0u8; CONFIG_LIMIT];
    let mut cmdline = [0u8; 4096];
    let encoded = ctx.read(b"/proc/cmdline", &mut cmdline).ok().flatten().and_then(network_config::from_cmdline);
    let len = match encoded {
        Some(encoded) => base64::decode(encoded, &mut document).map_err(|e| msg!("network-config= on the kernel command line: {e}"))?,
        None => match system_network(ctx, &mut document)? {
            Some(len) => len,
            None => match var.read(b"network-config", &mut document) {
                Ok(Some(len)) => len,
                Ok(None) => return Ok(Configured::Nothing),
                Err(_) => return Err(msg!("$TINY_CLOUD_VAR/network-config: unreadable, or longer than {CONFIG_LIMIT} bytes")),
            },
        },
    };
    let mut nodes = [Node::EMPTY; CONFIG_NODES];
    let mut text = [0u8; CONFIG_LIMIT];
    let mut arena = Arena::new(&mut nodes, &mut text);
    // ConfigDrive's network_data.json is kept under the same name: JSON is an object.
    let mut config = if document[..len].trim_ascii_start().first() == Some(&b'{') {
        network_data::parse(&document[..len]).map_err(|e| msg!("{e}"))?
    } else {
        let root = arena.parse(&document[..len]).map_err(|e| msg!("network-config: {e}"))?;
        network_config::parse(arena.value(root)).map_err(|e| msg!("{e}"))?
    };
    if config.disabled {
        return Ok(Configured::Disabled);
    }
    for (kind, name) in &config.refused {
        ctx.log.line(format_args!("network-config: {kind} {}: not supported by wisp: skipped", Shown(name.as_bytes())));
    }
    let mut applied = 0;
    for interface in config.interfaces.iter_mut() {
        let Some(link) = bring_up::find_link(interface, &state.links) else {
            ctx.log.line(format_args!("network-config: {}: no such interface: skipped", Shown(interface.name.as_bytes())));
            continue;
        };
        if interface.keep_name {
            interface.name = core::str::from_utf8(link.name()).unwrap_or(interface.name);
        }
        let link = *link;
        let name = interface.name.as_bytes();
        let changes = bring_up::config_changes(interface, &link, &state.addresses, &state.routes).map_err(|e| msg!("network-config: {}: {e}", Shown(name)))?;
        kernel.apply(&changes, &link, name)?;
        if interface.dhcp4 && dhcp_on.is_none() {
            *dhcp_on = Some(link.index);
        }
        applied += 1;
    }
    let mut eni = [0u8; 8192];
    let mut out = Out::new(&mut eni);
    eni::render(&config, &mut out).map_err(|full| msg!("/etc/network/interfaces: longer than {} bytes", full.limit))?;
    let etc_network = ctx.create_dir(b"/etc/network")?;
    if !etc_network.has_contents(b"interfaces", out.written()).unwrap_or(false) {
        etc_network.write_atomic(b"interfaces", out.written(), 0o644, None).map_err(|e| os_error("/etc/network/interfaces", e))?;
    }
    let mut resolv = [0u8; 1024];
    let mut out = Out::new(&mut resolv);
    let search: heapless::Vec<&[u8], { network_config::SEARCH_LIMIT }> = config.search.iter().map(|s| s.as_bytes()).collect();
    match bring_up::write_resolv_conf(&[b"the network configuration"], &search, &config.nameservers, &mut out) {
        Ok(true) => write_resolv_conf(ctx, out.written())?,
        Ok(false) => {}
        Err(full) => return Err(msg!("/etc/resolv.conf: longer than {} bytes", full.limit)),
    }
    Ok(Configured::Applied(msg!("network-config: {applied} of {} interfaces applied", config.interfaces.len())))
}

/// Most files read in /etc/cloud/cloud.cfg.d.
const SYSTEM_FILES_LIMIT: usize = 32;

/// The image's own cloud-init configuration, which an image moving from cloud-init keeps
/// (`network: {config: disabled}` in cloud.cfg.d is the usual line): the last of
/// /etc/cloud/cloud.cfg and /etc/cloud/cloud.cfg.d/*.cfg, in name order, whose top level
/// has `network:`, read into `document`. It wins over the seed's, as in cloud-init.
fn system_network(ctx: &Context<'_>, document: &mut [u8; CONFIG_LIMIT]) -> Result<Option<usize>, Line> {
    let mut paths: heapless::Vec<heapless::Vec<u8, 96>, SYSTEM_FILES_LIMIT> = heapless::Vec::new();
    let _ = paths.push(heapless::Vec::from_slice(b"/etc/cloud/cloud.cfg").unwrap_or_default());
    let mut names: heapless::Vec<heapless::Vec<u8, 64>, SYSTEM_FILES_LIMIT> = heapless::Vec::new();
    if let Ok(dir) = ctx.open_dir(b"/etc/cloud/cloud.cfg.d") {
        let _ = dir.for_each_entry(|name| {
            if name.ends_with(b".cfg") {
                let _ = heapless::Vec::from_slice(name).map(|n| names.push(n));
            }
        });
    }
    names.sort_unstable();
    for name in &names {
        let mut path: heapless::Vec<u8, 96> = heapless::Vec::from_slice(b"/etc/cloud/cloud.cfg.d/").unwrap_or_default();
        if path.extend_from_slice(name).is_ok() {
            let _ = paths.push(path);
        }
    }
    let mut found = None;
    for path in &paths {
        let Ok(Some(text)) = ctx.read(path, document) else { continue };
        let mut nodes = [Node::EMPTY; CONFIG_NODES];
        let mut decoded = [0u8; CONFIG_LIMIT];
        let mut arena = Arena::new(&mut nodes, &mut decoded);
        // cloud-init's own files are not wisp's to judge: one wisp cannot read is skipped.
        match arena.parse(text) {
            Ok(root) if network_config::has_network(arena.value(root)) => found = Some(path),
            Ok(_) => {}
            Err(e) => crate::output::error(format_args!("{}: {e}: skipped", Shown(path))),
        }
    }
    let Some(path) = found else { return Ok(None) };
    Ok(ctx.read(path, document)?.map(|text| text.len()))
}

fn write_resolv_conf(ctx: &Context<'_>, text: &[u8]) -> Result<(), Line> {
    let etc = ctx.create_dir(b"/etc")?;
    if !etc.has_contents(b"resolv.conf", text).unwrap_or(false) {
        etc.write_atomic(b"resolv.conf", text, 0o644, None).map_err(|e| os_error("/etc/resolv.conf", e))?;
    }
    Ok(())
}

/// The DHCP exchange on `link`, within WISP_DHCP_MS.
#[inline(never)]
fn take_lease(ctx: &mut Context<'_>, link: &Link, mac: [u8; 6], previous: Option<Ipv4Addr>) -> Result<Lease, Line> {
    let name = Shown(link.name());
    let socket = packet::ipv4_socket(link.index).map_err(|e| msg!("{name}: DHCP socket: {}", crate::output::Os(e)))?;
    let mut xid = [0u8; 4];
    wisp_os_linux::system::random_bytes(&mut xid).map_err(|e| os_error("getrandom", e))?;
    let log = &ctx.log;
    let on_event = |event| match event {
        Event::Offered { address, server } => {
            log.line(format_args!("{name}: DHCP offer of {} from {}", Shown(&text(Some(address))), Shown(&text(Some(server)))))
        }
        Event::Refused { server } => log.line(format_args!("{name}: DHCPNAK from {}: discovering again", Shown(&text(server)))),
    };
    let mut socket = DhcpOn { socket, index: link.index };
    dhcp_exchange::take_lease(&mut socket, mac, u32::from_ne_bytes(xid), ctx.config.dhcp_ms as u64, previous, on_event)
        .map_err(|e| msg!("{name}: {}", Worded(&e, errno_words)))
}

fn text(ip: Option<Ipv4Addr>) -> heapless::Vec<u8, { ip_text::IP_TEXT_LIMIT }> {
    ip_text::ip_text(&IpAddr::V4(ip.unwrap_or(Ipv4Addr::UNSPECIFIED)))
}

impl From<RtnlError> for Line {
    fn from(e: RtnlError) -> Line {
        msg!("{}", Worded(&e, errno_words))
    }
}

fn open_kernel() -> Result<Rtnl<RouteSocket>, Line> {
    let socket = wisp_os_linux::netlink::route_socket().map_err(|e| os_error("rtnetlink socket", e))?;
    Ok(Rtnl::new(RouteSocket(socket)))
}
