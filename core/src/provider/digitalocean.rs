//! DigitalOcean's droplet metadata: one JSON document.
//!
//! Facts (DigitalOcean's "Droplet Metadata" documentation; cloud-init's DataSourceDigitalOcean
//! and its helper; afterburn's digitalocean provider):
//! - `GET http://169.254.169.254/metadata/v1.json`, no header, plain HTTP on port 80. The
//!   droplet reaches it over the link-local address cloud-init assigns itself
//!   (169.254.x.y on the first NIC) before DHCP is up.
//! - `droplet_id` is a JSON number (the instance-id; the DMI `product_serial` holds the
//!   same), `hostname` a string, `public_keys` an array of OpenSSH key lines, `user_data`
//!   and `vendor_data` strings (absent when not given), `region` a string.
//! - Network facts: `interfaces.public[]` and `interfaces.private[]`, each with `mac`,
//!   `type`, `ipv4 {ip_address, netmask, gateway}`, `ipv6 {ip_address, cidr, gateway}`
//!   and `anchor_ipv4`; `dns.nameservers[]`; `floating_ip.ipv4.active`. wisp keeps the
//!   whole document as `$TINY_CLOUD_VAR/meta-data` for the network configuration.
//! - Detected by DMI `sys_vendor` "DigitalOcean".

use super::document_service::Document;
use super::imds::Service;
use super::{json_member, DocumentError, Item};

pub const METADATA_PATH: &str = "/metadata/v1.json";

pub const SERVICE: Service = Service::document(&Document::at(METADATA_PATH, |document, item, out, _| extract(document, item, out)));

/// Copies `item` out of the droplet document into `out` (keys one per line); `Ok(None)`
/// when absent.
pub fn extract(document: &[u8], item: Item, out: &mut [u8]) -> Result<Option<usize>, DocumentError> {
    let key = match item {
        Item::InstanceId => "droplet_id",
        Item::Hostname | Item::LocalHostname => "hostname",
        Item::SshKeys => "public_keys",
        Item::UserData => "user_data",
    };
    json_member(document, key, item, None, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &[u8] = br##"{"droplet_id":2756294,"hostname":"sample-droplet","vendor_data":"#cloud-config\n",
        "public_keys":["ssh-rsa AAAA a","ssh-ed25519 BBBB b"],"auth_key":"x","region":"nyc3",
        "interfaces":{"public":[{"ipv4":{"ip_address":"104.131.20.105","netmask":"255.255.192.0","gateway":"104.131.0.1"},
        "ipv6":{"ip_address":"2604:A880:0800:0010:0000:0000:017D:2001","cidr":64,"gateway":"2604:A880:0800:0010:0000:0000:0000:0001"},
        "mac":"04:01:2a:0f:2a:01","type":"public"}]},"dns":{"nameservers":["2001:4860:4860::8844","8.8.8.8"]},
        "user_data":"#!/bin/sh\necho hi\n"}"##;

    fn get(item: Item) -> Option<Vec<u8>> {
        let mut out = [0u8; 256];
        extract(DOC, item, &mut out).unwrap().map(|n| out[..n].to_vec())
    }

    #[test]
    fn values() {
        assert_eq!(get(Item::InstanceId).unwrap(), b"2756294");
        assert_eq!(get(Item::Hostname).unwrap(), b"sample-droplet");
        assert_eq!(get(Item::SshKeys).unwrap(), b"ssh-rsa AAAA a\nssh-ed25519 BBBB b\n");
        assert_eq!(get(Item::UserData).unwrap(), b"#!/bin/sh\necho hi\n");
        let mut out = [0u8; 8];
        assert_eq!(extract(br#"{"droplet_id":1}"#, Item::UserData, &mut out), Ok(None));
        assert!(extract(br#"{"droplet_id":123456789012}"#, Item::InstanceId, &mut out).is_err());
        assert!(extract(br#"{"hostname":true}"#, Item::Hostname, &mut out).is_err());
        assert!(extract(br#"{"hostname":["x"]}"#, Item::Hostname, &mut out).is_err());
        assert!(extract(br#"{"public_keys":[1]}"#, Item::SshKeys, &mut out).is_err());
        assert!(extract(b"{", Item::Hostname, &mut out).is_err());
    }
}
