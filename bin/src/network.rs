//! The network with no tools: core's `net::ephemeral` (the boot phase's bring-up) over
//! the kernel's sockets, which `wisp net-sync` (`commands`) opens too.

use wisp_core::config::Cloud;
use wisp_core::net::{configure::CONFIG_NODES, ephemeral, rtnl::{Rtnl, DATAGRAM_LIMIT}};
use wisp_core::seed::local::{before_service, BeforeService};
use wisp_core::yaml::Node;
use wisp_os_linux::fs::Dir;

use crate::context::Context;
use crate::host::{host_error, net::{DhcpOn, RouteSocket}, system::System, Network, OpenDir};
use crate::output::{path_error, Message};

/// Out of line: its frame holds the bring-up's state (the kernel's links, addresses and
/// routes), which inlined into the action dispatch was probed by every action of every phase.
#[inline(never)]
pub fn set_ephemeral_network(ctx: &mut Context<'_>, cloud: Cloud, var: &Dir, metadata: &mut crate::imds::Metadata) -> Result<Message, Message> {
    let local_seed = before_service(cloud) == Some(BeforeService::Seed);
    // `wisp boot` alone has not read the seed yet: its network-config is needed now.
    #[cfg(any(feature = "nocloud", feature = "configdrive"))]
    if local_seed && metadata.get(wisp_core::provider::Item::InstanceId).is_none() {
        if let Err(e) = crate::seed::load_local(ctx, cloud, metadata, Some(var)) {
            ctx.log.line(format_args!("{e}: using the saved network-config, if any"));
        }
    }
    let open_dhcp = |index| wisp_os_linux::packet::ipv4_socket(index).map(|socket| DhcpOn { socket, index }).map_err(host_error);
    let nodes = wisp_os_linux::memory::leak_filled(CONFIG_NODES, Node::EMPTY).map_err(|e| crate::memory::refused(CONFIG_NODES * size_of::<Node>(), "YAML nodes", e))?;
    let instance = ephemeral::Instance { cloud: cloud.name(), local_seed, dhcp_ms: ctx.config.dhcp_ms as u64, nodes };
    let (socket, answers) = open_kernel()?;
    ephemeral::set_ephemeral_network(&mut System::new(ctx), &mut OpenDir { dir: var }, &mut Rtnl::new(socket, answers), &mut Network::default(), open_dhcp, instance)
}

/// The routing socket, and the room `Rtnl` receives its answers in: kept for the run (no
/// unmapping at each caller's exits), as each caller opens the kernel once a run.
pub fn open_kernel() -> Result<(RouteSocket, &'static mut [u8]), Message> {
    let socket = RouteSocket(wisp_os_linux::netlink::route_socket().map_err(|e| path_error(b"rtnetlink socket", e))?);
    Ok((socket, crate::memory::reserve(DATAGRAM_LIMIT, "the routing socket's answers")?))
}
