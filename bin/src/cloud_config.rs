//! The `userdata_*` actions that apply `#cloud-config`. The documents are parsed once per
//! run, all of them before any key is applied, so a YAML error anywhere applies nothing.

use wisp_core::cloud_config::{self, CloudConfig, Encoding, WriteFile};
use wisp_core::phase::Action;
use wisp_core::userdata::Kind;
use wisp_core::yaml::{Arena, Node};
use wisp_core::{accounts, base64, gzip};
use wisp_os_linux::cpath::CPath;
use wisp_os_linux::fs::{Dir, ReadError};

use crate::actions::USER_DATA_LIMIT;
use crate::context::Context;
use crate::once::Once;
use crate::output::{Line, Os, Shown};
use crate::phases::Session;
use crate::scripts;

/// Most YAML nodes in all cloud-config documents together.
pub const NODES_LIMIT: usize = 64 * 1024;

/// The parsed documents live in .bss for the whole run, so their values are `'static`.
static NODES: Once<[Node; NODES_LIMIT]> = Once::new([Node::EMPTY; NODES_LIMIT]);
static TEXT: Once<[u8; USER_DATA_LIMIT]> = Once::new([0; USER_DATA_LIMIT]);
static ARENA: Once<Option<Arena<'static>>> = Once::new(None);
/// Where `write_files` content is decoded, and files are read to be appended to.
static CONTENT: Once<[u8; USER_DATA_LIMIT]> = Once::new([0; USER_DATA_LIMIT]);

/// Parses every cloud-config part of the user-data, in order, and merges them (their
/// keys' shapes are for `CloudConfig::validate`).
pub fn parse(userdata: &crate::userdata::UserData) -> Result<CloudConfig<'static>, Line> {
    let mut config = CloudConfig::default();
    if userdata.of_kind(Kind::CloudConfig).next().is_none() {
        return Ok(config);
    }
    let busy = || msg!("the cloud-config buffers are in use");
    let slot = ARENA.take().ok_or_else(busy)?;
    let arena = slot.insert(Arena::new(NODES.take().ok_or_else(busy)?, TEXT.take().ok_or_else(busy)?));
    let mut roots: heapless::Vec<_, { cloud_config::DOCUMENTS_LIMIT }> = heapless::Vec::new();
    for (index, part) in userdata.of_kind(Kind::CloudConfig) {
        let root = arena.parse(part.bytes).map_err(|e| msg!("user-data part {}: YAML {e}", index + 1))?;
        roots.push((index, root)).map_err(|_| msg!("more than {} cloud-config parts", cloud_config::DOCUMENTS_LIMIT))?;
    }
    let arena: &'static Arena<'static> = arena;
    for (index, root) in roots {
        config.add(arena.value(root)).map_err(|e| msg!("user-data part {}: {e}", index + 1))?;
    }
    Ok(config)
}

pub fn run(ctx: &Context<'_>, session: &mut Session<'_>, var: &Dir, action: Action) -> Result<Line, Line> {
    let Some(config) = session.cloud_config(ctx, var)? else { return Ok(msg!("no cloud-config")) };
    let config = &config;
    match action {
        Action::UserdataBootcmd => run_commands(ctx, config, "bootcmd", Some(&scripts::instance_env(var)?)),
        Action::UserdataRuncmd => run_commands(ctx, config, "runcmd", None),
        Action::UserdataWriteFiles => write_files(ctx, config, false),
        Action::UserdataWriteFilesDeferred => write_files(ctx, config, true),
        Action::UserdataUsers => crate::users::apply_users(ctx, config),
        Action::UserdataMounts => crate::system_config::mounts(ctx, config),
        Action::UserdataTimezone => crate::system_config::timezone(ctx, config),
        Action::UserdataPackages => crate::system_config::packages(ctx, config),
        Action::UserdataPowerState => crate::system_config::power_state(ctx, config),
        Action::UserdataSshPwauth => crate::sshd::ssh_pwauth(ctx, config),
        Action::UserdataNtp => crate::ntp::ntp(ctx, config),
        Action::UserdataApkRepos => crate::apk_repos::apk_repos(ctx, config),
        _ => Ok(msg!("not a cloud-config action")),
    }
}

/// `bootcmd` or `runcmd`: written as the shell script cloud-init makes of the list, and
/// run with `/bin/sh`, its output in user-data.log.
fn run_commands(ctx: &Context<'_>, config: &CloudConfig<'static>, key: &'static str, env: Option<&CPath>) -> Result<Line, Line> {
    let Some(commands) = config.value(key) else { return Ok(msg!("no {key}")) };
    let mut script = [0u8; 64 * 1024];
    let len = cloud_config::shell_script(key, commands, &mut script).map_err(crate::output::line)?;
    let status = scripts::run_saved_shell(ctx, key.as_bytes(), &script[..len], env.map(CPath::as_cstr))?;
    scripts::finish(ctx, status, key)?;
    Ok(msg!("{} commands ran", commands.len()))
}

