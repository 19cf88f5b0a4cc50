//! cloud-init's rules for user-data, whole: gzip, MIME multipart, base64 parts,
//! includes fetched and kept, boothooks.

use wisp_core::mime::{self, Entity};
use wisp_core::text::Decimal;
use wisp_core::userdata::{self, Kind, TransferEncoding};
use wisp_core::{base64, gzip, http};
use wisp_os_linux::fs::ReadError;

use super::{check_built, var_child, Includes, Part, UserData};
use crate::context::Context;
use crate::output::{Message, Os, Shown};

/// Deepest nesting of multipart documents and includes, together.
const DEPTH_LIMIT: usize = 4;
/// Where fetched includes are kept, under TINY_CLOUD_VAR: the early phase fetches them, the
/// later phases (which may run without the network) read them back.
use wisp_core::state_files::INCLUDES_DIR;

pub use wisp_core::gzip::DEFLATE_RATIO_LIMIT;

/// Decodes `document` (any user-data: raw, gzip'd, MIME) into its parts.
pub fn decode(ctx: &Context<'_>, document: &'static [u8], includes: Includes<'_>) -> Result<UserData, Message> {
    let limit = ctx.config.userdata_limit as usize;
    let mut decoder = Decoder { ctx, includes, budget: limit, parts: heapless::Vec::new() };
    decoder.document(document, 0)?;
    Ok(UserData { parts: decoder.parts })
}

struct Decoder<'c, 't> {
    ctx: &'c Context<'c>,
    includes: Includes<'t>,
    /// Bytes decoding may still produce: each output is mapped from it, sized to its input.
    budget: usize,
    parts: heapless::Vec<Part, { mime::PARTS_LIMIT }>,
}

impl Decoder<'_, '_> {
    /// A whole document, as the top of user-data or an included one is.
    fn document(&mut self, data: &'static [u8], depth: usize) -> Result<(), Message> {
        // Includes nest documents as multipart nests entities: both count against the limit,
        // so a URL that includes itself ends here.
        nesting(depth)?;
        // Whatever its form: a plain document counts as a decoded one does.
        if data.len() > self.budget {
            return Err(msg!("user-data: larger than WISP_USERDATA_LIMIT ({} bytes)", wisp_core::text::Decimal(self.ctx.config.userdata_limit.into())));
        }
        let data = self.gunzip(data)?;
        if mime::is_mime(data) {
            return self.entity(Entity::parse(data), depth);
        }
        self.leaf(data, b"text/plain", None, depth)?;
        if let (0, [part]) = (depth, &mut self.parts[..]) {
            part.whole = true;
        }
        Ok(())
    }

    fn entity(&mut self, entity: Entity<'static>, depth: usize) -> Result<(), Message> {
        nesting(depth)?;
        if entity.is_multipart() {
            for part in entity.parts().map_err(|e| msg!("user-data: {e}"))? {
                self.entity(part, depth + 1)?;
            }
            return Ok(());
        }
        let number = self.parts.len() + 1;
        let encoding = entity.header("Content-Transfer-Encoding");
        let body = match TransferEncoding::parse(encoding) {
            TransferEncoding::Identity => entity.body,
            TransferEncoding::Base64 => {
                let most = entity.body.len() / 4 * 3 + 3;
                self.take(most, |out| base64::decode(entity.body, out).map_err(|e| msg!("user-data part {number}: {e}", number = Decimal(number as u64))))?
            }
            TransferEncoding::Unsupported => {
                let e = encoding.unwrap_or(b"").trim_ascii();
                return Err(msg!("user-data part {number}: unsupported transfer encoding {}", Shown(e), number = Decimal(number as u64)));
            }
        };
        let filename = entity.parameter("Content-Disposition", "filename");
        self.leaf(body, entity.media_type(), filename, depth)
    }

    /// A part that is not multipart: its kind by cloud-init's rules, includes followed.
    fn leaf(&mut self, body: &'static [u8], media_type: &[u8], filename: Option<&[u8]>, depth: usize) -> Result<(), Message> {
        let number = self.parts.len() + 1;
        if let Some(name) = gzip::other_compression(body) {
            return Err(msg!("user-data part {number} is {name}-compressed: unsupported compression (wisp decodes gzip only)", number = Decimal(number as u64), name = wisp_core::text::Plain(name)));
        }
        if userdata::is_gzip_type(media_type) && !gzip::is_gzip(body) {
            return Err(msg!("user-data part {number} is labelled {} but is not gzip data", Shown(media_type), number = Decimal(number as u64)));
        }
        // A gzip'd part's own type no longer says what it is: its text does.
        let (body, media_type) = if gzip::is_gzip(body) { (self.gunzip(body)?, &b"text/plain"[..]) } else { (body, media_type) };
        let kind = userdata::kind_of(media_type, body);
        if matches!(kind, Kind::Include | Kind::IncludeOnce) && !matches!(self.includes, Includes::Listed) {
            return self.include(body, kind == Kind::IncludeOnce, depth);
        }
        let mut label = heapless::String::new();
        let _ = core::fmt::write(&mut label, format_args!("{}", Shown(&media_type[..media_type.len().min(60)])));
        let filename = filename
            .filter(|name| userdata::is_safe_script_name(name))
            .and_then(|name| core::str::from_utf8(name).ok())
            .and_then(|name| heapless::String::try_from(name).ok());
        check_built(kind, number)?;
        let part = Part { kind, media_type: label, filename, bytes: body, whole: false };
        self.parts.push(part).map_err(|_| msg!("user-data: more than {} parts", Decimal(mime::PARTS_LIMIT as u64)))
    }

