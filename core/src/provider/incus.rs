//! Incus's (and LXD's) guest API: HTTP over a Unix socket the host puts in the instance.
//!
//! Facts (Incus documentation "Communication between instance and host" (dev-incus), LXD's
//! "devlxd"; cloud-init's DataSourceLXD; tiny-cloud's incus module):
//! - The socket is `/dev/incus/sock` (Incus), `/dev/lxd/sock` (LXD); HTTP/1.0 or 1.1, any
//!   Host, no other header. Its presence is how an instance knows it runs on Incus or
//!   LXD (tiny-cloud's and cloud-init's detection), containers and VMs alike.
//! - `GET /1.0/meta-data`: cloud-init meta-data text (`#cloud-config`, then
//!   `instance-id: <id>` and `local-hostname: <name>`).
//! - `GET /1.0/config/<key>`: the instance's configuration key, raw; 404 when unset. The
//!   user-data is `cloud-init.user-data`, or `user.user-data` in older configurations
//!   (the one tiny-cloud reads); `cloud-init.vendor-data` and `cloud-init.network-config`
//!   likewise. wisp saves the network configuration as `$TINY_CLOUD_VAR/network-config`.
//! - No SSH keys: those come in the user-data or vendor-data.

use super::document_service::Document;
use super::imds::Service;
use crate::host::http::Endpoint;
use super::{meta_data_value, DocumentError, Item};

pub const SOCKET: &str = "/dev/incus/sock";
pub const LXD_SOCKET: &str = "/dev/lxd/sock";
/// The Host header sent: the socket answers to any.
pub const HOST: &str = "incus";
pub const META_DATA_PATH: &str = "/1.0/meta-data";
pub const USER_DATA_PATH: &str = "/1.0/config/cloud-init.user-data";
pub const LEGACY_USER_DATA_PATH: &str = "/1.0/config/user.user-data";

pub const SERVICE: Service = Service {
    endpoint: Endpoint::GuestSocket,
    host: HOST,
    ..Service::document(&Document {
        user_data: Some(USER_DATA_PATH),
        legacy_user_data: Some(LEGACY_USER_DATA_PATH),
        ..Document::at(META_DATA_PATH, |document, item, out, _| extract(document, item, out))
    })
};
pub const NETWORK_CONFIG_PATH: &str = "/1.0/config/cloud-init.network-config";

/// Copies `item` out of the meta-data text into `out`; `Ok(None)` when absent.
/// User-data is a request of its own; there are no keys.
pub fn extract(document: &[u8], item: Item, out: &mut [u8]) -> Result<Option<usize>, DocumentError> {
    let key = match item {
        Item::InstanceId => "instance-id",
        Item::Hostname | Item::LocalHostname => "local-hostname",
        Item::SshKeys | Item::UserData => return Ok(None),
    };
    meta_data_value(document, key, crate::json::Expected::MetaData, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_data() {
        let doc = b"#cloud-config\ninstance-id: 8c4b1b6e-5f0d-4c1e-9a55-0a2f7c1d2e3f\nlocal-hostname: c1\n";
        let mut out = [0u8; 64];
        let len = extract(doc, Item::InstanceId, &mut out).unwrap().unwrap();
        assert_eq!(&out[..len], b"8c4b1b6e-5f0d-4c1e-9a55-0a2f7c1d2e3f");
        let len = extract(doc, Item::Hostname, &mut out).unwrap().unwrap();
        assert_eq!(&out[..len], b"c1");
        assert_eq!(extract(doc, Item::SshKeys, &mut out), Ok(None));
        assert!(extract(b"instance-id\n", Item::InstanceId, &mut out).is_err());
    }
}
