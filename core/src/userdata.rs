//! What a piece of user-data is, by cloud-init's rules: a MIME part by its Content-Type,
//! anything else (and `text/plain` parts) by how its text starts.

use crate::text::eq_ignoring_case;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Script,
    ScriptPerBoot,
    ScriptPerInstance,
    ScriptPerOnce,
    CloudConfig,
    CloudConfigArchive,
    CloudConfigJsonp,
    Include,
    IncludeOnce,
    Boothook,
    PartHandler,
    Jinja,
    Unknown,
}

/// The names of `Kind`, in the order of its variants (`Kind::name`).
const KIND_NAMES: &str = "script script-per-boot script-per-instance script-per-once cloud-config cloud-config-archive cloud-config-jsonp include include-once cloud-boothook part-handler jinja unknown";

impl Kind {
    pub const ALL: [Kind; 13] = [
        Kind::Script,
        Kind::ScriptPerBoot,
        Kind::ScriptPerInstance,
        Kind::ScriptPerOnce,
        Kind::CloudConfig,
        Kind::CloudConfigArchive,
        Kind::CloudConfigJsonp,
        Kind::Include,
        Kind::IncludeOnce,
        Kind::Boothook,
        Kind::PartHandler,
        Kind::Jinja,
        Kind::Unknown,
    ];

    /// cloud-init's name for what a part holds.
    pub fn name(self) -> &'static str {
        crate::text::nth_word(KIND_NAMES, self as usize)
    }

    /// What becomes of a part of this kind.
    pub const fn handling(self) -> Handling {
        match self {
            Kind::Script => Handling::Script,
            Kind::ScriptPerBoot | Kind::ScriptPerInstance | Kind::ScriptPerOnce => Handling::ScriptDirectory,
            Kind::CloudConfig => Handling::CloudConfig,
            Kind::Boothook => Handling::Boothook,
            Kind::Include | Kind::IncludeOnce => Handling::Include,
            Kind::CloudConfigArchive | Kind::CloudConfigJsonp | Kind::PartHandler | Kind::Jinja | Kind::Unknown => Handling::Unsupported,
        }
    }
}

/// What wisp does with a part: which action applies it, or that none does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Handling {
    /// Run by `run_userdata`, in order.
    Script,
    /// Written into cloud-init's per-boot, per-instance or per-once directory, whose
    /// scripts `run_userdata` runs first.
    ScriptDirectory,
    /// Merged with the other cloud-config parts; the `userdata_*` actions apply its keys.
    CloudConfig,
    /// Run by `userdata_boothooks`, every boot.
    Boothook,
    /// Replaced by the documents its URLs name, as the user-data is decoded.
    Include,
    /// Logged and skipped by `run_userdata`: part handlers, jinja templates,
    /// `#cloud-config-archive`, `#cloud-config-jsonp`, unknown types.
    Unsupported,
}

/// The kind of a MIME part (or a whole document, as `text/plain`), after any gzip was
/// inflated (a gzip'd part is `text/plain` then: its own type no longer says what it
/// is). Its Content-Type decides, but for `text/plain` and `text/x-shellscript`, whose
/// text does, as cloud-init sniffs them (some tools label every part x-shellscript).
pub fn kind_of(media_type: &[u8], body: &[u8]) -> Kind {
    match from_content_type(media_type) {
        Some(Kind::Script) | None => match sniff(body) {
            Kind::Unknown => from_content_type(media_type).unwrap_or(Kind::Unknown),
            sniffed => sniffed,
        },
        Some(kind) => kind,
    }
}

/// How a MIME part's body is encoded (`Content-Transfer-Encoding`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransferEncoding {
    /// None, `7bit`, `8bit` or `binary`: the body as it is.
    Identity,
    Base64,
    /// Anything else (`quoted-printable`): refused, since wisp cannot decode it.
    Unsupported,
}

impl TransferEncoding {
    /// From the header's value, `None` when the part has none.
    pub fn parse(header: Option<&[u8]>) -> TransferEncoding {
        match header.map(<[u8]>::trim_ascii) {
            None => TransferEncoding::Identity,
            Some(e) if crate::text::word_index_ignoring_case("7bit 8bit binary", e).is_some() => TransferEncoding::Identity,
            Some(e) if eq_ignoring_case(e, b"base64") => TransferEncoding::Base64,
            Some(_) => TransferEncoding::Unsupported,
        }
    }
}

