//! UDF (ECMA-167, UDF 1.02 as optical media carry it), for Azure's provisioning media:
//! the anchor at sector 256, the partition and logical volume descriptors, the file
//! set, then file entries and file identifiers down to a file. Every descriptor's tag is
//! checked, every location bounded by the image, and every walk counted.

use super::{Corruption, Device, SeedError};
use crate::text::eq_ignoring_case;

pub const SECTOR: usize = 2048;
const ANCHOR: u64 = 256;
/// Most descriptors or directory entries one lookup visits.
pub(crate) const VISITS_LIMIT: usize = 4096;

const TAG_ANCHOR: u16 = 2;
const TAG_PARTITION: u16 = 5;
const TAG_LOGICAL_VOLUME: u16 = 6;
const TAG_TERMINATING: u16 = 8;
const TAG_FILE_SET: u16 = 256;
const TAG_FILE_IDENTIFIER: u16 = 257;
const TAG_FILE_ENTRY: u16 = 261;
const TAG_EXTENDED_FILE_ENTRY: u16 = 266;

/// A file: its entry's sector (relative to the partition) and what the entry says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct File {
    entry: u32,
    pub is_dir: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Volume {
    partition_start: u64,
    partition_sectors: u64,
    root: u32,
    image_sectors: u64,
}

