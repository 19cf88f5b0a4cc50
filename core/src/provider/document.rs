//! The clouds that answer with one document holding everything (OCI, Azure, OpenStack,
//! Hetzner, DigitalOcean, Scaleway, Incus, Vultr): one GET of the document, then each
//! value out of it; user-data, where the cloud serves it as a file of its own, one GET
//! more.

use super::document_service::Document;
use super::imds::{Host, Imds, ImdsError, Service, What};
use super::metadata::{Metadata, ValueState};
use super::Item;

impl Service {
    /// A cloud that answers with `document`, at the metadata address.
    pub const fn document(document: &'static Document) -> Service {
        Service { document: Some(document), rounds: Some(rounds), ..Service::PLAIN }
    }
}

/// The order values are taken out of the document: user-data, fetched on its own where
/// the cloud serves it apart, before the keys.
const ORDER: [Item; 5] = [Item::InstanceId, Item::Hostname, Item::LocalHostname, Item::UserData, Item::SshKeys];

/// `Service::rounds` of the document clouds: the document once, then the wanted values.
pub(crate) fn rounds(imds: &mut Imds<'_>, host: &mut dyn Host, metadata: &mut Metadata<'_>, wanted: &[Item]) -> Result<(), ImdsError> {
    let Some(cloud) = imds.service().document else { return Err(ImdsError::NoService { cloud: imds.cloud() }) };
    let (mut slots, document, parse_room) = metadata.slots_and_room();
    if !document.is_fetched() {
        let first = imds.get_one(host, What::Document, cloud.path, document.buf);
        let refused = matches!(first, Err(ImdsError::Refused { status: 401 | 403, .. }) | Ok(ValueState::Absent));
        let state = match (cloud.fallback, refused) {
            (Some(fallback), true) => imds.get_one(host, What::Document, fallback, document.buf)?,
            _ => first?,
        };
        document.state = match state {
            ValueState::Present { .. } => state,
            _ => return Err(ImdsError::Refused { what: What::Document, status: 404 }),
        };
    }
    let body = document.get().unwrap_or(b"");
    for item in ORDER {
        let slot = &mut slots[item as usize];
        if !wanted.contains(&item) {
            continue;
        }
        if let (Some(path), Item::UserData) = (cloud.user_data, item) {
            let mut fetched = imds.get_one(host, What::Item(Item::UserData), path, slot.buf)?;
            if let (Some(legacy), ValueState::Absent) = (cloud.legacy_user_data, fetched) {
                fetched = imds.get_one(host, What::Item(Item::UserData), legacy, slot.buf)?;
            }
            *slot.state = fetched;
            continue;
        }
        let found = (cloud.extract)(body, item, slot.buf, parse_room).map_err(|error| ImdsError::Document { item, error: error.into() })?;
        *slot.state = ValueState::at_start(found);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Cloud;
    use crate::host::http::Endpoint;
    use crate::host::memory::MemoryNetwork;
    use crate::provider::imds::fetch_from;
    use crate::provider::{azure, incus, oci, openstack, scaleway};

    const OCI_DOC: &[u8] = br#"{"id":"ocid1.instance","hostname":"web-1","metadata":{"ssh_authorized_keys":"ssh-ed25519 AAAA a","user_data":"IyEvYmluL3NoCg=="}}"#;

    fn lines(network: &MemoryNetwork) -> Vec<String> {
        network.seen().iter().map(|seen| seen.line.clone()).collect()
    }

    #[test]
    fn oci_asks_version_2_with_its_header_and_takes_every_value_from_the_one_document() {
        let mut network = MemoryNetwork::new().serve("GET /opc/v2/instance/", 200, OCI_DOC);
        let (result, values) = fetch_from(Cloud::Oci, &oci::SERVICE, &mut network, &Item::ALL);
        assert_eq!(result, Ok(()));
        assert_eq!(lines(&network), ["GET /opc/v2/instance/"]);
        assert_eq!(network.seen()[0].headers, ["Authorization: Bearer Oracle"]);
        assert_eq!(values[0].as_deref(), Some(&b"ocid1.instance"[..]));
        assert_eq!(values[3].as_deref(), Some(&b"ssh-ed25519 AAAA a"[..]));
        assert_eq!(values[4].as_deref(), Some(&b"#!/bin/sh\n"[..]));
    }

    #[test]
    fn oci_falls_back_to_version_1_without_the_header_when_version_2_is_refused_or_absent() {
        for status in [401, 403, 404] {
            let mut network = MemoryNetwork::new().serve("GET /opc/v2/instance/", status, b"").serve("GET /opc/v1/instance/", 200, OCI_DOC);
            let (result, values) = fetch_from(Cloud::Oci, &oci::SERVICE, &mut network, &[Item::InstanceId]);
            assert_eq!(result, Ok(()), "{status}");
            assert_eq!(lines(&network), ["GET /opc/v2/instance/", "GET /opc/v1/instance/"]);
            assert_eq!(network.seen()[1].headers, Vec::<String>::new());
            assert_eq!(values[0].as_deref(), Some(&b"ocid1.instance"[..]));
        }
        // Another status is not a reason to fall back.
        let mut network = MemoryNetwork::new().serve("GET /opc/v2/instance/", 400, b"");
        let (result, _) = fetch_from(Cloud::Oci, &oci::SERVICE, &mut network, &[Item::InstanceId]);
        assert_eq!(result, Err(ImdsError::Refused { what: What::Document, status: 400 }));
        assert_eq!(network.seen().len(), 1);
        // Neither version: the document is missing.
        let mut network = MemoryNetwork::new();
        let (result, _) = fetch_from(Cloud::Oci, &oci::SERVICE, &mut network, &[Item::InstanceId]);
        assert_eq!(result, Err(ImdsError::Refused { what: What::Document, status: 404 }));
    }

    #[test]
    fn azure_has_no_fallback_and_a_bad_value_names_its_item() {
        let mut network = MemoryNetwork::new().serve("GET /metadata/instance?api-version=2021-02-01", 403, b"");
        let (result, _) = fetch_from(Cloud::Azure, &azure::SERVICE, &mut network, &[Item::InstanceId]);
        assert_eq!(result, Err(ImdsError::Refused { what: What::Document, status: 403 }));
        assert_eq!(network.seen()[0].headers, ["Metadata: true"]);
        let mut network = MemoryNetwork::new().serve("GET /metadata/instance?api-version=2021-02-01", 200, b"{\"compute\":");
        let (result, _) = fetch_from(Cloud::Azure, &azure::SERVICE, &mut network, &[Item::Hostname]);
        let error = result.unwrap_err();
        assert!(matches!(error, ImdsError::Document { item: Item::Hostname, .. }), "{error:?}");
        assert_eq!(error.item(), Some(Item::Hostname));
    }

    #[test]
    fn openstack_user_data_is_a_file_of_its_own_after_the_document() {
        let doc = br#"{"uuid":"83679162-1378-4288-a2d4-70e13ec132aa","hostname":"test.novalocal","public_keys":{"mykey":"ssh-rsa AAAA k"}}"#;
        let mut network = MemoryNetwork::new()
            .serve("GET /openstack/latest/meta_data.json", 200, doc)
            .serve("GET /openstack/latest/user_data", 200, b"#cloud-config\n");
        let (result, values) = fetch_from(Cloud::Openstack, &openstack::SERVICE, &mut network, &Item::ALL);
        assert_eq!(result, Ok(()));
        assert_eq!(lines(&network), ["GET /openstack/latest/meta_data.json", "GET /openstack/latest/user_data"]);
        assert_eq!(values[0].as_deref(), Some(&b"83679162-1378-4288-a2d4-70e13ec132aa"[..]));
        assert_eq!(values[4].as_deref(), Some(&b"#cloud-config\n"[..]));
    }

    #[test]
    fn scaleway_asks_its_own_address_and_user_data_from_a_privileged_port() {
        let doc = br#"{"id":"2d5d6f4b","hostname":"scw-1","ssh_public_keys":[{"key":"ssh-ed25519 AAAA s"}]}"#;
        let mut network = MemoryNetwork::new().serve("GET /conf?format=json", 200, doc).serve("GET /user_data/cloud-init", 404, b"");
        let (result, values) = fetch_from(Cloud::Scaleway, &scaleway::SERVICE, &mut network, &Item::ALL);
        assert_eq!(result, Ok(()));
        let seen = network.seen();
        assert_eq!(seen[0].endpoint, Endpoint::Tcp { address: [169, 254, 42, 42], port: 80, privileged: false });
        assert_eq!(seen[1].line, "GET /user_data/cloud-init");
        assert_eq!(seen[1].endpoint, Endpoint::Tcp { address: [169, 254, 42, 42], port: 80, privileged: true });
        assert_eq!(seen[1].host, "169.254.42.42");
        assert_eq!(values[3].as_deref(), Some(&b"ssh-ed25519 AAAA s\n"[..]));
        assert_eq!(values[4], None);
    }

    #[test]
    fn incus_speaks_over_the_guest_socket_and_falls_back_to_the_older_user_data_key() {
        let meta = b"#cloud-config\ninstance-id: c1\nlocal-hostname: c1\n";
        let mut network = MemoryNetwork::new()
            .serve("GET /1.0/meta-data", 200, meta)
            .serve("GET /1.0/config/user.user-data", 200, b"#!/bin/sh\n");
        let (result, values) = fetch_from(Cloud::Incus, &incus::SERVICE, &mut network, &[Item::InstanceId, Item::UserData]);
        assert_eq!(result, Ok(()));
        assert_eq!(lines(&network), ["GET /1.0/meta-data", "GET /1.0/config/cloud-init.user-data", "GET /1.0/config/user.user-data"]);
        assert!(network.seen().iter().all(|seen| seen.endpoint == Endpoint::GuestSocket && seen.host == "incus"));
        assert_eq!(values[0].as_deref(), Some(&b"c1"[..]));
        assert_eq!(values[4].as_deref(), Some(&b"#!/bin/sh\n"[..]));
        // The newer key, when set, is the only one asked.
        let mut network = MemoryNetwork::new().serve("GET /1.0/meta-data", 200, meta).serve("GET /1.0/config/cloud-init.user-data", 200, b"#cloud-config\n");
        let (_, values) = fetch_from(Cloud::Incus, &incus::SERVICE, &mut network, &[Item::UserData]);
        assert_eq!(network.seen().len(), 2);
        assert_eq!(values[4].as_deref(), Some(&b"#cloud-config\n"[..]));
    }
}
