//! The network with no tools: core's `net::ephemeral` (the boot phase's bring-up) and
//! `net::net_sync` (`wisp net-sync`) over the kernel's sockets.

use wisp_core::config::Cloud;
use wisp_core::net::{ephemeral, net_sync, rtnl::Rtnl};
use wisp_core::text::Plain;

use crate::context::Context;
use crate::host::{dhcp::DhcpOn, host_error, netlink::RouteSocket, system::System, Network, OpenDir};
use crate::output::{os_error, Message};

pub fn set_ephemeral_network(ctx: &mut Context<'_>, metadata: &mut crate::imds::Metadata) -> Result<Message, Message> {
    let cloud = crate::cloud::resolve(ctx)?;
    let local_seed = matches!(cloud, Cloud::Nocloud | Cloud::Configdrive);
    let var = ctx.var_dir()?;
    // `wisp boot` alone has not read the seed yet: its network-config is needed now.
    #[cfg(any(feature = "nocloud", feature = "configdrive"))]
    if local_seed && metadata.get(wisp_core::provider::Item::InstanceId).is_none() {
        if let Err(e) = crate::seed::load(ctx, cloud, metadata, Some(&var)) {
            ctx.log.line(format_args!("{}: {e}: using the saved network-config, if any", Plain(cloud.name())));
        }
    }
    let instance = ephemeral::Instance { cloud: cloud.name(), local_seed, dhcp_ms: ctx.config.dhcp_ms as u64 };
    let open_dhcp = |index| wisp_os_linux::packet::ipv4_socket(index).map(|socket| DhcpOn { socket, index }).map_err(host_error);
    ephemeral::set_ephemeral_network(&mut System::new(ctx), &mut OpenDir { dir: &var }, &mut open_kernel()?, &mut Network { guest_socket: None }, open_dhcp, &instance)
}

/// `wisp net-sync`: on AWS, each interface's addresses made what the metadata lists.
#[inline(never)]
pub fn net_sync(ctx: &mut Context<'_>) -> i32 {
    let synced = crate::cloud::resolve(ctx).and_then(|cloud| {
        let mut imds = crate::imds::Imds::new(cloud, &ctx.timeouts, ctx.config.imds_token_ttl);
        // The answer's head comes first in `raw`: core copies the body out of it.
        net_sync::run(&System::new(ctx), cloud, &mut open_kernel()?, |path, raw| imds.get_path(path, raw))
    });
    let Err(e) = synced else { return 0 };
    crate::output::error(format_args!("net-sync: {e}"));
    crate::EXIT_FAILED
}

fn open_kernel() -> Result<Rtnl<RouteSocket>, Message> {
    Ok(Rtnl::new(RouteSocket(wisp_os_linux::netlink::route_socket().map_err(|e| os_error("rtnetlink socket", e))?)))
}