/// cloud-init's prefixes, one a line, each of the kind at its place in `PREFIX_KINDS`: a
/// list of lines rather than a table of (prefix, kind), which costs 24 bytes an entry
/// besides the text. The longest match wins (`#include-once` before `#include`).
const PREFIXES: &str = "#cloud-config-archive\n#cloud-config-jsonp\n## template: jinja\n#cloud-boothook\n\
    #include-once\n#part-handler\n#cloud-config\n#include\n#!\n#alpine-config";
const PREFIX_KINDS: [Kind; 10] = [
    Kind::CloudConfigArchive,
    Kind::CloudConfigJsonp,
    Kind::Jinja,
    Kind::Boothook,
    Kind::IncludeOnce,
    Kind::PartHandler,
    Kind::CloudConfig,
    Kind::Include,
    Kind::Script,
    Kind::CloudConfig,
];

/// The kind a text starts as: leading white space ignored, case ignored, as cloud-init's
/// `type_from_starts_with` does.
pub fn sniff(text: &[u8]) -> Kind {
    let text = text.trim_ascii_start();
    let mut best: Option<(usize, Kind)> = None;
    for (prefix, &kind) in PREFIXES.split('\n').zip(&PREFIX_KINDS) {
        let prefix = prefix.as_bytes();
        if text.len() >= prefix.len() && eq_ignoring_case(&text[..prefix.len()], prefix) && best.is_none_or(|(len, _)| prefix.len() > len) {
            best = Some((prefix.len(), kind));
        }
    }
    best.map_or(Kind::Unknown, |(_, kind)| kind)
}

/// The kind a MIME part's Content-Type names; `None` for `text/plain` and
/// `text/x-not-multipart`, whose text decides.
pub fn from_content_type(media_type: &[u8]) -> Option<Kind> {
    /// The Content-Types that name a kind, in `Kind`'s order: a list of words rather than
    /// a table of (type, kind), which costs 24 bytes an entry besides the text.
    const TYPES: &str = "text/x-shellscript text/x-shellscript-per-boot text/x-shellscript-per-instance \
        text/x-shellscript-per-once text/cloud-config text/cloud-config-archive text/cloud-config-jsonp \
        text/x-include-url text/x-include-once-url text/cloud-boothook text/part-handler text/jinja2";
    if eq_ignoring_case(media_type, b"text/plain") || eq_ignoring_case(media_type, b"text/x-not-multipart") {
        return None;
    }
    let index = crate::text::word_index_ignoring_case(TYPES, media_type);
    Some(index.and_then(|index| Kind::ALL.get(index)).map_or(Kind::Unknown, |&kind| kind))
}

/// Whether a MIME part's type is one of cloud-init's gzip types (`DECOMP_TYPES`), whose
/// body must be gzip: cloud-init refuses user-data with one that does not inflate.
pub fn is_gzip_type(media_type: &[u8]) -> bool {
    const TYPES: &str = "application/gzip application/gzip-compressed application/gzipped application/x-compress \
        application/x-compressed application/x-gunzip application/x-gzip application/x-gzip-compressed";
    crate::text::word_index_ignoring_case(TYPES, media_type).is_some()
}

/// The URLs of an `#include` or `#include-once` document, as cloud-init reads them: one
/// per line, a marker line switching between "every time" and "once" (a URL may follow
/// the marker on its line), other `#` lines and blank lines ignored.
pub fn include_urls(text: &[u8]) -> impl Iterator<Item = (&[u8], bool)> {
    let mut once = false;
    text.split(|&b| b == b'\n').filter_map(move |line| {
        let mut line = line.trim_ascii();
        for (marker, is_once) in [(&b"#include-once"[..], true), (b"#include", false)] {
            if line.len() >= marker.len() && eq_ignoring_case(&line[..marker.len()], marker) {
                line = line[marker.len()..].trim_ascii();
                once = is_once;
                break;
            }
        }
        (!line.is_empty() && !line.starts_with(b"#")).then_some((line, once))
    })
}

