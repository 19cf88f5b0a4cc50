//! User-data, decoded whole by cloud-init's rules before any of it is used: gunzipped,
//! its MIME tree walked, base64 parts decoded, gzip'd parts inflated, and `#include`s
//! replaced by the documents they name (fetched by the early phase and kept under
//! TINY_CLOUD_VAR for the later ones). A document that does not decode, or an include
//! that cannot be fetched, is an error: nothing of it is run or written. A build without
//! MIME support reads one plain document only (`decode_plain`).

use core::fmt;

use crate::host::fetch::Fetch;
use crate::host::files::Files;
use crate::host::messages::Messages;
use crate::host::room::Room;
use crate::mime::{self, Entity};
use crate::retry::Timeouts;
use crate::state_files::INCLUDES_DIR;
use crate::text::{Decimal, Hex, Plain};
use crate::userdata::{self, Kind, Part, TransferEncoding, UserData};
use crate::userdata_scripts::ScriptPath;
use crate::{base64, gzip, http};

/// Deepest nesting of multipart documents and includes, together.
pub const DEPTH_LIMIT: usize = 4;
// The nesting and part-count errors say their limits as literals, not numbers formatted
// at each.
const _: () = assert!(DEPTH_LIMIT == 4 && mime::PARTS_LIMIT == 64);

/// How `#include` URLs are resolved.
#[derive(Clone, Copy)]
pub enum Includes<'t> {
    /// Fetched (`#include-once` only when not fetched before) and kept for later phases.
    Fetch(&'t Timeouts),
    /// Read back from what an earlier phase fetched.
    Kept,
    /// Left as parts of their own, not followed (`wisp userdata show`).
    Listed,
}

/// What a decoding is bound by and where it keeps includes.
#[derive(Clone, Copy)]
pub struct Decoding<'a> {
    /// TINY_CLOUD_VAR, inside the root.
    pub var_dir: &'a [u8],
    /// WISP_USERDATA_LIMIT: the most bytes decoding may produce.
    pub limit: usize,
    pub includes: Includes<'a>,
    /// Whether this build applies `#cloud-config`.
    pub cloud_config: bool,
}

/// `document` decoded by `decode` (`MIME`: a build that reads MIME) or `decode_plain`.
pub fn decode_any<const MIME: bool, H: Files + Room + Fetch>(host: &mut H, document: &'static [u8], decoding: Decoding<'_>) -> Result<UserData<'static>, H::Text> {
    match MIME {
        true => decode(host, document, decoding),
        false => decode_plain(host, document, decoding),
    }
}

/// Decodes `document` (any user-data: raw, gzip'd, MIME) into its parts.
pub fn decode<H: Files + Room + Fetch>(host: &mut H, document: &'static [u8], decoding: Decoding<'_>) -> Result<UserData<'static>, H::Text> {
    let mut decoder = Decoder { host, decoding, budget: decoding.limit, parts: heapless::Vec::new() };
    decoder.document(document, 0)?;
    Ok(UserData { parts: decoder.parts })
}

/// User-data in a build without MIME support: one plain document, used whole (a `#!`
/// script, or `#cloud-config` where that is built). What only `decode` reads (gzip, MIME
/// multipart, includes, boothooks) is refused by name.
pub fn decode_plain<H: Messages>(host: &H, document: &'static [u8], decoding: Decoding<'_>) -> Result<UserData<'static>, H::Text> {
    // Whatever its form: a plain document is bound as a decoded one is.
    if document.len() > decoding.limit {
        return Err(too_large(host, decoding.limit));
    }
    if let Some(name) = gzip::other_compression(document) {
        return Err(host.text(format_args!("user-data is {name}-compressed: unsupported compression (wisp decodes gzip only)", name = Plain(name))));
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
        return Err(missing(host, format_args!("{}", Plain(what)), "userdata"));
    }
    check_built(host, kind, 1, decoding.cloud_config)?;
    let mut parts = heapless::Vec::new();
    let _ = parts.push(Part { kind, media_type: b"text/plain", filename: None, bytes: document, whole: true });
    Ok(UserData { parts })
}

