//! Fresh SSH host keys for each new instance, as cloud-init's `ssh` module makes them
//! (`ssh_deletekeys`, `ssh_genkeytypes`, `ssh_keys`), and their fingerprints on the
//! console as its `keys_to_console` prints them, so that the first connection can be
//! checked against the cloud's serial log. wisp generates no keys itself: the image's
//! `ssh-keygen` (or dropbear's `dropbearkey`) does. Which files are keys, and the
//! fingerprint lines, are `ssh_host_keys`' rules.

use core::ffi::CStr;

use crate::cloud_config::{self, CloudConfig};
use crate::host::commands::{Commands, Output, RunError};
use crate::host::files::Files;
use crate::host::messages::Messages;
use crate::host::room::Room;
use crate::out::Out;
use crate::ssh_host_keys::{self, DEFAULT_TYPES, KNOWN_TYPES};
use crate::state_files::SSH_HOST_KEYS_DONE as DONE_FILE;
use crate::system_files::{self, joined};
use crate::text::{Decimal, Plain};
use crate::yaml::NodeRef;

/// The image's key generator.
const SSH_KEYGEN: &CStr = c"/usr/bin/ssh-keygen";
/// Dropbear's, in an image without OpenSSH.
const DROPBEARKEY: &CStr = c"/usr/bin/dropbearkey";
/// Most host key files in /etc/ssh handled.
const FILES_LIMIT: usize = 16;
// Its message names it as a literal, not a number formatted.
const _: () = assert!(FILES_LIMIT == 16);
/// Where `dropbearkey -y`'s answer is caught, in TINY_CLOUD_VAR.
const SCRATCH: &[u8] = b".host-key-public";
/// Longest path handled here (TINY_CLOUD_VAR's files included).
const PATH_LIMIT: usize = 256;

type Names = heapless::Vec<heapless::String<64>, FILES_LIMIT>;

/// The host keys of the instance `instance_id` (empty when unknown), remembered in
/// `var_dir` (TINY_CLOUD_VAR) so that a rerun on the same instance keeps them, and the
/// fingerprints its owner has seen.
pub fn set_ssh_host_keys<H: Files + Messages + Commands + Room>(host: &mut H, var_dir: &[u8], instance_id: &[u8], config: Option<&CloudConfig<'_>>) -> Result<H::Text, H::Text> {
    let mut done_path = [0u8; PATH_LIMIT];
    let done_path = joined(&mut done_path, &[var_dir, b"/", DONE_FILE]);
    if !instance_id.is_empty() && system_files::has_contents(host, done_path, instance_id, &mut [0u8; PATH_LIMIT + 1]) {
        return Ok(host.text(format_args!("already made for this instance")));
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
                match KNOWN_TYPES.split(' ').find(|&known| known == name) {
                    Some(known) if !types.contains(&known) => drop(types.push(known)),
                    Some(_) => {}
                    None => return Err(cloud_config::error("ssh_genkeytypes", item, cloud_config::Problem::UnknownKeyType).into()),
                }
            }
        }
        None => types.extend(KNOWN_TYPES.split(' ').take(DEFAULT_TYPES)),
    }
    let has_keygen = host.has_program(SSH_KEYGEN.to_bytes());
    let (flavour, (made, printed)) = if !has_keygen && given.is_none() {
        if !host.has_program(DROPBEARKEY.to_bytes()) {
            return Ok(host.text(format_args!("no /usr/bin/ssh-keygen or dropbearkey in the image: its host keys are left as they are")));
        }
        ("dropbear: ", dropbear_keys(host, var_dir, delete, &types)?)
    } else {
        ("", openssh_keys(host, delete, given, &types, has_keygen)?)
    };
    mark_done(host, done_path, instance_id)?;
    let removed = if delete { "true" } else { "false" };
    Ok(host.text(format_args!("{}{} made, {} fingerprints printed, the image's removed: {}", Plain(flavour), Decimal(made as u64), Decimal(printed as u64), Plain(removed))))
}

