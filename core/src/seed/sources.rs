//! Where a seed's files are read from, for `seed::local`: the block devices the kernel
//! lists, in its order, each the first of the build's readers (ISO 9660, FAT, UDF) takes;
//! a seed directory, its files resolved beneath it; a seed URL, one GET per file. This is
//! `SeedMedia` over the host's thinner `SeedSources`, the readers dispatched once here.

use super::{iso9660, udf, vfat, Filesystem, SeedError};
use crate::host::seed_sources::SeedSources;
use crate::text::eq_ignoring_case;
use crate::host::seed_media::SeedMedia;
use crate::http::Url;
use crate::system_files::TOO_LARGE;
use crate::text::{Decimal, Plain, Shown};

/// Block devices looked at, in the order listed (more are left out).
pub const DEVICES_LIMIT: usize = 64;
/// Longest block device name kept (a longer one is left out).
pub const DEVICE_NAME_LIMIT: usize = 32;
/// Longest path of a file inside a seed (`/openstack/2015-10-15/meta_data.json`), a seed
/// URL's path before it.
pub const SEED_PATH_LIMIT: usize = URL_PATH_LIMIT + 256;
// A path too long is said with the limit as a literal, not a number formatted at each.
const _: () = assert!(SEED_PATH_LIMIT == 512);
/// Longest seed URL's host and path.
pub const URL_HOST_LIMIT: usize = 64;
pub const URL_PATH_LIMIT: usize = 256;

/// A seed filesystem, read in user space by the reader that took it.
pub enum Volume {
    Iso(iso9660::Volume),
    Fat(vfat::Volume),
    Udf(udf::Volume),
}

impl Volume {
    /// The volume on `device`, by the first of `H`'s readers that takes it.
    fn open<H: SeedSources>(device: &mut H::Device, size: u64) -> Option<Volume> {
        if H::ISO9660 {
            if let Ok(volume) = iso9660::Volume::open(device, size) {
                return Some(Volume::Iso(volume));
            }
        }
        if H::VFAT {
            if let Ok(volume) = vfat::Volume::open(device, size) {
                return Some(Volume::Fat(volume));
            }
        }
        if H::UDF {
            if let Ok(volume) = udf::Volume::open(device, size) {
                return Some(Volume::Udf(volume));
            }
        }
        None
    }

    /// The reader, whichever it is: what follows is written once for all. A reader the
    /// build lacks took nothing, and its code is left out.
    fn filesystem<H: SeedSources>(&self) -> Option<&dyn Filesystem<H::Device>> {
        match self {
            Volume::Iso(volume) if H::ISO9660 => Some(volume),
            Volume::Fat(volume) if H::VFAT => Some(volume),
            Volume::Udf(volume) if H::UDF => Some(volume),
            _ => None,
        }
    }

    pub fn label<H: SeedSources>(&self) -> &[u8] {
        self.filesystem::<H>().map_or(b"", |reader| reader.label())
    }

    /// Reads the regular file at `path` into `out` (without, only whether it is there).
    fn read<H: SeedSources>(&self, device: &mut H::Device, path: &[&[u8]], out: Option<&mut [u8]>) -> Result<Option<usize>, SeedError> {
        self.filesystem::<H>().map_or(Ok(None), |reader| reader.read_file(device, path, out))
    }
}

/// Where a seed's files are. One exists per run, on the stack.
#[allow(clippy::large_enum_variant)]
pub enum Seed<H: SeedSources> {
    /// A seed directory, open: its files are resolved beneath it.
    Directory(H::Directory),
    /// A block device, `/dev/name`, and the filesystem on it.
    Image { name: heapless::String<DEVICE_NAME_LIMIT>, device: H::Device, volume: Volume },
    /// `s=http://...`: each file one GET.
    Http { address: [u8; 4], port: u16, host: heapless::String<URL_HOST_LIMIT>, base: heapless::String<URL_PATH_LIMIT> },
}

/// The host's places as `SeedMedia`.
pub struct Sources<H>(pub H);

impl<H: SeedSources> Sources<H> {
    /// The first block device, in the kernel's order, whose seed filesystem `accept`
    /// takes. `accept` is a trait object: one copy serves every caller.
    #[inline(never)]
    fn find(&mut self, accept: &mut dyn FnMut(&mut H::Device, &Volume) -> bool) -> Option<Seed<H>> {
        let mut names: heapless::Vec<heapless::String<DEVICE_NAME_LIMIT>, DEVICES_LIMIT> = heapless::Vec::new();
        self.0.block_devices(&mut |name| {
            if let Some(name) = core::str::from_utf8(name).ok().and_then(|name| heapless::String::try_from(name).ok()) {
                let _ = names.push(name);
            }
        });
        for name in &names {
            let Ok((mut device, size)) = self.0.open_block_device(name.as_bytes()) else { continue };
            if let Some(volume) = Volume::open::<H>(&mut device, size) {
                if accept(&mut device, &volume) {
                    return Some(Seed::Image { name: name.clone(), device, volume });
                }
            }
        }
        None
    }

