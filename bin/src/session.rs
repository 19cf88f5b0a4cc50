//! What the phases of one run share: the metadata service and what was read from it,
//! what failed so far, and the user-data and its cloud-config, each decoded once when an
//! action first needs it.

use wisp_core::cloud_config::CloudConfig;
use wisp_core::config::Cloud;
use wisp_core::instance::Progress;
use wisp_core::retry::Timeouts;
use wisp_os_linux::fs::Dir;

use crate::context::Context;
use crate::imds::{Imds, Metadata};
use crate::output::Message;
use crate::userdata::{Includes, UserData};

/// The metadata service and what was read from it, shared by the phases of one run.
pub struct Session<'c> {
    pub imds: Imds<'c>,
    pub metadata: &'c mut Metadata,
    /// What failed this boot, and so which actions may run (core's `Progress`).
    pub progress: Progress,
    /// A later boot of a bootstrapped instance: only every-boot actions run.
    pub later_boot: bool,
    /// The decoded user-data, once an action has needed it.
    pub decoded: Option<Result<Option<UserData>, Message>>,
    /// Its cloud-config documents, parsed and merged, once an action has needed them.
    #[cfg(feature = "cloud-config")]
    pub config: Option<Result<CloudConfig<'static>, Message>>,
    pub cloud: Cloud,
}

impl Session<'_> {
    /// The decoded user-data (`None` when there is none), decoded once per run; includes
    /// come from what the early phase fetched.
    pub fn userdata(&mut self, ctx: &Context<'_>, var: &Dir) -> Result<Option<&UserData>, Message> {
        self.decoded_userdata(ctx, var, false)
    }

    /// The user-data for an action that applies it: why it cannot be applied is
    /// reported (see `report`).
    pub fn userdata_or_report(&mut self, ctx: &Context<'_>, var: &Dir) -> Result<Option<&UserData>, Message> {
        self.decoded_userdata(ctx, var, true)
    }

    fn decoded_userdata(&mut self, ctx: &Context<'_>, var: &Dir, report: bool) -> Result<Option<&UserData>, Message> {
        if self.decoded.is_none() {
            self.decoded = Some(crate::userdata::load(ctx, var, Includes::Kept));
        }
        if report && matches!(self.decoded, Some(Err(_))) {
            self.progress.userdata_unusable();
        }
        match self.decoded.as_ref() {
            Some(Ok(userdata)) => Ok(userdata.as_ref()),
            Some(Err(e)) => Err(*e),
            None => Ok(None),
        }
    }

    /// The merged cloud-config (`None` when the user-data has none); parsed once per run,
    /// with a warning for each key wisp does not know.
    #[cfg(feature = "cloud-config")]
    pub fn cloud_config(&mut self, ctx: &Context<'_>, var: &Dir) -> Result<Option<CloudConfig<'static>>, Message> {
        if self.config.is_none() {
            let parsed = match self.userdata(ctx, var) {
                Ok(Some(userdata)) => crate::cloud_config::parse(userdata).and_then(|c| c.validate().map(|()| c).map_err(crate::output::line)),
                Ok(None) => Ok(CloudConfig::default()),
                Err(e) => Err(e),
            };
            if let Ok(config) = &parsed {
                crate::cloud_config::warn_unapplied(config, false, &|args| ctx.warn(args));
            }
            self.config = Some(parsed);
        }
        match self.config.as_ref() {
            Some(Ok(config)) if !config.is_empty() => Ok(Some(config.clone())),
            Some(Err(e)) => Err(*e),
            _ => Ok(None),
        }
    }

    /// The cloud-config for the actions that run from metadata too: a document that
    /// does not parse counts as none here (the user-data actions report it).
    #[cfg(feature = "cloud-config")]
    pub fn cloud_config_if_valid(&mut self, ctx: &Context<'_>, var: &Dir) -> Option<CloudConfig<'static>> {
        self.cloud_config(ctx, var).ok().flatten()
    }

    /// A build without cloud-config has none: user-data that holds some does not decode.
    #[cfg(not(feature = "cloud-config"))]
    pub fn cloud_config_if_valid(&mut self, _: &Context<'_>, _: &Dir) -> Option<CloudConfig<'static>> {
        None
    }

    /// Why the user-data cannot be applied, reported by the first action that needs it;
    /// the later user-data actions of the run are then held back by it.
    pub fn report(&mut self, e: Message) -> Message {
        self.progress.userdata_unusable();
        e
    }

    /// Decodes the user-data just saved, fetching its includes.
    pub fn decode_saved(&mut self, ctx: &Context<'_>, var: &Dir, timeouts: &Timeouts) -> Result<Option<&UserData>, Message> {
        self.decoded = Some(crate::userdata::load(ctx, var, Includes::Fetch(timeouts)));
        self.userdata(ctx, var)
    }
}