struct Decoder<'h, 'd, H> {
    host: &'h mut H,
    decoding: Decoding<'d>,
    /// Bytes decoding may still produce: each output is kept from it, sized to its input.
    budget: usize,
    parts: heapless::Vec<Part<'static>, { mime::PARTS_LIMIT }>,
}

impl<H: Files + Room + Fetch> Decoder<'_, '_, H> {
    /// A whole document, as the top of user-data or an included one is.
    fn document(&mut self, data: &'static [u8], depth: usize) -> Result<(), H::Text> {
        // Includes nest documents as multipart nests entities: both count against the limit,
        // so a URL that includes itself ends here.
        self.nesting(depth)?;
        // Whatever its form: a plain document counts as a decoded one does.
        if data.len() > self.budget {
            return Err(too_large(self.host, self.decoding.limit));
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

    fn entity(&mut self, entity: Entity<'static>, depth: usize) -> Result<(), H::Text> {
        self.nesting(depth)?;
        if entity.is_multipart() {
            let parts = entity.parts().map_err(|e| self.host.text(format_args!("user-data: {e}")))?;
            for part in parts {
                self.entity(part, depth + 1)?;
            }
            return Ok(());
        }
        let number = Decimal((self.parts.len() + 1) as u64);
        let encoding = entity.header("Content-Transfer-Encoding");
        let body = match TransferEncoding::parse(encoding) {
            TransferEncoding::Identity => entity.body,
            TransferEncoding::Base64 => {
                let most = entity.body.len() / 4 * 3 + 3;
                self.take(most, |host, out| base64::decode(entity.body, out).map_err(|e| host.text(format_args!("user-data part {number}: {e}"))))?
            }
            TransferEncoding::Unsupported => {
                let e = encoding.unwrap_or(b"").trim_ascii();
                return Err(self.host.text(format_args!("user-data part {number}: unsupported transfer encoding {}", H::shown(e))));
            }
        };
        let filename = entity.parameter("Content-Disposition", "filename");
        self.leaf(body, entity.media_type(), filename, depth)
    }

    /// A part that is not multipart: its kind by cloud-init's rules, includes followed.
    fn leaf(&mut self, body: &'static [u8], media_type: &'static [u8], filename: Option<&[u8]>, depth: usize) -> Result<(), H::Text> {
        let number = self.parts.len() + 1;
        if let Some(name) = gzip::other_compression(body) {
            return Err(self.host.text(format_args!(
                "user-data part {number} is {name}-compressed: unsupported compression (wisp decodes gzip only)",
                number = Decimal(number as u64),
                name = Plain(name)
            )));
        }
        if userdata::is_gzip_type(media_type) && !gzip::is_gzip(body) {
            return Err(self.host.text(format_args!("user-data part {number} is labelled {} but is not gzip data", H::shown(media_type), number = Decimal(number as u64))));
        }
        // A gzip'd part's own type no longer says what it is: its text does.
        let (body, media_type) = if gzip::is_gzip(body) { (self.gunzip(body)?, &b"text/plain"[..]) } else { (body, media_type) };
        let kind = userdata::kind_of(media_type, body);
        if matches!(kind, Kind::Include | Kind::IncludeOnce) && !matches!(self.decoding.includes, Includes::Listed) {
            return self.include(body, kind == Kind::IncludeOnce, depth);
        }
        let filename = filename
            .filter(|name| userdata::is_safe_script_name(name))
            .and_then(|name| core::str::from_utf8(name).ok())
            .and_then(|name| heapless::String::try_from(name).ok());
        check_built(self.host, kind, number, self.decoding.cloud_config)?;
        let part = Part { kind, media_type: &media_type[..media_type.len().min(60)], filename, bytes: body, whole: false };
        self.parts.push(part).map_err(|_| self.host.text(format_args!("user-data: more than 64 parts")))
    }

    /// Each URL of an include document, decoded as a document of its own.
    fn include(&mut self, list: &'static [u8], once_by_default: bool, depth: usize) -> Result<(), H::Text> {
        for (url, once) in userdata::include_urls(list) {
            let once = once || once_by_default;
            let text = core::str::from_utf8(url).map_err(|_| self.host.text(format_args!("#include: a URL is not UTF-8")))?;
            let content = self.fetch_include(text, once)?;
            self.document(content, depth + 1)?;
        }
        Ok(())
    }

    /// The document at `url`: fetched and kept, or read back from what was kept.
    #[inline(never)]
    fn fetch_include(&mut self, url: &str, once: bool) -> Result<&'static [u8], H::Text> {
        let shown = H::shown(url.as_bytes());
        let parsed = http::parse_url(url).map_err(|e| self.host.text(format_args!("#include {shown}: {e}")))?;
        // Named after its URL's hash, with no URL byte in a file name: `{:016x}` without
        // core's padding machinery, the hash's eight bytes highest first.
        let mut name = heapless::String::<16>::new();
        for byte in fnv1a(url.as_bytes()).to_be_bytes() {
            let _ = fmt::write(&mut name, format_args!("{}", Hex(byte)));
        }
        let dir = ScriptPath::new(self.host, &[self.decoding.var_dir, b"/", INCLUDES_DIR])?;
        if let Err(e) = self.host.create_dir(dir.as_bytes(), 0o755) {
            return Err(self.host.path_error(dir.as_bytes(), e));
        }
        let path = ScriptPath::new(self.host, &[dir.as_bytes(), b"/", name.as_bytes()])?;
        let timeouts = match self.decoding.includes {
            Includes::Fetch(timeouts) if !(once && matches!(self.host.metadata(path.as_bytes()), Ok(Some(_)))) => timeouts,
            Includes::Fetch(_) | Includes::Kept | Includes::Listed => {
                return self.take(usize::MAX, |host, out| match host.read(path.as_bytes(), out) {
                    Ok(Some(len)) => Ok(len),
                    Ok(None) => Err(host.text(format_args!("#include {shown}: not fetched yet (the early phase fetches includes)"))),
                    // The file does not fit what is left of the budget.
                    Err(e) if e.errno == EFBIG => Err(host.text(format_args!("#include {shown}: larger than {} bytes", Decimal(out.len() as u64)))),
                    Err(e) => Err(host.text(format_args!("#include {shown}: {}", H::reason(e)))),
                });
            }
        };
        let content = self.take(usize::MAX, |host, out| match host.get(&parsed, out, timeouts) {
            Ok(Some(len)) => Ok(len),
            Ok(None) => Err(host.text(format_args!("#include {shown}: HTTP status 404"))),
            Err(e) => Err(host.text(format_args!("#include: {e}"))),
        })?;
        if let Err(e) = self.host.write(path.as_bytes(), content, 0o600, None) {
            return Err(self.host.text(format_args!("#include {shown}: cannot keep it: {}", H::reason(e))));
        }
        Ok(content)
    }

    fn gunzip(&mut self, data: &'static [u8]) -> Result<&'static [u8], H::Text> {
        if !gzip::is_gzip(data) {
            if let Some(name) = gzip::other_compression(data) {
                return Err(self.host.text(format_args!("user-data is {name}-compressed: unsupported compression (wisp decodes gzip only)", name = Plain(name))));
            }
            return Ok(data);
        }
        let most = data.len().saturating_mul(gzip::DEFLATE_RATIO_LIMIT);
        self.take(most, |host, out| gzip::decompress(data, out).map_err(|e| host.text(format_args!("user-data: {e}"))))
    }

    /// Lets `fill` write into room for `most` bytes (less when the budget has less left),
    /// and keeps what it wrote. A fill that finds the room too small fails naming its size.
    fn take(&mut self, most: usize, fill: impl FnOnce(&mut H, &mut [u8]) -> Result<usize, H::Text>) -> Result<&'static [u8], H::Text> {
        let space = self.host.keep(most.min(self.budget), "decoded user-data")?;
        let len = fill(self.host, space)?.min(space.len());
        self.budget -= len;
        Ok(&space[..len])
    }

    fn nesting(&self, depth: usize) -> Result<(), H::Text> {
        match depth > DEPTH_LIMIT {
            true => Err(self.host.text(format_args!("user-data: multipart or includes nested deeper than 4 levels"))),
            false => Ok(()),
        }
    }
}

/// File too large: a kept include larger than the room read into.
const EFBIG: i32 = 27;

fn too_large<H: Messages>(host: &H, limit: usize) -> H::Text {
    host.text(format_args!("user-data: larger than WISP_USERDATA_LIMIT ({} bytes)", Decimal(limit as u64)))
}

/// `WHAT: wisp was built without FEATURE`.
fn missing<H: Messages>(host: &H, what: fmt::Arguments<'_>, feature: &str) -> H::Text {
    host.text(format_args!("{what}: wisp was built without {feature}", feature = Plain(feature)))
}

/// A part of a kind that needs a feature this build lacks is refused by name: applying
/// the rest of the document without it would drop part of what the owner asked for.
fn check_built<H: Messages>(host: &H, kind: Kind, number: usize, cloud_config: bool) -> Result<(), H::Text> {
    match kind {
        Kind::CloudConfig if !cloud_config => Err(missing(host, format_args!("user-data part {number} is cloud-config", number = Decimal(number as u64)), "cloud-config")),
        _ => Ok(()),
    }
}

/// FNV-1a: names a kept include after its URL.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| (hash ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3))
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::process::{Command, Stdio};
    use std::string::String;
    use std::vec::Vec;

