//! Growing a filesystem and the partition under it: `expand_root`, `wisp grow
//! MOUNTPOINT` and `wisp grow --image FILE --partition N`. core's `partition::device`
//! finds the device under a mount point, this module opens it, `partition::grow` reads
//! and writes the table and tells the kernel, and `partition::filesystem` grows the
//! mounted filesystem.

use wisp_core::cli::GrowTarget;
use wisp_core::host::explain::Worded;
use wisp_core::partition::device::{self, FindError, Found};
use wisp_core::partition::{filesystem, grow};
use wisp_core::text::{Decimal, Plain};
use wisp_os_linux::block;
use wisp_os_linux::nul_terminated::NulTerminated;
use wisp_os_linux::fs;
use wisp_os_linux::{AsFd, Errno};

use crate::context::Context;
use crate::host::block::{Disk, Mount, CRASH_AFTER_WRITES};
use crate::host::files::Root;
use crate::host::{errno, errno_words};
use crate::output::{Message, Os, Shown};


pub fn expand_root(ctx: &mut Context<'_>) -> Result<Message, Message> {
    let root = ctx.path(b"/")?;
    grow_mount(ctx, root.as_bytes())
}

#[inline(never)]
pub fn command(ctx: &mut Context<'_>, target: GrowTarget<'_>) -> i32 {
    let result = match target {
        GrowTarget::Mount(mountpoint) => grow_mount(ctx, mountpoint),
        GrowTarget::Image { file, partition } => grow_image(ctx, file, partition),
    };
    match result {
        Ok(note) => {
            crate::output::print(format_args!("{note}"));
            0
        }
        Err(e) => {
            crate::output::error(format_args!("grow: {e}"));
            crate::EXIT_FAILED
        }
    }
}

/// The filesystem holding `path`, and its partition.
fn grow_mount(ctx: &Context<'_>, path: &[u8]) -> Result<Message, Message> {
    let mut texts = device::Texts::new();
    let (filesystem, name, partition) = match device::find(&mut Root::of(ctx), path, &mut texts) {
        Ok(Found::Device { filesystem, name, partition }) => (filesystem, name, partition),
        Ok(Found::NotGrowable { fs_type, reason }) => return Ok(msg!("skipped: {} is on {} ({reason})", Shown(path), Shown(fs_type))),
        Ok(Found::Stacked { name, reason }) => return Ok(msg!("skipped: {} is {reason}", Shown(name))),
        Err(e) => return Err(find_error(ctx, path, &texts, e)),
    };
    let mut note = msg!("{}", Shown(name));
    if let Some((partition, disk_name)) = partition {
        let fd = open_device(ctx, disk_name)?;
        let sector_size = block::logical_sector_size(&fd).map_err(|e| device_error(disk_name, "sector size", e))?;
        let disk_bytes = block::size_bytes(&fd).map_err(|e| device_error(disk_name, "size", e))?;
        let mut disk = Disk { fd: fd.as_fd(), writes: 0, crash_after: crash_hook(ctx) };
        let grown = grow::grow_table(&mut disk, sector_size, disk_bytes / u64::from(sector_size), partition).map_err(table_error)?;
        let _ = core::fmt::Write::write_fmt(&mut note, format_args!(": {grown}"));
        if let Some((_, length)) = grown.extent_bytes() {
            let current = device_bytes(ctx, name)?;
            let told = grow::tell_kernel(&mut disk, &grown, current).map_err(|e| {
                let e = Os(Errno::from_raw_os_error(e.errno));
                msg!("the table says {} MiB, but the kernel refused that size for {} (BLKPG): {e}", Decimal(length >> 20), Shown(name))
            })?;
            let _ = core::fmt::Write::write_str(&mut note, told.note());
        }
    }
    // The filesystem grows to what the kernel now says the device holds (for a whole-disk
    // filesystem, the disk).
    let bytes = device_bytes(ctx, name)?;
    let mountpoint = NulTerminated::from_parts(&[path]).map_err(crate::output::line)?;
    let handle = fs::open_directory(mountpoint.as_cstr()).map_err(|e| crate::output::path_error(path, e))?;
    let grown = filesystem::grow(&mut Mount(handle.as_fd()), filesystem, bytes).map_err(|e| msg!("{note}; {}", Worded(&e, errno_words)))?;
    let _ = core::fmt::Write::write_fmt(&mut note, format_args!("; {grown}"));
    Ok(note)
}

#[inline(never)]
fn find_error(ctx: &Context<'_>, path: &[u8], texts: &device::Texts, e: FindError) -> Message {
    let (file, what) = match e {
        FindError::Read(file, error) => return ctx.path_error(texts.path(file), errno(error)),
        FindError::Mountinfo(e) => return msg!("{}: {e}", device::MOUNTINFO),
        FindError::NoMount => return msg!("no mount holds {}", Shown(path)),
        FindError::Missing(file) => (file, " is missing"),
        FindError::NamesNoDevice(file) => (file, " names no device"),
        FindError::BadPartition => (device::File::Device, ": bad PARTN"),
    };
    msg!("{}{what}", Shown(texts.path(file)))
}

/// What the kernel says /dev/NAME holds, in bytes.
#[inline(never)]
fn device_bytes(ctx: &Context<'_>, name: &[u8]) -> Result<u64, Message> {
    block::size_bytes(&open_device(ctx, name)?).map_err(|e| device_error(name, "size", e))
}

/// `NAME: what: reason` for a failed query of a device.
#[inline(never)]
fn device_error(name: &[u8], what: &str, e: Errno) -> Message {
    msg!("{}: {what}: {}", Shown(name), Os(e), what = Plain(what))
}

fn open_device(ctx: &Context<'_>, name: &[u8]) -> Result<wisp_os_linux::OwnedFd, Message> {
    let mut path = ctx.path(b"/dev/")?;
    path.push(name).map_err(crate::output::line)?;
    fs::open_read_write(path.as_cstr()).map_err(|e| crate::output::path_error(path.as_bytes(), e))
}

/// `wisp grow --image FILE --partition N`: the same table rewrite on an image file.
fn grow_image(ctx: &Context<'_>, file: &[u8], partition: u32) -> Result<Message, Message> {
    let path = NulTerminated::from_parts(&[file]).map_err(crate::output::line)?;
    let image = fs::open_read_write(path.as_cstr()).map_err(|e| crate::output::path_error(file, e))?;
    let size = block::file_size(&image).map_err(|e| crate::output::path_error(file, e))?;
    let mut disk = Disk { fd: image.as_fd(), writes: 0, crash_after: crash_hook(ctx) };
    let sector_size = grow::image_sector_size(&mut disk);
    let grown = grow::grow_table(&mut disk, sector_size, size / u64::from(sector_size), partition).map_err(table_error)?;
    Ok(msg!("{}: {grown}", Shown(file)))
}

#[inline(never)]
fn table_error(e: grow::TableError) -> Message {
    msg!("{}", Worded(&e, errno_words))
}

fn crash_hook(ctx: &Context<'_>) -> Option<u32> {
    ctx.start.env(CRASH_AFTER_WRITES.as_bytes()).and_then(parse_number)
}

fn parse_number(digits: &[u8]) -> Option<u32> {
    u32::try_from(wisp_core::text::decimal(digits, 10)?).ok()
}
