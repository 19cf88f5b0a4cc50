//! GUID Partition Tables (UEFI 2.x, chapter 5): two headers, two entry arrays, each
//! guarded by a CRC-32.
//!
//! Growing rewrites both copies. The order the caller must follow makes every crash
//! point recoverable: the new backup array and header go to the end of the disk first
//! (the old tables still describe the disk), then, after a sync, the primary array and
//! header. A crash between those two leaves a primary header whose array CRC no longer
//! matches, but matches the new backup exactly: `is_interrupted_growth` recognises that
//! state, and a rerun finishes it. Any other damage is refused.

use core::fmt;

use super::{decide, Decision, Numbered};
use crate::crc32::crc32_bitwise;

pub const SIGNATURE: &[u8; 8] = b"EFI PART";
const MIN_HEADER_SIZE: usize = 92;
/// The header fills at most one 512-byte sector's worth of bytes.
pub const HEADER_LIMIT: usize = 512;
/// The largest entry array wisp reads (the usual one is 128 x 128 bytes = 16 KiB).
pub const ENTRIES_LIMIT: usize = 64 * 1024;
const MIN_ENTRY_SIZE: usize = 128;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GptError {
    NoSignature,
    BadHeaderSize,
    HeaderCrc,
    BadEntrySize,
    /// `limit` is `ENTRIES_LIMIT`: a `u32`, so that a `Cause` holding this error is 16
    /// bytes and a `Result<(), Cause>` comes back in registers.
    EntriesTooLarge { limit: u32 },
    EntriesCrc,
    /// first_usable after last_usable, the array inside the usable area, or the header
    /// not where it says it is.
    BadLayout,
    /// The table describes sectors beyond the end of the disk.
    DiskSmallerThanTable,
    Overlap { first: u32, second: u32 },
    OutsideUsableArea { partition: u32 },
    NoSuchPartition { partition: u32 },
    /// The primary and backup tables describe different partitions.
    TablesDiffer,
}

/// `GptError`'s messages, a line each in the order of its variants, `#` where each number
/// goes: one text, not code per variant that loads its own.
const MESSAGES: &str = "\
no GPT header (signature \"EFI PART\" missing)
GPT header size is invalid
GPT header CRC mismatch
GPT entry size is invalid
GPT entry array larger than # bytes
GPT partition entries CRC mismatch
GPT header describes an impossible layout
the disk is smaller than its GPT claims
GPT partitions # and # overlap
GPT partition # lies outside the usable area
GPT has no partition #
the primary and backup GPTs differ";

impl GptError {
    /// Its line in `MESSAGES`.
    fn index(self) -> usize {
        match self {
            GptError::NoSignature => 0,
            GptError::BadHeaderSize => 1,
            GptError::HeaderCrc => 2,
            GptError::BadEntrySize => 3,
            GptError::EntriesTooLarge { .. } => 4,
            GptError::EntriesCrc => 5,
            GptError::BadLayout => 6,
            GptError::DiskSmallerThanTable => 7,
            GptError::Overlap { .. } => 8,
            GptError::OutsideUsableArea { .. } => 9,
            GptError::NoSuchPartition { .. } => 10,
            GptError::TablesDiffer => 11,
        }
    }

    fn numbers(self) -> [u64; 2] {
        match self {
            GptError::EntriesTooLarge { limit } => [limit.into(), 0],
            GptError::Overlap { first, second } => [first.into(), second.into()],
            GptError::OutsideUsableArea { partition } | GptError::NoSuchPartition { partition } => [partition.into(), 0],
            _ => [0; 2],
        }
    }

    pub fn message(self) -> Numbered {
        Numbered::line(MESSAGES, self.index(), self.numbers())
    }
}

impl fmt::Display for GptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.message().fmt(f)
    }
}

fn u32_at(bytes: &[u8], offset: usize) -> u32 {
    u32::from_le_bytes([bytes[offset], bytes[offset + 1], bytes[offset + 2], bytes[offset + 3]])
}

fn u64_at(bytes: &[u8], offset: usize) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes[offset..offset + 8]);
    u64::from_le_bytes(word)
}

/// A validated GPT header, kept as its bytes so that fields wisp does not change (and
/// any bytes past the 92 it knows) are written back as they were.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    raw: [u8; HEADER_LIMIT],
    size: usize,
}