/// OpenSSH's host keys in /etc/ssh: the image's removed when `delete`; the `given` ones
/// written, or the missing `types` made when the image has ssh-keygen (`has_keygen`).
/// The number made, and of fingerprints printed.
fn openssh_keys<H: Files + Messages + Commands + Room>(host: &mut H, delete: bool, given: Option<NodeRef<'_>>, types: &[&str], has_keygen: bool) -> Result<(usize, usize), H::Text> {
    system_files::make_dir(host, b"/etc/ssh")?;
    if delete {
        remove_keys(host, b"/etc/ssh", ssh_host_keys::is_host_key_file)?;
    }
    let mut made = 0;
    if let Some(given) = given {
        // As cloud-init: the given keys, a public key made from each private one given
        // alone, each certificate presented by sshd; nothing else is generated.
        for (name, key) in given.entries() {
            let entry = cloud_config::text("ssh_keys", name)?;
            let unknown = cloud_config::error("ssh_keys", name, cloud_config::Problem::UnknownKeyName);
            let (file, mode) = ssh_host_keys::given_key_file(entry).ok_or(unknown)?;
            let text = cloud_config::text("ssh_keys", key)?;
            let mut path = [0u8; PATH_LIMIT];
            let path = joined(&mut path, &[b"/etc/ssh/", file.as_bytes()]);
            host.write(path, text.as_bytes(), mode, None).map_err(|e| system_files::call_failed(host, b"/etc/ssh", e))?;
            if entry.ends_with("_certificate") {
                crate::sshd::set_option(host, "HostCertificate", core::str::from_utf8(path).unwrap_or(""))?;
            }
        }
        for key_type in KNOWN_TYPES.split(' ').filter(|_| has_keygen) {
            let (private, public) = (entry_name(key_type, "_private"), entry_name(key_type, "_public"));
            if given.get(&private).is_none() || given.get(&public).is_some() {
                continue;
            }
            derive_public(host, key_type)?;
            made += 1;
        }
    } else {
        for key_type in types.iter().filter(|_| has_keygen) {
            let mut path = [0u8; 64];
            let path = c_string(host, &mut path, &[b"/etc/ssh/ssh_host_", key_type.as_bytes(), b"_key"])?;
            if !matches!(host.metadata(path.to_bytes()), Ok(None)) {
                continue;
            }
            let mut type_arg = [0u8; 16];
            let type_arg = c_string(host, &mut type_arg, &[key_type.as_bytes()])?;
            run(host, SSH_KEYGEN, &[c"ssh-keygen", c"-q", c"-t", type_arg, c"-N", c"", c"-f", path], Output::StandardError, b"")?;
            made += 1;
        }
    }
    let printed = print_fingerprints(host, b"/etc/ssh", ssh_host_keys::is_public_host_key_file, None)?;
    Ok((made, printed))
}

fn mark_done<H: Files + Messages>(host: &mut H, done_path: &[u8], instance_id: &[u8]) -> Result<(), H::Text> {
    if instance_id.is_empty() {
        return Ok(());
    }
    host.write(done_path, instance_id, 0o644, None).map_err(|e| system_files::call_failed(host, b".ssh-host-keys", e))
}

