//! Vultr's instance metadata: one JSON document.
//!
//! Facts (Vultr's "Instance Metadata Service" documentation; cloud-init's DataSourceVultr
//! and its helper; afterburn's vultr provider):
//! - `GET http://169.254.169.254/v1.json` with `Metadata-Token: cloudinit`, the header
//!   with which Vultr answers cloud-init's form of the document (with `instance-v2-id`,
//!   `user-data` and `vendor-data`); wisp asks for that form.
//! - `instance-v2-id` is the instance-id (a UUID; the older `instanceid` and the DMI
//!   `product_serial` "subid" are other ids), `hostname` (empty on white-label images,
//!   which cloud-init then calls "guest"), `public-keys` an array of OpenSSH key lines,
//!   `user-data` a string, empty when none.
//! - Network facts: `interfaces[]` (`mac`, `ipv4 {address, netmask, gateway}`, `ipv6
//!   {network, prefix}`, `network-type`), kept in the saved document.
//! - Detected by DMI `sys_vendor` "Vultr".

use super::document_service::Document;
use super::imds::Service;
use super::{json_member, DocumentError, Item};

pub const METADATA_PATH: &str = "/v1.json";
pub const TOKEN: (&str, &str) = ("Metadata-Token", "cloudinit");

pub const SERVICE: Service = Service { headers: &[TOKEN], ..Service::document(&Document::at(METADATA_PATH, |document, item, out, _| extract(document, item, out))) };

/// Copies `item` out of the document into `out` (keys one per line); `Ok(None)` when
/// absent, and for empty user-data.
pub fn extract(document: &[u8], item: Item, out: &mut [u8]) -> Result<Option<usize>, DocumentError> {
    let key = match item {
        Item::InstanceId => "instance-v2-id",
        Item::Hostname | Item::LocalHostname => "hostname",
        Item::SshKeys => "public-keys",
        Item::UserData => "user-data",
    };
    let Some(found) = json_member(document, key, item, None, out)? else { return Ok(None) };
    Ok(match (item, found) {
        (Item::UserData, 0) => None,
        (Item::Hostname | Item::LocalHostname, 0) => {
            let limit = out.len();
            out.get_mut(..5).ok_or(DocumentError::Json(crate::json::JsonError::StringTooLong { limit: limit as u32 }))?.copy_from_slice(b"guest");
            Some(5)
        }
        (_, len) => Some(len),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &[u8] = br#"{"bgp":{},"hostname":"vultr-guest","instance-v2-id":"a747bfz6-385a-4f9c-8a35-f5b2c2bb3f1f",
        "instanceid":"41309451","interfaces":[{"ipv4":{"additional":[],"address":"203.0.113.5","gateway":"203.0.113.1","netmask":"255.255.254.0"},
        "mac":"56:00:04:1c:47:2e","network-type":"public"}],"public-keys":["ssh-ed25519 AAAA a"],"region":{"regioncode":"EWR"},
        "user-data":"","vendor-data":[]}"#;

    #[test]
    fn values() {
        let mut out = [0u8; 128];
        let len = extract(DOC, Item::InstanceId, &mut out).unwrap().unwrap();
        assert_eq!(&out[..len], b"a747bfz6-385a-4f9c-8a35-f5b2c2bb3f1f");
        let len = extract(DOC, Item::Hostname, &mut out).unwrap().unwrap();
        assert_eq!(&out[..len], b"vultr-guest");
        let len = extract(DOC, Item::SshKeys, &mut out).unwrap().unwrap();
        assert_eq!(&out[..len], b"ssh-ed25519 AAAA a\n");
        assert_eq!(extract(DOC, Item::UserData, &mut out), Ok(None));
        let len = extract(br#"{"hostname":""}"#, Item::Hostname, &mut out).unwrap().unwrap();
        assert_eq!(&out[..len], b"guest");
        assert!(extract(br#"{"public-keys":"x"}"#, Item::SshKeys, &mut out).is_err());
    }
}
