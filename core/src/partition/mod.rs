//! Partition tables, and how far the partition under a filesystem can grow. `gpt` and
//! `mbr` work on sectors already read into the caller's buffers; `grow` reads and writes
//! them on a `BlockDevice` in the order that survives a crash, and `filesystem` grows
//! the mounted filesystem afterwards.

pub mod crash_hook;
pub mod device;
pub mod expand;
pub mod filesystem;
pub mod gpt;
pub mod grow;
pub mod mbr;

use core::fmt;

use crate::text::{nth_part, Decimal};

/// Partition ends are aligned so the partition ends on a MiB boundary, as growpart 0.34
/// and sgdisk do; growth of less than this is not worth a table rewrite.
pub const MIB: u64 = 1 << 20;

/// The sector sizes wisp handles.
pub fn is_supported_sector_size(size: u32) -> bool {
    size == 512 || size == 4096
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Grow the partition so its last sector is `new_end`.
    Grow { start: u64, old_end: u64, new_end: u64 },
    NoChange { reason: &'static str },
}

/// A message with `#` where each of its numbers goes, in order: the partition errors'
/// texts are data written by this one loop, not a `write!` per message, whose arguments
/// are built in code at each.
#[derive(Clone, Copy)]
pub struct Numbered(pub &'static str, pub [u64; 2]);

impl Numbered {
    /// The `index`th line of `lines`, its numbers `numbers`.
    pub fn line(lines: &'static str, index: usize, numbers: [u64; 2]) -> Numbered {
        Numbered(nth_part(lines, '\n', index), numbers)
    }
}

impl fmt::Display for Numbered {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut rest = self.0;
        for number in self.1 {
            let Some(at) = rest.bytes().position(|byte| byte == b'#') else { break };
            f.write_str(rest.get(..at).unwrap_or_default())?;
            fmt::Display::fmt(&Decimal(number), f)?;
            rest = rest.get(at + 1..).unwrap_or_default();
        }
        f.write_str(rest)
    }
}

/// Where a partition starting at `start` and ending at `old_end` should end, if it may
/// reach `max_end` (all in sectors, ends inclusive).
pub fn decide(start: u64, old_end: u64, max_end: u64, sector_size: u32) -> Decision {
    let per_mib = MIB / u64::from(sector_size);
    let aligned_end = ((max_end + 1) / per_mib * per_mib).saturating_sub(1);
    if aligned_end <= old_end || aligned_end - old_end < per_mib {
        return Decision::NoChange { reason: "less than 1 MiB to gain" };
    }
    Decision::Grow { start, old_end, new_end: aligned_end }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alignment_and_threshold() {
        // 512-byte sectors: 2048 per MiB. A partition at 2048 ending at 411647 (200 MiB).
        assert_eq!(decide(2048, 411_647, 4_194_270, 512), Decision::Grow { start: 2048, old_end: 411_647, new_end: 4_192_255 });
        // Just under a MiB to gain after alignment.
        assert_eq!(decide(2048, 411_647, 411_647 + 2047, 512), Decision::NoChange { reason: "less than 1 MiB to gain" });
        assert_eq!(decide(2048, 411_647, 411_647 + 2048, 512), Decision::Grow { start: 2048, old_end: 411_647, new_end: 413_695 });
        // 4096-byte sectors: 256 per MiB.
        assert_eq!(decide(256, 51_455, 524_282, 4096), Decision::Grow { start: 256, old_end: 51_455, new_end: 524_031 });
        // A partition whose end is not aligned still ends aligned.
        assert_eq!(decide(34, 1000, 10_000, 512), Decision::Grow { start: 34, old_end: 1000, new_end: 8191 });
        assert_eq!(decide(34, 1000, 100, 512), Decision::NoChange { reason: "less than 1 MiB to gain" });
    }
}