/// Longest script name kept from a MIME part's `filename`.
pub const SCRIPT_NAME_LIMIT: usize = 64;

/// Whether a part's `filename` may name a script file: one path component of letters,
/// digits, `.`, `_` and `-`, not hidden, so it can neither leave its directory nor hide.
pub fn is_safe_script_name(name: &[u8]) -> bool {
    !name.is_empty()
        && name.len() <= SCRIPT_NAME_LIMIT
        && name[0] != b'.'
        && name.iter().all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// Names wisp keeps in the scripts directory itself: a part's `filename` must not take one.
const RESERVED_SCRIPT_NAMES: &str = "per-boot per-instance per-once bootcmd runcmd power-state-condition";

pub type ScriptName = heapless::String<SCRIPT_NAME_LIMIT>;

/// The file name of the part `index` (from 0) among the scripts: its own `filename` (one
/// `is_safe_script_name` let through), or `part-NNN` when it has none or it names
/// something wisp keeps in the scripts directory itself.
pub fn script_name(filename: Option<&ScriptName>, index: usize) -> ScriptName {
    if let Some(name) = filename.filter(|name| crate::text::word_index(RESERVED_SCRIPT_NAMES, name.as_bytes()).is_none()) {
        return name.clone();
    }
    let mut name = ScriptName::new();
    // `{:03}` would bring core's padding machinery into the binary.
    let number = index + 1;
    let zeros = crate::text::Plain(if number < 10 { "00" } else if number < 100 { "0" } else { "" });
    let _ = core::fmt::write(&mut name, format_args!("part-{zeros}{}", crate::text::Decimal(number as u64)));
    name
}

/// One leaf of a decoded user-data document: what it is, and its decoded bytes.
pub struct Part<'a> {
    pub kind: Kind,
    /// The MIME type it came with (or `text/plain`), at most 60 bytes of it, for the log:
    /// shown escaped.
    pub media_type: &'a [u8],
    /// Its `filename` parameter, when that is a safe script name.
    pub filename: Option<ScriptName>,
    pub bytes: &'a [u8],
    /// The part is the whole saved `user-data` file (no MIME, no include).
    pub whole: bool,
}

impl Part<'_> {
    /// Its file name among the scripts, as the part `index` (from 0) of the document.
    pub fn script_name(&self, index: usize) -> ScriptName {
        script_name(self.filename.as_ref(), index)
    }
}

/// User-data decoded: its parts in document order.
pub struct UserData<'a> {
    pub parts: heapless::Vec<Part<'a>, { crate::mime::PARTS_LIMIT }>,
}