impl Header {
    /// Parses and checks the header at the start of `sector`.
    pub fn parse(sector: &[u8]) -> Result<Header, GptError> {
        if sector.len() < MIN_HEADER_SIZE || &sector[..8] != SIGNATURE {
            return Err(GptError::NoSignature);
        }
        let size = u32_at(sector, 12) as usize;
        if !(MIN_HEADER_SIZE..=HEADER_LIMIT.min(sector.len())).contains(&size) {
            return Err(GptError::BadHeaderSize);
        }
        let mut raw = [0u8; HEADER_LIMIT];
        raw[..size].copy_from_slice(&sector[..size]);
        let header = Header { raw, size };
        if header.computed_crc() != u32_at(sector, 16) {
            return Err(GptError::HeaderCrc);
        }
        let entry_size = header.entry_size() as usize;
        if entry_size < MIN_ENTRY_SIZE || !entry_size.is_multiple_of(8) {
            return Err(GptError::BadEntrySize);
        }
        if header.entries_len() > ENTRIES_LIMIT {
            return Err(GptError::EntriesTooLarge { limit: ENTRIES_LIMIT as u32 });
        }
        if header.first_usable() > header.last_usable() {
            return Err(GptError::BadLayout);
        }
        Ok(header)
    }

    fn computed_crc(&self) -> u32 {
        let mut bytes = self.raw;
        bytes[16..20].fill(0);
        crc32_bitwise(&bytes[..self.size])
    }

    pub fn my_lba(&self) -> u64 {
        u64_at(&self.raw, 24)
    }
    pub fn alternate_lba(&self) -> u64 {
        u64_at(&self.raw, 32)
    }
    pub fn first_usable(&self) -> u64 {
        u64_at(&self.raw, 40)
    }
    pub fn last_usable(&self) -> u64 {
        u64_at(&self.raw, 48)
    }
    pub fn disk_guid(&self) -> &[u8] {
        &self.raw[56..72]
    }
    pub fn entries_lba(&self) -> u64 {
        u64_at(&self.raw, 72)
    }
    pub fn entry_count(&self) -> u32 {
        u32_at(&self.raw, 80)
    }
    pub fn entry_size(&self) -> u32 {
        u32_at(&self.raw, 84)
    }
    pub fn entries_crc(&self) -> u32 {
        u32_at(&self.raw, 88)
    }
    /// Bytes of the entry array.
    pub fn entries_len(&self) -> usize {
        self.entry_count() as usize * self.entry_size() as usize
    }
    /// Sectors the entry array takes.
    pub fn entries_sectors(&self, sector_size: u32) -> u64 {
        (self.entries_len() as u64).div_ceil(u64::from(sector_size))
    }

    // The setters' offsets are the header's fields, inside its 92 bytes: `get_mut` spares
    // the panic path a slice index would keep at each.
    fn set_u64(&mut self, offset: usize, value: u64) {
        if let Some(field) = self.raw.get_mut(offset..offset + 8) {
            field.copy_from_slice(&value.to_le_bytes());
        }
    }

    fn set_u32(&mut self, offset: usize, value: u32) {
        if let Some(field) = self.raw.get_mut(offset..offset + 4) {
            field.copy_from_slice(&value.to_le_bytes());
        }
    }

    fn seal(&mut self) {
        let crc = self.computed_crc();
        self.set_u32(16, crc);
    }

    /// The header as a sector: its bytes, then zeros.
    pub fn write_sector(&self, sector: &mut [u8]) {
        sector.fill(0);
        sector[..self.size].copy_from_slice(&self.raw[..self.size]);
    }

    /// Whether `self` is the backup of `primary`: the same table, seen from the other end.
    pub fn mirrors(&self, primary: &Header) -> bool {
        self.disk_guid() == primary.disk_guid()
            && self.first_usable() == primary.first_usable()
            && self.last_usable() == primary.last_usable()
            && self.entry_count() == primary.entry_count()
            && self.entry_size() == primary.entry_size()
            && self.entries_crc() == primary.entries_crc()
            && self.my_lba() == primary.alternate_lba()
            && self.alternate_lba() == primary.my_lba()
    }
}

/// One used entry: its 1-based number and extent (sectors, inclusive).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Partition {
    pub number: u32,
    pub first: u64,
    pub last: u64,
}

