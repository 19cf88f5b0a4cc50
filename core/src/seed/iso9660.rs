//! ISO 9660 images (ECMA-119), as cloud-localds and genisoimage make seed disks: the
//! volume label, and files found by name through Rock Ridge names (long, case kept),
//! else Joliet's, else the plain 8.3 ones. The caller reads sectors; every offset and
//! size read from the image is checked against the image's size, and a walk that goes
//! on too long stops with an error instead of looping.

use core::fmt;

use super::{Corruption, Device, SeedError};
use crate::text::eq_ignoring_case;
use crate::text::Decimal;

pub const SECTOR: usize = 2048;
const DESCRIPTORS_START: u64 = 16;
/// Most volume descriptors read before giving up on a terminator.
const DESCRIPTORS_LIMIT: u64 = 32;
/// Most directory records one lookup may visit: a seed has a handful of files.
pub const RECORDS_LIMIT: usize = 4096;

/// Where a file's bytes are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extent {
    pub sector: u32,
    pub len: u32,
    pub is_dir: bool,
}

/// An opened image: its label and root directories.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Volume {
    label: [u8; 32],
    label_len: usize,
    root: Extent,
    joliet_root: Option<Extent>,
    image_sectors: u64,
}

impl Volume {
    /// Reads the volume descriptors of an image of `image_bytes`.
    pub fn open<D: Device>(device: &mut D, image_bytes: u64) -> Result<Volume, SeedError> {
        let image_sectors = image_bytes / SECTOR as u64;
        let mut sector = [0u8; SECTOR];
        let mut primary: Option<(Extent, [u8; 32])> = None;
        let mut joliet_root = None;
        for index in DESCRIPTORS_START..DESCRIPTORS_START + DESCRIPTORS_LIMIT {
            if index >= image_sectors {
                break;
            }
            device.read(index * SECTOR as u64, &mut sector)?;
            if &sector[1..6] != b"CD001" {
                return Err(SeedError::NotIso9660);
            }
            match sector[0] {
                1 if primary.is_none() => {
                    let mut label = [0u8; 32];
                    label.copy_from_slice(&sector[40..72]);
                    primary = Some((root_record(&sector, image_sectors)?, label));
                }
                // A supplementary descriptor with a UCS-2 escape sequence is Joliet.
                2 if matches!(&sector[88..91], b"%/@" | b"%/C" | b"%/E") => joliet_root = Some(root_record(&sector, image_sectors)?),
                255 => break,
                _ => {}
            }
        }
        let (root, label) = primary.ok_or(SeedError::NotIso9660)?;
        let label_len = label.iter().rposition(|&b| b != b' ' && b != 0).map_or(0, |i| i + 1);
        Ok(Volume { label, label_len, root, joliet_root, image_sectors })
    }

    pub fn label(&self) -> &[u8] {
        self.label.get(..self.label_len).unwrap_or_default()
    }

    /// The file at `path` (components, compared without case), or `None`.
    pub fn find<D: Device>(&self, device: &mut D, path: &[&[u8]]) -> Result<Option<Extent>, SeedError> {
        let mut budget = RECORDS_LIMIT;
        // Rock Ridge names live in the primary tree; Joliet's tree has its own records.
        if let Some(found) = self.walk(device, self.root, path, Naming::Primary, &mut budget)? {
            return Ok(Some(found));
        }
        match self.joliet_root {
            Some(root) => self.walk(device, root, path, Naming::Joliet, &mut budget),
            None => Ok(None),
        }
    }

    fn walk<D: Device>(&self, device: &mut D, root: Extent, path: &[&[u8]], naming: Naming, budget: &mut usize) -> Result<Option<Extent>, SeedError> {
        super::walk(root, path, |extent| extent.is_dir, |directory, name| self.lookup(device, directory, name, naming, budget))
    }

