//! `wisp clean`: what an image builder removes before capturing an image, so that the
//! image's next boot is a first boot (cloud-init's `clean`, tiny-cloud's "remove
//! .bootstrap-complete"). Only what wisp writes goes: an image's `seed/` directory, or
//! anything else it keeps in TINY_CLOUD_VAR, stays. What is already gone counts as
//! removed, so a clean cut short is finished by running it again.

use core::fmt::{self, Display};

use crate::completion;
use crate::host::directory::Directory;
use crate::host::explain::{ErrnoWords, Explain};
use crate::host::files::Files;
use crate::host::tree::Tree;
use crate::host::HostError;
use crate::state_files::*;
use crate::text::Shown;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// `--logs`: wisp's log, and the scripts' output and exit status.
    pub logs: bool,
    /// `--ssh-host-keys`: every host key pair in /etc/ssh.
    pub ssh_host_keys: bool,
    /// `--machine-id`: /etc/machine-id emptied.
    pub machine_id: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Removal {
    /// The completion marker, removed and made durable before anything else goes: a
    /// clean cut short still leaves an image that bootstraps at its next boot.
    CompletionMarker,
    /// A file or directory (and everything in it) in TINY_CLOUD_VAR.
    Var(&'static [u8]),
    /// A file in TINY_CLOUD_LOGS.
    Log(&'static [u8]),
    /// The files of `SSH_DIR` that `is_ssh_host_key` names.
    SshHostKeys,
    /// `MACHINE_ID` emptied, where it exists, as systemd's machine-id(5) asks of an image:
    /// systemd then makes a new one at boot, and so does `dbus-uuidgen --ensure`.
    EmptyMachineId,
}

pub const SSH_DIR: &[u8] = b"/etc/ssh";
/// `/etc/machine-id`, as directory and name.
pub const MACHINE_ID: (&[u8], &[u8]) = (b"/etc", b"machine-id");

/// Everything after the marker: the instance's identity, its user-data and metadata
/// (secrets: removed, not left for the next owner of the image), the markers that keep
/// per-instance and per-once work from running again; then user-data's scripts (with the
/// per-X directories: one instance's per-instance scripts must not run for the next, as
/// cloud-init's clean also decides), boothooks and includes.
const VAR_ENTRIES: [&[u8]; 14] = [
    INSTANCE_ID,
    PER_INSTANCE_DONE,
    PER_ONCE_DONE,
    AZURE_REPORTED,
    SSH_HOST_KEYS_DONE,
    AUTODETECT,
    USER_DATA,
    META_DATA,
    VENDOR_DATA,
    NETWORK_CONFIG,
    SCRIPTS_DIR,
    BOOTHOOKS_DIR,
    INCLUDES_DIR,
    SEM_DIR,
];
const LOG_FILES: [&[u8]; 3] = [LOG, USER_DATA_LOG, USER_DATA_EXIT];

/// Most removals one clean makes.
pub const PLAN_LIMIT: usize = 1 + VAR_ENTRIES.len() + LOG_FILES.len() + 2;

/// What to remove, in order.
pub fn plan(options: Options) -> heapless::Vec<Removal, PLAN_LIMIT> {
    let mut plan = heapless::Vec::new();
    // Within PLAN_LIMIT by its definition.
    let _ = plan.push(Removal::CompletionMarker);
    for name in VAR_ENTRIES {
        let _ = plan.push(Removal::Var(name));
    }
    if options.logs {
        for name in LOG_FILES {
            let _ = plan.push(Removal::Log(name));
        }
    }
    if options.ssh_host_keys {
        let _ = plan.push(Removal::SshHostKeys);
    }
    if options.machine_id {
        let _ = plan.push(Removal::EmptyMachineId);
    }
    plan
}

/// OpenSSH's host keys: `ssh_host_<type>_key`, its `.pub` and its `-cert.pub`. sshd's
/// configuration, moduli and the like stay.
pub fn is_ssh_host_key(name: &[u8]) -> bool {
    let Some(rest) = name.strip_prefix(b"ssh_host_") else { return false };
    let rest = rest.strip_suffix(b".pub").map_or(rest, |r| r.strip_suffix(b"-cert").unwrap_or(r));
    rest.len() > b"_key".len() && rest.ends_with(b"_key")
}

/// How deep a directory wisp wrote nests below its entry: `scripts/per-boot/NAME`.
const TREE_DEPTH_LIMIT: usize = 2;
/// Names taken from a directory per listing; the listing is repeated until nothing is left.
const NAMES_PER_PASS: usize = 16;
/// Longest path removed: TINY_CLOUD_VAR, an entry and two names below it.
pub const PATH_LIMIT: usize = 1024;
/// EISDIR: what unlink(2) says of a directory.
const IS_A_DIRECTORY: HostError = HostError { errno: 21 };
/// ENAMETOOLONG.
const NAME_TOO_LONG: HostError = HostError { errno: 36 };

/// What `clean` could not do; the marker went first whatever failed after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CleanError<'c> {
    Marker(HostError),
    /// A removal's directory and name (a pattern for the host keys), and why.
    Removal { dir: &'c [u8], name: &'c [u8], error: HostError },
    /// TINY_CLOUD_VAR's removals could not be made durable.
    Sync { dir: &'c [u8], error: HostError },
}

impl Explain for CleanError<'_> {
    fn explain(&self, f: &mut fmt::Formatter<'_>, words: ErrnoWords) -> fmt::Result {
        let (dir, name, error) = match *self {
            CleanError::Marker(error) => {
                f.write_str("cannot clear the completion marker: ")?;
                return words(error, f);
            }
            CleanError::Removal { dir, name, error } => (dir, name, error),
            CleanError::Sync { dir, error } => (dir, &b""[..], error),
        };
        Shown(dir).fmt(f)?;
        if !name.is_empty() {
            f.write_str("/")?;
            Shown(name).fmt(f)?;
        }
        f.write_str(": ")?;
        words(error, f)
    }
}

/// Removes what `plan(options)` names, in order: `var` is TINY_CLOUD_VAR open (`None`
/// when it cannot be), `var_path` and `logs_path` TINY_CLOUD_VAR and TINY_CLOUD_LOGS. A
/// directory that is not there holds nothing to remove; `var` is synced at the end.
pub fn run<'c, H: Files + Tree>(host: &mut H, mut var: Option<&mut impl Directory>, var_path: &'c [u8], logs_path: &'c [u8], options: Options) -> Result<(), CleanError<'c>> {
    for &removal in &plan(options) {
        let (dir, name): (&[u8], &[u8]) = match removal {
            Removal::CompletionMarker => {
                if let Some(var) = var.as_deref_mut() {
                    completion::clear(var).map_err(CleanError::Marker)?;
                }
                continue;
            }
            Removal::Var(name) => (var_path, name),
            Removal::Log(name) => (logs_path, name),
            Removal::SshHostKeys => (SSH_DIR, b"ssh_host_*_key*"),
            Removal::EmptyMachineId => MACHINE_ID,
        };
        if !host.is_directory(dir) {
            continue;
        }
        let result = match removal {
            Removal::SshHostKeys => remove_matching(host, dir, 0, is_ssh_host_key),
            _ => joined(dir, name).and_then(|path| match removal {
                Removal::Var(_) => remove(host, &path, TREE_DEPTH_LIMIT),
                Removal::EmptyMachineId => empty(host, &path),
                _ => remove(host, &path, 0),
            }),
        };
        result.map_err(|error| CleanError::Removal { dir, name, error })?;
    }
    match var {
        Some(var) => var.sync().map_err(|error| CleanError::Sync { dir: var_path, error }),
        None => Ok(()),
    }
}

fn joined(dir: &[u8], name: &[u8]) -> Result<heapless::Vec<u8, PATH_LIMIT>, HostError> {
    let mut path = heapless::Vec::new();
    match path.extend_from_slice(dir).is_ok() && path.push(b'/').is_ok() && path.extend_from_slice(name).is_ok() {
        true => Ok(path),
        false => Err(NAME_TOO_LONG),
    }
}

/// Removes a file, or a directory and what it holds down to `depth` levels below it: a
/// directory is what unlink(2) refuses with EISDIR.
fn remove<H: Files + Tree>(host: &mut H, path: &[u8], depth: usize) -> Result<(), HostError> {
    match host.remove(path) {
        Err(IS_A_DIRECTORY) if depth > 0 => {}
        other => return other.map(drop),
    }
    remove_matching(host, path, depth - 1, |_| true)?;
    host.remove_dir(path).map(drop)
}

/// Removes the entries of the directory `dir` that `matches`.
fn remove_matching<H: Files + Tree>(host: &mut H, dir: &[u8], depth: usize, matches: fn(&[u8]) -> bool) -> Result<(), HostError> {
    loop {
        let mut names: heapless::Vec<heapless::Vec<u8, 255>, NAMES_PER_PASS> = heapless::Vec::new();
        host.list(dir, &mut |entry| {
            if matches(entry) {
                // Names are at most 255 bytes; past NAMES_PER_PASS, the next pass.
                if let Ok(name) = heapless::Vec::from_slice(entry) {
                    let _ = names.push(name);
                }
            }
        })?;
        if names.is_empty() {
            return Ok(());
        }
        for name in &names {
            remove(host, &joined(dir, name)?, depth)?;
        }
    }
}

/// Empties the file, atomically, where it exists.
fn empty(host: &mut impl Files, path: &[u8]) -> Result<(), HostError> {
    match host.metadata(path)? {
        Some(_) => host.write(path, b"", 0o444, None),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::explain::{errno_number, Worded};
    use crate::host::files::Metadata;
    use crate::host::memory::{MemoryDir, MemoryHost};

    use crate::host::files::Kind;
    use crate::host::memory::{Shared, SharedDir};
    use crate::host::tree::Tree;

    const VAR: &str = "/var/lib/cloud";

    /// The shared memory host, refusing to unlink a directory as unlink(2) does.
    struct Unlink<'h>(Shared<'h>);

    impl Files for Unlink<'_> {
        fn read(&mut self, path: &[u8], buf: &mut [u8]) -> Result<Option<usize>, HostError> {
            self.0.read(path, buf)
        }
        fn write(&mut self, path: &[u8], contents: &[u8], mode: u32, owner: Option<(u32, u32)>) -> Result<(), HostError> {
            self.0.write(path, contents, mode, owner)
        }
        fn create_dir(&mut self, path: &[u8], mode: u32) -> Result<bool, HostError> {
            self.0.create_dir(path, mode)
        }
        fn metadata(&mut self, path: &[u8]) -> Result<Option<Metadata>, HostError> {
            self.0.metadata(path)
        }
        fn set_owner_and_mode(&mut self, path: &[u8], uid: u32, gid: u32, mode: u32) -> Result<(), HostError> {
            self.0.set_owner_and_mode(path, uid, gid, mode)
        }
        fn remove(&mut self, path: &[u8]) -> Result<bool, HostError> {
            match self.0.is_directory(path) {
                true => Err(IS_A_DIRECTORY),
                false => self.0.remove(path),
            }
        }
        fn list(&mut self, dir: &[u8], visit: &mut dyn FnMut(&[u8])) -> Result<(), HostError> {
            self.0.list(dir, visit)
        }
    }

    impl Tree for Unlink<'_> {
        fn is_directory(&mut self, path: &[u8]) -> bool {
            self.0.is_directory(path)
        }
        fn remove_dir(&mut self, path: &[u8]) -> Result<bool, HostError> {
            self.0.remove_dir(path)
        }
        fn filesystem_of(&mut self, path: &[u8]) -> Result<Option<u64>, HostError> {
            self.0.filesystem_of(path)
        }
        fn sync_filesystem(&mut self, path: &[u8]) -> Result<(), HostError> {
            self.0.sync_filesystem(path)
        }
    }

    fn dir(host: &mut MemoryHost, path: &str) {
        let meta = Metadata { kind: Kind::Directory, mode: 0o755, uid: 0, gid: 0, len: 0 };
        host.files.insert(path.as_bytes().to_vec(), crate::host::memory::Entry { contents: Vec::new(), meta });
    }

    /// A root after a bootstrap: the state, scripts two levels deep, a seed, the logs.
    fn bootstrapped() -> MemoryHost {
        let mut host = MemoryHost::new();
        for path in ["/etc", "/var/log", VAR, "/var/lib/cloud/seed", "/var/lib/cloud/scripts", "/var/lib/cloud/scripts/per-boot", "/var/lib/cloud/sem"] {
            dir(&mut host, path);
        }
        for file in [".bootstrap-complete", ".instance-id", "user-data", "meta-data", "scripts/per-boot/a.sh", "scripts/b.sh", "sem/x", "seed/meta-data"] {
            host = host.with_file(&format!("{VAR}/{file}"), b"x");
        }
        host.with_file("/var/log/wisp.log", b"x").with_file("/var/log/messages", b"x").with_file("/etc/machine-id", b"0123\n")
    }

    fn clean(host: &mut MemoryHost, options: Options) -> Result<(), String> {
        // The completion marker goes through the directory, the rest through paths: one
        // host records both in order.
        let cell = core::cell::RefCell::new(core::mem::take(host));
        let result = {
            let mut root = Unlink(Shared(&cell));
            let mut var = SharedDir(&cell, VAR);
            run(&mut root, Some(&mut var), VAR.as_bytes(), b"/var/log", options).map_err(|e| Worded(&e, errno_number).to_string())
        };
        *host = cell.into_inner();
        result
    }

    fn paths(host: &MemoryHost) -> Vec<String> {
        host.files.keys().map(|p| String::from_utf8_lossy(p).into_owned()).collect()
    }

    #[test]
    fn the_state_goes_the_seed_and_logs_stay_and_a_second_run_changes_nothing() {
        let mut host = bootstrapped();
        clean(&mut host, Options::default()).unwrap();
        assert_eq!(
            paths(&host),
            ["/etc", "/etc/machine-id", "/var/lib/cloud", "/var/lib/cloud/seed", "/var/lib/cloud/seed/meta-data", "/var/log", "/var/log/messages", "/var/log/wisp.log"]
        );
        // The marker first, durably; the directory synced last.
        let calls: Vec<&str> = host.calls.iter().map(String::as_str).filter(|c| !c.starts_with("metadata") && !c.starts_with("list")).collect();
        assert_eq!(calls[..2], ["remove /var/lib/cloud/.bootstrap-complete", "sync /var/lib/cloud"]);
        assert_eq!(calls.last(), Some(&"sync /var/lib/cloud"));
        assert!(calls.contains(&"remove_dir /var/lib/cloud/scripts/per-boot"));

        let before = paths(&host);
        clean(&mut host, Options::default()).unwrap();
        assert_eq!(paths(&host), before);
    }

    #[test]
    fn options_take_logs_host_keys_and_the_machine_id() {
        let mut host = bootstrapped();
        dir(&mut host, "/etc/ssh");
        for name in ["ssh_host_rsa_key", "ssh_host_rsa_key.pub", "sshd_config"] {
            host = host.with_file(&format!("/etc/ssh/{name}"), b"k");
        }
        clean(&mut host, Options { logs: true, ssh_host_keys: true, machine_id: true }).unwrap();
        assert_eq!(host.contents("/etc/machine-id"), Some(&b""[..]));
        assert_eq!(host.files[&b"/etc/machine-id"[..]].meta.mode, 0o444);
        let left = paths(&host);
        assert!(left.contains(&"/etc/ssh/sshd_config".into()) && !left.iter().any(|p| p.contains("ssh_host_")), "{left:?}");
        assert!(left.contains(&"/var/log/messages".into()) && !left.contains(&"/var/log/wisp.log".into()));
    }

    #[test]
    fn a_root_wisp_never_ran_in_needs_nothing() {
        let mut host = MemoryHost::new();
        dir(&mut host, "/etc");
        let cell = core::cell::RefCell::new(host);
        let mut root = Unlink(Shared(&cell));
        run(&mut root, None::<&mut MemoryDir<'_>>, VAR.as_bytes(), b"/var/log", Options { logs: true, ssh_host_keys: true, machine_id: true }).unwrap();
        let host = cell.into_inner();
        assert_eq!(paths(&host), ["/etc"]);
        assert!(host.calls.iter().all(|c| !c.starts_with("remove") && !c.starts_with("write")), "{:?}", host.calls);
    }

    #[test]
    fn a_directory_deeper_than_wisp_writes_fails_named_after_the_marker_went() {
        let mut host = bootstrapped();
        for path in ["/var/lib/cloud/includes", "/var/lib/cloud/includes/a", "/var/lib/cloud/includes/a/b", "/var/lib/cloud/includes/a/b/c"] {
            dir(&mut host, path);
        }
        assert_eq!(clean(&mut host, Options::default()), Err("/var/lib/cloud/includes: errno 21".into()));
        assert!(host.contents("/var/lib/cloud/.bootstrap-complete").is_none());

        let mut host = bootstrapped();
        host.fail.insert(b"/var/lib/cloud/.bootstrap-complete".to_vec(), HostError { errno: 30 });
        assert_eq!(clean(&mut host, Options::default()), Err("cannot clear the completion marker: errno 30".into()));
        assert!(host.contents("/var/lib/cloud/.instance-id").is_some());
    }

    fn all(options: Options) -> Vec<Removal> {
        plan(options).to_vec()
    }

    #[test]
    fn the_marker_goes_first_and_the_seed_stays() {
        let removals = all(Options::default());
        assert_eq!(removals[0], Removal::CompletionMarker);
        let wrote = [INSTANCE_ID, USER_DATA, META_DATA, VENDOR_DATA, NETWORK_CONFIG, PER_INSTANCE_DONE, PER_ONCE_DONE, AUTODETECT];
        for name in wrote.into_iter().chain([AZURE_REPORTED, SCRIPTS_DIR, BOOTHOOKS_DIR, INCLUDES_DIR, SEM_DIR]) {
            assert!(removals.contains(&Removal::Var(name)), "{}", String::from_utf8_lossy(name));
        }
        assert!(!removals.contains(&Removal::Var(b"seed")));
        assert!(!removals.iter().any(|r| matches!(r, Removal::Log(_) | Removal::SshHostKeys | Removal::EmptyMachineId)));
        assert_eq!(removals.iter().filter(|&&r| r == Removal::CompletionMarker).count(), 1);
    }

    #[test]
    fn options_add_logs_keys_and_machine_id() {
        let removals = all(Options { logs: true, ssh_host_keys: false, machine_id: false });
        let logs: Vec<_> = removals.iter().filter_map(|r| if let Removal::Log(n) = r { Some(*n) } else { None }).collect();
        assert_eq!(logs, [LOG, USER_DATA_LOG, USER_DATA_EXIT]);
        let everything = all(Options { logs: true, ssh_host_keys: true, machine_id: true });
        assert_eq!(everything[everything.len() - 2..], [Removal::SshHostKeys, Removal::EmptyMachineId]);
        assert_eq!(everything.len(), all(Options::default()).len() + 5);
    }

    #[test]
    fn ssh_host_keys_by_name() {
        for name in ["ssh_host_ed25519_key", "ssh_host_ed25519_key.pub", "ssh_host_rsa_key-cert.pub", "ssh_host_ecdsa_key"] {
            assert!(is_ssh_host_key(name.as_bytes()), "{name}");
        }
        for name in ["sshd_config", "ssh_config", "moduli", "ssh_host__key", "ssh_host_key.pub", "ssh_host_rsa_key.bak", "x_ssh_host_rsa_key", "ssh_host_"] {
            assert!(!is_ssh_host_key(name.as_bytes()), "{name}");
        }
    }
}
