//! What this build of wisp has: the Cargo features an image builder picked. Which of them
//! a cloud or an action needs, and the refusal's words, are core's (`features`).

use wisp_core::built_without;
use wisp_core::features::{Built, Feature::*};
use wisp_core::text::Plain;

use crate::output::Message;

/// The features of this build.
pub const FEATURES: Built = Built::of(&[
    (Aws, cfg!(feature = "aws")), (Azure, cfg!(feature = "azure")), (Gcp, cfg!(feature = "gcp")), (Oci, cfg!(feature = "oci")),
    (Nocloud, cfg!(feature = "nocloud")), (Configdrive, cfg!(feature = "configdrive")), (Userdata, cfg!(feature = "userdata")),
    (CloudConfig, cfg!(feature = "cloud-config")), (CloudInitStatus, cfg!(feature = "cloud-init-status")), (Grow, cfg!(feature = "grow")),
    (Iso9660, cfg!(feature = "iso9660")), (Vfat, cfg!(feature = "vfat")), (Udf, cfg!(feature = "udf")), (Network, cfg!(feature = "network")),
    (Hetzner, cfg!(feature = "hetzner")), (Digitalocean, cfg!(feature = "digitalocean")), (Scaleway, cfg!(feature = "scaleway")),
    (Incus, cfg!(feature = "incus")), (Vultr, cfg!(feature = "vultr")), (Ssh, cfg!(feature = "ssh")), (Ntp, cfg!(feature = "ntp")),
    (ApkRepos, cfg!(feature = "apk-repos")),
]);

/// `wisp --version`'s line: the version and the features of this build.
pub const VERSION_LINE: [u8; FEATURES.version_line_len(env!("CARGO_PKG_VERSION"))] = FEATURES.version_line(env!("CARGO_PKG_VERSION"));

/// `WHAT: wisp was built without FEATURE`.
#[inline(never)]
pub fn missing(what: &str, feature: &str) -> Message {
    msg!(concat!("{}", built_without!(), "{}"), Plain(what), Plain(feature))
}