/// The used entries of an array (a zero type GUID marks an unused one).
pub fn partitions<'e>(header: &Header, entries: &'e [u8]) -> Partitions<'e> {
    Partitions { entries, size: header.entry_size() as usize, number: 0 }
}

/// The used entries of an array, in order. One walk, out of line, serves the five callers.
#[derive(Clone)]
pub struct Partitions<'e> {
    entries: &'e [u8],
    size: usize,
    /// The number of the entry read last.
    number: u32,
}

impl Iterator for Partitions<'_> {
    type Item = Partition;

    #[inline(never)]
    fn next(&mut self) -> Option<Partition> {
        loop {
            let start = self.number as usize * self.size;
            // `Header::parse` refused an entry smaller than 128 bytes.
            let entry = self.entries.get(start..start + self.size).filter(|entry| entry.len() >= MIN_ENTRY_SIZE)?;
            self.number += 1;
            if entry[..16] != [0; 16] {
                return Some(Partition { number: self.number, first: u64_at(entry, 32), last: u64_at(entry, 40) });
            }
        }
    }
}

/// Checks an entry array against its header and the disk: the CRC, every partition inside
/// the usable area, no two overlapping, and the table within `disk_sectors`.
pub fn validate(header: &Header, entries: &[u8], disk_sectors: u64) -> Result<(), GptError> {
    if entries.len() != header.entries_len() || crc32_bitwise(entries) != header.entries_crc() {
        return Err(GptError::EntriesCrc);
    }
    if header.last_usable() >= disk_sectors || header.alternate_lba() >= disk_sectors || header.my_lba() >= disk_sectors {
        return Err(GptError::DiskSmallerThanTable);
    }
    let mut all = partitions(header, entries);
    while let Some(a) = all.next() {
        if a.first > a.last || a.first < header.first_usable() || a.last > header.last_usable() {
            return Err(GptError::OutsideUsableArea { partition: a.number });
        }
        // The entries after `a`.
        for b in all.clone() {
            if a.first <= b.last && b.first <= a.last {
                return Err(GptError::Overlap { first: a.number, second: b.number });
            }
        }
    }
    Ok(())
}

/// After a crash between the backup's writes and the primary header's: the primary
/// header is sound but its array CRC is stale, while the array matches a sound backup
/// of the same disk exactly. Only this state is finished on a rerun.
pub fn is_interrupted_growth(primary: &Header, entries: &[u8], backup: &Header) -> bool {
    backup.disk_guid() == primary.disk_guid()
        && backup.entry_count() == primary.entry_count()
        && backup.entry_size() == primary.entry_size()
        && backup.alternate_lba() == primary.my_lba()
        && crc32_bitwise(entries) == backup.entries_crc()
        && crc32_bitwise(entries) != primary.entries_crc()
}

/// What growing partition `partition` means for both tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GptPlan {
    pub partition: u32,
    pub decision: Decision,
    /// The headers as they must be after growing; the entry array is updated in place.
    pub primary: Header,
    pub backup: Header,
    /// Whether anything must be written: the partition grows, or the backup must move to
    /// the disk's end.
    pub changed: bool,
    /// The partition's first and last sector, as the entries now say.
    pub extent: (u64, u64),
}

