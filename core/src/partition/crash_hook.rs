//! A test hook for `grow`'s crash safety: with `WISP_TEST_CRASH_AFTER_WRITES=N` the run
//! stops, as a crash would, right after the Nth table write is on the device, so that
//! tests/test_grow.py can prove a rerun finishes from every point. Which write, that it
//! is synced first, and what is said are decided here; ending the process is the host's.

use core::fmt;

use crate::host::block::BlockDevice;
use crate::host::HostError;
use crate::text::{Decimal, Plain};

/// The variable naming the write to stop after.
pub const CRASH_AFTER_WRITES: &str = "WISP_TEST_CRASH_AFTER_WRITES";

/// `disk`, its writes counted; after the `stop_after`th, synced, `stop` ends the run with
/// the line saying so.
pub struct StopAfterWrites<D> {
    pub disk: D,
    writes: u32,
    stop_after: Option<u32>,
    stop: fn(fmt::Arguments<'_>) -> !,
}

impl<D> StopAfterWrites<D> {
    /// `setting`: the variable's value, if set; one that is not a count stops nothing.
    pub fn new(disk: D, setting: Option<&[u8]>, stop: fn(fmt::Arguments<'_>) -> !) -> Self {
        let stop_after = setting.and_then(|n| crate::text::decimal(n, 10)).and_then(|n| u32::try_from(n).ok());
        StopAfterWrites { disk, writes: 0, stop_after, stop }
    }
}

impl<D: BlockDevice> BlockDevice for StopAfterWrites<D> {
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> Result<(), HostError> {
        self.disk.read_at(offset, buf)
    }

    fn write_at(&mut self, offset: u64, bytes: &[u8]) -> Result<(), HostError> {
        self.disk.write_at(offset, bytes)?;
        self.writes += 1;
        if self.stop_after == Some(self.writes) {
            let _ = self.disk.sync();
            (self.stop)(format_args!("{}: stopping after write {}", Plain(CRASH_AFTER_WRITES), Decimal(self.writes.into())));
        }
        Ok(())
    }

    fn sync(&mut self) -> Result<(), HostError> {
        self.disk.sync()
    }

    fn resize_partition(&mut self, number: u32, start: u64, length: u64) -> Result<(), HostError> {
        self.disk.resize_partition(number, start, length)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::memory::MemoryDisk;

    fn stop(args: fmt::Arguments<'_>) -> ! {
        std::panic::panic_any(std::format!("{args}"))
    }

    /// Three writes; the disk's changes, and what the stop said, if it came.
    fn write_three(setting: Option<&[u8]>) -> (std::vec::Vec<std::string::String>, Option<std::string::String>) {
        let mut disk = StopAfterWrites::new(MemoryDisk::new(std::vec![0; 4096]), setting, stop);
        let wrote = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            for offset in [0, 512, 1024] {
                disk.write_at(offset, &[1; 4]).unwrap();
            }
        }));
        let said = wrote.err().map(|said| *said.downcast::<std::string::String>().unwrap());
        (disk.disk.changes().into_iter().map(std::string::String::from).collect(), said)
    }

    #[test]
    fn the_run_stops_right_after_the_chosen_write_once_it_is_synced() {
        let (changes, said) = write_three(Some(b"2"));
        assert_eq!(changes, ["write 0+4", "write 512+4", "sync"]);
        assert_eq!(said.as_deref(), Some("WISP_TEST_CRASH_AFTER_WRITES: stopping after write 2"));
    }

    #[test]
    fn without_a_count_every_write_goes_through() {
        for setting in [None, Some(&b""[..]), Some(b"two"), Some(b"4"), Some(b"99999999999")] {
            assert_eq!(write_three(setting), (std::vec!["write 0+4".into(), "write 512+4".into(), "write 1024+4".into()], None), "{setting:?}");
        }
    }
}