    fn lookup<D: Device>(&self, device: &mut D, directory: Extent, name: &[u8], naming: Naming, budget: &mut usize) -> Result<Option<Extent>, SeedError> {
        let sectors = (directory.len as usize).div_ceil(SECTOR);
        let mut sector = [0u8; SECTOR];
        for index in 0..sectors {
            device.read((u64::from(directory.sector) + index as u64) * SECTOR as u64, &mut sector)?;
            let mut at = 0;
            while at < SECTOR {
                let len = sector[at] as usize;
                if len == 0 {
                    break; // records do not cross sectors: the rest is padding
                }
                *budget = budget.checked_sub(1).ok_or(SeedError::TooManyEntries { limit: RECORDS_LIMIT as u32 })?;
                let record = sector.get(at..at + len).ok_or(SeedError::Corrupt(Corruption::RecordPastSector))?;
                let extent = record_extent(record, self.image_sectors)?;
                if name_matches(record, name, naming) {
                    return Ok(Some(extent));
                }
                at += len;
            }
        }
        Ok(None)
    }

    /// Reads a whole file into `out`; `out`'s size is the limit.
    pub fn read<D: Device>(&self, device: &mut D, file: Extent, out: &mut [u8]) -> Result<usize, SeedError> {
        let len = file.len as usize;
        if len > out.len() {
            return Err(SeedError::FileTooLarge { limit: out.len() as u32 });
        }
        device.read(u64::from(file.sector) * SECTOR as u64, &mut out[..len])?;
        Ok(len)
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Naming {
    Primary,
    Joliet,
}

fn root_record(descriptor: &[u8; SECTOR], image_sectors: u64) -> Result<Extent, SeedError> {
    let root = record_extent(&descriptor[156..190], image_sectors)?;
    if !root.is_dir {
        return Err(SeedError::Corrupt(Corruption::RootNotDirectory));
    }
    Ok(root)
}

fn record_extent(record: &[u8], image_sectors: u64) -> Result<Extent, SeedError> {
    if record.len() < 34 || (record[32] as usize) + 33 > record.len() {
        return Err(SeedError::Corrupt(Corruption::RecordTooShort));
    }
    let sector = u32::from_le_bytes([record[2], record[3], record[4], record[5]]);
    let len = u32::from_le_bytes([record[10], record[11], record[12], record[13]]);
    let end = u64::from(sector) + (u64::from(len)).div_ceil(SECTOR as u64);
    if end > image_sectors {
        return Err(SeedError::Corrupt(Corruption::ExtentPastImage));
    }
    Ok(Extent { sector, len, is_dir: record[25] & 0x02 != 0 })
}

/// Compares a record's name with `wanted` (ASCII, without case): its Rock Ridge NM name
/// if it has one, else its Joliet (UCS-2) or plain (`NAME.EXT;1`) identifier.
fn name_matches(record: &[u8], wanted: &[u8], naming: Naming) -> bool {
    let id_len = record.get(32).map_or(0, |&len| usize::from(len));
    let id = record.get(33..33 + id_len).unwrap_or_default();
    if id == [0] || id == [1] {
        return false; // "." and ".."
    }
    if naming == Naming::Joliet {
        return super::ucs2_matches(id, wanted);
    }
    let system_use = record.get(33 + id_len + (1 - id_len % 2)..).unwrap_or_default();
    if let Some(name) = rock_ridge_name(system_use) {
        return name == wanted;
    }
    let plain = id.split(|&b| b == b';').next().unwrap_or(id);
    let plain = plain.strip_suffix(b".").unwrap_or(plain);
    eq_ignoring_case(plain, wanted) || eq_ignoring_case(plain, level1_name(wanted, &mut [0; 12]))
}

/// The name genisoimage gives a file without Rock Ridge or Joliet: '-' and other
/// unsupported bytes become '_', and the name is cut to 8.3 (`user-data` is `USER_DAT`).
fn level1_name<'b>(name: &[u8], buf: &'b mut [u8; 12]) -> &'b [u8] {
    let (base, extension) = match name.iter().rposition(|&b| b == b'.') {
        Some(dot) => (&name[..dot], &name[dot..]),
        None => (name, &b""[..]),
    };
    // The extension keeps its dot: 8 bytes of base, then at most 4 of ".EXT".
    let mut len = 0;
    for (part, limit) in [(base, 8), (extension, 4)] {
        for (i, &b) in part.iter().take(limit).enumerate() {
            let keep = b.is_ascii_alphanumeric() || (limit == 4 && i == 0);
            if let Some(slot) = buf.get_mut(len) {
                *slot = if keep { b } else { b'_' };
            }
            len += 1;
        }
    }
    buf.get(..len).unwrap_or(buf)
}

