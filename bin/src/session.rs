//! What the phases of one run share: the metadata service and what was read from it, and
//! core's `session::Shared` (what failed so far, the user-data and its cloud-config, each
//! decoded once), with this run's ways to decode them.

use wisp_core::cloud_config::CloudConfig;
use wisp_core::session::Shared;
use wisp_os_linux::fs::Dir;

use crate::context::Context;
use crate::host::Network;
use crate::imds::Metadata;
use crate::output::Message;
use crate::userdata::{Includes, UserData};

/// The metadata service and what was read from it, shared by the phases of one run.
pub struct Session<'c> {
    pub imds: wisp_core::provider::imds::Imds<'c>,
    /// The network the metadata service is reached over.
    pub network: Network<'c>,
    pub metadata: &'c mut Metadata,
    /// A later boot of a bootstrapped instance: only every-boot actions run.
    pub later_boot: bool,
    pub shared: Shared<UserData, CloudConfig<'static>, Message>,
}

/// The merged cloud-config, with a warning for each key wisp does not know; borrowed from
/// `shared`, not copied (its 16 documents).
#[cfg(feature = "cloud-config")]
pub fn cloud_config<'s>(shared: &'s mut Shared<UserData, CloudConfig<'static>, Message>, ctx: &Context<'_>, var: &Dir) -> Result<Option<&'s CloudConfig<'static>>, Message> {
    let parse = |userdata: &UserData| {
        let config = crate::cloud_config::parse(userdata)?;
        config.validate().map_err(crate::output::line)?;
        config.warn_unapplied(false, &|args| ctx.warn(args));
        Ok(config)
    };
    shared.cloud_config(kept(ctx, var), parse, CloudConfig::is_empty)
}

/// Decodes the saved user-data, its includes from what the early phase fetched: one
/// closure type for every caller, so `Shared` is built once for it.
pub fn kept<'a>(ctx: &'a Context<'_>, var: &'a Dir) -> impl FnOnce() -> Result<Option<UserData>, Message> + 'a {
    move || crate::userdata::load(ctx, var, Includes::Kept)
}