    /// Reads `file` (a path inside the seed) into `out`; `Ok(None)` when absent. Never
    /// inlined: it serves every reader and its callers are several.
    #[inline(never)]
    fn read_file(&mut self, seed: &mut Seed<H>, file: &[&[u8]], out: &mut [u8]) -> Result<Option<usize>, H::Text> {
        let host = &mut self.0;
        let base = match seed {
            Seed::Image { name, device, volume } => {
                return volume.read::<H>(device, file, Some(out)).map_err(|e| host.text(format_args!("/dev/{}: {e}", Plain(name))))
            }
            Seed::Directory(_) if H::NOCLOUD => "",
            Seed::Http { base, .. } if H::NOCLOUD => base,
            _ => return Ok(None),
        };
        // A directory's files are resolved beneath it (`/meta-data`); a URL's under its path.
        let path = joined(base, file).ok_or_else(|| host.text(format_args!("a seed path is longer than 512 bytes, or not UTF-8")))?;
        match seed {
            Seed::Directory(directory) => host.read_beneath(directory, path.as_bytes(), out).map_err(|e| {
                let (path, relative) = (host.directory_path(directory), Shown(path.as_bytes()));
                match e {
                    TOO_LARGE => host.text(format_args!("{path}{relative} is larger than {} bytes", Decimal(out.len() as u64))),
                    _ => host.text(format_args!("{path}{relative}: {}", H::reason(e))),
                }
            }),
            Seed::Http { address, port, host: server, .. } => host.get(*address, *port, server, &path, out),
            Seed::Image { .. } => Ok(None),
        }
    }
}

/// `base`, then each part of `file` after a `/` (a `/` ending `base` serves the first).
fn joined(base: &str, file: &[&[u8]]) -> Option<heapless::String<SEED_PATH_LIMIT>> {
    let mut path = heapless::String::new();
    path.push_str(base).ok()?;
    for part in file {
        if !path.ends_with('/') {
            path.push('/').ok()?;
        }
        path.push_str(core::str::from_utf8(part).ok()?).ok()?;
    }
    Some(path)
}

impl<H: SeedSources> SeedMedia for Sources<H> {
    type Seed = Seed<H>;
    type Text = H::Text;
    const NOCLOUD: bool = H::NOCLOUD;
    const CONFIGDRIVE: bool = H::CONFIGDRIVE;

    fn is_directory(&mut self, path: &[u8]) -> bool {
        self.0.open_directory(path).is_ok()
    }

    fn directory(&mut self, path: &[u8]) -> Result<Seed<H>, H::Text> {
        if !H::NOCLOUD {
            return Err(self.0.text(format_args!("no NoCloud in this build")));
        }
        self.0.open_directory(path).map(Seed::Directory)
    }

    fn url(&mut self, url: &Url<'_>, seed: &[u8]) -> Result<Seed<H>, H::Text> {
        if !H::NOCLOUD {
            return Err(self.0.text(format_args!("no NoCloud in this build")));
        }
        let too_long = |_| self.0.text(format_args!("ds=nocloud;s={}: URL too long", Shown(seed)));
        Ok(Seed::Http {
            address: url.address,
            port: url.port,
            host: heapless::String::try_from(url.host).map_err(too_long)?,
            base: heapless::String::try_from(url.path).map_err(too_long)?,
        })
    }

    fn labelled(&mut self, label: &[u8]) -> Option<Seed<H>> {
        self.find(&mut |_, volume| eq_ignoring_case(volume.label::<H>(), label))
    }

    fn holding(&mut self, name: &[u8]) -> Option<Seed<H>> {
        self.find(&mut |device, volume| matches!(volume.read::<H>(device, &[name], None), Ok(Some(_))))
    }

    fn read(&mut self, seed: &mut Seed<H>, path: &[&[u8]], out: &mut [u8]) -> Result<Option<usize>, H::Text> {
        self.read_file(seed, path, out)
    }

