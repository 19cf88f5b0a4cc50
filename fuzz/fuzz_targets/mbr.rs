#![no_main]
//! A disk's MBR: its entries and a growth plan; a table that grows has every partition
//! on the disk and apart, and one that does not is left as it was.
use libfuzzer_sys::fuzz_target;
use wisp_core::partition::mbr::{entries, is_protective, plan};
use wisp_core::partition::Decision;

fuzz_target!(|data: &[u8]| {
    let Some(sector) = data.get(..512) else { return };
    let _ = is_protective(sector);
    let disk_sectors = u64::from_le_bytes(data.get(512..520).and_then(|b| b.try_into().ok()).unwrap_or([0; 8])) >> 20;
    if entries(sector).is_err() {
        return;
    }
    let mut grown = sector.to_vec();
    match plan(&mut grown, disk_sectors, 512, 1 + data[511] as u32 % 4) {
        // Something to write: a table whose every partition lies on the disk, apart.
        Ok(planned) if matches!(planned.decision, Decision::Grow { .. }) => {
            let after = entries(&grown).expect("a planned table reads back");
            for a in &after {
                assert!(a.start + a.sectors <= disk_sectors);
                for b in after.iter().filter(|b| b.number > a.number) {
                    assert!(a.start + a.sectors <= b.start || b.start + b.sectors <= a.start);
                }
            }
        }
        // Nothing to write: nothing was written.
        _ => assert_eq!(&grown[..], sector),
    }
});
