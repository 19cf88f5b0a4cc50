//! Fresh SSH host keys for each new instance, as cloud-init's `ssh` module makes them
//! (`ssh_deletekeys`, `ssh_genkeytypes`, `ssh_keys`), and their fingerprints on the
//! console as its `keys_to_console` prints them, so that the first connection can be
//! checked against the cloud's serial log. wisp generates no keys itself: the image's
//! `ssh-keygen` does.

use wisp_core::cloud_config::{self, CloudConfig};
use wisp_core::ssh_host_keys::{self, BEGIN_FINGERPRINTS, DEFAULT_TYPES, END_FINGERPRINTS, KNOWN_TYPES};
use wisp_os_linux::cpath::CPath;
use wisp_os_linux::fs::{self, Dir};
use wisp_os_linux::process::ExitStatus;
use wisp_os_linux::{AsFd, BorrowedFd};
use core::ffi::CStr;

use crate::context::Context;
use crate::output::{Line, Shown};
use crate::instance_id;

/// The image's key generator.
const SSH_KEYGEN: &CStr = c"/usr/bin/ssh-keygen";
/// Dropbear's, in an image without OpenSSH.
const DROPBEARKEY: &CStr = c"/usr/bin/dropbearkey";
/// `$TINY_CLOUD_VAR/.ssh-host-keys`: the instance whose host keys were made, so that a
/// rerun on the same instance keeps them (and the fingerprints its owner has seen).
use wisp_core::state_files::SSH_HOST_KEYS_DONE as DONE_FILE;
/// Most host key files in /etc/ssh handled.
const FILES_LIMIT: usize = 16;

