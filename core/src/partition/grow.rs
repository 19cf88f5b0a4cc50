//! Growing a partition on its disk: which sectors are read, checked and written, in which
//! order, and when the kernel is told.
//!
//! On GPT every crash point is recoverable (see `gpt`): the new backup array and header go
//! first and are synced, then the primary header and array (one write when they are
//! neighbours), then the protective MBR; both tables are read back before the kernel hears
//! of them. A primary that is damaged while the backup is sound is refused, never guessed
//! at, except the one state a crash between the two halves leaves, which is finished. On
//! MBR the one sector is rewritten whole and read back.

use core::fmt;

use super::gpt::{self, GptError, Header};
use super::mbr::{self, MbrError};
use super::{is_supported_sector_size, Decision};
use crate::host::block::BlockDevice;
use crate::host::explain::{errno_number, ErrnoWords, Explain};
use crate::host::HostError;
use crate::text::{Decimal, Plain};

/// Largest sector handled.
pub const SECTOR_LIMIT: usize = 4096;
/// The room `grow_table` works in on GPT: a header's sector just before the entry array
/// (so that the two neighbours go in one write), and a spare array for the backup's
/// entries and the read-back.
pub const TABLES_ROOM: usize = SECTOR_LIMIT + 2 * gpt::ENTRIES_LIMIT;

/// What went wrong, without where.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cause {
    UnsupportedSectorSize { size: u32 },
    Read { lba: u64, error: HostError },
    Write { lba: u64, error: HostError },
    Sync(HostError),
    Gpt(GptError),
    Mbr(MbrError),
    DiskEmpty,
    MbrReadBack,
    GptReadBack,
}

/// Which table, or which check, a failure concerns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    Table,
    /// The backup the primary points to.
    Backup,
    /// The primary could not be read while the backup at the disk's end is sound.
    PrimaryWithSoundBackup,
    PrimaryReadBack,
    BackupReadBack,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableError {
    pub stage: Stage,
    pub cause: Cause,
}

impl From<Cause> for TableError {
    fn from(cause: Cause) -> TableError {
        TableError { stage: Stage::Table, cause }
    }
}

fn at(stage: Stage) -> impl Fn(Cause) -> TableError {
    move |cause| TableError { stage, cause }
}

impl Explain for Cause {
    fn explain(&self, f: &mut fmt::Formatter<'_>, words: ErrnoWords) -> fmt::Result {
        let text = match *self {
            Cause::UnsupportedSectorSize { size } => return write!(f, "{size}-byte sectors are not supported (512 and 4096 are)", size = Decimal(size as u64)),
            Cause::Read { lba, error } | Cause::Write { lba, error } => {
                let verb = if let Cause::Read { .. } = self { "read" } else { "write" };
                write!(f, "{verb} at sector {lba}: ", lba = Decimal(lba), verb = Plain(verb))?;
                return words(error, f);
            }
            Cause::Sync(error) => {
                f.write_str("fsync: ")?;
                return words(error, f);
            }
            Cause::Gpt(e) => return fmt::Display::fmt(&e, f),
            Cause::Mbr(e) => return fmt::Display::fmt(&e, f),
            Cause::DiskEmpty => "the disk is empty",
            Cause::MbrReadBack => "the MBR read back differs from what was written",
            Cause::GptReadBack => "the GPT read back differs from what was written",
        };
        f.write_str(text)
    }
}

impl Explain for TableError {
    fn explain(&self, f: &mut fmt::Formatter<'_>, words: ErrnoWords) -> fmt::Result {
        let prefix = match self.stage {
            Stage::Table | Stage::PrimaryWithSoundBackup => "",
            Stage::Backup => "backup GPT: ",
            Stage::PrimaryReadBack => "primary GPT read back: ",
            Stage::BackupReadBack => "backup GPT read back: ",
        };
        f.write_str(prefix)?;
        self.cause.explain(f, words)?;
        if self.stage == Stage::PrimaryWithSoundBackup {
            f.write_str(", but the backup at the end of the disk is sound: repair the table (sgdisk) first; wisp does not guess")?;
        }
        Ok(())
    }
}

impl fmt::Display for TableError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.explain(f, errno_number)
    }
}

