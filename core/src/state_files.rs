//! The names of what wisp keeps between runs, in TINY_CLOUD_VAR and TINY_CLOUD_LOGS: one
//! list, so that `wisp clean` removes exactly what the phases write.

/// tiny-cloud's completion marker.
pub const MARKER: &[u8] = b".bootstrap-complete";
/// The instance-id the bootstrap ran for.
pub const INSTANCE_ID: &[u8] = b".instance-id";
/// `CLOUD=auto`'s answer.
pub const AUTODETECT: &[u8] = b".autodetect";
/// The instance-id Azure was told "Ready" for.
pub const AZURE_REPORTED: &[u8] = b".azure-reported";
/// The instance-id the SSH host keys were made for.
pub const SSH_HOST_KEYS_DONE: &[u8] = b".ssh-host-keys";
/// That the per-once scripts ran; the instance-id the per-instance ones ran for.
pub const PER_ONCE_DONE: &[u8] = b".per-once-done";
pub const PER_INSTANCE_DONE: &[u8] = b".per-instance-done";
/// The saved user-data, and the seed's other documents beside it.
pub const USER_DATA: &[u8] = b"user-data";
pub const META_DATA: &[u8] = b"meta-data";
pub const VENDOR_DATA: &[u8] = b"vendor-data";
pub const NETWORK_CONFIG: &[u8] = b"network-config";
/// Directories: fetched includes, boothooks, and user-data's scripts with cloud-init's
/// per-boot, per-instance and per-once directories in it.
pub const INCLUDES_DIR: &[u8] = b"includes";
pub const BOOTHOOKS_DIR: &[u8] = b"boothooks";
pub const SCRIPTS_DIR: &[u8] = b"scripts";
/// The markers of finished per-instance work, as cloud-init's `sem/`.
pub const SEM_DIR: &[u8] = b"sem";

/// In TINY_CLOUD_LOGS.
pub const LOG: &[u8] = b"wisp.log";
pub const USER_DATA_LOG: &[u8] = b"user-data.log";
pub const USER_DATA_EXIT: &[u8] = b"user-data.exit";
