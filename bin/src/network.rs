//! `set_ephemeral_network`: the network with no tools. When the cloud serves its metadata
//! over the network and no interface has an address yet, wisp takes a DHCP lease on the
//! interface tiny-cloud would choose and applies it through rtnetlink, with resolv.conf.
//! The decisions are core's (`wisp_core::net::bring_up`); this is the loop around the two
//! sockets.

use core::net::{IpAddr, Ipv4Addr};

use wisp_core::config::Cloud;
use wisp_core::net::bring_up::{self, Need};
use wisp_core::net::configure::{self, Configured};
use wisp_core::net::{ip_text, net_sync};
use wisp_core::provider::Item;
use wisp_core::net::dhcp::Lease;
use wisp_core::net::dhcp_client::Event;
use wisp_core::net::dhcp_exchange;
use wisp_core::host::explain::Worded;
use wisp_core::net::link::{self, Link};
use wisp_core::net::rtnl::{Rtnl, RtnlError};
use wisp_core::out::Out;
use wisp_os_linux::packet;

use crate::context::Context;
use crate::host::dhcp::DhcpOn;
use crate::host::errno_words;
use crate::host::netlink::RouteSocket;
use crate::host::system::System;
use crate::host::timer::Monotonic;
use crate::host::OpenDir;
use crate::imds::Metadata;
use crate::output::{os_error, Message, Shown};

/// The address of the last lease, asked for again first at the next boot (INIT-REBOOT).
const LAST_ADDRESS_FILE: &[u8] = b".dhcp-address";

pub fn set_ephemeral_network(ctx: &mut Context<'_>, metadata: &mut Metadata) -> Result<Message, Message> {
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
    let mut system = System::new(ctx);
    match configure::apply_network_config(&mut system, &mut OpenDir { dir: &var }, &mut kernel, &state, &mut dhcp_on)? {
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
            configure::raise_links(&mut kernel, &mut Monotonic, &mut state)?;
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
            configure::write_resolv_conf(&mut system, out.written())?;
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

fn sync_addresses(ctx: &mut Context<'_>) -> Result<(), Message> {
    let cloud = crate::cloud::resolve(ctx)?;
    if cloud != Cloud::Aws {
        return Err(msg!("{}: only AWS's metadata lists an interface's addresses", cloud.name()));
    }
    let timeouts = ctx.timeouts;
    let mut imds = crate::imds::Imds::new(cloud, &timeouts, ctx.config.imds_token_ttl);
    let mut kernel = open_kernel()?;
    let state = kernel.read_state()?;
    // The answer's head comes first in `raw`: core copies the body out of it.
    net_sync::sync_interfaces(&System::new(ctx), &mut kernel, &state, |path, raw| imds.get_path(path, raw))
}

/// The DHCP exchange on `link`, within WISP_DHCP_MS.
#[inline(never)]
fn take_lease(ctx: &Context<'_>, link: &Link, mac: [u8; 6], previous: Option<Ipv4Addr>) -> Result<Lease, Message> {
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

impl From<RtnlError> for Message {
    fn from(e: RtnlError) -> Message {
        msg!("{}", Worded(&e, errno_words))
    }
}

fn open_kernel() -> Result<Rtnl<RouteSocket>, Message> {
    let socket = wisp_os_linux::netlink::route_socket().map_err(|e| os_error("rtnetlink socket", e))?;
    Ok(Rtnl::new(RouteSocket(socket)))
}
