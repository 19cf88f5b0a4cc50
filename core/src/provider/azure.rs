//! Azure's instance metadata service (one JSON document, `Metadata: true`) and the
//! wireserver's provisioning report, without which a VM never finishes provisioning.

use super::document_service::Document;
use super::imds::Service;
use super::{document_value, DocumentError, Item};
use crate::json::{JsonError, JsonText};
use crate::out::{Full, Out};

pub const METADATA: (&str, &str) = ("Metadata", "true");
pub const INSTANCE_PATH: &str = "/metadata/instance?api-version=2021-02-01";

pub const SERVICE: Service = Service { headers: &[METADATA], ..Service::document(&Document::at(INSTANCE_PATH, |document, item, out, _| extract(document, item, out))) };
pub const WIRESERVER_ADDRESS: [u8; 4] = [168, 63, 129, 16];
pub const WIRESERVER_HOST: &str = "168.63.129.16";
pub const HEALTH_PATH: &str = "/provisioning/health";
pub const READY: &[u8] = br#"{"state":"Ready"}"#;
pub const GOAL_STATE_PATH: &str = "/machine/?comp=goalstate";
pub const HEALTH_REPORT_PATH: &str = "/machine?comp=health";
pub const WIRESERVER_HEADERS: [(&str, &str); 2] = [("x-ms-agent-name", "wisp"), ("x-ms-version", "2012-11-30")];

/// Copies `item` out of the instance document into `out`; user-data is base64-decoded,
/// and the keys are joined one per line (their `\r\n` goes with the line ends).
pub fn extract(document: &[u8], item: Item, out: &mut [u8]) -> Result<Option<usize>, DocumentError> {
    match item {
        Item::InstanceId => document_value(document, &["compute", "vmId"], false, out),
        Item::Hostname | Item::LocalHostname => document_value(document, &["compute", "osProfile", "computerName"], false, out),
        Item::UserData => document_value(document, &["compute", "userData"], true, out),
        Item::SshKeys => {
            let Some(keys) = JsonText::find(document, &["compute", "publicKeys"])? else { return Ok(None) };
            let mut elements = keys.elements()?;
            let limit = out.len();
            let mut written = 0;
            while let Some(key) = elements.next_element() {
                let Some(data) = key.get("keyData")? else { continue };
                let room = &mut out[written..];
                let len = data.unescape_into(document, room)?;
                let line = room[..len].trim_ascii_end().len();
                let slot = room.get_mut(line).ok_or(DocumentError::Json(JsonError::StringTooLong { limit: limit as u32 }))?;
                *slot = b'\n';
                written += line + 1;
            }
            Ok(Some(written))
        }
    }
}

/// The text of the first element named `local` (any namespace prefix) in `ovf-env.xml`.
pub fn ovf_element<'a>(xml: &'a [u8], local: &[u8]) -> Option<&'a [u8]> {
    next_element(xml, local, 0).map(|(text, _)| text)
}

/// The texts of every element named `local`, in document order.
pub fn ovf_elements<'a>(xml: &'a [u8], local: &'a [u8]) -> impl Iterator<Item = &'a [u8]> + 'a {
    let mut at = 0;
    core::iter::from_fn(move || {
        let (text, next) = next_element(xml, local, at)?;
        at = next;
        Some(text)
    })
}

/// The next element named `local` at or after `at`: its text and where to look on.
fn next_element<'a>(xml: &'a [u8], local: &[u8], mut at: usize) -> Option<(&'a [u8], usize)> {
    while let Some(open) = xml[at..].iter().position(|&b| b == b'<').map(|i| at + i) {
        let end = open + xml[open..].iter().position(|&b| b == b'>')?;
        let tag = &xml[open + 1..end];
        let name = tag.split(|&b| b == b' ' || b == b'/').next().unwrap_or(tag);
        let name = name.iter().position(|&b| b == b':').map_or(name, |colon| &name[colon + 1..]);
        if name == local && !tag.ends_with(b"/") && tag.first() != Some(&b'/') {
            let start = end + 1;
            let close = start + xml[start..].iter().position(|&b| b == b'<')?;
            return Some((xml[start..close].trim_ascii(), close));
        }
        at = end + 1;
    }
    None
}

