//! MIME documents as cloud-init tooling writes user-data (RFC 2045/2046): a head of
//! header lines, and for multipart types, parts between `--boundary` lines up to a
//! closing `--boundary--`. Everything is a view into the caller's bytes.

use core::fmt;

use crate::text::eq_ignoring_case;

/// Most parts in one multipart body.
pub const PARTS_LIMIT: usize = 64;
/// `TooManyParts`' message: the limit as a literal, not formatted at each error; the
/// assertion keeps it saying `PARTS_LIMIT`.
const TOO_MANY_PARTS: &str = "multipart MIME with more than 64 parts";
const _: () = assert!(PARTS_LIMIT == 64);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MimeError {
    /// A multipart type without a `boundary` parameter.
    NoBoundary,
    MissingClosingBoundary,
    TooManyParts { limit: usize },
}

impl fmt::Display for MimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MimeError::NoBoundary => f.write_str("multipart MIME without a boundary"),
            MimeError::MissingClosingBoundary => f.write_str("multipart MIME without its closing boundary"),
            MimeError::TooManyParts { .. } => f.write_str(TOO_MANY_PARTS),
        }
    }
}

/// Whether `document` is MIME, exactly as cloud-init decides: `mime-version:` anywhere in
/// its first 4 KiB, without case (so a script that mentions it is MIME too).
pub fn is_mime(document: &[u8]) -> bool {
    let head = &document[..document.len().min(4096)];
    head.windows(13).any(|window| eq_ignoring_case(window, b"mime-version:"))
}

/// An entity: its head (header lines) and body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entity<'a> {
    pub head: &'a [u8],
    pub body: &'a [u8],
}

impl<'a> Entity<'a> {
    /// Splits where Python's email parser (cloud-init's) ends the head: at the first
    /// blank line, which is dropped, or at the first line that is neither a header
    /// (`name:`, the name printable ASCII) nor a continuation (leading space or tab),
    /// which begins the body: so a script that mentions `MIME-Version:` is all body.
    /// `From ` lines (mbox's envelope) are passed over.
    pub fn parse(text: &'a [u8]) -> Entity<'a> {
        let mut at = 0;
        while at < text.len() {
            let end = line_end(text, at);
            let line = &text[at..end];
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if line.is_empty() {
                return Entity { head: &text[..at], body: text.get(end + 1..).unwrap_or(b"") };
            }
            let name = line.iter().position(|&b| b == b':').map(|colon| &line[..colon]);
            // An mbox `From ` line is skipped as Python skips it.
            let header = name.is_some_and(|name| name.iter().all(|&b| b.is_ascii_graphic())) || line.starts_with(b"From ");
            if !header && !matches!(line[0], b' ' | b'\t') {
                return Entity { head: &text[..at], body: &text[at..] };
            }
            at = end + 1;
        }
        Entity { head: text, body: b"" }
    }

    /// A header's value, with its continuation lines (those starting with a space or a
    /// tab, as Python's email package folds `Content-Type: multipart/mixed;\n\tboundary=`):
    /// the line breaks stay in the value, which its readers split at `;` and trim.
    pub fn header(&self, name: &str) -> Option<&'a [u8]> {
        let head = self.head;
        let mut at = 0;
        while at < head.len() {
            let end = line_end(head, at);
            let line = head.get(at..end).unwrap_or_default();
            if let Some(colon) = line.iter().position(|&b| b == b':') {
                if eq_ignoring_case(line[..colon].trim_ascii(), name.as_bytes()) {
                    let mut stop = end;
                    while stop < head.len() && matches!(head[stop + 1..].first(), Some(b' ' | b'\t')) {
                        stop = line_end(head, stop + 1);
                    }
                    return Some(head.get(at + colon + 1..stop).unwrap_or_default().trim_ascii());
                }
            }
            at = end + 1;
        }
        None
    }

