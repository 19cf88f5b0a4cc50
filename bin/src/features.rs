//! What this build of wisp has: the Cargo features an image builder picked (see the
//! README's "Features"). A configuration that needs a part the build lacks is refused
//! with its name, never skipped in silence.

use wisp_core::config::Cloud;
use wisp_core::phase::{Action, Feature};
use wisp_core::text::Plain;

use crate::output::Message;

/// The features of this build, as `wisp --version` names them.
pub const BUILT: &str = {
    const NAMES: [(&str, bool); 22] = [
        ("aws", cfg!(feature = "aws")),
        ("azure", cfg!(feature = "azure")),
        ("gcp", cfg!(feature = "gcp")),
        ("oci", cfg!(feature = "oci")),
        ("nocloud", cfg!(feature = "nocloud")),
        ("configdrive", cfg!(feature = "configdrive")),
        ("userdata", cfg!(feature = "userdata")),
        ("cloud-config", cfg!(feature = "cloud-config")),
        ("cloud-init-status", cfg!(feature = "cloud-init-status")),
        ("grow", cfg!(feature = "grow")),
        ("iso9660", cfg!(feature = "iso9660")),
        ("vfat", cfg!(feature = "vfat")),
        ("udf", cfg!(feature = "udf")),
        ("network", cfg!(feature = "network")),
        ("hetzner", cfg!(feature = "hetzner")),
        ("digitalocean", cfg!(feature = "digitalocean")),
        ("scaleway", cfg!(feature = "scaleway")),
        ("incus", cfg!(feature = "incus")),
        ("vultr", cfg!(feature = "vultr")),
        ("ssh", cfg!(feature = "ssh")),
        ("ntp", cfg!(feature = "ntp")),
        ("apk-repos", cfg!(feature = "apk-repos")),
    ];
    const LEN: usize = {
        let mut len = 0;
        let mut i = 0;
        while i < NAMES.len() {
            if NAMES[i].1 {
                len += NAMES[i].0.len() + 1;
            }
            i += 1;
        }
        len
    };
    const BYTES: [u8; LEN] = {
        let mut out = [b' '; LEN];
        let (mut at, mut i) = (0, 0);
        while i < NAMES.len() {
            if NAMES[i].1 {
                let name = NAMES[i].0.as_bytes();
                let mut j = 0;
                while j < name.len() {
                    out[at + j] = name[j];
                    j += 1;
                }
                at += name.len() + 1;
            }
            i += 1;
        }
        out
    };
    match core::str::from_utf8(&BYTES) {
        Ok(text) => text.trim_ascii_end(),
        Err(_) => "",
    }
};

/// The feature a cloud needs; OpenStack's metadata service comes with `configdrive`.
pub const fn cloud_feature(cloud: Cloud) -> Option<&'static str> {
    match cloud {
        Cloud::Auto => None,
        Cloud::Aws => Some("aws"),
        Cloud::Azure => Some("azure"),
        Cloud::Gcp => Some("gcp"),
        Cloud::Oci => Some("oci"),
        Cloud::Nocloud => Some("nocloud"),
        Cloud::Configdrive | Cloud::Openstack => Some("configdrive"),
        Cloud::Hetzner => Some("hetzner"),
        Cloud::Digitalocean => Some("digitalocean"),
        Cloud::Scaleway => Some("scaleway"),
        Cloud::Incus => Some("incus"),
        Cloud::Vultr => Some("vultr"),
    }
}

pub const fn has_cloud(cloud: Cloud) -> bool {
    match cloud {
        Cloud::Auto => true,
        Cloud::Aws => cfg!(feature = "aws"),
        Cloud::Azure => cfg!(feature = "azure"),
        Cloud::Gcp => cfg!(feature = "gcp"),
        Cloud::Oci => cfg!(feature = "oci"),
        Cloud::Nocloud => cfg!(feature = "nocloud"),
        Cloud::Configdrive | Cloud::Openstack => cfg!(feature = "configdrive"),
        Cloud::Hetzner => cfg!(feature = "hetzner"),
        Cloud::Digitalocean => cfg!(feature = "digitalocean"),
        Cloud::Scaleway => cfg!(feature = "scaleway"),
        Cloud::Incus => cfg!(feature = "incus"),
        Cloud::Vultr => cfg!(feature = "vultr"),
    }
}

/// The feature `action` needs (core's table) that this build lacks, if any.
pub const fn missing_for(action: Action) -> Option<&'static str> {
    let Some(feature) = action.feature() else { return None };
    let built = match feature {
        Feature::Grow => cfg!(feature = "grow"),
        Feature::Ssh => cfg!(feature = "ssh"),
        Feature::Ntp => cfg!(feature = "ntp"),
        Feature::ApkRepos => cfg!(feature = "apk-repos"),
        Feature::Userdata => cfg!(feature = "userdata"),
        Feature::CloudConfig => cfg!(feature = "cloud-config"),
    };
    if built { None } else { Some(feature.name()) }
}

/// `WHAT: wisp was built without FEATURE`.
#[inline(never)]
pub fn missing(what: &str, feature: &str) -> Message {
    msg!("{what}: wisp was built without {feature}", what = Plain(what), feature = Plain(feature))
}
