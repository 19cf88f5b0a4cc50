//! The `userdata_*` actions that apply `#cloud-config`. The documents are parsed once per
//! run, all of them before any key is applied, so a YAML error anywhere applies nothing.

use wisp_core::cloud_config::{self, CloudConfig};
use wisp_core::cloud_config_commands::{self, CommandList};
use wisp_core::config::Cloud;
use wisp_core::phase::Action;
use wisp_core::userdata::Kind;
use wisp_core::yaml::{Arena, Node};
use wisp_os_linux::fs::Dir;

use crate::userdata::USER_DATA_LIMIT;
use crate::context::Context;
use crate::host::system::System;
use wisp_os_linux::take_once::TakeOnce;
use crate::output::Message;
use crate::host::scripts::with_hosts;

/// Most YAML nodes in all cloud-config documents together.
pub const NODES_LIMIT: usize = 64 * 1024;

/// The parsed documents live for the whole run, so their values are `'static`.
static ARENA: TakeOnce<Option<Arena<'static>>> = TakeOnce::new(None);

/// Parses every cloud-config part of the user-data, in order, and merges them (their
/// keys' shapes are for `CloudConfig::validate`).
pub fn parse(userdata: &crate::userdata::UserData) -> Result<CloudConfig<'static>, Message> {
    let (parts, input) = userdata.of_kind(Kind::CloudConfig).fold((0, 0usize), |(parts, input), (_, part)| (parts + 1, input + part.bytes.len()));
    if parts == 0 {
        return Ok(CloudConfig::default());
    }
    let slot = ARENA.take().ok_or_else(|| msg!("the cloud-config buffers are in use"))?;
    // Sized to the documents: twice their length is more than the YAML subset makes of
    // them (a node takes a byte of source or more; `\L`, 3 bytes of text from 2, is the
    // most an escape grows), so no document the named limits allow is refused.
    let room = input.saturating_mul(2).saturating_add(64);
    let nodes = room.min(NODES_LIMIT);
    let nodes = wisp_os_linux::memory::leak_filled(nodes, Node::EMPTY).map_err(|e| crate::memory::refused(nodes * size_of::<Node>(), "YAML nodes", e))?;
    let text = crate::memory::reserve(room.min(USER_DATA_LIMIT), "YAML text")?;
    let arena = slot.insert(Arena::new(nodes, text));
    cloud_config::parse_documents(arena, userdata.of_kind(Kind::CloudConfig).map(|(index, part)| (index, part.bytes)), Message::format)
}

/// The action `action` with the merged cloud-config, for `cloud` (the run's, resolved once).
#[inline(never)]
pub fn run(ctx: &Context<'_>, config: &CloudConfig<'static>, var: &Dir, cloud: Cloud, action: Action) -> Result<Message, Message> {
    let host = &mut System::new(ctx);
    match action {
        Action::UserdataBootcmd | Action::UserdataRuncmd => {
            let list = if action == Action::UserdataBootcmd { CommandList::Bootcmd } else { CommandList::Runcmd };
            with_hosts(ctx, var, &mut |host, places| cloud_config_commands::run(host, places, config, list))
        }
        Action::UserdataWriteFiles | Action::UserdataWriteFilesDeferred => wisp_core::write_files::apply(host, config, action == Action::UserdataWriteFilesDeferred),
        Action::UserdataUsers => wisp_core::users::apply_users(host, ctx.config.cloud_user.as_str(), config, crate::host::system::today()),
        Action::UserdataMounts => wisp_core::mounts::apply(host, config),
        Action::UserdataTimezone => wisp_core::timezone::apply(host, config),
        Action::UserdataPackages => with_hosts(ctx, var, &mut |host, _| wisp_core::packages::install_once(host, config)),
        Action::UserdataPowerState => wisp_core::power_state::apply(host, config),
        #[cfg(feature = "ssh")]
        Action::UserdataSshPwauth => wisp_core::sshd::ssh_pwauth(host, config),
        #[cfg(feature = "ntp")]
        Action::UserdataNtp => wisp_core::ntp::configure(host, config, || Ok(cloud)),
        #[cfg(feature = "apk-repos")]
        Action::UserdataApkRepos => wisp_core::apk_repositories::apply(host, config),
        _ => Ok(msg!("not a cloud-config action")),
    }
}
