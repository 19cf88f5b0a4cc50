//! Local datasources: NoCloud and ConfigDrive seeds, from a directory or straight from a
//! labelled ISO 9660 block device (read in user space: no mount, no blkid). Their values
//! fill the same metadata store the metadata services do.

//!
//! Which clouds and which filesystem readers are here is the build's choice (features
//! `nocloud`, `configdrive`, `azure`; `iso9660`, `vfat`, `udf`).

#[cfg(any(feature = "nocloud", feature = "configdrive"))]
use wisp_core::config::Cloud;
#[cfg(feature = "nocloud")]
use wisp_core::http;
#[cfg(feature = "nocloud")]
use wisp_core::retry::Timeouts;
#[cfg(feature = "azure")]
use wisp_core::provider::azure;
#[cfg(feature = "configdrive")]
use wisp_core::provider::openstack;
#[cfg(any(feature = "nocloud", feature = "configdrive", feature = "azure"))]
use wisp_core::provider::Item;
#[cfg(feature = "iso9660")]
use wisp_core::seed::iso9660;
#[cfg(feature = "udf")]
use wisp_core::seed::udf;
#[cfg(feature = "vfat")]
use wisp_core::seed::vfat;
#[cfg(feature = "nocloud")]
use wisp_core::seed::nocloud;
use wisp_core::seed::{Device, Filesystem, SeedError};
use wisp_core::state_files::{META_DATA, NETWORK_CONFIG, VENDOR_DATA};
use wisp_core::text::Decimal;
use wisp_os_linux::block;
#[cfg(feature = "nocloud")]
use wisp_os_linux::cpath::CPath;
use wisp_os_linux::fs::{self, Dir, Resolve};
#[cfg(feature = "nocloud")]
use wisp_os_linux::fs::ReadError;
use wisp_os_linux::OwnedFd;

use crate::output::{Line, Os, Shown};

/// The seed directories NoCloud looks in, as cloud-init and tiny-cloud do.
#[cfg(feature = "nocloud")]
pub const SEED_DIRS: [&str; 2] = ["/var/lib/cloud/seed/nocloud", "/var/lib/cloud/seed/nocloud-net"];
/// Largest meta-data or network document read.
const DOCUMENT_LIMIT: usize = 64 * 1024;

/// A block device read through its descriptor.
struct BlockDevice(OwnedFd);

impl Device for BlockDevice {
    fn read(&mut self, offset: u64, buf: &mut [u8]) -> Result<(), SeedError> {
        block::read_at(&self.0, offset, buf).map_err(|e| SeedError::Io { errno: e.raw_os_error() })
    }
}

/// A seed filesystem read in user space.
enum Volume {
    #[cfg(feature = "iso9660")]
    Iso(iso9660::Volume),
    #[cfg(feature = "vfat")]
    Fat(vfat::Volume),
    #[cfg(feature = "udf")]
    Udf(udf::Volume),
}

impl Volume {
    fn open(device: &mut BlockDevice, size: u64) -> Option<Volume> {
        #[cfg(feature = "iso9660")]
        if let Ok(volume) = iso9660::Volume::open(device, size) {
            return Some(Volume::Iso(volume));
        }
        #[cfg(feature = "vfat")]
        if let Ok(volume) = vfat::Volume::open(device, size) {
            return Some(Volume::Fat(volume));
        }
        #[cfg(feature = "udf")]
        if let Ok(volume) = udf::Volume::open(device, size) {
            return Some(Volume::Udf(volume));
        }
        None
    }

    /// The reader, whichever it is: what follows is written once for all.
    fn filesystem(&self) -> &dyn Filesystem<BlockDevice> {
        match self {
            #[cfg(feature = "iso9660")]
            Volume::Iso(volume) => volume,
            #[cfg(feature = "vfat")]
            Volume::Fat(volume) => volume,
            #[cfg(feature = "udf")]
            Volume::Udf(volume) => volume,
        }
    }

    fn label(&self) -> &[u8] {
        self.filesystem().label()
    }

    /// Whether a regular file is at `path` (an unreadable volume has none).
    #[cfg(feature = "azure")]
    fn has_file(&self, device: &mut BlockDevice, path: &[&[u8]]) -> bool {
        matches!(self.filesystem().read_file(device, path, None), Ok(Some(_)))
    }

