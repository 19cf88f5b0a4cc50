//! Seed filesystems: the small disks local clouds hand an instance its data on (NoCloud's
//! `cidata`, ConfigDrive's `config-2`). wisp reads them itself: no mount, no blkid, no
//! filesystem module in the kernel.

use core::fmt;
use crate::text::{nth_part, Decimal, Plain};

pub mod iso9660;
pub mod local;
pub mod nocloud;
pub mod sources;
pub mod udf;
pub mod vfat;

/// Reading bytes from an image or device, which the caller does.
pub trait Device {
    fn read(&mut self, offset: u64, buf: &mut [u8]) -> Result<(), SeedError>;
}

/// What every seed filesystem reader offers, so that a caller holding any of them reads it
/// one way: bin keeps one enum of the readers its build has and dispatches once.
pub trait Filesystem<D: Device> {
    /// The volume label, trimmed (`cidata`, `config-2`); empty where wisp reads none.
    fn label(&self) -> &[u8];

    /// Reads the regular file at `path` (components compared without case) into `out`,
    /// whose size is the limit: its length, `None` when nothing or a directory is there.
    /// Without `out`, only whether the file is there (`Some(0)`).
    fn read_file(&self, device: &mut D, path: &[&[u8]], out: Option<&mut [u8]>) -> Result<Option<usize>, SeedError>;
}

/// `TooManyEntries`' message: the limit as a literal, not formatted at each error; the
/// assertions keep it saying each reader's limit.
const TOO_MANY_ENTRIES: &str = "more than 4096 directory entries visited";
const _: () = assert!(iso9660::RECORDS_LIMIT == 4096 && udf::VISITS_LIMIT == 4096);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SeedError {
    /// Reading failed (the caller's errno).
    Io { errno: i32 },
    NotIso9660,
    NotFat,
    NotUdf,
    Corrupt(Corruption),
    TooManyEntries { limit: u32 },
    FileTooLarge { limit: u32 },
}

/// What a corrupt image gets wrong: a byte, not a text, so that `SeedError` is 8 bytes and
/// comes back in registers through the readers' many `?`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Corruption {
    ClusterChainCycles,
    ClusterChainEndsEarly,
    ClusterOutsideVolume,
    FatLargerThanDevice,
    FatLayoutDoesNotFit,
    RecordPastSector,
    RootNotDirectory,
    RecordTooShort,
    ExtentPastImage,
    UdfDescriptorPastImage,
    UdfBlockSize,
    NoUdfPartition,
    NoUdfLogicalVolume,
    UdfPartitionPastImage,
    NoUdfFileSet,
    UdfBlockPastPartition,
    NotUdfFileEntry,
    UdfEntryFieldsOverflow,
    UdfDescriptorsPastEntry,
    UdfEmbeddedDataShort,
    UdfUnsupportedDescriptors,
    UdfExtentsShort,
    UdfIdentifierPastDirectory,
}

/// `Corruption`'s texts, a line each in the order of its variants.
const CORRUPTIONS: &str = "\
a cluster chain that cycles\n\
a cluster chain ends before its file\n\
a cluster number outside the volume\n\
the FAT volume is larger than its device\n\
the FAT layout does not fit its volume\n\
directory record past its sector\n\
root record is not a directory\n\
directory record too short\n\
a file or directory lies past the end of the image\n\
a UDF descriptor past the end of the image\n\
a UDF block size other than 2048\n\
no UDF partition descriptor\n\
no UDF logical volume descriptor\n\
the UDF partition lies past the end of the image\n\
no UDF file set descriptor\n\
a UDF block past the end of its partition\n\
not a UDF file entry\n\
UDF file entry fields overflow\n\
UDF allocation descriptors past their entry\n\
UDF embedded data shorter than the file\n\
unsupported UDF allocation descriptors\n\
UDF extents shorter than the file\n\
a UDF file identifier past its directory";

impl fmt::Display for SeedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            SeedError::Io { errno } => write!(f, "read failed (errno {errno})", errno = Decimal(errno.unsigned_abs().into())),
            SeedError::NotIso9660 => f.write_str("not an ISO 9660 image"),
            SeedError::NotFat => f.write_str("not a FAT filesystem"),
            SeedError::NotUdf => f.write_str("not a UDF filesystem"),
            SeedError::Corrupt(what) => write!(f, "corrupt image: {}", Plain(nth_part(CORRUPTIONS, '\n', what as usize))),
            SeedError::TooManyEntries { .. } => f.write_str(TOO_MANY_ENTRIES),
            SeedError::FileTooLarge { limit } => write!(f, "file larger than {limit} bytes", limit = Decimal(limit.into())),
        }
    }
}

/// Follows `path` from the directory `root`, one component at a time: `lookup` finds a
/// name in a directory; every component but the last must be a directory.
pub(crate) fn walk<F: Copy>(
    root: F,
    path: &[&[u8]],
    is_dir: impl Fn(&F) -> bool,
    mut lookup: impl FnMut(F, &[u8]) -> Result<Option<F>, SeedError>,
) -> Result<Option<F>, SeedError> {
    let mut directory = root;
    for (depth, component) in path.iter().enumerate() {
        match lookup(directory, component)? {
            Some(found) if depth + 1 == path.len() => return Ok(Some(found)),
            Some(found) if is_dir(&found) => directory = found,
            _ => return Ok(None),
        }
    }
    Ok(None)
}

/// Whether big-endian UCS-2 `chars` (Joliet's and UDF's 16-bit names) spell `wanted`,
/// ignoring ASCII case. One copy serves both readers.
#[inline(never)]
pub(crate) fn ucs2_matches(chars: &[u8], wanted: &[u8]) -> bool {
    chars.len() == wanted.len() * 2 && chars.chunks_exact(2).zip(wanted).all(|(pair, &w)| pair[0] == 0 && pair[1].eq_ignore_ascii_case(&w))
}

/// An image held in memory, for tests and small seeds.
impl Device for &[u8] {
    fn read(&mut self, offset: u64, buf: &mut [u8]) -> Result<(), SeedError> {
        let start = usize::try_from(offset).map_err(|_| SeedError::Io { errno: 5 })?;
        let bytes = self.get(start..start + buf.len()).ok_or(SeedError::Io { errno: 5 })?;
        buf.copy_from_slice(bytes);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::ToString;

    #[test]
    fn each_corruption_has_its_own_line_of_text() {
        assert_eq!(CORRUPTIONS.lines().count(), Corruption::UdfIdentifierPastDirectory as usize + 1);
        assert_eq!(SeedError::Corrupt(Corruption::ClusterChainCycles).to_string(), "corrupt image: a cluster chain that cycles");
        assert_eq!(SeedError::Corrupt(Corruption::UdfIdentifierPastDirectory).to_string(), "corrupt image: a UDF file identifier past its directory");
        assert_eq!(core::mem::size_of::<SeedError>(), 8);
    }
}
