//! `wisp userdata show`: how wisp reads user-data, as one JSON document: its parts after
//! decoding (kind, MIME type, size) and the merged cloud-config; then, as warnings, what
//! the phases would leave out or refuse.

use core::fmt::{self, Write};

use crate::cloud_config::CloudConfig;
use crate::out::Chunked;
use crate::text::{Decimal, Plain, Shown};
use crate::userdata::{Kind, UserData};

/// The command: the document of `userdata` (`None`: none saved or read) and `config` to
/// `print`, in chunks (its JSON can be larger than any buffer); then its warnings, each to
/// `warning` (`warn`).
#[inline(never)]
pub fn show(userdata: Option<&UserData<'_>>, config: &CloudConfig<'_>, print: impl FnMut(&[u8]), warning: &dyn Fn(fmt::Arguments<'_>)) {
    let mut buf = [0; 4096];
    let mut out = Chunked::new(&mut buf, print);
    let parts = userdata.iter().flat_map(|u| u.parts.iter()).map(|part| (part.kind, part.media_type, part.bytes.len()));
    let _ = write(&mut out, parts, config);
    out.flush();
    warn(config, warning);
}

/// The document: `{"parts":[{"kind":..,"type":..,"bytes":..},...],"cloud_config":{...}}`
/// and a newline. `parts`: each part's kind, MIME type and length, in order.
pub fn write<'p>(out: &mut impl Write, parts: impl Iterator<Item = (Kind, &'p [u8], usize)>, config: &CloudConfig<'_>) -> fmt::Result {
    out.write_str("{\"parts\":[")?;
    for (index, (kind, media_type, len)) in parts.enumerate() {
        let comma = if index > 0 { "," } else { "" };
        write!(out, "{}{{\"kind\":\"{}\",\"type\":\"{}\",\"bytes\":{}}}", Plain(comma), Plain(kind.name()), Shown(media_type), Decimal(len as u64))?;
    }
    out.write_str("],\"cloud_config\":")?;
    config.write_json(out)?;
    out.write_str("}\n")
}

/// The warnings that follow the document: what is not applied, and a cloud-config whose
/// keys have the wrong shape (printed all the same).
pub fn warn(config: &CloudConfig<'_>, warn: &dyn Fn(fmt::Arguments<'_>)) {
    config.warn_unapplied(true, warn);
    if let Err(e) = config.validate() {
        warn(format_args!("{e} (the main phase refuses this)"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_then_the_merged_cloud_config() {
        crate::users::tests::with_config("hostname: a\nsnap: {}\nusers: 3\n", |config| {
            let mut out = std::string::String::new();
            let parts = [(Kind::CloudConfig, &b"text/cloud-config"[..], 30), (Kind::Script, &b"text/x-shellscript"[..], 9)];
            write(&mut out, parts.into_iter(), config).unwrap();
            assert!(out.starts_with(r#"{"parts":[{"kind":"cloud-config","type":"text/cloud-config","bytes":30},{"kind":"script","type":"text/x-shellscript","bytes":9}],"cloud_config":{"#), "{out}");
            assert!(out.ends_with("}\n") && out.contains(r#""hostname":"a""#), "{out}");
            let said = core::cell::RefCell::new(std::vec::Vec::new());
            warn(config, &|args| said.borrow_mut().push(std::format!("{args}")));
            let said = said.into_inner();
            assert_eq!(said[0], "cloud-config line 2: snap: not applied by wisp");
            assert!(said.last().unwrap().ends_with("(the main phase refuses this)"), "{said:?}");
        });
    }

    #[test]
    fn the_command_prints_the_whole_document_in_chunks_then_the_warnings() {
        crate::users::tests::with_config("hostname: a\nsnap: {}\n", |config| {
            let (mut printed, mut chunks) = (std::vec::Vec::new(), 0);
            let said = core::cell::RefCell::new(std::vec::Vec::new());
            show(None, config, |chunk| (printed.extend_from_slice(chunk), chunks += 1).0, &|args| said.borrow_mut().push(std::format!("{args}")));
            let mut whole = std::string::String::new();
            write(&mut whole, core::iter::empty(), config).unwrap();
            assert_eq!((std::string::String::from_utf8(printed).unwrap(), chunks), (whole, 1));
            assert_eq!(said.into_inner(), ["cloud-config line 2: snap: not applied by wisp"]);
        });
    }
}