/// The SSH keys given in full (`PublicKey/Value`), one per line into `out`.
pub fn ovf_keys(xml: &[u8], out: &mut [u8]) -> Result<usize, Full> {
    let mut writer = Out::new(out);
    for key in ovf_elements(xml, b"Value").filter(|key| !key.is_empty()) {
        writer.put_all(&[key, b"\n"])?;
    }
    Ok(writer.len())
}

/// `CustomData` of `ovf-env.xml`, base64-decoded into `out`; `Ok(None)` when absent or
/// empty.
pub fn ovf_custom_data(xml: &[u8], out: &mut [u8]) -> Result<Option<usize>, DocumentError> {
    let Some(text) = ovf_element(xml, b"CustomData").filter(|text| !text.is_empty()) else { return Ok(None) };
    crate::base64::decode(text, out).map(Some).map_err(DocumentError::Base64)
}

/// The JSON report of a failed provisioning, its description cut to what fits.
pub fn not_ready(description: &[u8], out: &mut [u8]) -> Result<usize, Full> {
    let mut writer = Out::new(out);
    writer.put(br#"{"state":"NotReady","details":{"subStatus":"ProvisioningFailed","description":""#)?;
    for &byte in description.iter().take(200) {
        match byte {
            b'"' | b'\\' => writer.put(&[b'\\', byte])?,
            0x20..=0x7e => writer.put(&[byte])?,
            _ => writer.put(b" ")?,
        }
    }
    writer.put(br#""}}"#)?;
    Ok(writer.len())
}

/// The goal state's identifiers the health report must repeat.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GoalState<'a> {
    pub incarnation: &'a [u8],
    pub container_id: &'a [u8],
    pub instance_id: &'a [u8],
}

/// Reads `<Incarnation>`, `<ContainerId>` and the first `<InstanceId>` of a goal state.
pub fn parse_goal_state(xml: &[u8]) -> Option<GoalState<'_>> {
    let state = GoalState {
        incarnation: element(xml, b"Incarnation")?,
        container_id: element(xml, b"ContainerId")?,
        instance_id: element(xml, b"InstanceId")?,
    };
    let plain = |v: &[u8]| !v.is_empty() && v.iter().all(|&b| b.is_ascii_alphanumeric() || b"-._".contains(&b));
    (plain(state.incarnation) && plain(state.container_id) && plain(state.instance_id)).then_some(state)
}

fn element<'a>(xml: &'a [u8], name: &[u8]) -> Option<&'a [u8]> {
    let open_at = xml.windows(name.len() + 2).position(|w| w[0] == b'<' && &w[1..name.len() + 1] == name && w[name.len() + 1] == b'>')?;
    let start = open_at + name.len() + 2;
    let end = start + xml[start..].iter().position(|&b| b == b'<')?;
    Some(xml[start..end].trim_ascii())
}

