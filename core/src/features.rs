//! What a build of wisp has: the Cargo features an image builder picked (see the README's
//! "Features"), which of them a cloud or an action needs, and the refusal when the build
//! lacks it. A configuration that needs a part the build lacks is refused with its name,
//! never skipped in silence. bin says which features it was built with (`Built::of`);
//! everything else is decided here, at compile time where it can be.

use crate::config::Cloud;
use crate::phase::{self, Action};

/// Every feature, in the order `wisp --version` names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feature {
    Aws, Azure, Gcp, Oci, Nocloud, Configdrive, Userdata, CloudConfig, CloudInitStatus, Grow, Iso9660,
    Vfat, Udf, Network, Hetzner, Digitalocean, Scaleway, Incus, Vultr, Ssh, Ntp, ApkRepos,
}

/// Each feature's name in bin's Cargo.toml, in `Feature`'s order.
const NAMES: [&str; 22] = [
    "aws", "azure", "gcp", "oci", "nocloud", "configdrive", "userdata", "cloud-config", "cloud-init-status", "grow",
    "iso9660", "vfat", "udf", "network", "hetzner", "digitalocean", "scaleway", "incus", "vultr", "ssh", "ntp", "apk-repos",
];

impl Feature {
    pub const fn name(self) -> &'static str {
        NAMES[self as usize]
    }
}

/// The features a build has, one bit each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Built(u32);

impl Built {
    /// The features marked `true` (bin's `cfg!(feature = ...)`).
    pub const fn of(features: &[(Feature, bool)]) -> Built {
        let (mut bits, mut i) = (0, 0);
        while i < features.len() {
            if features[i].1 {
                bits |= 1 << features[i].0 as u32;
            }
            i += 1;
        }
        Built(bits)
    }

    /// One bit a feature, for a const generic parameter (`Built::from_bits`): a rule
    /// given the build as a constant keeps only the branches the build can take.
    pub const fn bits(self) -> u32 {
        self.0
    }

    pub const fn from_bits(bits: u32) -> Built {
        Built(bits)
    }

    pub const fn has(self, feature: Feature) -> bool {
        self.0 & 1 << feature as u32 != 0
    }

    /// The name of the feature `cloud` needs that this build lacks (`CLOUD=auto` needs
    /// none). A cloud's feature has the cloud's name, but OpenStack's metadata service
    /// comes with `configdrive`: no table of feature names is kept. One arm a cloud, so
    /// that with the build a constant each arm folds.
    pub fn lacks_for_cloud(self, cloud: Cloud) -> Option<&'static str> {
        let built = match cloud {
            Cloud::Auto => true,
            Cloud::Aws => self.has(Feature::Aws),
            Cloud::Azure => self.has(Feature::Azure),
            Cloud::Gcp => self.has(Feature::Gcp),
            Cloud::Oci => self.has(Feature::Oci),
            Cloud::Nocloud => self.has(Feature::Nocloud),
            Cloud::Configdrive | Cloud::Openstack => self.has(Feature::Configdrive),
            Cloud::Hetzner => self.has(Feature::Hetzner),
            Cloud::Digitalocean => self.has(Feature::Digitalocean),
            Cloud::Scaleway => self.has(Feature::Scaleway),
            Cloud::Incus => self.has(Feature::Incus),
            Cloud::Vultr => self.has(Feature::Vultr),
        };
        match cloud {
            _ if built => None,
            Cloud::Openstack => Some(Feature::Configdrive.name()),
            _ => Some(cloud.name()),
        }
    }

    /// The name of the feature `action` needs (core's table, `Action::feature`) that this
    /// build lacks; one arm a feature, as `lacks_for_cloud`.
    pub const fn lacks_for_action(self, action: Action) -> Option<&'static str> {
        let Some(needed) = action.feature() else { return None };
        let built = match needed {
            phase::Feature::Grow => self.has(Feature::Grow),
            phase::Feature::Ssh => self.has(Feature::Ssh),
            phase::Feature::Ntp => self.has(Feature::Ntp),
            phase::Feature::ApkRepos => self.has(Feature::ApkRepos),
            phase::Feature::Userdata => self.has(Feature::Userdata),
            phase::Feature::CloudConfig => self.has(Feature::CloudConfig),
        };
        if built { None } else { Some(needed.name()) }
    }

    /// The length of `version_line(version)`.
    pub const fn version_line_len(self, version: &str) -> usize {
        let (mut len, mut i, mut first) = ("wisp  ()\n".len() + version.len(), 0, true);
        while i < NAMES.len() {
            if self.0 & 1 << i != 0 {
                // A space before each name but the first.
                len += NAMES[i].len() + if first { 0 } else { 1 };
                first = false;
            }
            i += 1;
        }
        len
    }

    /// `wisp --version`'s line: `wisp VERSION (FEATURE FEATURE...)` and a line break,
    /// joined at build time so that printing it formats nothing (`N` is
    /// `version_line_len`).
    pub const fn version_line<const N: usize>(self, version: &str) -> [u8; N] {
        let mut out = [b' '; N];
        let mut at = put(&mut out, 0, b"wisp ");
        at = put(&mut out, at, version.as_bytes());
        at = put(&mut out, at, b" (");
        let (mut i, mut first) = (0, true);
        while i < NAMES.len() {
            if self.0 & 1 << i != 0 {
                // The space was filled in.
                at = put(&mut out, if first { at } else { at + 1 }, NAMES[i].as_bytes());
                first = false;
            }
            i += 1;
        }
        put(&mut out, at, b")\n");
        out
    }
}

