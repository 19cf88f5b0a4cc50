//! User-data in a build without the `userdata` feature: one plain document, used whole
//! (a `#!` script, or `#cloud-config` where that feature is built). What only the full
//! decoder reads (gzip, MIME multipart, includes, boothooks) is refused by name.

use wisp_core::userdata::{self, Kind};
use wisp_core::{gzip, mime};

use super::{check_built, Includes, Part, UserData};
use crate::context::Context;
use crate::output::Message;

pub fn decode(ctx: &Context<'_>, document: &'static [u8], _: Includes<'_>) -> Result<UserData, Message> {
    // Whatever its form: a plain document is bound as a decoded one is.
    if document.len() > ctx.config.userdata_limit as usize {
        return Err(msg!("user-data: larger than WISP_USERDATA_LIMIT ({} bytes)", wisp_core::text::Decimal(ctx.config.userdata_limit.into())));
    }
    if let Some(name) = gzip::other_compression(document) {
        return Err(msg!("user-data is {name}-compressed: unsupported compression (wisp decodes gzip only)", name = wisp_core::text::Plain(name)));
    }
    let kind = userdata::sniff(document);
    let refused = match kind {
        _ if gzip::is_gzip(document) => Some("gzip'd user-data"),
        _ if mime::is_mime(document) => Some("MIME multipart user-data"),
        Kind::Include | Kind::IncludeOnce => Some("#include user-data"),
        Kind::Boothook => Some("#cloud-boothook user-data"),
        _ => None,
    };
    if let Some(what) = refused {
        return Err(crate::features::missing(what, "userdata"));
    }
    check_built(kind, 1)?;
    let mut parts = heapless::Vec::new();
    let media_type = heapless::String::try_from("text/plain").unwrap_or_default();
    let _ = parts.push(Part { kind, media_type, filename: None, bytes: document, whole: true });
    Ok(UserData { parts })
}
