//! FAT12, FAT16 and FAT32 seed images (as `cloud-localds -f vfat` and mkfs.vfat make
//! them): the volume label, and files found by their long (VFAT) or short names. Every
//! cluster number is checked against the volume, and a chain longer than the volume has
//! clusters is a cycle, refused.

use super::{Corruption, Device, SeedError};
use crate::text::eq_ignoring_case;

const ENTRY: usize = 32;
const ATTR_LONG_NAME: u8 = 0x0f;
const ATTR_VOLUME_ID: u8 = 0x08;
const ATTR_DIRECTORY: u8 = 0x10;
/// Longest name kept from long-name entries (VFAT allows 255 UCS-2 characters; seed files
/// are short, and longer names simply do not match).
const NAME_LIMIT: usize = 64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Fat12,
    Fat16,
    Fat32,
}

/// Where a file is: its first cluster (0 for FAT12/16's fixed root directory) and size.
/// What a directory walk calls for each entry, with its long name if it has one;
/// `true` stops the walk.
type Visitor<'v> = dyn FnMut(&[u8; ENTRY], Option<&[u8]>) -> bool + 'v;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct File {
    pub cluster: u32,
    pub len: u32,
    pub is_dir: bool,
}

/// Follows a cluster chain and notices a cycle (Brent's algorithm: one remembered
/// cluster, no extra reads), and any chain longer than the volume has clusters.
struct Chain {
    remembered: u32,
    power: u32,
    since: u32,
    steps: u32,
}

impl Chain {
    fn new(first: u32) -> Chain {
        Chain { remembered: first, power: 1, since: 0, steps: 0 }
    }

