//! Local datasources: NoCloud and ConfigDrive seeds, from a directory or straight from a
//! labelled ISO 9660 block device (read in user space: no mount, no blkid). Their values
//! fill the same metadata store the metadata services do.

use wisp_core::config::Cloud;
use wisp_core::http;
use wisp_core::retry::Timeouts;
use wisp_core::provider::{azure, openstack, Item};
use wisp_core::seed::{iso9660, udf, vfat};
use wisp_core::seed::{nocloud, Device, SeedError};
use wisp_os_linux::block;
use wisp_os_linux::cpath::CPath;
use wisp_os_linux::fs::{self, Dir, ReadError, Resolve};
use wisp_os_linux::OwnedFd;

use crate::output::{Line, Os, Shown};

/// The seed directories NoCloud looks in, as cloud-init and tiny-cloud do.
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
    Iso(iso9660::Volume),
    Fat(vfat::Volume),
    /// UDF has no label wisp reads: only the Azure provisioning media's file matters.
    Udf(udf::Volume),
}

impl Volume {
    fn open(device: &mut BlockDevice, size: u64) -> Option<Volume> {
        if let Ok(volume) = iso9660::Volume::open(device, size) {
            return Some(Volume::Iso(volume));
        }
        if let Ok(volume) = vfat::Volume::open(device, size) {
            return Some(Volume::Fat(volume));
        }
        udf::Volume::open(device, size).ok().map(Volume::Udf)
    }

    fn label(&self) -> &[u8] {
        match self {
            Volume::Iso(volume) => volume.label(),
            Volume::Fat(volume) => volume.label(),
            Volume::Udf(_) => b"",
        }
    }

    /// Whether a regular file is at `path` (an unreadable volume has none).
    fn has_file(&self, device: &mut BlockDevice, path: &[&[u8]]) -> bool {
        match self {
            Volume::Iso(volume) => matches!(volume.find(device, path), Ok(Some(file)) if !file.is_dir),
            Volume::Fat(volume) => matches!(volume.find(device, path), Ok(Some(file)) if !file.is_dir),
            Volume::Udf(volume) => matches!(volume.find(device, path), Ok(Some(file)) if !file.is_dir),
        }
    }

    /// Reads the regular file at `path` into `out`; `Ok(None)` when absent.
    fn read(&self, device: &mut BlockDevice, path: &[&[u8]], out: &mut [u8]) -> Result<Option<usize>, SeedError> {
        match self {
            Volume::Iso(volume) => match volume.find(device, path)? {
                Some(file) if !file.is_dir => volume.read(device, file, out).map(Some),
                _ => Ok(None),
            },
            Volume::Fat(volume) => match volume.find(device, path)? {
                Some(file) if !file.is_dir => volume.read(device, file, out).map(Some),
                _ => Ok(None),
            },
            Volume::Udf(volume) => match volume.find(device, path)? {
                Some(file) if !file.is_dir => volume.read(device, file, out).map(Some),
                _ => Ok(None),
            },
        }
    }
}

/// Where a seed's files are. One exists per run, on the stack: the size difference
/// between a path and an image's state does not matter.
#[allow(clippy::large_enum_variant)]
enum Source {
    /// A seed directory, open, and its path for messages: its files are resolved inside it.
    Directory(Dir, CPath),
    Image { name: heapless::String<32>, device: BlockDevice, volume: Volume },
    /// `s=http://...`: files fetched with wisp's own client.
    Http { address: [u8; 4], port: u16, host: heapless::String<64>, base: heapless::String<256>, timeouts: Timeouts },
}

