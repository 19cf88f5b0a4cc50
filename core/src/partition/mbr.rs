//! The master boot record: four primary partitions in the first sector. Growing one
//! rewrites that single sector, which the disk writes whole, so there is no crash window.

use core::fmt;

use super::{decide, Decision, Numbered};

const TABLE: usize = 446;
const ENTRY: usize = 16;
/// Sector counts and starts are 32-bit: nothing past 2^32 sectors can be addressed.
pub const SECTOR_LIMIT: u64 = 1 << 32;
pub const PROTECTIVE: u8 = 0xee;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MbrError {
    NoSignature,
    NoSuchPartition { partition: u32 },
    Overlap { first: u32, second: u32 },
    DiskSmallerThanTable,
}

/// `MbrError`'s messages, a line each in the order of its variants, `#` where each number goes.
const MESSAGES: &str = "\
no partition table (MBR signature 55 AA missing)
MBR has no partition #
MBR partitions # and # overlap
the disk is smaller than its MBR claims";

impl MbrError {
    /// The message, `#` where each number goes.
    pub fn message(self) -> Numbered {
        let index = match self {
            MbrError::NoSignature => 0,
            MbrError::NoSuchPartition { .. } => 1,
            MbrError::Overlap { .. } => 2,
            MbrError::DiskSmallerThanTable => 3,
        };
        let numbers = match self {
            MbrError::NoSuchPartition { partition } => [partition.into(), 0],
            MbrError::Overlap { first, second } => [first.into(), second.into()],
            _ => [0; 2],
        };
        Numbered::line(MESSAGES, index, numbers)
    }
}

impl fmt::Display for MbrError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.message().fmt(f)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub number: u32,
    pub kind: u8,
    pub start: u64,
    pub sectors: u64,
}

impl Entry {
    pub fn is_extended(&self) -> bool {
        matches!(self.kind, 0x05 | 0x0f | 0x85)
    }
}

/// The used primary entries of a boot sector, after checking its signature.
pub fn entries(sector: &[u8]) -> Result<heapless::Vec<Entry, 4>, MbrError> {
    if sector.len() < 512 || sector[510..512] != [0x55, 0xaa] {
        return Err(MbrError::NoSignature);
    }
    let mut out = heapless::Vec::new();
    for i in 0..4 {
        let raw = &sector[TABLE + i * ENTRY..TABLE + (i + 1) * ENTRY];
        let word = |at: usize| u64::from(u32::from_le_bytes([raw[at], raw[at + 1], raw[at + 2], raw[at + 3]]));
        let entry = Entry { number: i as u32 + 1, kind: raw[4], start: word(8), sectors: word(12) };
        if entry.kind != 0 && entry.sectors != 0 {
            let _ = out.push(entry);
        }
    }
    Ok(out)
}

/// Whether the sector is a GPT's protective MBR.
pub fn is_protective(sector: &[u8]) -> bool {
    // As `entries` reads them: a used entry has a kind and a size.
    sector.len() >= 512
        && sector[510..512] == [0x55, 0xaa]
        && sector[TABLE..TABLE + 4 * ENTRY].chunks(ENTRY).any(|raw| raw[4] == PROTECTIVE && raw[12..16] != [0; 4])
}

