//! cloud-config `ntp`: the image's time client configured as cloud-init configures it on
//! Alpine (chrony's `/etc/chrony/chrony.conf`, else busybox ntpd's `/etc/ntp.conf`) and
//! its OpenRC service added to the default runlevel, as tiny-cloud's alpine-config does.
//! With no `servers` or `pools`: Amazon Time Sync on AWS (as Alpine's AWS images are set
//! up), else cloud-init's default pool.

use wisp_core::cloud_config::{self, CloudConfig};
use wisp_core::config::Cloud;
use wisp_core::ntp::{self, Client};
use wisp_core::out::Out;
use wisp_core::yaml::{Kind, Value};
use wisp_os_linux::fs;

use crate::context::Context;
use crate::output::Line;

/// Most servers, and most pools, configured.
const SOURCES_LIMIT: usize = 16;

#[inline(never)]
pub fn ntp(ctx: &Context<'_>, config: &CloudConfig<'static>) -> Result<Line, Line> {
    let Some(ntp) = config.value("ntp") else { return Ok(msg!("no ntp")) };
    if ntp.kind() != Kind::Mapping {
        return Err(cloud_config::error("ntp", ntp, "expected a mapping").into());
    }
    let field = |name| ntp.get(name).filter(|v| !v.is_null());
    if !field("enabled").map(|v| cloud_config::flag("ntp", v)).transpose()?.unwrap_or(true) {
        return Ok(msg!("ntp disabled"));
    }
    let installed = |path: &[u8]| ctx.path(path).is_ok_and(|p| matches!(fs::metadata(p.as_cstr()), Ok(Some(_))));
    let client = match field("ntp_client").map(|v| (v, cloud_config::text("ntp", v))) {
        None => None,
        Some((_, Ok("auto"))) => None,
        Some((at, name)) => Some(Client::from_name(name?).ok_or_else(|| cloud_config::error("ntp", at, "ntp_client: wisp configures chrony or ntp (busybox) only"))?),
    };
    let client = client.unwrap_or(if installed(b"/usr/sbin/chronyd") { Client::Chrony } else { Client::Busybox });
    let mut servers = sources(field("servers"))?;
    let mut pools = sources(field("pools"))?;
    if servers.is_empty() && pools.is_empty() {
        match (crate::cloud::resolve(ctx)?, client) {
            (Cloud::Aws, _) => drop(servers.push(ntp::AWS_TIME_SYNC)),
            (_, Client::Chrony) => pools.extend(ntp::DEFAULT_POOLS),
            (_, Client::Busybox) => servers.extend(ntp::DEFAULT_POOLS),
        }
    }
    let mut text = [0u8; 4096];
    let mut out = Out::new(&mut text);
    ntp::write_config(client, servers.iter().copied(), pools.iter().copied(), &mut out).map_err(|full| msg!("ntp: the configuration is larger than {} bytes", full.limit))?;
    let len = out.len();
    let path = client.config_path();
    let (dir_path, name) = path.rsplit_once('/').unwrap_or(("/etc", path));
    let dir = ctx.create_dir(dir_path.as_bytes())?;
    if !dir.has_contents(name.as_bytes(), &text[..len]).unwrap_or(false) {
        dir.write_atomic(name.as_bytes(), &text[..len], 0o644, None).map_err(|e| crate::output::os_error(path, e))?;
    }
    let service = client.service();
    let mut init_script = heapless::String::<32>::new();
    let _ = init_script.push_str("/etc/init.d/");
    let _ = init_script.push_str(service);
    let enabled = if installed(init_script.as_bytes()) {
        let runlevel = ctx.create_dir(b"/etc/runlevels/default")?;
        runlevel.create_symlink(init_script.as_bytes(), service.as_bytes()).map_err(|e| crate::output::os_error("/etc/runlevels/default", e))?;
        "in the default runlevel"
    } else {
        "not installed: no /etc/init.d script"
    };
    Ok(msg!("{path}: {} servers, {} pools; {service} {enabled}", servers.len(), pools.len()))
}

/// `servers` or `pools`: a list of names or addresses.
fn sources(list: Option<Value<'static>>) -> Result<heapless::Vec<&'static str, SOURCES_LIMIT>, Line> {
    let mut names = heapless::Vec::new();
    for item in list.map(|list| cloud_config::items("ntp", list)).transpose()?.into_iter().flatten() {
        let name = cloud_config::text("ntp", item)?;
        if !ntp::is_valid_source(name) {
            return Err(cloud_config::error("ntp", item, "a server or pool is a host name or address").into());
        }
        names.push(name).map_err(|_| msg!("ntp: more than {SOURCES_LIMIT} servers or pools"))?;
    }
    Ok(names)
}