impl Source {
    /// Reads `file` (a path inside the seed) into `out`; `Ok(None)` when absent. Never
    /// inlined: it serves every reader and its callers are several.
    #[inline(never)]
    fn read(&mut self, file: &[&[u8]], out: &mut [u8]) -> Result<Option<usize>, Line> {
        match self {
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
                    Err(ReadError::TooLarge { limit }) => Err(msg!("{} is larger than {limit} bytes", Shown(shown().as_bytes()))),
                    Err(ReadError::Io(e)) => Err(crate::output::path_error(shown().as_bytes(), e)),
                }
            }
            Source::Image { name, device, volume } => volume.read(device, file, out).map_err(|e| msg!("/dev/{name}: {e}")),
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
            Source::Directory(_, path) => msg!("{}", Shown(path.as_bytes())),
            Source::Image { name, volume, .. } => msg!("/dev/{name} (label {})", Shown(volume.label())),
            Source::Http { host, base, .. } => msg!("http://{host}{base}"),
        }
    }
}

/// The block device whose seed filesystem's label is `label` (compared without case).
fn find_labelled(ctx: &crate::context::Context<'_>, label: &[u8]) -> Option<Source> {
    find_volume(ctx, |_, volume| volume.label().eq_ignore_ascii_case(label))
}

/// The first block device holding a seed filesystem that `accept` takes.
#[inline(never)]
fn find_volume(ctx: &crate::context::Context<'_>, mut accept: impl FnMut(&mut BlockDevice, &Volume) -> bool) -> Option<Source> {
    let sys = ctx.open_dir(b"/sys/class/block").ok()?;
    let mut names: heapless::Vec<heapless::String<32>, 64> = heapless::Vec::new();
    let _ = sys.for_each_entry(|name| {
        if let Ok(name) = core::str::from_utf8(name) {
            if let Ok(name) = heapless::String::try_from(name) {
                let _ = names.push(name);
            }
        }
    });
    for name in names {
        let mut path = ctx.path(b"/dev/").ok()?;
        path.push(name.as_bytes()).ok()?;
        let Ok(fd) = fs::open_read(path.as_cstr()) else { continue };
        let Ok(size) = block::size_bytes(&fd).or_else(|_| block::file_size(&fd)) else { continue };
        let mut device = BlockDevice(fd);
        if let Some(volume) = Volume::open(&mut device, size) {
            if accept(&mut device, &volume) {
                return Some(Source::Image { name, device, volume });
            }
        }
    }
    None
}

/// Azure's provisioning CD: `ovf-env.xml`'s custom data (which only the CD carries, and
/// which wins over IMDS `userData`, as in cloud-init), host name and SSH keys; IMDS gives
/// the rest. Returns what was found where, if anything.
pub fn load_azure_custom_data(ctx: &crate::context::Context<'_>, metadata: &mut crate::imds::Metadata) -> Result<Option<Line>, Line> {
    let has_ovf = |device: &mut BlockDevice, volume: &Volume| volume.has_file(device, &[b"ovf-env.xml"]);
    let Some(mut source) = find_volume(ctx, has_ovf) else { return Ok(None) };
    let mut xml = [0u8; 160 * 1024];
    let len = source.read(&[b"ovf-env.xml"], &mut xml)?.unwrap_or(0);
    let xml = &xml[..len];
    let found = azure::ovf_custom_data(xml, metadata.buffer(Item::UserData)).map_err(|e| msg!("ovf-env.xml CustomData: {e}"))?;
    if let Some(custom) = found {
        metadata.set_len(Item::UserData, Some(custom));
    }
    if let Some(hostname) = azure::ovf_element(xml, b"HostName").filter(|name| !name.is_empty()) {
        metadata.set(Item::Hostname, hostname).map_err(|e| msg!("ovf-env.xml HostName: {e}"))?;
    }
    let keys = azure::ovf_keys(xml, metadata.buffer(Item::SshKeys)).map_err(|full| msg!("ovf-env.xml keys larger than {} bytes", full.limit))?;
    if keys > 0 {
        metadata.set_len(Item::SshKeys, Some(keys));
    }
    Ok(Some(msg!("ovf-env.xml on {}: {} bytes of custom data, {} bytes of keys", source.describe(), found.unwrap_or(0), keys)))
}