impl<'a> UserData<'a> {
    /// The parts of `kind`, with their index in the document.
    pub fn of_kind(&self, kind: Kind) -> impl Iterator<Item = (usize, &Part<'a>)> {
        self.parts.iter().enumerate().filter(move |(_, part)| part.kind == kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffing() {
        assert_eq!(PREFIXES.split('\n').count(), PREFIX_KINDS.len());
        assert_eq!(PREFIXES.split('\n').nth(2), Some("## template: jinja"));
        assert_eq!(PREFIXES.split('\n').next_back(), Some("#alpine-config"));
        assert_eq!(sniff(b"#!/bin/sh\n"), Kind::Script);
        assert_eq!(sniff(b"  \n#Cloud-Config\nhostname: x"), Kind::CloudConfig);
        assert_eq!(sniff(b"#cloud-config-archive\n- x"), Kind::CloudConfigArchive);
        assert_eq!(sniff(b"#include-once\nhttp://x"), Kind::IncludeOnce);
        assert_eq!(sniff(b"#include\nhttp://x"), Kind::Include);
        assert_eq!(sniff(b"#cloud-boothook\n"), Kind::Boothook);
        assert_eq!(sniff(b"## template: jinja\n"), Kind::Jinja);
        assert_eq!(sniff(b"#alpine-config\n"), Kind::CloudConfig);
        assert_eq!(sniff(b"hello"), Kind::Unknown);
        assert_eq!(sniff(b""), Kind::Unknown);
    }

    #[test]
    fn includes() {
        let doc = b"#include\nhttp://10.0.0.1/a\n# comment\n\n  http://10.0.0.1/b  \n#include-once http://10.0.0.1/c\nhttp://10.0.0.1/d\n#INCLUDE\nhttp://10.0.0.1/e\n";
        crate::fuzz::seed("userdata", doc);
        let urls: Vec<_> = include_urls(doc).collect();
        assert_eq!(
            urls,
            [(&b"http://10.0.0.1/a"[..], false), (b"http://10.0.0.1/b", false), (b"http://10.0.0.1/c", true), (b"http://10.0.0.1/d", true), (b"http://10.0.0.1/e", false)]
        );
        assert_eq!(include_urls(b"#include\n").count(), 0);
    }

    #[test]
    fn script_names() {
        assert!(is_safe_script_name(b"setup-01.sh"));
        for bad in [&b""[..], b".hidden", b"../x", b"a/b", b"a b", b"\xc3\xa9"] {
            assert!(!is_safe_script_name(bad), "{bad:?}");
        }
        assert!(!is_safe_script_name(&[b'a'; SCRIPT_NAME_LIMIT + 1]));
    }

    #[test]
    fn a_part_is_typed_by_its_content_type_or_by_its_text() {
        // text/plain and x-shellscript parts are sniffed, as cloud-init does.
        assert_eq!(kind_of(b"text/x-shellscript", b"#cloud-config\nhostname: a"), Kind::CloudConfig);
        assert_eq!(kind_of(b"text/x-shellscript", b"echo no shebang"), Kind::Script);
        assert_eq!(kind_of(b"text/plain", b"#!/bin/sh\n"), Kind::Script);
        assert_eq!(kind_of(b"text/plain", b"#include\nhttp://10.0.0.1/x"), Kind::Include);
        assert_eq!(kind_of(b"text/plain", b"plain words"), Kind::Unknown);
        assert_eq!(kind_of(b"text/x-not-multipart", b"#cloud-boothook\n"), Kind::Boothook);
        // Any other type decides alone, whatever the text says.
        assert_eq!(kind_of(b"text/cloud-config", b"#!/bin/sh\n"), Kind::CloudConfig);
        assert_eq!(kind_of(b"text/x-shellscript-per-boot", b"#!/bin/sh\n"), Kind::ScriptPerBoot);
        assert_eq!(kind_of(b"text/x-include-once-url", b"http://10.0.0.1/x"), Kind::IncludeOnce);
        assert_eq!(kind_of(b"application/octet-stream", b"#!/bin/sh\n"), Kind::Unknown);
    }

    #[test]
    fn what_becomes_of_each_kind() {
        assert_eq!(Kind::Script.handling(), Handling::Script);
        for kind in [Kind::ScriptPerBoot, Kind::ScriptPerInstance, Kind::ScriptPerOnce] {
            assert_eq!(kind.handling(), Handling::ScriptDirectory);
        }
        assert_eq!(Kind::CloudConfig.handling(), Handling::CloudConfig);
        assert_eq!(Kind::Boothook.handling(), Handling::Boothook);
        assert_eq!(Kind::IncludeOnce.handling(), Handling::Include);
        for kind in [Kind::CloudConfigArchive, Kind::CloudConfigJsonp, Kind::PartHandler, Kind::Jinja, Kind::Unknown] {
            assert_eq!(kind.handling(), Handling::Unsupported, "{}", kind.name());
        }
        assert_eq!(Kind::Boothook.name(), "cloud-boothook");
        assert_eq!(Kind::ScriptPerOnce.name(), "script-per-once");
        assert_eq!(KIND_NAMES.split(' ').count(), Kind::Unknown as usize + 1);
        assert_eq!(Kind::CloudConfigJsonp.name(), "cloud-config-jsonp");
        assert_eq!(Kind::Unknown.name(), "unknown");
    }

    #[test]
    fn transfer_encodings() {
        assert_eq!(TransferEncoding::parse(None), TransferEncoding::Identity);
        assert_eq!(TransferEncoding::parse(Some(b" 7BIT ")), TransferEncoding::Identity);
        assert_eq!(TransferEncoding::parse(Some(b"binary")), TransferEncoding::Identity);
        assert_eq!(TransferEncoding::parse(Some(b"8Bit")), TransferEncoding::Identity);
        for other in [&b"quoted-printable"[..], b"7bit 8bit", b"bit", b""] {
            assert_eq!(TransferEncoding::parse(Some(other)), TransferEncoding::Unsupported, "{other:?}");
        }
        assert_eq!(TransferEncoding::parse(Some(b"Base64")), TransferEncoding::Base64);
        assert_eq!(TransferEncoding::parse(Some(b"quoted-printable")), TransferEncoding::Unsupported);
    }

    #[test]
    fn script_file_names() {
        let own = ScriptName::try_from("setup.sh").unwrap();
        assert_eq!(script_name(Some(&own), 0), "setup.sh");
        assert_eq!(script_name(None, 0), "part-001");
        assert_eq!(script_name(None, 41), "part-042");
        // A name wisp keeps for its own scripts is not taken.
        for reserved in ["per-boot", "per-instance", "per-once", "bootcmd", "runcmd", "power-state-condition"] {
            assert_eq!(script_name(Some(&ScriptName::try_from(reserved).unwrap()), 2), "part-003", "{reserved}");
        }
        // Only whole names: one that holds a reserved name is the part's own.
        for own in ["runcmd.sh", "per", "boot", "per-boot-2"] {
            assert_eq!(script_name(Some(&ScriptName::try_from(own).unwrap()), 2), own);
        }
    }

    #[test]
    fn content_types() {
        assert_eq!(from_content_type(b"text/x-shellscript"), Some(Kind::Script));
        assert_eq!(from_content_type(b"TEXT/CLOUD-CONFIG"), Some(Kind::CloudConfig));
        assert_eq!(from_content_type(b"text/x-shellscript-per-instance"), Some(Kind::ScriptPerInstance));
        assert_eq!(from_content_type(b"text/plain"), None);
        assert_eq!(from_content_type(b"application/octet-stream"), Some(Kind::Unknown));
        assert!(is_gzip_type(b"application/x-gzip") && is_gzip_type(b"Application/GZIP"));
        assert!(!is_gzip_type(b"application/octet-stream") && !is_gzip_type(b"application/x-bzip2"));
    }

    #[test]
    fn every_content_type_names_its_own_kind() {
        let types: [(&[u8], Kind); 12] = [
            (b"text/x-shellscript", Kind::Script),
            (b"text/x-shellscript-per-boot", Kind::ScriptPerBoot),
            (b"text/x-shellscript-per-instance", Kind::ScriptPerInstance),
            (b"text/x-shellscript-per-once", Kind::ScriptPerOnce),
            (b"text/cloud-config", Kind::CloudConfig),
            (b"text/cloud-config-archive", Kind::CloudConfigArchive),
            (b"text/cloud-config-jsonp", Kind::CloudConfigJsonp),
            (b"text/x-include-url", Kind::Include),
            (b"text/x-include-once-url", Kind::IncludeOnce),
            (b"text/cloud-boothook", Kind::Boothook),
            (b"text/part-handler", Kind::PartHandler),
            (b"text/jinja2", Kind::Jinja),
        ];
        for (media_type, kind) in types {
            assert_eq!(from_content_type(media_type), Some(kind), "{}", String::from_utf8_lossy(media_type));
        }
        // No partial match, and no word of the list is an empty type.
        assert_eq!(from_content_type(b"text/x-shell"), Some(Kind::Unknown));
        assert_eq!(from_content_type(b""), Some(Kind::Unknown));
        assert!(Kind::ALL.iter().enumerate().all(|(index, &kind)| kind as usize == index));
        for gzip in ["application/gzip", "application/gzip-compressed", "application/gzipped", "application/x-compress", "application/x-compressed", "application/x-gunzip", "application/x-gzip", "application/x-gzip-compressed"] {
            assert!(is_gzip_type(gzip.as_bytes()), "{gzip}");
        }
        assert!(!is_gzip_type(b"") && !is_gzip_type(b"application/x-gzip-"));
    }
}