/// Dropbear's host keys (`/etc/dropbear/dropbear_TYPE_host_key`), for an image with
/// dropbear and no OpenSSH: removed when `delete`, the missing `types` made with its
/// `dropbearkey -t TYPE -f FILE`, and each one's fingerprint printed from the public key
/// `dropbearkey -y` shows (caught in a scratch file in TINY_CLOUD_VAR).
fn dropbear_keys<H: Files + Messages + Commands>(host: &mut H, var_dir: &[u8], delete: bool, types: &[&str]) -> Result<(usize, usize), H::Text> {
    let directory = b"/etc/dropbear";
    system_files::make_dir(host, directory)?;
    if delete {
        remove_keys(host, directory, ssh_host_keys::is_dropbear_key_file)?;
    }
    let mut made = 0;
    for &key_type in types {
        let key_type = if key_type == "dsa" { "dss" } else { key_type };
        let mut path = [0u8; 64];
        let path = c_string(host, &mut path, &[b"/etc/dropbear/dropbear_", key_type.as_bytes(), b"_host_key"])?;
        if host.metadata(path.to_bytes()).map_err(|e| system_files::call_failed(host, directory, e))?.is_some() {
            continue;
        }
        let mut type_arg = [0u8; 16];
        let type_arg = c_string(host, &mut type_arg, &[key_type.as_bytes()])?;
        run(host, DROPBEARKEY, &[c"dropbearkey", c"-t", type_arg, c"-f", path], Output::StandardError, b"")?;
        made += 1;
    }
    let mut scratch = [0u8; PATH_LIMIT];
    let scratch = joined(&mut scratch, &[var_dir, b"/", SCRATCH]);
    let printed = print_fingerprints(host, directory, ssh_host_keys::is_dropbear_key_file, Some(scratch))?;
    Ok((made, printed))
}

/// Removes the host key files (`wanted`) of `directory`.
fn remove_keys<H: Files + Messages>(host: &mut H, directory: &[u8], wanted: fn(&[u8]) -> bool) -> Result<(), H::Text> {
    for name in &host_key_files(host, directory, wanted)? {
        let mut path = [0u8; PATH_LIMIT];
        host.remove(joined(&mut path, &[directory, b"/", name.as_bytes()])).map_err(|e| system_files::call_failed(host, directory, e))?;
    }
    Ok(())
}

/// An `ssh_keys` entry's name: `rsa` and `_private` make `rsa_private`.
fn entry_name(key_type: &str, part: &str) -> heapless::String<24> {
    let mut name = heapless::String::new();
    let _ = name.push_str(key_type);
    let _ = name.push_str(part);
    name
}

/// `parts` joined, as a C string in `buf`.
fn c_string<'b, H: Messages>(host: &H, buf: &'b mut [u8], parts: &[&[u8]]) -> Result<&'b CStr, H::Text> {
    let len = joined(buf, parts).len();
    let limit = buf.len();
    let text = buf.get_mut(..len + 1).ok_or_else(|| host.text(format_args!("a path longer than {} bytes", Decimal(limit as u64))))?;
    text[len] = 0;
    CStr::from_bytes_with_nul(text).map_err(|_| host.text(format_args!("{}: holds a NUL byte", H::shown(&text[..len]))))
}

/// `ssh-keygen -y -f PRIVATE > PUBLIC` for the `key_type` key (the files
/// `ssh_keys`' `TYPE_private` and `TYPE_public` name), as cloud-init makes a public key
/// it was not given.
fn derive_public<H: Files + Messages + Commands>(host: &mut H, key_type: &str) -> Result<(), H::Text> {
    let mut private_path = [0u8; 64];
    let private_path = c_string(host, &mut private_path, &[b"/etc/ssh/ssh_host_", key_type.as_bytes(), b"_key"])?;
    let mut public_path = [0u8; 64];
    let public_path = joined(&mut public_path, &[private_path.to_bytes(), b".pub"]);
    run(host, SSH_KEYGEN, &[c"ssh-keygen", c"-y", c"-f", private_path], Output::File(public_path, 0o644), b"/etc/ssh")
}

/// The image's `program` with `args` (`args[0]` its name): the one place wisp runs a
/// key program (chrooted into the root, its files by their paths inside it).
fn run<H: Messages + Commands>(host: &mut H, program: &CStr, args: &[&CStr], output: Output<'_>, output_what: &[u8]) -> Result<(), H::Text> {
    match host.run(program, args, output) {
        Ok(true) => Ok(()),
        Ok(false) => {
            let last = args.last().map_or(&b""[..], |a| a.to_bytes());
            Err(host.text(format_args!("{} {} failed", H::shown(program.to_bytes()), H::shown(last))))
        }
        Err(RunError::Output(e)) => Err(system_files::call_failed(host, output_what, e)),
        Err(RunError::Run(e)) => Err(host.text(format_args!("{}", H::reason(e)))),
    }
}

