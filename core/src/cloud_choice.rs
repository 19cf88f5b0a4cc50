//! Which cloud a run serves when `CLOUD=auto`: the one an earlier run detected and
//! remembered in `$TINY_CLOUD_VAR/.autodetect`, else the one found now, asking in this
//! order: the DMI strings of the big clouds, then what the instance itself holds (a local
//! seed, a guest API socket), then OpenStack's DMI (so a config drive wins over
//! OpenStack's network service).

use crate::config::Cloud;
use crate::detect::{self, Dmi};
use crate::text::Plain;

/// The cloud `.autodetect` names (`CLOUD=aws`, or tiny-cloud's bare `aws`); `None` for
/// anything else, `auto` included, so that a bad copy is detected again.
pub fn remembered(text: &[u8]) -> Option<Cloud> {
    let line = text.strip_suffix(b"\n").unwrap_or(text);
    Cloud::from_name(line.strip_prefix(b"CLOUD=").unwrap_or(line)).filter(|&cloud| cloud != Cloud::Auto)
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