/// The `ds=nocloud` tokens, from the kernel command line or the DMI serial.
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
pub fn detect(ctx: &crate::context::Context<'_>) -> Option<Cloud> {
    let mut buf = [0u8; 4096];
    if tokens_into(ctx, &mut buf).is_some() {
        return Some(Cloud::Nocloud);
    }
    for dir in SEED_DIRS {
        if ctx.open_dir(dir.as_bytes()).is_ok() {
            return Some(Cloud::Nocloud);
        }
    }
    if find_labelled(ctx, b"cidata").is_some() {
        return Some(Cloud::Nocloud);
    }
    find_labelled(ctx, b"config-2").map(|_| Cloud::Configdrive)
}

/// Fills `metadata` from the seed of `cloud`; returns where the seed was found.
pub fn load(ctx: &crate::context::Context<'_>, cloud: Cloud, metadata: &mut crate::imds::Metadata) -> Result<Line, Line> {
    let mut token_text = [0u8; 4096];
    let token_len = if cloud == Cloud::Nocloud { tokens_into(ctx, &mut token_text) } else { None };
    let tokens = token_len.and_then(|len| nocloud::tokens(&token_text[..len])).unwrap_or_default();
    let mut source = match cloud {
        Cloud::Configdrive => find_labelled(ctx, b"config-2").ok_or_else(|| msg!("no filesystem labelled config-2"))?,
        _ => nocloud_source(ctx, tokens.seed_from)?,
    };
    let mut document = [0u8; DOCUMENT_LIMIT];
    if cloud != Cloud::Configdrive {
        load_nocloud(&mut source, &mut document, metadata)?;
    }
    if let Some(hostname) = tokens.hostname {
        metadata.set(Item::Hostname, hostname).map_err(crate::output::line)?;
    }
    if let Some(id) = tokens.instance_id {
        metadata.set(Item::InstanceId, id).map_err(crate::output::line)?;
    }
    let mut version = "latest";
    if cloud == Cloud::Configdrive {
        version = load_configdrive(&mut source, &mut document, metadata)?;
    }
    let user_data = metadata.buffer(Item::UserData);
    let len = match cloud {
        Cloud::Configdrive => source.read(&[b"openstack", version.as_bytes(), b"user_data"], user_data)?,
        _ => source.read(&[b"user-data"], user_data)?,
    };
    metadata.set_len(Item::UserData, len);
    save_extras(cloud, version, &mut source, &mut document, &ctx.var_dir()?)?;
    Ok(source.describe())
}

/// The seed's meta-data, vendor-data and network configuration, kept beside user-data for
/// later use (0600: vendor-data can hold secrets too); rewritten only when they change,
/// so a new instance's seed replaces the old one's.
#[inline(never)]
fn save_extras(cloud: Cloud, version: &str, source: &mut Source, buf: &mut [u8], var: &wisp_os_linux::fs::Dir) -> Result<(), Line> {
    let v = version.as_bytes();
    let files: [(&[&[u8]], &[u8]); 3] = if cloud == Cloud::Configdrive {
        [
            (&[b"openstack", v, b"meta_data.json"], b"meta-data"),
            (&[b"openstack", v, b"vendor_data.json"], b"vendor-data"),
            (&[b"openstack", v, b"network_data.json"], b"network-config"),
        ]
    } else {
        [(&[b"meta-data"], b"meta-data"), (&[b"vendor-data"], b"vendor-data"), (&[b"network-config"], b"network-config")]
    };
    for (path, name) in files {
        let Some(len) = source.read(path, buf)? else { continue };
        if !var.has_contents(name, &buf[..len]).unwrap_or(false) {
            var.write_atomic(name, &buf[..len], 0o600, None).map_err(|e| msg!("cannot save {}: {}", Shown(name), Os(e)))?;
        }
    }
    Ok(())
}

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