    /// Reads the regular file at `path` into `out`; `Ok(None)` when absent.
    fn read(&self, device: &mut BlockDevice, path: &[&[u8]], out: &mut [u8]) -> Result<Option<usize>, SeedError> {
        self.filesystem().read_file(device, path, Some(out))
    }
}

/// Where a seed's files are. One exists per run, on the stack: the size difference
/// between a path and an image's state does not matter.
#[allow(clippy::large_enum_variant)]
enum Source {
    /// A seed directory, open, and its path for messages: its files are resolved inside it.
    #[cfg(feature = "nocloud")]
    Directory(Dir, CPath),
    Image { name: heapless::String<32>, device: BlockDevice, volume: Volume },
    /// `s=http://...`: files fetched with wisp's own client.
    #[cfg(feature = "nocloud")]
    Http { address: [u8; 4], port: u16, host: heapless::String<64>, base: heapless::String<256>, timeouts: Timeouts },
}

impl Source {
    /// Reads `file` (a path inside the seed) into `out`; `Ok(None)` when absent. Never
    /// inlined: it serves every reader and its callers are several.
    #[inline(never)]
    fn read(&mut self, file: &[&[u8]], out: &mut [u8]) -> Result<Option<usize>, Line> {
        match self {
            #[cfg(feature = "nocloud")]
            Source::Directory(dir, path) => {
                let mut relative = CPath::new();
                for part in file {
                    relative.push(b"/").and_then(|()| relative.push(part)).map_err(crate::output::line)?;
                }
                let read = match dir.open_file_beneath(relative.as_bytes(), Resolve::InRoot) {
                    Ok(fd) => fs::read_to_end(&fd, out).map(Some),
                    Err(wisp_os_linux::Errno::NOENT) => Ok(None),
                    Err(e) => Err(ReadError::Io(e)),
                };
                let shown = || CPath::from_parts(&[path.as_bytes(), relative.as_bytes()]).unwrap_or_default();
                match read {
                    Ok(len) => Ok(len),
                    Err(ReadError::TooLarge { limit }) => Err(msg!("{} is larger than {limit} bytes", Shown(shown().as_bytes()), limit = Decimal(limit as u64))),
                    Err(ReadError::Io(e)) => Err(crate::output::path_error(shown().as_bytes(), e)),
                }
            }
            Source::Image { name, device, volume } => volume.read(device, file, out).map_err(|e| msg!("/dev/{name}: {e}")),
            #[cfg(feature = "nocloud")]
            Source::Http { address, port, host, base, timeouts } => {
                let mut path = heapless::String::<512>::new();
                let _ = path.push_str(base);
                for (i, part) in file.iter().enumerate() {
                    let part = core::str::from_utf8(part).map_err(|_| msg!("seed file name is not UTF-8"))?;
                    let separator = if i == 0 && base.ends_with('/') { "" } else { "/" };
                    path.push_str(separator).and_then(|()| path.push_str(part)).map_err(|_| msg!("seed URL longer than 511 bytes"))?;
                }
                crate::fetch::get(*address, *port, host, &path, out, timeouts)
            }
        }
    }

    fn describe(&self) -> Line {
        match self {
            #[cfg(feature = "nocloud")]
            Source::Directory(_, path) => msg!("{}", Shown(path.as_bytes())),
            Source::Image { name, volume, .. } => msg!("/dev/{name} (label {})", Shown(volume.label())),
            #[cfg(feature = "nocloud")]
            Source::Http { host, base, .. } => msg!("http://{host}{base}"),
        }
    }
}

/// The block device whose seed filesystem's label is `label` (compared without case).
#[cfg(any(feature = "nocloud", feature = "configdrive"))]
fn find_labelled(ctx: &crate::context::Context<'_>, label: &[u8]) -> Option<Source> {
    find_volume(ctx, &mut |_, volume| volume.label().eq_ignore_ascii_case(label))
}