/// The older protocol's health report: Ready for the goal state's role instance.
pub fn health_report(goal: &GoalState<'_>, out: &mut [u8]) -> Result<usize, Full> {
    let mut writer = Out::new(out);
    writer.put_all(&[
        b"<?xml version=\"1.0\" encoding=\"utf-8\"?><Health xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" xmlns:xsd=\"http://www.w3.org/2001/XMLSchema\"><GoalStateIncarnation>",
        goal.incarnation,
        b"</GoalStateIncarnation><Container><ContainerId>",
        goal.container_id,
        b"</ContainerId><RoleInstanceList><Role><InstanceId>",
        goal.instance_id,
        b"</InstanceId><Health><State>Ready</State></Health></Role></RoleInstanceList></Container></Health>",
    ])?;
    Ok(writer.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &[u8] = br#"{"compute":{"vmId":"02aab8a4-74ef-476e-8182-f6d2ba4166a6","osProfile":{"computerName":"examplevm","adminUsername":"azureuser"},
        "publicKeys":[{"keyData":"ssh-rsa AAAA a\r\n","path":"/home/azureuser/.ssh/authorized_keys"},{"keyData":"ssh-ed25519 BBBB b","path":"p"}],
        "userData":"I2Nsb3VkLWNvbmZpZwo="},"network":{}}"#;

    fn get(item: Item) -> Option<Vec<u8>> {
        crate::fuzz::seed("ovf_env", DOC);
        let mut out = [0u8; 256];
        extract(DOC, item, &mut out).unwrap().map(|n| out[..n].to_vec())
    }

    #[test]
    fn values() {
        assert_eq!(get(Item::InstanceId).unwrap(), b"02aab8a4-74ef-476e-8182-f6d2ba4166a6");
        assert_eq!(get(Item::Hostname).unwrap(), b"examplevm");
        assert_eq!(get(Item::SshKeys).unwrap(), b"ssh-rsa AAAA a\nssh-ed25519 BBBB b\n");
        assert_eq!(get(Item::UserData).unwrap(), b"#cloud-config\n");
        let mut out = [0u8; 8];
        assert!(extract(DOC, Item::SshKeys, &mut out).is_err());
        assert_eq!(extract(br#"{"compute":{}}"#, Item::SshKeys, &mut out), Ok(None));
    }

    #[test]
    fn ovf_environment() {
        let xml = br#"<?xml version="1.0" encoding="utf-8"?>
<ns0:Environment xmlns:ns0="http://schemas.dmtf.org/ovf/environment/1" xmlns:ns1="http://schemas.microsoft.com/windowsazure">
 <ns1:ProvisioningSection><ns1:Version>1.0</ns1:Version>
  <ns1:LinuxProvisioningConfigurationSet>
   <ns1:ConfigurationSetType>LinuxProvisioningConfiguration</ns1:ConfigurationSetType>
   <ns1:HostName>azure-vm</ns1:HostName><ns1:UserName>azureuser</ns1:UserName>
   <ns1:SSH><ns1:PublicKeys><ns1:PublicKey><ns1:Path>/home/azureuser/.ssh/authorized_keys</ns1:Path>
   <ns1:Value>ssh-ed25519 AAAA</ns1:Value></ns1:PublicKey></ns1:PublicKeys></ns1:SSH>
   <ns1:CustomData>I2Nsb3VkLWNvbmZpZwo=</ns1:CustomData>
  </ns1:LinuxProvisioningConfigurationSet></ns1:ProvisioningSection></ns0:Environment>"#;
        crate::fuzz::seed("ovf_env", xml);
        assert_eq!(ovf_element(xml, b"HostName"), Some(&b"azure-vm"[..]));
        assert_eq!(ovf_element(xml, b"Value"), Some(&b"ssh-ed25519 AAAA"[..]));
        let mut keys = [0u8; 64];
        assert_eq!(ovf_keys(xml, &mut keys), Ok(17));
        assert_eq!(&keys[..17], b"ssh-ed25519 AAAA\n");
        let mut out = [0u8; 64];
        assert_eq!(ovf_custom_data(xml, &mut out), Ok(Some(14)));
        assert_eq!(&out[..14], b"#cloud-config\n");
        assert_eq!(ovf_custom_data(b"<CustomData></CustomData>", &mut out), Ok(None));
        assert_eq!(ovf_custom_data(b"<Environment/>", &mut out), Ok(None));
        assert!(matches!(ovf_custom_data(b"<CustomData>@@</CustomData>", &mut out), Err(DocumentError::Base64(_))));
    }

    #[test]
    fn reports() {
        let mut out = [0u8; 512];
        let n = not_ready(b"main/set_hostname: \"bad\"\nname", &mut out).unwrap();
        assert_eq!(&out[..n], br#"{"state":"NotReady","details":{"subStatus":"ProvisioningFailed","description":"main/set_hostname: \"bad\" name"}}"#);
        let goal = b"<GoalState><Incarnation>3</Incarnation><Container><ContainerId>c-1</ContainerId><RoleInstanceList><RoleInstance><InstanceId>i_1.0</InstanceId></RoleInstance></RoleInstanceList></Container></GoalState>";
        let state = parse_goal_state(goal).unwrap();
        assert_eq!((state.incarnation, state.container_id, state.instance_id), (&b"3"[..], &b"c-1"[..], &b"i_1.0"[..]));
        let n = health_report(&state, &mut out).unwrap();
        let xml = std::str::from_utf8(&out[..n]).unwrap();
        assert!(xml.contains("<GoalStateIncarnation>3</GoalStateIncarnation>") && xml.contains("<InstanceId>i_1.0</InstanceId>"));
        assert_eq!(parse_goal_state(b"<Incarnation>1</Incarnation>"), None);
        assert_eq!(parse_goal_state(b"<Incarnation>1</Incarnation><ContainerId>a\"b</ContainerId><InstanceId>x</InstanceId>"), None);
    }
}
