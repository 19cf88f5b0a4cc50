//! Local datasources: NoCloud and ConfigDrive seeds, and Azure's provisioning CD. Which
//! seed wins and what is read from it is core's (`seed::local`), where the seed is and how
//! its files are read too (`seed::sources`); the system calls are `host::seed_sources`'.

#[cfg(any(feature = "nocloud", feature = "configdrive"))]
use wisp_core::config::Cloud;
use wisp_core::seed::local;
use wisp_core::seed::sources::Sources;
#[cfg(any(feature = "nocloud", feature = "configdrive"))]
use wisp_os_linux::fs::Dir;

use crate::context::Context;
use crate::host::OpenDir;
use crate::host::seed_sources::Seeds;
use crate::imds::Metadata;
use crate::output::Message;

/// Azure's provisioning CD (`seed::local::load_azure_ovf`).
#[cfg(feature = "azure")]
pub fn load_azure_custom_data<'c>(ctx: &'c Context<'c>, metadata: &mut Metadata) -> Result<Option<Message>, Message> {
    // Mapped, not on the stack, whose probes would touch all of it at every call.
    let mut room = crate::memory::map(local::OVF_LIMIT, "ovf-env.xml")?;
    local::load_azure_ovf(&mut Sources(Seeds { ctx, keep: None }), metadata, room.as_mut_slice())
}

/// Fills `metadata` from the seed of `cloud`, keeping its meta-data, vendor-data and
/// network configuration in `keep` when given; returns where the seed was found.
#[cfg(any(feature = "nocloud", feature = "configdrive"))]
pub fn load<'c>(ctx: &'c Context<'c>, cloud: Cloud, metadata: &mut Metadata, keep: Option<&'c Dir>) -> Result<Message, Message> {
    local::load(&mut Sources(Seeds { ctx, keep }), &mut OpenDir::root(ctx), cloud, metadata, keep.is_some())
}