/// Each host key's fingerprint between cloud-init's BEGIN and END lines, in file name
/// order (as the shell's glob lists them): of the public key files (`wanted`) of
/// `directory`, or with a `scratch` file, of dropbear's keys, whose public key
/// `dropbearkey -y` shows (caught in `scratch`). The number printed.
fn print_fingerprints<H: Files + Messages + Commands>(host: &mut H, directory: &[u8], wanted: fn(&[u8]) -> bool, scratch: Option<&[u8]>) -> Result<usize, H::Text> {
    let files = host_key_files(host, directory, wanted)?;
    host.log(format_args!(ssh_host_keys::begin_fingerprints!()));
    for name in &files {
        let mut text = [0u8; 2 * ssh_host_keys::BLOB_LIMIT];
        let mut path = [0u8; PATH_LIMIT];
        let path = c_string(host, &mut path, &[directory, b"/", name.as_bytes()])?;
        let public = match scratch {
            None => {
                let len = system_files::read_file_itself(host, path.to_bytes(), &mut text).ok().flatten().unwrap_or(0);
                &text[..len]
            }
            Some(scratch) => {
                run(host, DROPBEARKEY, &[c"dropbearkey", c"-y", c"-f", path], Output::File(scratch, 0o600), SCRATCH)?;
                let len = system_files::read_file_itself(host, scratch, &mut text).ok().flatten().unwrap_or(0);
                let _ = host.remove(scratch);
                // "Public key portion is:", then the key line, then dropbear's own fingerprint.
                text[..len].split(|&b| b == b'\n').nth(1).unwrap_or(b"")
            }
        };
        print_fingerprint(host, name, public);
    }
    host.log(format_args!(ssh_host_keys::end_fingerprints!()));
    Ok(files.len())
}

/// One key's line: its fingerprint, or why there is none.
fn print_fingerprint<H: Messages>(host: &H, name: &str, public_key: &[u8]) {
    let mut line = [0u8; 512];
    let mut out = Out::new(&mut line);
    match ssh_host_keys::fingerprint(public_key, &mut out) {
        Ok(()) => {
            let len = out.len();
            host.log(format_args!("{}", H::shown(&line[..len])));
        }
        Err(e) => host.log(format_args!("{}: {e}", Plain(name))),
    }
}