    /// The media type, lowercase comparison left to the caller (`text/x-shellscript`).
    pub fn media_type(&self) -> &'a [u8] {
        let value = self.header("Content-Type").unwrap_or(b"text/plain");
        value.split(|&b| b == b';').next().unwrap_or(value).trim_ascii()
    }

    /// A parameter of Content-Type or Content-Disposition, quotes removed.
    pub fn parameter(&self, header: &str, name: &str) -> Option<&'a [u8]> {
        let value = self.header(header)?;
        value.split(|&b| b == b';').skip(1).find_map(|param| {
            let eq = param.iter().position(|&b| b == b'=')?;
            if !eq_ignoring_case(param[..eq].trim_ascii(), name.as_bytes()) {
                return None;
            }
            let raw = param[eq + 1..].trim_ascii();
            Some(raw.strip_prefix(b"\"").and_then(|r| r.strip_suffix(b"\"")).unwrap_or(raw))
        })
    }

    pub fn is_multipart(&self) -> bool {
        starts_with_ignore_case(self.media_type(), b"multipart/")
    }

    pub fn is_base64(&self) -> bool {
        self.header("Content-Transfer-Encoding").is_some_and(|v| eq_ignoring_case(v, b"base64"))
    }

    /// The parts of a multipart entity, in order.
    pub fn parts(&self) -> Result<heapless::Vec<Entity<'a>, PARTS_LIMIT>, MimeError> {
        let boundary = self.parameter("Content-Type", "boundary").filter(|b| !b.is_empty()).ok_or(MimeError::NoBoundary)?;
        let body = self.body;
        let mut parts = heapless::Vec::new();
        let mut part_start: Option<usize> = None;
        let mut at = 0;
        while at < body.len() {
            let end = line_end(body, at);
            let line = body[at..end].strip_suffix(b"\r").unwrap_or(&body[at..end]);
            if let Some(rest) = line.strip_prefix(b"--").and_then(|l| l.strip_prefix(boundary)) {
                let closing = rest.starts_with(b"--");
                if rest.trim_ascii().is_empty() || closing {
                    if let Some(start) = part_start {
                        // The line break before a delimiter belongs to the delimiter.
                        let mut stop = at;
                        if stop > start && body[stop - 1] == b'\n' {
                            stop -= 1;
                            if stop > start && body[stop - 1] == b'\r' {
                                stop -= 1;
                            }
                        }
                        let part = Entity::parse(&body[start..stop]);
                        parts.push(part).map_err(|_| MimeError::TooManyParts { limit: PARTS_LIMIT })?;
                    }
                    if closing {
                        return Ok(parts);
                    }
                    part_start = Some((end + 1).min(body.len()));
                }
            }
            at = end + 1;
        }
        Err(MimeError::MissingClosingBoundary)
    }
}

/// Where the line starting at `at` ends: its `\n`, or the end of the text.
fn line_end(text: &[u8], at: usize) -> usize {
    text[at..].iter().position(|&b| b == b'\n').map_or(text.len(), |i| at + i)
}

