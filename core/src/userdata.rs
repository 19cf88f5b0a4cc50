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
    fn content_types() {
        assert_eq!(from_content_type(b"text/x-shellscript"), Some(Kind::Script));
        assert_eq!(from_content_type(b"TEXT/CLOUD-CONFIG"), Some(Kind::CloudConfig));
        assert_eq!(from_content_type(b"text/x-shellscript-per-instance"), Some(Kind::ScriptPerInstance));
        assert_eq!(from_content_type(b"text/plain"), None);
        assert_eq!(from_content_type(b"application/octet-stream"), Some(Kind::Unknown));
    }
}