    /// Each URL of an include document, decoded as a document of its own.
    fn include(&mut self, list: &'static [u8], once_by_default: bool, depth: usize) -> Result<(), Message> {
        for (url, once) in userdata::include_urls(list) {
            let once = once || once_by_default;
            let text = core::str::from_utf8(url).map_err(|_| msg!("#include: a URL is not UTF-8"))?;
            let content = self.fetch_include(text, once)?;
            self.document(content, depth + 1)?;
        }
        Ok(())
    }

    /// The document at `url`: fetched and kept, or read back from what was kept.
    #[inline(never)]
    fn fetch_include(&mut self, url: &str, once: bool) -> Result<&'static [u8], Message> {
        let parsed = http::parse_url(url).map_err(|e| msg!("#include {}: {e}", Shown(url.as_bytes())))?;
        let mut name = heapless::String::<24>::new();
        // `{:016x}`, without core's padding machinery: the hash's eight bytes, highest first.
        let hash = fnv1a(url.as_bytes());
        for byte in hash.to_be_bytes() {
            let _ = core::fmt::write(&mut name, format_args!("{}", wisp_core::text::Hex(byte)));
        }
        let kept = self.ctx.create_dir(var_child(self.ctx, INCLUDES_DIR)?.as_bytes())?;
        let shown = Shown(url.as_bytes());
        let timeouts = match self.includes {
            Includes::Fetch(timeouts) if !(once && matches!(kept.metadata(name.as_bytes()), Ok(Some(_)))) => timeouts,
            Includes::Fetch(_) | Includes::Kept | Includes::Listed => {
                let read = |out: &mut [u8]| match kept.read(name.as_bytes(), out) {
                    Ok(Some(len)) => Ok(len),
                    Ok(None) => Err(msg!("#include {shown}: not fetched yet (the early phase fetches includes)")),
                    Err(e) => Err(msg!("#include {shown}: {}", read_error(e))),
                };
                return self.take(usize::MAX, read);
            }
        };
        let content = self.take(usize::MAX, |out| match crate::fetch::get(parsed.address, parsed.port, parsed.host, parsed.path, out, timeouts) {
            Ok(Some(len)) => Ok(len),
            Ok(None) => Err(msg!("#include {shown}: HTTP status 404")),
            Err(e) => Err(msg!("#include: {e}")),
        })?;
        kept.write_atomic(name.as_bytes(), content, 0o600, None).map_err(|e| msg!("#include {shown}: cannot keep it: {}", Os(e)))?;
        Ok(content)
    }

    fn gunzip(&mut self, data: &'static [u8]) -> Result<&'static [u8], Message> {
        if !gzip::is_gzip(data) {
            if let Some(name) = gzip::other_compression(data) {
                return Err(msg!("user-data is {name}-compressed: unsupported compression (wisp decodes gzip only)", name = wisp_core::text::Plain(name)));
            }
            return Ok(data);
        }
        let most = data.len().saturating_mul(DEFLATE_RATIO_LIMIT);
        self.take(most, |out| gzip::decompress(data, out).map_err(|e| msg!("user-data: {e}")))
    }

    /// Lets `fill` write into room for `most` bytes (less when the budget has less left),
    /// and keeps what it wrote. A fill that finds the room too small fails naming its size.
    fn take(&mut self, most: usize, fill: impl FnOnce(&mut [u8]) -> Result<usize, Message>) -> Result<&'static [u8], Message> {
        let space = crate::memory::reserve(most.min(self.budget), "decoded user-data")?;
        let len = fill(space)?.min(space.len());
        self.budget -= len;
        Ok(&space[..len])
    }
}

fn nesting(depth: usize) -> Result<(), Message> {
    match depth > DEPTH_LIMIT {
        true => Err(msg!("user-data: multipart or includes nested deeper than {limit} levels", limit = Decimal(DEPTH_LIMIT as u64))),
        false => Ok(()),
    }
}

fn read_error(e: ReadError) -> Message {
    match e {
        ReadError::TooLarge { limit } => msg!("larger than {limit} bytes", limit = Decimal(limit as u64)),
        ReadError::Io(e) => msg!("{}", Os(e)),
    }
}

/// FNV-1a: names a kept include after its URL, with no URL byte in a file name.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| (hash ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3))
}

