//! Oracle Cloud's instance metadata: one JSON document. Version 2 wants
//! `Authorization: Bearer Oracle`; version 1, the fallback, wants nothing.

use super::document_service::Document;
use super::imds::Service;
use super::{document_value, DocumentError, Item};

pub const V2_PATH: &str = "/opc/v2/instance/";
pub const V1_PATH: &str = "/opc/v1/instance/";
pub const AUTHORIZATION: (&str, &str) = ("Authorization", "Bearer Oracle");

pub const SERVICE: Service = Service {
    headers: &[AUTHORIZATION],
    ..Service::document(&Document { fallback: Some(V1_PATH), ..Document::at(V2_PATH, |document, item, out, _| extract(document, item, out)) })
};

/// Copies `item` out of the instance document into `out`: `Ok(None)` when absent;
/// user-data is base64-decoded.
pub fn extract(document: &[u8], item: Item, out: &mut [u8]) -> Result<Option<usize>, DocumentError> {
    let (path, base64): (&[&str], bool) = match item {
        Item::InstanceId => (&["id"], false),
        Item::Hostname | Item::LocalHostname => (&["hostname"], false),
        Item::SshKeys => (&["metadata", "ssh_authorized_keys"], false),
        Item::UserData => (&["metadata", "user_data"], true),
    };
    document_value(document, path, base64, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &[u8] = br#"{"availabilityDomain":"EMIr:PHX-AD-1","displayName":"web","hostname":"web-1",
        "id":"ocid1.instance.oc1.phx.abc","metadata":{"ssh_authorized_keys":"ssh-ed25519 AAAA a\nssh-rsa BBBB b","user_data":"IyEvYmluL3NoCmVjaG8gaGkK"},
        "region":"phx","state":"Running"}"#;

    fn get(item: Item) -> Option<Vec<u8>> {
        let mut out = [0u8; 256];
        extract(DOC, item, &mut out).unwrap().map(|n| out[..n].to_vec())
    }

    #[test]
    fn values() {
        assert_eq!(get(Item::InstanceId).unwrap(), b"ocid1.instance.oc1.phx.abc");
        assert_eq!(get(Item::Hostname).unwrap(), b"web-1");
        assert_eq!(get(Item::SshKeys).unwrap(), b"ssh-ed25519 AAAA a\nssh-rsa BBBB b");
        assert_eq!(get(Item::UserData).unwrap(), b"#!/bin/sh\necho hi\n");
        let mut out = [0u8; 64];
        assert_eq!(extract(br#"{"id":"x","metadata":{}}"#, Item::UserData, &mut out), Ok(None));
        assert!(matches!(extract(br#"{"id":"x","metadata":{"user_data":"!!"}}"#, Item::UserData, &mut out), Err(DocumentError::Base64(_))));
        assert!(matches!(extract(br#"{"id": 5"#, Item::InstanceId, &mut out), Err(DocumentError::Json(_))));
        assert!(matches!(extract(br#"{"id": 5}"#, Item::InstanceId, &mut out), Err(DocumentError::Json(_))));
    }
}
