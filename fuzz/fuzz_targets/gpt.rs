#![no_main]
//! A disk's GPT (512-byte sectors): header, entry array, validation and growth plan; a
//! table wisp plans is written, read back unchanged, and passes wisp's own validation.
use libfuzzer_sys::fuzz_target;
use wisp_core::partition::gpt::{partitions, plan, validate, Header, ENTRIES_LIMIT};

/// The CRCs of a mutated table made right again (when the first byte is odd), so that the
/// fuzzer gets past them to the layout checks and the plan.
fn seal(disk: &mut [u8]) {
    let Some(header) = disk.get(512..1024) else { return };
    let field = |at: usize| u32::from_le_bytes(header[at..at + 4].try_into().unwrap()) as usize;
    let (header_size, count, size) = (field(12).clamp(92, 512), field(80), field(84));
    let start = (u64::from_le_bytes(header[72..80].try_into().unwrap()).min(1 << 20) * 512) as usize;
    if let Some(entries) = disk.get(start..start.saturating_add(count.saturating_mul(size).min(ENTRIES_LIMIT))) {
        let crc = wisp_fuzz::crc32(entries);
        disk[512 + 88..512 + 92].copy_from_slice(&crc.to_le_bytes());
    }
    disk[512 + 16..512 + 20].fill(0);
    let crc = wisp_fuzz::crc32(&disk[512..512 + header_size]);
    disk[512 + 16..512 + 20].copy_from_slice(&crc.to_le_bytes());
}

fuzz_target!(|input: &[u8]| {
    let mut disk = input.to_vec();
    if input.first().is_some_and(|b| b & 1 == 1) {
        seal(&mut disk);
    }
    let data = &disk[..];
    let Some(sector) = data.get(512..1024) else { return };
    let Ok(header) = Header::parse(sector) else { return };
    let disk_sectors = (data.len() / 512) as u64 + data[0] as u64 * 64;
    let start = (header.entries_lba().min(1 << 20) * 512) as usize;
    let len = header.entries_len().min(ENTRIES_LIMIT);
    let Some(entries) = data.get(start..start + len) else { return };
    if validate(&header, entries, disk_sectors).is_err() {
        return;
    }
    for partition in partitions(&header, entries) {
        assert!(partition.first <= partition.last && partition.last <= header.last_usable());
    }
    let mut grown = entries.to_vec();
    let Ok(planned) = plan(&header, &mut grown, disk_sectors, 512, 1 + data[1] as u32 % 4) else { return };
    let mut written = [0u8; 512];
    planned.primary.write_sector(&mut written);
    assert_eq!(Header::parse(&written), Ok(planned.primary));
    planned.backup.write_sector(&mut written);
    let backup = Header::parse(&written).expect("the backup header reads back");
    assert_eq!(backup, planned.backup);
    assert!(backup.mirrors(&planned.primary));
    assert_eq!(validate(&planned.primary, &grown, disk_sectors), Ok(()));
});
