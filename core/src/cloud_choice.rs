//! Which cloud a run serves when `CLOUD=auto`: the one an earlier run detected and
//! remembered in `$TINY_CLOUD_VAR/.autodetect`, else the one found now, asking in this
//! order: the DMI strings of the big clouds, then what the instance itself holds (a local
//! seed, a guest API socket), then OpenStack's DMI (so a config drive wins over
//! OpenStack's network service).

use core::fmt;

use crate::config::Cloud;
use crate::detect::{self, Dmi};
use crate::features::Built;
use crate::host::directory::Directory;
use crate::host::files::Files;
use crate::host::HostError;
use crate::state_files::AUTODETECT;
use crate::text::Plain;

/// The cloud this run serves: `configured` (`--cloud`, else `CLOUD`) unless `auto`, else
/// the one `.autodetect` names (`read_remembered` fills a buffer with it), else the one
/// detected now from the DMI strings under `files` and `local`. True with it when it was
/// configured or remembered rather than detected now (and so needs no remembering). A
/// cloud this build lacks (`BUILT`, `Built::bits`) is refused by name; `say` words the
/// lines, `config_file` is the file to set CLOUD in.
pub fn choose<const BUILT: u32, F: Files, T>(
    files: &mut F,
    configured: Cloud,
    read_remembered: impl FnOnce(&mut [u8]) -> Result<Option<usize>, T>,
    local: impl FnOnce() -> Option<Cloud>,
    say: impl Fn(fmt::Arguments<'_>) -> T,
    config_file: impl fmt::Display,
) -> Result<(Cloud, bool), T> {
    let (cloud, remembered) = configured_or_remembered(configured, read_remembered)?;
    let (cloud, remembered) = match cloud {
        Some(cloud) => (cloud, remembered),
        None => match detect_now(files, local) {
            Some(cloud) => (cloud, false),
            None => return Err(say(format_args!("CLOUD=auto found no known cloud in /sys/class/dmi/id: set CLOUD in {config_file}"))),
        },
    };
    if let Some(feature) = Built::from_bits(BUILT).lacks_for_cloud(cloud) {
        return Err(say(format_args!(concat!("CLOUD={}", crate::built_without!(), "{}"), Plain(cloud.name()), Plain(feature))));
    }
    Ok((cloud, remembered))
}

/// `configured` unless `auto`, else the cloud `.autodetect` names: `None` when neither.
fn configured_or_remembered<T>(configured: Cloud, read_remembered: impl FnOnce(&mut [u8]) -> Result<Option<usize>, T>) -> Result<(Option<Cloud>, bool), T> {
    if configured != Cloud::Auto {
        return Ok((Some(configured), true));
    }
    let mut copy = [0u8; 64];
    let cloud = read_remembered(&mut copy)?.and_then(|len| remembered(&copy[..len]));
    Ok((cloud, true))
}

/// Keeps `cloud` in `.autodetect` for the next runs (not durably: a lost or cut copy is
/// detected again).
pub fn remember<D: Directory>(var: &mut D, cloud: Cloud) -> Result<(), HostError> {
    var.write_volatile(AUTODETECT, remembrance(cloud).as_bytes(), 0o644)
}

/// The cloud the DMI strings under `files` name, else what `local` finds; missing or
/// unreadable DMI files (product_uuid is root-only) count as empty.
fn detect_now<F: Files>(files: &mut F, local: impl FnOnce() -> Option<Cloud>) -> Option<Cloud> {
    let mut buffers = [[0u8; 128]; 4];
    let mut values: [&[u8]; 4] = [b""; 4];
    for ((path, buf), value) in Dmi::PATHS.iter().zip(buffers.iter_mut()).zip(values.iter_mut()) {
        if let Ok(Some(len)) = files.read(path.as_bytes(), buf) {
            *value = &buf[..len];
        }
    }
    let dmi = Dmi { sys_vendor: values[0], product_name: values[1], product_uuid: values[2], chassis_asset_tag: values[3] };
    detect(&dmi, local)
}

/// The cloud `.autodetect` names (`CLOUD=aws`, or tiny-cloud's bare `aws`); `None` for
/// anything else, `auto` included, so that a bad copy is detected again.
pub fn remembered(text: &[u8]) -> Option<Cloud> {
    let line = text.strip_suffix(b"\n").unwrap_or(text);
    // A slice, not a 6-byte array: the array compiles its own strip_prefix (58 bytes).
    Cloud::from_name(line.strip_prefix(b"CLOUD=".as_slice()).unwrap_or(line)).filter(|&cloud| cloud != Cloud::Auto)
}

/// `.autodetect`'s contents for `cloud`.
pub fn remembrance(cloud: Cloud) -> heapless::String<64> {
    let mut line = heapless::String::new();
    let _ = core::fmt::write(&mut line, format_args!("CLOUD={}\n", Plain(cloud.name())));
    line
}

/// The cloud the DMI strings name, else what `local` finds on the instance, else
/// OpenStack if its DMI says so.
pub fn detect(dmi: &Dmi<'_>, local: impl FnOnce() -> Option<Cloud>) -> Option<Cloud> {
    detect::detect(dmi).or_else(local).or_else(|| detect::is_openstack(dmi).then_some(Cloud::Openstack))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::Feature;
    use crate::host::memory::MemoryHost;

    const BUILT: Built = Built::of(&[(Feature::Aws, true), (Feature::Azure, true), (Feature::Nocloud, true)]);

    fn choice(files: &mut MemoryHost, configured: Cloud, autodetect: &str, local: Option<Cloud>) -> Result<(Cloud, bool), std::string::String> {
        let read = |buf: &mut [u8]| {
            buf[..autodetect.len()].copy_from_slice(autodetect.as_bytes());
            Ok(Some(autodetect.len()).filter(|&len| len > 0))
        };
        choose::<{ BUILT.bits() }, _, _>(files, configured, read, || local, |args| std::format!("{args}"), "/etc/wisp.conf")
    }

    #[test]
    fn configured_wins_then_remembered_then_detected_now_and_a_cloud_not_built_is_refused() {
        let mut aws = MemoryHost::new().with_file("/sys/class/dmi/id/sys_vendor", b"Amazon EC2\n");
        assert_eq!(choice(&mut aws, Cloud::Azure, "CLOUD=aws\n", None), Ok((Cloud::Azure, true)));
        assert_eq!(choice(&mut aws, Cloud::Auto, "CLOUD=nocloud\n", None), Ok((Cloud::Nocloud, true)));
        assert_eq!(choice(&mut aws, Cloud::Auto, "CLOUD=auto\n", None), Ok((Cloud::Aws, false)));
        assert_eq!(choice(&mut aws, Cloud::Auto, "", Some(Cloud::Nocloud)), Ok((Cloud::Aws, false)));
        let mut bare = MemoryHost::new();
        assert_eq!(choice(&mut bare, Cloud::Auto, "", Some(Cloud::Nocloud)), Ok((Cloud::Nocloud, false)));
        assert_eq!(
            choice(&mut bare, Cloud::Auto, "", None),
            Err("CLOUD=auto found no known cloud in /sys/class/dmi/id: set CLOUD in /etc/wisp.conf".into())
        );
        assert_eq!(choice(&mut bare, Cloud::Gcp, "", None), Err("CLOUD=gcp: wisp was built without gcp".into()));
        assert_eq!(choice(&mut bare, Cloud::Openstack, "", None), Err("CLOUD=openstack: wisp was built without configdrive".into()));
        assert_eq!(choice(&mut bare, Cloud::Auto, "CLOUD=vultr", None), Err("CLOUD=vultr: wisp was built without vultr".into()));
        // A remembered copy that cannot be read is the caller's error, said as it is.
        let unreadable = choose::<{ BUILT.bits() }, _, _>(&mut bare, Cloud::Auto, |_| Err("no var".into()), || None, |args| std::format!("{args}"), "");
        assert_eq!(unreadable, Err(std::string::String::from("no var")));
    }

    #[test]
    fn a_remembered_cloud_is_read_back_and_a_bad_copy_is_not() {
        assert_eq!(remembered(remembrance(Cloud::Azure).as_bytes()), Some(Cloud::Azure));
        assert_eq!(remembrance(Cloud::Nocloud).as_str(), "CLOUD=nocloud\n");
        assert_eq!(remembered(b"aws"), Some(Cloud::Aws));
        assert_eq!(remembered(b"CLOUD=auto\n"), None);
        assert_eq!(remembered(b"CLOUD=aw"), None);
        assert_eq!(remembered(b""), None);
    }

    #[test]
    fn dmi_of_a_big_cloud_wins_over_a_local_seed_which_wins_over_openstack() {
        let aws = Dmi { sys_vendor: b"Amazon EC2\n", ..Dmi::default() };
        let mut asked = false;
        assert_eq!(detect(&aws, || { asked = true; Some(Cloud::Nocloud) }), Some(Cloud::Aws));
        assert!(!asked, "the local probe is not made when DMI names the cloud");
        let openstack = Dmi { product_name: b"OpenStack Nova\n", ..Dmi::default() };
        assert_eq!(detect(&openstack, || Some(Cloud::Configdrive)), Some(Cloud::Configdrive));
        assert_eq!(detect(&openstack, || None), Some(Cloud::Openstack));
        assert_eq!(detect(&Dmi::default(), || Some(Cloud::Incus)), Some(Cloud::Incus));
        assert_eq!(detect(&Dmi::default(), || None), None);
    }
}