/// `bytes` into `out` at `at`, cut at its end; where the next write starts.
const fn put<const N: usize>(out: &mut [u8; N], at: usize, bytes: &[u8]) -> usize {
    let mut j = 0;
    while j < bytes.len() && at + j < N {
        out[at + j] = bytes[j];
        j += 1;
    }
    at + bytes.len()
}

/// The refusal of what needs a feature the build lacks, between what and the feature
/// (`CLOUD=gcp: wisp was built without gcp`): a literal, for `concat!` into a format.
#[macro_export]
macro_rules! built_without {
    () => {
        ": wisp was built without "
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    const BUILT: Built = Built::of(&[(Feature::Aws, true), (Feature::Gcp, false), (Feature::Configdrive, true), (Feature::Ntp, true)]);
    const LINE: [u8; BUILT.version_line_len("1.2.3")] = BUILT.version_line("1.2.3");
    const EVERYTHING: Built = Built::from_bits((1 << 22) - 1);
    const ALL: [u8; EVERYTHING.version_line_len("0.1.0")] = EVERYTHING.version_line("0.1.0");

    #[test]
    fn the_version_line_names_the_features_built_in_their_order() {
        assert_eq!(&LINE, b"wisp 1.2.3 (aws configdrive ntp)\n");
        const NONE: [u8; Built::of(&[]).version_line_len("0.1.0")] = Built::of(&[]).version_line("0.1.0");
        assert_eq!(&NONE, b"wisp 0.1.0 ()\n");
        let all: std::vec::Vec<(Feature, bool)> = (0..22u8).map(|i| (numbered(i), true)).collect();
        assert_eq!(Built::of(&all), EVERYTHING);
        assert_eq!(std::str::from_utf8(&ALL), Ok(std::format!("wisp 0.1.0 ({})\n", NAMES.join(" ")).as_str()));
    }

    /// The feature numbered `i`.
    fn numbered(i: u8) -> Feature {
        use Feature::*;
        [Aws, Azure, Gcp, Oci, Nocloud, Configdrive, Userdata, CloudConfig, CloudInitStatus, Grow, Iso9660, Vfat, Udf, Network, Hetzner, Digitalocean, Scaleway, Incus, Vultr, Ssh, Ntp, ApkRepos][i as usize]
    }

    #[test]
    fn a_cloud_or_action_the_build_lacks_names_its_feature() {
        assert_eq!(BUILT.lacks_for_cloud(Cloud::Aws), None);
        assert_eq!(BUILT.lacks_for_cloud(Cloud::Auto), None);
        assert_eq!(BUILT.lacks_for_cloud(Cloud::Openstack), None, "OpenStack comes with configdrive");
        assert_eq!(BUILT.lacks_for_cloud(Cloud::Gcp), Some("gcp"));
        assert_eq!(BUILT.lacks_for_cloud(Cloud::Incus), Some("incus"));
        assert_eq!(BUILT.lacks_for_action(Action::ExpandRoot), Some("grow"));
        assert_eq!(BUILT.lacks_for_action(Action::UserdataNtp), None);
        assert_eq!(BUILT.lacks_for_action(Action::SetSshHostKeys), Some("ssh"));
    }

    #[test]
    fn every_feature_has_its_cargo_name() {
        for (i, name) in NAMES.iter().enumerate() {
            assert_eq!(numbered(i as u8).name(), *name);
        }
        let nothing = Built::of(&[]);
        for cloud in Cloud::ALL.into_iter().filter(|&cloud| cloud != Cloud::Auto) {
            let name = nothing.lacks_for_cloud(cloud).unwrap();
            assert_eq!(NAMES.iter().position(|n| *n == name).map(|i| numbered(i as u8).name()), Some(name), "{cloud:?}");
        }
        assert_eq!(Feature::ApkRepos.name(), "apk-repos");
    }
}
