//! The actions of the phases, by tiny-cloud's names. Each returns a short note for the
//! log on success, or the reason it failed.

use wisp_core::default_interfaces::{self, FirstEthernet};
use wisp_core::phase::{Action, UserdataWork};
use wisp_core::provider::Item;
use wisp_core::save_userdata;
use wisp_core::state_files::USER_DATA;
use wisp_core::text::{Decimal, Plain};
use wisp_os_linux::fs::Dir;

use crate::context::Context;
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
        Action::SetEphemeralNetwork => crate::network::set_ephemeral_network(ctx, session.metadata),
        #[cfg(not(feature = "network"))]
        Action::SetEphemeralNetwork => Ok(msg!("built without network support: the OS brings the network up")),
        Action::SetDefaultInterfaces => set_default_interfaces(ctx),
        Action::EnableSshd => enable_sshd(ctx),
        Action::SaveUserdata => save_userdata(ctx, session, var),
        #[cfg(feature = "userdata")]
        Action::UserdataBoothooks => crate::scripts::run_boothooks(ctx, var, session.shared.userdata(false, crate::session::kept(ctx, var))),
        #[cfg(feature = "ssh")]
        Action::CreateDefaultUser | Action::SetHostname | Action::SetSshKeys | Action::SetSshHostKeys => apply_users(ctx, session, var, action),
        #[cfg(not(feature = "ssh"))]
        Action::CreateDefaultUser | Action::SetHostname | Action::SetSshKeys => apply_users(ctx, session, var, action),
        Action::RunUserdata => {
            let later_boot = session.later_boot;
            crate::scripts::run_userdata(ctx, var, later_boot, || session.shared.userdata(true, crate::session::kept(ctx, var)))
        }
        Action::BootstrapComplete => crate::markers::set_complete(ctx, var, true).map(|()| msg!("marked complete")),
        #[cfg(feature = "cloud-config")]
        _ if action.userdata_work() == Some(UserdataWork::CloudConfig) => apply_cloud_config(ctx, session, var, action),
        // Planning refuses these by name first (phases::plan); this is the same answer.
        #[allow(unreachable_patterns)]
        _ => Err(crate::features::missing(action.name(), crate::features::FEATURES.lacks_for_action(action).unwrap_or("it"))),
    }
}