#[inline(never)]
pub fn set_ssh_host_keys(ctx: &mut Context<'_>, var: &Dir, config: Option<&CloudConfig<'_>>) -> Result<Line, Line> {
    let mut id_buf = [0u8; instance_id::INSTANCE_ID_LIMIT];
    let instance_id = instance_id::saved(var, &mut id_buf).unwrap_or(b"");
    if !instance_id.is_empty() && var.has_contents(DONE_FILE, instance_id).unwrap_or(false) {
        return Ok(msg!("already made for this instance"));
    }
    let empty = CloudConfig::default();
    let config = config.unwrap_or(&empty);
    let delete = config.flag("ssh_deletekeys", true)?;
    let given = config.value("ssh_keys");
    let mut types: heapless::Vec<&str, 4> = heapless::Vec::new();
    match config.value("ssh_genkeytypes") {
        Some(list) => {
            for item in list.items() {
                let name = cloud_config::text("ssh_genkeytypes", item)?;
                match KNOWN_TYPES.iter().find(|&&known| known == name) {
                    Some(known) if !types.contains(known) => drop(types.push(known)),
                    Some(_) => {}
                    None => return Err(cloud_config::error("ssh_genkeytypes", item, "not rsa, ecdsa, ed25519 or dsa").into()),
                }
            }
        }
        None => types.extend(DEFAULT_TYPES),
    }
    let has_keygen = matches!(fs::metadata(ctx.path(SSH_KEYGEN.to_bytes())?.as_cstr()), Ok(Some(m)) if m.is_file());
    if !has_keygen && given.is_none() {
        if !matches!(fs::metadata(ctx.path(DROPBEARKEY.to_bytes())?.as_cstr()), Ok(Some(m)) if m.is_file()) {
            return Ok(msg!("no /usr/bin/ssh-keygen or dropbearkey in the image: its host keys are left as they are"));
        }
        let (made, printed) = dropbear_keys(ctx, var, delete, &types)?;
        mark_done(var, instance_id)?;
        return Ok(msg!("dropbear: {made} made, {printed} fingerprints printed, the image's removed: {delete}"));
    }
    let etc_ssh = ctx.create_dir(b"/etc/ssh")?;
    let os_error = |e| crate::output::os_error("/etc/ssh", e);
    if delete {
        for name in host_key_files(&etc_ssh, ssh_host_keys::is_host_key_file)? {
            etc_ssh.remove(name.as_bytes()).map_err(os_error)?;
        }
    }
    let mut made = 0;
    if let Some(given) = given {
        // As cloud-init: the given keys, a public key made from each private one given
        // alone, each certificate presented by sshd; nothing else is generated.
        for (name, key) in given.entries() {
            let entry = cloud_config::text("ssh_keys", name)?;
            let unknown = cloud_config::error("ssh_keys", name, "not <rsa|ecdsa|ed25519|dsa>_<private|public|certificate>");
            let (file, mode) = ssh_host_keys::given_key_file(entry).ok_or(unknown)?;
            let text = cloud_config::text("ssh_keys", key)?;
            etc_ssh.write_atomic(file.as_bytes(), text.as_bytes(), mode, None).map_err(os_error)?;
            if entry.ends_with("_certificate") {
                let mut path = [0u8; 64];
                let mut out = wisp_core::out::Out::new(&mut path);
                let _ = out.put_all(&[b"/etc/ssh/", file.as_bytes()]);
                let len = out.len();
                crate::sshd::set_option(ctx, "HostCertificate", core::str::from_utf8(&path[..len]).unwrap_or(""))?;
            }
        }
        for key_type in KNOWN_TYPES.iter().filter(|_| has_keygen) {
            let (private, public) = (entry_name(key_type, "_private"), entry_name(key_type, "_public"));
            if given.get(&private).is_none() || given.get(&public).is_some() {
                continue;
            }
            let files = (ssh_host_keys::given_key_file(&private), ssh_host_keys::given_key_file(&public));
            if let (Some((private, _)), Some((public, _))) = files {
                derive_public(ctx, &etc_ssh, &private, &public)?;
                made += 1;
            }
        }
    } else {
        for key_type in types.iter().filter(|_| has_keygen) {
            let mut path = [0u8; 64];
            let mut out = wisp_core::out::Out::new(&mut path);
            let _ = out.put_all(&[b"/etc/ssh/ssh_host_", key_type.as_bytes(), b"_key"]);
            let len = out.len();
            let target = ctx.path(&path[..len])?;
            if !matches!(fs::metadata(target.as_cstr()), Ok(None)) {
                continue;
            }
            let inside = inside_root(&path[..len])?;
            generate(ctx, &[c"-q", c"-t", type_arg(key_type)?.as_cstr(), c"-N", c"", c"-f", inside.as_cstr()], None)?;
            made += 1;
        }
    }
    let printed = print_fingerprints(ctx, &etc_ssh)?;
    mark_done(var, instance_id)?;
    Ok(msg!("{made} made, {printed} fingerprints printed, the image's removed: {delete}"))
}

/// A short path from its pieces (a piece that does not fit is left out, and the path is
/// then not found).
fn joined(parts: &[&[u8]]) -> heapless::Vec<u8, 96> {
    let mut path = heapless::Vec::new();
    for part in parts {
        let _ = path.extend_from_slice(part);
    }
    path
}

fn mark_done(var: &Dir, instance_id: &[u8]) -> Result<(), Line> {
    if instance_id.is_empty() {
        return Ok(());
    }
    var.write_atomic(DONE_FILE, instance_id, 0o644, None).map_err(|e| crate::output::os_error(".ssh-host-keys", e))
}

