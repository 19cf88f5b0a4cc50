//! Scaleway's instance metadata: one JSON document, and user-data beside it that is
//! served only to a privileged source port.
//!
//! Facts (Scaleway's "Instance metadata" and "cloud-init" documentation; cloud-init's
//! DataSourceScaleway; afterburn's scaleway provider; tiny-cloud's scaleway module):
//! - The service is at `169.254.42.42` port 80 (and `[fd00:42::42]`, which wisp does not
//!   use), not at 169.254.169.254.
//! - `GET /conf?format=json`: `id` (the instance-id, a UUID), `name`, `hostname`,
//!   `ssh_public_keys` (an array of objects whose `key` is an OpenSSH key line, beside
//!   its `fingerprint`), `tags`; no header needed.
//! - `GET /user_data/cloud-init`: the user-data, raw; 404 when none. The service answers
//!   it only to a connection from a source port below 1024 (proof the client is root),
//!   so the client binds one before connecting; cloud-init and tiny-cloud both do.
//! - Network facts: `public_ip {address, dynamic}`, `public_ips[] {address, netmask,
//!   gateway, family}`, `private_ip`, `ipv6 {address, gateway, netmask}`. wisp keeps the
//!   whole document as `$TINY_CLOUD_VAR/meta-data` for the network configuration.
//! - Detected by DMI `sys_vendor` "Scaleway".

use super::document_service::Document;
use super::imds::Service;
use crate::host::http::Endpoint;
use super::{json_member, DocumentError, Item};

pub const ADDRESS: [u8; 4] = [169, 254, 42, 42];
pub const HOST: &str = "169.254.42.42";
pub const CONF_PATH: &str = "/conf?format=json";
pub const USER_DATA_PATH: &str = "/user_data/cloud-init";

pub const SERVICE: Service = Service {
    endpoint: Endpoint::Tcp { address: ADDRESS, port: 80, privileged: false },
    host: HOST,
    ..Service::document(&Document { user_data: Some(USER_DATA_PATH), privileged_user_data: true, ..Document::at(CONF_PATH, |document, item, out, _| extract(document, item, out)) })
};

/// Copies `item` out of the `conf` document into `out` (keys one per line); `Ok(None)`
/// when absent. User-data is a request of its own.
pub fn extract(document: &[u8], item: Item, out: &mut [u8]) -> Result<Option<usize>, DocumentError> {
    let key = match item {
        Item::InstanceId => "id",
        Item::Hostname | Item::LocalHostname => "hostname",
        Item::SshKeys => "ssh_public_keys",
        Item::UserData => return Ok(None),
    };
    json_member(document, key, item, Some("key"), out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &[u8] = br#"{"id":"5a1b2c3d-0000-4000-8000-123456789abc","name":"scw-web","hostname":"scw-web",
        "commercial_type":"DEV1-S","ssh_public_keys":[{"key":"ssh-ed25519 AAAA a","fingerprint":"256 SHA256:x a (ssh-ed25519)"},
        {"key":"ssh-rsa BBBB b","fingerprint":"2048 SHA256:y b (ssh-rsa)"}],"public_ip":{"address":"51.15.1.2","dynamic":false},
        "private_ip":null,"ipv6":{"address":"2001:bc8:1::1","gateway":"2001:bc8:1::","netmask":"64"},"location":{"zone_id":"fr-par-1"}}"#;

    #[test]
    fn values() {
        let mut out = [0u8; 256];
        let len = extract(DOC, Item::InstanceId, &mut out).unwrap().unwrap();
        assert_eq!(&out[..len], b"5a1b2c3d-0000-4000-8000-123456789abc");
        let len = extract(DOC, Item::Hostname, &mut out).unwrap().unwrap();
        assert_eq!(&out[..len], b"scw-web");
        let len = extract(DOC, Item::SshKeys, &mut out).unwrap().unwrap();
        assert_eq!(&out[..len], b"ssh-ed25519 AAAA a\nssh-rsa BBBB b\n");
        assert_eq!(extract(DOC, Item::UserData, &mut out), Ok(None));
        assert_eq!(extract(br#"{"ssh_public_keys":[]}"#, Item::SshKeys, &mut out), Ok(Some(0)));
        assert!(extract(br#"{"ssh_public_keys":[{"key":5}]}"#, Item::SshKeys, &mut out).is_err());
        assert!(extract(br#"{"ssh_public_keys":{}}"#, Item::SshKeys, &mut out).is_err());
        assert!(extract(br#"{"hostname":["x"]}"#, Item::Hostname, &mut out).is_err());
    }
}
