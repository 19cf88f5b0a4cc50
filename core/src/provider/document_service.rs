//! Where a document cloud's document and user-data are, and how a value is read out of
//! the document: what `imds::Service` names and `document`'s rounds follow.

use super::metadata::ParseRoom;
use super::{DocumentError, Item};

/// An item's value out of the document into the buffer: its length, `None` if absent.
/// The last is room for a parse of the document.
pub type Extract = fn(&[u8], Item, &mut [u8], &mut ParseRoom) -> Result<Option<usize>, DocumentError>;

/// Where a cloud's document and user-data are, and how a value is read out of it.
pub struct Document {
    pub path: &'static str,
    /// Asked, without the service's headers, when `path` is refused (401, 403) or
    /// absent: OCI's version 1.
    pub fallback: Option<&'static str>,
    /// User-data served as a file of its own (404: none).
    pub user_data: Option<&'static str>,
    /// `user_data` is served only to a privileged source port (Scaleway's).
    pub privileged_user_data: bool,
    /// Asked when `user_data` is absent: Incus's older key.
    pub legacy_user_data: Option<&'static str>,
    pub extract: Extract,
}

impl Document {
    pub const fn at(path: &'static str, extract: Extract) -> Document {
        Document { path, fallback: None, user_data: None, privileged_user_data: false, legacy_user_data: None, extract }
    }
}