    fn step(&mut self, next: u32, clusters: u32) -> Result<(), SeedError> {
        self.steps += 1;
        if next == self.remembered || self.steps > clusters {
            return Err(SeedError::Corrupt(Corruption::ClusterChainCycles));
        }
        self.since += 1;
        if self.since == self.power {
            self.remembered = next;
            self.power *= 2;
            self.since = 0;
        }
        Ok(())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Volume {
    kind: Kind,
    bytes_per_sector: u64,
    sectors_per_cluster: u64,
    fat_offset: u64,
    root_offset: u64,
    root_entries: u64,
    root_cluster: u32,
    data_offset: u64,
    clusters: u32,
    label: [u8; 11],
}

impl Volume {
    pub fn open<D: Device>(device: &mut D, image_bytes: u64) -> Result<Volume, SeedError> {
        let mut boot = [0u8; 512];
        device.read(0, &mut boot)?;
        let corrupt = SeedError::Corrupt;
        if boot[510..512] != [0x55, 0xaa] {
            return Err(SeedError::NotFat);
        }
        let u16_at = |at: usize| u64::from(u16::from_le_bytes([boot[at], boot[at + 1]]));
        let u32_at = |at: usize| u64::from(u32::from_le_bytes([boot[at], boot[at + 1], boot[at + 2], boot[at + 3]]));
        let bytes_per_sector = u16_at(11);
        let sectors_per_cluster = u64::from(boot[13]);
        let reserved = u16_at(14);
        let fats = u64::from(boot[16]);
        let root_entries = u16_at(17);
        let total = if u16_at(19) != 0 { u16_at(19) } else { u32_at(32) };
        let fat_sectors = if u16_at(22) != 0 { u16_at(22) } else { u32_at(36) };
        if !matches!(bytes_per_sector, 512 | 1024 | 2048 | 4096) || !sectors_per_cluster.is_power_of_two() || reserved == 0 || fats == 0 || fat_sectors == 0 {
            return Err(SeedError::NotFat);
        }
        if total * bytes_per_sector > image_bytes {
            return Err(corrupt(Corruption::FatLargerThanDevice));
        }
        let root_sectors = (root_entries * ENTRY as u64).div_ceil(bytes_per_sector);
        let data_sector = reserved + fats * fat_sectors + root_sectors;
        let data_sectors = total.checked_sub(data_sector).ok_or(corrupt(Corruption::FatLayoutDoesNotFit))?;
        let clusters = data_sectors / sectors_per_cluster;
        let kind = match clusters {
            0..4085 => Kind::Fat12,
            4085..65525 => Kind::Fat16,
            _ => Kind::Fat32,
        };
        let label_at = if kind == Kind::Fat32 { 71 } else { 43 };
        let signature_at = if kind == Kind::Fat32 { 66 } else { 38 };
        let mut label = [b' '; 11];
        if boot[signature_at] == 0x29 {
            label.copy_from_slice(&boot[label_at..label_at + 11]);
        }
        let mut volume = Volume {
            kind,
            bytes_per_sector,
            sectors_per_cluster,
            fat_offset: reserved * bytes_per_sector,
            root_offset: (reserved + fats * fat_sectors) * bytes_per_sector,
            root_entries,
            root_cluster: if kind == Kind::Fat32 { u32_at(44) as u32 } else { 0 },
            data_offset: data_sector * bytes_per_sector,
            clusters: clusters as u32,
            label,
        };
        // mkfs.vfat also writes the label as a root directory entry, which wins (it is
        // what `fatlabel` changes).
        let root = volume.root();
        let mut entry_label = None;
        volume.for_each_entry(device, root, &mut |entry, _| {
            if entry[11] & ATTR_VOLUME_ID != 0 && entry[11] != ATTR_LONG_NAME {
                let mut found = [0u8; 11];
                found.copy_from_slice(&entry[..11]);
                entry_label = Some(found);
                return true;
            }
            false
        })?;
        if let Some(found) = entry_label {
            volume.label = found;
        }
        Ok(volume)
    }

    pub fn label(&self) -> &[u8] {
        let end = self.label.iter().rposition(|&b| b != b' ' && b != 0).map_or(0, |i| i + 1);
        &self.label[..end]
    }

    fn root(&self) -> File {
        File { cluster: self.root_cluster, len: 0, is_dir: true }
    }

    /// The file at `path` (components compared without case, long names first).
    pub fn find<D: Device>(&self, device: &mut D, path: &[&[u8]]) -> Result<Option<File>, SeedError> {
        super::walk(self.root(), path, |file| file.is_dir, |directory, wanted| self.lookup(device, directory, wanted))
    }

    fn lookup<D: Device>(&self, device: &mut D, directory: File, wanted: &[u8]) -> Result<Option<File>, SeedError> {
        let mut found = None;
        self.for_each_entry(device, directory, &mut |entry, long_name| {
            let attr = entry[11];
            if attr == ATTR_LONG_NAME || attr & ATTR_VOLUME_ID != 0 {
                return false;
            }
            let matches = match long_name {
                Some(name) => eq_ignoring_case(name, wanted),
                None => short_name_matches(&entry[..11], wanted),
            };
            if matches {
                let cluster = u32::from(u16::from_le_bytes([entry[26], entry[27]])) | u32::from(u16::from_le_bytes([entry[20], entry[21]])) << 16;
                let len = u32::from_le_bytes([entry[28], entry[29], entry[30], entry[31]]);
                found = Some(File { cluster, len, is_dir: attr & ATTR_DIRECTORY != 0 });
            }
            matches
        })?;
        Ok(found)
    }

    /// Reads a whole file into `out`, whose size is the limit.
    pub fn read<D: Device>(&self, device: &mut D, file: File, out: &mut [u8]) -> Result<usize, SeedError> {
        let len = file.len as usize;
        if len > out.len() {
            return Err(SeedError::FileTooLarge { limit: out.len() as u32 });
        }
        let cluster_bytes = (self.bytes_per_sector * self.sectors_per_cluster) as usize;
        let mut done = 0;
        let mut cluster = file.cluster;
        let mut chain = Chain::new(cluster);
        while done < len {
            let offset = self.cluster_offset(cluster)?;
            let n = cluster_bytes.min(len - done);
            device.read(offset, &mut out[done..done + n])?;
            done += n;
            if done < len {
                cluster = self.next(device, cluster, &mut chain)?.ok_or(SeedError::Corrupt(Corruption::ClusterChainEndsEarly))?;
            }
        }
        Ok(len)
    }

    fn cluster_offset(&self, cluster: u32) -> Result<u64, SeedError> {
        if cluster < 2 || cluster >= self.clusters + 2 {
            return Err(SeedError::Corrupt(Corruption::ClusterOutsideVolume));
        }
        Ok(self.data_offset + u64::from(cluster - 2) * self.sectors_per_cluster * self.bytes_per_sector)
    }

    /// The cluster after `cluster`, or `None` at the chain's end.
    fn next<D: Device>(&self, device: &mut D, cluster: u32, chain: &mut Chain) -> Result<Option<u32>, SeedError> {
        let (offset, width) = match self.kind {
            Kind::Fat12 => (u64::from(cluster) * 3 / 2, 2),
            Kind::Fat16 => (u64::from(cluster) * 2, 2),
            Kind::Fat32 => (u64::from(cluster) * 4, 4),
        };
        let mut raw = [0u8; 4];
        device.read(self.fat_offset + offset, &mut raw[..width])?;
        let value = u32::from_le_bytes(raw);
        let (next, end) = match self.kind {
            Kind::Fat12 => (if cluster.is_multiple_of(2) { value & 0xfff } else { (value >> 4) & 0xfff }, 0xff8),
            Kind::Fat16 => (value & 0xffff, 0xfff8),
            Kind::Fat32 => (value & 0x0fff_ffff, 0x0fff_fff8),
        };
        if next >= end {
            return Ok(None);
        }
        chain.step(next, self.clusters)?;
        Ok(Some(next))
    }

    /// Calls `visit` with each 32-byte entry of a directory and the long name that
    /// precedes it, until `visit` returns true or the directory ends.
    /// `visit` is a trait object and the walk never inlined: one copy serves the label
    /// search and every lookup.
    #[inline(never)]
    fn for_each_entry<D: Device>(&self, device: &mut D, directory: File, visit: &mut Visitor<'_>) -> Result<(), SeedError> {
        let mut long = [0u8; NAME_LIMIT];
        let mut long_len: Option<usize> = None;
        let mut entry = [0u8; ENTRY];
        let mut chain = Chain::new(directory.cluster);
        let fixed_root = directory.cluster == 0 && self.kind != Kind::Fat32;
        let mut cluster = directory.cluster;
        let per_cluster = self.bytes_per_sector * self.sectors_per_cluster / ENTRY as u64;
        let mut index: u64 = 0;
        loop {
            let offset = if fixed_root {
                if index >= self.root_entries {
                    return Ok(());
                }
                self.root_offset + index * ENTRY as u64
            } else {
                if index > 0 && index.is_multiple_of(per_cluster) {
                    match self.next(device, cluster, &mut chain)? {
                        Some(next) => cluster = next,
                        None => return Ok(()),
                    }
                }
                self.cluster_offset(cluster)? + (index % per_cluster) * ENTRY as u64
            };
            index += 1;
            device.read(offset, &mut entry)?;
            match entry[0] {
                0x00 => return Ok(()),
                0xe5 => {
                    long_len = None;
                    continue;
                }
                _ => {}
            }
            if entry[11] == ATTR_LONG_NAME {
                let sequence = (entry[0] & 0x1f) as usize;
                if sequence == 0 || sequence * 13 > NAME_LIMIT {
                    long_len = None;
                    continue;
                }
                let at = (sequence - 1) * 13;
                for (i, pos) in [1, 3, 5, 7, 9, 14, 16, 18, 20, 22, 24, 28, 30].into_iter().enumerate() {
                    let c = u16::from_le_bytes([entry[pos], entry[pos + 1]]);
                    if c == 0 || c == 0xffff {
                        if entry[0] & 0x40 != 0 {
                            long_len = Some(at + i);
                        }
                        break;
                    }
                    long[at + i] = if c < 0x80 { c as u8 } else { b'?' };
                    if i == 12 && entry[0] & 0x40 != 0 {
                        long_len = Some(at + 13);
                    }
                }
                continue;
            }
            let name = long_len.take().map(|len| &long[..len]);
            if visit(&entry, name) {
                return Ok(());
            }
        }
    }
}

/// Compares an 8.3 entry (`META-D~1   `, `USER-D~1   `) with a wanted name, for files
/// written without long names.
fn short_name_matches(short: &[u8], wanted: &[u8]) -> bool {
    let base = short[..8].trim_ascii_end();
    let extension = short[8..11].trim_ascii_end();
    let (wanted_base, wanted_extension) = match wanted.iter().rposition(|&b| b == b'.') {
        Some(dot) => (&wanted[..dot], &wanted[dot + 1..]),
        None => (wanted, &b""[..]),
    };
    eq_ignoring_case(base, wanted_base) && eq_ignoring_case(extension, wanted_extension)
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

    /// A FAT12 image: 512-byte sectors, 1 sector per cluster, 1 reserved, 1 FAT of 1
    /// sector, 16 root entries (1 sector), data from sector 3, 64 sectors in all.
    pub(crate) fn image(label: &[u8], entries: &[[u8; 32]], fat: &[(u32, u32)]) -> Vec<u8> {
        let mut disk = vec![0u8; 64 * 512];
        disk[11..13].copy_from_slice(&512u16.to_le_bytes());
        disk[13] = 1;
        disk[14..16].copy_from_slice(&1u16.to_le_bytes());
        disk[16] = 1;
        disk[17..19].copy_from_slice(&16u16.to_le_bytes());
        disk[19..21].copy_from_slice(&64u16.to_le_bytes());
        disk[22..24].copy_from_slice(&1u16.to_le_bytes());
        disk[38] = 0x29;
        disk[43..54].copy_from_slice(label);
        disk[510] = 0x55;
        disk[511] = 0xaa;
        for &(cluster, next) in fat {
            let at = 512 + (cluster as usize) * 3 / 2;
            let pair = u16::from_le_bytes([disk[at], disk[at + 1]]);
            let value = if cluster % 2 == 0 { (pair & 0xf000) | next as u16 } else { (pair & 0x000f) | (next as u16) << 4 };
            disk[at..at + 2].copy_from_slice(&value.to_le_bytes());
        }
        for (i, entry) in entries.iter().enumerate() {
            disk[1024 + i * 32..1024 + (i + 1) * 32].copy_from_slice(entry);
        }
        disk
    }

    pub(crate) fn short(name: &[u8; 11], cluster: u16, len: u32) -> [u8; 32] {
        let mut e = [0u8; 32];
        e[..11].copy_from_slice(name);
        e[11] = 0x20;
        e[26..28].copy_from_slice(&cluster.to_le_bytes());
        e[28..32].copy_from_slice(&len.to_le_bytes());
        e
    }

    pub(crate) fn long(name: &str, last: bool) -> [u8; 32] {
        let mut e = [0u8; 32];
        e[0] = 1 | if last { 0x40 } else { 0 };
        e[11] = ATTR_LONG_NAME;
        let chars: Vec<u16> = name.encode_utf16().chain([0]).chain(std::iter::repeat(0xffff)).take(13).collect();
        for (c, pos) in chars.iter().zip([1, 3, 5, 7, 9, 14, 16, 18, 20, 22, 24, 28, 30]) {
            e[pos..pos + 2].copy_from_slice(&c.to_le_bytes());
        }
        e
    }

    fn open(disk: &[u8]) -> Result<Volume, SeedError> {
        Volume::open(&mut &disk[..], disk.len() as u64)
    }

    #[test]
    fn label_long_names_and_chains() {
        let mut disk = image(b"CIDATA     ", &[long("meta-data", true), short(b"META-D~1   ", 2, 600), short(b"USERDATA   ", 4, 3)], &[(2, 3), (3, 0xfff), (4, 0xfff)]);
        disk[3 * 512..3 * 512 + 12].copy_from_slice(b"instance-id:");
        disk[4 * 512 + 85..4 * 512 + 88].copy_from_slice(b"end");
        disk[5 * 512..5 * 512 + 3].copy_from_slice(b"#!x");
        let volume = open(&disk).unwrap();
        assert_eq!(volume.label(), b"CIDATA");
        let meta = volume.find(&mut &disk[..], &[b"meta-data"]).unwrap().unwrap();
        assert_eq!(meta, File { cluster: 2, len: 600, is_dir: false });
        let mut out = [0u8; 1024];
        assert_eq!(volume.read(&mut &disk[..], meta, &mut out), Ok(600));
        assert_eq!((&out[..12], &out[597..600]), (&b"instance-id:"[..], &b"end"[..]));
        let user = volume.find(&mut &disk[..], &[b"userdata"]).unwrap().unwrap();
        assert_eq!(volume.read(&mut &disk[..], user, &mut out), Ok(3));
        assert_eq!(&out[..3], b"#!x");
        assert_eq!(volume.find(&mut &disk[..], &[b"vendor-data"]).unwrap(), None);
    }

    #[test]
    fn corrupt_volumes_are_refused() {
        // A chain that points back at itself.
        let disk = image(b"CIDATA     ", &[short(b"LOOP       ", 2, 5000)], &[(2, 3), (3, 2)]);
        let volume = open(&disk).unwrap();
        let file = volume.find(&mut &disk[..], &[b"loop"]).unwrap().unwrap();
        let mut out = [0u8; 8192];
        assert_eq!(volume.read(&mut &disk[..], file, &mut out), Err(SeedError::Corrupt(Corruption::ClusterChainCycles)));
        // A cluster outside the volume.
        let disk = image(b"CIDATA     ", &[short(b"FAR        ", 4000, 10)], &[]);
        let volume = open(&disk).unwrap();
        let file = volume.find(&mut &disk[..], &[b"far"]).unwrap().unwrap();
        assert_eq!(volume.read(&mut &disk[..], file, &mut out), Err(SeedError::Corrupt(Corruption::ClusterOutsideVolume)));
        // Absurd sizes.
        let mut disk = image(b"CIDATA     ", &[], &[]);
        disk[19..21].copy_from_slice(&60000u16.to_le_bytes());
        assert_eq!(open(&disk), Err(SeedError::Corrupt(Corruption::FatLargerThanDevice)));
        assert_eq!(open(&vec![0u8; 4096]), Err(SeedError::NotFat));
    }

    #[test]
    fn garbage_never_panics() {
        let base = image(b"CIDATA     ", &[long("meta-data", true), short(b"META-D~1   ", 2, 600)], &[(2, 3), (3, 0xfff)]);
        crate::fuzz::seed("vfat", &base);
        let mut found = 0;
        let mut garbage = crate::fuzz::Garbage::new(23);
        for _ in 0..3000 {
            let disk = garbage.mutated(&base, 0..2048, 6);
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