/// The first block device holding a seed filesystem that `accept` takes.
#[inline(never)]
/// `accept` is a trait object: one copy of this function serves every caller.
fn find_volume(ctx: &crate::context::Context<'_>, accept: &mut dyn FnMut(&mut BlockDevice, &Volume) -> bool) -> Option<Source> {
    let sys = ctx.open_dir(b"/sys/class/block").ok()?;
    let mut names: heapless::Vec<heapless::String<32>, 64> = heapless::Vec::new();
    let _ = sys.for_each_entry(|name| {
        if let Ok(name) = core::str::from_utf8(name) {
            if let Ok(name) = heapless::String::try_from(name) {
                let _ = names.push(name);
            }
        }
    });
    for name in &names {
        let mut path = ctx.path(b"/dev/").ok()?;
        path.push(name.as_bytes()).ok()?;
        let Ok(fd) = fs::open_read(path.as_cstr()) else { continue };
        let Ok(size) = block::size_bytes(&fd).or_else(|_| block::file_size(&fd)) else { continue };
        let mut device = BlockDevice(fd);
        if let Some(volume) = Volume::open(&mut device, size) {
            if accept(&mut device, &volume) {
                return Some(Source::Image { name: name.clone(), device, volume });
            }
        }
    }
    None
}

/// Azure's provisioning CD: `ovf-env.xml`'s custom data (which only the CD carries, and
/// which wins over IMDS `userData`, as in cloud-init), host name and SSH keys; IMDS gives
/// the rest. Returns what was found where, if anything.
#[cfg(feature = "azure")]
pub fn load_azure_custom_data(ctx: &crate::context::Context<'_>, metadata: &mut crate::imds::Metadata) -> Result<Option<Line>, Line> {
    let mut has_ovf = |device: &mut BlockDevice, volume: &Volume| volume.has_file(device, &[b"ovf-env.xml"]);
    let Some(mut source) = find_volume(ctx, &mut has_ovf) else { return Ok(None) };
    // Mapped, not on the stack, whose probes would touch all of it at every call.
    let mut room = crate::memory::map(160 * 1024, "ovf-env.xml")?;
    let xml = room.as_mut_slice();
    let len = source.read(&[b"ovf-env.xml"], xml)?.unwrap_or(0);
    let xml = &xml[..len];
    let found = azure::ovf_custom_data(xml, metadata.buffer(Item::UserData)).map_err(|e| msg!("ovf-env.xml CustomData: {e}"))?;
    if let Some(custom) = found {
        metadata.set_len(Item::UserData, Some(custom));
    }
    if let Some(hostname) = azure::ovf_element(xml, b"HostName").filter(|name| !name.is_empty()) {
        metadata.set(Item::Hostname, hostname).map_err(|e| msg!("ovf-env.xml HostName: {e}"))?;
    }
    let keys = azure::ovf_keys(xml, metadata.buffer(Item::SshKeys)).map_err(|full| msg!("ovf-env.xml keys larger than {} bytes", Decimal(full.limit as u64)))?;
    if keys > 0 {
        metadata.set_len(Item::SshKeys, Some(keys));
    }
    Ok(Some(msg!("ovf-env.xml on {}: {} bytes of custom data, {} bytes of keys", source.describe(), Decimal(found.unwrap_or(0) as u64), Decimal(keys as u64))))
}

/// The `ds=nocloud` tokens, from the kernel command line or the DMI serial.
#[cfg(feature = "nocloud")]
#[inline(never)]
fn tokens_into(ctx: &crate::context::Context<'_>, buf: &mut [u8; 4096]) -> Option<usize> {
    for file in [&b"/proc/cmdline"[..], b"/sys/class/dmi/id/product_serial"] {
        if let Ok(Some(text)) = ctx.read(file, buf) {
            if nocloud::tokens(text).is_some() {
                return Some(text.len());
            }
        }
    }
    None
}

/// Whether a local cloud's seed is present, for `CLOUD=auto`.
#[cfg(any(feature = "nocloud", feature = "configdrive"))]
pub fn detect(ctx: &crate::context::Context<'_>) -> Option<Cloud> {
    #[cfg(feature = "nocloud")]
    if has_nocloud_seed(ctx) {
        return Some(Cloud::Nocloud);
    }
    #[cfg(feature = "configdrive")]
    if find_labelled(ctx, b"config-2").is_some() {
        return Some(Cloud::Configdrive);
    }
    None
}

#[cfg(feature = "nocloud")]
fn has_nocloud_seed(ctx: &crate::context::Context<'_>) -> bool {
    let mut buf = [0u8; 4096];
    if tokens_into(ctx, &mut buf).is_some() {
        return true;
    }
    for dir in SEED_DIRS {
        if ctx.open_dir(dir.as_bytes()).is_ok() {
            return true;
        }
    }
    find_labelled(ctx, b"cidata").is_some()
}

