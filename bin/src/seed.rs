//! Local datasources: NoCloud and ConfigDrive seeds, and Azure's provisioning CD. Which
//! seed wins and what is read from it is core's (`seed::local`), where the seed is and how
//! its files are read too (`seed::sources`); the system calls are `host::seed_sources`'.

use wisp_core::config::Cloud;
use wisp_core::seed::local::{self, BeforeService};
#[cfg(any(feature = "nocloud", feature = "configdrive", feature = "azure"))]
use wisp_core::seed::sources::Sources;
use wisp_core::text::Plain;
use wisp_os_linux::fs::Dir;

use crate::context::Context;
#[cfg(any(feature = "nocloud", feature = "configdrive"))]
use crate::host::OpenDir;
#[cfg(any(feature = "nocloud", feature = "configdrive", feature = "azure"))]
use crate::host::seed_sources::Seeds;
use crate::imds::Metadata;
use crate::output::Message;

/// Fills `metadata` from what `cloud` reads before its metadata service (`local::
/// before_service`), keeping a seed's meta-data, vendor-data and network configuration
/// in `keep` when given: the line to log (`None`: nothing to read, or nothing to say), or
/// why it could not be read; each as `cloud: ...`.
#[cfg(any(feature = "nocloud", feature = "configdrive", feature = "azure"))]
pub fn load_local<'c>(ctx: &'c Context<'c>, cloud: Cloud, metadata: &mut Metadata, _keep: Option<&'c Dir>) -> Result<Option<Message>, Message> {
    let name = Plain(cloud.name());
    let Some(before) = local::before_service(cloud) else { return Ok(None) };
    // Mapped, not on the stack, whose probes would touch all of it at every call.
    let loaded: Result<Option<Message>, Message> = match before {
        #[cfg(any(feature = "nocloud", feature = "configdrive"))]
        BeforeService::Seed => local::load(&mut Sources(Seeds { ctx, keep: _keep }), &mut OpenDir::root(ctx), cloud, metadata, _keep.is_some(), crate::memory::map(local::DOCUMENT_LIMIT, "the seed's documents")?.as_mut_slice())
            .map(|source| Some(msg!("{name}: seed {source}"))),
        #[cfg(feature = "azure")]
        BeforeService::AzureCd => local::load_azure_ovf(&mut Sources(Seeds { ctx, keep: None }), metadata, crate::memory::map(local::OVF_LIMIT, "ovf-env.xml")?.as_mut_slice())
            .map(|note| note.map(|note| msg!("{name}: {note}"))),
        #[allow(unreachable_patterns)]
        _ => Ok(None),
    };
    loaded.map_err(|e| msg!("{name}: {e}"))
}

/// A build without local datasources reads none.
#[cfg(not(any(feature = "nocloud", feature = "configdrive", feature = "azure")))]
#[inline(always)]
pub fn load_local(_: &Context<'_>, _: Cloud, _: &mut Metadata, _: Option<&Dir>) -> Result<Option<Message>, Message> {
    Ok(None)
}
