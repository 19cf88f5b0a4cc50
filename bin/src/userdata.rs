//! The final phase's `run_userdata`: a `#!` script, or the script parts of a MIME
//! document, run in order. A MIME document is parsed and decoded whole before anything
//! runs, so nothing of a document that fails to parse is executed.

use wisp_core::mime::{self, Entity};
use wisp_core::userdata::{self, Kind};
use wisp_core::{base64, gzip, script};
use wisp_os_linux::cpath::CPath;
use wisp_os_linux::fs::{self, Dir, ReadError};
use wisp_os_linux::process::{self, ExitStatus};
use wisp_os_linux::{AsFd, BorrowedFd};

use crate::actions::{USER_DATA, USER_DATA_LIMIT};
use crate::context::Context;
use crate::once::Once;
use crate::output::{Line, Os, Shown};

const USER_DATA_LOG: &[u8] = b"user-data.log";
const USER_DATA_EXIT: &[u8] = b"user-data.exit";
/// Where MIME script parts are written to be run, under TINY_CLOUD_VAR.
const SCRIPTS_DIR: &[u8] = b"scripts";
/// Deepest nesting of multipart documents.
const DEPTH_LIMIT: usize = 4;

/// The saved user-data, read whole, and its decoded parts: in .bss, untouched unless used.
static SAVED: Once<[u8; USER_DATA_LIMIT]> = Once::new([0; USER_DATA_LIMIT]);
static DECODED: Once<[u8; USER_DATA_LIMIT]> = Once::new([0; USER_DATA_LIMIT]);

/// A part to act on: its kind, its name for the log, and where its bytes are.
struct Part {
    kind: Kind,
    media_type: heapless::String<64>,
    decoded: core::ops::Range<usize>,
    from_saved: bool,
}

#[inline(never)]
pub fn run(ctx: &Context<'_>, var: &Dir) -> Result<Line, Line> {
    let saved = SAVED.take().ok_or_else(|| msg!("the user-data buffer is in use"))?;
    let len = match var.read(USER_DATA, saved) {
        Ok(Some(len)) => len,
        Ok(None) => return Ok(msg!("no user-data saved")),
        Err(ReadError::TooLarge { limit }) => return Err(msg!("saved user-data is larger than {limit} bytes")),
        Err(ReadError::Io(e)) => return Err(msg!("cannot read user-data: {}", Os(e))),
    };
    let data = &saved[..len];
    if data.is_empty() {
        return Ok(msg!("user-data is empty"));
    }
    if !mime::is_mime(data) {
        return match userdata::sniff(data) {
            Kind::Script => {
                let path = script_path(ctx, &[USER_DATA])?;
                let output = open_log(ctx)?;
                finish(ctx, run_script(ctx, data, &path, output.as_fd())?, "user-data script")
            }
            kind => Ok(msg!("user-data is {kind:?}: not run (wisp runs scripts only, for now)")),
        };
    }
    let decoded = DECODED.take().ok_or_else(|| msg!("the user-data buffer is in use"))?;
    let mut parts: heapless::Vec<Part, { mime::PARTS_LIMIT }> = heapless::Vec::new();
    let entity = Entity::parse(data).map_err(|e| msg!("user-data: {e}"))?;
    let mut used = 0;
    collect(entity, data, decoded, &mut used, &mut parts, 0)?;
    let output = open_log(ctx)?;
    let mut ran = 0;
    let mut skipped = 0;
    for (index, part) in parts.iter().enumerate() {
        let bytes = if part.from_saved { &data[part.decoded.clone()] } else { &decoded[part.decoded.clone()] };
        if part.kind != Kind::Script {
            skipped += 1;
            crate::output::error(format_args!(
                "user-data part {} ({}): {:?} is not run (wisp runs scripts only, for now)",
                index + 1,
                part.media_type,
                part.kind
            ));
            continue;
        }
        let mut name = heapless::String::<16>::new();
        let _ = core::fmt::write(&mut name, format_args!("part-{:03}", index + 1));
        let scripts = ctx.create_dir(var_child(ctx, SCRIPTS_DIR)?.as_bytes())?;
        scripts.write_atomic(name.as_bytes(), bytes, 0o700, None).map_err(|e| msg!("cannot save {name}: {}", Os(e)))?;
        let path = script_path(ctx, &[SCRIPTS_DIR, b"/", name.as_bytes()])?;
        let status = run_script(ctx, bytes, &path, output.as_fd())?;
        if status != ExitStatus::Exited(0) {
            return finish(ctx, status, &name);
        }
        ran += 1;
    }
    finish(ctx, ExitStatus::Exited(0), "")?;
    Ok(msg!("{ran} script parts ran, {skipped} parts not run"))
}

