//! Growing a filesystem and the partition under it: `expand_root`, `wisp grow
//! MOUNTPOINT` and `wisp grow --image FILE --partition N`. The tables are core's plans;
//! this module reads and writes the sectors in the order they prescribe, tells the
//! kernel, and grows the mounted filesystem.

use wisp_core::cli::GrowTarget;
use wisp_core::mountinfo::{self, Filesystem};
use wisp_core::partition::gpt::{self, GptError, Header};
use wisp_core::partition::{self, mbr, Decision};
use wisp_os_linux::block;
use wisp_os_linux::cpath::CPath;
use wisp_os_linux::fs;
use wisp_os_linux::{AsFd, BorrowedFd, Errno};

use crate::context::Context;
use crate::output::{Line, Os, Shown};

/// Largest /proc/self/mountinfo read.
const MOUNTINFO_LIMIT: usize = 64 * 1024;
/// Largest sector handled.
const SECTOR_LIMIT: usize = 4096;
/// A test hook: stop (as a crash would) right after this many table writes.
const CRASH_AFTER_WRITES: &str = "WISP_TEST_CRASH_AFTER_WRITES";

pub fn expand_root(ctx: &mut Context<'_>) -> Result<Line, Line> {
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
fn grow_mount(ctx: &Context<'_>, path: &[u8]) -> Result<Line, Line> {
    let mut text = [0u8; MOUNTINFO_LIMIT];
    let mountinfo = ctx.read(b"/proc/self/mountinfo", &mut text)?.ok_or_else(|| msg!("/proc/self/mountinfo is missing"))?;
    let mount = mountinfo::find_containing(mountinfo, path)
        .map_err(|e| msg!("/proc/self/mountinfo: {e}"))?
        .ok_or_else(|| msg!("no mount holds {}", Shown(path)))?;
    let filesystem = match mountinfo::growable(&mount) {
        Ok(filesystem) => filesystem,
        Err(reason) => return Ok(msg!("skipped: {} is on {} ({reason})", Shown(path), Shown(mount.fs_type))),
    };
    let mut sysfs = heapless::String::<64>::new();
    match (mount.major, mount.source.strip_prefix(b"/dev/")) {
        // btrfs reports an anonymous device number (major 0): its source names the device.
        (0, Some(name)) if !name.contains(&b'/') => {
            let name = core::str::from_utf8(name).map_err(|_| msg!("mount source {} is not UTF-8", Shown(mount.source)))?;
            let _ = core::fmt::write(&mut sysfs, format_args!("/sys/class/block/{name}/uevent"));
        }
        _ => {
            let _ = core::fmt::write(&mut sysfs, format_args!("/sys/dev/block/{}:{}/uevent", mount.major, mount.minor));
        }
    }
    let mut uevent = [0u8; 1024];
    let device = ctx.read(sysfs.as_bytes(), &mut uevent)?.ok_or_else(|| msg!("{sysfs} is missing"))?;
    let name = mountinfo::uevent_value(device, b"DEVNAME").ok_or_else(|| msg!("{sysfs} names no device"))?;
    if let Some(reason) = mountinfo::stacked_device_reason(name) {
        return Ok(msg!("skipped: {} is {reason}", Shown(name)));
    }
    let mut note = msg!("{}", Shown(name));
    if let Some(number) = mountinfo::uevent_value(device, b"PARTN") {
        let partition = parse_number(number).ok_or_else(|| msg!("{sysfs}: bad PARTN"))?;
        let parent = parent_uevent(&sysfs);
        let mut parent_uevent = [0u8; 1024];
        let parent_text = ctx.read(parent.as_bytes(), &mut parent_uevent)?.ok_or_else(|| msg!("{parent} is missing"))?;
        let disk_name = mountinfo::uevent_value(parent_text, b"DEVNAME").ok_or_else(|| msg!("{parent} names no device"))?;
        let disk = open_device(ctx, disk_name)?;
        let sector_size = block::logical_sector_size(&disk).map_err(|e| device_error(disk_name, "sector size", e))?;
        let disk_bytes = block::size_bytes(&disk).map_err(|e| device_error(disk_name, "size", e))?;
        let outcome = grow_table(ctx, disk.as_fd(), sector_size, disk_bytes / u64::from(sector_size), partition)?;
        let _ = core::fmt::Write::write_fmt(&mut note, format_args!(": {}", outcome.note));
        // Told whenever the kernel's size differs from the table's, not only after a
        // rewrite: a crash between the table's write and BLKPG is finished here.
        if let Some((start, end)) = outcome.extent {
            let ss = u64::from(sector_size);
            let length = (end - start + 1) * ss;
            let current = device_bytes(ctx, name)?;
            if current != length {
                block::resize_partition(&disk, partition, start * ss, length)
                    .map_err(|e| msg!("the table says {} MiB, but the kernel refused that size for {} (BLKPG): {}", length >> 20, Shown(name), Os(e)))?;
                if matches!(outcome.decision, Decision::NoChange { .. }) {
                    let _ = core::fmt::Write::write_str(&mut note, " (the kernel is now told the table's size)");
                }
            }
        }
    }
    // The filesystem grows to what the kernel now says the device holds (for a whole-disk
    // filesystem, the disk).
    let bytes = device_bytes(ctx, name)?;
    let mountpoint = CPath::from_parts(&[path]).map_err(crate::output::line)?;
    let handle = fs::open_directory(mountpoint.as_cstr()).map_err(|e| crate::output::path_error(path, e))?;
    let grown = grow_filesystem(handle.as_fd(), filesystem, bytes).map_err(|e| msg!("{note}; {e}"))?;
    let _ = core::fmt::Write::write_fmt(&mut note, format_args!("; {grown}"));
    Ok(note)
}

/// `/sys/dev/block/8:1/uevent` -> `/sys/dev/block/8:1/../uevent`: the kernel resolves
/// the `..` after following the device's link, which lands on its parent disk.
fn parent_uevent(uevent: &str) -> heapless::String<64> {
    let mut out = heapless::String::new();
    let _ = out.push_str(uevent.strip_suffix("uevent").unwrap_or(uevent));
    let _ = out.push_str("../uevent");
    out
}

/// What the kernel says /dev/NAME holds, in bytes.
#[inline(never)]
fn device_bytes(ctx: &Context<'_>, name: &[u8]) -> Result<u64, Line> {
    block::size_bytes(&open_device(ctx, name)?).map_err(|e| device_error(name, "size", e))
}

/// `NAME: what: reason` for a failed query of a device.
#[inline(never)]
fn device_error(name: &[u8], what: &str, e: Errno) -> Line {
    msg!("{}: {what}: {}", Shown(name), Os(e))
}

fn open_device(ctx: &Context<'_>, name: &[u8]) -> Result<wisp_os_linux::OwnedFd, Line> {
    let mut path = ctx.path(b"/dev/")?;
    path.push(name).map_err(crate::output::line)?;
    fs::open_read_write(path.as_cstr()).map_err(|e| crate::output::path_error(path.as_bytes(), e))
}

/// Out of line: inlined into grow_mount, its values stay live across the whole function (112 bytes).
#[inline(never)]
fn grow_filesystem(handle: BorrowedFd<'_>, filesystem: Filesystem, bytes: u64) -> Result<Line, Line> {
    match filesystem {
        Filesystem::Ext4 => {
            let block_size = block::filesystem_block_size(handle).map_err(|e| crate::output::os_error("statfs", e))?;
            let blocks = bytes / block_size;
            match block::ext4_resize(handle, blocks) {
                Ok(()) => Ok(msg!("ext4 resized to {blocks} blocks of {block_size} bytes")),
                Err(Errno::PERM) | Err(Errno::ACCESS) => {
                    Err(msg!("the kernel refused to resize ext4 online: EXT4_IOC_RESIZE_FS needs CAP_SYS_RESOURCE"))
                }
                Err(Errno::OPNOTSUPP) => Err(msg!(
                    "the kernel cannot resize this ext4 online (no resize_inode and no meta_bg: its block group descriptors cannot grow)"
                )),
                Err(e) => Err(crate::output::os_error("ext4 online resize failed", e)),
            }
        }
        Filesystem::Xfs => {
            let (block_size, data_blocks, imaxpct) = block::xfs_geometry(handle).map_err(|e| crate::output::os_error("xfs geometry", e))?;
            let blocks = bytes / u64::from(block_size.max(1));
            if blocks <= data_blocks {
                return Ok(msg!("xfs already fills the device ({data_blocks} blocks)"));
            }
            block::xfs_grow(handle, blocks, imaxpct).map_err(|e| crate::output::os_error("xfs growfs failed", e))?;
            // xfs drops a last allocation group too small to be worth it: report what it did.
            let (_, grown, _) = block::xfs_geometry(handle).map_err(|e| crate::output::os_error("xfs geometry", e))?;
            if grown == data_blocks {
                return Ok(msg!("xfs already fills the device ({data_blocks} blocks)"));
            }
            Ok(msg!("xfs grown from {data_blocks} to {grown} blocks of {block_size} bytes"))
        }
        Filesystem::Btrfs => {
            block::btrfs_resize_max(handle).map_err(|e| crate::output::os_error("btrfs resize failed", e))?;
            Ok(msg!("btrfs resized to the device's size"))
        }
    }
}

/// `wisp grow --image FILE --partition N`: the same table rewrite on an image file, whose
/// sector size is where its GPT header is found (512 otherwise).
fn grow_image(ctx: &Context<'_>, file: &[u8], partition: u32) -> Result<Line, Line> {
    let path = CPath::from_parts(&[file]).map_err(crate::output::line)?;
    let image = fs::open_read_write(path.as_cstr()).map_err(|e| crate::output::path_error(file, e))?;
    let size = block::file_size(&image).map_err(|e| crate::output::path_error(file, e))?;
    let has_header_at = |offset: u64| {
        let mut head = [0u8; 8];
        block::read_at(&image, offset, &mut head).is_ok() && &head == gpt::SIGNATURE
    };
    let sector_size = if !has_header_at(512) && has_header_at(4096) { 4096 } else { 512 };
    let outcome = grow_table(ctx, image.as_fd(), sector_size, size / u64::from(sector_size), partition)?;
    Ok(msg!("{}: {}", Shown(file), outcome.note))
}

struct TableOutcome {
    decision: Decision,
    /// The partition's first and last sector as the table now says (`None` for a logical
    /// partition, which the primary table does not describe).
    extent: Option<(u64, u64)>,
    note: Line,
}

/// Reads the table, plans, writes in the crash-safe order, and reads it back.
fn grow_table(ctx: &Context<'_>, disk: BorrowedFd<'_>, sector_size: u32, disk_sectors: u64, partition: u32) -> Result<TableOutcome, Line> {
    if !partition::is_supported_sector_size(sector_size) {
        return Err(msg!("{sector_size}-byte sectors are not supported (512 and 4096 are)"));
    }
    let ss = sector_size as usize;
    let mut writer = Writer { disk, sector_size, writes: 0, crash_after: crash_hook(ctx) };
    let mut mbr_sector = [0u8; SECTOR_LIMIT];
    writer.read(0, &mut mbr_sector[..ss])?;
    let (decision, capped, extent) = if mbr::is_protective(&mbr_sector[..ss]) {
        let (decision, extent) = grow_gpt(&mut writer, &mut mbr_sector[..ss], disk_sectors, partition)?;
        (decision, false, extent)
    } else {
        let plan = mbr::plan(&mut mbr_sector[..ss], disk_sectors, sector_size, partition).map_err(crate::output::line)?;
        if let Decision::Grow { .. } = plan.decision {
            writer.write(0, &mbr_sector[..ss])?;
            writer.sync()?;
            let mut check = [0u8; SECTOR_LIMIT];
            writer.read(0, &mut check[..ss])?;
            if check[..ss] != mbr_sector[..ss] {
                return Err(msg!("the MBR read back differs from what was written"));
            }
        }
        let entries = mbr::entries(&mbr_sector[..ss]).map_err(crate::output::line)?;
        let extent = entries.iter().find(|e| e.number == partition).map(|e| (e.start, e.start + e.sectors - 1));
        (plan.decision, plan.capped, extent)
    };
    let mib = |sectors: u64| (sectors * u64::from(sector_size)) >> 20;
    let note = match decision {
        Decision::Grow { start, old_end, new_end } => msg!(
            "partition {partition} grown from {} MiB to {} MiB{}",
            mib(old_end - start + 1),
            mib(new_end - start + 1),
            if capped { " (capped at the MBR's 2 TiB)" } else { "" }
        ),
        Decision::NoChange { reason } => msg!("partition {partition}: no change ({reason})"),
    };
    Ok(TableOutcome { decision, extent, note })
}

/// The decision, and the partition's extent as the table now says (the entries as planned
/// are what was written and read back).
fn grow_gpt(writer: &mut Writer<'_>, mbr_sector: &mut [u8], disk_sectors: u64, partition: u32) -> Result<(Decision, Option<(u64, u64)>), Line> {
    let ss = writer.sector_size as usize;
    let last = disk_sectors.checked_sub(1).ok_or_else(|| msg!("the disk is empty"))?;
    let (primary, mut entries, len) = match writer.read_primary() {
        Ok(found) => found,
        Err(e) => {
            return Err(match writer.read_header(last) {
                Ok(_) => msg!("{e}, but the backup at the end of the disk is sound: repair the table (sgdisk) first; wisp does not guess"),
                Err(_) => e,
            });
        }
    };
    match gpt::validate(&primary, &entries[..len], disk_sectors) {
        Ok(()) => {
            // The backup the primary points to must be sound and agree with it.
            let backup = writer.read_header(primary.alternate_lba()).map_err(|e| msg!("backup GPT: {e}"))?;
            if !backup.mirrors(&primary) {
                return Err(crate::output::line(GptError::TablesDiffer));
            }
            let mut backup_entries = [0u8; gpt::ENTRIES_LIMIT];
            writer.read(backup.entries_lba(), &mut backup_entries[..len])?;
            gpt::validate(&backup, &backup_entries[..len], disk_sectors).map_err(|e| msg!("backup GPT: {e}"))?;
        }
        Err(GptError::EntriesCrc) => match writer.read_header(last) {
            Ok(backup) if gpt::is_interrupted_growth(&primary, &entries[..len], &backup) => {}
            _ => return Err(crate::output::line(GptError::EntriesCrc)),
        },
        Err(e) => return Err(crate::output::line(e)),
    }
    let plan = gpt::plan(&primary, &mut entries[..len], disk_sectors, writer.sector_size, partition).map_err(crate::output::line)?;
    let extent = gpt::partitions(&primary, &entries[..len]).find(|p| p.number == partition).map(|p| (p.first, p.last));
    let mbr_changed = mbr::cover_disk(mbr_sector, disk_sectors);
    if !plan.changed && !mbr_changed {
        return Ok((plan.decision, extent));
    }
    let mut sector = [0u8; SECTOR_LIMIT];
    // The backup first: until the primary header is written, the old tables still rule.
    writer.write(plan.backup.entries_lba(), &entries[..len])?;
    plan.backup.write_sector(&mut sector[..ss]);
    writer.write(plan.backup.my_lba(), &sector[..ss])?;
    writer.sync()?;
    plan.primary.write_sector(&mut sector[..ss]);
    if plan.primary.entries_lba() == 2 {
        // Header and array are neighbours (as on every disk partitioned by common tools):
        // one write, so that no crash between two writes can leave them disagreeing.
        let mut both = [0u8; SECTOR_LIMIT + gpt::ENTRIES_LIMIT];
        both[..ss].copy_from_slice(&sector[..ss]);
        both[ss..ss + len].copy_from_slice(&entries[..len]);
        writer.write(1, &both[..ss + len])?;
    } else {
        writer.write(plan.primary.entries_lba(), &entries[..len])?;
        writer.write(1, &sector[..ss])?;
    }
    if mbr_changed {
        writer.write(0, mbr_sector)?;
    }
    writer.sync()?;
    // Read back both tables before anyone is told about them.
    let (check, check_entries, check_len) = writer.read_primary()?;
    gpt::validate(&check, &check_entries[..check_len], disk_sectors).map_err(|e| msg!("primary GPT read back: {e}"))?;
    let backup = writer.read_header(check.alternate_lba()).map_err(|e| msg!("backup GPT read back: {e}"))?;
    if check != plan.primary || !backup.mirrors(&check) {
        return Err(msg!("the GPT read back differs from what was written"));
    }
    Ok((plan.decision, extent))
}

/// Sector I/O on the disk, counting writes for the crash hook.
struct Writer<'d> {
    disk: BorrowedFd<'d>,
    sector_size: u32,
    writes: u32,
    crash_after: Option<u32>,
}