/// Dropbear's host keys (`/etc/dropbear/dropbear_TYPE_host_key`), for an image with
/// dropbear and no OpenSSH: removed when `delete`, the missing `types` made with its
/// `dropbearkey -t TYPE -f FILE`, and each one's fingerprint printed from the public key
/// `dropbearkey -y` shows (caught in a scratch file in TINY_CLOUD_VAR).
fn dropbear_keys(ctx: &mut Context<'_>, var: &Dir, delete: bool, types: &[&str]) -> Result<(usize, usize), Line> {
    let dir = ctx.create_dir(b"/etc/dropbear")?;
    let is_key = |name: &[u8]| name.starts_with(b"dropbear_") && name.ends_with(b"_host_key");
    if delete {
        for name in host_key_files(&dir, is_key)? {
            dir.remove(name.as_bytes()).map_err(|e| crate::output::os_error("/etc/dropbear", e))?;
        }
    }
    let mut made = 0;
    for &key_type in types {
        let key_type = if key_type == "dsa" { "dss" } else { key_type };
        let file = entry_name("dropbear_", key_type);
        let mut name = heapless::String::<40>::new();
        let _ = name.push_str(&file);
        let _ = name.push_str("_host_key");
        if dir.metadata(name.as_bytes()).map_err(|e| crate::output::os_error("/etc/dropbear", e))?.is_some() {
            continue;
        }
        let target = inside_root(&joined(&[b"/etc/dropbear/", name.as_bytes()]))?;
        run_dropbearkey(ctx, &[c"-t", type_arg(key_type)?.as_cstr(), c"-f", target.as_cstr()], None)?;
        made += 1;
    }
    let files = host_key_files(&dir, is_key)?;
    ctx.log.line(format_args!("{BEGIN_FINGERPRINTS}"));
    for name in &files {
        let target = inside_root(&joined(&[b"/etc/dropbear/", name.as_bytes()]))?;
        let scratch = var.create_truncate(SCRATCH, 0o600).map_err(|e| crate::output::os_error(".host-key-public", e))?;
        run_dropbearkey(ctx, &[c"-y", c"-f", target.as_cstr()], Some(scratch.as_fd()))?;
        let mut shown = [0u8; 2 * ssh_host_keys::BLOB_LIMIT];
        let len = var.read(SCRATCH, &mut shown).ok().flatten().unwrap_or(0);
        let _ = var.remove(SCRATCH);
        // "Public key portion is:", then the key line, then dropbear's own fingerprint.
        let public = shown[..len].split(|&b| b == b'\n').nth(1).unwrap_or(b"");
        print_fingerprint(ctx, name, public);
    }
    ctx.log.line(format_args!("{END_FINGERPRINTS}"));
    Ok((made, files.len()))
}

/// Where `dropbearkey -y`'s answer is caught.
const SCRATCH: &[u8] = b".host-key-public";

/// The image's dropbearkey with `args`: the one place wisp runs it.
fn run_dropbearkey(ctx: &Context<'_>, args: &[&CStr], output: Option<BorrowedFd<'_>>) -> Result<(), Line> {
    let mut argv: heapless::Vec<&CStr, 8> = heapless::Vec::new();
    let _ = argv.push(c"dropbearkey");
    let _ = argv.extend_from_slice(args);
    let output = output.unwrap_or(wisp_os_linux::stdio::stderr());
    // Run chrooted into the root: the program and its files by their paths inside it.
    match crate::scripts::execute(ctx, DROPBEARKEY, &argv, None, output)? {
        ExitStatus::Exited(0) => Ok(()),
        _ => Err(msg!("/usr/bin/dropbearkey {} failed", Shown(argv.last().map_or(&b""[..], |a| a.to_bytes())))),
    }
}

/// An `ssh_keys` entry's name: `rsa` and `_private` make `rsa_private`.
fn entry_name(key_type: &str, part: &str) -> heapless::String<24> {
    let mut name = heapless::String::new();
    let _ = name.push_str(key_type);
    let _ = name.push_str(part);
    name
}

/// A path as the programs wisp runs see it: chrooted into `--root`, the root is `/`.
fn inside_root(path: &[u8]) -> Result<CPath, Line> {
    CPath::from_parts(&[path]).map_err(crate::output::line)
}

fn type_arg(key_type: &str) -> Result<CPath, Line> {
    CPath::from_parts(&[key_type.as_bytes()]).map_err(crate::output::line)
}

