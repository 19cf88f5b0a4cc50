//! Metadata services: the requests each cloud expects, in what rounds, and the documents
//! it answers with. Each cloud's module holds its whole protocol (`SERVICE`); `imds`
//! runs a round over the host's HTTP, `metadata` keeps what arrived.

pub mod aws;
pub mod azure;
pub mod azure_report;
pub mod digitalocean;
pub mod document;
pub mod document_service;
pub mod gcp;
pub mod hetzner;
pub mod imds;
pub mod incus;
pub mod key_listing;
pub mod metadata;
pub mod oci;
pub mod openstack;
pub mod scaleway;
pub mod vultr;

pub use crate::metadata_item::Item;
use crate::config::Cloud;
use crate::features::{Built, Feature};
use crate::json::{Expected, JsonError, JsonText};

/// How `cloud`'s metadata service is spoken to, for the clouds of the build (`BUILT`,
/// `features::Built::bits`): a cloud the build lacks, or one without a service of its
/// own (NoCloud, ConfigDrive), gets the plain one. The build is a const generic, so a
/// build keeps only its own clouds' services.
pub fn service<const BUILT: u32>(cloud: Cloud) -> &'static imds::Service {
    let built = Built::from_bits(BUILT);
    match cloud {
        Cloud::Aws if built.has(Feature::Aws) => &aws::SERVICE,
        Cloud::Gcp if built.has(Feature::Gcp) => &gcp::SERVICE,
        Cloud::Oci if built.has(Feature::Oci) => &oci::SERVICE,
        Cloud::Azure if built.has(Feature::Azure) => &azure::SERVICE,
        Cloud::Openstack if built.has(Feature::Configdrive) => &openstack::SERVICE,
        Cloud::Hetzner if built.has(Feature::Hetzner) => &hetzner::SERVICE,
        Cloud::Digitalocean if built.has(Feature::Digitalocean) => &digitalocean::SERVICE,
        Cloud::Scaleway if built.has(Feature::Scaleway) => &scaleway::SERVICE,
        Cloud::Incus if built.has(Feature::Incus) => &incus::SERVICE,
        Cloud::Vultr if built.has(Feature::Vultr) => &vultr::SERVICE,
        _ => &imds::Service::PLAIN,
    }
}

/// Every metadata service wisp knows listens on this address, port 80.
pub const IMDS_ADDRESS: [u8; 4] = [169, 254, 169, 254];
pub const IMDS_HOST: &str = "169.254.169.254";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DocumentError {
    Json(JsonError),
    Base64(crate::base64::Error),
    Yaml(crate::yaml::Error),
}

impl From<JsonError> for DocumentError {
    fn from(e: JsonError) -> Self {
        DocumentError::Json(e)
    }
}

impl core::fmt::Display for DocumentError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            DocumentError::Json(e) => core::fmt::Display::fmt(e, f),
            DocumentError::Base64(e) => {
                f.write_str("user-data: ")?;
                core::fmt::Display::fmt(e, f)
            }
            DocumentError::Yaml(e) => {
                f.write_str("YAML ")?;
                core::fmt::Display::fmt(e, f)
            }
        }
    }
}

/// A document's error with its `Display` reached through a pointer taken where the error is
/// made (the document clouds' rounds): a build whose clouds read no document (AWS-only)
/// then links none of the JSON, base64 and YAML readers' texts (2.8 KB), which a `match`
/// arm saying the error would keep.
#[derive(Clone, Copy, Debug)]
pub struct DocumentFailure {
    pub error: DocumentError,
    say: fn(&DocumentError, &mut core::fmt::Formatter<'_>) -> core::fmt::Result,
}

impl From<DocumentError> for DocumentFailure {
    fn from(error: DocumentError) -> Self {
        DocumentFailure { error, say: <DocumentError as core::fmt::Display>::fmt }
    }
}

impl PartialEq for DocumentFailure {
    fn eq(&self, other: &Self) -> bool {
        self.error == other.error
    }
}

impl Eq for DocumentFailure {}

impl core::fmt::Display for DocumentFailure {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        (self.say)(&self.error, f)
    }
}