/// Sets the protective entry's size to cover the disk (capped at 32 bits); returns
/// whether the sector changed.
pub fn cover_disk(sector: &mut [u8], disk_sectors: u64) -> bool {
    let Ok(found) = entries(sector) else { return false };
    let Some(entry) = found.iter().find(|e| e.kind == PROTECTIVE) else { return false };
    let size = (disk_sectors - entry.start.min(disk_sectors)).min(SECTOR_LIMIT - 1) as u32;
    let at = TABLE + (entry.number as usize - 1) * ENTRY + 12;
    let changed = sector[at..at + 4] != size.to_le_bytes();
    sector[at..at + 4].copy_from_slice(&size.to_le_bytes());
    changed
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MbrPlan {
    pub decision: Decision,
    /// The partition could have grown further but for the 2^32-sector limit.
    pub capped: bool,
}

/// Plans the growth of primary partition `partition` and, when it grows, writes its new
/// size into `sector`.
// Out of line: inlined into its one caller in the binary, it costs more (wisp size report).
#[inline(never)]
pub fn plan(sector: &mut [u8], disk_sectors: u64, sector_size: u32, partition: u32) -> Result<MbrPlan, MbrError> {
    let used = entries(sector)?;
    if partition > 4 {
        return Ok(MbrPlan { decision: Decision::NoChange { reason: "a logical partition inside an extended one is not grown" }, capped: false });
    }
    let target = *used.iter().find(|e| e.number == partition).ok_or(MbrError::NoSuchPartition { partition })?;
    if target.is_extended() {
        return Ok(MbrPlan { decision: Decision::NoChange { reason: "an extended partition is not grown" }, capped: false });
    }
    for a in &used {
        if a.start + a.sectors > disk_sectors {
            return Err(MbrError::DiskSmallerThanTable);
        }
        for b in used.iter().filter(|b| b.number > a.number) {
            if a.start < b.start + b.sectors && b.start < a.start + a.sectors {
                return Err(MbrError::Overlap { first: a.number, second: b.number });
            }
        }
    }
    let old_end = target.start + target.sectors - 1;
    let next_start = used.iter().filter(|e| e.start > old_end).map(|e| e.start).min();
    // As growpart does, room for a GPT's backup array and header stays free, so the disk
    // can still be converted to GPT.
    let gpt_backup = 1 + (16 * 1024) / u64::from(sector_size);
    let disk_end = disk_sectors.saturating_sub(1 + gpt_backup);
    let reachable = next_start.map_or(disk_end, |start| start - 1).min(disk_end);
    let max_end = reachable.min(SECTOR_LIMIT - 1);
    let capped = max_end < reachable;
    let decision = decide(target.start, old_end, max_end, sector_size);
    if let Decision::Grow { start, new_end, .. } = decision {
        let entry = TABLE + (partition as usize - 1) * ENTRY;
        // The end's CHS address is past what CHS can say: the conventional 1023/254/63.
        sector[entry + 5..entry + 8].copy_from_slice(&[0xfe, 0xff, 0xff]);
        let size = (new_end - start + 1) as u32;
        sector[entry + 12..entry + 16].copy_from_slice(&size.to_le_bytes());
    }
    Ok(MbrPlan { decision, capped })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Writes one partition entry into a boot sector (and the signature).
    pub fn put(sector: &mut [u8], number: usize, kind: u8, start: u32, sectors: u32) {
        let entry = TABLE + (number - 1) * ENTRY;
        sector[entry + 4] = kind;
        sector[entry + 8..entry + 12].copy_from_slice(&start.to_le_bytes());
        sector[entry + 12..entry + 16].copy_from_slice(&sectors.to_le_bytes());
        sector[510] = 0x55;
        sector[511] = 0xaa;
    }

    /// A GPT's protective MBR for a disk of `disk_sectors`.
    pub fn protective(sector: &mut [u8], disk_sectors: u64) {
        put(sector, 1, PROTECTIVE, 1, (disk_sectors - 1).min(SECTOR_LIMIT - 1) as u32);
    }

    #[test]
    fn grows_a_primary_partition() {
        let mut sector = [0u8; 512];
        put(&mut sector, 1, 0x83, 2048, 409_600);
        // The fuzz target reads the disk's size, in MiB sectors, behind the sector.
        crate::fuzz::seed("mbr", &[&sector[..], &(4_194_304u64 << 20).to_le_bytes()].concat());
        let plan = plan(&mut sector, 4_194_304, 512, 1).unwrap();
        // The last 33 sectors stay free for a GPT backup; the end aligns down to a MiB.
        assert_eq!(plan, MbrPlan { decision: Decision::Grow { start: 2048, old_end: 411_647, new_end: 4_192_255 }, capped: false });
        assert_eq!(entries(&sector).unwrap()[0].sectors, 4_190_208);
        assert_eq!(&sector[TABLE + 5..TABLE + 8], &[0xfe, 0xff, 0xff]);
        // Rerun: nothing left to gain.
        let again = super::plan(&mut sector, 4_194_304, 512, 1).unwrap();
        assert_eq!(again.decision, Decision::NoChange { reason: "less than 1 MiB to gain" });
        let mut sector = [0u8; 4096];
        put(&mut sector, 1, 0x83, 256, 51_200);
        let plan = super::plan(&mut sector, 524_288, 4096, 1).unwrap();
        assert_eq!(plan.decision, Decision::Grow { start: 256, old_end: 51_455, new_end: 524_031 });
    }

    #[test]
    fn stops_at_the_next_partition_and_at_two_tib() {
        let mut sector = [0u8; 512];
        put(&mut sector, 1, 0x83, 2048, 10_240);
        put(&mut sector, 2, 0x82, 1_048_576, 2048);
        let plan = plan(&mut sector, 4_194_304, 512, 1).unwrap();
        assert_eq!(plan.decision, Decision::Grow { start: 2048, old_end: 12_287, new_end: 1_048_575 });
        let mut sector = [0u8; 512];
        put(&mut sector, 1, 0x83, 2048, 10_240);
        let plan = super::plan(&mut sector, 3 << 32, 512, 1).unwrap();
        assert!(plan.capped);
        assert_eq!(plan.decision, Decision::Grow { start: 2048, old_end: 12_287, new_end: (1 << 32) - 1 });
        assert_eq!(entries(&sector).unwrap()[0].sectors, (1 << 32) - 2048);
    }

    #[test]
    fn skips_and_refusals() {
        let mut sector = [0u8; 512];
        put(&mut sector, 1, 0x83, 2048, 10_240);
        put(&mut sector, 2, 0x05, 20_480, 100_000);
        assert_eq!(plan(&mut sector.clone(), 1 << 20, 512, 5).unwrap().decision, Decision::NoChange { reason: "a logical partition inside an extended one is not grown" });
        assert_eq!(plan(&mut sector.clone(), 1 << 20, 512, 2).unwrap().decision, Decision::NoChange { reason: "an extended partition is not grown" });
        assert_eq!(plan(&mut sector.clone(), 1 << 20, 512, 3), Err(MbrError::NoSuchPartition { partition: 3 }));
        assert_eq!(plan(&mut sector.clone(), 50_000, 512, 1), Err(MbrError::DiskSmallerThanTable));
        put(&mut sector, 3, 0x83, 10_000, 5000);
        assert_eq!(plan(&mut sector.clone(), 1 << 20, 512, 1), Err(MbrError::Overlap { first: 1, second: 3 }));
        let mut garbage = [0x41u8; 512];
        assert_eq!(plan(&mut garbage, 1 << 20, 512, 1), Err(MbrError::NoSignature));
    }

    #[test]
    fn a_damaged_table_is_left_alone_when_its_target_is_extended() {
        // From fuzz/fuzz_targets/mbr.rs: partitions past the disk's end, and partition 3
        // extended. Skipped with its reason, and the sector is not touched.
        let mut sector = [0u8; 512];
        put(&mut sector, 1, 0x83, 0xffff_ffff, 0xffff_ffff);
        put(&mut sector, 3, 0x85, 2, 1);
        let before = sector;
        let planned = plan(&mut sector, 1024, 512, 3).unwrap();
        assert_eq!(planned.decision, Decision::NoChange { reason: "an extended partition is not grown" });
        assert_eq!(sector, before);
        assert_eq!(plan(&mut sector, 1024, 512, 1), Err(MbrError::DiskSmallerThanTable));
        assert_eq!(sector, before);
    }

    #[test]
    fn protective_is_a_used_entry_of_kind_ee_in_a_signed_sector_as_entries_reads_it() {
        let mut sector = [0u8; 512];
        put(&mut sector, 3, PROTECTIVE, 1, 8191);
        let agrees = |sector: &[u8]| is_protective(sector) == entries(sector).is_ok_and(|e| e.iter().any(|e| e.kind == PROTECTIVE));
        assert!(is_protective(&sector) && agrees(&sector));
        // No size: an unused entry; no signature, or a short sector: no table.
        let mut unused = sector;
        unused[TABLE + 2 * ENTRY + 12..TABLE + 2 * ENTRY + 16].fill(0);
        let mut unsigned = sector;
        unsigned[511] = 0;
        let mut other = sector;
        other[TABLE + 2 * ENTRY + 4] = 0x83;
        for sector in [&unused[..], &unsigned[..], &other[..], &sector[..511]] {
            assert!(!is_protective(sector) && agrees(sector));
        }
    }

    #[test]
    fn protective_size() {
        let mut sector = [0u8; 512];
        protective(&mut sector, 8192);
        assert!(is_protective(&sector));
        assert!(cover_disk(&mut sector, 32768));
        assert_eq!(entries(&sector).unwrap()[0].sectors, 32767);
        assert!(!cover_disk(&mut sector, 32768));
        assert!(cover_disk(&mut sector, 1 << 40));
        assert_eq!(entries(&sector).unwrap()[0].sectors, (1 << 32) - 1);
    }
}