/// What the table now says about the partition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grown {
    pub partition: u32,
    pub sector_size: u32,
    pub decision: Decision,
    /// Growth stopped at the MBR's 2^32 sectors.
    pub capped: bool,
    /// The partition's first and last sector as the table now says (`None` for a logical
    /// partition, which the primary table does not describe).
    pub extent: Option<(u64, u64)>,
}

impl Grown {
    /// The partition's start and length in bytes, as the table says.
    pub fn extent_bytes(&self) -> Option<(u64, u64)> {
        let ss = u64::from(self.sector_size);
        self.extent.map(|(start, end)| (start * ss, (end - start + 1) * ss))
    }
}

impl fmt::Display for Grown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let partition = Decimal(self.partition.into());
        let mib = |sectors: u64| Decimal((sectors * u64::from(self.sector_size)) >> 20);
        match self.decision {
            Decision::Grow { start, old_end, new_end } => write!(
                f,
                "partition {partition} grown from {} MiB to {} MiB{}",
                mib(old_end - start + 1),
                mib(new_end - start + 1),
                Plain(if self.capped { " (capped at the MBR's 2 TiB)" } else { "" })
            ),
            Decision::NoChange { reason } => write!(f, "partition {partition}: no change ({reason})", reason = Plain(reason)),
        }
    }
}

/// The sector size of a disk image file: where its GPT header is found (512 unless only
/// 4096 has one).
pub fn image_sector_size(image: &mut impl BlockDevice) -> u32 {
    let mut has_header_at = |offset: u64| {
        let mut head = [0u8; 8];
        image.read_at(offset, &mut head).is_ok() && &head == gpt::SIGNATURE
    };
    if !has_header_at(512) && has_header_at(4096) {
        4096
    } else {
        512
    }
}

/// The disk's first sector, read into `buf`, and whether it is a protective MBR: then
/// the table is a GPT, which `grow_table` works on in `TABLES_ROOM` bytes of room.
pub fn first_sector<'b>(disk: &mut impl BlockDevice, sector_size: u32, buf: &'b mut [u8; SECTOR_LIMIT]) -> Result<(&'b mut [u8], bool), TableError> {
    if !is_supported_sector_size(sector_size) {
        return Err(Cause::UnsupportedSectorSize { size: sector_size }.into());
    }
    let sector = &mut buf[..sector_size as usize];
    Sectors { disk, sector_size }.read(0, sector)?;
    let is_gpt = mbr::is_protective(sector);
    Ok((sector, is_gpt))
}

/// Plans from the table whose first sector (`first_sector`'s) is `mbr_sector`, writes in
/// the crash-safe order, and reads it back: the GPT, in `gpt_room` (`TABLES_ROOM` bytes,
/// the host's, not the stack), when `first_sector` found one, else the MBR.
pub fn grow_table(disk: &mut impl BlockDevice, mbr_sector: &mut [u8], gpt_room: Option<&mut [u8]>, disk_sectors: u64, partition: u32) -> Result<Grown, TableError> {
    let sector_size = mbr_sector.len() as u32;
    let mut disk = Sectors { disk, sector_size };
    let (decision, capped, extent) = if let Some(room) = gpt_room {
        let (decision, extent) = grow_gpt(&mut disk, room, mbr_sector, disk_sectors, partition)?;
        (decision, false, extent)
    } else {
        let plan = mbr::plan(mbr_sector, disk_sectors, sector_size, partition).map_err(Cause::Mbr)?;
        if let Decision::Grow { .. } = plan.decision {
            disk.write(0, mbr_sector)?;
            disk.sync()?;
            let mut check_buf = [0u8; SECTOR_LIMIT];
            let check = &mut check_buf[..mbr_sector.len()];
            disk.read(0, check)?;
            if check != mbr_sector {
                return Err(Cause::MbrReadBack.into());
            }
        }
        let entries = mbr::entries(mbr_sector).map_err(Cause::Mbr)?;
        let extent = entries.iter().find(|e| e.number == partition).map(|e| (e.start, e.start + e.sectors - 1));
        (plan.decision, plan.capped, extent)
    };
    Ok(Grown { partition, sector_size, decision, capped, extent })
}