/// Fills `metadata` from the seed of `cloud`, keeping its meta-data, vendor-data and
/// network configuration in `keep` when given; returns where the seed was found.
#[cfg(any(feature = "nocloud", feature = "configdrive"))]
pub fn load(ctx: &crate::context::Context<'_>, cloud: Cloud, metadata: &mut crate::imds::Metadata, keep: Option<&wisp_os_linux::fs::Dir>) -> Result<Line, Line> {
    match cloud {
        #[cfg(feature = "configdrive")]
        Cloud::Configdrive => load_configdrive_seed(ctx, metadata, keep),
        #[cfg(feature = "nocloud")]
        Cloud::Nocloud => load_nocloud_seed(ctx, metadata, keep),
        other => Err(msg!("{} has no local seed", other.name())),
    }
}

/// NoCloud: the `ds=nocloud` tokens' seed (their `h=` and `i=` override its meta-data),
/// else a seed directory, else a filesystem labelled `cidata`.
#[cfg(feature = "nocloud")]
fn load_nocloud_seed(ctx: &crate::context::Context<'_>, metadata: &mut crate::imds::Metadata, keep: Option<&wisp_os_linux::fs::Dir>) -> Result<Line, Line> {
    let mut token_text = [0u8; 4096];
    let token_len = tokens_into(ctx, &mut token_text);
    let tokens = token_len.and_then(|len| nocloud::tokens(&token_text[..len])).unwrap_or_default();
    let mut source = nocloud_source(ctx, tokens.seed_from)?;
    let mut document = [0u8; DOCUMENT_LIMIT];
    load_nocloud(&mut source, &mut document, metadata)?;
    if let Some(hostname) = tokens.hostname {
        metadata.set(Item::Hostname, hostname).map_err(crate::output::line)?;
    }
    if let Some(id) = tokens.instance_id {
        metadata.set(Item::InstanceId, id).map_err(crate::output::line)?;
    }
    let len = source.read(&[b"user-data"], metadata.buffer(Item::UserData))?;
    metadata.set_len(Item::UserData, len);
    if let Some(var) = keep {
        let files: [(&[&[u8]], &[u8]); 3] =
            [(&[b"meta-data"], META_DATA), (&[b"vendor-data"], VENDOR_DATA), (&[b"network-config"], NETWORK_CONFIG)];
        save_extras(&files, &mut source, &mut document, var)?;
    }
    Ok(source.describe())
}

/// ConfigDrive: a filesystem labelled `config-2`.
#[cfg(feature = "configdrive")]
fn load_configdrive_seed(ctx: &crate::context::Context<'_>, metadata: &mut crate::imds::Metadata, keep: Option<&wisp_os_linux::fs::Dir>) -> Result<Line, Line> {
    let mut source = find_labelled(ctx, b"config-2").ok_or_else(|| msg!("no filesystem labelled config-2"))?;
    let mut document = [0u8; DOCUMENT_LIMIT];
    let version = load_configdrive(&mut source, &mut document, metadata)?;
    let v = version.as_bytes();
    let len = source.read(&[b"openstack", v, b"user_data"], metadata.buffer(Item::UserData))?;
    metadata.set_len(Item::UserData, len);
    if let Some(var) = keep {
        let files: [(&[&[u8]], &[u8]); 3] = [
            (&[b"openstack", v, b"meta_data.json"], META_DATA),
            (&[b"openstack", v, b"vendor_data.json"], VENDOR_DATA),
            (&[b"openstack", v, b"network_data.json"], NETWORK_CONFIG),
        ];
        save_extras(&files, &mut source, &mut document, var)?;
    }
    Ok(source.describe())
}

/// The seed's meta-data, vendor-data and network configuration, kept beside user-data for
/// later use (0600: vendor-data can hold secrets too); rewritten only when they change,
/// so a new instance's seed replaces the old one's.
#[cfg(any(feature = "nocloud", feature = "configdrive"))]
#[inline(never)]
fn save_extras(files: &[(&[&[u8]], &[u8]); 3], source: &mut Source, buf: &mut [u8], var: &wisp_os_linux::fs::Dir) -> Result<(), Line> {
    for &(path, name) in files {
        let Some(len) = source.read(path, buf)? else { continue };
        if !var.has_contents(name, &buf[..len]).unwrap_or(false) {
            var.write_atomic(name, &buf[..len], 0o600, None).map_err(|e| msg!("cannot save {}: {}", Shown(name), Os(e)))?;
        }
    }
    Ok(())
}

