//! OpenStack's metadata: `meta_data.json` and `user_data`, served by the metadata service
//! under `/openstack/latest/` or found on a config drive under `openstack/latest/`.

use super::document_service::Document;
use super::imds::Service;
use super::{meta_data_value, DocumentError, Item};

pub const META_DATA_PATH: &str = "/openstack/latest/meta_data.json";
pub const USER_DATA_PATH: &str = "/openstack/latest/user_data";

pub const SERVICE: Service = Service::document(&Document { user_data: Some(USER_DATA_PATH), ..Document::at(META_DATA_PATH, |document, item, out, _| extract(document, item, out)) });

/// The versions a config drive may carry, `latest` first and then newest first, as
/// cloud-init looks for them.
pub const VERSIONS: [&str; 9] =
    ["latest", "2018-08-27", "2017-02-22", "2016-10-06", "2016-06-30", "2015-10-15", "2013-10-17", "2013-04-04", "2012-08-10"];

/// Copies `item` out of `meta_data.json` into `out` (the keys of `public_keys`, one per
/// line); `Ok(None)` when absent. User-data is a file of its own.
pub fn extract(document: &[u8], item: Item, out: &mut [u8]) -> Result<Option<usize>, DocumentError> {
    let key = match item {
        Item::InstanceId => "uuid",
        Item::Hostname | Item::LocalHostname => "hostname",
        Item::SshKeys => "public_keys",
        Item::UserData => return Ok(None),
    };
    meta_data_value(document, key, crate::json::Expected::Object, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_data_json() {
        let doc = br#"{"uuid": "83679162-1378-4288-a2d4-70e13ec132aa", "hostname": "test.novalocal", "name": "test",
            "public_keys": {"mykey": "ssh-rsa AAAA a\n"}, "availability_zone": "nova", "launch_index": 0}"#;
        let mut out = [0u8; 128];
        let len = extract(doc, Item::InstanceId, &mut out).unwrap().unwrap();
        assert_eq!(&out[..len], b"83679162-1378-4288-a2d4-70e13ec132aa");
        let len = extract(doc, Item::Hostname, &mut out).unwrap().unwrap();
        assert_eq!(&out[..len], b"test.novalocal");
        let len = extract(doc, Item::SshKeys, &mut out).unwrap().unwrap();
        assert_eq!(&out[..len], b"ssh-rsa AAAA a\n\n");
        assert_eq!(extract(doc, Item::UserData, &mut out), Ok(None));
        assert!(extract(b"{\"uuid\": 5}", Item::InstanceId, &mut out).is_err());
        assert!(extract(b"not json", Item::InstanceId, &mut out).is_err());
    }
}