/// The leaves of a MIME entity, decoded, in document order; an error for anything that
/// does not parse or decode.
fn collect(
    entity: Entity<'_>,
    saved: &[u8],
    decoded: &mut [u8],
    used: &mut usize,
    parts: &mut heapless::Vec<Part, { mime::PARTS_LIMIT }>,
    depth: usize,
) -> Result<(), Line> {
    if depth > DEPTH_LIMIT {
        return Err(msg!("user-data: multipart nested deeper than {DEPTH_LIMIT} levels"));
    }
    if entity.is_multipart() {
        for part in entity.parts().map_err(|e| msg!("user-data: {e}"))? {
            collect(part, saved, decoded, used, parts, depth + 1)?;
        }
        return Ok(());
    }
    let (range, from_saved) = if entity.is_base64() {
        let limit = decoded.len() - *used;
        let len = base64::decode(entity.body, &mut decoded[*used..]).map_err(|e| msg!("user-data part {}: {e} (room {limit})", parts.len() + 1))?;
        let range = *used..*used + len;
        *used += len;
        (range, false)
    } else {
        let start = entity.body.as_ptr() as usize - saved.as_ptr() as usize;
        (start..start + entity.body.len(), true)
    };
    let bytes = if from_saved { &saved[range.clone()] } else { &decoded[range.clone()] };
    let media_type = entity.media_type();
    let kind = if gzip::is_gzip(bytes) {
        Kind::Unknown
    } else {
        userdata::from_content_type(media_type).unwrap_or_else(|| userdata::sniff(bytes))
    };
    let mut name = heapless::String::<64>::new();
    let _ = core::fmt::write(&mut name, format_args!("{}", Shown(&media_type[..media_type.len().min(60)])));
    parts.push(Part { kind, media_type: name, decoded: range, from_saved }).map_err(|_| msg!("user-data: more than {} parts", mime::PARTS_LIMIT))
}

fn var_child(ctx: &Context<'_>, name: &[u8]) -> Result<CPath, Line> {
    let mut path = CPath::from_parts(&[ctx.config.var_dir.as_bytes(), b"/"]).map_err(|e| msg!("{e}"))?;
    path.push(name).map_err(|e| msg!("{e}"))?;
    Ok(path)
}

/// `$TINY_CLOUD_VAR/<parts...>` under the root, as the interpreter is given it.
fn script_path(ctx: &Context<'_>, parts: &[&[u8]]) -> Result<CPath, Line> {
    let mut path = ctx.path(ctx.config.var_dir.as_bytes())?;
    path.push(b"/").map_err(|e| msg!("{e}"))?;
    for part in parts {
        path.push(part).map_err(|e| msg!("{e}"))?;
    }
    Ok(path)
}

fn open_log(ctx: &Context<'_>) -> Result<wisp_os_linux::OwnedFd, Line> {
    let logs = ctx.logs_dir()?;
    logs.create_truncate(USER_DATA_LOG, 0o600).map_err(|e| msg!("cannot create user-data.log: {}", Os(e)))
}

/// Runs one script with the interpreter its `#!` names, output to `output`.
fn run_script(ctx: &Context<'_>, text: &[u8], path: &CPath, output: BorrowedFd<'_>) -> Result<ExitStatus, Line> {
    let shebang = script::parse(text).map_err(|e| msg!("user-data: {e}"))?;
    let interpreter = CPath::from_parts(&[shebang.interpreter]).map_err(|e| msg!("user-data interpreter: {e}"))?;
    let argument = CPath::from_parts(&[shebang.argument.unwrap_or(b"")]).map_err(|e| msg!("user-data interpreter argument: {e}"))?;
    let mut args: heapless::Vec<&core::ffi::CStr, 3> = heapless::Vec::new();
    let _ = args.push(interpreter.as_cstr());
    if shebang.argument.is_some() {
        let _ = args.push(argument.as_cstr());
    }
    let _ = args.push(path.as_cstr());
    let input = fs::open_read(c"/dev/null").map_err(|e| msg!("/dev/null: {}", Os(e)))?;
    process::run(ctx.start, interpreter.as_cstr(), &args, input.as_fd(), output)
        .map_err(|e| msg!("cannot start {}: {}", Shown(shebang.interpreter), Os(e)))
}

/// Records the exit status in `user-data.exit`; a failure fails the action.
fn finish(ctx: &Context<'_>, status: ExitStatus, what: &str) -> Result<Line, Line> {
    let code = match status {
        ExitStatus::Exited(code) => code,
        ExitStatus::Signaled(signal) => 128 + signal,
    };
    let mut exit_line = heapless::String::<16>::new();
    let _ = core::fmt::write(&mut exit_line, format_args!("{code}\n"));
    ctx.logs_dir()?
        .write_atomic(USER_DATA_EXIT, exit_line.as_bytes(), 0o644, None)
        .map_err(|e| msg!("cannot write user-data.exit: {}", Os(e)))?;
    match status {
        ExitStatus::Exited(0) => Ok(msg!("script exited 0")),
        ExitStatus::Exited(code) => Err(msg!("{what} exited with status {code} (output in user-data.log)")),
        ExitStatus::Signaled(signal) => Err(msg!("{what} killed by signal {signal} (output in user-data.log)")),
    }
}