// Every caller's offset lies inside its descriptor; `get` keeps panicking code out.
fn u16_at(b: &[u8], at: usize) -> u16 {
    b.get(at..at + 2).map_or(0, |b| u16::from_le_bytes([b[0], b[1]]))
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    b.get(at..at + 4).map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// The descriptor tag's identifier, after checking its checksum.
fn tag(sector: &[u8]) -> Option<u16> {
    let sum = sector[..16].iter().enumerate().filter(|&(i, _)| i != 4).fold(0u8, |s, (_, &b)| s.wrapping_add(b));
    (sum == sector[4]).then(|| u16_at(sector, 0))
}

impl Volume {
    pub fn open<D: Device>(device: &mut D, image_bytes: u64) -> Result<Volume, SeedError> {
        let image_sectors = image_bytes / SECTOR as u64;
        if image_sectors <= ANCHOR {
            return Err(SeedError::NotUdf);
        }
        let mut sector = [0u8; SECTOR];
        device.read(ANCHOR * SECTOR as u64, &mut sector)?;
        if tag(&sector) != Some(TAG_ANCHOR) {
            return Err(SeedError::NotUdf);
        }
        let (length, location) = (u64::from(u32_at(&sector, 16)), u64::from(u32_at(&sector, 20)));
        let corrupt = SeedError::Corrupt;
        let mut partition = None;
        let mut file_set = None;
        for index in location..location + (length / SECTOR as u64).min(VISITS_LIMIT as u64) {
            if index >= image_sectors {
                return Err(corrupt(Corruption::UdfDescriptorPastImage));
            }
            device.read(index * SECTOR as u64, &mut sector)?;
            match tag(&sector) {
                Some(TAG_PARTITION) => partition = Some((u64::from(u32_at(&sector, 188)), u64::from(u32_at(&sector, 192)))),
                Some(TAG_LOGICAL_VOLUME) => {
                    if u32_at(&sector, 212) as usize != SECTOR {
                        return Err(corrupt(Corruption::UdfBlockSize));
                    }
                    file_set = Some(u32_at(&sector, 252));
                }
                Some(TAG_TERMINATING) | None => break,
                Some(_) => {}
            }
        }
        let (partition_start, partition_sectors) = partition.ok_or(corrupt(Corruption::NoUdfPartition))?;
        let file_set = file_set.ok_or(corrupt(Corruption::NoUdfLogicalVolume))?;
        if partition_start + partition_sectors > image_sectors {
            return Err(corrupt(Corruption::UdfPartitionPastImage));
        }
        let mut volume = Volume { partition_start, partition_sectors, root: 0, image_sectors };
        volume.read_block(device, file_set, &mut sector)?;
        if tag(&sector) != Some(TAG_FILE_SET) {
            return Err(corrupt(Corruption::NoUdfFileSet));
        }
        volume.root = u32_at(&sector, 404);
        Ok(volume)
    }

    fn read_block<D: Device>(&self, device: &mut D, block: u32, buf: &mut [u8]) -> Result<(), SeedError> {
        let blocks = (buf.len() as u64).div_ceil(SECTOR as u64);
        if u64::from(block) + blocks > self.partition_sectors {
            return Err(SeedError::Corrupt(Corruption::UdfBlockPastPartition));
        }
        device.read((self.partition_start + u64::from(block)) * SECTOR as u64, buf)
    }

    /// The file at `path` (components compared without case).
    pub fn find<D: Device>(&self, device: &mut D, path: &[&[u8]]) -> Result<Option<File>, SeedError> {
        let mut listing = [0u8; 16 * 1024];
        let root = File { entry: self.root, is_dir: true };
        super::walk(root, path, |file| file.is_dir, |directory, wanted| {
            let len = self.read(device, directory, &mut listing)?;
            find_identifier(&listing[..len], wanted)
        })
    }

    /// Reads a whole file (or directory) into `out`, whose size is the limit.
    pub fn read<D: Device>(&self, device: &mut D, file: File, out: &mut [u8]) -> Result<usize, SeedError> {
        let mut entry = [0u8; SECTOR];
        self.read_block(device, file.entry, &mut entry)?;
        let corrupt = SeedError::Corrupt;
        let (extended_attributes, descriptors, start) = match tag(&entry) {
            Some(TAG_FILE_ENTRY) => (u32_at(&entry, 168) as usize, u32_at(&entry, 172) as usize, 176usize),
            Some(TAG_EXTENDED_FILE_ENTRY) => (u32_at(&entry, 208) as usize, u32_at(&entry, 212) as usize, 216),
            _ => return Err(corrupt(Corruption::NotUdfFileEntry)),
        };
        let size = u64::from(u32_at(&entry, 56)) | u64::from(u32_at(&entry, 60)) << 32;
        let size = usize::try_from(size).map_err(|_| SeedError::FileTooLarge { limit: out.len() as u32 })?;
        if size > out.len() {
            return Err(SeedError::FileTooLarge { limit: out.len() as u32 });
        }
        let area_start = start.checked_add(extended_attributes).ok_or(corrupt(Corruption::UdfEntryFieldsOverflow))?;
        let area = entry.get(area_start..area_start + descriptors).ok_or(corrupt(Corruption::UdfDescriptorsPastEntry))?;
        let kind = u16_at(&entry, 34) & 7;
        if kind == 3 {
            // Small files live inside their entry.
            let data = area.get(..size).ok_or(corrupt(Corruption::UdfEmbeddedDataShort))?;
            out[..size].copy_from_slice(data);
            return Ok(size);
        }
        let width = match kind {
            0 => 8,
            1 => 16,
            _ => return Err(corrupt(Corruption::UdfUnsupportedDescriptors)),
        };
        let mut done = 0;
        for descriptor in area.chunks_exact(width) {
            if done >= size {
                break;
            }
            let length = (u32_at(descriptor, 0) & 0x3fff_ffff) as usize;
            let block = u32_at(descriptor, 4);
            let take = length.min(size - done);
            if take > 0 {
                self.read_block(device, block, &mut out[done..done + take])?;
            }
            done += take;
        }
        if done < size {
            return Err(corrupt(Corruption::UdfExtentsShort));
        }
        Ok(size)
    }
}

/// The file identifier named `wanted` in a directory's data.
fn find_identifier(listing: &[u8], wanted: &[u8]) -> Result<Option<File>, SeedError> {
    let corrupt = SeedError::Corrupt;
    let mut at = 0;
    for _ in 0..VISITS_LIMIT {
        let Some(head) = listing.get(at..at + 38) else { return Ok(None) };
        if tag(head) != Some(TAG_FILE_IDENTIFIER) {
            return Ok(None);
        }
        let characteristics = head[18];
        let name_len = head[19] as usize;
        let implementation_len = u16_at(head, 36) as usize;
        let name_at = at + 38 + implementation_len;
        let name = listing.get(name_at..name_at + name_len).ok_or(corrupt(Corruption::UdfIdentifierPastDirectory))?;
        let is_parent = characteristics & 0x08 != 0;
        if !is_parent && name_matches(name, wanted) {
            return Ok(Some(File { entry: u32_at(head, 24), is_dir: characteristics & 0x02 != 0 }));
        }
        at = (name_at + name_len + 3) & !3;
    }
    Err(SeedError::TooManyEntries { limit: VISITS_LIMIT as u32 })
}

/// A dstring-less file identifier: compression 8 (one byte a character) or 16 (UCS-2
/// big-endian).
fn name_matches(name: &[u8], wanted: &[u8]) -> bool {
    match name.split_first() {
        Some((8, chars)) => eq_ignoring_case(chars, wanted),
        Some((16, chars)) => super::ucs2_matches(chars, wanted),
        _ => false,
    }
}

impl<D: Device> super::Filesystem<D> for Volume {
    /// UDF has no label wisp reads: only the Azure provisioning media's file matters.
    fn label(&self) -> &[u8] {
        b""
    }

    fn read_file(&self, device: &mut D, path: &[&[u8]], out: Option<&mut [u8]>) -> Result<Option<usize>, SeedError> {
        match self.find(device, path)? {
            Some(file) if !file.is_dir => out.map_or(Ok(0), |out| self.read(device, file, out)).map(Some),
            _ => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_checked() {
        let mut sector = [0u8; SECTOR];
        sector[0] = 2;
        sector[4] = 2;
        assert_eq!(tag(&sector), Some(2));
        sector[4] = 3;
        assert_eq!(tag(&sector), None);
    }

    #[test]
    fn identifiers() {
        assert!(name_matches(b"\x08ovf-env.xml", b"ovf-env.xml"));
        assert!(name_matches(b"\x08OVF-ENV.XML", b"ovf-env.xml"));
        assert!(name_matches(b"\x10\x00o\x00v\x00f", b"ovf"));
        assert!(!name_matches(b"\x10\x01o\x00v\x00f", b"ovf"));
        assert!(!name_matches(b"", b"x"));
        assert_eq!(find_identifier(&[0u8; 64], b"x"), Ok(None));
    }

    fn seal(sector: &mut [u8], id: u16) {
        sector[0..2].copy_from_slice(&id.to_le_bytes());
        sector[4] = 0;
        let sum = sector[..16].iter().enumerate().filter(|&(i, _)| i != 4).fold(0u8, |s, (_, &b)| s.wrapping_add(b));
        sector[4] = sum;
    }

    /// A minimal UDF image: partition from sector 300, the file set at block 0, the root
    /// directory's entry at block 1 (its identifiers embedded), a file's entry at block 2
    /// (its data embedded).
    fn image(contents: &[u8]) -> Vec<u8> {
        let mut disk = vec![0u8; 320 * SECTOR];
        let at = |sector: usize| sector * SECTOR;
        {
            let anchor = &mut disk[at(256)..at(257)];
            anchor[16..20].copy_from_slice(&(3 * SECTOR as u32).to_le_bytes());
            anchor[20..24].copy_from_slice(&260u32.to_le_bytes());
            seal(anchor, TAG_ANCHOR);
        }
        {
            let pd = &mut disk[at(260)..at(261)];
            pd[188..192].copy_from_slice(&300u32.to_le_bytes());
            pd[192..196].copy_from_slice(&20u32.to_le_bytes());
            seal(pd, TAG_PARTITION);
        }
        {
            let lvd = &mut disk[at(261)..at(262)];
            lvd[212..216].copy_from_slice(&(SECTOR as u32).to_le_bytes());
            lvd[252..256].copy_from_slice(&0u32.to_le_bytes());
            seal(lvd, TAG_LOGICAL_VOLUME);
        }
        seal(&mut disk[at(262)..at(263)], TAG_TERMINATING);
        {
            let fsd = &mut disk[at(300)..at(301)];
            fsd[404..408].copy_from_slice(&1u32.to_le_bytes());
            seal(fsd, TAG_FILE_SET);
        }
        let mut fid = vec![0u8; 38];
        fid[19] = 12;
        fid[24..28].copy_from_slice(&2u32.to_le_bytes());
        fid.extend_from_slice(b"\x08ovf-env.xml");
        while !fid.len().is_multiple_of(4) {
            fid.push(0);
        }
        seal(&mut fid, TAG_FILE_IDENTIFIER);
        for (block, data) in [(1usize, &fid[..]), (2, contents)] {
            let entry = &mut disk[at(300 + block)..at(301 + block)];
            entry[34..36].copy_from_slice(&3u16.to_le_bytes());
            entry[56..64].copy_from_slice(&(data.len() as u64).to_le_bytes());
            entry[172..176].copy_from_slice(&(data.len() as u32).to_le_bytes());
            entry[176..176 + data.len()].copy_from_slice(data);
            seal(entry, TAG_FILE_ENTRY);
        }
        disk
    }

    #[test]
    fn finds_and_reads_a_file() {
        let disk = image(b"<Environment/>");
        let volume = Volume::open(&mut &disk[..], disk.len() as u64).unwrap();
        let file = volume.find(&mut &disk[..], &[b"ovf-env.xml"]).unwrap().unwrap();
        let mut out = [0u8; 64];
        assert_eq!(volume.read(&mut &disk[..], file, &mut out), Ok(14));
        assert_eq!(&out[..14], b"<Environment/>");
        assert_eq!(volume.find(&mut &disk[..], &[b"other"]).unwrap(), None);
        let mut small = [0u8; 4];
        assert_eq!(volume.read(&mut &disk[..], file, &mut small), Err(SeedError::FileTooLarge { limit: 4 }));
    }

    #[test]
    fn corrupt_images_are_refused() {
        let mut disk = image(b"x");
        disk[260 * SECTOR + 188..260 * SECTOR + 192].copy_from_slice(&100_000u32.to_le_bytes());
        seal(&mut disk[260 * SECTOR..261 * SECTOR], TAG_PARTITION);
        assert_eq!(Volume::open(&mut &disk[..], disk.len() as u64), Err(SeedError::Corrupt(Corruption::UdfPartitionPastImage)));
        let mut disk = image(b"x");
        disk[300 * SECTOR + 50] ^= 1;
        disk[300 * SECTOR + 4] ^= 0xff;
        assert_eq!(Volume::open(&mut &disk[..], disk.len() as u64), Err(SeedError::Corrupt(Corruption::NoUdfFileSet)));
    }

    #[test]
    fn garbage_never_panics() {
        let base = image(b"<Environment><CustomData>eA==</CustomData></Environment>");
        crate::fuzz::seed("udf", &base);
        let mut found = 0;
        let mut garbage = crate::fuzz::Garbage::new(41);
        for round in 0..3000 {
            let range = if round % 2 == 0 { 300 * SECTOR..303 * SECTOR } else { 256 * SECTOR..263 * SECTOR };
            let disk = garbage.mutated(&base, range, 4);
            if let Ok(volume) = Volume::open(&mut &disk[..], disk.len() as u64) {
                if let Ok(Some(file)) = volume.find(&mut &disk[..], &[b"ovf-env.xml"]) {
                    let mut out = [0u8; 4096];
                    if let Ok(len) = volume.read(&mut &disk[..], file, &mut out) {
                        assert!(len <= out.len());
                        found += 1;
                    }
                }
            }
        }
        // Most images keep the file readable: the walk was exercised, not refused at once.
        assert!(found > 100, "{found}");
    }

    #[test]
    fn small_images_are_not_udf() {
        let image = vec![0u8; 300 * SECTOR];
        assert_eq!(Volume::open(&mut &image[..], image.len() as u64), Err(SeedError::NotUdf));
        assert_eq!(Volume::open(&mut &image[..100], 100), Err(SeedError::NotUdf));
    }
}
