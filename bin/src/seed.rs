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
#[cfg(any(feature = "nocloud", feature = "configdrive", feature = "azure"))]
use wisp_core::host::seed_media::SeedMedia;
#[cfg(any(feature = "nocloud", feature = "configdrive", feature = "azure"))]
use wisp_core::seed::local;
#[cfg(feature = "iso9660")]
use wisp_core::seed::iso9660;
#[cfg(feature = "udf")]
use wisp_core::seed::udf;
#[cfg(feature = "vfat")]
use wisp_core::seed::vfat;
use wisp_core::seed::{Device, Filesystem, SeedError};
use wisp_core::text::Decimal;
use wisp_os_linux::block;
#[cfg(feature = "nocloud")]
use wisp_os_linux::nul_terminated::NulTerminated;
use wisp_os_linux::fs::{self, Dir, Resolve};
#[cfg(feature = "nocloud")]
use wisp_os_linux::fs::ReadError;
use wisp_os_linux::OwnedFd;

use crate::output::{Message, Os, Shown};


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
    Directory(Dir, NulTerminated),
    Image { name: heapless::String<32>, device: BlockDevice, volume: Volume },
    /// `s=http://...`: files fetched with wisp's own client.
    #[cfg(feature = "nocloud")]
    Http { address: [u8; 4], port: u16, host: heapless::String<64>, base: heapless::String<256>, timeouts: Timeouts },
}

impl Source {
    /// Reads `file` (a path inside the seed) into `out`; `Ok(None)` when absent. Never
    /// inlined: it serves every reader and its callers are several.
    #[inline(never)]
    fn read(&mut self, file: &[&[u8]], out: &mut [u8]) -> Result<Option<usize>, Message> {
        match self {
            #[cfg(feature = "nocloud")]
            Source::Directory(dir, path) => {
                let mut relative = NulTerminated::new();
                for part in file {
                    relative.push(b"/").and_then(|()| relative.push(part)).map_err(crate::output::line)?;
                }
                let read = match dir.open_file_beneath(relative.as_bytes(), Resolve::InRoot) {
                    Ok(fd) => fs::read_to_end(&fd, out).map(Some),
                    Err(wisp_os_linux::Errno::NOENT) => Ok(None),
                    Err(e) => Err(ReadError::Io(e)),
                };
                let shown = || NulTerminated::from_parts(&[path.as_bytes(), relative.as_bytes()]).unwrap_or_default();
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

    fn describe(&self) -> Message {
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

/// Azure's provisioning CD (`seed::local::load_azure_ovf`).
#[cfg(feature = "azure")]
pub fn load_azure_custom_data<'c>(ctx: &'c crate::context::Context<'c>, metadata: &mut crate::imds::Metadata) -> Result<Option<Message>, Message> {
    // Mapped, not on the stack, whose probes would touch all of it at every call.
    let mut room = crate::memory::map(local::OVF_LIMIT, "ovf-env.xml")?;
    local::load_azure_ovf(&mut Seeds { ctx, keep: None }, metadata, room.as_mut_slice())
}

/// The local seeds as core's `SeedMedia`: directories and block devices of the root,
/// URLs through wisp's own client, state files kept in `keep` (TINY_CLOUD_VAR).
#[cfg(any(feature = "nocloud", feature = "configdrive", feature = "azure"))]
struct Seeds<'c> {
    ctx: &'c crate::context::Context<'c>,
    keep: Option<&'c Dir>,
}

#[cfg(any(feature = "nocloud", feature = "configdrive", feature = "azure"))]
impl SeedMedia for Seeds<'_> {
    type Seed = Source;
    type Text = Message;

    fn text(&self, args: core::fmt::Arguments<'_>) -> Message {
        Message::format(args)
    }

    fn is_directory(&mut self, path: &[u8]) -> bool {
        self.ctx.open_dir(path).is_ok()
    }

    #[cfg(feature = "nocloud")]
    fn directory(&mut self, path: &[u8]) -> Result<Source, Message> {
        Ok(Source::Directory(self.ctx.open_dir(path)?, self.ctx.path(path)?))
    }
    #[cfg(not(feature = "nocloud"))]
    fn directory(&mut self, _: &[u8]) -> Result<Source, Message> {
        Err(msg!("no NoCloud in this build"))
    }

    #[cfg(feature = "nocloud")]
    fn url(&mut self, url: &http::Url<'_>, seed: &[u8]) -> Result<Source, Message> {
        let too_long = |_| msg!("ds=nocloud;s={}: URL too long", Shown(seed));
        Ok(Source::Http {
            address: url.address,
            port: url.port,
            host: heapless::String::try_from(url.host).map_err(too_long)?,
            base: heapless::String::try_from(url.path).map_err(too_long)?,
            timeouts: self.ctx.timeouts,
        })
    }
    #[cfg(not(feature = "nocloud"))]
    fn url(&mut self, _: &wisp_core::http::Url<'_>, _: &[u8]) -> Result<Source, Message> {
        Err(msg!("no NoCloud in this build"))
    }

    fn labelled(&mut self, label: &[u8]) -> Option<Source> {
        find_labelled(self.ctx, label)
    }

    fn holding(&mut self, name: &[u8]) -> Option<Source> {
        find_volume(self.ctx, &mut |device, volume| volume.has_file(device, &[name]))
    }

    fn read(&mut self, seed: &mut Source, path: &[&[u8]], out: &mut [u8]) -> Result<Option<usize>, Message> {
        seed.read(path, out)
    }

    fn describe(&self, seed: &Source) -> Message {
        seed.describe()
    }

    fn kept(&mut self, name: &[u8], contents: &[u8]) -> bool {
        self.keep.is_some_and(|var| var.has_contents(name, contents).unwrap_or(false))
    }

    fn keep(&mut self, name: &[u8], contents: &[u8]) -> Result<(), Message> {
        let Some(var) = self.keep else { return Ok(()) };
        var.write_atomic(name, contents, 0o600, None).map_err(|e| msg!("cannot save {}: {}", Shown(name), Os(e)))
    }
}

/// Whether a local cloud's seed is present, for `CLOUD=auto`.
#[cfg(any(feature = "nocloud", feature = "configdrive"))]
pub fn detect<'c>(ctx: &'c crate::context::Context<'c>) -> Option<Cloud> {
    let mut seeds = Seeds { ctx, keep: None };
    #[cfg(feature = "nocloud")]
    if local::has_nocloud_seed(&mut seeds, &mut crate::host::files::Root::of(ctx)) {
        return Some(Cloud::Nocloud);
    }
    #[cfg(feature = "configdrive")]
    if seeds.labelled(b"config-2").is_some() {
        return Some(Cloud::Configdrive);
    }
    None
}

/// Fills `metadata` from the seed of `cloud`, keeping its meta-data, vendor-data and
/// network configuration in `keep` when given; returns where the seed was found.
#[cfg(any(feature = "nocloud", feature = "configdrive"))]
pub fn load<'c>(ctx: &'c crate::context::Context<'c>, cloud: Cloud, metadata: &mut crate::imds::Metadata, keep: Option<&'c Dir>) -> Result<Message, Message> {
    let mut seeds = Seeds { ctx, keep };
    match cloud {
        #[cfg(feature = "configdrive")]
        Cloud::Configdrive => local::load_configdrive(&mut seeds, metadata, keep.is_some()),
        #[cfg(feature = "nocloud")]
        Cloud::Nocloud => local::load_nocloud(&mut seeds, &mut crate::host::files::Root::of(ctx), metadata, keep.is_some()),
        other => Err(msg!("{} has no local seed", other.name())),
    }
}
