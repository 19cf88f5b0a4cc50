//! `wisp userdata show [FILE]`: how wisp reads user-data, as JSON on standard output. For
//! now one part, the whole document; a cloud-config part carries its YAML as JSON.

use core::fmt::{self, Write};

use wisp_core::userdata::{self, Kind};
use wisp_core::yaml::{self, Arena, Node};
use wisp_core::mime;
use wisp_os_linux::cpath::CPath;
use wisp_os_linux::fs::{self, ReadError};

use crate::actions::{USER_DATA, USER_DATA_LIMIT};
use crate::context::Context;
use crate::once::Once;
use crate::output::{self, Line, Os, Shown};
use crate::EXIT_FAILED;

/// Most YAML nodes in a cloud-config document (28 bytes each, in .bss).
const NODES_LIMIT: usize = 1 << 16;

static DOCUMENT: Once<[u8; USER_DATA_LIMIT]> = Once::new([0; USER_DATA_LIMIT]);
static NODES: Once<[Node; NODES_LIMIT]> = Once::new([Node::EMPTY; NODES_LIMIT]);
/// Decoded scalar text is never much longer than the document it comes from.
static TEXT: Once<[u8; USER_DATA_LIMIT]> = Once::new([0; USER_DATA_LIMIT]);

pub fn show(ctx: &Context<'_>, file: Option<&[u8]>) -> i32 {
    match show_document(ctx, file) {
        Ok(()) => 0,
        Err(e) => {
            output::error(format_args!("{e}"));
            EXIT_FAILED
        }
    }
}

fn show_document(ctx: &Context<'_>, file: Option<&[u8]>) -> Result<(), Line> {
    let buf = DOCUMENT.take().ok_or_else(|| msg!("the user-data buffer is in use"))?;
    let document = read(ctx, file, buf)?;
    let mut out = Stdout { buf: [0; 4096], len: 0 };
    let _ = out.write_str("{\"parts\":[");
    if document.is_empty() {
        let _ = out.write_str("],\"cloud_config\":null}\n");
        out.flush();
        return Ok(());
    }
    let kind = if mime::is_mime(document) { "mime" } else { kind_name(userdata::sniff(document)) };
    let _ = write!(out, "{{\"kind\":\"{kind}\",\"bytes\":{}}}],\"cloud_config\":", document.len());
    if kind == "cloud-config" {
        let nodes = NODES.take().ok_or_else(|| msg!("the YAML buffers are in use"))?;
        let text = TEXT.take().ok_or_else(|| msg!("the YAML buffers are in use"))?;
        let mut arena = Arena::new(nodes, text);
        let root = arena.parse(document).map_err(|e| msg!("user-data part 1: YAML line {} column {}: {}", e.line, e.column, e.kind))?;
        let _ = yaml::write_json(arena.value(root), &mut out);
    } else {
        let _ = out.write_str("null");
    }
    let _ = out.write_str("}\n");
    out.flush();
    Ok(())
}

/// FILE as given, else `$TINY_CLOUD_VAR/user-data` under the root.
fn read<'b>(ctx: &Context<'_>, file: Option<&[u8]>, buf: &'b mut [u8]) -> Result<&'b [u8], Line> {
    let Some(file) = file else {
        let mut path = heapless::Vec::<u8, 512>::new();
        let _ = path.extend_from_slice(ctx.config.var_dir.as_bytes());
        let _ = path.extend_from_slice(b"/");
        let _ = path.extend_from_slice(USER_DATA);
        return ctx.read(&path, buf)?.ok_or_else(|| msg!("no user-data saved in {}", Shown(ctx.config.var_dir.as_bytes())));
    };
    let path = CPath::from_parts(&[file]).map_err(|e| msg!("{}: {e}", Shown(file)))?;
    match fs::read_file(path.as_cstr(), buf) {
        Ok(Some(len)) => Ok(&buf[..len]),
        Ok(None) => Err(msg!("{}: no such file", Shown(file))),
        Err(ReadError::TooLarge { limit }) => Err(msg!("{}: larger than {limit} bytes", Shown(file))),
        Err(ReadError::Io(e)) => Err(msg!("{}: {}", Shown(file), Os(e))),
    }
}

/// cloud-init's names for what a part holds.
fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Script => "script",
        Kind::ScriptPerBoot => "script-per-boot",
        Kind::ScriptPerInstance => "script-per-instance",
        Kind::ScriptPerOnce => "script-per-once",
        Kind::CloudConfig => "cloud-config",
        Kind::CloudConfigArchive => "cloud-config-archive",
        Kind::CloudConfigJsonp => "cloud-config-jsonp",
        Kind::Include => "include",
        Kind::IncludeOnce => "include-once",
        Kind::Boothook => "cloud-boothook",
        Kind::PartHandler => "part-handler",
        Kind::Jinja => "jinja",
        Kind::Unknown => "unknown",
    }
}

/// Standard output in 4 KiB writes: a document's JSON can be larger than any buffer.
struct Stdout {
    buf: [u8; 4096],
    len: usize,
}

impl Stdout {
    fn flush(&mut self) {
        output::print_raw(&self.buf[..self.len]);
        self.len = 0;
    }
}

impl Write for Stdout {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        if self.len + s.len() > self.buf.len() {
            self.flush();
        }
        if s.len() > self.buf.len() {
            output::print_raw(s.as_bytes());
        } else {
            self.buf[self.len..self.len + s.len()].copy_from_slice(s.as_bytes());
            self.len += s.len();
        }
        Ok(())
    }
}