#[cfg(feature = "nocloud")]
#[inline(never)]
fn nocloud_source(ctx: &crate::context::Context<'_>, seed_from: Option<&[u8]>) -> Result<Source, Line> {
    if let Some(seed) = seed_from {
        if seed.starts_with(b"http") {
            let text = core::str::from_utf8(seed).map_err(|_| msg!("ds=nocloud;s=: the URL is not UTF-8"))?;
            let url = http::parse_url(text).map_err(|e| msg!("ds=nocloud;s={}: {e}", Shown(seed)))?;
            let too_long = |_| msg!("ds=nocloud;s={}: URL too long", Shown(seed));
            return Ok(Source::Http {
                address: url.address,
                port: url.port,
                host: heapless::String::try_from(url.host).map_err(too_long)?,
                base: heapless::String::try_from(url.path).map_err(too_long)?,
                timeouts: ctx.timeouts,
            });
        }
        let path = seed.strip_prefix(b"file://").unwrap_or(seed);
        if path.first() != Some(&b'/') {
            return Err(msg!("ds=nocloud;s={}: a seed is a path, file:// or http://", Shown(seed)));
        }
        let trimmed = path.strip_suffix(b"/").unwrap_or(path);
        return Ok(Source::Directory(ctx.open_dir(trimmed)?, ctx.path(trimmed)?));
    }
    for dir in SEED_DIRS {
        if let Ok(opened) = ctx.open_dir(dir.as_bytes()) {
            return Ok(Source::Directory(opened, ctx.path(dir.as_bytes())?));
        }
    }
    find_labelled(ctx, b"cidata").ok_or_else(|| msg!("no NoCloud seed: no ds=nocloud token, no seed directory, no filesystem labelled cidata"))
}

#[cfg(feature = "nocloud")]
#[inline(never)]
fn load_nocloud(source: &mut Source, document: &mut [u8], metadata: &mut crate::imds::Metadata) -> Result<(), Line> {
    let len = source.read(&[b"meta-data"], document)?.ok_or_else(|| msg!("{}: no meta-data", source.describe()))?;
    let meta = &document[..len];
    let fill = |metadata: &mut crate::imds::Metadata, item: Item, keys: &[&str]| -> Result<(), Line> {
        for key in keys {
            let out = metadata.buffer(item);
            if let Some(len) = nocloud::value(meta, key, out).map_err(crate::output::line)? {
                metadata.set_len(item, Some(len));
                return Ok(());
            }
        }
        metadata.set_len(item, None);
        Ok(())
    };
    fill(metadata, Item::InstanceId, &["instance-id"])?;
    if metadata.get(Item::InstanceId).is_none() {
        metadata.set(Item::InstanceId, b"nocloud").map_err(crate::output::line)?;
    }
    fill(metadata, Item::Hostname, &["local-hostname", "hostname"])?;
    fill(metadata, Item::LocalHostname, &["local-hostname", "hostname"])?;
    fill(metadata, Item::SshKeys, &["public-keys"])
}

/// `openstack/<version>/meta_data.json`, `latest` or the newest dated version; returns
/// the version found.
#[cfg(feature = "configdrive")]
#[inline(never)]
fn load_configdrive(source: &mut Source, document: &mut [u8], metadata: &mut crate::imds::Metadata) -> Result<&'static str, Line> {
    let mut found = None;
    for version in openstack::VERSIONS {
        if let Some(len) = source.read(&[b"openstack", version.as_bytes(), b"meta_data.json"], document)? {
            found = Some((version, len));
            break;
        }
    }
    let (version, len) = found.ok_or_else(|| msg!("{}: no openstack/<version>/meta_data.json", source.describe()))?;
    let meta = &document[..len];
    for item in [Item::InstanceId, Item::Hostname, Item::LocalHostname, Item::SshKeys] {
        let found = openstack::extract(meta, item, metadata.buffer(item)).map_err(|e| msg!("meta_data.json: {e}"))?;
        metadata.set_len(item, found);
    }
    Ok(version)
}