/// Plans the growth of `partition` on a disk of `disk_sectors`, given the primary header
/// and its entry array (already validated, or an interrupted growth's), and updates the
/// entry in `entries` when it grows. The backup moves to the end of the disk.
pub fn plan(primary: &Header, entries: &mut [u8], disk_sectors: u64, sector_size: u32, partition: u32) -> Result<GptPlan, GptError> {
    if primary.my_lba() != 1 || primary.entries_lba() < 2 || entries.len() != primary.entries_len() {
        return Err(GptError::BadLayout);
    }
    let entries_sectors = primary.entries_sectors(sector_size);
    let backup_lba = disk_sectors.checked_sub(1).ok_or(GptError::DiskSmallerThanTable)?;
    let backup_entries_lba = backup_lba.checked_sub(entries_sectors).ok_or(GptError::DiskSmallerThanTable)?;
    let last_usable = backup_entries_lba.checked_sub(1).ok_or(GptError::DiskSmallerThanTable)?;
    if last_usable < primary.last_usable() || primary.entries_lba() + entries_sectors > primary.first_usable() {
        return Err(if last_usable < primary.last_usable() { GptError::DiskSmallerThanTable } else { GptError::BadLayout });
    }
    let target = partitions(primary, entries).find(|p| p.number == partition).ok_or(GptError::NoSuchPartition { partition })?;
    let next_start = partitions(primary, entries).filter(|p| p.first > target.last).map(|p| p.first).min();
    let max_end = next_start.map_or(last_usable, |start| (start - 1).min(last_usable));
    let decision = match decide(target.first, target.last, max_end, sector_size) {
        Decision::NoChange { .. } if next_start.is_some_and(|start| start <= last_usable) && max_end > target.last => {
            Decision::NoChange { reason: "less than 1 MiB to the next partition" }
        }
        Decision::NoChange { .. } if next_start.is_some() && max_end <= target.last => {
            Decision::NoChange { reason: "the next partition follows it directly" }
        }
        other => other,
    };
    let mut extent = (target.first, target.last);
    if let Decision::Grow { new_end, .. } = decision {
        extent.1 = new_end;
        let offset = (partition as usize - 1) * primary.entry_size() as usize + 40;
        entries[offset..offset + 8].copy_from_slice(&new_end.to_le_bytes());
    }
    let entries_crc = crc32_bitwise(entries);
    let mut new_primary = *primary;
    new_primary.set_u64(32, backup_lba);
    new_primary.set_u64(48, last_usable);
    new_primary.set_u32(88, entries_crc);
    new_primary.seal();
    let mut backup = new_primary;
    backup.set_u64(24, backup_lba);
    backup.set_u64(32, 1);
    backup.set_u64(72, backup_entries_lba);
    backup.seal();
    let changed = matches!(decision, Decision::Grow { .. }) || new_primary != *primary;
    Ok(GptPlan { partition, decision, primary: new_primary, backup, changed, extent })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub const LINUX_FS: [u8; 16] = [0xaf, 0x3d, 0xc6, 0x0f, 0x83, 0x84, 0x72, 0x47, 0x8e, 0x79, 0x3d, 0x69, 0xd8, 0x47, 0x7d, 0xe4];

    /// A disk image of `disk_sectors` whose GPT (128 entries of 128 bytes) was made for a
    /// disk of `table_sectors`, as a cloud image is, with these partitions.
    pub fn image(sector_size: u32, disk_sectors: u64, table_sectors: u64, parts: &[(u64, u64)]) -> Vec<u8> {
        let ss = sector_size as usize;
        let mut disk = vec![0u8; disk_sectors as usize * ss];
        let entries_sectors = (128 * 128u64).div_ceil(u64::from(sector_size));
        let mut entries = vec![0u8; 128 * 128];
        for (i, &(first, last)) in parts.iter().enumerate() {
            let entry = &mut entries[i * 128..(i + 1) * 128];
            entry[..16].copy_from_slice(&LINUX_FS);
            entry[16..32].copy_from_slice(&[i as u8 + 1; 16]);
            entry[32..40].copy_from_slice(&first.to_le_bytes());
            entry[40..48].copy_from_slice(&last.to_le_bytes());
            entry[48..56].copy_from_slice(&(1u64 << 60).to_le_bytes());
            entry[56..58].copy_from_slice(b"r\0");
        }
        let backup_lba = table_sectors - 1;
        let mut raw = [0u8; HEADER_LIMIT];
        raw[..8].copy_from_slice(SIGNATURE);
        raw[8..12].copy_from_slice(&0x0001_0000u32.to_le_bytes());
        raw[12..16].copy_from_slice(&92u32.to_le_bytes());
        let mut header = Header { raw, size: 92 };
        header.set_u64(24, 1);
        header.set_u64(32, backup_lba);
        header.set_u64(40, 2 + entries_sectors);
        header.set_u64(48, backup_lba - entries_sectors - 1);
        header.raw[56..72].copy_from_slice(&[0x42; 16]);
        header.set_u64(72, 2);
        header.set_u32(80, 128);
        header.set_u32(84, 128);
        header.set_u32(88, crc32_bitwise(&entries));
        header.seal();
        let mut backup = header;
        backup.set_u64(24, backup_lba);
        backup.set_u64(32, 1);
        backup.set_u64(72, backup_lba - entries_sectors);
        backup.seal();
        header.write_sector(&mut disk[ss..2 * ss]);
        disk[2 * ss..2 * ss + entries.len()].copy_from_slice(&entries);
        let backup_entries = (backup_lba - entries_sectors) as usize * ss;
        disk[backup_entries..backup_entries + entries.len()].copy_from_slice(&entries);
        backup.write_sector(&mut disk[backup_lba as usize * ss..(backup_lba as usize + 1) * ss]);
        super::super::mbr::tests::protective(&mut disk[..ss], table_sectors);
        disk
    }

    fn read(disk: &[u8], sector_size: u32) -> (Header, Vec<u8>) {
        let ss = sector_size as usize;
        let header = Header::parse(&disk[ss..2 * ss]).unwrap();
        let start = header.entries_lba() as usize * ss;
        (header, disk[start..start + header.entries_len()].to_vec())
    }

    #[test]
    fn parses_and_validates() {
        let disk = image(512, 8192, 8192, &[(2048, 4095)]);
        let (header, entries) = read(&disk, 512);
        assert_eq!((header.my_lba(), header.alternate_lba(), header.first_usable(), header.last_usable()), (1, 8191, 34, 8158));
        validate(&header, &entries, 8192).unwrap();
        assert_eq!(partitions(&header, &entries).collect::<Vec<_>>(), [Partition { number: 1, first: 2048, last: 4095 }]);
        let backup = Header::parse(&disk[8191 * 512..]).unwrap();
        assert!(backup.mirrors(&header));
    }

    #[test]
    fn grows_to_the_end_and_moves_the_backup() {
        // A 4 MiB image table on a 16 MiB disk.
        let disk = image(512, 32768, 8192, &[(2048, 4095)]);
        let (header, mut entries) = read(&disk, 512);
        validate(&header, &entries, 32768).unwrap();
        let plan = plan(&header, &mut entries, 32768, 512, 1).unwrap();
        // Last usable 32734; aligned down so the partition ends on a MiB boundary.
        assert_eq!(plan.decision, Decision::Grow { start: 2048, old_end: 4095, new_end: 30719 });
        assert!(plan.changed);
        assert_eq!((plan.primary.alternate_lba(), plan.primary.last_usable()), (32767, 32734));
        assert_eq!((plan.backup.my_lba(), plan.backup.alternate_lba(), plan.backup.entries_lba()), (32767, 1, 32735));
        assert!(plan.backup.mirrors(&plan.primary));
        validate(&plan.primary, &entries, 32768).unwrap();
        // Type, GUIDs, attributes and name are kept.
        assert_eq!(&entries[..16], &LINUX_FS);
        assert_eq!(&entries[16..32], &[1; 16]);
        assert_eq!(u64_at(&entries, 48), 1 << 60);
        // The headers parse back, CRCs included.
        let mut sector = [0u8; 512];
        plan.primary.write_sector(&mut sector);
        assert_eq!(Header::parse(&sector).unwrap(), plan.primary);
        plan.backup.write_sector(&mut sector);
        assert_eq!(Header::parse(&sector).unwrap(), plan.backup);
        // A second plan on the result changes nothing.
        let again = super::plan(&plan.primary, &mut entries, 32768, 512, 1).unwrap();
        assert_eq!(again.decision, Decision::NoChange { reason: "less than 1 MiB to gain" });
        assert!(!again.changed);
    }

    #[test]
    fn stops_at_the_next_partition() {
        let disk = image(512, 32768, 8192, &[(2048, 4095), (5000, 8000)]);
        let (header, mut entries) = read(&disk, 512);
        let plan1 = plan(&header, &mut entries.clone(), 32768, 512, 1).unwrap();
        assert_eq!(plan1.decision, Decision::NoChange { reason: "less than 1 MiB to the next partition" });
        // The table still moves its backup to the new end of the disk.
        assert!(plan1.changed);
        let plan2 = plan(&header, &mut entries, 32768, 512, 2).unwrap();
        assert_eq!(plan2.decision, Decision::Grow { start: 5000, old_end: 8000, new_end: 30719 });
        let disk = image(512, 32768, 32768, &[(2048, 4095), (4096, 8000)]);
        let (header, mut entries) = read(&disk, 512);
        let plan = plan(&header, &mut entries, 32768, 512, 1).unwrap();
        assert_eq!(plan.decision, Decision::NoChange { reason: "the next partition follows it directly" });
        assert!(!plan.changed);
    }

    #[test]
    fn four_kib_sectors() {
        let disk = image(4096, 8192, 1024, &[(256, 511)]);
        let (header, mut entries) = read(&disk, 4096);
        assert_eq!(header.entries_sectors(4096), 4);
        let plan = plan(&header, &mut entries, 8192, 4096, 1).unwrap();
        // Last usable 8186; 256 sectors per MiB.
        assert_eq!(plan.decision, Decision::Grow { start: 256, old_end: 511, new_end: 7935 });
        assert_eq!(plan.backup.entries_lba(), 8187);
    }

    #[test]
    fn refusals() {
        let disk = image(512, 32768, 8192, &[(2048, 4095), (3000, 5000)]);
        let (header, entries) = read(&disk, 512);
        assert_eq!(validate(&header, &entries, 32768), Err(GptError::Overlap { first: 1, second: 2 }));
        let disk = image(512, 8192, 8192, &[(2048, 4095)]);
        let (header, mut entries) = read(&disk, 512);
        assert_eq!(validate(&header, &entries, 4096), Err(GptError::DiskSmallerThanTable));
        assert_eq!(plan(&header, &mut entries, 4096, 512, 1), Err(GptError::DiskSmallerThanTable));
        assert_eq!(plan(&header, &mut entries, 8192, 512, 2), Err(GptError::NoSuchPartition { partition: 2 }));
        entries[100] ^= 1;
        assert_eq!(validate(&header, &entries, 8192), Err(GptError::EntriesCrc));

        let mut sector = disk[512..1024].to_vec();
        sector[50] ^= 1;
        assert_eq!(Header::parse(&sector), Err(GptError::HeaderCrc));
        assert_eq!(Header::parse(&[0u8; 512]), Err(GptError::NoSignature));
        let mut big = disk[512..1024].to_vec();
        big[12..16].copy_from_slice(&600u32.to_le_bytes());
        assert_eq!(Header::parse(&big), Err(GptError::BadHeaderSize));
        let outside = image(512, 8192, 8192, &[(10, 4095)]);
        let (header, entries) = read(&outside, 512);
        assert_eq!(validate(&header, &entries, 8192), Err(GptError::OutsideUsableArea { partition: 1 }));
    }

    #[test]
    fn interrupted_growth_is_recognised() {
        let disk = image(512, 32768, 8192, &[(2048, 4095)]);
        let (header, entries) = read(&disk, 512);
        let mut grown = entries.clone();
        let plan = plan(&header, &mut grown, 32768, 512, 1).unwrap();
        // Backup written, primary array written, primary header not yet.
        assert!(is_interrupted_growth(&header, &grown, &plan.backup));
        assert_eq!(validate(&header, &grown, 32768), Err(GptError::EntriesCrc));
        // Random damage to the array is not mistaken for it.
        let mut damaged = entries.clone();
        damaged[200] ^= 1;
        assert!(!is_interrupted_growth(&header, &damaged, &plan.backup));
        // Nor is an untouched table.
        assert!(!is_interrupted_growth(&header, &entries, &Header::parse(&disk[8191 * 512..]).unwrap()));
        // Finishing: planning from the stale header and the new array gives the new tables.
        let mut finished = grown.clone();
        let again = super::plan(&header, &mut finished, 32768, 512, 1).unwrap();
        assert_eq!(again.primary, plan.primary);
        assert_eq!(finished, grown);
    }

    #[test]
    fn garbage_never_panics() {
        let disk = image(512, 64, 64, &[(40, 50)]);
        crate::fuzz::seed("gpt", &disk);
        let base = disk[512..1024].to_vec();
        let mut garbage = crate::fuzz::Garbage::new(5);
        for _ in 0..2000 {
            let sector = garbage.mutated(&base, 0..92, 4);
            if let Ok(header) = Header::parse(&sector) {
                let mut entries = vec![0u8; header.entries_len().min(ENTRIES_LIMIT)];
                let _ = validate(&header, &entries, 64);
                if let Ok(planned) = plan(&header, &mut entries, 64, 512, 1) {
                    // What wisp would write reads back as planned.
                    let mut written = [0u8; 512];
                    planned.primary.write_sector(&mut written);
                    assert_eq!(Header::parse(&written), Ok(planned.primary));
                    assert!(planned.backup.mirrors(&planned.primary));
                }
            }
        }
    }
}