impl Writer<'_> {
    fn read(&mut self, lba: u64, buf: &mut [u8]) -> Result<(), Line> {
        block::read_at(self.disk, lba * u64::from(self.sector_size), buf).map_err(|e| msg!("read at sector {lba}: {}", Os(e)))
    }

    fn write(&mut self, lba: u64, bytes: &[u8]) -> Result<(), Line> {
        block::write_at(self.disk, lba * u64::from(self.sector_size), bytes).map_err(|e| msg!("write at sector {lba}: {}", Os(e)))?;
        self.writes += 1;
        if self.crash_after == Some(self.writes) {
            let _ = block::sync(self.disk);
            crate::output::error(format_args!("{CRASH_AFTER_WRITES}: stopping after write {}", self.writes));
            wisp_os_linux::process::exit(99);
        }
        Ok(())
    }

    fn sync(&mut self) -> Result<(), Line> {
        block::sync(self.disk).map_err(|e| crate::output::os_error("fsync", e))
    }

    fn read_header(&mut self, lba: u64) -> Result<Header, Line> {
        let mut sector = [0u8; SECTOR_LIMIT];
        let ss = self.sector_size as usize;
        self.read(lba, &mut sector[..ss])?;
        Header::parse(&sector[..ss]).map_err(crate::output::line)
    }

    /// The primary header (LBA 1) and its entry array.
    fn read_primary(&mut self) -> Result<(Header, [u8; gpt::ENTRIES_LIMIT], usize), Line> {
        let header = self.read_header(1)?;
        let mut entries = [0u8; gpt::ENTRIES_LIMIT];
        let len = header.entries_len();
        self.read(header.entries_lba(), &mut entries[..len])?;
        Ok((header, entries, len))
    }
}

fn crash_hook(ctx: &Context<'_>) -> Option<u32> {
    ctx.start.env(CRASH_AFTER_WRITES.as_bytes()).and_then(parse_number)
}

fn parse_number(digits: &[u8]) -> Option<u32> {
    u32::try_from(wisp_core::text::decimal(digits, 10)?).ok()
}