/// `write_files`: the entries whose `defer` is `deferred`, each written atomically with its
/// mode and owner; `append` adds the content unless the file already ends with it, so a
/// rerun never appends twice.
fn write_files(ctx: &Context<'_>, config: &CloudConfig<'static>, deferred: bool) -> Result<Line, Line> {
    let Some(files) = config.value("write_files") else { return Ok(msg!("no write_files")) };
    CONTENT.lend(|buffer| write_entries(ctx, files, deferred, buffer)).ok_or_else(|| msg!("the write_files buffer is in use"))?
}

fn write_entries(ctx: &Context<'_>, files: wisp_core::yaml::Value<'static>, deferred: bool, buffer: &mut [u8]) -> Result<Line, Line> {
    let mut written = 0;
    for entry in cloud_config::items("write_files", files).map_err(crate::output::line)? {
        let file = cloud_config::write_file(entry).map_err(crate::output::line)?;
        if file.defer != deferred {
            continue;
        }
        write_file(ctx, &file, buffer).map_err(|e| msg!("write_files {}: {e}", Shown(file.path.as_bytes())))?;
        written += 1;
    }
    Ok(msg!("{written} files written"))
}

fn write_file(ctx: &Context<'_>, file: &WriteFile<'_>, buffer: &mut [u8]) -> Result<(), Line> {
    let (uid, gid) = owner_ids(ctx, file.owner)?;
    let split = file.path.rfind('/').unwrap_or(0);
    let (parent, name) = (&file.path[..split.max(1)], &file.path.as_bytes()[split + 1..]);
    let dir = ctx.create_dir(parent.as_bytes())?;
    // Appending: the old content first, the new after it, written together atomically.
    let old = match file.append {
        false => 0,
        true => match dir.read(name, buffer) {
            Ok(len) => len.unwrap_or(0),
            Err(ReadError::TooLarge { limit }) => return Err(msg!("larger than {limit} bytes")),
            Err(ReadError::Io(e)) => return Err(msg!("{}", Os(e))),
        },
    };
    let added = decode_content(file, &mut buffer[old..])?;
    if file.append && (added == 0 || (old >= added && buffer[old - added..old] == buffer[old..old + added])) {
        return Ok(());
    }
    dir.write_atomic(name, &buffer[..old + added], file.permissions, Some((uid, gid))).map_err(|e| msg!("{}", Os(e)))
}

/// The entry's content, decoded into `out`; its length.
fn decode_content(file: &WriteFile<'_>, out: &mut [u8]) -> Result<usize, Line> {
    let content = file.content.as_bytes();
    match file.encoding {
        Encoding::Text => {
            let limit = out.len();
            out.get_mut(..content.len()).ok_or_else(|| msg!("content larger than {limit} bytes"))?.copy_from_slice(content);
            Ok(content.len())
        }
        Encoding::Base64 => base64::decode(content, out).map_err(crate::output::line),
        Encoding::GzipBase64 => {
            let (inflated, encoded) = out.split_at_mut(out.len() / 2);
            let len = base64::decode(content, encoded).map_err(crate::output::line)?;
            let mut state = miniz_oxide::inflate::core::DecompressorOxide::new();
            gzip::decompress(&encoded[..len], inflated, &mut state).map_err(crate::output::line)
        }
    }
}

/// `user[:group]` (names or numbers) as ids; the group defaults to the user's own.
fn owner_ids(ctx: &Context<'_>, owner: &str) -> Result<(u32, u32), Line> {
    let (user, group) = owner.split_once(':').map_or((owner, None), |(u, g)| (u, Some(g)));
    let mut passwd = [0u8; 32 * 1024];
    let passwd = ctx.read(b"/etc/passwd", &mut passwd)?.unwrap_or(b"");
    let found = accounts::find_user(passwd, user.as_bytes());
    let uid = match (found, user.parse::<u32>()) {
        (Some(found), _) => found.uid,
        (None, Ok(uid)) => uid,
        (None, Err(_)) => return Err(msg!("owner {}: no such user", Shown(user.as_bytes()))),
    };
    let gid = match group {
        None | Some("") => found.map_or(uid, |found| found.gid),
        Some(group) => {
            let mut groups = [0u8; 32 * 1024];
            let groups = ctx.read(b"/etc/group", &mut groups)?.unwrap_or(b"");
            match (accounts::find_group(groups, group.as_bytes()), group.parse::<u32>()) {
                (Some(found), _) => found.gid,
                (None, Ok(gid)) => gid,
                (None, Err(_)) => return Err(msg!("owner {}: no such group", Shown(owner.as_bytes()))),
            }
        }
    };
    Ok((uid, gid))
}
