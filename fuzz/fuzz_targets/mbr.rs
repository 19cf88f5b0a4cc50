#![no_main]
//! A disk's MBR: its entries and a growth plan, which never reaches past the disk.
use libfuzzer_sys::fuzz_target;
use wisp_core::partition::mbr::{entries, is_protective, plan};

fuzz_target!(|data: &[u8]| {
    let Some(sector) = data.get(..512) else { return };
    let _ = is_protective(sector);
    let disk_sectors = u64::from_le_bytes(data.get(512..520).and_then(|b| b.try_into().ok()).unwrap_or([0; 8])) >> 20;
    if entries(sector).is_err() {
        return;
    }
    let mut grown = sector.to_vec();
    if let Ok(planned) = plan(&mut grown, disk_sectors, 512, 1 + data[511] as u32 % 4) {
        let after = entries(&grown).expect("a planned table reads back");
        for entry in after.iter().filter(|e| !e.is_extended() && e.sectors > 0) {
            let _ = planned;
            assert!(entry.start + entry.sectors <= disk_sectors.max(u32::MAX as u64 + 1));
        }
    }
});
