//! `wisp clean`: what an image builder removes before capturing an image, so that the
//! image's next boot is a first boot (cloud-init's `clean`, tiny-cloud's "remove
//! .bootstrap-complete"). Only what wisp writes goes: an image's `seed/` directory, or
//! anything else it keeps in TINY_CLOUD_VAR, stays.

use crate::state_files::*;

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

#[cfg(test)]
mod tests {
    use super::*;

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
