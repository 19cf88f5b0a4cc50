//! The actions of the phases, by tiny-cloud's names. Each returns a short note for the
//! log on success, or the reason it failed.

use wisp_core::phase::{Action, UserdataWork};
use wisp_core::provider::Item;
use wisp_core::save_userdata;
use wisp_os_linux::fs::Dir;

use crate::context::Context;
use crate::host::OpenDir;
use crate::host::system::{today, System};
use crate::output::Message;
use crate::session::Session;
use crate::userdata::Includes;

pub fn run(ctx: &mut Context<'_>, session: &mut Session<'_>, var: &Dir, action: Action) -> Result<Message, Message> {
    match action {
        #[cfg(feature = "grow")]
        Action::ExpandRoot => wisp_core::partition::expand::mount(&mut System::new(ctx), ctx.path(b"/")?.as_bytes()),
        Action::InstallHotplugs => Err(msg!("not supported: wisp installs no mdev hotplug handlers")),
        #[cfg(feature = "network")]
        Action::SetEphemeralNetwork => crate::network::set_ephemeral_network(ctx, session.imds.cloud(), var, session.metadata),
        #[cfg(not(feature = "network"))]
        Action::SetEphemeralNetwork => Ok(msg!("built without network support: the OS brings the network up")),
        Action::SetDefaultInterfaces => wisp_core::default_interfaces::set(&mut System::new(ctx), &mut OpenDir::root(ctx)),
        Action::EnableSshd => wisp_core::enable_sshd::enable_sshd(&mut System::new(ctx)),
        Action::SaveUserdata => save_userdata(ctx, session, var),
        #[cfg(feature = "userdata")]
        Action::UserdataBoothooks => crate::host::scripts::run_boothooks(ctx, var, session.shared.userdata(false, crate::session::kept(ctx, var))),
        #[cfg(feature = "ssh")]
        Action::CreateDefaultUser | Action::SetHostname | Action::SetSshKeys | Action::SetSshHostKeys => apply_users(ctx, session, var, action),
        #[cfg(not(feature = "ssh"))]
        Action::CreateDefaultUser | Action::SetHostname | Action::SetSshKeys => apply_users(ctx, session, var, action),
        Action::RunUserdata => crate::host::scripts::run_userdata(ctx, var, session.later_boot, || session.shared.userdata(true, crate::session::kept(ctx, var))),
        Action::BootstrapComplete => crate::markers::set_complete(ctx, var, true).map(|()| msg!("marked complete")),
        // A `userdata_*` action of cloud-config, with the documents merged once per run.
        #[cfg(feature = "cloud-config")]
        _ if action.userdata_work() == Some(UserdataWork::CloudConfig) => match crate::session::cloud_config(&mut session.shared, ctx, var) {
            Ok(Some(config)) => crate::cloud_config::run(ctx, config, var, session.imds.cloud(), action),
            Ok(None) => Ok(msg!("no cloud-config")),
            Err(e) => Err(session.shared.report(e)),
        },
        // Planning refuses these by name first (phases::plan); this is the same answer.
        #[allow(unreachable_patterns)]
        _ => Err(crate::features::missing(action.name(), crate::features::FEATURES.lacks_for_action(action).unwrap_or("it"))),
    }
}

/// The default user, host name, keys and host keys, from metadata and a valid
/// cloud-config: one call for all four, as each call site is a copy of the cloud-config.
fn apply_users(ctx: &mut Context<'_>, session: &mut Session<'_>, var: &Dir, action: Action) -> Result<Message, Message> {
    // One that does not parse counts as none here (the user-data actions report it). A
    // build without cloud-config has none: user-data that holds some does not decode.
    #[cfg(feature = "cloud-config")]
    let config = crate::session::cloud_config(&mut session.shared, ctx, var).ok().flatten();
    #[cfg(not(feature = "cloud-config"))]
    let config = None;
    let host = &mut System::new(ctx);
    match action {
        Action::CreateDefaultUser => wisp_core::users::create_default_user(host, ctx.config.cloud_user.as_bytes(), config, today()),
        Action::SetHostname => wisp_core::set_hostname::set_hostname(host, session.metadata.get(Item::Hostname), config),
        #[cfg(feature = "ssh")]
        Action::SetSshHostKeys => {
            let mut id = [0u8; wisp_core::instance::INSTANCE_ID_LIMIT];
            let id = wisp_core::instance::saved_id(&mut crate::host::OpenDir { dir: var }, &mut id).unwrap_or(b"");
            wisp_core::host_keys::set_ssh_host_keys(host, ctx.config.var_dir.as_bytes(), id, config)
        }
        _ => wisp_core::users::set_ssh_keys(host, ctx.config.cloud_user.as_bytes(), session.metadata.get(Item::SshKeys), config),
    }
}

/// `$TINY_CLOUD_VAR/user-data` and the network facts (core's `save_userdata`), then the
/// user-data decoded.
#[inline(never)]
fn save_userdata(ctx: &Context<'_>, session: &mut Session<'_>, var: &Dir) -> Result<Message, Message> {
    let host = &mut System::new(ctx);
    let raw = session.metadata.get(Item::UserData).unwrap_or(b"");
    let saved = save_userdata::save(host, &mut OpenDir { dir: var }, raw, cfg!(feature = "userdata"), ctx.config.userdata_limit as usize)?;
    let (cloud, (document, room)) = (session.imds.cloud(), session.metadata.document_and_room());
    let facts = save_userdata::save_network_facts::<{ cfg!(feature = "hetzner") }, { cfg!(feature = "incus") }, _, _>(host, &mut OpenDir { dir: var }, cloud, document, room, |buf| {
        session.imds.get_path(&mut session.network, wisp_core::provider::incus::NETWORK_CONFIG_PATH, buf).map_err(|e| crate::output::line(crate::imds::ImdsError(e)))
    })?;
    // Decoded now, while the network is up, to fetch its includes.
    let timeouts = ctx.config.timeouts();
    let decoded = session.shared.replace_userdata(crate::userdata::load(ctx, var, Includes::Fetch(&timeouts)));
    Ok(saved.said(host, decoded.map(|userdata| userdata.map(|userdata| userdata.parts.len())), facts))
}