fn starts_with_ignore_case(text: &[u8], prefix: &[u8]) -> bool {
    text.len() >= prefix.len() && eq_ignoring_case(&text[..prefix.len()], prefix)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &[u8] = b"Content-Type: multipart/mixed; boundary=\"===============1234==\"\r\n\
MIME-Version: 1.0\r\n\
\r\n\
--===============1234==\r\n\
Content-Type: text/x-shellscript; charset=\"us-ascii\"\r\n\
MIME-Version: 1.0\r\n\
Content-Transfer-Encoding: 7bit\r\n\
Content-Disposition: attachment; filename=\"one.sh\"\r\n\
\r\n\
#!/bin/sh\r\n\
echo one\r\n\
\r\n\
--===============1234==\r\n\
Content-Type: text/cloud-config\r\n\
Content-Transfer-Encoding: base64\r\n\
\r\n\
I2Nsb3VkLWNvbmZpZwo=\r\n\
--===============1234==--\r\n";

    #[test]
    fn multipart_document() {
        assert!(is_mime(DOC));
        assert!(is_mime(b"#!/bin/sh\necho MIME-VERSION: 1.0\n"));
        assert!(!is_mime(b"#!/bin/sh\necho mime version\n"));
        let doc = Entity::parse(DOC);
        assert!(doc.is_multipart());
        let parts = doc.parts().unwrap();
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[0].media_type(), b"text/x-shellscript");
        assert_eq!(parts[0].parameter("Content-Disposition", "filename"), Some(&b"one.sh"[..]));
        assert_eq!(parts[0].body, b"#!/bin/sh\r\necho one\r\n");
        assert!(!parts[0].is_base64() && parts[1].is_base64());
        assert_eq!(parts[1].body, b"I2Nsb3VkLWNvbmZpZwo=");
    }

    #[test]
    fn folded_headers() {
        let doc = b"Content-Type: multipart/mixed;\r\n\tboundary=\"b\"\r\nMIME-Version: 1.0\r\n\r\n--b\r\nContent-Type: text/plain;\n charset=us-ascii\nContent-Disposition: attachment;\n  filename=\"a.sh\"\n\n#!/bin/sh\n--b--\n";
        let entity = Entity::parse(doc);
        assert_eq!(entity.media_type(), b"multipart/mixed");
        assert_eq!(entity.header("MIME-Version"), Some(&b"1.0"[..]));
        let parts = entity.parts().unwrap();
        assert_eq!(parts[0].media_type(), b"text/plain");
        assert_eq!(parts[0].parameter("Content-Type", "charset"), Some(&b"us-ascii"[..]));
        assert_eq!(parts[0].parameter("Content-Disposition", "filename"), Some(&b"a.sh"[..]));
        assert_eq!(parts[0].body, b"#!/bin/sh");
    }

    #[test]
    fn heads_end_as_pythons_email_ends_them() {
        let script = b"#!/bin/sh\necho MIME-Version: 1.0\n";
        assert_eq!(Entity::parse(script), Entity { head: b"", body: script });
        let no_blank = Entity::parse(b"Content-Type: text/x-shellscript\r\nMIME-Version: 1.0\r\n#!/bin/sh\r\n");
        assert_eq!((no_blank.media_type(), no_blank.body), (&b"text/x-shellscript"[..], &b"#!/bin/sh\r\n"[..]));
        assert_eq!(Entity::parse(b"Content-Type: text/plain"), Entity { head: b"Content-Type: text/plain", body: b"" });
        // A leading space continues the head; a space in a name ends it.
        assert_eq!(Entity::parse(b"A: 1\n #!/bin/sh\nX Y: 2\n").body, b"X Y: 2\n");
        let mbox = Entity::parse(b"From nobody Mon Jan  1 00:00:00 2024\nContent-Type: text/x-shellscript\n\n#!/bin/sh\n");
        assert_eq!((mbox.media_type(), mbox.body), (&b"text/x-shellscript"[..], &b"#!/bin/sh\n"[..]));
    }

    #[test]
    fn errors() {
        let cut = &DOC[..DOC.len() - 30];
        assert_eq!(Entity::parse(cut).parts(), Err(MimeError::MissingClosingBoundary));
        let no_boundary = b"Content-Type: multipart/mixed\nMIME-Version: 1.0\n\nbody";
        assert_eq!(Entity::parse(no_boundary).parts(), Err(MimeError::NoBoundary));
        let mut many = b"Content-Type: multipart/mixed; boundary=b\n\n".to_vec();
        for _ in 0..=PARTS_LIMIT {
            many.extend_from_slice(b"--b\n\nx\n");
        }
        many.extend_from_slice(b"--b--\n");
        assert_eq!(Entity::parse(&many).parts(), Err(MimeError::TooManyParts { limit: PARTS_LIMIT }));
        assert_eq!(MimeError::TooManyParts { limit: PARTS_LIMIT }.to_string(), std::format!("multipart MIME with more than {PARTS_LIMIT} parts"));
    }

    #[test]
    fn garbage_never_panics() {
        crate::fuzz::seed("mime", DOC);
        let mut garbage = crate::fuzz::Garbage::new(43);
        let within = |inner: &[u8], outer: &[u8]| {
            let start = outer.as_ptr() as usize;
            inner.as_ptr() as usize >= start && inner.as_ptr() as usize + inner.len() <= start + outer.len()
        };
        let mut split = 0;
        for _ in 0..3000 {
            let doc = garbage.mutated(DOC, 0..DOC.len(), 5);
            let entity = Entity::parse(&doc);
            let _ = entity.media_type();
            if let Ok(parts) = entity.parts() {
                split += 1;
                for part in parts {
                    // Parts and their parameters are views into the document, never beyond it.
                    assert!(part.parameter("Content-Disposition", "filename").is_none_or(|name| within(name, &doc)));
                }
            };
        }
        assert!(split > 100, "{split}");
    }
}