/// The names in `directory` that are `wanted`, sorted.
fn host_key_files<H: Files + Messages>(host: &mut H, directory: &[u8], wanted: fn(&[u8]) -> bool) -> Result<Names, H::Text> {
    let mut files = Names::new();
    let mut overflow = false;
    host.list(directory, &mut |name| {
        if wanted(name) {
            let name = core::str::from_utf8(name).ok().and_then(|n| heapless::String::try_from(n).ok());
            overflow |= name.is_none_or(|name| files.push(name).is_err());
        }
    })
    .map_err(|e| system_files::call_failed(host, b"/etc/ssh", e))?;
    if overflow {
        return Err(host.text(format_args!("/etc/ssh: more than 16 host key files, or a name that is not UTF-8")));
    }
    // By insertion: at most FILES_LIMIT names, and core's sort_unstable is 2 KB of code.
    for sorted in 1..files.len() {
        let mut at = sorted;
        while at > 0 && files[at - 1] > files[at] {
            files.swap(at - 1, at);
            at -= 1;
        }
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::memory::{MemoryHost, MemorySystem};
    use crate::users::tests::with_config;
    use std::vec::Vec;

    const PUBLIC: &str = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIP6zWIGFsiIt1uW2eXmASHnCRo/IiaNJBUNBBBA8SwbT alice@laptop\n";
    const FINGERPRINT: &str = "256 SHA256:3JdLwnW/DRQgX92499FE0PVFFuuRQx+z60vPzkbMgt4 alice@laptop (ED25519)";

    /// ssh-keygen as the tests need it: `-f PATH` makes PATH and PATH.pub, `-y` prints
    /// the public key.
    fn ssh_keygen(host: &mut MemoryHost, args: &[&[u8]]) -> Option<Vec<u8>> {
        let path = *args.last()?;
        if args.contains(&&b"-y"[..]) {
            return Some(PUBLIC.as_bytes().to_vec());
        }
        host.write(path, b"PRIVATE", 0o600, None).ok()?;
        host.write(&[path, b".pub"].concat(), PUBLIC.as_bytes(), 0o644, None).ok()?;
        Some(Vec::new())
    }

    fn image() -> MemorySystem {
        let mut host = MemorySystem::new(MemoryHost::new())
            .with_dir("/etc", (0, 0))
            .with_dir("/etc/ssh", (0, 0))
            .with_dir("/var/lib/cloud", (0, 0))
            .with_file("/etc/ssh/ssh_host_rsa_key", "IMAGE'S")
            .with_file("/etc/ssh/ssh_host_rsa_key.pub", "IMAGE'S")
            .with_file("/etc/ssh/sshd_config", "Port 22\n");
        host.programs.push((b"/usr/bin/ssh-keygen".to_vec(), ssh_keygen));
        host
    }

    fn lines(host: &MemorySystem) -> Vec<std::string::String> {
        host.said.borrow().clone()
    }

    #[test]
    fn a_new_instance_gets_new_keys_once_and_their_fingerprints_on_the_console() {
        let mut host = image();
        let said = set_ssh_host_keys(&mut host, b"/var/lib/cloud", b"i-1", None).unwrap();
        assert_eq!(said, "3 made, 3 fingerprints printed, the image's removed: true");
        assert_eq!(host.contents("/etc/ssh/ssh_host_rsa_key"), Some("PRIVATE"));
        assert!(host.contents("/etc/ssh/ssh_host_ed25519_key.pub").is_some());
        assert_eq!(host.runs[0], "ssh-keygen -q -t rsa -N  -f /etc/ssh/ssh_host_rsa_key");
        let printed = lines(&host);
        assert_eq!(printed.first().map(std::string::String::as_str), Some(ssh_host_keys::begin_fingerprints!()));
        assert_eq!(printed[1..4], [FINGERPRINT, FINGERPRINT, FINGERPRINT]);
        assert_eq!(printed.last().map(std::string::String::as_str), Some(ssh_host_keys::end_fingerprints!()));
        assert_eq!(host.contents("/var/lib/cloud/.ssh-host-keys"), Some("i-1"));
        // The same instance again: its keys are kept.
        assert_eq!(set_ssh_host_keys(&mut host, b"/var/lib/cloud", b"i-1", None).unwrap(), "already made for this instance");
        assert_eq!(host.runs.len(), 3);
    }

    #[test]
    fn genkeytypes_and_keeping_the_images_keys() {
        with_config("ssh_deletekeys: false\nssh_genkeytypes: [ed25519, rsa]\n", |config| {
            let mut host = image();
            let said = set_ssh_host_keys(&mut host, b"/var/lib/cloud", b"i-1", Some(config)).unwrap();
            // The image's rsa key stays, and is not made again.
            assert_eq!(said, "1 made, 2 fingerprints printed, the image's removed: false");
            assert_eq!(host.contents("/etc/ssh/ssh_host_rsa_key"), Some("IMAGE'S"));
            assert!(lines(&host).contains(&"ssh_host_rsa_key.pub: not an OpenSSH public key".into()));
        });
        with_config("ssh_genkeytypes: [ed25519, rsa1]\n", |config| {
            let e = set_ssh_host_keys(&mut image(), b"/var/lib/cloud", b"i-1", Some(config)).unwrap_err();
            assert!(e.contains("ssh_genkeytypes: not rsa, ecdsa, ed25519 or dsa"), "{e}");
        });
    }

    #[test]
    fn given_keys_are_written_with_their_modes_and_a_missing_public_one_derived() {
        with_config("ssh_keys:\n  ed25519_private: SECRET\n  rsa_certificate: CERT\n", |config| {
            let mut host = image();
            let said = set_ssh_host_keys(&mut host, b"/var/lib/cloud", b"i-1", Some(config)).unwrap();
            assert_eq!(said, "1 made, 1 fingerprints printed, the image's removed: true");
            assert_eq!(host.contents("/etc/ssh/ssh_host_ed25519_key"), Some("SECRET"));
            assert_eq!(host.meta("/etc/ssh/ssh_host_ed25519_key").mode, 0o600);
            assert_eq!(host.contents("/etc/ssh/ssh_host_ed25519_key.pub"), Some(PUBLIC));
            assert_eq!(host.runs, ["ssh-keygen -y -f /etc/ssh/ssh_host_ed25519_key"]);
            assert_eq!(host.contents("/etc/ssh/sshd_config"), Some("Port 22\nHostCertificate /etc/ssh/ssh_host_rsa_key-cert.pub\n"));
            assert!(host.contents("/etc/ssh/ssh_host_rsa_key").is_none());
        });
        with_config("ssh_keys:\n  ed25519_secret: X\n", |config| {
            let e = set_ssh_host_keys(&mut image(), b"/var/lib/cloud", b"i-1", Some(config)).unwrap_err();
            assert!(e.contains("ssh_keys: not <rsa|ecdsa|ed25519|dsa>_<private|public|certificate>"), "{e}");
        });
    }

    #[test]
    fn without_a_key_program_the_images_keys_are_left_alone() {
        let mut host = image();
        host.programs.clear();
        let said = set_ssh_host_keys(&mut host, b"/var/lib/cloud", b"i-1", None).unwrap();
        assert_eq!(said, "no /usr/bin/ssh-keygen or dropbearkey in the image: its host keys are left as they are");
        assert_eq!(host.contents("/etc/ssh/ssh_host_rsa_key"), Some("IMAGE'S"));
    }

    #[test]
    fn a_failing_keygen_fails_the_action_naming_the_key() {
        let mut host = image();
        host.programs[0].1 = |_, _| None;
        let e = set_ssh_host_keys(&mut host, b"/var/lib/cloud", b"i-1", None).unwrap_err();
        assert_eq!(e, "/usr/bin/ssh-keygen /etc/ssh/ssh_host_rsa_key failed");
        assert!(host.contents("/var/lib/cloud/.ssh-host-keys").is_none());
    }

    #[test]
    fn dropbear_images_get_dropbear_keys() {
        fn dropbearkey(host: &mut MemoryHost, args: &[&[u8]]) -> Option<Vec<u8>> {
            if args[1] == b"-y" {
                return Some(std::format!("Public key portion is:\n{PUBLIC}Fingerprint: sha1!! ...\n").into_bytes());
            }
            host.write(args.last()?, b"KEY", 0o600, None).ok()?;
            Some(Vec::new())
        }
        let mut host = MemorySystem::new(MemoryHost::new())
            .with_dir("/etc", (0, 0))
            .with_dir("/etc/dropbear", (0, 0))
            .with_dir("/var/lib/cloud", (0, 0))
            .with_file("/etc/dropbear/dropbear_rsa_host_key", "IMAGE'S");
        host.programs.push((b"/usr/bin/dropbearkey".to_vec(), dropbearkey));
        with_config("ssh_genkeytypes: [ed25519, dsa]\n", |config| {
            let said = set_ssh_host_keys(&mut host, b"/var/lib/cloud", b"i-1", Some(config)).unwrap();
            assert_eq!(said, "dropbear: 2 made, 2 fingerprints printed, the image's removed: true");
        });
        assert!(host.contents("/etc/dropbear/dropbear_rsa_host_key").is_none());
        assert_eq!(host.contents("/etc/dropbear/dropbear_dss_host_key"), Some("KEY"));
        assert_eq!(lines(&host)[1..3], [FINGERPRINT, FINGERPRINT]);
        // The scratch file is gone.
        assert!(host.contents("/var/lib/cloud/.host-key-public").is_none());
    }
}
