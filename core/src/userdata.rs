//! What a piece of user-data is, by cloud-init's rules: a MIME part by its Content-Type,
//! anything else (and `text/plain` parts) by how its text starts.

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

/// cloud-init's prefixes; the longest match wins (`#include-once` before `#include`).
const PREFIXES: [(&[u8], Kind); 10] = [
    (b"#cloud-config-archive", Kind::CloudConfigArchive),
    (b"#cloud-config-jsonp", Kind::CloudConfigJsonp),
    (b"## template: jinja", Kind::Jinja),
    (b"#cloud-boothook", Kind::Boothook),
    (b"#include-once", Kind::IncludeOnce),
    (b"#part-handler", Kind::PartHandler),
    (b"#cloud-config", Kind::CloudConfig),
    (b"#include", Kind::Include),
    (b"#!", Kind::Script),
    (b"#alpine-config", Kind::CloudConfig),
];

/// The kind a text starts as: leading white space ignored, case ignored, as cloud-init's
/// `type_from_starts_with` does.
pub fn sniff(text: &[u8]) -> Kind {
    let text = text.trim_ascii_start();
    let mut best: Option<(usize, Kind)> = None;
    for (prefix, kind) in PREFIXES {
        if text.len() >= prefix.len() && text[..prefix.len()].eq_ignore_ascii_case(prefix) && best.is_none_or(|(len, _)| prefix.len() > len) {
            best = Some((prefix.len(), kind));
        }
    }
    best.map_or(Kind::Unknown, |(_, kind)| kind)
}

/// The kind a MIME part's Content-Type names; `None` for `text/plain` and
/// `text/x-not-multipart`, whose text decides.
pub fn from_content_type(media_type: &[u8]) -> Option<Kind> {
    const TYPES: [(&[u8], Kind); 12] = [
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
    if media_type.eq_ignore_ascii_case(b"text/plain") || media_type.eq_ignore_ascii_case(b"text/x-not-multipart") {
        return None;
    }
    Some(TYPES.iter().find(|(name, _)| name.eq_ignore_ascii_case(media_type)).map_or(Kind::Unknown, |&(_, kind)| kind))
}

/// Whether a MIME part's type is one of cloud-init's gzip types (`DECOMP_TYPES`), whose
/// body must be gzip: cloud-init refuses user-data with one that does not inflate.
pub fn is_gzip_type(media_type: &[u8]) -> bool {
    const TYPES: [&[u8]; 8] = [
        b"application/gzip",
        b"application/gzip-compressed",
        b"application/gzipped",
        b"application/x-compress",
        b"application/x-compressed",
        b"application/x-gunzip",
        b"application/x-gzip",
        b"application/x-gzip-compressed",
    ];
    TYPES.iter().any(|name| name.eq_ignore_ascii_case(media_type))
}

/// The URLs of an `#include` or `#include-once` document, as cloud-init reads them: one
/// per line, a marker line switching between "every time" and "once" (a URL may follow
/// the marker on its line), other `#` lines and blank lines ignored.
pub fn include_urls(text: &[u8]) -> impl Iterator<Item = (&[u8], bool)> {
    let mut once = false;
    text.split(|&b| b == b'\n').filter_map(move |line| {
        let mut line = line.trim_ascii();
        for (marker, is_once) in [(&b"#include-once"[..], true), (b"#include", false)] {
            if line.len() >= marker.len() && line[..marker.len()].eq_ignore_ascii_case(marker) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffing() {
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
    fn content_types() {
        assert_eq!(from_content_type(b"text/x-shellscript"), Some(Kind::Script));
        assert_eq!(from_content_type(b"TEXT/CLOUD-CONFIG"), Some(Kind::CloudConfig));
        assert_eq!(from_content_type(b"text/x-shellscript-per-instance"), Some(Kind::ScriptPerInstance));
        assert_eq!(from_content_type(b"text/plain"), None);
        assert_eq!(from_content_type(b"application/octet-stream"), Some(Kind::Unknown));
        assert!(is_gzip_type(b"application/x-gzip") && is_gzip_type(b"Application/GZIP"));
        assert!(!is_gzip_type(b"application/octet-stream") && !is_gzip_type(b"application/x-bzip2"));
    }
}