/// `ssh-keygen -y -f PRIVATE > PUBLIC`, as cloud-init makes a public key it was not given.
fn derive_public(ctx: &Context<'_>, etc_ssh: &Dir, private: &str, public: &str) -> Result<(), Line> {
    let mut path = [0u8; 64];
    let mut out = wisp_core::out::Out::new(&mut path);
    let _ = out.put_all(&[b"/etc/ssh/", private.as_bytes()]);
    let len = out.len();
    let private_path = inside_root(&path[..len])?;
    let output = etc_ssh.create_truncate(public.as_bytes(), 0o644).map_err(|e| crate::output::os_error("/etc/ssh", e))?;
    generate(ctx, &[c"-y", c"-f", private_path.as_cstr()], Some(output.as_fd()))
}

/// The image's key generator with `args`, its output to `output` (else standard error):
/// the one place wisp runs it (the binary and its files both under --root).
fn generate(ctx: &Context<'_>, args: &[&CStr], output: Option<BorrowedFd<'_>>) -> Result<(), Line> {
    let mut argv: heapless::Vec<&CStr, 8> = heapless::Vec::new();
    let _ = argv.push(c"ssh-keygen");
    let _ = argv.extend_from_slice(args);
    let output = output.unwrap_or(wisp_os_linux::stdio::stderr());
    // Run chrooted into the root: the program and its files by their paths inside it.
    match crate::scripts::execute(ctx, SSH_KEYGEN, &argv, None, output)? {
        ExitStatus::Exited(0) => Ok(()),
        _ => Err(msg!("/usr/bin/ssh-keygen {} failed", Shown(argv.last().map_or(&b""[..], |a| a.to_bytes())))),
    }
}

/// Each public host key's fingerprint between cloud-init's BEGIN and END lines, in file
/// name order (as the shell's glob lists them).
#[inline(never)]
fn print_fingerprints(ctx: &mut Context<'_>, etc_ssh: &Dir) -> Result<usize, Line> {
    let files = host_key_files(etc_ssh, ssh_host_keys::is_public_host_key_file)?;
    ctx.log.line(format_args!("{BEGIN_FINGERPRINTS}"));
    for name in &files {
        let mut text = [0u8; 2 * ssh_host_keys::BLOB_LIMIT];
        let len = etc_ssh.read(name.as_bytes(), &mut text).ok().flatten().unwrap_or(0);
        print_fingerprint(ctx, name, &text[..len]);
    }
    ctx.log.line(format_args!("{END_FINGERPRINTS}"));
    Ok(files.len())
}

/// One key's line: its fingerprint, or why there is none.
fn print_fingerprint(ctx: &mut Context<'_>, name: &str, public_key: &[u8]) {
    let mut line = [0u8; 512];
    let mut out = wisp_core::out::Out::new(&mut line);
    match ssh_host_keys::fingerprint(public_key, &mut out) {
        Ok(()) => {
            let len = out.len();
            ctx.log.line(format_args!("{}", Shown(&line[..len])));
        }
        Err(e) => ctx.log.line(format_args!("{name}: {e}")),
    }
}

fn host_key_files(etc_ssh: &Dir, wanted: impl Fn(&[u8]) -> bool) -> Result<heapless::Vec<heapless::String<64>, FILES_LIMIT>, Line> {
    let mut files: heapless::Vec<heapless::String<64>, FILES_LIMIT> = heapless::Vec::new();
    let mut overflow = false;
    etc_ssh
        .for_each_entry(|name| {
            if wanted(name) {
                let name = core::str::from_utf8(name).ok().and_then(|n| heapless::String::try_from(n).ok());
                overflow |= name.is_none_or(|name| files.push(name).is_err());
            }
        })
        .map_err(|e| crate::output::os_error("/etc/ssh", e))?;
    if overflow {
        return Err(msg!("/etc/ssh: more than {FILES_LIMIT} host key files, or a name that is not UTF-8"));
    }
    files.sort_unstable();
    Ok(files)
}