/// The default user, host name, keys and host keys, from metadata and a valid
/// cloud-config: one call for all four, as each call site is a copy of the cloud-config.
/// Inlined: out of line it costs the AWS-only build (no cloud-config) 32 bytes.
#[inline(always)]
fn apply_users(ctx: &mut Context<'_>, session: &mut Session<'_>, var: &Dir, action: Action) -> Result<Message, Message> {
    // One that does not parse counts as none here (the user-data actions report it). A
    // build without cloud-config has none: user-data that holds some does not decode.
    #[cfg(feature = "cloud-config")]
    let config = session.cloud_config(ctx, var).ok().flatten();
    #[cfg(not(feature = "cloud-config"))]
    let config = None;
    let config = config.as_ref();
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

/// A `userdata_*` action of cloud-config, with the documents merged once per run.
#[cfg(feature = "cloud-config")]
fn apply_cloud_config(ctx: &Context<'_>, session: &mut Session<'_>, var: &Dir, action: Action) -> Result<Message, Message> {
    match session.cloud_config(ctx, var) {
        Ok(Some(config)) => crate::cloud_config::run(ctx, &config, var, action),
        Ok(None) => Ok(msg!("no cloud-config")),
        Err(e) => Err(session.shared.report(e)),
    }
}

/// tiny-cloud's `/etc/network/interfaces`, written only when there is none: loopback and
/// DHCP on the first ethernet interface (the lowest ifindex).
#[inline(never)]
fn set_default_interfaces(ctx: &Context<'_>) -> Result<Message, Message> {
    let etc_network = ctx.create_dir(b"/etc/network")?;
    if etc_network.metadata(b"interfaces").map_err(|e| crate::output::os_error("/etc/network/interfaces", e))?.is_some() {
        return Ok(msg!("already set up"));
    }
    let mut first = FirstEthernet::default();
    if let Ok(net) = ctx.open_dir(b"/sys/class/net") {
        let _ = net.for_each_entry(|name| {
            first.consider(name, |name| {
                let mut path = [0u8; 64];
                let path = wisp_core::system_files::joined(&mut path, &[b"/sys/class/net/", name.as_bytes(), b"/ifindex"]);
                ctx.read(path, &mut [0u8; 16]).ok().flatten()
                    .and_then(|text| u32::try_from(wisp_core::text::decimal(text.trim_ascii_end(), 10)?).ok())
            })
        });
    }
    let mut text = default_interfaces::InterfacesFile::new();
    default_interfaces::interfaces_file(first.name(), &mut text);
    etc_network.write_atomic(b"interfaces", text.as_bytes(), 0o644, None).map_err(|e| crate::output::os_error("/etc/network/interfaces", e))?;
    Ok(match first.name() {
        Some(name) => msg!("lo and {name} (dhcp)", name = Plain(name)),
        None => msg!("lo only: no eth* interface"),
    })
}

/// What `rc-update add sshd default` does: a link in OpenRC's default runlevel.
#[inline(never)]
fn enable_sshd(ctx: &Context<'_>) -> Result<Message, Message> {
    if ctx.stat_followed(b"/etc/init.d/sshd").is_none() {
        return Ok(msg!("no /etc/init.d/sshd (not OpenRC, or no sshd): nothing to enable"));
    }
    let runlevel = ctx.create_dir(b"/etc/runlevels/default")?;
    match runlevel.create_symlink(b"/etc/init.d/sshd", b"sshd") {
        Ok(true) => Ok(msg!("sshd added to the default runlevel")),
        Ok(false) => Ok(msg!("sshd already in the default runlevel")),
        Err(e) => Err(crate::output::os_error("/etc/runlevels/default/sshd", e)),
    }
}

/// `$TINY_CLOUD_VAR/user-data`, mode 0600, replaced atomically, in the form
/// `save_userdata::saved_form` says; empty when the instance has none, as tiny-cloud
/// leaves it.
#[inline(never)]
fn save_userdata(ctx: &Context<'_>, session: &mut Session<'_>, var: &Dir) -> Result<Message, Message> {
    let raw = session.metadata.get(Item::UserData).unwrap_or(b"");
    let limit = ctx.config.userdata_limit as usize;
    let data = save_userdata::saved_form(raw, cfg!(feature = "userdata"), limit, |len| crate::memory::reserve(len, "gunzipped user-data"))?;
    let len = data.len();
    let mode_ok = matches!(var.metadata(USER_DATA), Ok(Some(m)) if m.is_file() && m.permissions() == 0o600);
    let note = if mode_ok && var.has_contents(USER_DATA, data).unwrap_or(false) {
        "unchanged"
    } else {
        // Made durable by the sync before the completion marker: until then each run saves
        // it again.
        var.write_volatile(USER_DATA, data, 0o600).map_err(|e| crate::output::os_error("cannot save user-data", e))?;
        "saved"
    };
    let facts = save_network_facts(session, var)?;
    // Decoded now, while the network is up, to fetch its includes.
    let timeouts = ctx.timeouts;
    let decoded = match session.shared.replace_userdata(crate::userdata::load(ctx, var, Includes::Fetch(&timeouts))) {
        Ok(Some(userdata)) => msg!(", {} parts)", Decimal(userdata.parts.len() as u64)),
        Ok(None) => msg!(")"),
        Err(e) => msg!("); it does not decode: {e}"),
    };
    Ok(msg!("{note} ({len} bytes{decoded}{facts}", len = Decimal(len as u64), note = Plain(note), facts = Plain(facts)))
}

/// The metadata document of the clouds whose network facts are in it (`meta-data`), and
/// the network configuration they give in cloud-init's format (`network-config`), kept
/// in TINY_CLOUD_VAR (0600, as the seeds' are) for the network configuration; rewritten
/// only when changed.
#[inline(never)]
#[cfg_attr(not(all(feature = "hetzner", feature = "incus")), allow(unused_mut, unused_variables))]
fn save_network_facts(session: &mut Session<'_>, var: &Dir) -> Result<&'static str, Message> {
    use wisp_core::config::Cloud;
    let cloud = session.imds.cloud();
    if !save_userdata::keeps_metadata_document(cloud) {
        return Ok("");
    }
    let Some(document) = session.metadata.document() else { return Ok("") };
    save_if_changed(var, "meta-data", document)?;
    let mut network = [0u8; 16 * 1024];
    let found: Option<&[u8]> = match cloud {
        #[cfg(feature = "hetzner")]
        Cloud::Hetzner => wisp_core::provider::hetzner::network_config(document, &mut network)
            .map_err(|e| msg!("metadata network-config: {e}"))?
            .map(|len| &network[..len]),
        #[cfg(feature = "incus")]
        Cloud::Incus => session.imds.get_path(wisp_core::provider::incus::NETWORK_CONFIG_PATH, &mut network).map_err(crate::output::line)?,
        _ => None,
    };
    match found {
        Some(body) => {
            save_if_changed(var, "network-config", body)?;
            Ok("; meta-data and network-config saved")
        }
        None => Ok("; meta-data saved"),
    }
}

fn save_if_changed(var: &Dir, name: &str, contents: &[u8]) -> Result<(), Message> {
    if var.has_contents(name.as_bytes(), contents).unwrap_or(false) {
        return Ok(());
    }
    var.write_atomic(name.as_bytes(), contents, 0o600, None).map_err(|e| crate::output::os_error(name, e))
}