/// The name of a Rock Ridge "NM" entry (one entry; continuation flags are not used by
/// seed files' short names).
fn rock_ridge_name(mut system_use: &[u8]) -> Option<&[u8]> {
    while system_use.len() >= 4 {
        let len = system_use[2] as usize;
        if len < 4 || len > system_use.len() {
            return None;
        }
        if &system_use[..2] == b"NM" && len >= 5 {
            return Some(&system_use[5..len]);
        }
        system_use = &system_use[len..];
    }
    None
}

impl fmt::Display for Extent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} bytes at sector {}", Decimal(self.len as u64), Decimal(self.sector as u64))
    }
}

impl<D: Device> super::Filesystem<D> for Volume {
    fn label(&self) -> &[u8] {
        Volume::label(self)
    }

    fn read_file(&self, device: &mut D, path: &[&[u8]], out: Option<&mut [u8]>) -> Result<Option<usize>, SeedError> {
        match self.find(device, path)? {
            Some(file) if !file.is_dir => out.map_or(Ok(0), |out| self.read(device, file, out)).map(Some),
            _ => Ok(None),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A directory record for `name`, with a Rock Ridge NM entry when `rock_ridge` is given.
    pub(crate) fn record(sector: u32, len: u32, dir: bool, id: &[u8], rock_ridge: Option<&[u8]>) -> Vec<u8> {
        let mut r = vec![0u8; 33];
        r[2..6].copy_from_slice(&sector.to_le_bytes());
        r[6..10].copy_from_slice(&sector.to_be_bytes());
        r[10..14].copy_from_slice(&len.to_le_bytes());
        r[14..18].copy_from_slice(&len.to_be_bytes());
        r[25] = if dir { 2 } else { 0 };
        r[32] = id.len() as u8;
        r.extend_from_slice(id);
        if id.len().is_multiple_of(2) {
            r.push(0);
        }
        if let Some(name) = rock_ridge {
            r.extend_from_slice(&[b'N', b'M', 5 + name.len() as u8, 1, 0]);
            r.extend_from_slice(name);
        }
        if r.len() % 2 == 1 {
            r.push(0);
        }
        r[0] = r.len() as u8;
        r
    }

    /// Sectors: 16 PVD, 17 terminator, 18 root directory, 19 subdirectory, 20.. files.
    pub(crate) fn image(label: &[u8], entries: &[Vec<u8>]) -> Vec<u8> {
        let mut disk = vec![0u8; 24 * SECTOR];
        let pvd = &mut disk[16 * SECTOR..17 * SECTOR];
        pvd[0] = 1;
        pvd[1..6].copy_from_slice(b"CD001");
        pvd[40..72].fill(b' ');
        pvd[40..40 + label.len()].copy_from_slice(label);
        pvd[156..190].copy_from_slice(&record(18, SECTOR as u32, true, &[0], None)[..34]);
        disk[17 * SECTOR] = 255;
        disk[17 * SECTOR + 1..17 * SECTOR + 6].copy_from_slice(b"CD001");
        let mut at = 18 * SECTOR;
        for entry in [record(18, SECTOR as u32, true, &[0], None), record(18, SECTOR as u32, true, &[1], None)].iter().chain(entries) {
            disk[at..at + entry.len()].copy_from_slice(entry);
            at += entry.len();
        }
        disk[20 * SECTOR..20 * SECTOR + 12].copy_from_slice(b"instance-id:");
        disk
    }

    fn open(disk: &[u8]) -> Result<Volume, SeedError> {
        Volume::open(&mut &disk[..], disk.len() as u64)
    }

    #[test]
    fn label_and_names() {
        let disk = image(b"cidata", &[
            record(20, 12, false, b"META_DAT.;1", Some(b"meta-data")),
            record(21, 0, false, b"USER_DAT.;1", None),
            record(19, SECTOR as u32, true, b"OPENSTAC", Some(b"openstack")),
        ]);
        let volume = open(&disk).unwrap();
        assert_eq!(volume.label(), b"cidata");
        let file = volume.find(&mut &disk[..], &[b"meta-data"]).unwrap().unwrap();
        assert_eq!(file, Extent { sector: 20, len: 12, is_dir: false });
        let mut out = [0u8; 64];
        assert_eq!(volume.read(&mut &disk[..], file, &mut out), Ok(12));
        assert_eq!(&out[..12], b"instance-id:");
        // Without a Rock Ridge name, the 8.3 name with '_' for '-' is found.
        assert!(volume.find(&mut &disk[..], &[b"user-data"]).unwrap().is_some());
        assert_eq!(volume.find(&mut &disk[..], &[b"vendor-data"]).unwrap(), None);
        assert_eq!(volume.find(&mut &disk[..], &[b"meta-data", b"x"]).unwrap(), None);
        let mut tiny = [0u8; 4];
        assert_eq!(volume.read(&mut &disk[..], file, &mut tiny), Err(SeedError::FileTooLarge { limit: 4 }));
    }

    #[test]
    fn read_as_any_seed_filesystem() {
        use crate::seed::Filesystem;
        let disk = image(b"cidata", &[
            record(20, 12, false, b"META_DAT.;1", Some(b"meta-data")),
            record(19, SECTOR as u32, true, b"OPENSTAC", Some(b"openstack")),
        ]);
        let volume = open(&disk).unwrap();
        let seed: &dyn Filesystem<&[u8]> = &volume;
        assert_eq!(seed.label(), b"cidata");
        let mut out = [0u8; 64];
        assert_eq!(seed.read_file(&mut &disk[..], &[b"meta-data"], Some(&mut out)), Ok(Some(12)));
        assert_eq!(&out[..12], b"instance-id:");
        // Asked only whether it is there; a directory is no file; nothing is nothing.
        assert_eq!(seed.read_file(&mut &disk[..], &[b"meta-data"], None), Ok(Some(0)));
        assert_eq!(seed.read_file(&mut &disk[..], &[b"openstack"], Some(&mut out)), Ok(None));
        assert_eq!(seed.read_file(&mut &disk[..], &[b"vendor-data"], None), Ok(None));
        assert_eq!(seed.read_file(&mut &disk[..], &[b"meta-data"], Some(&mut [0u8; 4])), Err(SeedError::FileTooLarge { limit: 4 }));
    }

    #[test]
    fn corrupt_images_are_refused() {
        assert_eq!(open(&vec![0u8; 24 * SECTOR]), Err(SeedError::NotIso9660));
        assert_eq!(open(&vec![0u8; 8 * SECTOR]), Err(SeedError::NotIso9660));
        // A file said to lie past the end of the image.
        let disk = image(b"cidata", &[record(5000, 10, false, b"META_DAT.;1", Some(b"meta-data"))]);
        let volume = open(&disk).unwrap();
        assert_eq!(volume.find(&mut &disk[..], &[b"meta-data"]), Err(SeedError::Corrupt(Corruption::ExtentPastImage)));
        // A directory that contains itself, walked by a long path: the budget stops it.
        let looped = image(b"cidata", &[record(18, SECTOR as u32, true, b"A", Some(b"a"))]);
        let volume = open(&looped).unwrap();
        let path = [&b"a"[..]; 5000];
        assert_eq!(volume.find(&mut &looped[..], &path), Err(SeedError::TooManyEntries { limit: RECORDS_LIMIT as u32 }));
        assert_eq!(SeedError::TooManyEntries { limit: RECORDS_LIMIT as u32 }.to_string(), std::format!("more than {RECORDS_LIMIT} directory entries visited"));
        // A record whose name runs past its length.
        let mut bad = image(b"cidata", &[record(20, 12, false, b"META_DAT.;1", None)]);
        bad[18 * SECTOR + 68 + 32] = 200;
        let volume = open(&bad).unwrap();
        assert!(matches!(volume.find(&mut &bad[..], &[b"meta-data"]), Err(SeedError::Corrupt { .. })));
    }

    #[test]
    fn garbage_never_panics() {
        let base = image(b"cidata", &[record(20, 12, false, b"META_DAT.;1", Some(b"meta-data"))]);
        crate::fuzz::seed("iso9660", &base);
        let mut found = 0;
        let mut garbage = crate::fuzz::Garbage::new(11);
        for _ in 0..3000 {
            let disk = garbage.mutated(&base, 16 * SECTOR..19 * SECTOR, 6);
            if let Ok(volume) = open(&disk) {
                if let Ok(Some(file)) = volume.find(&mut &disk[..], &[b"meta-data"]) {
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
}
