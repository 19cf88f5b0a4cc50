//! Hetzner Cloud's server metadata: one YAML document, and user-data beside it.
//!
//! Facts (Hetzner's Cloud API documentation, "Server Metadata"; cloud-init's
//! DataSourceHetzner and its helper; afterburn's hetzner provider; tiny-cloud's hetzner
//! module):
//! - `GET http://169.254.169.254/hetzner/v1/metadata`, no header: a YAML mapping with
//!   `hostname`, `instance-id` (an integer), `public-keys` (a list of OpenSSH key lines,
//!   `[]` when none), `local-ipv4`, `public-ipv4`, `region`, `availability-zone`,
//!   `vendor_data` (a string) and `network-config`. Each key is also served alone at
//!   `/hetzner/v1/metadata/<key>`; `/hetzner/v1/metadata/private-networks` lists the
//!   private networks.
//! - `network-config` is cloud-init's network configuration version 1 (`config:` a list
//!   of `physical` interfaces by `mac_address`, with a `dhcp` subnet and a `static` one
//!   whose `address` is the server's IPv6 /64, gateway `fe80::1`): the IPv6 address is
//!   only there, as Hetzner runs no DHCPv6. wisp saves it, as JSON (which YAML readers
//!   read too), as `$TINY_CLOUD_VAR/network-config`.
//! - `GET http://169.254.169.254/hetzner/v1/userdata`: the user-data, raw (empty when none).
//! - Detected by DMI `sys_vendor` "Hetzner" (`product_serial` holds the instance-id).

use super::document_service::Document;
use super::metadata::ParseRoom;
use super::imds::Service;
use super::{DocumentError, Item};
use crate::json::JsonError;
use crate::out::Out;
use crate::yaml::{self, Arena, Kind, Node, Scalar};

pub const METADATA_PATH: &str = "/hetzner/v1/metadata";
pub const USER_DATA_PATH: &str = "/hetzner/v1/userdata";

pub const SERVICE: Service = Service::document(&Document { user_data: Some(USER_DATA_PATH), ..Document::at(METADATA_PATH, extract) });

/// Most YAML nodes of a metadata document (a server with several networks has ~100).
pub const NODES_LIMIT: usize = 512;
/// Most decoded scalar text of a metadata document (vendor-data included): the parse room
/// the metadata store keeps.
pub const TEXT_LIMIT: usize = super::metadata::PARSE_ROOM;

const NOT_TEXT: DocumentError = DocumentError::Json(JsonError::WrongType { expected: crate::json::Expected::String });

/// Copies `item` out of the metadata document into `out` (keys one per line); `Ok(None)`
/// when absent. User-data is a request of its own. `room` holds the parse's text.
pub fn extract(document: &[u8], item: Item, out: &mut [u8], room: &mut ParseRoom) -> Result<Option<usize>, DocumentError> {
    let key = match item {
        Item::InstanceId => "instance-id",
        Item::Hostname | Item::LocalHostname => "hostname",
        Item::SshKeys => "public-keys",
        Item::UserData => return Ok(None),
    };
    with_value(document, key, &mut |value, out| {
        let mut writer = Out::new(out);
        let too_large = |full: crate::out::Full| DocumentError::Json(JsonError::StringTooLong { limit: full.limit as u32 });
        match (item, value.kind()) {
            (Item::SshKeys, Kind::Sequence) => {
                for key in value.items() {
                    let Some(Scalar::Str(line)) = key.scalar() else { return Err(NOT_TEXT) };
                    writer.put_all(&[line.as_bytes(), b"\n"]).map_err(too_large)?;
                }
            }
            _ => match value.scalar() {
                Some(Scalar::Str(text)) => writer.put(text.as_bytes()).map_err(too_large)?,
                Some(Scalar::Int(n)) if n >= 0 => writer.put_decimal(n as u64).map_err(too_large)?,
                _ => return Err(NOT_TEXT),
            },
        }
        Ok(writer.len())
    }, out, room)
}

/// `network-config`, written as JSON into `out`; `Ok(None)` when absent. `room` as
/// `extract`'s.
pub fn network_config(document: &[u8], out: &mut [u8], room: &mut ParseRoom) -> Result<Option<usize>, DocumentError> {
    with_value(document, "network-config", &mut |value, out| {
        let limit = out.len();
        let mut writer = Out::new(out);
        yaml::write_json(value, &mut writer).map_err(|_| DocumentError::Json(JsonError::StringTooLong { limit: limit as u32 }))?;
        Ok(writer.len())
    }, out, room)
}