/// The decision, and the partition's extent as the table now says (the entries as planned
/// are what was written and read back).
fn grow_gpt<D: BlockDevice>(disk: &mut Sectors<'_, D>, room: &mut [u8], mbr_sector: &mut [u8], disk_sectors: u64, partition: u32) -> Result<(Decision, Option<(u64, u64)>), TableError> {
    let last = disk_sectors.checked_sub(1).ok_or(Cause::DiskEmpty)?;
    let room = &mut room[..TABLES_ROOM];
    let (header_slot, arrays) = room.split_at_mut(SECTOR_LIMIT);
    // The backup's entries, then the primary's read back.
    let (entries_buf, spare_buf) = arrays.split_at_mut(gpt::ENTRIES_LIMIT);
    let (primary, entries) = match disk.read_primary(entries_buf) {
        Ok(found) => found,
        Err(cause) => {
            let stage = if disk.read_header(last).is_ok() { Stage::PrimaryWithSoundBackup } else { Stage::Table };
            return Err(TableError { stage, cause });
        }
    };
    let len = entries.len();
    match gpt::validate(&primary, entries, disk_sectors) {
        Ok(()) => {
            // The backup the primary points to must be sound and agree with it.
            let backup = disk.read_header(primary.alternate_lba()).map_err(at(Stage::Backup))?;
            if !backup.mirrors(&primary) {
                return Err(Cause::Gpt(GptError::TablesDiffer).into());
            }
            let backup_entries = &mut spare_buf[..len];
            disk.read(backup.entries_lba(), backup_entries)?;
            gpt::validate(&backup, backup_entries, disk_sectors).map_err(|e| at(Stage::Backup)(Cause::Gpt(e)))?;
        }
        Err(GptError::EntriesCrc) => match disk.read_header(last) {
            Ok(backup) if gpt::is_interrupted_growth(&primary, entries, &backup) => {}
            _ => return Err(Cause::Gpt(GptError::EntriesCrc).into()),
        },
        Err(e) => return Err(Cause::Gpt(e).into()),
    }
    let plan = gpt::plan(&primary, entries, disk_sectors, disk.sector_size, partition).map_err(Cause::Gpt)?;
    let extent = Some(plan.extent);
    let mbr_changed = mbr::cover_disk(mbr_sector, disk_sectors);
    if !plan.changed && !mbr_changed {
        return Ok((plan.decision, extent));
    }
    let ss = mbr_sector.len();
    let sector = &mut header_slot[SECTOR_LIMIT - ss..];
    // The backup first: until the primary header is written, the old tables still rule.
    disk.write(plan.backup.entries_lba(), entries)?;
    plan.backup.write_sector(sector);
    disk.write(plan.backup.my_lba(), sector)?;
    disk.sync()?;
    plan.primary.write_sector(sector);
    // Header and array are neighbours on every disk partitioned by common tools: then
    // one write of both (the header's slot ends where the array begins), so that no crash
    // between two writes can leave them disagreeing.
    if plan.primary.entries_lba() == 2 {
        disk.write(1, &room[SECTOR_LIMIT - ss..SECTOR_LIMIT + len])?;
    } else {
        disk.write(plan.primary.entries_lba(), entries)?;
        disk.write(1, sector)?;
    }
    if mbr_changed {
        disk.write(0, mbr_sector)?;
    }
    disk.sync()?;
    // Read back both tables before anyone is told about them.
    let (check, check_entries) = disk.read_primary(&mut room[SECTOR_LIMIT + gpt::ENTRIES_LIMIT..])?;
    gpt::validate(&check, check_entries, disk_sectors).map_err(|e| at(Stage::PrimaryReadBack)(Cause::Gpt(e)))?;
    let backup = disk.read_header(check.alternate_lba()).map_err(at(Stage::BackupReadBack))?;
    if check != plan.primary || !backup.mirrors(&check) {
        return Err(Cause::GptReadBack.into());
    }
    Ok((plan.decision, extent))
}

/// What happened when the kernel's idea of the partition was compared with the table's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelTold {
    /// The kernel already had the table's size.
    Nothing,
    /// Told of the growth just written.
    Grown,
    /// The table had not changed but the kernel's size differed (a crash between the
    /// table's write and BLKPG): told now.
    CaughtUp,
}