    fn describe(&self, seed: &Seed<H>) -> H::Text {
        match seed {
            Seed::Directory(directory) => self.0.text(format_args!("{}", self.0.directory_path(directory))),
            Seed::Image { name, volume, .. } => self.0.text(format_args!("/dev/{} (label {})", Plain(name), Shown(volume.label::<H>()))),
            Seed::Http { host, base, .. } => self.0.text(format_args!("http://{}{}", Plain(host), Plain(base))),
        }
    }

    fn kept(&mut self, name: &[u8], contents: &[u8]) -> bool {
        self.0.kept(name, contents)
    }

    fn keep(&mut self, name: &[u8], contents: &[u8]) -> Result<(), H::Text> {
        self.0.keep(name, contents).map_err(|e| self.0.text(format_args!("cannot save {}: {}", Shown(name), H::reason(e))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::memory::MemorySeedSources;
    use crate::seed::iso9660::tests::{image as iso, record};
    use crate::seed::vfat::tests::{image as fat, long, short};
    use std::string::String;
    use std::vec::Vec;

    /// An ISO 9660 volume labelled `label` holding `meta-data` (`instance-id:`).
    fn iso_seed(label: &[u8]) -> Vec<u8> {
        iso(label, &[record(20, 12, false, b"META_DAT.;1", Some(b"meta-data"))])
    }

    /// A FAT volume labelled `CIDATA` holding `meta-data` (`instance-id:`) and `ovf-env.xml`.
    fn fat_seed() -> Vec<u8> {
        let mut disk = fat(b"CIDATA     ", &[long("meta-data", true), short(b"META-D~1   ", 2, 12), short(b"OVF-ENV XML", 3, 3)], &[(2, 0xfff), (3, 0xfff)]);
        disk[3 * 512..3 * 512 + 12].copy_from_slice(b"instance-id:");
        disk[4 * 512..4 * 512 + 3].copy_from_slice(b"<x>");
        disk
    }

    fn read(sources: &mut Sources<MemorySeedSources>, seed: &mut Seed<MemorySeedSources>, path: &[&[u8]]) -> Result<Option<String>, String> {
        let mut out = [0u8; 64];
        let len = sources.read(seed, path, &mut out)?;
        Ok(len.map(|len| String::from_utf8_lossy(&out[..len]).into_owned()))
    }

    #[test]
    fn the_first_device_listed_with_the_label_wins_whatever_its_filesystem() {
        let devices = std::vec![
            ("loop0", Some(std::vec![0u8; 64 * 1024])),
            ("sr0", None),
            ("vdb", Some(fat_seed())),
            ("sr1", Some(iso_seed(b"CIDATA"))),
            ("sr2", Some(iso_seed(b"config-2"))),
        ];
        let mut sources = Sources(MemorySeedSources { devices, ..Default::default() });
        let mut seed = sources.labelled(b"cidata").unwrap();
        assert_eq!(sources.describe(&seed), "/dev/vdb (label CIDATA)");
        assert_eq!(read(&mut sources, &mut seed, &[b"meta-data"]), Ok(Some("instance-id:".into())));
        assert_eq!(read(&mut sources, &mut seed, &[b"user-data"]), Ok(None));
        // Garbage and a device that cannot be opened are passed over, in the kernel's order.
        assert_eq!(sources.0.opened, ["loop0", "sr0", "vdb"]);
        let seed = sources.labelled(b"CONFIG-2").unwrap();
        assert_eq!(sources.describe(&seed), "/dev/sr2 (label config-2)");
        assert!(sources.labelled(b"cidata2").is_none());
        // Azure's CD is found by the file it holds, not by a label.
        let seed = sources.holding(b"ovf-env.xml").unwrap();
        assert_eq!(sources.describe(&seed), "/dev/vdb (label CIDATA)");
        assert!(sources.holding(b"absent.xml").is_none());
    }

    #[test]
    fn a_device_read_error_names_the_device() {
        // The ISO's meta-data extent points past a truncated image.
        let mut image = iso(b"cidata", &[record(30, 12, false, b"META_DAT.;1", Some(b"meta-data"))]);
        image.truncate(24 * 2048);
        let mut sources = Sources(MemorySeedSources { devices: std::vec![("sr0", Some(image))], ..Default::default() });
        let mut seed = sources.labelled(b"cidata").unwrap();
        let error = read(&mut sources, &mut seed, &[b"meta-data"]).unwrap_err();
        assert!(error.starts_with("/dev/sr0: "), "{error}");
    }

    #[test]
    fn a_seed_directory_is_read_beneath_itself_and_its_errors_name_the_file() {
        let mut host = MemorySeedSources::default();
        let files = [("/meta-data", "instance-id: i-1\n"), ("/openstack/latest/user_data", "#!/bin/sh\n"), ("/big", &"x".repeat(65))];
        host.directories.insert("/seed".into(), files.iter().map(|(k, v)| (String::from(*k), v.as_bytes().to_vec())).collect());
        let mut sources = Sources(host);
        assert!(sources.is_directory(b"/seed") && !sources.is_directory(b"/other"));
        assert_eq!(sources.directory(b"/other").err().unwrap(), "/other: errno 2");
        let mut seed = sources.directory(b"/seed").unwrap();
        assert_eq!(sources.describe(&seed), "/seed");
        assert_eq!(read(&mut sources, &mut seed, &[b"meta-data"]), Ok(Some("instance-id: i-1\n".into())));
        assert_eq!(read(&mut sources, &mut seed, &[b"openstack", b"latest", b"user_data"]), Ok(Some("#!/bin/sh\n".into())));
        assert_eq!(read(&mut sources, &mut seed, &[b"vendor-data"]), Ok(None));
        assert_eq!(read(&mut sources, &mut seed, &[b"big"]), Err("/seed/big is larger than 64 bytes".into()));
        let long = "a".repeat(SEED_PATH_LIMIT);
        assert_eq!(read(&mut sources, &mut seed, &[long.as_bytes()]), Err(std::format!("a seed path is longer than {SEED_PATH_LIMIT} bytes, or not UTF-8")));
    }

    #[test]
    fn a_seed_url_is_one_get_per_file_under_its_path() {
        let mut host = MemorySeedSources::default();
        host.urls.insert("10.0.0.2:8000/seed/meta-data".into(), b"instance-id: i-2\n".to_vec());
        let mut sources = Sources(host);
        for written in ["http://10.0.0.2:8000/seed/", "http://10.0.0.2:8000/seed"] {
            let url = crate::http::parse_url(written).unwrap();
            let mut seed = sources.url(&url, written.as_bytes()).unwrap();
            assert_eq!(sources.describe(&seed), written);
            assert_eq!(read(&mut sources, &mut seed, &[b"meta-data"]), Ok(Some("instance-id: i-2\n".into())));
            assert_eq!(read(&mut sources, &mut seed, &[b"user-data"]), Ok(None));
        }
        assert_eq!(sources.0.fetched[..2], ["10.0.0.2:8000 10.0.0.2:8000/seed/meta-data", "10.0.0.2:8000 10.0.0.2:8000/seed/user-data"]);
        assert_eq!(sources.0.fetched[2..], sources.0.fetched[..2]);
        let long = std::format!("http://10.0.0.2/{}", "a".repeat(URL_PATH_LIMIT));
        let url = crate::http::parse_url(&long).unwrap();
        assert_eq!(sources.url(&url, long.as_bytes()).err().unwrap(), std::format!("ds=nocloud;s={long}: URL too long"));
    }

    #[test]
    fn a_local_cloud_is_detected_and_loaded_through_the_sources() {
        let mut space = std::vec![0u8; crate::provider::metadata::METADATA_SIZE];
        let mut metadata = crate::provider::metadata::Metadata::new(&mut space);
        let devices = std::vec![("sr0", Some(iso_seed(b"cidata")))];
        let mut sources = Sources(MemorySeedSources { devices, ..Default::default() });
        let mut files = crate::host::memory::MemoryHost::new();
        assert_eq!(super::super::local::detect(&mut sources, &mut files), Some(crate::config::Cloud::Nocloud));
        let said = super::super::local::load(&mut sources, &mut files, crate::config::Cloud::Nocloud, &mut metadata, true, &mut [0u8; super::super::local::DOCUMENT_LIMIT]);
        assert_eq!(said.unwrap(), "/dev/sr0 (label cidata)");
        // The image's meta-data is `instance-id:`, without a value.
        assert_eq!(metadata.get(crate::provider::Item::InstanceId), Some(&b""[..]));
        assert_eq!(sources.0.kept.get(&b"meta-data"[..]).map(Vec::as_slice), Some(&b"instance-id:"[..]));
        let aws = super::super::local::load(&mut sources, &mut files, crate::config::Cloud::Aws, &mut metadata, false, &mut [0u8; super::super::local::DOCUMENT_LIMIT]);
        assert_eq!(aws.unwrap_err(), "aws has no local seed");
        assert_eq!(super::super::local::detect(&mut Sources(MemorySeedSources::default()), &mut files), None);
    }
}