/// What is done with a key's value: its length written into the buffer.
type Then<'t> = dyn FnMut(yaml::NodeRef<'_>, &mut [u8]) -> Result<usize, DocumentError> + 't;

/// Parses the document and hands the value of the top-level `key` to `then`. One copy for
/// both callers, out of line: its frame holds the parse's nodes (14 KiB); their text, 32
/// KiB that the frame held before and probed whole on entry, is the caller's `room`.
#[inline(never)]
fn with_value(
    document: &[u8],
    key: &str,
    then: &mut Then<'_>,
    out: &mut [u8],
    room: &mut ParseRoom,
) -> Result<Option<usize>, DocumentError> {
    let mut nodes = [Node::EMPTY; NODES_LIMIT];
    let mut arena = Arena::new(&mut nodes, room);
    let root = arena.parse(document).map_err(DocumentError::Yaml)?;
    let root = arena.value(root);
    if root.kind() != Kind::Mapping {
        return Err(DocumentError::Json(JsonError::WrongType { expected: crate::json::Expected::Mapping }));
    }
    match root.get(key) {
        Some(value) if !value.is_null() => then(value, out).map(Some),
        _ => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As the service serves it (PyYAML's block style), with a quoted multi-line vendor_data.
    const DOC: &[u8] = b"availability-zone: fsn1-dc14
hostname: my-server
instance-id: 42
local-ipv4: ''
network-config:
  config:
  - mac_address: 96:00:00:1a:2b:3c
    name: eth0
    subnets:
    - ipv4: true
      type: dhcp
    - address: 2a01:4f8:c17:1234::1/64
      gateway: fe80::1
      ipv6: true
      type: static
    type: physical
  version: 1
public-ipv4: 192.0.2.10
public-keys:
- ssh-ed25519 AAAA a@b
- ssh-rsa BBBB c@d
region: eu-central
vendor_data: '#cloud-config

  runcmd:

  - [touch, /x]

  '
";

    fn get(document: &[u8], item: Item) -> Result<Option<Vec<u8>>, DocumentError> {
        // The room as a parse before left it: nothing read is taken from it unwritten.
        let (mut out, mut room) = ([0u8; 512], Box::new([0xa5u8; TEXT_LIMIT]));
        extract(document, item, &mut out, &mut room).map(|found| found.map(|n| out[..n].to_vec()))
    }

    #[test]
    fn values() {
        assert_eq!(get(DOC, Item::InstanceId).unwrap().unwrap(), b"42");
        assert_eq!(get(DOC, Item::Hostname).unwrap().unwrap(), b"my-server");
        assert_eq!(get(DOC, Item::SshKeys).unwrap().unwrap(), b"ssh-ed25519 AAAA a@b\nssh-rsa BBBB c@d\n");
        assert_eq!(get(DOC, Item::UserData).unwrap(), None);
        assert_eq!(get(b"hostname: x\npublic-keys: []\n", Item::SshKeys).unwrap().unwrap(), b"");
        assert_eq!(get(b"hostname: x\n", Item::SshKeys).unwrap(), None);
        assert!(matches!(get(b"hostname: [x]\n", Item::Hostname), Err(DocumentError::Json(_))));
        assert!(matches!(get(b"- a\n", Item::Hostname), Err(DocumentError::Json(_))));
        assert!(matches!(get(b"hostname: &a x\n", Item::Hostname), Err(DocumentError::Yaml(_))));
    }

    #[test]
    fn network_config_as_json() {
        let (mut out, mut room) = ([0u8; 512], Box::new([0u8; TEXT_LIMIT]));
        let len = network_config(DOC, &mut out, &mut room).unwrap().unwrap();
        assert_eq!(
            core::str::from_utf8(&out[..len]).unwrap(),
            r#"{"config":[{"mac_address":"96:00:00:1a:2b:3c","name":"eth0","subnets":[{"ipv4":true,"type":"dhcp"},{"address":"2a01:4f8:c17:1234::1/64","gateway":"fe80::1","ipv6":true,"type":"static"}],"type":"physical"}],"version":1}"#
        );
        assert_eq!(network_config(b"hostname: x\n", &mut out, &mut room), Ok(None));
        assert!(network_config(DOC, &mut out[..20], &mut room).is_err());
    }
}