impl KernelTold {
    /// What the growth's note adds.
    pub fn note(self) -> &'static str {
        if self == KernelTold::CaughtUp { " (the kernel is now told the table's size)" } else { "" }
    }
}

/// Tells the kernel the partition's extent (BLKPG) whenever its size (`kernel_bytes`)
/// differs from the table's, not only after a rewrite: a crash between the table's write
/// and BLKPG is finished by the next run.
pub fn tell_kernel(disk: &mut impl BlockDevice, grown: &Grown, kernel_bytes: u64) -> Result<KernelTold, HostError> {
    let Some((start, length)) = grown.extent_bytes() else { return Ok(KernelTold::Nothing) };
    if kernel_bytes == length {
        return Ok(KernelTold::Nothing);
    }
    disk.resize_partition(grown.partition, start, length)?;
    Ok(match grown.decision {
        Decision::NoChange { .. } => KernelTold::CaughtUp,
        Decision::Grow { .. } => KernelTold::Grown,
    })
}

/// Sector I/O on the disk.
struct Sectors<'d, D: BlockDevice> {
    disk: &'d mut D,
    sector_size: u32,
}

impl<D: BlockDevice> Sectors<'_, D> {
    fn read(&mut self, lba: u64, buf: &mut [u8]) -> Result<(), Cause> {
        self.disk.read_at(lba * u64::from(self.sector_size), buf).map_err(|error| Cause::Read { lba, error })
    }

    fn write(&mut self, lba: u64, bytes: &[u8]) -> Result<(), Cause> {
        self.disk.write_at(lba * u64::from(self.sector_size), bytes).map_err(|error| Cause::Write { lba, error })
    }

    fn sync(&mut self) -> Result<(), Cause> {
        self.disk.sync().map_err(Cause::Sync)
    }

    fn read_header(&mut self, lba: u64) -> Result<Header, Cause> {
        let mut buf = [0u8; SECTOR_LIMIT];
        let sector = &mut buf[..self.sector_size as usize];
        self.read(lba, sector)?;
        Header::parse(sector).map_err(Cause::Gpt)
    }

    /// The primary header (LBA 1), and its entry array read into `buf`.
    fn read_primary<'b>(&mut self, buf: &'b mut [u8]) -> Result<(Header, &'b mut [u8]), Cause> {
        let header = self.read_header(1)?;
        // `Header::parse` refused an array larger than `gpt::ENTRIES_LIMIT`, the buffer's length.
        let entries = &mut buf[..header.entries_len()];
        self.read(header.entries_lba(), entries)?;
        Ok((header, entries))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::memory::MemoryDisk;
    use crate::partition::gpt::tests::image;
    use crate::partition::mbr::tests::put;

    /// A 4 MiB cloud image's GPT with one partition at 1 MiB, on a 16 MiB disk.
    fn small_image_on_a_larger_disk() -> Vec<u8> {
        image(512, 32768, 8192, &[(2048, 4095)])
    }

    fn grown(disk: &mut MemoryDisk) -> Result<Grown, TableError> {
        let sectors = disk.bytes.len() as u64 / 512;
        let mut first = [0; SECTOR_LIMIT];
        let (first, is_gpt) = first_sector(disk, 512, &mut first)?;
        grow_table(disk, first, is_gpt.then_some(&mut [0; TABLES_ROOM][..]), sectors, 1)
    }

    #[test]
    fn gpt_writes_the_backup_then_the_primary_then_the_mbr() {
        let mut disk = MemoryDisk::new(small_image_on_a_larger_disk());
        let outcome = grown(&mut disk).unwrap();
        assert_eq!(outcome.decision, Decision::Grow { start: 2048, old_end: 4095, new_end: 30719 });
        assert_eq!(outcome.extent, Some((2048, 30719)));
        assert_eq!(std::format!("{outcome}"), "partition 1 grown from 1 MiB to 14 MiB");
        // The backup array (32 sectors before the last) and header, a sync, the primary
        // header and array in one write, the protective MBR, a sync.
        assert_eq!(
            disk.changes(),
            [
                // Sector 32735, then sector 32767.
                "write 16760320+16384",
                "write 16776704+512",
                "sync",
                "write 512+16896",
                "write 0+512",
                "sync"
            ]
        );
        // What sgdisk would read: the primary's backup is at the disk's end and agrees.
        let primary = Header::parse(&disk.bytes[512..1024]).unwrap();
        let backup = Header::parse(&disk.bytes[32767 * 512..]).unwrap();
        assert_eq!((primary.alternate_lba(), primary.last_usable()), (32767, 32734));
        assert!(backup.mirrors(&primary));
        let entries = &disk.bytes[1024..1024 + 16384];
        gpt::validate(&primary, entries, 32768).unwrap();
        assert_eq!(gpt::partitions(&primary, entries).next().unwrap().last, 30719);
        assert_eq!(mbr::entries(&disk.bytes[..512]).unwrap()[0].sectors, 32767);
    }

    #[test]
    fn a_disk_already_grown_is_not_written() {
        let mut disk = MemoryDisk::new(small_image_on_a_larger_disk());
        grown(&mut disk).unwrap();
        let mut again = MemoryDisk::new(disk.bytes.clone());
        let outcome = grown(&mut again).unwrap();
        assert_eq!(outcome.decision, Decision::NoChange { reason: "less than 1 MiB to gain" });
        assert_eq!(outcome.extent, Some((2048, 30719)));
        assert!(again.changes().is_empty(), "{:?}", again.calls);
        assert_eq!(again.bytes, disk.bytes);
        assert_eq!(std::format!("{outcome}"), "partition 1: no change (less than 1 MiB to gain)");
    }

    #[test]
    fn a_crash_after_any_write_is_finished_by_the_rerun() {
        let before = small_image_on_a_larger_disk();
        let mut clean = MemoryDisk::new(before.clone());
        grown(&mut clean).unwrap();
        for crash_after in 1..=clean.writes.len() {
            let mut crashed = MemoryDisk::new(before.clone());
            for (offset, bytes) in &clean.writes[..crash_after] {
                crashed.bytes[*offset as usize..*offset as usize + bytes.len()].copy_from_slice(bytes);
            }
            let outcome = grown(&mut crashed).unwrap_or_else(|e| panic!("crash after write {crash_after}: {e}"));
            assert_eq!(crashed.bytes, clean.bytes, "crash after write {crash_after}");
            assert_eq!(outcome.extent.map(|(first, _)| first), Some(2048));
        }
    }

    #[test]
    fn a_damaged_primary_with_a_sound_backup_is_refused_unwritten() {
        let mut bytes = small_image_on_a_larger_disk();
        // The image's table as it is, on a disk of its size: the backup is at the end.
        bytes.truncate(8192 * 512);
        bytes[512 + 30] ^= 0xff;
        let mut disk = MemoryDisk::new(bytes.clone());
        let e = grown(&mut disk).unwrap_err();
        assert_eq!(e, TableError { stage: Stage::PrimaryWithSoundBackup, cause: Cause::Gpt(GptError::HeaderCrc) });
        assert_eq!(
            std::format!("{e}"),
            "GPT header CRC mismatch, but the backup at the end of the disk is sound: repair the table (sgdisk) first; wisp does not guess"
        );
        assert!(disk.changes().is_empty());
        assert_eq!(disk.bytes, bytes);
    }

    #[test]
    fn a_damaged_backup_with_a_sound_primary_is_refused_unwritten() {
        let mut bytes = small_image_on_a_larger_disk();
        bytes[8191 * 512 + 30] ^= 0xff;
        let mut disk = MemoryDisk::new(bytes.clone());
        let e = grown(&mut disk).unwrap_err();
        assert_eq!(std::format!("{e}"), "backup GPT: GPT header CRC mismatch");
        assert!(disk.changes().is_empty());
        // A backup array that no longer matches its header.
        let mut bytes = small_image_on_a_larger_disk();
        bytes[(8191 - 32) * 512 + 40] ^= 0xff;
        let e = grown(&mut MemoryDisk::new(bytes)).unwrap_err();
        assert_eq!(std::format!("{e}"), "backup GPT: GPT partition entries CRC mismatch");
    }

    #[test]
    fn a_primary_array_that_matches_no_backup_is_refused() {
        let mut bytes = small_image_on_a_larger_disk();
        bytes[1024 + 40] ^= 0xff;
        let mut disk = MemoryDisk::new(bytes);
        assert_eq!(grown(&mut disk).unwrap_err(), TableError::from(Cause::Gpt(GptError::EntriesCrc)));
        assert!(disk.changes().is_empty());
    }

    #[test]
    fn a_failed_read_names_its_sector_and_the_system_error() {
        let mut disk = MemoryDisk::new(small_image_on_a_larger_disk());
        disk.fail_reads.insert(8191 * 512, HostError { errno: 5 });
        let e = grown(&mut disk).unwrap_err();
        assert_eq!(std::format!("{e}"), "backup GPT: read at sector 8191: errno 5");
        let words = |_: HostError, f: &mut fmt::Formatter<'_>| f.write_str("Input/output error");
        assert_eq!(
            std::format!("{}", crate::host::explain::Worded(&e, words)),
            "backup GPT: read at sector 8191: Input/output error"
        );
    }

    #[test]
    fn mbr_rewrites_its_one_sector_and_reads_it_back() {
        let mut bytes = std::vec![0u8; 32768 * 512];
        put(&mut bytes[..512], 1, 0x83, 2048, 2048);
        let mut disk = MemoryDisk::new(bytes);
        let outcome = grown(&mut disk).unwrap();
        assert_eq!(outcome.decision, Decision::Grow { start: 2048, old_end: 4095, new_end: 30719 });
        assert_eq!(outcome.extent, Some((2048, 30719)));
        assert_eq!(disk.changes(), ["write 0+512", "sync"]);
        assert_eq!(disk.calls.last().unwrap(), "read 0+512");
        assert_eq!(mbr::entries(&disk.bytes[..512]).unwrap()[0].sectors, 28672);
        let mut again = MemoryDisk::new(disk.bytes.clone());
        assert!(matches!(grown(&mut again).unwrap().decision, Decision::NoChange { .. }));
        assert!(again.changes().is_empty());
    }

    #[test]
    fn unsupported_sector_sizes_are_refused_before_any_read() {
        let mut disk = MemoryDisk::new(small_image_on_a_larger_disk());
        let e = first_sector(&mut disk, 1024, &mut [0; SECTOR_LIMIT]).unwrap_err();
        assert_eq!(std::format!("{e}"), "1024-byte sectors are not supported (512 and 4096 are)");
        assert!(disk.calls.is_empty());
    }

    #[test]
    fn an_image_says_its_sector_size_by_where_its_header_is() {
        assert_eq!(image_sector_size(&mut MemoryDisk::new(small_image_on_a_larger_disk())), 512);
        assert_eq!(image_sector_size(&mut MemoryDisk::new(image(4096, 4096, 1024, &[(256, 511)]))), 4096);
        assert_eq!(image_sector_size(&mut MemoryDisk::new(std::vec![0u8; 8192])), 512);
    }

    #[test]
    fn the_kernel_is_told_whenever_its_size_differs_from_the_table() {
        let mut disk = MemoryDisk::new(small_image_on_a_larger_disk());
        let outcome = grown(&mut disk).unwrap();
        disk.calls.clear();
        // Just grown: the kernel still has the old 1 MiB.
        assert_eq!(tell_kernel(&mut disk, &outcome, 1 << 20), Ok(KernelTold::Grown));
        assert_eq!(disk.calls, ["resize 1 1048576+14680064"]);
        // A rerun after a crash before BLKPG: the table has nothing to change, the kernel is behind.
        let rerun = grown(&mut MemoryDisk::new(disk.bytes.clone())).unwrap();
        disk.calls.clear();
        let told = tell_kernel(&mut disk, &rerun, 1 << 20).unwrap();
        assert_eq!((told, told.note()), (KernelTold::CaughtUp, " (the kernel is now told the table's size)"));
        assert_eq!(disk.calls, ["resize 1 1048576+14680064"]);
        // The kernel agrees: nothing is asked of it.
        disk.calls.clear();
        assert_eq!(tell_kernel(&mut disk, &rerun, 14 << 20), Ok(KernelTold::Nothing));
        assert!(disk.calls.is_empty());
    }
}