/// A string at `path` of a JSON document, unescaped (and base64-decoded in place when
/// `base64`) into `out`; `Ok(None)` when absent.
pub(crate) fn document_value(document: &[u8], path: &[&str], base64: bool, out: &mut [u8]) -> Result<Option<usize>, DocumentError> {
    let Some(value) = JsonText::find(document, path)? else { return Ok(None) };
    let len = value.unescape_into(document, out)?;
    if !base64 {
        return Ok(Some(len));
    }
    decode_base64_in_place(out, len).map(Some)
}

/// The member `key` of a JSON document's object into `out`: for `SshKeys` an array of
/// keys (or of objects whose `field` is the key) one per line, else a string or number;
/// `Ok(None)` when absent. The JSON document clouds read every value through it.
pub(crate) fn json_member(document: &[u8], key: &str, item: Item, field: Option<&str>, out: &mut [u8]) -> Result<Option<usize>, DocumentError> {
    let Some(value) = JsonText::find(document, &[key])? else { return Ok(None) };
    match item {
        Item::SshKeys => json_lines(document, value, field, out),
        _ => json_text(document, value, out),
    }
    .map(Some)
}

/// The value `key` of a NoCloud meta-data document into `out`, as OpenStack and Incus
/// serve one; a document of another form is not `expected`.
pub(crate) fn meta_data_value(document: &[u8], key: &str, expected: Expected, out: &mut [u8]) -> Result<Option<usize>, DocumentError> {
    use crate::seed::nocloud::{self, MetaDataError};
    nocloud::value(document, key, out).map_err(|e| match e {
        MetaDataError::Json(e) => DocumentError::Json(e),
        MetaDataError::TooLarge { limit } => DocumentError::Json(JsonError::StringTooLong { limit }),
        MetaDataError::Unsupported { .. } => DocumentError::Json(JsonError::WrongType { expected }),
    })
}

/// A JSON string (unescaped) or number (as written) into `out`.
fn json_text(document: &[u8], value: JsonText<'_>, out: &mut [u8]) -> Result<usize, DocumentError> {
    if !matches!(value.text.first(), Some(b'-' | b'0'..=b'9')) {
        return Ok(value.unescape_into(document, out)?);
    }
    let limit = out.len();
    let slot = out.get_mut(..value.text.len()).ok_or(JsonError::StringTooLong { limit: limit as u32 })?;
    slot.copy_from_slice(value.text);
    Ok(value.text.len())
}

/// An array's strings, or the member `field` of each of its objects, one per line.
fn json_lines(document: &[u8], value: JsonText<'_>, field: Option<&str>, out: &mut [u8]) -> Result<usize, DocumentError> {
    let full = JsonError::StringTooLong { limit: out.len() as u32 };
    let mut written = 0;
    let mut elements = value.elements()?;
    while let Some(mut element) = elements.next_element() {
        if let Some(field) = field {
            let Some(member) = element.get(field)? else { continue };
            element = member;
        }
        written += element.unescape_into(document, &mut out[written..])?;
        *out.get_mut(written).ok_or(full)? = b'\n';
        written += 1;
    }
    Ok(written)
}

/// Base64 text at the start of `buf` decoded over itself.
pub fn decode_base64_in_place(buf: &mut [u8], len: usize) -> Result<usize, DocumentError> {
    crate::base64::decode_in_place(&mut buf[..len]).map_err(DocumentError::Base64)
}

#[cfg(test)]
mod service_tests {
    use super::*;

    const AWS_AND_CONFIGDRIVE: u32 = Built::of(&[(Feature::Aws, true), (Feature::Configdrive, true)]).bits();

    #[test]
    fn a_cloud_gets_its_service_only_when_built() {
        let aws = service::<AWS_AND_CONFIGDRIVE>(Cloud::Aws);
        assert!(aws.session_token.is_some() && aws.rounds.is_some());
        let openstack = service::<AWS_AND_CONFIGDRIVE>(Cloud::Openstack);
        assert!(openstack.document.is_some(), "OpenStack's service comes with configdrive");
        for plain in [Cloud::Gcp, Cloud::Azure, Cloud::Nocloud, Cloud::Configdrive, Cloud::Auto] {
            let service = service::<AWS_AND_CONFIGDRIVE>(plain);
            assert!(service.session_token.is_none() && service.rounds.is_none() && service.document.is_none() && service.headers.is_empty(), "{plain:?}");
        }
        const GCP: u32 = Built::of(&[(Feature::Gcp, true)]).bits();
        assert_eq!(service::<GCP>(Cloud::Gcp).headers.len(), 1);
    }
}