    use super::*;
    use crate::host::memory::{MemoryDecoding, MemoryHost, MemorySystem};

    const TIMEOUTS: Timeouts = Timeouts { connect_ms: 1, read_ms: 1, total_ms: 1, backoff_initial_ms: 1, backoff_max_ms: 1 };

    fn decoding(includes: Includes<'_>) -> Decoding<'_> {
        Decoding { var_dir: b"/var/lib/cloud", limit: 1 << 20, includes, cloud_config: true }
    }

    fn host() -> MemoryDecoding {
        MemoryDecoding::new(MemorySystem::new(MemoryHost::new()))
    }

    fn leak(bytes: &[u8]) -> &'static [u8] {
        bytes.to_vec().leak()
    }

    /// `gzip` itself, as an owner's tools make it.
    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut child = Command::new("gzip").arg("-c").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
        child.stdin.take().unwrap().write_all(data).unwrap();
        child.wait_with_output().unwrap().stdout
    }

    fn summary(data: &UserData<'_>) -> Vec<(Kind, String, Option<String>, String, bool)> {
        data.parts
            .iter()
            .map(|p| {
                let text = String::from_utf8_lossy(p.bytes).into_owned();
                (p.kind, String::from_utf8_lossy(p.media_type).into_owned(), p.filename.as_ref().map(|n| String::from(n.as_str())), text, p.whole)
            })
            .collect()
    }

    #[test]
    fn a_plain_document_is_one_whole_part_gzipped_or_not() {
        let mut host = host();
        let data = decode(&mut host, leak(b"#!/bin/sh\necho hi\n"), decoding(Includes::Kept)).unwrap();
        assert_eq!(summary(&data), [(Kind::Script, "text/plain".into(), None, "#!/bin/sh\necho hi\n".into(), true)]);
        let data = decode(&mut host, leak(&gzip(b"#cloud-config\nhostname: a\n")), decoding(Includes::Kept)).unwrap();
        assert_eq!(summary(&data), [(Kind::CloudConfig, "text/plain".into(), None, "#cloud-config\nhostname: a\n".into(), true)]);
    }

    const MIME: &[u8] = b"Content-Type: multipart/mixed; boundary=\"b\"\nMIME-Version: 1.0\n\n--b\nContent-Type: text/x-shellscript-per-boot\nContent-Disposition: attachment; filename=\"every.sh\"\n\n#!/bin/sh\nboot\n--b\nContent-Type: text/x-shellscript\nContent-Transfer-Encoding: base64\nContent-Disposition: attachment; filename=\"../escape\"\n\nIyEvYmluL3NoCmVjaG8gaGkK\n--b--\n";

    #[test]
    fn mime_parts_are_typed_decoded_and_named_only_when_safe() {
        let mut host = host();
        let data = decode(&mut host, leak(MIME), decoding(Includes::Kept)).unwrap();
        assert_eq!(
            summary(&data),
            [
                (Kind::ScriptPerBoot, "text/x-shellscript-per-boot".into(), Some("every.sh".into()), "#!/bin/sh\nboot".into(), false),
                (Kind::Script, "text/x-shellscript".into(), None, "#!/bin/sh\necho hi\n".into(), false),
            ]
        );
    }

    #[test]
    fn refusals_name_the_part_and_what_is_wrong() {
        let mut host = host();
        let mut refused = |doc: &[u8]| decode(&mut host, leak(doc), decoding(Includes::Kept)).map(|d| summary(&d)).unwrap_err();
        let qp = b"Content-Type: multipart/mixed; boundary=b\nMIME-Version: 1.0\n\n--b\nContent-Type: text/plain\nContent-Transfer-Encoding: quoted-printable\n\n#!/bin/sh\n--b--\n";
        assert_eq!(refused(qp), "user-data part 1: unsupported transfer encoding quoted-printable");
        let labelled = b"Content-Type: multipart/mixed; boundary=b\nMIME-Version: 1.0\n\n--b\nContent-Type: application/x-gzip\n\n#!/bin/sh\n--b--\n";
        assert_eq!(refused(labelled), "user-data part 1 is labelled application/x-gzip but is not gzip data");
        assert_eq!(refused(b"BZh91AY&SY"), "user-data is bzip2-compressed: unsupported compression (wisp decodes gzip only)");
        let mut host = MemoryDecoding::new(MemorySystem::new(MemoryHost::new()));
        let small = Decoding { limit: 4, ..decoding(Includes::Kept) };
        assert_eq!(decode(&mut host, leak(b"#!/bin/sh\n"), small).err().unwrap(), "user-data: larger than WISP_USERDATA_LIMIT (4 bytes)");
        let no_cloud_config = Decoding { cloud_config: false, ..decoding(Includes::Kept) };
        assert_eq!(decode(&mut host, leak(b"#cloud-config\n"), no_cloud_config).err().unwrap(), "user-data part 1 is cloud-config: wisp was built without cloud-config");
    }

    #[test]
    fn includes_are_fetched_kept_and_read_back_by_later_phases() {
        let mut host = host().serve("/a", b"#!/bin/sh\na\n").serve("/b", b"#cloud-config\nb: 1\n");
        let doc = leak(b"#include\nhttp://10.0.0.1/a\n#include-once http://10.0.0.1/b\n");
        let data = decode(&mut host, doc, decoding(Includes::Fetch(&TIMEOUTS))).unwrap();
        assert_eq!(data.parts.len(), 2);
        assert_eq!((data.parts[0].kind, data.parts[1].kind), (Kind::Script, Kind::CloudConfig));
        assert_eq!(host.gets, ["10.0.0.1/a", "10.0.0.1/b"]);
        let kept: Vec<(String, u32)> =
            host.system.host.files.iter().filter(|(path, _)| path.starts_with(b"/var/lib/cloud/includes/")).map(|(path, e)| (String::from_utf8_lossy(path).into_owned(), e.meta.mode)).collect();
        assert_eq!(kept.len(), 2);
        assert!(kept.iter().all(|(path, mode)| path.len() == "/var/lib/cloud/includes/".len() + 16 && *mode == 0o600), "{kept:?}");

        // A second fetch: `#include` is fetched again, `#include-once` is not.
        host.gets.clear();
        decode(&mut host, doc, decoding(Includes::Fetch(&TIMEOUTS))).unwrap();
        assert_eq!(host.gets, ["10.0.0.1/a"]);

        // A later phase reads what was kept, without the network.
        host.gets.clear();
        let data = decode(&mut host, doc, decoding(Includes::Kept)).unwrap();
        assert_eq!(data.parts[0].bytes, b"#!/bin/sh\na\n");
        assert!(host.gets.is_empty());

        // `wisp userdata show` lists the include itself.
        let data = decode(&mut host, doc, decoding(Includes::Listed)).unwrap();
        assert_eq!(data.parts[0].kind, Kind::Include);
    }

    #[test]
    fn an_include_that_cannot_be_had_fails_the_whole_document() {
        let mut host = host();
        let doc = leak(b"#include\nhttp://10.0.0.1/missing\n");
        assert_eq!(decode(&mut host, doc, decoding(Includes::Fetch(&TIMEOUTS))).err().unwrap(), "#include http://10.0.0.1/missing: HTTP status 404");
        assert_eq!(decode(&mut host, doc, decoding(Includes::Kept)).err().unwrap(), "#include http://10.0.0.1/missing: not fetched yet (the early phase fetches includes)");
        let https = leak(b"#include\nhttps://10.0.0.1/x\n");
        assert!(decode(&mut host, https, decoding(Includes::Fetch(&TIMEOUTS))).err().unwrap().starts_with("#include https://10.0.0.1/x: "));
        // A URL that includes itself ends at the nesting limit.
        let mut host = MemoryDecoding::new(MemorySystem::new(MemoryHost::new())).serve("/self", b"#include\nhttp://10.0.0.1/self\n");
        let e = decode(&mut host, leak(b"#include\nhttp://10.0.0.1/self\n"), decoding(Includes::Fetch(&TIMEOUTS))).err().unwrap();
        assert_eq!(e, "user-data: multipart or includes nested deeper than 4 levels");
    }

    #[test]
    fn more_parts_than_the_limit_across_nested_multiparts_are_refused_by_count() {
        // Two multiparts of 33 scripts each: within MIME's own limit each, 66 in all.
        let scripts: String = (0..33).map(|i| std::format!("--b\nContent-Type: text/x-shellscript\n\n#!/bin/sh\necho {i}\n")).collect();
        let inner = std::format!("Content-Type: multipart/mixed; boundary=\"b\"\n\n{scripts}--b--\n");
        let doc = std::format!("MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"a\"\n\n--a\n{inner}--a\n{inner}--a--\n");
        let e = decode(&mut host(), leak(doc.as_bytes()), decoding(Includes::Kept)).err().unwrap();
        assert_eq!(e, std::format!("user-data: more than {} parts", mime::PARTS_LIMIT));
    }

    #[test]
    fn the_plain_decoder_refuses_by_name_what_it_cannot_read() {
        let host = host();
        let plain = |doc: &[u8]| decode_plain(&host, leak(doc), decoding(Includes::Kept));
        assert_eq!(summary(&plain(b"#!/bin/sh\n").unwrap()), [(Kind::Script, "text/plain".into(), None, "#!/bin/sh\n".into(), true)]);
        assert_eq!(plain(MIME).err().unwrap(), "MIME multipart user-data: wisp was built without userdata");
        assert_eq!(plain(&gzip(b"#!/bin/sh\n")).err().unwrap(), "gzip'd user-data: wisp was built without userdata");
        assert_eq!(plain(b"#include\nhttp://x/\n").err().unwrap(), "#include user-data: wisp was built without userdata");
        assert_eq!(plain(b"#cloud-boothook\n").err().unwrap(), "#cloud-boothook user-data: wisp was built without userdata");
        let no_cloud_config = Decoding { cloud_config: false, ..decoding(Includes::Kept) };
        assert_eq!(decode_plain(&host, leak(b"#cloud-config\n"), no_cloud_config).err().unwrap(), "user-data part 1 is cloud-config: wisp was built without cloud-config");
    }
}
